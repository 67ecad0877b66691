//! The workload kinds pods name as their controllers (`ownerReferences`) that the input has
//! none of: a dump without DaemonSets (`kubectl get nodes,pods,services,endpointslices`)
//! hides what the DaemonSet rules need, and the rules that need them say so instead of
//! running on nothing.

use std::collections::BTreeMap;

use locality_model::objects::{ClusterState, Pod, WorkloadKind};

/// A workload kind absent from the input while pods name it as their controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingKind {
    /// The kind (`DaemonSet`, `ReplicaSet`, `StatefulSet`).
    pub kind: WorkloadKind,
    /// How many pods name an object of that kind as their controller.
    pub pods: usize,
}

impl MissingKind {
    /// `kubectl get`'s resource name of the kind (`daemonsets`).
    pub(crate) fn resource(&self) -> &'static str {
        match self.kind {
            WorkloadKind::DaemonSet => "daemonsets",
            WorkloadKind::Deployment => "deployments",
            WorkloadKind::ReplicaSet => "replicasets",
            WorkloadKind::StatefulSet => "statefulsets",
        }
    }

    /// Why a rule that needs this kind could not run.
    pub(crate) fn reason(&self) -> String {
        format!(
            "the input has no {kind}s, yet {pods} {name} a {kind} as {their} controller: add {res} to the dump (`{dump}`)",
            kind = self.kind.as_str(),
            pods = if self.pods == 1 {
                "1 pod".to_string()
            } else {
                format!("{} pods", self.pods)
            },
            name = if self.pods == 1 { "names" } else { "name" },
            their = if self.pods == 1 { "its" } else { "their" },
            res = self.resource(),
            dump = locality_model::objects::DUMP_COMMAND,
        )
    }
}

/// The controller kind a pod names, when it is a workload kind.
fn controller_kind(pod: &Pod) -> Option<WorkloadKind> {
    pod.meta
        .owner_references
        .iter()
        .filter(|o| o.controller)
        .find_map(|o| match o.kind.as_str() {
            "DaemonSet" => Some(WorkloadKind::DaemonSet),
            "ReplicaSet" => Some(WorkloadKind::ReplicaSet),
            "StatefulSet" => Some(WorkloadKind::StatefulSet),
            _ => None,
        })
}

/// The workload kinds pods name as their controller of which the input has no object at all,
/// in kind order.
pub(crate) fn missing_kinds(state: &ClusterState) -> Vec<MissingKind> {
    let mut named: BTreeMap<WorkloadKind, usize> = BTreeMap::new();
    for pod in &state.pods {
        if let Some(kind) = controller_kind(pod) {
            *named.entry(kind).or_default() += 1;
        }
    }
    named
        .into_iter()
        .filter(|(kind, _)| !state.workloads.iter().any(|w| w.kind == *kind))
        .map(|(kind, pods)| MissingKind { kind, pods })
        .collect()
}

/// The name of the DaemonSet the pods (indices into `state.pods`) name as their controller,
/// when the input does not have it.
pub(crate) fn absent_daemonset<'s>(state: &'s ClusterState, pods: &[usize]) -> Option<&'s str> {
    pods.iter().find_map(|&p| {
        let pod = &state.pods[p];
        pod.meta
            .owner_references
            .iter()
            .find(|o| o.controller && o.kind == "DaemonSet")
            .filter(|o| {
                !state.workloads.iter().any(|w| {
                    w.kind == WorkloadKind::DaemonSet
                        && w.meta.namespace == pod.meta.namespace
                        && w.meta.name == o.name
                })
            })
            .map(|o| o.name.as_str())
    })
}
