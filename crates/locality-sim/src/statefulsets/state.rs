//! The simulated StatefulSet controller's state and decisions, apart from the engine that
//! carries them out (`statefulsets`): which pod of which ordinal to create or delete next.
//!
//! Follows k8s.io/kubernetes `pkg/controller/statefulset/stateful_set_control.go`
//! `updateStatefulSet` (and its `processReplica` / `processCondemned`): pods are named
//! `NAME-0` … `NAME-(replicas-1)`; with `podManagementPolicy: OrderedReady` (monotonic) the
//! controller stops at the first pod that is missing, terminating, not Running and Ready, or
//! not yet available (`minReadySeconds`), and creates at most one pod per pass; with
//! `Parallel` it does not wait. A RollingUpdate then deletes the pod of the highest ordinal at
//! or above `partition` that is not at the update revision, and waits for its replacement
//! (created at the next pass once the old pod is gone: a StatefulSet never runs two pods of
//! one name, so there is no surge) to be healthy before the next one. With the
//! `MaxUnavailableStatefulSet` feature gate on it follows `updateStatefulSetAfterInvariantEstablished`
//! instead: up to `maxUnavailable` (default 1, `getStatefulSetMaxUnavailable`: rounded down,
//! at least 1) pods unhealthy at once. `OnDelete` replaces nothing by itself.

use std::collections::BTreeMap;

use crate::objects::SimWorkload;
use crate::time::Millis;

/// Label with the pod's own name (upstream `apps.StatefulSetPodNameLabel`).
pub const LABEL_POD_NAME: &str = "statefulset.kubernetes.io/pod-name";
/// Label with the pod's ordinal (upstream `apps.PodIndexLabel`).
pub const LABEL_POD_INDEX: &str = "apps.kubernetes.io/pod-index";

/// The ordinal of a StatefulSet's pod from its name (`getParentNameAndOrdinal`): `NAME-N`.
pub fn ordinal(set: &str, pod: &str) -> Option<u32> {
    let n = pod.strip_prefix(set)?.strip_prefix('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || (n.len() > 1 && n.starts_with('0')) {
        return None;
    }
    n.parse().ok()
}

/// One existing pod of a StatefulSet, as the controller reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Replica {
    /// At the update revision (its `controller-revision-hash` label).
    pub updated: bool,
    /// Being deleted.
    pub terminating: bool,
    /// Phase Failed or Succeeded: deleted and made again.
    pub finished: bool,
    /// Phase Running and Ready (`isRunningAndReady`).
    pub running_ready: bool,
    /// Ready for `minReadySeconds` (`isRunningAndAvailable`).
    pub available: bool,
}

impl Replica {
    /// `isHealthy`: Running and Ready and not being deleted.
    fn healthy(&self) -> bool {
        self.running_ready && !self.terminating
    }
}

/// What the controller reads of the StatefulSet's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetSpec {
    /// `spec.replicas`.
    pub replicas: u32,
    /// `podManagementPolicy: Parallel` (upstream `allowsBurst`).
    pub parallel: bool,
    /// `updateStrategy.type: OnDelete`.
    pub on_delete: bool,
    /// `rollingUpdate.partition` (0 when unset).
    pub partition: u32,
    /// `rollingUpdate.maxUnavailable` scaled against `replicas`, when the
    /// `MaxUnavailableStatefulSet` gate is on (`None`: off, the one-at-a-time update).
    pub max_unavailable: Option<u32>,
}

/// Which template a pod is created from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision {
    /// The revision the pods had before the update (below the partition).
    Current,
    /// The update revision.
    Update,
}

/// One step of the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Create the pod of this ordinal from this revision.
    Create(u32, Revision),
    /// Delete the pod of this ordinal.
    Delete(u32),
}

/// The pod the controller creates for a missing ordinal (`newVersionedStatefulSetPod`): the
/// current revision below the partition of a RollingUpdate, else the update revision.
fn revision_for(spec: &SetSpec, ord: u32, revisions_differ: bool) -> Revision {
    if revisions_differ && !spec.on_delete && ord < spec.partition {
        Revision::Current
    } else {
        Revision::Update
    }
}

/// One pass of the controller over the pods of ordinals `0..replicas` (`replicas[i]`: the pod
/// of ordinal `i`, `None` when missing) and those of higher ordinals (`condemned`, by
/// ordinal): what it creates and deletes now (`updateStatefulSet`).
pub fn plan(
    spec: &SetSpec,
    replicas: &[Option<Replica>],
    condemned: &BTreeMap<u32, Replica>,
    revisions_differ: bool,
) -> Vec<Action> {
    let monotonic = !spec.parallel;
    let mut actions = Vec::new();
    // The first unhealthy pod: of the replicas in order, else of the condemned from the lowest.
    let first_unhealthy_condemned = if replicas.iter().all(|r| r.is_some_and(|r| r.healthy())) {
        condemned.iter().find(|(_, r)| !r.healthy()).map(|(o, _)| *o)
    } else {
        None
    };
    // processReplica, in ordinal order.
    for (i, slot) in replicas.iter().enumerate() {
        let ord = i as u32;
        match slot {
            Some(r) if r.finished => {
                if !r.terminating {
                    actions.push(Action::Delete(ord));
                }
                if monotonic {
                    return actions;
                }
            }
            None => {
                actions.push(Action::Create(ord, revision_for(spec, ord, revisions_differ)));
                if monotonic {
                    return actions;
                }
            }
            Some(r) => {
                if monotonic && (r.terminating || !r.running_ready || !r.available) {
                    return actions;
                }
            }
        }
    }
    // processCondemned, from the highest ordinal down.
    for (&ord, r) in condemned.iter().rev() {
        if r.terminating {
            if monotonic {
                return actions;
            }
            continue;
        }
        let first = first_unhealthy_condemned == Some(ord);
        if monotonic && (!r.running_ready || !r.available) && !first {
            return actions;
        }
        actions.push(Action::Delete(ord));
        if monotonic {
            return actions;
        }
    }
    if spec.on_delete {
        return actions;
    }
    let n = replicas.len() as u32;
    let outdated = |ord: u32| replicas[ord as usize].is_some_and(|r| !r.updated && !r.terminating);
    match spec.max_unavailable {
        // updateStatefulSetAfterInvariantEstablished.
        Some(max_unavailable) => {
            let unavailable = replicas
                .iter()
                .filter(|r| !r.is_some_and(|r| r.healthy()))
                .count() as u32;
            let mut room = max_unavailable.max(1).saturating_sub(unavailable);
            for ord in (spec.partition..n).rev() {
                if room == 0 {
                    break;
                }
                if outdated(ord) {
                    actions.push(Action::Delete(ord));
                    room -= 1;
                }
            }
        }
        // The one-at-a-time update: delete the highest outdated pod, or wait for an
        // unhealthy one above it.
        None => {
            for ord in (spec.partition..n).rev() {
                if outdated(ord) {
                    actions.push(Action::Delete(ord));
                    break;
                }
                if !replicas[ord as usize].is_some_and(|r| r.healthy()) {
                    break;
                }
            }
        }
    }
    actions
}

/// The simulated StatefulSet controller's view of one StatefulSet.
#[derive(Debug, Clone)]
pub(crate) struct StatefulState {
    /// The StatefulSet's uid (a new object with the same name starts afresh).
    pub uid: String,
    /// The current revision (`status.currentRevision`): its hash and template. It becomes the
    /// update revision once every pod is updated and Ready (`completeRollingUpdate`).
    pub current_hash: String,
    /// The template of the current revision.
    pub current: SimWorkload,
    /// When the controller first saw each pod Ready (for `minReadySeconds`).
    pub ready_since: BTreeMap<String, Millis>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(replicas: u32) -> SetSpec {
        SetSpec {
            replicas,
            parallel: false,
            on_delete: false,
            partition: 0,
            max_unavailable: None,
        }
    }

    fn ok(updated: bool) -> Option<Replica> {
        Some(Replica {
            updated,
            running_ready: true,
            available: true,
            ..Replica::default()
        })
    }

    fn none() -> BTreeMap<u32, Replica> {
        BTreeMap::new()
    }

    #[test]
    fn ordinals_are_parsed_as_upstream() {
        assert_eq!(ordinal("web", "web-0"), Some(0));
        assert_eq!(ordinal("web", "web-12"), Some(12));
        assert_eq!(ordinal("web", "web-x"), None);
        assert_eq!(ordinal("web", "web-01"), None);
        assert_eq!(ordinal("web", "webs-1"), None);
        assert_eq!(ordinal("web", "web-"), None);
    }

    #[test]
    fn ordered_ready_creates_one_pod_at_a_time_in_ordinal_order() {
        let s = spec(3);
        assert_eq!(
            plan(&s, &[None, None, None], &none(), false),
            [Action::Create(0, Revision::Update)]
        );
        let starting = Some(Replica::default());
        assert!(plan(&s, &[starting, None, None], &none(), false).is_empty());
        assert_eq!(
            plan(&s, &[ok(true), None, None], &none(), false),
            [Action::Create(1, Revision::Update)]
        );
        // Parallel creates every missing pod at once.
        let p = SetSpec { parallel: true, ..s };
        assert_eq!(plan(&p, &[None, None, None], &none(), false).len(), 3);
    }

    #[test]
    fn a_rolling_update_goes_from_the_highest_ordinal_down_one_at_a_time() {
        let s = spec(3);
        assert_eq!(
            plan(&s, &[ok(false), ok(false), ok(false)], &none(), true),
            [Action::Delete(2)]
        );
        // The old pod 2 is terminating: wait (no surge, no second deletion).
        let terminating = Some(Replica {
            terminating: true,
            ..ok(false).unwrap()
        });
        assert!(plan(&s, &[ok(false), ok(false), terminating], &none(), true).is_empty());
        // Gone: made again, from the update revision.
        assert_eq!(
            plan(&s, &[ok(false), ok(false), None], &none(), true),
            [Action::Create(2, Revision::Update)]
        );
        // Ready but not yet available (minReadySeconds): wait.
        let fresh = Some(Replica {
            updated: true,
            running_ready: true,
            ..Replica::default()
        });
        assert!(plan(&s, &[ok(false), ok(false), fresh], &none(), true).is_empty());
        assert_eq!(
            plan(&s, &[ok(false), ok(false), ok(true)], &none(), true),
            [Action::Delete(1)]
        );
        assert_eq!(
            plan(&s, &[ok(false), ok(true), ok(true)], &none(), true),
            [Action::Delete(0)]
        );
        assert!(plan(&s, &[ok(true), ok(true), ok(true)], &none(), true).is_empty());
    }

    #[test]
    fn a_partition_keeps_the_lower_ordinals_and_recreates_them_at_the_current_revision() {
        let s = SetSpec {
            partition: 2,
            ..spec(3)
        };
        assert_eq!(
            plan(&s, &[ok(false), ok(false), ok(false)], &none(), true),
            [Action::Delete(2)]
        );
        assert!(plan(&s, &[ok(false), ok(false), ok(true)], &none(), true).is_empty());
        assert_eq!(
            plan(&s, &[None, ok(false), ok(true)], &none(), true),
            [Action::Create(0, Revision::Current)]
        );
    }

    #[test]
    fn on_delete_replaces_nothing_but_recreates_deleted_pods_at_the_update_revision() {
        let s = SetSpec {
            on_delete: true,
            partition: 2,
            ..spec(2)
        };
        assert!(plan(&s, &[ok(false), ok(false)], &none(), true).is_empty());
        assert_eq!(
            plan(&s, &[ok(false), None], &none(), true),
            [Action::Create(1, Revision::Update)]
        );
        assert_eq!(
            plan(&s, &[None, ok(false)], &none(), true),
            [Action::Create(0, Revision::Update)]
        );
    }

    #[test]
    fn max_unavailable_deletes_up_to_that_many_from_the_top() {
        let s = SetSpec {
            parallel: true,
            max_unavailable: Some(2),
            ..spec(4)
        };
        let all_old = [ok(false), ok(false), ok(false), ok(false)];
        assert_eq!(
            plan(&s, &all_old, &none(), true),
            [Action::Delete(3), Action::Delete(2)]
        );
        // One already unavailable: room for one more.
        let starting = Some(Replica {
            updated: true,
            ..Replica::default()
        });
        assert_eq!(
            plan(&s, &[ok(false), ok(false), ok(false), starting], &none(), true),
            [Action::Delete(2)]
        );
        // maxUnavailable 1 (the gate's default) is the one-at-a-time order.
        let one = SetSpec {
            max_unavailable: Some(1),
            parallel: false,
            ..s
        };
        assert_eq!(plan(&one, &all_old, &none(), true), [Action::Delete(3)]);
    }

    #[test]
    fn condemned_pods_go_from_the_highest_ordinal_after_the_replicas_are_healthy() {
        let s = spec(1);
        let condemned = BTreeMap::from([(1, ok(true).unwrap()), (2, ok(true).unwrap())]);
        assert_eq!(plan(&s, &[ok(true)], &condemned, false), [Action::Delete(2)]);
        assert!(plan(&s, &[None], &condemned, false) == [Action::Create(0, Revision::Update)]);
    }
}
