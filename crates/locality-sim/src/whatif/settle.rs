//! When a what-if's changes have played out.
//!
//! - A rollout: every pod of the workload new and Ready ([`super::rollout`]).
//! - A Service change: 30 s after it (the controllers' writes; kube-proxy catching up is the
//!   run's `after`).
//! - A drain: every pod it evicts gone ([`crate::disruption`]), and the evicted pods replaced.
//! - A node down: the node lifecycle controller has marked it NotReady and tainted it, every
//!   taint eviction of its pods is done (after their `tolerationSeconds`), and the evicted
//!   pods replaced.
//!
//! "Replaced": every ReplicaSet has at least as many Ready pods not being deleted as it had
//! before the change, or as it wants now when that is fewer.

use std::collections::BTreeMap;

use super::Change;
use crate::engine::Engine;
use crate::nodelifecycle::{TAINT_NOT_READY, TAINT_UNREACHABLE};
use crate::objects::{Kind, Object, ObjectKey};
use crate::time::Millis;

/// How long a Service change takes to settle.
pub const SERVICE_SETTLE_MS: Millis = 30_000;

/// Ready pods not being deleted, per ReplicaSet that controls them.
fn ready_per_replica_set(engine: &Engine) -> BTreeMap<ObjectKey, u32> {
    let mut ready = BTreeMap::new();
    for (k, s) in engine.store().list(Kind::Pod) {
        let Some(p) = s.object.as_pod() else { continue };
        if !p.pod.ready || p.pod.meta.deletion_timestamp.is_some() {
            continue;
        }
        if let Some(o) = p
            .pod
            .meta
            .owner_references
            .iter()
            .find(|o| o.controller && o.kind == "ReplicaSet")
        {
            *ready
                .entry(ObjectKey::new(
                    Kind::ReplicaSet,
                    k.namespace.as_str(),
                    o.name.as_str(),
                ))
                .or_insert(0) += 1;
        }
    }
    ready
}

/// Follows whether the changes of one run have played out.
pub(crate) struct Settle {
    /// Ready pods per ReplicaSet before the change.
    before: BTreeMap<ObjectKey, u32>,
    /// Whether the run has node events (drains, nodes down).
    node_events: bool,
}

impl Settle {
    /// Takes the state before `changes`.
    pub fn new(engine: &Engine, changes: &[Change]) -> Self {
        let node_events = changes
            .iter()
            .any(|c| matches!(c, Change::Drain { .. } | Change::NodeDown { .. }));
        Settle {
            before: if node_events {
                ready_per_replica_set(engine)
            } else {
                BTreeMap::new()
            },
            node_events,
        }
    }

    /// The ReplicaSets with fewer Ready pods than before (or than they want, when fewer):
    /// `namespace/name: ready of wanted`.
    fn short_replica_sets(&self, engine: &Engine) -> Vec<String> {
        let now = ready_per_replica_set(engine);
        let mut short = Vec::new();
        for (k, s) in engine.store().list(Kind::ReplicaSet) {
            let Some(w) = s.object.as_workload() else { continue };
            let wanted = w.workload.replicas.unwrap_or(1);
            let target = wanted.min(self.before.get(k).copied().unwrap_or(0));
            let ready = now.get(k).copied().unwrap_or(0);
            if ready < target {
                short.push(format!(
                    "ReplicaSet {}/{}: {ready} of {wanted} Ready",
                    k.namespace, k.name
                ));
            }
        }
        short
    }

    /// What keeps the node events of `changes` from having played out (empty: nothing).
    /// Reads the store: call it when the store changed.
    pub fn node_events_pending(&self, engine: &Engine, changes: &[Change]) -> Vec<String> {
        if !self.node_events {
            return Vec::new();
        }
        let mut pending = Vec::new();
        for c in changes {
            match c {
                Change::Drain { node } => match engine.drain_status(node) {
                    Some(d) if d.finished_at.is_some() => {}
                    Some(d) => {
                        let mut why = format!("the drain of node {node} did not finish");
                        if let Some((pod, (refusal, _))) = d.refused.iter().next() {
                            why.push_str(&format!(
                                ": the eviction of pod {}/{} was refused: {refusal}",
                                pod.namespace, pod.name
                            ));
                            if d.refused.len() > 1 {
                                why.push_str(&format!(" (and {} more)", d.refused.len() - 1));
                            }
                        }
                        pending.push(why);
                    }
                    None => pending.push(format!("node {node} was not drained")),
                },
                Change::NodeDown { node } => {
                    let n = engine
                        .get(&ObjectKey::new(Kind::Node, "", node.as_str()))
                        .and_then(Object::as_node);
                    let tainted = n.is_some_and(|n| {
                        n.taints.iter().any(|t| {
                            t.effect == "NoExecute"
                                && (t.key == TAINT_UNREACHABLE || t.key == TAINT_NOT_READY)
                        })
                    });
                    if !tainted {
                        pending.push(format!("node {node} was not yet marked NotReady and tainted"));
                        continue;
                    }
                    let waiting = engine.pending_taint_evictions(node);
                    if let Some(first) = waiting.first() {
                        pending.push(format!(
                            "node {node}: {} pod(s) not yet evicted (first {}/{}), after their tolerationSeconds",
                            waiting.len(),
                            first.namespace,
                            first.name
                        ));
                    }
                }
                Change::Rollout { .. }
                | Change::SetService { .. }
                | Change::Apply { .. }
                | Change::DeletePod { .. } => {}
            }
        }
        if pending.is_empty() {
            for s in self.short_replica_sets(engine) {
                pending.push(format!("replacements not Ready: {s}"));
            }
        }
        pending
    }
}
