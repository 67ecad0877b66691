//! The simulated taint-eviction controller (k8s.io/kubernetes
//! `pkg/controller/tainteviction/taint_eviction.go` `processPodOnNode`) and the pod GC's orphan
//! pass (`pkg/controller/podgc/gc_controller.go` `gcOrphaned`); see `crate::nodelifecycle`.

use locality_model::objects::PodPhase;

use crate::engine::Engine;
use crate::fit::matching_toleration;
use crate::nodelifecycle::{Eviction, POD_GC_CHECK_PERIOD_MS, POD_GC_QUARANTINE_MS, no_execute, tick_after};
use crate::objects::{Kind, Object, ObjectKey};
use crate::tasks::Task;

impl Engine {
    /// The pods bound to `node` whose taint eviction is scheduled and not yet done.
    pub fn pending_taint_evictions(&self, node: &str) -> Vec<ObjectKey> {
        self.lifecycle
            .pods_of(node)
            .into_iter()
            .filter(|k| self.lifecycle.evictions.contains_key(k))
            .collect()
    }

    /// The taint-eviction controller's `processPodOnNode` for one pod.
    pub(crate) fn process_pod_taints(&mut self, key: &ObjectKey) {
        let Some((pod, _)) = self.stored_pod(key) else {
            self.lifecycle.evictions.remove(key);
            return;
        };
        let uid = pod.pod.meta.uid.clone();
        let tolerations = pod.pod.spec.tolerations.clone();
        let node_key = ObjectKey::new(Kind::Node, "", pod.pod.spec.node_name.as_str());
        let taints = self
            .store
            .get(&node_key)
            .and_then(|s| s.object.as_node())
            .map(no_execute)
            .unwrap_or_default();
        if taints.is_empty() {
            self.lifecycle.evictions.remove(key);
            return;
        }
        // `GetMatchingTolerations`, then `getMinTolerationTime` over the tolerations used: the
        // shortest `tolerationSeconds` (zero or negative: at once), none of them set: forever.
        let mut min_seconds: Option<u64> = None;
        let mut untolerated = false;
        for t in &taints {
            match matching_toleration(&tolerations, t) {
                None => {
                    untolerated = true;
                    break;
                }
                Some(used) => {
                    if let Some(s) = used.toleration_seconds {
                        let s = u64::try_from(s).unwrap_or(0);
                        min_seconds = Some(min_seconds.map_or(s, |m| m.min(s)));
                    }
                }
            }
        }
        if untolerated {
            self.lifecycle.evictions.remove(key);
            let _ = self.delete(key);
            return;
        }
        let Some(seconds) = min_seconds else {
            self.lifecycle.evictions.remove(key);
            return;
        };
        // An eviction already scheduled keeps its start (upstream keeps `CreatedAt`).
        if self.lifecycle.evictions.get(key).is_some_and(|e| e.uid == uid) {
            return;
        }
        self.lifecycle.next_token += 1;
        let token = self.lifecycle.next_token;
        self.lifecycle.evictions.insert(
            key.clone(),
            Eviction {
                uid: uid.clone(),
                token,
            },
        );
        self.schedule(
            self.now.saturating_add(seconds.saturating_mul(1000)),
            Task::TaintEviction(key.clone(), uid, token),
        );
    }

    /// A scheduled taint eviction is due: the pod is deleted (gracefully, as upstream's
    /// `deletePodHandler`), unless the eviction was cancelled since.
    pub(crate) fn taint_evict(&mut self, key: &ObjectKey, uid: &str, token: u64) {
        match self.lifecycle.evictions.get(key) {
            Some(e) if e.token == token && e.uid == uid => {
                self.lifecycle.evictions.remove(key);
            }
            _ => return,
        }
        if self.stored_pod(key).is_some_and(|(p, _)| p.pod.meta.uid == uid) {
            let _ = self.delete(key);
        }
    }

    pub(crate) fn schedule_pod_gc(&mut self, node: &str) {
        if !self.lifecycle.gc_pending.insert(node.to_string()) {
            return;
        }
        let at = tick_after(self.now, POD_GC_CHECK_PERIOD_MS) + POD_GC_QUARANTINE_MS;
        self.schedule(at, Task::PodGcOrphans(node.to_string()));
    }

    /// The pod GC's `gcOrphaned` for one missing node: its pods are marked Failed and
    /// force-deleted, unless the node exists again.
    pub(crate) fn pod_gc_orphans(&mut self, node: &str) {
        self.lifecycle.gc_pending.remove(node);
        self.lifecycle_catch_up();
        if self.store.get(&ObjectKey::new(Kind::Node, "", node)).is_some() {
            return;
        }
        for key in self.lifecycle.pods_of(node) {
            let Some((pod, _)) = self.stored_pod(&key) else {
                continue;
            };
            if !matches!(pod.pod.phase, PodPhase::Succeeded | PodPhase::Failed) {
                let mut pod = pod.clone();
                pod.pod.phase = PodPhase::Failed;
                pod.pod.ready = false;
                let _ = self.update(Object::Pod(pod), None);
            }
            let _ = self.delete_with(&key, Some(0));
        }
    }
}
