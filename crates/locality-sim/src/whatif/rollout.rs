//! Whether a what-if rollout is done: every pod of the rolled workload carries the new
//! template (the what-if annotation) and is Ready; for a StatefulSet, every pod the update
//! replaces (those at or above its `partition`; none under `OnDelete`).
//!
//! [`rolled_by_scan`] answers by listing every pod of the workload's namespace, which costs
//! the namespace's pods at every step of a run. [`RolloutWatch`] answers the same question
//! from the store's event log (a watch, as a controller's informer follows the API): it keeps
//! each pod of the workload with whether it is done, and reads only the events since its last
//! look; it lists again only when a ReplicaSet or the workload itself changed (the set of
//! owners changes) or the log was compacted past it (`410 Gone`).

use std::collections::{BTreeSet, HashMap};

use crate::engine::Engine;
use crate::objects::{Kind, Object, ObjectKey, SimPod};
use crate::store::EventType;

use super::WHAT_IF_ANNOTATION;

/// The workload's uid and the uids of the ReplicaSets it owns (`None`: the workload is gone).
fn owners(engine: &Engine, workload: &ObjectKey) -> Option<(String, BTreeSet<String>)> {
    let uid = engine.get(workload).map(|o| o.meta().uid.clone())?;
    let rs_uids = engine
        .store()
        .list_namespace(Kind::ReplicaSet, &workload.namespace)
        .filter(|(_, s)| s.object.meta().owner_references.iter().any(|o| o.uid == uid))
        .map(|(_, s)| s.object.meta().uid.clone())
        .collect();
    Some((uid, rs_uids))
}

/// True when a pod is owned (any owner reference) by `uid` or one of `rs_uids`.
fn owned(p: &SimPod, uid: &str, rs_uids: &BTreeSet<String>) -> bool {
    p.pod
        .meta
        .owner_references
        .iter()
        .any(|o| o.uid == uid || rs_uids.contains(&o.uid))
}

/// Ready, not being deleted, and made from the template carrying `marker`.
fn pod_done(p: &SimPod, marker: &str) -> bool {
    p.pod.ready
        && p.pod.meta.deletion_timestamp.is_none()
        && p.pod.meta.annotations.get(WHAT_IF_ANNOTATION).map(String::as_str) == Some(marker)
}

/// True when every pod of the rolled workload carries the new template (`marker`) and is
/// Ready (and there is at least one), or the workload is gone: the reference answer, by
/// listing the namespace's pods.
pub fn rolled_by_scan(engine: &Engine, workload: &ObjectKey, marker: &str) -> bool {
    // A fresh watch has just listed the pods and read no event: its answer is the scan's.
    RolloutWatch::new(engine, workload, marker).done(engine)
}

/// Follows one rollout through the store's events; [`RolloutWatch::done`] equals
/// [`rolled_by_scan`] at every instant.
#[derive(Debug, Clone)]
pub struct RolloutWatch {
    workload: ObjectKey,
    marker: String,
    /// The resourceVersion read up to.
    cursor: u64,
    /// `None`: the workload is gone.
    owners: Option<(String, BTreeSet<String>)>,
    /// The workload's pods by name: done or not.
    pods: HashMap<String, bool>,
    /// How many of them are not done.
    pending: usize,
    /// A StatefulSet's pods of ordinals below this are not replaced by its update (its
    /// `partition`; every ordinal under `OnDelete`): done as they are.
    exempt_below: u32,
}

impl RolloutWatch {
    /// The workload followed, in words (`DaemonSet monitoring/node-agent`).
    pub fn describe(&self) -> String {
        format!(
            "rollout of {} {}/{}",
            self.workload.kind.as_str(),
            self.workload.namespace,
            self.workload.name
        )
    }

    /// Starts following the rollout of `workload` to the template marked `marker`.
    pub fn new(engine: &Engine, workload: &ObjectKey, marker: &str) -> Self {
        let mut w = RolloutWatch {
            workload: workload.clone(),
            marker: marker.to_string(),
            cursor: 0,
            owners: None,
            pods: HashMap::new(),
            pending: 0,
            exempt_below: 0,
        };
        w.relist(engine);
        w
    }

    /// Lists the workload's pods again (the informer's relist).
    fn relist(&mut self, engine: &Engine) {
        self.cursor = engine.store().resource_version();
        self.owners = owners(engine, &self.workload);
        self.pods.clear();
        self.pending = 0;
        self.exempt_below = match engine.get(&self.workload).and_then(Object::as_workload) {
            Some(w) if self.workload.kind == Kind::StatefulSet => {
                if w.workload.update_strategy.as_deref() == Some("OnDelete") {
                    u32::MAX
                } else {
                    w.workload.partition.unwrap_or(0)
                }
            }
            _ => 0,
        };
        let Some((uid, rs_uids)) = &self.owners else {
            return;
        };
        for (k, s) in engine.store().list_namespace(Kind::Pod, &self.workload.namespace) {
            if let Some(p) = s.object.as_pod()
                && owned(p, uid, rs_uids)
            {
                let done = self.pod_done(p);
                self.pending += usize::from(!done);
                self.pods.insert(k.name.to_string(), done);
            }
        }
    }

    /// Whether one pod is done: made from the new template and Ready, or exempt.
    fn pod_done(&self, p: &SimPod) -> bool {
        pod_done(p, &self.marker)
            || crate::statefulsets::state::ordinal(&self.workload.name, &p.pod.meta.name)
                .is_some_and(|o| o < self.exempt_below)
    }

    /// Records a pod's new state (`None`: gone, or no longer the workload's).
    fn set(&mut self, name: &str, done: Option<bool>) {
        let old = match done {
            Some(d) => self.pods.insert(name.to_string(), d),
            None => self.pods.remove(name),
        };
        if old == Some(false) {
            self.pending -= 1;
        }
        if done == Some(false) {
            self.pending += 1;
        }
    }

    /// Reads the events since the last call; true when the rollout is done.
    pub fn done(&mut self, engine: &Engine) -> bool {
        let rv = engine.store().resource_version();
        if rv != self.cursor {
            let ns = self.workload.namespace.clone();
            let relist = match engine.store().events_since(self.cursor) {
                Err(_) => true,
                Ok(events) => events.iter().any(|e| {
                    e.key.namespace == ns && (e.key.kind == Kind::ReplicaSet || e.key == self.workload)
                }),
            };
            if relist {
                self.relist(engine);
            } else if let Ok(events) = engine.store().events_since(self.cursor) {
                for e in events {
                    if e.key.kind != Kind::Pod || e.key.namespace != ns {
                        continue;
                    }
                    let state = match (&*e.object, &self.owners) {
                        (Object::Pod(p), Some((uid, rs_uids)))
                            if e.event_type != EventType::Deleted && owned(p, uid, rs_uids) =>
                        {
                            Some(self.pod_done(p))
                        }
                        _ => None,
                    };
                    self.set(&e.key.name, state);
                }
                self.cursor = rv;
            }
        }
        self.owners.is_none() || (!self.pods.is_empty() && self.pending == 0)
    }
}
