//! The simulated DaemonSet controller's view of one DaemonSet: per node, whether the template
//! fits and the state of each of its pods, and the nodes filed by what the rolling update
//! would do with them (upstream `pkg/controller/daemon/update.go` `rollingUpdate`'s branches).

use std::collections::{BTreeMap, BTreeSet};

use crate::fasthash::FastMap;
use crate::fit::affinity_node;
use crate::objects::SimPod;
use crate::templates::LABEL_CONTROLLER_REVISION_HASH;
use crate::time::Millis;

/// One daemon pod as the controller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DaemonPod {
    /// Labelled with the current template's hash.
    pub(super) new: bool,
    /// Ready for the DaemonSet's `minReadySeconds` and not terminating (`IsPodAvailable`).
    pub(super) available: bool,
    pub(super) terminating: bool,
    /// Bound to its node (`spec.nodeName` set).
    pub(super) scheduled: bool,
}

/// What the rolling update would do with a node (upstream: the branches of `rollingUpdate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Slot {
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
pub(super) struct NodeState {
    pub(super) fits: bool,
    /// The Node no longer exists: its scheduled pods are the pod GC's (upstream
    /// `getUnscheduledPodsWithoutNode` deletes only the unscheduled ones).
    pub(super) gone: bool,
    pub(super) pods: BTreeMap<String, DaemonPod>,
}

impl NodeState {
    pub(super) fn slot(&self) -> Slot {
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
    pub(super) uid: String,
    pub(super) hash: String,
    pub(super) nodes: BTreeMap<String, NodeState>,
    /// The node each pod is filed under.
    pub(super) pod_node: FastMap<String, String>,
    /// Nodes by slot, in name order.
    pub(super) slots: BTreeMap<Slot, BTreeSet<String>>,
    pub(super) filed: FastMap<String, Slot>,
    /// The DaemonSet's `minReadySeconds`, in ms.
    pub(super) min_ready_ms: u64,
    /// Ready pods not yet available: when each becomes so.
    pub(super) maturing: BTreeMap<String, Millis>,
    /// The instant a sync is already scheduled for (the earliest of `maturing`).
    pub(super) wake: Option<Millis>,
}

impl DaemonState {
    pub(super) fn refile(&mut self, node: &str) {
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

    pub(super) fn count(&self, slot: Slot) -> i64 {
        self.slots.get(&slot).map_or(0, |s| s.len() as i64)
    }

    pub(super) fn nodes_in(&self, slot: Slot) -> impl Iterator<Item = &String> {
        self.slots.get(&slot).into_iter().flatten()
    }

    /// The live pods on a node the template does not fit that the controller deletes: all of
    /// them, or only the unscheduled ones of a node that no longer exists.
    pub(super) fn misplaced_pods(&self, node: &str) -> Vec<String> {
        self.nodes
            .get(node)
            .into_iter()
            .flat_map(|n| n.pods.iter().filter(move |(_, p)| !(n.gone && p.scheduled)))
            .filter(|(_, p)| !p.terminating)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Pods on `node` (live ones only when `live`), filtered by new-ness.
    pub(super) fn pods_on(&self, node: &str, new: Option<bool>) -> Vec<String> {
        self.nodes
            .get(node)
            .into_iter()
            .flat_map(|n| &n.pods)
            .filter(|(_, p)| !p.terminating && new.is_none_or(|w| p.new == w))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Records one pod's state (or its removal) at `now`; `available_at`: when it is (or
    /// becomes) available, `None` while it is not Ready.
    pub(super) fn file_pod(
        &mut self,
        name: &str,
        pod: Option<&SimPod>,
        available_at: Option<Millis>,
        now: Millis,
    ) {
        self.maturing.remove(name);
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
        let ready = p.pod.ready && !terminating;
        match available_at {
            Some(at) if ready && at > now => {
                self.maturing.insert(name.to_string(), at);
            }
            _ => {}
        }
        let state = DaemonPod {
            new: p.pod.meta.labels.get(LABEL_CONTROLLER_REVISION_HASH) == Some(&self.hash),
            available: ready && available_at.is_some_and(|at| at <= now),
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
