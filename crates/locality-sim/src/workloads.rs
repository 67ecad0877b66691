//! The simulated Deployment and ReplicaSet controllers (k8s.io/kubernetes
//! `pkg/controller/deployment` `rolloutRolling` / `rolloutRecreate`, `pkg/controller/replicaset`
//! `manageReplicas`), and pods made from a template with generated names (the template hash
//! and the revision labels are in `crate::templates`).

use std::cell::Cell;
use std::sync::Arc;

use locality_model::objects::{
    NodeSelectorTerm, ObjectMeta, OwnerReference, Pod, PodPhase, PodSpec, SelectorRequirement, WorkloadKind,
};

use crate::availability::{Availability, pod_ready};
use crate::engine::Engine;
use crate::objects::{Kind, Object, ObjectKey, SimPod, SimWorkload};
use crate::tasks::Task;
use crate::templates::{LABEL_POD_TEMPLATE_HASH, scaled, template_hash, with};
use crate::time::Millis;

/// Most pods one sync of a ReplicaSet creates or deletes: 500, kube-controller-manager's
/// `pkg/controller/replicaset` `BurstReplicas` (`manageReplicas` caps the diff at it; the
/// rest waits for the next sync).
pub(crate) const BURST_REPLICAS: i64 = 500;

/// Virtual time one API request of kube-controller-manager takes from its client's rate
/// limit: 50 ms, its `--kube-api-qps` default of 20. A ReplicaSet that made a full burst
/// syncs again once the burst is sent (500 × 50 ms = 25 s), so a million replicas are made
/// at the rate a real controller makes them, not at once.
pub(crate) const CLIENT_REQUEST_MS: Millis = 50;

impl Engine {
    // ----- Deployment -----

    /// One sync of a Deployment; looks again when the next Ready pod of its ReplicaSets
    /// becomes available (upstream: the ReplicaSet controller re-queues a ReplicaSet after
    /// `minReadySeconds`, its status update wakes the Deployment).
    pub(crate) fn sync_deployment(&mut self, key: &ObjectKey) {
        if self.store.get(key).is_none() {
            self.deployment_wakes.remove(key);
            return;
        }
        let next = Cell::new(None);
        self.roll_deployment(key, &next);
        if let Some(at) = next.get()
            && self.deployment_wakes.get(key) != Some(&at)
        {
            self.deployment_wakes.insert(key.clone(), at);
            self.schedule(at, Task::SyncDeployment(key.clone()));
        }
    }

    /// True once the simulated controllers have read every change up to `resource_version`
    /// (a workload's `status.observedGeneration` is its generation from then on).
    pub fn controllers_have_read(&self, resource_version: u64) -> bool {
        self.controller_cursor >= resource_version
    }

    /// When the simulated controllers first saw the pod at `key` Ready (its Ready condition's
    /// `lastTransitionTime` as they read it); `None` while it is not Ready or not yet seen.
    pub fn pod_ready_since(&self, key: &ObjectKey) -> Option<Millis> {
        self.ready_since.available_at(key, 0)
    }

    /// Pods of `w` available at `now` with `minReadySeconds` of `min_ready_ms`
    /// (`podutil.IsPodAvailable`, as the ReplicaSet controller counts `availableReplicas`).
    fn available_pods(&self, w: &SimWorkload, min_ready_ms: u64) -> Availability {
        let mut a = Availability::default();
        for o in self.owned_pods(&w.workload.meta.namespace, &w.workload.meta.uid) {
            let Some(p) = o.as_pod() else { continue };
            if !pod_ready(p) {
                continue;
            }
            let k = ObjectKey::new(Kind::Pod, &p.pod.meta.namespace, p.pod.meta.name.as_str());
            a.count(self.ready_since.available_at(&k, min_ready_ms), self.now);
        }
        a
    }

    /// `rolloutRolling` / `rolloutRecreate` (`pkg/controller/deployment/rolling.go`,
    /// `recreate.go`), counting available pods as `IsPodAvailable` does with the Deployment's
    /// `minReadySeconds` (`reconcileOldReplicaSets`, `cleanupUnhealthyReplicas`,
    /// `scaleDownOldReplicaSetsForRollingUpdate` read `AvailableReplicas`); `next` gets the
    /// earliest instant a Ready pod becomes available.
    fn roll_deployment(&mut self, key: &ObjectKey, next: &Cell<Option<Millis>>) {
        let Some(s) = self.store.get(key) else { return };
        let Some(dep) = s.object.as_workload().cloned() else {
            return;
        };
        if dep.workload.meta.deletion_timestamp.is_some() {
            return;
        }
        let replicas = i64::from(dep.workload.replicas.unwrap_or(1));
        let hash = template_hash(&dep);
        let uid = dep.workload.meta.uid.clone();
        let rses: Vec<SimWorkload> = self
            .store
            .list_namespace(Kind::ReplicaSet, &key.namespace)
            .filter_map(|(_, s)| s.object.as_workload().cloned())
            .filter(|w| {
                w.workload
                    .meta
                    .owner_references
                    .iter()
                    .any(|o| o.controller && o.uid == uid)
            })
            .collect();
        let new_name = format!("{}-{hash}", key.name);
        let mut new = rses.iter().find(|w| w.workload.meta.name == new_name).cloned();
        let mut olds: Vec<SimWorkload> = rses
            .iter()
            .filter(|w| w.workload.meta.name != new_name)
            .cloned()
            .collect();
        olds.sort_by(|a, b| {
            a.workload
                .meta
                .creation_timestamp
                .cmp(&b.workload.meta.creation_timestamp)
        });
        if new.is_none() {
            let mut w = dep.clone();
            w.workload.kind = WorkloadKind::ReplicaSet;
            w.workload.meta = ObjectMeta {
                name: new_name.clone(),
                namespace: key.namespace.to_string(),
                labels: with(&dep.workload.template_labels, LABEL_POD_TEMPLATE_HASH, &hash),
                owner_references: vec![owner_ref("Deployment", &dep.workload.meta)],
                ..ObjectMeta::default()
            };
            w.workload.template_labels = with(&dep.workload.template_labels, LABEL_POD_TEMPLATE_HASH, &hash);
            w.workload
                .selector
                .match_labels
                .insert(LABEL_POD_TEMPLATE_HASH.into(), hash.clone());
            w.workload.replicas = Some(0);
            w.workload.max_surge = None;
            w.workload.max_unavailable = None;
            w.workload.update_strategy = None;
            if self.create(Object::Workload(w.clone())).is_err() {
                return;
            }
            new = Some(w);
        }
        let Some(mut new) = new else { return };
        let min_ready_ms = u64::from(dep.workload.min_ready_seconds) * 1000;
        let available = |e: &Engine, w: &SimWorkload| -> i64 {
            let a = e.available_pods(w, min_ready_ms);
            if let Some(t) = a.next {
                next.set(Some(next.get().map_or(t, |n: Millis| n.min(t))));
            }
            i64::from(a.available)
        };
        let spec = |w: &SimWorkload| i64::from(w.workload.replicas.unwrap_or(0));
        let set = |e: &mut Engine, w: &mut SimWorkload, n: i64| {
            w.workload.replicas = Some(n.max(0) as u32);
            let _ = e.update(Object::Workload(w.clone()), None);
        };

        if dep.workload.update_strategy.as_deref() == Some("Recreate") {
            let mut any_old = false;
            for old in &mut olds {
                if spec(old) > 0 {
                    set(self, old, 0);
                }
                any_old |= !self.owned_pods(&key.namespace, &old.workload.meta.uid).is_empty();
            }
            if !any_old && spec(&new) != replicas {
                set(self, &mut new, replicas);
            }
            return;
        }

        let surge = scaled(dep.workload.max_surge.as_deref().unwrap_or("25%"), replicas, true);
        let mut unavailable = scaled(
            dep.workload.max_unavailable.as_deref().unwrap_or("25%"),
            replicas,
            false,
        );
        if surge == 0 && unavailable == 0 {
            unavailable = 1;
        }
        if olds.iter().all(|o| spec(o) == 0) {
            if spec(&new) != replicas {
                set(self, &mut new, replicas);
            }
            return;
        }
        // reconcileNewReplicaSet
        let all: i64 = olds.iter().map(spec).sum::<i64>() + spec(&new);
        let max_total = replicas + surge;
        if spec(&new) < replicas && all < max_total {
            let up = (max_total - all).min(replicas - spec(&new));
            let n = spec(&new) + up;
            set(self, &mut new, n);
            return;
        }
        // reconcileOldReplicaSets
        let min_available = replicas - unavailable;
        let new_unavailable = spec(&new) - available(self, &new);
        let mut max_down = all - min_available - new_unavailable;
        if max_down <= 0 {
            return;
        }
        // cleanupUnhealthyReplicas
        for old in &mut olds {
            if max_down <= 0 {
                break;
            }
            let unhealthy = spec(old) - available(self, old);
            let down = unhealthy.min(max_down).max(0);
            if down > 0 {
                let n = spec(old) - down;
                set(self, old, n);
                max_down -= down;
            }
        }
        // scaleDownOldReplicaSetsForRollingUpdate
        let total_available: i64 =
            olds.iter().map(|o| available(self, o)).sum::<i64>() + available(self, &new);
        if total_available <= min_available {
            return;
        }
        let mut remaining = total_available - min_available;
        for old in &mut olds {
            if remaining <= 0 {
                break;
            }
            let down = spec(old).min(remaining);
            if down > 0 {
                let n = spec(old) - down;
                set(self, old, n);
                remaining -= down;
            }
        }
    }

    /// Pods whose controller owner has `uid`.
    pub(crate) fn owned_pods(&self, namespace: &str, uid: &str) -> Vec<Arc<Object>> {
        self.store
            .list_namespace(Kind::Pod, namespace)
            .filter(|(_, s)| {
                s.object.as_pod().is_some_and(|p| {
                    p.pod
                        .meta
                        .owner_references
                        .iter()
                        .any(|o| o.controller && o.uid == uid)
                })
            })
            .map(|(_, s)| s.object.clone())
            .collect()
    }

    /// Active pods (neither deleting nor finished) whose controller owner has `uid`.
    fn active_owned_pods(&self, namespace: &str, uid: &str) -> Vec<Arc<Object>> {
        let mut owned = self.owned_pods(namespace, uid);
        owned.retain(|o| o.as_pod().is_some_and(crate::owners::pod_active));
        owned
    }

    // ----- ReplicaSet -----

    pub(crate) fn sync_replica_set(&mut self, key: &ObjectKey) {
        let Some(s) = self.store.get(key) else {
            self.replica_set_wakes.remove(key);
            return;
        };
        let Some(rs) = s.object.as_workload().cloned() else {
            return;
        };
        // A ReplicaSet being deleted manages no pods (`pkg/controller/replicaset`
        // `syncReplicaSet`: `manageReplicas` only when `DeletionTimestamp == nil`).
        if rs.workload.meta.deletion_timestamp.is_some() {
            return;
        }
        let want = i64::from(rs.workload.replicas.unwrap_or(1));
        // The active pods are counted from the owner index; listed only to scale down.
        self.owners.catch_up(&self.store);
        let uid = &rs.workload.meta.uid;
        let count = match self.owners.active(&self.store, &key.namespace, uid) {
            Some(n) => n,
            None => self.active_owned_pods(&key.namespace, uid).len(),
        };
        debug_assert_eq!(count, self.active_owned_pods(&key.namespace, uid).len());
        let mut diff = want - count as i64;
        if diff != 0 {
            // The last burst is still being sent by the controller's API client: the sync
            // scheduled for its end makes the next.
            if self.replica_set_wakes.get(key).is_some_and(|&at| self.now < at) {
                return;
            }
            self.replica_set_wakes.remove(key);
        }
        if diff.abs() > BURST_REPLICAS {
            diff = diff.signum() * BURST_REPLICAS;
            let at = self.now + BURST_REPLICAS as u64 * CLIENT_REQUEST_MS;
            self.replica_set_wakes.insert(key.clone(), at);
            self.schedule(at, Task::SyncReplicaSet(key.clone()));
        }
        if diff > 0 {
            for _ in 0..diff {
                let name = self.generate_name(&key.namespace, &key.name);
                let pod = self.pod_from_template(&rs, name, None);
                let _ = self.create(Object::Pod(pod));
            }
        } else if diff < 0 {
            let owned = self.owned_pods(&key.namespace, &rs.workload.meta.uid);
            let mut active: Vec<&SimPod> = owned
                .iter()
                .filter_map(|o| o.as_pod())
                .filter(|p| crate::owners::pod_active(p))
                .collect();
            // Delete unscheduled, then not ready, then the newest first.
            active.sort_by(|a, b| {
                let rank = |p: &&SimPod| (!p.pod.spec.node_name.is_empty(), p.pod.ready);
                rank(a)
                    .cmp(&rank(b))
                    .then_with(|| b.pod.meta.creation_timestamp.cmp(&a.pod.meta.creation_timestamp))
                    .then_with(|| b.pod.meta.name.cmp(&a.pod.meta.name))
            });
            for p in active.iter().take((-diff) as usize) {
                let _ = self.delete(&ObjectKey::new(Kind::Pod, &key.namespace, &p.pod.meta.name));
            }
        }
    }

    /// A pod name `PREFIX-xxxxx` free in `namespace`, as the API server's `generateName`
    /// (`names.SimpleNameGenerator`) with the retry its clients do on a conflict: pods read
    /// from a dump may already hold a name the seeded generator draws.
    pub(crate) fn generate_name(&mut self, namespace: &str, prefix: &str) -> String {
        loop {
            let name = format!("{prefix}-{}", self.rng.suffix(5));
            if self
                .store
                .get(&ObjectKey::new(Kind::Pod, namespace, name.as_str()))
                .is_none()
            {
                return name;
            }
        }
    }

    pub(crate) fn pod_from_template(&self, w: &SimWorkload, name: String, node: Option<&str>) -> SimPod {
        let mut spec: PodSpec = w.workload.template.clone();
        spec.node_name = String::new();
        if let Some(node) = node {
            set_node_name_affinity(&mut spec, node);
        }
        let kind = w.workload.kind.as_str();
        SimPod {
            pod: Pod {
                meta: ObjectMeta {
                    name,
                    namespace: w.workload.meta.namespace.clone(),
                    labels: w.workload.template_labels.clone(),
                    annotations: w.template_annotations.clone(),
                    owner_references: vec![owner_ref(kind, &w.workload.meta)],
                    ..ObjectMeta::default()
                },
                spec,
                phase: PodPhase::Pending,
                ready: false,
                pod_ips: Vec::new(),
            },
            behaviour: w.pod_behaviour.clone(),
            restart_count: 0,
        }
    }
}

fn owner_ref(kind: &str, meta: &ObjectMeta) -> OwnerReference {
    OwnerReference {
        kind: kind.to_string(),
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        controller: true,
    }
}

/// Replaces the `metadata.name` field requirement of the required node affinity, as the
/// DaemonSet controller does (`ReplaceDaemonSetPodNodeNameNodeAffinity`).
fn set_node_name_affinity(spec: &mut PodSpec, node: &str) {
    let req = SelectorRequirement {
        key: "metadata.name".into(),
        operator: "In".into(),
        values: vec![node.to_string()],
    };
    if spec.required_node_affinity.is_empty() {
        spec.required_node_affinity.push(NodeSelectorTerm::default());
    }
    for term in &mut spec.required_node_affinity {
        term.match_fields = vec![req.clone()];
    }
}
