//! Bookkeeping of a what-if run: per Service port and node, the drop windows the change
//! opened (with their cause), client-weighted blind time, and the share of connections that
//! left their node.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;

use super::observe::{History, PortKey, Route, Scope, Seen, Snapshot, seen};
use crate::engine::Engine;
use crate::fasthash::FastMap;
use crate::objects::Kind;
use crate::time::Millis;

/// Why a node was blind when a window opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Cause {
    /// kube-proxy's rules had no endpoint for the node.
    NoEndpoint,
    /// kube-proxy's rules still sent to endpoints whose process had exited (the change that
    /// removed them was not programmed yet).
    EndpointGone,
}

/// A span of virtual time a node was blind for a Service port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Start, virtual ms since the change.
    pub start_ms: Millis,
    /// End (exclusive), virtual ms since the change; the run's end when still open.
    pub end_ms: Millis,
    /// Why the node was blind when it opened.
    pub cause: Cause,
}

/// One node of one Service port over the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeTimeline {
    /// Client pods on the node (`locality_audit::clients`, counted before the change).
    pub clients: usize,
    /// Drop windows the change opened.
    pub windows: Vec<Window>,
    /// Virtual ms blind in those windows.
    pub blind_ms: Millis,
    /// Virtual ms × share of the node's connections delivered to another node.
    pub left_ms: f64,
}

/// One Service port over the run.
#[derive(Debug, Clone, PartialEq)]
pub struct PortTimeline {
    /// `namespace/name`.
    pub service: String,
    /// `name:port/PROTOCOL`.
    pub port: String,
    /// IP family.
    pub family: String,
    /// The routes of some node differed from before the change at some step.
    pub changed: bool,
    /// Blind nodes before the change.
    pub blind_before: Vec<String>,
    /// Blind nodes at the end.
    pub blind_after: Vec<String>,
    /// Nodes blind from before the change to the end of the run (not the change's doing;
    /// left out of the windows and the losses).
    pub blind_throughout: Vec<String>,
    /// Per node: its clients, and its windows when it had any.
    pub nodes: BTreeMap<String, NodeTimeline>,
    /// Client-time the change cost: Σ clients × blind time in windows / (Σ clients ×
    /// duration), in [0, 1].
    pub lost_share: f64,
    /// Client-time delivered to another node than the client's: Σ clients × left time /
    /// (Σ clients × duration), in [0, 1].
    pub left_node_share: f64,
}

impl PortTimeline {
    /// Nodes with at least one window.
    pub fn windowed(&self) -> impl Iterator<Item = (&String, &NodeTimeline)> {
        self.nodes.iter().filter(|(_, n)| !n.windows.is_empty())
    }
}

/// The outcome of a what-if run.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    /// Virtual ms from the change to the end of the run.
    pub duration_ms: Millis,
    /// The change settled (a rollout: every pod of the workload new and Ready) before the limit.
    pub settled: bool,
    /// Steps at which the rules were checked.
    pub steps: usize,
    /// Virtual ms between two steps.
    pub step_ms: Millis,
    /// How late kube-proxy programs the store (the lag of the rules checked).
    pub proxy_sync_ms: Millis,
    /// Every Service port in the change's scope.
    pub ports: Vec<PortTimeline>,
    /// When the changes did not settle: what was still pending at the end (a drain refused by
    /// a PodDisruptionBudget, pods not yet evicted, replacements not Ready…).
    pub unsettled: Vec<String>,
    /// For `--delete` and `--replace`: what happened to the pod and its replacement, at
    /// virtual ms from the change (`namespace/name` of the pod deleted).
    pub pod_events: Vec<(Millis, String, super::delete::PodEvent)>,
}

impl WhatIf {
    /// True when some Service port's routes changed.
    pub fn changed(&self) -> bool {
        self.ports.iter().any(|p| p.changed)
    }
}

#[derive(Debug, Default)]
struct PortAcc {
    changed: bool,
    before: BTreeMap<Arc<str>, Seen>,
    last: BTreeMap<Arc<str>, Seen>,
    open: BTreeMap<Arc<str>, (Millis, Cause)>,
    /// Nodes blind before the change and not unblind since: their blindness is not the
    /// change's doing (it lasts at least until the change is programmed), so it opens no
    /// window; those still here at the end are blind throughout.
    carried: BTreeSet<Arc<str>>,
    nodes: BTreeMap<String, NodeTimeline>,
    /// The nodes of `last` delivered elsewhere (a share above 0), with that share.
    leaving: BTreeMap<Arc<str>, f64>,
    /// Every node `last` saw delivered has its timeline in `nodes`, but those in `pending`.
    entries_made: bool,
    /// Nodes seen delivered since the last `accumulate` (their timeline made there).
    pending: Vec<Arc<str>>,
}

impl PortAcc {
    /// Adds `dt` ms at the shares seen at the last step: every node delivered then has a
    /// timeline, and those delivered elsewhere gain `dt` × their share.
    fn accumulate(&mut self, dt: f64) {
        if !self.entries_made {
            for (n, s) in &self.last {
                if matches!(s, Seen::Delivered(_)) && !self.nodes.contains_key(&**n) {
                    self.nodes.insert(n.to_string(), NodeTimeline::default());
                }
            }
            self.entries_made = true;
            self.pending.clear();
        }
        for n in std::mem::take(&mut self.pending) {
            if self.last.get(&n).is_some_and(|s| matches!(s, Seen::Delivered(_)))
                && !self.nodes.contains_key(&*n)
            {
                self.nodes.insert(n.to_string(), NodeTimeline::default());
            }
        }
        for (n, left) in &self.leaving {
            if let Some(t) = self.nodes.get_mut(&**n) {
                t.left_ms += dt * left;
            }
        }
    }
}

impl PortAcc {
    /// Records what node `n` (one of `last`'s) sees at `now`: the change flag, a window
    /// opened or closed, its share leaving the node.
    fn look(&mut self, n: &Arc<str>, s: Seen, now: Millis) {
        if self.before.get(n).is_none_or(|b| !same(*b, s)) {
            self.changed = true;
        }
        if !s.blind() {
            self.carried.remove(n);
        }
        match (s.blind() && !self.carried.contains(n), self.open.contains_key(n)) {
            (true, false) => {
                let cause = if s == Seen::EndpointGone {
                    Cause::EndpointGone
                } else {
                    Cause::NoEndpoint
                };
                self.open.insert(n.clone(), (now, cause));
            }
            (false, true) => {
                if let Some((start, cause)) = self.open.remove(n) {
                    close(&mut self.nodes, n, start, now, cause);
                }
            }
            _ => {}
        }
        match s {
            Seen::Delivered(left) if left != 0.0 => {
                self.leaving.insert(n.clone(), left);
            }
            _ => {
                self.leaving.remove(n);
            }
        }
        if matches!(s, Seen::Delivered(_)) && self.entries_made {
            self.pending.push(n.clone());
        }
        if let Some(slot) = self.last.get_mut(n) {
            *slot = s;
        }
    }
}

/// The nodes of a programmed snapshot grouped by the endpoint addresses their routes send to
/// (the interned target lists), and the groups each address belongs to: which nodes to look
/// at again when some processes started or stopped.
struct ServingIndex {
    /// Per port (in the snapshot's order), per group: node positions.
    groups: Vec<Vec<Vec<usize>>>,
    /// Per address: (port, group).
    by_ip: FastMap<IpAddr, Vec<(usize, usize)>>,
}

impl ServingIndex {
    fn new(snapshot: &Snapshot) -> Self {
        let mut groups = Vec::new();
        let mut by_ip: FastMap<IpAddr, Vec<(usize, usize)>> = FastMap::default();
        for (port, nodes) in snapshot.ports.values().enumerate() {
            let mut of: FastMap<*const IpAddr, usize> = FastMap::default();
            let mut port_groups: Vec<Vec<usize>> = Vec::new();
            for (i, (_, r)) in nodes.iter().enumerate() {
                let Route::Deliver { targets, .. } = r else {
                    continue;
                };
                if targets.is_empty() {
                    continue;
                }
                let g = *of.entry(targets.as_ptr()).or_insert_with(|| {
                    port_groups.push(Vec::new());
                    let g = port_groups.len() - 1;
                    for ip in targets.iter() {
                        by_ip.entry(*ip).or_default().push((port, g));
                    }
                    g
                });
                port_groups[g].push(i);
            }
            groups.push(port_groups);
        }
        ServingIndex { groups, by_ip }
    }
}

/// Accumulates observations.
pub(crate) struct Tracker {
    history: History,
    ports: BTreeMap<PortKey, PortAcc>,
    clients: BTreeMap<String, BTreeMap<String, usize>>,
    sync: Millis,
    steps: usize,
    last_at: Option<Millis>,
    /// The programmed snapshot and the engine's serving generation of the last look.
    seen_at: Option<(Arc<Snapshot>, u64)>,
    /// The programmed snapshot's nodes by the addresses they send to (made at the first look
    /// that needs it).
    index: Option<ServingIndex>,
}

impl Tracker {
    /// Starts from the state before the change (observed at 0).
    /// `sync`: kube-proxy's delay and its minimum sync period.
    pub fn new(engine: &Engine, before: Snapshot, (sync, min_sync): (Millis, Millis), scope: &Scope) -> Self {
        // Clients per Service, counted once on the state before the change (read in the
        // store: copying 100,000 pods for it cost more than counting).
        let mut clients = BTreeMap::new();
        let pods = || {
            engine
                .store()
                .list(Kind::Pod)
                .filter_map(|(_, s)| s.object.as_pod().map(|p| &p.pod))
        };
        for (_, s) in engine.store().list(Kind::Service) {
            let Some(svc) = s.object.as_service() else {
                continue;
            };
            let in_scope = scope
                .as_ref()
                .is_none_or(|s| s.contains(&(svc.meta.namespace.clone(), svc.meta.name.clone())));
            if in_scope {
                clients.insert(
                    format!("{}/{}", svc.meta.namespace, svc.meta.name),
                    locality_audit::clients::service_clients_per_node_among(pods(), svc),
                );
            }
        }
        let mut t = Tracker {
            history: History::new(sync, min_sync, before),
            ports: BTreeMap::new(),
            clients,
            sync,
            steps: 0,
            last_at: None,
            seen_at: None,
            index: None,
        };
        let first = t.history.latest().clone();
        for (key, nodes) in &first.ports {
            let acc = t.ports.entry(key.clone()).or_default();
            for (n, r) in nodes {
                let s = seen(engine, r);
                if s.blind() {
                    acc.carried.insert(n.clone());
                }
                acc.before.insert(n.clone(), s);
            }
        }
        t
    }

    /// Records the state written now.
    pub fn push(&mut self, s: Snapshot) {
        self.history.push(s);
    }

    /// Observes every node at `now` through the rules as programmed; `changed` are the pod
    /// addresses whose serving may have changed since the last step (the engine's
    /// `serving_log`).
    ///
    /// What a node sees depends only on its programmed route and on whether the processes
    /// behind that route's addresses run ([`Engine::ip_serving`]). So a node is looked at
    /// again only when its route differs from the one it was last looked at with (the
    /// programmed snapshot moved on), or when its route sends to one of `changed`; every other
    /// node sees what it saw then, and only the time delivered to other nodes accumulates.
    /// Every node is looked at when the nodes of a port differ from the last look's.
    pub fn observe(&mut self, engine: &Engine, now: Millis, changed: &[IpAddr]) {
        self.steps += 1;
        let dt = self.last_at.map_or(0, |l| now - l) as f64;
        self.last_at = Some(now);
        let programmed = self.history.programmed(now);
        let generation = engine.serving_generation;
        let previous = self.seen_at.replace((programmed.clone(), generation));
        let same_snapshot = previous
            .as_ref()
            .is_some_and(|(p, _)| Arc::ptr_eq(p, &programmed));
        let unchanged = same_snapshot && previous.as_ref().is_some_and(|(_, g)| *g == generation);
        if !same_snapshot {
            self.index = None;
        }
        // The nodes (port, position) whose route sends to an address whose process changed.
        let mut hit: BTreeSet<(usize, usize)> = BTreeSet::new();
        if !unchanged && !changed.is_empty() {
            let index = self.index.get_or_insert_with(|| ServingIndex::new(&programmed));
            for ip in changed {
                for &(port, group) in index.by_ip.get(ip).into_iter().flatten() {
                    hit.extend(index.groups[port][group].iter().map(|&n| (port, n)));
                }
            }
        }
        for (pi, (key, nodes)) in programmed.ports.iter().enumerate() {
            if !self.ports.contains_key(key) {
                self.ports.insert(key.clone(), PortAcc::default());
            }
            let Some(acc) = self.ports.get_mut(key) else {
                continue;
            };
            // Accumulate the interval since the last step with what was seen then.
            acc.accumulate(dt);
            if unchanged {
                continue;
            }
            // The routes of the last look, when they were for the same nodes.
            let old = previous
                .as_ref()
                .and_then(|(p, _)| p.ports.get(key))
                .filter(|old| {
                    old.len() == nodes.len()
                        && acc.last.len() == nodes.len()
                        && old.iter().zip(nodes).all(|(a, b)| a.0 == b.0)
                });
            if let Some(old) = old {
                let mut look: Vec<usize> = if same_snapshot {
                    Vec::new()
                } else {
                    (0..nodes.len())
                        .filter(|&i| !nodes[i].1.same_as(&old[i].1))
                        .collect()
                };
                look.extend(hit.range((pi, 0)..(pi + 1, 0)).map(|&(_, i)| i));
                look.sort_unstable();
                look.dedup();
                for i in look {
                    let (n, r) = &nodes[i];
                    acc.look(n, seen(engine, r), now);
                }
                continue;
            }
            let same_nodes =
                acc.last.len() == nodes.len() && acc.last.keys().eq(nodes.iter().map(|(n, _)| n));
            if !same_nodes {
                acc.last = nodes.iter().map(|(n, _)| (n.clone(), Seen::Other)).collect();
            }
            acc.entries_made = false;
            acc.leaving.clear();
            for (n, r) in nodes {
                acc.look(n, seen(engine, r), now);
            }
            // Nodes that left the matrix (deleted) close their windows.
            let gone: Vec<Arc<str>> = acc
                .open
                .keys()
                .filter(|n| nodes.binary_search_by(|(m, _)| m.cmp(n)).is_err())
                .cloned()
                .collect();
            for n in gone {
                if let Some((start, cause)) = acc.open.remove(&n) {
                    close(&mut acc.nodes, &n, start, now, cause);
                }
            }
        }
        // Every node not looked at sees what it saw at its last look.
        #[cfg(debug_assertions)]
        for (key, nodes) in &programmed.ports {
            let acc = &self.ports[key];
            for (n, r) in nodes {
                debug_assert!(acc.last.get(n).is_some_and(|s| same(*s, seen(engine, r))));
            }
        }
    }

    /// The result at the run's end.
    pub fn finish(mut self, end: Millis, settled: bool, step_ms: Millis) -> WhatIf {
        let mut ports = Vec::new();
        for (key, mut acc) in std::mem::take(&mut self.ports) {
            let open: Vec<(Arc<str>, (Millis, Cause))> = std::mem::take(&mut acc.open).into_iter().collect();
            let blind_before: Vec<String> = acc
                .before
                .iter()
                .filter(|(_, s)| s.blind())
                .map(|(n, _)| n.to_string())
                .collect();
            let blind_after: Vec<String> = acc
                .last
                .iter()
                .filter(|(_, s)| s.blind())
                .map(|(n, _)| n.to_string())
                .collect();
            let throughout: Vec<String> = std::mem::take(&mut acc.carried)
                .into_iter()
                .map(|n| n.to_string())
                .collect();
            for (n, (start, cause)) in open {
                close(&mut acc.nodes, &n, start, end, cause);
            }
            let clients = self.clients.get(&key.0).cloned().unwrap_or_default();
            for (n, c) in &clients {
                acc.nodes.entry(n.clone()).or_default().clients = *c;
            }
            let total = clients.values().sum::<usize>() as f64 * end.max(1) as f64;
            let weigh = |f: &dyn Fn(&NodeTimeline) -> f64| -> f64 {
                acc.nodes.values().map(|t| t.clients as f64 * f(t)).sum::<f64>()
            };
            let lost = weigh(&|t| t.blind_ms as f64);
            let left = weigh(&|t| t.left_ms);
            let share = |x: f64| {
                if total > 0.0 {
                    (x / total).clamp(0.0, 1.0)
                } else {
                    0.0
                }
            };
            ports.push(PortTimeline {
                service: key.0,
                port: key.1,
                family: key.2,
                changed: acc.changed,
                blind_before,
                blind_after,
                blind_throughout: throughout,
                nodes: acc.nodes,
                lost_share: share(lost),
                left_node_share: share(left),
            });
        }
        WhatIf {
            duration_ms: end,
            settled,
            steps: self.steps,
            step_ms,
            proxy_sync_ms: self.sync,
            ports,
            unsettled: Vec::new(),
            pod_events: Vec::new(),
        }
    }
}

/// Same verdict class, and for deliveries the same share leaving the node.
fn same(a: Seen, b: Seen) -> bool {
    match (a, b) {
        (Seen::Delivered(x), Seen::Delivered(y)) => (x - y).abs() < 1e-9,
        (a, b) => a == b,
    }
}

fn close(nodes: &mut BTreeMap<String, NodeTimeline>, node: &str, start: Millis, end: Millis, cause: Cause) {
    let t = nodes.entry(node.to_string()).or_default();
    t.windows.push(Window {
        start_ms: start,
        end_ms: end,
        cause,
    });
    t.blind_ms += end - start;
}
