//! The simulated EndpointSlice controller: the model's endpoint conditions and hints, written
//! in place the way upstream's reconciler writes them.
//!
//! Mirrors `k8s.io/endpointslice` `reconciler.go` `reconcileByAddressType`: endpoints stay in
//! the slice that holds them (updated in place when their conditions change, removed when
//! their pod goes), new endpoints fill slices with room before new slices are created, slices
//! left empty are deleted, and an address type without endpoints keeps one placeholder slice.
//! Each endpoint is the model's `pod_to_endpoint`, each hint the model's
//! `reconcile_slice_hints`. A sync looks only at the pods that changed since the last one
//! (a Service or Node change resyncs the whole Service), so a rollout costs what it changes,
//! not Services × pods.

use std::collections::{BTreeMap, BTreeSet};

use locality_model::endpointslice::{
    MAX_ENDPOINTS_PER_SLICE, NodeLookup, SliceInfo, TopologyCache, address_type_for, endpoint_ports,
    hints_enabled, new_endpoint_slice, node_for_pod, pod_exclusion, pod_to_endpoint, reconcile_slice_hints,
};
use locality_model::features::ControlPlaneFeatures;
use locality_model::objects::{
    AddressType, CONTROLLER_NAME, Endpoint, EndpointPort, EndpointSlice, IpFamily, LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME, Node, Service, ServiceType,
};
use locality_model::selector::service_selects;

use crate::fasthash::FastMap;
use crate::objects::{Kind, ObjectKey};
use crate::store::Store;

/// What the next sync of one Service must look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SliceSync {
    /// Everything: the Service, its Nodes or the controller's view of it changed.
    Full,
    /// Only these pods (by name) changed.
    Pods(BTreeSet<String>),
}

impl SliceSync {
    /// Adds a changed pod (a full sync covers it already).
    pub(crate) fn add_pod(&mut self, pod: &str) {
        if let SliceSync::Pods(p) = self {
            p.insert(pod.to_string());
        }
    }
}

/// Where the controller put each pod's endpoint: per (Service, address type), pod name to
/// slice name. Rebuilt from the store on a full sync.
#[derive(Debug, Clone, Default)]
pub(crate) struct SliceTracker {
    placed: FastMap<(ObjectKey, AddressType), FastMap<String, String>>,
}

impl SliceTracker {
    /// True when some slice of `service` holds an endpoint of `pod`.
    pub(crate) fn holds(&self, service: &ObjectKey, pod: &str) -> bool {
        [AddressType::IPv4, AddressType::IPv6].into_iter().any(|at| {
            self.placed
                .get(&(service.clone(), at))
                .is_some_and(|m| m.contains_key(pod))
        })
    }
}

/// Nodes looked up in the store (no per-sync index of every node).
struct StoreNodes<'a>(&'a Store);

impl NodeLookup for StoreNodes<'_> {
    fn node(&self, name: &str) -> Option<&Node> {
        self.0
            .get(&ObjectKey::new(Kind::Node, "", name))
            .and_then(|s| s.object.as_node())
    }
}

/// A write the controller decided on.
pub(crate) enum Write {
    Create(EndpointSlice),
    Update(EndpointSlice),
    Delete(ObjectKey),
}

/// Syncs the EndpointSlices of each Service in `syncs` against the store, updating where
/// `tracker` places each endpoint: the writes to make, in order.
pub(crate) fn reconcile(
    store: &Store,
    tracker: &mut SliceTracker,
    features: &ControlPlaneFeatures,
    syncs: BTreeMap<ObjectKey, SliceSync>,
) -> Vec<Write> {
    let mut topology: Option<TopologyCache> = None;
    let mut writes = Vec::new();
    for (key, sync) in syncs {
        sync_service(store, tracker, &mut topology, features, &key, &sync, &mut writes);
    }
    writes
}

/// The pod an endpoint stands for (`targetRef` of kind Pod).
fn pod_of(e: &Endpoint) -> Option<&str> {
    e.target_ref
        .as_ref()
        .filter(|(kind, _, _)| kind == "Pod")
        .map(|(_, _, name)| name.as_str())
}

/// Equal apart from hints (the hint step owns those).
fn same_but_hints(a: &Endpoint, b: &Endpoint) -> bool {
    a.addresses == b.addresses
        && a.conditions == b.conditions
        && a.node_name == b.node_name
        && a.zone == b.zone
        && a.target_ref == b.target_ref
        && a.hostname == b.hostname
}

fn sync_service(
    store: &Store,
    tracker: &mut SliceTracker,
    topology: &mut Option<TopologyCache>,
    features: &ControlPlaneFeatures,
    key: &ObjectKey,
    sync: &SliceSync,
    writes: &mut Vec<Write>,
) {
    let ns = key.namespace.as_str();
    let existing: Vec<&EndpointSlice> = store
        .list_namespace(Kind::EndpointSlice, ns)
        .filter_map(|(_, s)| s.object.as_endpoint_slice())
        .filter(|s| {
            s.meta.labels.get(LABEL_SERVICE_NAME).map(String::as_str) == Some(key.name.as_str())
                && s.meta.labels.get(LABEL_MANAGED_BY).map(String::as_str) == Some(CONTROLLER_NAME)
        })
        .collect();
    let service = store.get(key).and_then(|s| s.object.as_service()).filter(|s| {
        s.type_ != ServiceType::ExternalName
            && s.selector.as_ref().is_some_and(|sel| !sel.is_empty())
            && s.meta.deletion_timestamp.is_none()
    });
    let Some(svc) = service else {
        // Upstream `syncService`: no selector (or gone) → the controller's slices go.
        for s in existing {
            writes.push(Write::Delete(ObjectKey::new(
                Kind::EndpointSlice,
                ns,
                &s.meta.name,
            )));
        }
        for at in [AddressType::IPv4, AddressType::IPv6] {
            tracker.placed.remove(&(key.clone(), at));
        }
        return;
    };
    let families = svc.families();
    let wanted: Vec<AddressType> = families.iter().map(|f| address_type_for(*f)).collect();
    for s in &existing {
        if !wanted.contains(&s.address_type) {
            writes.push(Write::Delete(ObjectKey::new(
                Kind::EndpointSlice,
                ns,
                &s.meta.name,
            )));
        }
    }
    for at in [AddressType::IPv4, AddressType::IPv6] {
        if !wanted.contains(&at) {
            tracker.placed.remove(&(key.clone(), at));
        }
    }
    for family in families {
        let at = address_type_for(family);
        let current: BTreeMap<&str, &EndpointSlice> = existing
            .iter()
            .filter(|s| s.address_type == at)
            .map(|s| (s.meta.name.as_str(), *s))
            .collect();
        let full = *sync == SliceSync::Full || !tracker.placed.contains_key(&(key.clone(), at));
        let placed = tracker.placed.entry((key.clone(), at)).or_default();
        let mut sync_one = AddressTypeSync {
            svc,
            family,
            at,
            current,
            work: BTreeMap::new(),
            dirty: BTreeSet::new(),
            created: BTreeSet::new(),
            placed,
        };
        let pods: BTreeSet<String> = if full {
            sync_one.rebuild_placement();
            let selector = svc.selector.as_ref().expect("checked above");
            store
                .list_namespace(Kind::Pod, ns)
                .filter_map(|(_, s)| s.object.as_pod())
                .filter(|p| service_selects(selector, &p.pod.meta.labels))
                .map(|p| p.pod.meta.name.clone())
                .chain(sync_one.placed.keys().cloned())
                .collect()
        } else {
            match sync {
                SliceSync::Pods(p) => p.clone(),
                SliceSync::Full => BTreeSet::new(),
            }
        };
        sync_one.reconcile_pods(store, &pods);
        sync_one.finish(full, features, topology, store, writes);
    }
}

/// One sync of one Service and address type.
struct AddressTypeSync<'a> {
    svc: &'a Service,
    family: IpFamily,
    at: AddressType,
    /// The controller's slices of this address type in the store.
    current: BTreeMap<&'a str, &'a EndpointSlice>,
    /// Slices being edited or created, by name.
    work: BTreeMap<String, EndpointSlice>,
    dirty: BTreeSet<String>,
    created: BTreeSet<String>,
    placed: &'a mut FastMap<String, String>,
}

impl AddressTypeSync<'_> {
    fn tag(&self) -> &'static str {
        match self.family {
            IpFamily::IPv4 => "ipv4",
            IpFamily::IPv6 => "ipv6",
        }
    }

    /// Pod placement as the store's slices hold it; slices whose labels are stale are
    /// marked for an update.
    fn rebuild_placement(&mut self) {
        self.placed.clear();
        let expected = new_endpoint_slice(self.svc, self.at, String::new(), Vec::new(), Vec::new());
        for (name, s) in &self.current {
            for e in &s.endpoints {
                if let Some(pod) = pod_of(e) {
                    self.placed.insert(pod.to_string(), name.to_string());
                }
            }
            if s.meta.labels != expected.meta.labels
                || s.meta.owner_references != expected.meta.owner_references
            {
                let mut s = (*s).clone();
                s.meta.labels = expected.meta.labels.clone();
                s.meta.owner_references = expected.meta.owner_references.clone();
                self.dirty.insert(s.meta.name.clone());
                self.work.insert(s.meta.name.clone(), s);
            }
        }
    }

    fn slice(&self, name: &str) -> Option<&EndpointSlice> {
        self.work.get(name).or_else(|| self.current.get(name).copied())
    }

    fn edit(&mut self, name: &str) -> Option<&mut EndpointSlice> {
        if !self.work.contains_key(name) {
            let s = (*self.current.get(name)?).clone();
            self.work.insert(name.to_string(), s);
        }
        self.dirty.insert(name.to_string());
        self.work.get_mut(name)
    }

    /// The desired endpoint of each pod, compared with where it is.
    fn reconcile_pods(&mut self, store: &Store, pods: &BTreeSet<String>) {
        let nodes = StoreNodes(store);
        let ns = self.svc.meta.namespace.as_str();
        let selector = self.svc.selector.clone().unwrap_or_default();
        let mut pending: Vec<(Vec<EndpointPort>, Endpoint)> = Vec::new();
        for name in pods {
            let pod = store
                .get(&ObjectKey::new(Kind::Pod, ns, name.as_str()))
                .and_then(|s| s.object.as_pod())
                .map(|p| &p.pod);
            let desired = pod
                .filter(|p| service_selects(&selector, &p.meta.labels) && pod_exclusion(p).is_none())
                .and_then(|p| {
                    let node = node_for_pod(p, self.svc, &nodes).ok()?;
                    let ep = pod_to_endpoint(p, node, self.svc, self.family)?;
                    Some((endpoint_ports(self.svc, p), ep))
                });
            let Some(slice_name) = self.placed.get(name).cloned() else {
                pending.extend(desired);
                continue;
            };
            let index = self
                .slice(&slice_name)
                .and_then(|s| s.endpoints.iter().position(|e| pod_of(e) == Some(name.as_str())));
            let Some(i) = index else {
                self.placed.remove(name);
                pending.extend(desired);
                continue;
            };
            match desired {
                Some((ports, ep)) if self.slice(&slice_name).is_some_and(|s| s.ports == ports) => {
                    let s = self.slice(&slice_name).expect("found above");
                    if !same_but_hints(&s.endpoints[i], &ep) {
                        // Fresh from podToEndpoint, without hints: the hint step sets them.
                        self.edit(&slice_name).expect("found above").endpoints[i] = ep;
                    }
                }
                other => {
                    if let Some(s) = self.edit(&slice_name) {
                        s.endpoints.remove(i);
                    }
                    self.placed.remove(name);
                    pending.extend(other);
                }
            }
        }
        for (ports, ep) in pending {
            self.place(ports, ep);
        }
    }

    /// Puts a new endpoint in a slice with the same ports and room (one already being
    /// written first, the fullest first), else in a new slice.
    fn place(&mut self, ports: Vec<EndpointPort>, ep: Endpoint) {
        let fits = |s: &EndpointSlice| {
            s.endpoints.len() < MAX_ENDPOINTS_PER_SLICE
                && (s.ports == ports || (s.endpoints.is_empty() && s.ports.is_empty()))
        };
        let names: Vec<String> = self
            .current
            .keys()
            .map(|n| n.to_string())
            .chain(self.work.keys().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let best = |only_dirty: bool| {
            names
                .iter()
                .filter(|n| !only_dirty || self.dirty.contains(*n))
                .filter_map(|n| self.slice(n).filter(|s| fits(s)).map(|s| (s.endpoints.len(), n)))
                .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
                .map(|(_, n)| n.clone())
        };
        let pod = pod_of(&ep).unwrap_or_default().to_string();
        let target = best(true).or_else(|| best(false));
        let name = match target {
            Some(n) => {
                let s = self.edit(&n).expect("listed");
                s.ports = ports;
                s.endpoints.push(ep);
                n
            }
            None => {
                let n = self.fresh_name(&names);
                let s = new_endpoint_slice(self.svc, self.at, n.clone(), ports, vec![ep]);
                self.work.insert(n.clone(), s);
                self.dirty.insert(n.clone());
                self.created.insert(n.clone());
                n
            }
        };
        self.placed.insert(pod, name);
    }

    /// `<service>-<ipv4|ipv6>-<n>` with the lowest unused `n` (real names are generated).
    fn fresh_name(&self, taken: &[String]) -> String {
        (0..)
            .map(|n| format!("{}-{}-{n}", self.svc.meta.name, self.tag()))
            .find(|n| !taken.contains(n) && !self.work.contains_key(n))
            .expect("some name is free")
    }

    /// Empty slices, the placeholder, hints; then the writes.
    fn finish(
        mut self,
        full: bool,
        features: &ControlPlaneFeatures,
        topology: &mut Option<TopologyCache>,
        store: &Store,
        writes: &mut Vec<Write>,
    ) {
        let ns = self.svc.meta.namespace.clone();
        let names: BTreeSet<String> = self
            .current
            .keys()
            .map(|n| n.to_string())
            .chain(self.work.keys().cloned())
            .collect();
        let total: usize = names
            .iter()
            .filter_map(|n| self.slice(n))
            .map(|s| s.endpoints.len())
            .sum();
        let mut deleted = BTreeSet::new();
        if total == 0 {
            // "When no endpoint slices would usually exist, we need to add a placeholder."
            match names.iter().next().cloned() {
                Some(first) => {
                    if self.slice(&first).is_some_and(|s| !s.ports.is_empty()) {
                        self.edit(&first).expect("listed").ports.clear();
                    }
                    deleted.extend(names.iter().skip(1).cloned());
                }
                None => {
                    let n = format!("{}-{}-0", self.svc.meta.name, self.tag());
                    let s = new_endpoint_slice(self.svc, self.at, n.clone(), Vec::new(), Vec::new());
                    self.work.insert(n.clone(), s);
                    self.dirty.insert(n.clone());
                    self.created.insert(n);
                }
            }
        } else {
            deleted.extend(
                names
                    .iter()
                    .filter(|n| self.slice(n).is_some_and(|s| s.endpoints.is_empty()))
                    .cloned(),
            );
        }
        for n in &deleted {
            self.work.remove(n);
            self.dirty.remove(n);
            if !self.created.remove(n) {
                writes.push(Write::Delete(ObjectKey::new(
                    Kind::EndpointSlice,
                    &ns,
                    n.as_str(),
                )));
            }
        }

        // Hints: Auto allocates over every slice; trafficDistribution hints are per endpoint,
        // so only the slices being written need them (the others were hinted when written),
        // except on a full sync, when the Service itself (its hints settings) may have changed.
        let auto = features.topology_aware_hints && hints_enabled(&self.svc.meta.annotations);
        let mut info = SliceInfo::default();
        let mut dirty = std::mem::take(&mut self.dirty);
        for n in &dirty {
            let Some(s) = self.work.remove(n) else { continue };
            if self.created.contains(n) {
                info.to_create.push(s);
            } else {
                info.to_update.push(s);
            }
        }
        if auto || full {
            for n in names
                .iter()
                .filter(|n| !dirty.contains(*n) && !deleted.contains(*n))
            {
                if let Some(s) = self.current.get(n.as_str()) {
                    info.unchanged.push((*s).clone());
                }
            }
        }
        if auto && topology.is_none() {
            let nodes: Vec<&Node> = store
                .list(Kind::Node)
                .filter_map(|(_, s)| s.object.as_node())
                .collect();
            *topology = Some(TopologyCache::from_nodes(nodes));
        }
        let empty = TopologyCache::default();
        reconcile_slice_hints(
            self.svc,
            &mut info,
            self.at,
            topology.as_ref().unwrap_or(&empty),
            features,
        );
        dirty.clear();
        for s in info.to_create {
            writes.push(Write::Create(s));
        }
        for s in info.to_update {
            let unchanged = self.current.get(s.meta.name.as_str()).is_some_and(|old| {
                old.endpoints == s.endpoints
                    && old.ports == s.ports
                    && old.meta.labels == s.meta.labels
                    && old.meta.owner_references == s.meta.owner_references
            });
            if !unchanged {
                writes.push(Write::Update(s));
            }
        }
    }
}
