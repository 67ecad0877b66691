//! The simulated scheduler binding pending pods (k8s.io/kubernetes `pkg/scheduler`): its
//! cache fed by the store's pod events (`scheduler_cache`), the filters of `fit`, the
//! `NodePorts` filter against the pods on the node, then the least loaded feasible node, ties
//! broken by the seeded PRNG.

use std::collections::BTreeMap;
use std::sync::Arc;

use locality_model::objects::{Node, Pod, PodPhase};

use crate::engine::Engine;
use crate::fit::{host_ports, node_fits, pinned_node};
use crate::objects::{Kind, Object, ObjectKey};
use crate::scheduler_cache::SchedulerCache;
use crate::store::EventType;
use crate::tasks::Task;

/// Most pods one pass of the scheduler tries; the rest wait for the next pass (scheduled at
/// once), so that a queue of a million pending pods never holds the simulation for long.
/// kube-scheduler places one pod at a time, at a few hundred pods a second.
pub(crate) const MAX_TRIES_PER_PASS: usize = 1000;

impl Engine {
    /// Feeds the scheduler's cache the pod events since it last read the store; a Node's
    /// event may make room for the pods set aside.
    pub(crate) fn scheduler_catch_up(&mut self) {
        let mut node_changed = false;
        let events: Vec<(ObjectKey, u64, Option<Arc<Object>>)> = self
            .store
            .events_since(self.scheduler.cursor)
            .unwrap_or_default()
            .iter()
            .filter(|e| {
                node_changed |= e.key.kind == Kind::Node;
                e.key.kind == Kind::Pod
            })
            .map(|e| {
                let live = (e.event_type != EventType::Deleted).then(|| e.object.clone());
                // Only a pod waiting for a node is filed by its creation.
                let created = if SchedulerCache::waits(live.as_deref().and_then(Object::as_pod)) {
                    self.store.get(&e.key).map_or(0, |s| s.created)
                } else {
                    0
                };
                (e.key.clone(), created, live)
            })
            .collect();
        self.scheduler.cursor = self.store.resource_version();
        self.scheduler.room_changed |= node_changed;
        for (key, created, object) in events {
            let pod = object.as_deref().and_then(Object::as_pod);
            self.scheduler.observe(&key, created, pod);
        }
    }

    /// True when a pass of the scheduler has pods to try.
    pub(crate) fn scheduler_has_work(&self) -> bool {
        !self.scheduler.pending.is_empty()
            || (self.scheduler.room_changed && !self.scheduler.unschedulable.is_empty())
    }

    /// Binds pending pods: feasible nodes (nodeName, nodeSelector, required node affinity,
    /// taints, Ready, cordon, host ports, then room: fewer pods than its `maxPods`), then the
    /// least loaded, ties broken by the seeded PRNG.
    ///
    /// Like kube-scheduler, it keeps its own cache (pending pods, pods per node) fed by the
    /// pod events since its last run; a pod whose required affinity pins it to one node (the
    /// DaemonSet controller's `matchFields: metadata.name`) is checked against that node only.
    /// A pod no node takes stays Pending with the scheduler's message (`0/4 nodes are
    /// available: 4 Too many pods.`) and is set aside until an event may make room; one pass
    /// tries at most [`MAX_TRIES_PER_PASS`] pods.
    pub(crate) fn schedule_pending(&mut self) {
        self.scheduler_catch_up();
        self.scheduler.requeue_if_room_changed();
        let pending: Vec<(u64, ObjectKey)> = self
            .scheduler
            .pending
            .iter()
            .take(MAX_TRIES_PER_PASS)
            .cloned()
            .collect();
        let more = self.scheduler.pending.len() > pending.len();
        let mut all_nodes: Option<Vec<Arc<Object>>> = None;
        for (created, key) in pending {
            let Some(stored) = self.store.get(&key).map(|s| s.object.clone()) else {
                continue;
            };
            let Some(pod) = stored.as_pod() else {
                continue;
            };
            let pinned = pinned_node(&pod.pod.spec).and_then(|n| {
                let node = self.store.get(&ObjectKey::new(Kind::Node, "", n.as_str()))?;
                let fits = node
                    .object
                    .as_node()
                    .is_some_and(|n| node_fits(&pod.pod.spec, n, false).is_ok());
                fits.then(|| node.object.clone())
            });
            let candidates: Vec<Arc<Object>> = match pinned {
                Some(node) => vec![node],
                None => all_nodes
                    .get_or_insert_with(|| {
                        self.store
                            .list(Kind::Node)
                            .map(|(_, s)| s.object.clone())
                            .collect()
                    })
                    .clone(),
            };
            let nodes: Vec<&Node> = candidates.iter().filter_map(|o| o.as_node()).collect();
            let load = |n: &Node| {
                self.scheduler
                    .load
                    .get(n.meta.name.as_str())
                    .copied()
                    .unwrap_or(0)
            };
            let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
            let mut feasible: Vec<&Node> = Vec::new();
            for &n in &nodes {
                let fit = node_fits(&pod.pod.spec, n, false)
                    .and_then(|()| self.host_ports_free(&pod.pod, n))
                    .and_then(|()| room_for_a_pod(load(n), n));
                match fit {
                    Ok(()) => feasible.push(n),
                    Err(r) => *reasons.entry(r).or_default() += 1,
                }
            }
            if feasible.is_empty() {
                let why = unschedulable_message(nodes.len(), &reasons);
                self.unschedulable.insert(key.clone(), why);
                self.scheduler.set_aside(created, key);
                continue;
            }
            let min = feasible.iter().map(|n| load(n)).min().unwrap_or(0);
            let best: Vec<&&Node> = feasible.iter().filter(|n| load(n) == min).collect();
            let pick = best[self.rng.below(best.len() as u64) as usize].meta.name.clone();
            self.unschedulable.remove(&key);
            let mut pod = pod.clone();
            pod.pod.spec.node_name = pick;
            self.scheduler.observe(&key, created, Some(&pod));
            let _ = self.update(Object::Pod(pod), None);
        }
        if more && !self.reconcile_pending {
            self.reconcile_pending = true;
            self.schedule(self.now + self.config.controller_delay_ms, Task::Reconcile);
        }
    }

    /// The scheduler's `NodePorts` filter (k8s.io/kubernetes
    /// `pkg/scheduler/framework/plugins/nodeports/node_ports.go` `Filter`): a pod asking for a
    /// host port does not fit a node where another pod, terminating ones included, holds it.
    fn host_ports_free(&self, pod: &Pod, node: &Node) -> Result<(), String> {
        let wanted = host_ports(&pod.spec);
        if wanted.is_empty() {
            return Ok(());
        }
        let taken = self
            .store
            .list(Kind::Pod)
            .filter_map(|(_, s)| s.object.as_pod())
            .filter(|p| p.pod.spec.node_name == node.meta.name && p.pod.meta.uid != pod.meta.uid)
            .filter(|p| !matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed))
            .any(|p| host_ports(&p.pod.spec).iter().any(|h| wanted.contains(h)));
        if taken {
            Err("didn't have free ports for the requested pod ports".into())
        } else {
            Ok(())
        }
    }
}

/// The scheduler's `NodeResourcesFit` filter for the pod count (k8s.io/kubernetes
/// `pkg/scheduler/framework/plugins/noderesources/fit.go` `fitsRequest`): a node holding
/// its `status.allocatable.pods` already takes no more ("Too many pods").
fn room_for_a_pod(load: usize, node: &Node) -> Result<(), String> {
    if load as u64 >= node.max_pods() {
        Err("Too many pods".into())
    } else {
        Ok(())
    }
}

/// The message of a pod no node takes, as kube-scheduler's `FitError.Error()` writes it:
/// `0/N nodes are available: ` and the count of each node's first failed filter, sorted, then
/// a full stop (`0/4 nodes are available: 4 Too many pods.`). A filter's own reason reads
/// `Too many pods`; the others, phrased of a node, get `node(s)` before them.
pub(crate) fn unschedulable_message(nodes: usize, reasons: &BTreeMap<String, usize>) -> String {
    let mut counts: Vec<String> = reasons
        .iter()
        .map(|(r, n)| {
            if r.starts_with(|c: char| c.is_ascii_uppercase()) {
                format!("{n} {r}")
            } else {
                format!("{n} node(s) {r}")
            }
        })
        .collect();
    counts.sort();
    if counts.is_empty() {
        format!("0/{nodes} nodes are available.")
    } else {
        format!("0/{nodes} nodes are available: {}.", counts.join(", "))
    }
}
