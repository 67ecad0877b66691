//! Watch events for workload status changes.
//!
//! The simulated cluster computes a workload's `status` when it is read (from its pods and
//! the simulated controllers' view), so no store event marks its change: a pod turning Ready
//! changes its DaemonSet's `numberReady` without a write to the DaemonSet. A real API server
//! sends a `MODIFIED` event for each status write of the controllers, and clients wait on
//! them: `kubectl rollout status` watches the workload until `updatedNumberScheduled` and
//! `numberAvailable` (or `updatedReplicas`, `availableReplicas`) reach the desired count.
//! [`StatusWatch`] gives a watch of workloads those events: after each batch of store events
//! it reads the status of every workload the watch sees, and sends `MODIFIED` for each whose
//! status differs from the one last sent, at the store's current resourceVersion.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use locality_sim::{EventType, Kind, Object, ObjectKey};
use serde_json::Value;

use crate::Sim;
use crate::encode::{Ctx, encode};
use crate::filter::Filter;

/// An event as a watch sends it: type, object, resourceVersion.
pub(crate) type Sent = (EventType, Arc<Object>, u64);

/// The status each workload of one watch was last sent with.
#[derive(Debug, Default)]
pub(crate) struct StatusWatch {
    kind: Option<Kind>,
    last: HashMap<ObjectKey, Value>,
    /// Send the workloads not seen yet instead of only recording them (a watch resumed from
    /// an older resourceVersion: its client's statuses are as old as that).
    send_unseen: bool,
}

/// The kinds whose status the simulated cluster computes when read.
fn computed_status(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet | Kind::StatefulSet
    )
}

impl StatusWatch {
    /// For a watch of `kind`; a no-op for kinds whose status is stored.
    pub(crate) fn new(kind: Option<Kind>) -> Self {
        StatusWatch {
            kind: kind.filter(|k| computed_status(*k)),
            last: HashMap::new(),
            send_unseen: false,
        }
    }

    /// The next pass sends every workload it has not recorded yet.
    pub(crate) fn resend_unseen(&mut self) {
        self.send_unseen = true;
    }

    /// Takes in `sent` (what the watch just sent, their statuses as of now) and returns the
    /// `MODIFIED` events of the workloads `filter` sees whose status changed otherwise. A
    /// workload seen for the first time is only recorded (the watch's first batch carries the
    /// current statuses), unless [`StatusWatch::resend_unseen`] asked for it.
    pub(crate) fn changed(&mut self, sim: &Sim, filter: &Filter, sent: &[Sent]) -> Vec<Sent> {
        let Some(kind) = self.kind else {
            return Vec::new();
        };
        let ctx = Ctx::new(&sim.engine, &sim.raw);
        let store = sim.engine.store();
        let rv = store.resource_version();
        let status = |o: &Object, rv: u64| {
            let mut v = encode(&ctx, o, rv);
            v["status"].take()
        };
        let mut fresh = HashSet::new();
        for (ty, o, at) in sent {
            let Some(key) = o.key() else { continue };
            if *ty == EventType::Deleted {
                self.last.remove(&key);
            } else {
                self.last.insert(key.clone(), status(o, *at));
            }
            fresh.insert(key);
        }
        let mut out = Vec::new();
        for (key, stored) in store.list(kind) {
            if fresh.contains(key) || !filter.matches(key, &stored.object) {
                continue;
            }
            let now = status(&stored.object, stored.resource_version);
            match self.last.get_mut(key) {
                Some(before) if *before != now => {
                    *before = now;
                    out.push((EventType::Modified, stored.object.clone(), rv));
                }
                Some(_) => {}
                None => {
                    self.last.insert(key.clone(), now);
                    if self.send_unseen {
                        out.push((EventType::Modified, stored.object.clone(), rv));
                    }
                }
            }
        }
        self.send_unseen = false;
        out
    }
}
