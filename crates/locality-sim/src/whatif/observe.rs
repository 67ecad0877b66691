//! What a what-if observes at every step: per Service port and node, where a pod dialling the
//! Service's cluster IP is sent, as the model decides it on the simulated state **as kube-proxy
//! has programmed it** (the state `proxy_sync` ago), and whether the endpoints it is sent to
//! still have a running process now.
//!
//! A node is blind at an instant when the programmed route drops (no endpoint), or when every
//! endpoint the programmed route uses belongs to a process that has exited (kube-proxy has not
//! yet programmed the change that removed it).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Arc;

use locality_model::matrix::{Matrix, MatrixConfig, NodeTable};
use locality_model::objects::{ClusterState, EndpointSlice, LABEL_SERVICE_NAME};
use locality_model::proxy::{Destination, Source, VerdictKind};

use crate::engine::Engine;
use crate::objects::{Kind, Object, ObjectKey};
use crate::time::Millis;

/// (`namespace/name`, `name:port/PROTOCOL`, family).
pub(crate) type PortKey = (String, String, String);

/// Where one node sends a pod's connection to a Service port's cluster IP.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Route {
    /// Dropped by the rules (no usable endpoint for this node).
    Drop,
    /// Delivered to these endpoint addresses, `local` of them on the node itself.
    Deliver {
        /// The endpoint addresses.
        targets: Arc<[IpAddr]>,
        /// How many of them are on the node.
        local: usize,
    },
    /// Rejected, or not proxied: not a drop window, not delivered either.
    Other,
}

impl Route {
    /// The same route as `other`: the same verdict, as many local targets, and the same
    /// targets (the same interned list, or equal short lists).
    pub(crate) fn same_as(&self, other: &Route) -> bool {
        match (self, other) {
            (Route::Drop, Route::Drop) | (Route::Other, Route::Other) => true,
            (
                Route::Deliver {
                    targets: a,
                    local: la,
                },
                Route::Deliver {
                    targets: b,
                    local: lb,
                },
            ) => la == lb && (Arc::ptr_eq(a, b) || (a.len() <= 8 && a == b)),
            _ => false,
        }
    }
}

/// The routes of every node for every Service port in scope, at one instant.
#[derive(Debug)]
pub(crate) struct Snapshot {
    /// Virtual ms since the change.
    pub at: Millis,
    /// Per port, per node: (node name, route), sorted by node name. The names are shared
    /// with the other snapshots while the Nodes stay the same ([`NodeCache`]).
    pub ports: BTreeMap<PortKey, Vec<(Arc<str>, Route)>>,
}

/// Which Services a what-if watches (`None`: all).
pub(crate) type Scope = Option<BTreeSet<(String, String)>>;

fn in_scope(scope: &Scope, ns: &str, name: &str) -> bool {
    scope
        .as_ref()
        .is_none_or(|s| s.contains(&(ns.to_string(), name.to_string())))
}

/// The Nodes the model was last given, kept while no Node changed: cloning every Node at
/// every snapshot cost more than the model's routes on a 5,000-node cluster. The same for the
/// EndpointSlices, each kept while its resourceVersion is the same.
#[derive(Debug, Default)]
pub(crate) struct NodeCache {
    /// The resourceVersions of the Nodes cloned, in store order (each write has its own).
    versions: Vec<u64>,
    nodes: Vec<locality_model::objects::Node>,
    /// Their names, sorted (the matrix's order).
    names: Vec<Arc<str>>,
    /// The model's table of them (`None`: not built for these Nodes yet).
    table: Option<NodeTable>,
    /// The EndpointSlices the model was last given, by key, with their resourceVersion: a
    /// step changes a few of them, so the others are not cloned again.
    slices: HashMap<ObjectKey, (u64, EndpointSlice)>,
    /// The keys and resourceVersions of the state's slices, in its order.
    slice_keys: Vec<(ObjectKey, u64)>,
}

/// The model's input for the Services in scope: every Node, those Services and their
/// EndpointSlices (the simulated EndpointSlice controller writes them, so pods are not needed).
/// The Nodes come from `cache` (hand them back with [`NodeCache::keep`]).
fn scoped_state(engine: &Engine, scope: &Scope, cache: &mut NodeCache) -> ClusterState {
    let mut state = ClusterState::default();
    let versions: Vec<u64> = engine
        .store()
        .list(Kind::Node)
        .map(|(_, s)| s.resource_version)
        .collect();
    if versions != cache.versions || cache.nodes.len() != versions.len() {
        cache.nodes.clear();
        for (_, s) in engine.store().list(Kind::Node) {
            if let Object::Node(n) = &*s.object {
                cache.nodes.push(n.clone());
            }
        }
        let mut names: Vec<&str> = cache.nodes.iter().map(|n| n.meta.name.as_str()).collect();
        names.sort_unstable();
        cache.names = names.into_iter().map(Arc::from).collect();
        cache.versions = versions;
        cache.table = None;
    }
    state.nodes = std::mem::take(&mut cache.nodes);
    for (_, s) in engine.store().list(Kind::Service) {
        if let Object::Service(svc) = &*s.object
            && in_scope(scope, &svc.meta.namespace, &svc.meta.name)
        {
            state.services.push(svc.clone());
        }
    }
    cache.slice_keys.clear();
    for (k, s) in engine.store().list(Kind::EndpointSlice) {
        if let Object::EndpointSlice(es) = &*s.object
            && es
                .meta
                .labels
                .get(LABEL_SERVICE_NAME)
                .is_some_and(|svc| in_scope(scope, &es.meta.namespace, svc))
        {
            let es = match cache.slices.remove(k) {
                Some((rv, kept)) if rv == s.resource_version => kept,
                _ => es.clone(),
            };
            state.endpoint_slices.push(es);
            cache.slice_keys.push((k.clone(), s.resource_version));
        }
    }
    // Slices gone or out of scope.
    cache.slices.clear();
    state
}

impl NodeCache {
    /// Takes the Nodes back from a state [`scoped_state`] made.
    fn keep(&mut self, state: &mut ClusterState) {
        self.nodes = std::mem::take(&mut state.nodes);
        for ((k, rv), es) in self
            .slice_keys
            .drain(..)
            .zip(std::mem::take(&mut state.endpoint_slices))
        {
            self.slices.insert(k, (rv, es));
        }
    }
}

/// A fingerprint of what the model reads for the Services in scope (Nodes, those Services,
/// their EndpointSlices): their count and the sum of their resourceVersions, which any
/// create, update or delete among them changes. Pod churn elsewhere leaves it alone, so the
/// model is asked again only when its input changed.
pub(crate) fn fingerprint(engine: &Engine, scope: &Scope) -> (usize, u64) {
    let mut n = 0usize;
    let mut sum = 0u64;
    let mut add = |rv: u64| {
        n += 1;
        sum = sum.wrapping_add(rv);
    };
    for (_, s) in engine.store().list(Kind::Node) {
        add(s.resource_version);
    }
    for (k, s) in engine.store().list(Kind::Service) {
        if in_scope(scope, &k.namespace, &k.name) {
            add(s.resource_version);
        }
    }
    for (k, s) in engine.store().list(Kind::EndpointSlice) {
        let svc = s.object.meta().labels.get(LABEL_SERVICE_NAME);
        if svc.is_some_and(|svc| in_scope(scope, &k.namespace, svc)) {
            add(s.resource_version);
        }
    }
    (n, sum)
}

/// Port key of a matrix port.
fn port_key(p: &locality_model::matrix::PortEntry<'_>) -> PortKey {
    (
        format!("{}/{}", p.service.meta.namespace, p.service.meta.name),
        format!(
            "{}:{}/{}",
            p.info.port.name,
            p.info.port.port,
            p.info.port.protocol.as_str()
        ),
        p.info.family.as_str().to_string(),
    )
}

/// The model's routes (pod → cluster IP) of every node for the Services in scope, now.
pub(crate) fn snapshot(
    engine: &Engine,
    config: &MatrixConfig,
    scope: &Scope,
    at: Millis,
    cache: &mut NodeCache,
) -> Snapshot {
    let mut state = scoped_state(engine, scope, cache);
    let table = match &cache.table {
        Some(t) if t.config() == config => t,
        _ => cache.table.insert(NodeTable::new(&state.nodes, config.clone())),
    };
    let matrix = Matrix::with_nodes(&state, table);
    let mut ports = BTreeMap::new();
    // The matrix orders the cached Nodes by name, as `cache.names` is (names are unique in the
    // store): a node's name is at its index.
    let shared_names = cache.names.len() == matrix.nodes.len();
    for (i, p) in matrix.ports.iter().enumerate() {
        let mut interned: HashMap<Vec<usize>, Arc<[IpAddr]>> = HashMap::new();
        // A pod's connection to the cluster IP (with an unknown proxy mode whose modes
        // disagree, the iptables route), without the trace nobody reads here.
        let routes = matrix.port_route(i, None, Source::Pod, Destination::ClusterIp);
        let mut nodes = Vec::with_capacity(routes.len());
        for (ni, r) in routes {
            let name = if shared_names {
                debug_assert_eq!(&*cache.names[ni], matrix.nodes[ni].name());
                cache.names[ni].clone()
            } else {
                Arc::from(matrix.nodes[ni].name())
            };
            let route = match r.as_ref().map(|m| &m.route) {
                Some(m) if m.verdict == VerdictKind::Drop => Route::Drop,
                Some(m) if m.verdict == VerdictKind::Deliver => {
                    let idx = &m.endpoints;
                    let local = idx.iter().filter(|&&e| p.endpoints[e].is_local(&name)).count();
                    let targets = match interned.get(idx) {
                        Some(t) => t.clone(),
                        // A single target is not worth a lookup.
                        None if idx.len() <= 1 => idx.iter().map(|&e| p.endpoints[e].ip).collect(),
                        None => {
                            let t: Arc<[IpAddr]> = idx.iter().map(|&e| p.endpoints[e].ip).collect();
                            interned.insert(idx.clone(), t.clone());
                            t
                        }
                    };
                    Route::Deliver { targets, local }
                }
                _ => Route::Other,
            };
            nodes.push((name, route));
        }
        // By name (the matrix's own order already; the tracker relies on it). Node names are
        // unique in the store.
        nodes.sort_by(|a, b| a.0.cmp(&b.0));
        ports.insert(port_key(p), nodes);
    }
    drop(matrix);
    cache.keep(&mut state);
    Snapshot { at, ports }
}

/// The snapshots kube-proxy may still be programming from, and when it syncs.
///
/// kube-proxy syncs one `sync` after a change it watches, but at most once per `min_sync`
/// (`--iptables-min-sync-period`, 1 s by default): a change that arrives sooner after its last
/// sync waits for the next allowed one, which then programs everything written up to `sync`
/// before it (upstream k8s.io/kubernetes `pkg/proxy/runner/bounded_frequency_runner.go`, no
/// burst since 1.34; the rule the simulated kube-proxies follow, `crate::proxies`
/// `wake_proxy` and `proxy_sync`).
#[derive(Debug)]
pub(crate) struct History {
    sync: Millis,
    min_sync: Millis,
    /// The instant of the last sync (`None`: none since the run started).
    last_sync: Option<Millis>,
    /// `kept[0]` is what the rules say; the others are written after it, not yet programmed.
    kept: VecDeque<Arc<Snapshot>>,
}

impl History {
    /// Starts with the state before the change.
    pub fn new(sync: Millis, min_sync: Millis, first: Snapshot) -> Self {
        let mut kept = VecDeque::new();
        kept.push_back(Arc::new(first));
        History {
            sync,
            min_sync,
            last_sync: None,
            kept,
        }
    }

    /// Records the state written at `s.at`.
    pub fn push(&mut self, s: Snapshot) {
        self.kept.push_back(Arc::new(s));
    }

    /// The newest snapshot.
    pub fn latest(&self) -> &Arc<Snapshot> {
        self.kept.back().expect("history is never empty")
    }

    /// What the rules say at `now`: the newest snapshot written at or before the last sync
    /// minus `sync` (the oldest kept when none is that old). Each sync is due one `sync` after
    /// the oldest snapshot not yet programmed, and `min_sync` after the previous sync. Older
    /// snapshots are forgotten.
    pub fn programmed(&mut self, now: Millis) -> Arc<Snapshot> {
        while let Some(next) = self.kept.get(1) {
            let due = (next.at + self.sync).max(self.last_sync.map_or(0, |l| l + self.min_sync));
            if due > now {
                break;
            }
            let cutoff = due - self.sync;
            while self.kept.len() > 1 && self.kept[1].at <= cutoff {
                self.kept.pop_front();
            }
            self.last_sync = Some(due);
        }
        self.kept[0].clone()
    }
}

impl Engine {
    /// Records that what [`Engine::ip_serving`] answers for `ips` may have changed (a process
    /// started or stopped, a pod runtime added or removed): bumps the serving generation and,
    /// while a what-if keeps it, logs the addresses.
    pub(crate) fn serving_changed(&mut self, ips: &[IpAddr]) {
        self.serving_generation += 1;
        if let Some(log) = &mut self.serving_log {
            log.extend_from_slice(ips);
        }
    }

    /// True unless `ip` is a pod address whose process is not running (exited, not started,
    /// or the pod is gone): addresses the simulation never gave a pod (hostNetwork pods,
    /// selector-less endpoints) are taken as serving.
    pub(crate) fn ip_serving(&self, ip: &IpAddr) -> bool {
        match self.pod_by_ip.get(ip) {
            None => !self.retired_ips.contains(ip),
            Some(key) => self.pods.get(key).is_some_and(|rt| rt.running),
        }
    }
}

/// What a node sees at an instant: blind (and why), delivered (with the share of its
/// connections that leave the node), or neither.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Seen {
    /// The programmed rules drop (no endpoint for this node).
    NoEndpoint,
    /// The programmed rules send only to endpoints whose process has exited.
    EndpointGone,
    /// Delivered; the share of connections sent to another node.
    Delivered(f64),
    /// Rejected or not proxied.
    Other,
}

impl Seen {
    /// True for both blind causes.
    pub fn blind(self) -> bool {
        matches!(self, Seen::NoEndpoint | Seen::EndpointGone)
    }
}

/// What `route` (as programmed) does now.
pub(crate) fn seen(engine: &Engine, route: &Route) -> Seen {
    match route {
        Route::Drop => Seen::NoEndpoint,
        Route::Other => Seen::Other,
        Route::Deliver { targets, local } => {
            if !targets.is_empty() && !targets.iter().any(|ip| engine.ip_serving(ip)) {
                Seen::EndpointGone
            } else if targets.is_empty() {
                Seen::NoEndpoint
            } else {
                Seen::Delivered(1.0 - *local as f64 / targets.len() as f64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: Millis) -> Snapshot {
        Snapshot {
            at: t,
            ports: BTreeMap::new(),
        }
    }

    /// The instant each snapshot (by `at`) is first programmed, looking every ms.
    fn programmed_at(sync: Millis, min_sync: Millis, writes: &[Millis]) -> Vec<(Millis, Millis)> {
        let mut h = History::new(sync, min_sync, at(0));
        for &w in writes {
            h.push(at(w));
        }
        let mut seen = Vec::new();
        let mut last = 0;
        for now in 0..10_000 {
            let p = h.programmed(now).at;
            if p != last {
                seen.push((p, now));
                last = p;
            }
        }
        seen
    }

    #[test]
    fn each_change_is_programmed_one_sync_later_without_a_minimum_period() {
        assert_eq!(
            programmed_at(1_000, 0, &[10, 300, 2_500]),
            [(10, 1_010), (300, 1_300), (2_500, 3_500)]
        );
    }

    #[test]
    fn a_minimum_sync_period_holds_a_change_back_to_the_next_allowed_sync() {
        // The change at 300 comes 290 ms after the one at 10: kube-proxy synced at 1,010 and
        // syncs next at 2,010, programming everything written up to 1,010.
        assert_eq!(
            programmed_at(1_000, 1_000, &[10, 300, 2_500]),
            [(10, 1_010), (300, 2_010), (2_500, 3_500)]
        );
        // A sync programs what was written one sync delay before it: a change 10 ms after
        // another waits for the next allowed sync.
        assert_eq!(programmed_at(1_000, 1_000, &[10, 20]), [(10, 1_010), (20, 2_010)]);
    }
}
