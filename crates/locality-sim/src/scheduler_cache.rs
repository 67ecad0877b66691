//! The simulated scheduler's cache: pending pods by creation, and pods per node (its load).

use std::collections::BTreeSet;

use compact_str::CompactString;

use crate::fasthash::FastMap;

use crate::objects::{ObjectKey, SimPod};

/// The simulated scheduler's cache: pending pods by creation, pods per node.
#[derive(Debug, Clone, Default)]
pub(crate) struct SchedulerCache {
    /// Store events up to this resourceVersion are in the cache.
    pub cursor: u64,
    pub(crate) pending: BTreeSet<(u64, ObjectKey)>,
    pending_since: FastMap<ObjectKey, u64>,
    node_of: FastMap<ObjectKey, CompactString>,
    pub(crate) load: FastMap<CompactString, usize>,
}

impl SchedulerCache {
    /// True for a pod waiting to be bound: not bound and not being deleted (`None`: deleted).
    pub(crate) fn waits(pod: Option<&SimPod>) -> bool {
        pod.is_some_and(|p| p.pod.spec.node_name.is_empty() && p.pod.meta.deletion_timestamp.is_none())
    }

    /// Records a pod's current state (`None`: deleted).
    pub(crate) fn observe(&mut self, key: &ObjectKey, created: u64, pod: Option<&SimPod>) {
        let node = pod
            .map(|p| p.pod.spec.node_name.as_str())
            .filter(|n| !n.is_empty());
        let waiting = Self::waits(pod);
        if let Some(c) = self.pending_since.remove(key) {
            self.pending.remove(&(c, key.clone()));
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
