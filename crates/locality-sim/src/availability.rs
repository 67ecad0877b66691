//! When each pod became Ready, as the simulated DaemonSet and Deployment controllers see it,
//! and whether it is **available**: Ready for the workload's `minReadySeconds`
//! (k8s.io/kubernetes `pkg/api/v1/pod/util.go` `IsPodAvailable`, which counts from the Ready
//! condition's `lastTransitionTime`). The simulated pods carry no condition times, so the time
//! is the controllers' pass that first saw the pod Ready (one controller delay after the
//! kubelet wrote it), as the StatefulSet controller keeps it for itself (`statefulsets`).
//! A leaf: fed by the controllers' pass over the store's pod events (`controllers`).

use crate::fasthash::FastMap;
use crate::objects::{ObjectKey, SimPod};
use crate::time::Millis;
use locality_model::objects::PodPhase;

/// Ready and not being deleted: what `IsPodAvailable` needs before it counts time.
pub(crate) fn pod_ready(p: &SimPod) -> bool {
    p.pod.ready && p.pod.phase == PodPhase::Running && p.pod.meta.deletion_timestamp.is_none()
}

/// When each Ready pod was first seen Ready.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadySince {
    since: FastMap<ObjectKey, Millis>,
}

impl ReadySince {
    /// Room for about `pods` pods.
    pub(crate) fn reserve(&mut self, pods: usize) {
        self.since.reserve(pods);
    }

    /// Records a pod event at `now`: a Ready pod keeps the time it was first seen Ready, any
    /// other (or a deleted one, `None`) is forgotten.
    pub(crate) fn observe(&mut self, key: &ObjectKey, pod: Option<&SimPod>, now: Millis) {
        if pod.is_some_and(pod_ready) {
            self.since.entry(key.clone()).or_insert(now);
        } else {
            self.since.remove(key);
        }
    }

    /// When the pod at `key` is (or became) available with `min_ready_ms`; `None` while it is
    /// not Ready.
    pub(crate) fn available_at(&self, key: &ObjectKey, min_ready_ms: u64) -> Option<Millis> {
        self.since.get(key).map(|t| t + min_ready_ms)
    }
}

/// Availability of pods at `now`: how many are available, and the earliest instant a Ready
/// one that is not yet available becomes so (when the controller looks again: upstream
/// re-queues the workload after `minReadySeconds`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Availability {
    /// Available pods.
    pub available: u32,
    /// The earliest instant a Ready pod becomes available, if one is waiting.
    pub next: Option<Millis>,
}

impl Availability {
    /// Counts one pod whose availability starts at `at` (`None`: not Ready).
    pub(crate) fn count(&mut self, at: Option<Millis>, now: Millis) -> bool {
        match at {
            Some(t) if t <= now => {
                self.available += 1;
                true
            }
            Some(t) => {
                self.next = Some(self.next.map_or(t, |n| n.min(t)));
                false
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{Kind, PodBehaviour};
    use locality_model::objects::Pod;

    fn pod(ready: bool) -> SimPod {
        SimPod {
            pod: Pod {
                phase: PodPhase::Running,
                ready,
                ..Pod::default()
            },
            behaviour: PodBehaviour::default(),
            restart_count: 0,
        }
    }

    #[test]
    fn a_pod_is_available_min_ready_after_it_was_first_seen_ready() {
        let k = ObjectKey::new(Kind::Pod, "ns", "p");
        let mut r = ReadySince::default();
        r.observe(&k, Some(&pod(true)), 1_000);
        r.observe(&k, Some(&pod(true)), 5_000);
        assert_eq!(r.available_at(&k, 10_000), Some(11_000), "the first time counts");
        let mut a = Availability::default();
        assert!(!a.count(r.available_at(&k, 10_000), 10_999));
        assert!(a.count(r.available_at(&k, 10_000), 11_000));
        assert_eq!((a.available, a.next), (1, Some(11_000)));
        r.observe(&k, Some(&pod(false)), 12_000);
        assert_eq!(r.available_at(&k, 0), None, "not Ready: forgotten");
        r.observe(&k, Some(&pod(true)), 13_000);
        r.observe(&k, None, 14_000);
        assert_eq!(r.available_at(&k, 0), None, "deleted: forgotten");
    }
}
