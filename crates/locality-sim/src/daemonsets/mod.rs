//! The simulated DaemonSet controller with RollingUpdate (`maxSurge`, `maxUnavailable`).
//!
//! Mirrors `pkg/controller/daemon` `daemon_controller.go` (`podsShouldBeOnNode`: one pod per
//! node that fits, extra and misplaced pods deleted) and `update.go` `rollingUpdate`
//! (`maxSurge` 0: delete old pods up to `maxUnavailable`; otherwise surge new pods next to
//! available old ones, delete the old once the new is available). Available is
//! `podutil.IsPodAvailable(pod, ds.Spec.MinReadySeconds, now)`: Ready for `minReadySeconds`
//! (`crate::availability`); the DaemonSet is synced again when a Ready pod becomes available
//! (upstream `updateDaemonSetStatus` re-queues it after `minReadySeconds`). The controller keeps, per
//! DaemonSet, the state of every node (does the pod template fit it, which of its pods are
//! new, old, available) and files nodes by what the rolling update would do with them; pod
//! and Node events update only the nodes they touch, so a sync costs the nodes it acts on,
//! not every node of the cluster.

pub(crate) mod state;

use self::state::{DaemonState, Slot};
use crate::engine::Engine;
use crate::fit::{add_daemon_tolerations, node_fits};
use crate::objects::{Kind, Object, ObjectKey, SimPod, SimWorkload};
use crate::tasks::Task;
use crate::templates::{LABEL_CONTROLLER_REVISION_HASH, scaled, template_hash, with};

/// The template a DaemonSet's pods are made from: its own, with the revision hash label
/// and the controller's tolerations.
fn daemon_template(ds: &SimWorkload, hash: &str) -> SimWorkload {
    let mut template = ds.clone();
    template.workload.template_labels =
        with(&ds.workload.template_labels, LABEL_CONTROLLER_REVISION_HASH, hash);
    add_daemon_tolerations(&mut template.workload.template);
    template
}

impl Engine {
    /// Applies a pod event to the state of the DaemonSet that owns it, if it has one.
    pub(crate) fn daemon_pod_event(&mut self, ds: &ObjectKey, pod: &str, object: Option<&SimPod>) {
        let now = self.now;
        if let Some(state) = self.daemon_states.get_mut(ds) {
            let at = self
                .ready_since
                .available_at(&ObjectKey::new(Kind::Pod, &ds.namespace, pod), state.min_ready_ms);
            state.file_pod(pod, object, at, now);
        }
    }

    /// Re-evaluates whether each DaemonSet's template fits a changed (or deleted) Node.
    pub(crate) fn daemon_node_event(&mut self, node: &str) {
        let keys: Vec<ObjectKey> = self.daemon_states.keys().cloned().collect();
        for key in keys {
            let Some(ds) = self.store.get(&key).and_then(|s| s.object.as_workload()).cloned() else {
                self.daemon_states.remove(&key);
                continue;
            };
            let object = self
                .store
                .get(&ObjectKey::new(Kind::Node, "", node))
                .and_then(|s| s.object.as_node().cloned());
            let Some(state) = self.daemon_states.get_mut(&key) else {
                continue;
            };
            let template = daemon_template(&ds, &state.hash);
            match object {
                Some(n) => {
                    let entry = state.nodes.entry(node.to_string()).or_default();
                    entry.fits = node_fits(&template.workload.template, &n, true).is_ok();
                    entry.gone = false;
                }
                None => {
                    if let Some(n) = state.nodes.get_mut(node) {
                        n.fits = false;
                        n.gone = true;
                    }
                }
            }
            state.refile(node);
        }
    }

    /// The state of a DaemonSet built from the store (first sync, or a new template).
    fn daemon_state(&self, ds: &SimWorkload, key: &ObjectKey, hash: &str) -> DaemonState {
        let template = daemon_template(ds, hash);
        let mut state = DaemonState {
            uid: ds.workload.meta.uid.clone(),
            hash: hash.to_string(),
            min_ready_ms: u64::from(ds.workload.min_ready_seconds) * 1000,
            ..DaemonState::default()
        };
        for (_, s) in self.store.list(Kind::Node) {
            if let Some(n) = s.object.as_node() {
                let fits = node_fits(&template.workload.template, n, true).is_ok();
                state.nodes.entry(n.meta.name.clone()).or_default().fits = fits;
            }
        }
        for o in self.owned_pods(&key.namespace, &ds.workload.meta.uid) {
            if let Some(p) = o.as_pod() {
                let at = self.ready_since.available_at(
                    &ObjectKey::new(Kind::Pod, &key.namespace, p.pod.meta.name.as_str()),
                    state.min_ready_ms,
                );
                state.file_pod(&p.pod.meta.name, Some(p), at, self.now);
            }
        }
        let names: Vec<String> = state.nodes.keys().cloned().collect();
        for n in names {
            let gone = self
                .store
                .get(&ObjectKey::new(Kind::Node, "", n.as_str()))
                .is_none();
            if let Some(s) = state.nodes.get_mut(&n) {
                s.gone = gone;
            }
            state.refile(&n);
        }
        state
    }

    /// Files again the Ready pods of a DaemonSet whose `minReadySeconds` are over.
    fn daemon_pods_matured(&mut self, key: &ObjectKey) {
        let now = self.now;
        let Some(state) = self.daemon_states.get(key) else {
            return;
        };
        let matured: Vec<String> = state
            .maturing
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(name, _)| name.clone())
            .collect();
        for name in matured {
            let pod_key = ObjectKey::new(Kind::Pod, &key.namespace, name.as_str());
            let object = self.store.get(&pod_key).map(|s| s.object.clone());
            let at = self
                .ready_since
                .available_at(&pod_key, self.daemon_states[key].min_ready_ms);
            if let Some(state) = self.daemon_states.get_mut(key) {
                state.file_pod(&name, object.as_deref().and_then(Object::as_pod), at, now);
            }
        }
    }

    /// One sync of a DaemonSet: create missing pods, delete misplaced ones, roll the update.
    pub(crate) fn sync_daemon_set(&mut self, key: &ObjectKey) {
        let Some(ds) = self.store.get(key).and_then(|s| s.object.as_workload()).cloned() else {
            self.daemon_states.remove(key);
            return;
        };
        if ds.workload.meta.deletion_timestamp.is_some() {
            return;
        }
        let hash = template_hash(&ds);
        let min_ready_ms = u64::from(ds.workload.min_ready_seconds) * 1000;
        let stale = self.daemon_states.get(key).is_none_or(|s| {
            s.hash != hash || s.uid != ds.workload.meta.uid || s.min_ready_ms != min_ready_ms
        });
        if stale {
            let state = self.daemon_state(&ds, key, &hash);
            self.daemon_states.insert(key.clone(), state);
        }
        self.daemon_pods_matured(key);
        let state = &self.daemon_states[key];
        let desired = state.nodes.values().filter(|n| n.fits).count() as i64;
        let mut to_create: Vec<String> = state.nodes_in(Slot::Missing).cloned().collect();
        let mut to_delete: Vec<String> = state
            .nodes_in(Slot::Misplaced)
            .flat_map(|n| state.misplaced_pods(n))
            .collect();
        if ds.workload.update_strategy.as_deref() != Some("OnDelete") {
            let surge = scaled(ds.workload.max_surge.as_deref().unwrap_or("0"), desired, true);
            let mut max_unavailable = scaled(
                ds.workload.max_unavailable.as_deref().unwrap_or("1"),
                desired,
                true,
            );
            if surge == 0 && max_unavailable == 0 {
                max_unavailable = 1;
            }
            if surge == 0 {
                // Old pods that are not available go at once; available ones while the
                // number unavailable stays below maxUnavailable, in node order.
                let unavailable = to_create.len() as i64
                    + [
                        Slot::Crowded,
                        Slot::BothNewAvailable,
                        Slot::BothNewUnavailable,
                        Slot::NewUnavailable,
                    ]
                    .into_iter()
                    .map(|s| state.count(s))
                    .sum::<i64>();
                to_delete.extend(
                    state
                        .nodes_in(Slot::OldUnavailable)
                        .flat_map(|n| state.pods_on(n, Some(false))),
                );
                let room = (max_unavailable - unavailable).max(0) as usize;
                to_delete.extend(
                    state
                        .nodes_in(Slot::OldAvailable)
                        .take(room)
                        .flat_map(|n| state.pods_on(n, Some(false))),
                );
            } else {
                // Surge a new pod next to old ones (at once where the old one is not
                // available, else up to maxSurge), delete the old once the new is available.
                let surging = state.count(Slot::OldUnavailable) + state.count(Slot::BothNewUnavailable);
                to_create.extend(state.nodes_in(Slot::OldUnavailable).cloned());
                let room = (surge - surging).max(0) as usize;
                to_create.extend(state.nodes_in(Slot::OldAvailable).take(room).cloned());
                to_delete.extend(
                    state
                        .nodes_in(Slot::BothNewAvailable)
                        .flat_map(|n| state.pods_on(n, Some(false))),
                );
            }
        }
        // Look again when the next Ready pod becomes available.
        let next = state.maturing.values().min().copied();
        if next.is_some() && next != state.wake {
            if let Some(s) = self.daemon_states.get_mut(key) {
                s.wake = next;
            }
            if let Some(at) = next {
                self.schedule(at, Task::SyncDaemonSet(key.clone()));
            }
        }
        let template = daemon_template(&ds, &hash);
        for node in to_create {
            let name = self.generate_name(&key.namespace, &key.name);
            let pod = self.pod_from_template(&template, name, Some(&node));
            let _ = self.create(Object::Pod(pod));
        }
        for name in to_delete {
            let _ = self.delete(&ObjectKey::new(Kind::Pod, &key.namespace, name));
        }
    }
}
