//! The simulated DaemonSet controller with RollingUpdate (`maxSurge`, `maxUnavailable`).
//!
//! Mirrors `pkg/controller/daemon` `daemon_controller.go` (`podsShouldBeOnNode`: one pod per
//! node that fits, extra and misplaced pods deleted) and `update.go` `rollingUpdate`
//! (`maxSurge` 0: delete old pods up to `maxUnavailable`; otherwise surge new pods next to
//! available old ones, delete the old once the new is available). The controller keeps, per
//! DaemonSet, the state of every node (does the pod template fit it, which of its pods are
//! new, old, available) and files nodes by what the rolling update would do with them; pod
//! and Node events update only the nodes they touch, so a sync costs the nodes it acts on,
//! not every node of the cluster.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::Engine;
use crate::fasthash::FastMap;
use crate::fit::{add_daemon_tolerations, affinity_node, node_fits};
use crate::objects::{Kind, Object, ObjectKey, SimPod, SimWorkload};
use crate::workloads::{LABEL_CONTROLLER_REVISION_HASH, scaled, template_hash, with};

/// One daemon pod as the controller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DaemonPod {
    /// Labelled with the current template's hash.
    new: bool,
    /// Ready and not terminating.
    available: bool,
    terminating: bool,
    /// Bound to its node (`spec.nodeName` set).
    scheduled: bool,
}

/// What the rolling update would do with a node (upstream: the branches of `rollingUpdate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Slot {
    /// The template does not fit and no pod runs: nothing to do.
    Idle,
    /// The template does not fit but pods run: delete them.
    Misplaced,
    /// The template fits and no pod runs: create one.
    Missing,
    /// More than one new or more than one old pod: counted unavailable, left alone.
    Crowded,
    /// Only a new pod, available.
    NewAvailable,
    /// Only a new pod, not available yet.
    NewUnavailable,
    /// Only an old pod, available: a candidate for replacement.
    OldAvailable,
    /// Only an old pod, not available: replaced at once.
    OldUnavailable,
    /// A new and an old pod, the new one available: delete the old one.
    BothNewAvailable,
    /// A new and an old pod, the new one not available yet.
    BothNewUnavailable,
}

/// One node of one DaemonSet.
#[derive(Debug, Clone, Default)]
struct NodeState {
    fits: bool,
    /// The Node no longer exists: its scheduled pods are the pod GC's (upstream
    /// `getUnscheduledPodsWithoutNode` deletes only the unscheduled ones).
    gone: bool,
    pods: BTreeMap<String, DaemonPod>,
}

impl NodeState {
    fn slot(&self) -> Slot {
        let live: Vec<&DaemonPod> = self.pods.values().filter(|p| !p.terminating).collect();
        if !self.fits {
            return if live.iter().any(|p| !(self.gone && p.scheduled)) {
                Slot::Misplaced
            } else {
                Slot::Idle
            };
        }
        if live.is_empty() {
            return Slot::Missing;
        }
        let new: Vec<&&DaemonPod> = live.iter().filter(|p| p.new).collect();
        let old: Vec<&&DaemonPod> = live.iter().filter(|p| !p.new).collect();
        if new.len() > 1 || old.len() > 1 {
            return Slot::Crowded;
        }
        match (new.first(), old.first()) {
            (Some(n), None) if n.available => Slot::NewAvailable,
            (Some(_), None) => Slot::NewUnavailable,
            (None, Some(o)) if o.available => Slot::OldAvailable,
            (None, Some(_)) => Slot::OldUnavailable,
            (Some(n), Some(_)) if n.available => Slot::BothNewAvailable,
            _ => Slot::BothNewUnavailable,
        }
    }
}

/// The controller's view of one DaemonSet.
#[derive(Debug, Clone, Default)]
pub(crate) struct DaemonState {
    uid: String,
    hash: String,
    nodes: BTreeMap<String, NodeState>,
    /// The node each pod is filed under.
    pod_node: FastMap<String, String>,
    /// Nodes by slot, in name order.
    slots: BTreeMap<Slot, BTreeSet<String>>,
    filed: FastMap<String, Slot>,
}

impl DaemonState {
    fn refile(&mut self, node: &str) {
        let slot = self.nodes.get(node).map_or(Slot::Idle, NodeState::slot);
        if let Some(old) = self.filed.insert(node.to_string(), slot) {
            if old == slot {
                return;
            }
            if let Some(set) = self.slots.get_mut(&old) {
                set.remove(node);
            }
        }
        self.slots.entry(slot).or_default().insert(node.to_string());
    }

    fn count(&self, slot: Slot) -> i64 {
        self.slots.get(&slot).map_or(0, |s| s.len() as i64)
    }

    fn nodes_in(&self, slot: Slot) -> impl Iterator<Item = &String> {
        self.slots.get(&slot).into_iter().flatten()
    }

    /// The live pods on a node the template does not fit that the controller deletes: all of
    /// them, or only the unscheduled ones of a node that no longer exists.
    fn misplaced_pods(&self, node: &str) -> Vec<String> {
        self.nodes
            .get(node)
            .into_iter()
            .flat_map(|n| n.pods.iter().filter(move |(_, p)| !(n.gone && p.scheduled)))
            .filter(|(_, p)| !p.terminating)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Pods on `node` (live ones only when `live`), filtered by new-ness.
    fn pods_on(&self, node: &str, new: Option<bool>) -> Vec<String> {
        self.nodes
            .get(node)
            .into_iter()
            .flat_map(|n| &n.pods)
            .filter(|(_, p)| !p.terminating && new.is_none_or(|w| p.new == w))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Records one pod's state (or its removal).
    fn file_pod(&mut self, name: &str, pod: Option<&SimPod>) {
        if let Some(node) = self.pod_node.remove(name) {
            if let Some(n) = self.nodes.get_mut(&node) {
                n.pods.remove(name);
            }
            self.refile(&node);
        }
        let Some(p) = pod else { return };
        let node = if p.pod.spec.node_name.is_empty() {
            affinity_node(&p.pod.spec).unwrap_or_default()
        } else {
            p.pod.spec.node_name.clone()
        };
        let terminating = p.pod.meta.deletion_timestamp.is_some();
        let state = DaemonPod {
            new: p.pod.meta.labels.get(LABEL_CONTROLLER_REVISION_HASH) == Some(&self.hash),
            available: p.pod.ready && !terminating,
            terminating,
            scheduled: !p.pod.spec.node_name.is_empty(),
        };
        self.nodes
            .entry(node.clone())
            .or_default()
            .pods
            .insert(name.to_string(), state);
        self.pod_node.insert(name.to_string(), node.clone());
        self.refile(&node);
    }
}

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
        if let Some(state) = self.daemon_states.get_mut(ds) {
            state.file_pod(pod, object);
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
                state.file_pod(&p.pod.meta.name, Some(p));
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
        let stale = self
            .daemon_states
            .get(key)
            .is_none_or(|s| s.hash != hash || s.uid != ds.workload.meta.uid);
        if stale {
            let state = self.daemon_state(&ds, key, &hash);
            self.daemon_states.insert(key.clone(), state);
        }
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
