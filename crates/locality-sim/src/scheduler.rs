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

impl Engine {
    /// Feeds the scheduler's cache the pod events since it last read the store.
    pub(crate) fn scheduler_catch_up(&mut self) {
        let events: Vec<(ObjectKey, u64, Option<Arc<Object>>)> = self
            .store
            .events_since(self.scheduler.cursor)
            .unwrap_or_default()
            .iter()
            .filter(|e| e.key.kind == Kind::Pod)
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
        for (key, created, object) in events {
            let pod = object.as_deref().and_then(Object::as_pod);
            self.scheduler.observe(&key, created, pod);
        }
    }

    /// Binds pending pods: feasible nodes (nodeName, nodeSelector, required node affinity,
    /// taints, Ready, cordon), then the least loaded, ties broken by the seeded PRNG.
    ///
    /// Like kube-scheduler, it keeps its own cache (pending pods, pods per node) fed by the
    /// pod events since its last run; a pod whose required affinity pins it to one node (the
    /// DaemonSet controller's `matchFields: metadata.name`) is checked against that node only.
    pub(crate) fn schedule_pending(&mut self) {
        self.scheduler_catch_up();
        let pending: Vec<(u64, ObjectKey)> = self.scheduler.pending.iter().cloned().collect();
        let mut all_nodes: Option<Vec<Arc<Object>>> = None;
        for (created, key) in pending {
            let Some(mut pod) = self.store.get(&key).and_then(|s| s.object.as_pod()).cloned() else {
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
            let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
            let mut feasible: Vec<&Node> = Vec::new();
            for &n in &nodes {
                match node_fits(&pod.pod.spec, n, false).and_then(|()| self.host_ports_free(&pod.pod, n)) {
                    Ok(()) => feasible.push(n),
                    Err(r) => *reasons.entry(r).or_default() += 1,
                }
            }
            if feasible.is_empty() {
                let why = reasons
                    .iter()
                    .map(|(r, n)| format!("{n} {} {r}", if *n == 1 { "node" } else { "nodes" }))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.unschedulable.insert(
                    key,
                    format!(
                        "0/{} nodes are available: {why} (simulated scheduler)",
                        nodes.len()
                    ),
                );
                continue;
            }
            let load = |n: &Node| {
                self.scheduler
                    .load
                    .get(n.meta.name.as_str())
                    .copied()
                    .unwrap_or(0)
            };
            let min = feasible.iter().map(|n| load(n)).min().unwrap_or(0);
            let best: Vec<&&Node> = feasible.iter().filter(|n| load(n) == min).collect();
            let pick = best[self.rng.below(best.len() as u64) as usize].meta.name.clone();
            self.unschedulable.remove(&key);
            pod.pod.spec.node_name = pick;
            self.scheduler.observe(&key, created, Some(&pod));
            let _ = self.update(Object::Pod(pod), None);
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
