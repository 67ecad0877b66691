//! How many active pods each controller owner has (the ReplicaSet controller's
//! `FilterActivePods` over the pods it controls), counted from the store's pod events rather
//! than by listing the namespace's pods at every sync: a ReplicaSet of 100,000 pods whose pods
//! change at every pass of the controllers would otherwise cost 100,000 pods a pass.
//!
//! The index is fed by the store's events up to its cursor; [`OwnerIndex::active`] adds the
//! pods of the events since then, read from the store as they are now, so its answer is
//! always the current one, equal to counting the listed pods
//! (`crate::workloads`' `owned_pods`).

use locality_model::objects::PodPhase;

use crate::fasthash::{FastMap, FastSet};
use crate::objects::{Kind, Object, ObjectKey, SimPod};
use crate::store::{EventType, Store};

/// Neither being deleted nor finished (upstream `controller.IsPodActive`, with deletion as
/// the ReplicaSet controller's filter adds it).
pub(crate) fn pod_active(p: &SimPod) -> bool {
    p.pod.meta.deletion_timestamp.is_none() && !matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed)
}

/// A pod as the index files it: its controller owners' uids (each once), and whether it is
/// active.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Filing {
    owners: Vec<String>,
    active: bool,
}

fn filing(object: &Object) -> Option<Filing> {
    let p = object.as_pod()?;
    let mut owners: Vec<String> = p
        .pod
        .meta
        .owner_references
        .iter()
        .filter(|o| o.controller)
        .map(|o| o.uid.clone())
        .collect();
    owners.sort();
    owners.dedup();
    Some(Filing {
        owners,
        active: pod_active(p),
    })
}

/// Active pods per (namespace, controller owner uid).
#[derive(Debug, Clone, Default)]
pub(crate) struct OwnerIndex {
    /// Store events up to this resourceVersion are in the index.
    pub cursor: u64,
    filed: FastMap<ObjectKey, Filing>,
    active: FastMap<(String, String), usize>,
}

impl OwnerIndex {
    /// Room for about `objects` more objects.
    pub(crate) fn reserve(&mut self, objects: usize) {
        self.filed.reserve(objects);
    }

    fn count(&mut self, key: &ObjectKey, f: &Filing, add: bool) {
        if !f.active {
            return;
        }
        for uid in &f.owners {
            let n = self
                .active
                .entry((key.namespace.to_string(), uid.clone()))
                .or_default();
            if add {
                *n += 1;
            } else {
                *n = n.saturating_sub(1);
            }
        }
    }

    fn file(&mut self, key: &ObjectKey, now: Option<Filing>) {
        if let Some(old) = self.filed.remove(key) {
            self.count(key, &old, false);
        }
        if let Some(f) = now {
            self.count(key, &f, true);
            self.filed.insert(key.clone(), f);
        }
    }

    /// Reads the store's pod events since the cursor (everything again when the log no
    /// longer reaches back).
    pub(crate) fn catch_up(&mut self, store: &Store) {
        let rv = store.resource_version();
        if rv <= self.cursor {
            return;
        }
        match store.events_since(self.cursor) {
            Ok(events) => {
                for ev in events.iter().filter(|e| e.key.kind == Kind::Pod) {
                    let now = if ev.event_type == EventType::Deleted {
                        None
                    } else {
                        filing(&ev.object)
                    };
                    self.file(&ev.key, now);
                }
            }
            Err(_) => {
                self.filed.clear();
                self.active.clear();
                for (k, s) in store.list(Kind::Pod) {
                    let f = filing(&s.object);
                    self.file(k, f);
                }
            }
        }
        self.cursor = rv;
    }

    /// The active pods in `namespace` whose controller owner has `uid`, now: the index, with
    /// the pods written since its cursor read from the store. `None` when the log no longer
    /// reaches back to the cursor (list the pods instead).
    pub(crate) fn active(&self, store: &Store, namespace: &str, uid: &str) -> Option<usize> {
        let mut n = self
            .active
            .get(&(namespace.to_string(), uid.to_string()))
            .copied()
            .unwrap_or(0) as i64;
        let events = store.events_since(self.cursor).ok()?;
        let mut seen: FastSet<&ObjectKey> = FastSet::default();
        let counts = |f: &Filing| f.active && f.owners.iter().any(|o| o == uid);
        for ev in events {
            if ev.key.kind != Kind::Pod || ev.key.namespace != namespace || !seen.insert(&ev.key) {
                continue;
            }
            if self.filed.get(&ev.key).is_some_and(counts) {
                n -= 1;
            }
            if store
                .get(&ev.key)
                .and_then(|s| filing(&s.object))
                .is_some_and(|f| counts(&f))
            {
                n += 1;
            }
        }
        Some(n.max(0) as usize)
    }
}
