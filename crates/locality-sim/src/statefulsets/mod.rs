//! The simulated StatefulSet controller (k8s.io/kubernetes `pkg/controller/statefulset`):
//! reads a StatefulSet and its pods from the store, asks [`state::plan`] what to do, and
//! creates and deletes pods through the simulated API. Pods are named by ordinal
//! (`NAME-0`…), labelled with their revision (`controller-revision-hash`), their name and
//! their index, and placed by the simulated scheduler.

pub mod state;

use std::collections::BTreeMap;

use locality_model::objects::{PodManagementPolicy, PodPhase};

use self::state::{
    Action, LABEL_POD_INDEX, LABEL_POD_NAME, Replica, Revision, SetSpec, StatefulState, ordinal, plan,
};
use crate::engine::Engine;
use crate::objects::{Kind, Object, ObjectKey, SimWorkload};
use crate::tasks::Task;
use crate::templates::{LABEL_CONTROLLER_REVISION_HASH, scaled, template_hash, with};

/// The revision label's value of a StatefulSet's template (`NAME-HASH`, as the controller's
/// ControllerRevision names are).
pub fn revision_name(set: &SimWorkload) -> String {
    format!("{}-{}", set.workload.meta.name, template_hash(set))
}

/// The spec the controller reads (`stateful_set_control.go` `allowsBurst`,
/// `getStatefulSetMaxUnavailable`: `maxUnavailable` rounded down, at least 1, honoured only
/// with the `MaxUnavailableStatefulSet` gate on).
fn set_spec(set: &SimWorkload, gate: bool) -> SetSpec {
    let w = &set.workload;
    let replicas = w.replicas.unwrap_or(1);
    SetSpec {
        replicas,
        parallel: w.pod_management_policy == PodManagementPolicy::Parallel,
        on_delete: w.update_strategy.as_deref() == Some("OnDelete"),
        partition: w.partition.unwrap_or(0),
        max_unavailable: gate.then(|| {
            let v = w.max_unavailable.as_deref().unwrap_or("1");
            u32::try_from(scaled(v, i64::from(replicas), false).max(1)).unwrap_or(1)
        }),
    }
}

/// A StatefulSet's `status` as the simulated controller computes it
/// (`stateful_set_control.go` `computeReplicaStatus`, `updateStatefulSetStatus`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatefulSetStatus {
    /// `replicas`: pods created (terminating ones included).
    pub replicas: u32,
    /// `readyReplicas`: pods Running and Ready.
    pub ready_replicas: u32,
    /// `availableReplicas`: pods Ready for `minReadySeconds` (`isRunningAndAvailable`).
    pub available_replicas: u32,
    /// `currentReplicas`: pods not terminating at the current revision.
    pub current_replicas: u32,
    /// `updatedReplicas`: pods not terminating at the update revision.
    pub updated_replicas: u32,
    /// `currentRevision`.
    pub current_revision: String,
    /// `updateRevision`.
    pub update_revision: String,
}

impl Engine {
    /// True when the simulated control plane honours a StatefulSet's
    /// `rollingUpdate.maxUnavailable`: the `MaxUnavailableStatefulSet` feature gate on in
    /// kube-apiserver (else it drops the field) and kube-controller-manager, at
    /// [`crate::SimConfig::kube_version`] with [`crate::SimConfig::feature_gates`] (k8s.io/kubernetes
    /// `pkg/features/kube_features.go`: alpha, off, from 1.24; beta, on, from 1.35). Off, the
    /// controller replaces one pod at a time.
    pub fn max_unavailable_stateful_set(&self) -> bool {
        locality_model::features::ControlPlaneFeatures::applying(
            self.config.kube_version,
            &self.config.feature_gates,
        )
        .max_unavailable_stateful_set
    }

    /// The `status` of the StatefulSet at `key`, as its simulated controller last saw it (its
    /// current revision; availability from when it saw each pod Ready); `None` when no
    /// StatefulSet is stored there.
    pub fn stateful_set_status(&self, key: &ObjectKey) -> Option<StatefulSetStatus> {
        let set = self.store.get(key).and_then(|s| s.object.as_workload())?;
        let update_revision = revision_name(set);
        let state = self
            .stateful_sets
            .get(key)
            .filter(|s| s.uid == set.workload.meta.uid);
        let mut st = StatefulSetStatus {
            current_revision: state.map_or_else(|| update_revision.clone(), |s| s.current_hash.clone()),
            update_revision,
            ..StatefulSetStatus::default()
        };
        let min_ready_ms = u64::from(set.workload.min_ready_seconds) * 1000;
        for o in self.owned_pods(&key.namespace, &set.workload.meta.uid) {
            let Some(p) = o.as_pod() else { continue };
            st.replicas += 1;
            let running_ready = p.pod.phase == PodPhase::Running && p.pod.ready;
            if running_ready {
                st.ready_replicas += 1;
                let since = state.and_then(|s| s.ready_since.get(&p.pod.meta.name));
                if since.is_some_and(|&t| t + min_ready_ms <= self.now) || min_ready_ms == 0 {
                    st.available_replicas += 1;
                }
            }
            if p.pod.meta.deletion_timestamp.is_none() {
                let rev = p.pod.meta.labels.get(LABEL_CONTROLLER_REVISION_HASH);
                st.current_replicas += u32::from(rev == Some(&st.current_revision));
                st.updated_replicas += u32::from(rev == Some(&st.update_revision));
            }
        }
        Some(st)
    }
}

impl Engine {
    /// One sync of a StatefulSet (`StatefulSetControl.UpdateStatefulSet`).
    pub(crate) fn sync_stateful_set(&mut self, key: &ObjectKey) {
        let Some(set) = self.store.get(key).and_then(|s| s.object.as_workload()).cloned() else {
            self.stateful_sets.remove(key);
            return;
        };
        if set.workload.meta.deletion_timestamp.is_some() {
            return;
        }
        let uid = set.workload.meta.uid.clone();
        let update_hash = revision_name(&set);
        let fresh = self.stateful_sets.get(key).is_none_or(|s| s.uid != uid);
        if fresh {
            self.stateful_sets.insert(
                key.clone(),
                StatefulState {
                    uid: uid.clone(),
                    current_hash: update_hash.clone(),
                    current: set.clone(),
                    ready_since: BTreeMap::new(),
                },
            );
        }
        let spec = set_spec(&set, self.max_unavailable_stateful_set());
        let min_ready_ms = u64::from(set.workload.min_ready_seconds) * 1000;
        let now = self.now;
        let mut replicas: Vec<Option<Replica>> = vec![None; spec.replicas as usize];
        let mut condemned = BTreeMap::new();
        let mut next_available: Option<u64> = None;
        let owned = self.owned_pods(&key.namespace, &uid);
        let state = self.stateful_sets.get_mut(key).expect("state inserted above");
        state.ready_since.retain(|name, _| {
            owned
                .iter()
                .any(|o| o.as_pod().is_some_and(|p| &p.pod.meta.name == name))
        });
        for o in &owned {
            let Some(p) = o.as_pod() else { continue };
            let Some(ord) = ordinal(&key.name, &p.pod.meta.name) else {
                continue;
            };
            let running_ready = p.pod.phase == PodPhase::Running && p.pod.ready;
            let available = if running_ready {
                let since = *state.ready_since.entry(p.pod.meta.name.clone()).or_insert(now);
                let at = since + min_ready_ms;
                if at > now {
                    next_available = Some(next_available.map_or(at, |n| n.min(at)));
                }
                at <= now
            } else {
                state.ready_since.remove(&p.pod.meta.name);
                false
            };
            let r = Replica {
                updated: p.pod.meta.labels.get(LABEL_CONTROLLER_REVISION_HASH) == Some(&update_hash),
                terminating: p.pod.meta.deletion_timestamp.is_some(),
                finished: matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed),
                running_ready,
                available,
            };
            match replicas.get_mut(ord as usize) {
                Some(slot) => *slot = Some(r),
                None => {
                    condemned.insert(ord, r);
                }
            }
        }
        // completeRollingUpdate: every replica updated and Ready makes the update current.
        let complete = replicas
            .iter()
            .all(|r| r.is_some_and(|r| r.updated && r.running_ready));
        if complete && state.current_hash != update_hash {
            state.current_hash = update_hash.clone();
            state.current = set.clone();
        }
        let current_hash = state.current_hash.clone();
        let current = state.current.clone();
        let actions = plan(&spec, &replicas, &condemned, current_hash != update_hash);
        if let Some(at) = next_available {
            // Upstream re-queues the set after minReadySeconds.
            self.schedule(at, Task::SyncStatefulSet(key.clone()));
        }
        for a in actions {
            match a {
                Action::Create(ord, revision) => {
                    let (template, hash) = match revision {
                        Revision::Current => (&current, current_hash.as_str()),
                        Revision::Update => (&set, update_hash.as_str()),
                    };
                    let name = format!("{}-{ord}", key.name);
                    let mut t = template.clone();
                    // The pods belong to the StatefulSet as it is now (its uid and name).
                    t.workload.meta = set.workload.meta.clone();
                    let mut labels = with(&t.workload.template_labels, LABEL_CONTROLLER_REVISION_HASH, hash);
                    labels.insert(LABEL_POD_NAME.into(), name.clone());
                    labels.insert(LABEL_POD_INDEX.into(), ord.to_string());
                    t.workload.template_labels = labels;
                    let pod = self.pod_from_template(&t, name, None);
                    let _ = self.create(Object::Pod(pod));
                }
                Action::Delete(ord) => {
                    let name = format!("{}-{ord}", key.name);
                    let _ = self.delete(&ObjectKey::new(Kind::Pod, &key.namespace, name));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::PodBehaviour;
    use locality_model::objects::{ObjectMeta, Workload, WorkloadKind};

    fn set(max_unavailable: Option<&str>) -> SimWorkload {
        SimWorkload {
            workload: Workload {
                replicas: Some(10),
                max_unavailable: max_unavailable.map(str::to_string),
                ..Workload::new(WorkloadKind::StatefulSet, ObjectMeta::default())
            },
            pod_behaviour: PodBehaviour::default(),
            template_annotations: Default::default(),
            template_digest: 0,
            generation: 1,
        }
    }

    #[test]
    fn max_unavailable_is_rounded_down_to_at_least_one_and_needs_the_gate() {
        assert_eq!(set_spec(&set(Some("25%")), true).max_unavailable, Some(2));
        assert_eq!(set_spec(&set(Some("5%")), true).max_unavailable, Some(1));
        assert_eq!(set_spec(&set(None), true).max_unavailable, Some(1));
        assert_eq!(set_spec(&set(Some("3")), false).max_unavailable, None);
    }
}
