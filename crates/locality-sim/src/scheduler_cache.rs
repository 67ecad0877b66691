//! The simulated scheduler's cache: pending pods by creation (the active queue and the
//! unschedulable pods set aside), and pods per node (its load).

use std::collections::BTreeSet;

use compact_str::CompactString;

use crate::fasthash::FastMap;

use locality_model::objects::PodPhase;

use crate::objects::{ObjectKey, SimPod};

/// The simulated scheduler's cache: pending pods by creation, pods per node.
///
/// As kube-scheduler's queue (`pkg/scheduler/backend/queue`), a pod found unschedulable is
/// set aside (`unschedulablePods`) rather than tried again at every pass, and moved back to
/// the active queue by an event that may make room: a Node's change, a pod leaving a node, a
/// change of the pod itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct SchedulerCache {
    /// Store events up to this resourceVersion are in the cache.
    pub cursor: u64,
    /// The active queue: pods to try, oldest first.
    pub(crate) pending: BTreeSet<(u64, ObjectKey)>,
    /// Pods the last try found unschedulable, waiting for an event that may make room.
    pub(crate) unschedulable: BTreeSet<(u64, ObjectKey)>,
    /// Some event may have made room since the unschedulable pods were last tried.
    pub(crate) room_changed: bool,
    pending_since: FastMap<ObjectKey, u64>,
    node_of: FastMap<ObjectKey, CompactString>,
    pub(crate) load: FastMap<CompactString, usize>,
}

impl SchedulerCache {
    /// True for a pod waiting to be bound: not bound and not being deleted (`None`: deleted).
    pub(crate) fn waits(pod: Option<&SimPod>) -> bool {
        pod.is_some_and(|p| p.pod.spec.node_name.is_empty() && p.pod.meta.deletion_timestamp.is_none())
    }

    /// Records a pod's current state (`None`: deleted). A pod that has finished
    /// (`Succeeded`, `Failed`) no longer counts on its node, as kube-scheduler's informer
    /// leaves such pods out (`status.phase!=Succeeded,status.phase!=Failed`).
    pub(crate) fn observe(&mut self, key: &ObjectKey, created: u64, pod: Option<&SimPod>) {
        let node = pod
            .filter(|p| !matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed))
            .map(|p| p.pod.spec.node_name.as_str())
            .filter(|n| !n.is_empty());
        let waiting = Self::waits(pod);
        if let Some(c) = self.pending_since.remove(key) {
            let entry = (c, key.clone());
            self.pending.remove(&entry);
            self.unschedulable.remove(&entry);
        }
        if waiting {
            self.pending.insert((created, key.clone()));
            self.pending_since.insert(key.clone(), created);
        }
        if self.node_of.get(key).map(CompactString::as_str) != node {
            if let Some(old) = self.node_of.remove(key)
                && let Some(l) = self.load.get_mut(&old)
            {
                *l = l.saturating_sub(1);
                self.room_changed = true;
            }
            if let Some(n) = node {
                self.node_of.insert(key.clone(), CompactString::new(n));
                match self.load.get_mut(n) {
                    Some(l) => *l += 1,
                    None => {
                        self.load.insert(CompactString::new(n), 1);
                    }
                }
            }
        }
    }
}

impl SchedulerCache {
    /// Sets a pod the last try could not place aside, until an event may make room.
    pub(crate) fn set_aside(&mut self, created: u64, key: ObjectKey) {
        let entry = (created, key);
        if self.pending.remove(&entry) {
            self.unschedulable.insert(entry);
        }
    }

    /// Moves the pods set aside back to the active queue when some event may have made room
    /// (`MoveAllToActiveOrBackoffQueue`).
    pub(crate) fn requeue_if_room_changed(&mut self) {
        if std::mem::take(&mut self.room_changed) {
            self.pending.append(&mut self.unschedulable);
        }
    }
}
