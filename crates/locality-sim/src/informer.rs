//! The simulated kube-proxies' informer caches, kept once for all of them.
//!
//! Every simulated kube-proxy watches the same objects (Services, EndpointSlices, Nodes) and
//! sees the same events in the same order; they differ only in how far along that feed they
//! are (sync delay, `stale-rules`, restarts). So instead of one copy of the cache per node,
//! the engine keeps one [`ProxyInformer`]: the feed's event times, and per Service the
//! versions of its [`ServiceView`] (the Service and the EndpointSlices labelled with its name)
//! by feed position. A kube-proxy that has applied the first `p` events reads, for each
//! Service, the last version at or before `p`: exactly what its own informers would hold
//! (upstream `pkg/proxy/config` handlers feeding `ServiceChangeTracker` and
//! `EndpointsChangeTracker`). This keeps the cost of a rollout linear in the nodes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use locality_model::objects::{LABEL_SERVICE_NAME, LABEL_ZONE};

use crate::objects::{Kind, Object};
use crate::store::{EventType, WatchEvent};
use crate::time::Millis;

/// A Service as one kube-proxy's informers see it: the object (absent once deleted or not
/// yet seen) and the EndpointSlices labelled `kubernetes.io/service-name` with its name.
#[derive(Debug, Clone, Default)]
pub struct ServiceView {
    /// The Service object.
    pub service: Option<Arc<Object>>,
    /// Its EndpointSlices by name.
    pub slices: BTreeMap<String, Arc<Object>>,
}

/// Index of a (namespace, Service name) in the informer.
pub(crate) type ServiceId = u32;

/// One run of consecutive feed events that touched the same Service: positions
/// `start..end` (event `i` moves a kube-proxy from position `i` to `i + 1`).
#[derive(Debug, Clone)]
struct Touch {
    start: usize,
    end: usize,
    service: ServiceId,
}

/// The shared, versioned informer cache of all simulated kube-proxies.
#[derive(Debug, Clone, Default)]
pub struct ProxyInformer {
    /// Time of each event in the feed (non-decreasing).
    times: Vec<Millis>,
    /// For each event, the Node it is about (`None` for Services and EndpointSlices).
    node_of: Vec<Option<u32>>,
    /// For each event, how many of the events up to and including it were EndpointSlice
    /// changes a kube-proxy's endpoints change tracker counts (a slice labelled with a
    /// Service's name added, updated or deleted, or a slice losing that label).
    slice_changes: Vec<u32>,
    keys: Vec<(String, String)>,
    ids: HashMap<(String, String), ServiceId>,
    /// Per Service: (position from which it holds, view), by position.
    versions: Vec<Vec<(usize, Arc<ServiceView>)>>,
    touches: Vec<Touch>,
    /// Which Service each EndpointSlice (namespace, name) is labelled with.
    slice_owner: HashMap<(String, String), ServiceId>,
    node_ids: HashMap<String, u32>,
    /// Per Node: (position from which it holds, zone label), by position.
    zones: Vec<Vec<(usize, String)>>,
}

impl ProxyInformer {
    /// Number of events in the feed: the position of a kube-proxy that has applied them all.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Time of the event at `position`, if fed.
    pub fn time_of(&self, position: usize) -> Option<Millis> {
        self.times.get(position).copied()
    }

    /// The position reached by applying every event with a time at or before `horizon`.
    pub fn position_at(&self, horizon: Millis) -> usize {
        self.times.partition_point(|t| *t <= horizon)
    }

    /// EndpointSlice changes among the events at positions `from..to` (upstream
    /// `EndpointsChangeTracker.EndpointSliceUpdate` increments
    /// `kubeproxy_sync_proxy_rules_endpoint_changes_pending` once per such change).
    pub fn slice_changes(&self, from: usize, to: usize) -> usize {
        let upto = |p: usize| {
            p.min(self.len())
                .checked_sub(1)
                .map_or(0, |i| self.slice_changes[i] as usize)
        };
        upto(to).saturating_sub(upto(from))
    }

    /// EndpointSlices labelled with a Service's name after the first `position` events: what
    /// a kube-proxy's initial list delivers to its endpoints change tracker.
    pub fn slices_at(&self, position: usize) -> usize {
        self.all()
            .filter_map(|id| self.view(id, position))
            .map(|v| v.slices.len())
            .sum()
    }

    /// The first position at or after `from` whose event concerns a kube-proxy that believes
    /// its node is named `identity` (every Service and EndpointSlice event; only its own
    /// Node's).
    pub fn next_relevant(&self, from: usize, identity: &str) -> Option<usize> {
        let own = self.node_ids.get(identity).copied();
        (from..self.len()).find(|&i| match self.node_of[i] {
            None => true,
            Some(n) => Some(n) == own,
        })
    }

    /// Adds one store event to the feed; returns whether it is one kube-proxies watch
    /// (Services, EndpointSlices, Nodes).
    pub fn push(&mut self, ev: &WatchEvent) -> bool {
        let position = self.len() + 1;
        let ns_name = (ev.key.namespace.to_string(), ev.key.name.to_string());
        let deleted = ev.event_type == EventType::Deleted;
        let mut slice_change = false;
        match ev.key.kind {
            Kind::Service => {
                let id = self.id(&ns_name);
                self.times.push(ev.time);
                self.node_of.push(None);
                let object = (!deleted).then(|| ev.object.clone());
                self.change(id, position, |v| v.service = object);
            }
            Kind::EndpointSlice => {
                self.times.push(ev.time);
                self.node_of.push(None);
                // Upstream only considers slices labelled with their Service's name.
                if let Some(old) = self.slice_owner.remove(&ns_name) {
                    slice_change = true;
                    self.change(old, position, |v| {
                        v.slices.remove(&ns_name.1);
                    });
                }
                if !deleted && let Some(svc) = ev.object.meta().labels.get(LABEL_SERVICE_NAME) {
                    slice_change = true;
                    let id = self.id(&(ns_name.0.clone(), svc.clone()));
                    self.slice_owner.insert(ns_name.clone(), id);
                    let object = ev.object.clone();
                    self.change(id, position, |v| {
                        v.slices.insert(ns_name.1.clone(), object);
                    });
                }
            }
            Kind::Node => {
                let next = self.node_ids.len() as u32;
                let id = *self.node_ids.entry(ev.key.name.to_string()).or_insert(next);
                if id as usize == self.zones.len() {
                    self.zones.push(Vec::new());
                }
                self.times.push(ev.time);
                self.node_of.push(Some(id));
                // Newest kube-proxy: a Node deletion keeps the labels it had.
                if !deleted {
                    let zone = ev
                        .object
                        .meta()
                        .labels
                        .get(LABEL_ZONE)
                        .cloned()
                        .unwrap_or_default();
                    self.zones[id as usize].push((position, zone));
                }
            }
            _ => return false,
        }
        let before = self.slice_changes.last().copied().unwrap_or(0);
        self.slice_changes.push(before + u32::from(slice_change));
        true
    }

    fn id(&mut self, key: &(String, String)) -> ServiceId {
        if let Some(id) = self.ids.get(key) {
            return *id;
        }
        let id = self.keys.len() as ServiceId;
        self.keys.push(key.clone());
        self.ids.insert(key.clone(), id);
        self.versions.push(Vec::new());
        id
    }

    /// Records a new version of Service `id` holding from `position`.
    fn change(&mut self, id: ServiceId, position: usize, edit: impl FnOnce(&mut ServiceView)) {
        let versions = &mut self.versions[id as usize];
        let mut view = versions.last().map(|(_, v)| (**v).clone()).unwrap_or_default();
        edit(&mut view);
        match versions.last_mut() {
            Some((p, v)) if *p == position => *v = Arc::new(view),
            _ => versions.push((position, Arc::new(view))),
        }
        match self.touches.last_mut() {
            // Consecutive events on the same Service (or one event touching it twice) extend
            // its run; an event touching two Services (a slice relabelled) adds a second run
            // over the same position.
            Some(t) if t.service == id && t.end + 1 >= position => t.end = position,
            _ => self.touches.push(Touch {
                start: position - 1,
                end: position,
                service: id,
            }),
        }
    }

    /// The (namespace, name) of Service `id`.
    pub(crate) fn key(&self, id: ServiceId) -> &(String, String) {
        &self.keys[id as usize]
    }

    /// Every Service the informer has heard of.
    pub(crate) fn all(&self) -> impl Iterator<Item = ServiceId> + use<> {
        0..self.keys.len() as ServiceId
    }

    /// Services changed by the events at positions `from..to`, each once, in id order.
    pub(crate) fn touched(&self, from: usize, to: usize) -> Vec<ServiceId> {
        let first = self.touches.partition_point(|t| t.end <= from);
        let mut out: Vec<ServiceId> = self.touches[first..]
            .iter()
            .take_while(|t| t.start < to)
            .map(|t| t.service)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The view of Service `id` after the first `position` events.
    pub(crate) fn view(&self, id: ServiceId, position: usize) -> Option<&Arc<ServiceView>> {
        let versions = &self.versions[id as usize];
        let i = versions.partition_point(|(p, _)| *p <= position);
        i.checked_sub(1).map(|i| &versions[i].1)
    }

    /// The zone label of Node `identity` after the first `position` events (`""` when
    /// unknown).
    pub(crate) fn zone(&self, identity: &str, position: usize) -> &str {
        let Some(&id) = self.node_ids.get(identity) else {
            return "";
        };
        let zones = &self.zones[id as usize];
        let i = zones.partition_point(|(p, _)| *p <= position);
        i.checked_sub(1).map_or("", |i| zones[i].1.as_str())
    }

    /// Forgets versions no kube-proxy can read any more: every reader is at `floor` or later.
    pub(crate) fn prune(&mut self, floor: usize) {
        for versions in &mut self.versions {
            let i = versions.partition_point(|(p, _)| *p <= floor);
            if i > 1 {
                versions.drain(..i - 1);
            }
        }
        for zones in &mut self.zones {
            let i = zones.partition_point(|(p, _)| *p <= floor);
            if i > 1 {
                zones.drain(..i - 1);
            }
        }
        let t = self.touches.partition_point(|t| t.end <= floor);
        self.touches.drain(..t);
    }
}
