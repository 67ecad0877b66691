//! Foreground cascading deletion (simulated garbage collector).
//!
//! As upstream's garbage collector (k8s.io/kubernetes `pkg/controller/garbagecollector`
//! `attemptToDeleteItem` and `processDeletingDependentsItem`) for `propagationPolicy:
//! Foreground`: the owner gets a `deletionTimestamp` (and, as served, the
//! `foregroundDeletion` finalizer) and stays while its dependents are deleted, themselves in
//! the foreground (a Deployment's ReplicaSets wait for their pods, which terminate gracefully
//! through their kubelet); an owner whose last dependent is gone is removed. Background
//! deletion (the owner removed at once, its dependents after it) is [`Engine::garbage_collect`]
//! below, run by every pass of the controllers (`crate::controllers`).

use std::collections::BTreeSet;

use crate::engine::{Engine, SimError};
use crate::objects::{Kind, ObjectKey};
use crate::store::StoreError;

/// The kinds that wait for their dependents in a foreground deletion (the workloads); other
/// kinds are deleted as by [`Engine::delete_with`].
const FOREGROUND: [Kind; 4] = [
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::DaemonSet,
    Kind::StatefulSet,
];

/// The kinds that can be dependents of a workload.
const DEPENDENTS: [Kind; 2] = [Kind::ReplicaSet, Kind::Pod];

impl Engine {
    /// Deletes a workload in the foreground (`propagationPolicy: Foreground`): it is marked
    /// deleting and removed once its dependents are gone. Any other kind is deleted as by
    /// [`Engine::delete_with`] with `grace_period_seconds`.
    ///
    /// # Errors
    /// The object does not exist.
    pub fn delete_foreground(
        &mut self,
        key: &ObjectKey,
        grace_period_seconds: Option<u64>,
    ) -> Result<(), SimError> {
        if !FOREGROUND.contains(&key.kind) {
            return self.delete_with(key, grace_period_seconds);
        }
        let uid = self
            .store
            .get(key)
            .map(|s| s.uid.clone())
            .ok_or_else(|| StoreError::NotFound(key.clone()))?;
        self.store.mark_deleting(key, self.now)?;
        self.delete_dependents_foreground(&uid);
        self.finish_foreground();
        self.kick();
        Ok(())
    }

    /// The objects with an owner reference to `uid`.
    fn dependents_of(&self, uid: &str) -> Vec<ObjectKey> {
        DEPENDENTS
            .iter()
            .flat_map(|kind| self.store.list(*kind))
            .filter(|(_, s)| s.object.meta().owner_references.iter().any(|o| o.uid == uid))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Deletes the dependents of `uid` in the foreground, recursively.
    fn delete_dependents_foreground(&mut self, uid: &str) {
        let mut pending = vec![uid.to_string()];
        while let Some(owner) = pending.pop() {
            for dep in self.dependents_of(&owner) {
                let Some(stored) = self.store.get(&dep) else {
                    continue;
                };
                if stored.deletion.is_some() {
                    continue;
                }
                let dep_uid = stored.uid.clone();
                if FOREGROUND.contains(&dep.kind) {
                    let _ = self.store.mark_deleting(&dep, self.now);
                    pending.push(dep_uid);
                } else {
                    // Pods terminate gracefully through their kubelet.
                    let _ = self.delete_with(&dep, None);
                }
            }
        }
    }

    /// Removes every workload deleted in the foreground whose dependents are all gone.
    pub(crate) fn finish_foreground(&mut self) {
        loop {
            let done: Vec<ObjectKey> = FOREGROUND
                .iter()
                .flat_map(|kind| self.store.list(*kind))
                .filter(|(_, s)| s.deletion.is_some())
                .filter(|(_, s)| self.dependents_of(&s.uid).is_empty())
                .map(|(k, _)| k.clone())
                .collect();
            if done.is_empty() {
                return;
            }
            for k in done {
                let _ = self.store.remove(&k, self.now);
            }
        }
    }
}

impl Engine {
    /// Deletes objects whose controller owner was deleted (foreground GC is not simulated).
    pub(crate) fn garbage_collect(&mut self, deleted: &[String]) {
        if deleted.is_empty() {
            return;
        }
        let gone: BTreeSet<&str> = deleted.iter().map(String::as_str).collect();
        let mut victims = Vec::new();
        for kind in [Kind::ReplicaSet, Kind::Pod, Kind::EndpointSlice] {
            for (k, s) in self.store.list(kind) {
                if s.object
                    .meta()
                    .owner_references
                    .iter()
                    .any(|o| gone.contains(o.uid.as_str()))
                {
                    victims.push(k.clone());
                }
            }
        }
        for k in victims {
            let _ = self.delete(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::builders;
    use crate::objects::{Kind, ObjectKey};
    use crate::{Engine, SimConfig, Topology};
    use locality_model::objects::{PodSpec, WorkloadKind};

    #[test]
    fn a_foreground_deployment_waits_for_its_replicasets_and_pods() {
        let topology = Topology::builtin("three-zones").expect("topology");
        let mut e = Engine::from_topology(&topology, SimConfig::default()).expect("engine");
        let dep = builders::workload(
            WorkloadKind::Deployment,
            "default",
            "web",
            builders::labels(&[("app", "web")]),
            PodSpec::default(),
            Some(2),
            builders::netexec_behaviour(8080),
        );
        e.create(dep).expect("create");
        e.run_for(10_000);
        let key = ObjectKey::new(Kind::Deployment, "default", "web");
        let uid = e.store().get(&key).expect("stored").uid.clone();
        let rs: Vec<ObjectKey> = e
            .store()
            .list(Kind::ReplicaSet)
            .filter(|(_, s)| s.object.meta().owner_references.iter().any(|o| o.uid == uid))
            .map(|(k, _)| k.clone())
            .collect();
        assert!(!rs.is_empty());
        let pods = e
            .store()
            .list(Kind::Pod)
            .filter(|(k, _)| k.name.starts_with("web-"))
            .count();
        assert!(pods >= 2, "{pods} pods");
        e.delete_foreground(&key, None).expect("delete");
        // Right after: the Deployment and its ReplicaSets are still there, marked deleting.
        assert!(e.store().get(&key).is_some_and(|s| s.deletion.is_some()));
        assert!(
            rs.iter()
                .all(|k| e.store().get(k).is_some_and(|s| s.deletion.is_some()))
        );
        e.run_for(120_000);
        assert!(e.store().get(&key).is_none());
        assert!(rs.iter().all(|k| e.store().get(k).is_none()));
    }
}
