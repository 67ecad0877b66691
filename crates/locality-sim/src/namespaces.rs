//! The namespace controller (simulated): deleting a Namespace deletes what is in it.
//!
//! As upstream's namespace lifecycle (`pkg/controller/namespace/deletion`
//! `namespacedResourcesDeleter`, and the NamespaceLifecycle admission plugin): the Namespace
//! gets a `deletionTimestamp` (phase `Terminating`, and nothing new may be created in it),
//! every object in it is deleted — Pods gracefully, through their kubelet, the rest (the stored-only
//! kinds of [`Kind::STORED`] included) at once —
//! and the Namespace itself goes once nothing is left in it.

use crate::engine::Engine;
use crate::objects::{Kind, ObjectKey};
use crate::store::StoreError;

/// The namespaced kinds the simulated store holds, deleted with their Namespace.
const NAMESPACED: [Kind; 12] = [
    Kind::Deployment,
    Kind::DaemonSet,
    Kind::StatefulSet,
    Kind::ReplicaSet,
    Kind::Service,
    Kind::EndpointSlice,
    Kind::Pod,
    Kind::ServiceAccount,
    Kind::Job,
    Kind::Role,
    Kind::RoleBinding,
    Kind::PodDisruptionBudget,
];

impl Engine {
    /// Starts deleting a Namespace and everything in it.
    pub(crate) fn delete_namespace(&mut self, key: &ObjectKey) -> Result<(), StoreError> {
        self.store.mark_deleting(key, self.now)?;
        let ns = key.name.clone();
        for kind in NAMESPACED {
            let keys: Vec<ObjectKey> = self
                .store
                .list_namespace(kind, &ns)
                .map(|(k, _)| k.clone())
                .collect();
            for k in keys {
                if kind == Kind::Pod {
                    let _ = self.store.mark_deleting(&k, self.now);
                } else {
                    let _ = self.store.remove(&k, self.now);
                }
            }
        }
        self.finish_namespaces();
        Ok(())
    }

    /// Removes every terminating Namespace that holds nothing any more.
    pub(crate) fn finish_namespaces(&mut self) {
        let done: Vec<ObjectKey> = self
            .store
            .list(Kind::Namespace)
            .filter(|(_, s)| s.deletion.is_some())
            .filter(|(k, _)| {
                NAMESPACED
                    .iter()
                    .all(|kind| self.store.list_namespace(*kind, &k.name).next().is_none())
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in done {
            let _ = self.store.remove(&k, self.now);
        }
    }
}
