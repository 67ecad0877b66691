//! Workloads (DaemonSets, Deployments, ReplicaSets, StatefulSets) and their selectors.

use super::*;

/// A `metav1.LabelSelector` (`matchLabels` ANDed with `matchExpressions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// `matchLabels`.
    pub match_labels: Labels,
    /// `matchExpressions` (`In`, `NotIn`, `Exists`, `DoesNotExist`).
    pub match_expressions: Vec<SelectorRequirement>,
}

/// Kind of a pod-owning workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkloadKind {
    /// apps/v1 DaemonSet.
    DaemonSet,
    /// apps/v1 Deployment.
    Deployment,
    /// apps/v1 ReplicaSet.
    ReplicaSet,
    /// apps/v1 StatefulSet.
    StatefulSet,
}

impl WorkloadKind {
    /// Kubernetes kind name.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::StatefulSet => "StatefulSet",
        }
    }
}

/// A DaemonSet, Deployment, ReplicaSet or StatefulSet, reduced to what the model reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Which kind of workload.
    pub kind: WorkloadKind,
    /// Metadata.
    pub meta: ObjectMeta,
    /// `spec.selector`.
    pub selector: LabelSelector,
    /// `spec.template.metadata.labels`.
    pub template_labels: Labels,
    /// `spec.template.spec` (scheduling and ports).
    pub template: PodSpec,
    /// `spec.replicas` (`None` for DaemonSets; defaults to 1 when unset on the others).
    pub replicas: Option<u32>,
    /// Rolling update `maxSurge` verbatim (`"0"`, `"25%"`), if set.
    pub max_surge: Option<String>,
    /// Rolling update `maxUnavailable` verbatim, if set.
    pub max_unavailable: Option<String>,
    /// `spec.updateStrategy.type` / `spec.strategy.type`, if set.
    pub update_strategy: Option<String>,
    /// The template's containers: name, image, literal env and command line (what
    /// [`crate::dataplane::detect`] reads of a data plane's DaemonSet).
    pub containers: Vec<crate::dataplane::detect::ContainerFacts>,
}

/// A policy/v1 PodDisruptionBudget: how many of the pods it selects must stay available
/// through voluntary disruptions (evictions, `kubectl drain`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodDisruptionBudget {
    /// Metadata.
    pub meta: ObjectMeta,
    /// `spec.selector`; `None` (or an empty selector) selects no pod, as the eviction
    /// subresource reads it.
    pub selector: Option<LabelSelector>,
    /// `spec.minAvailable` verbatim (`"1"`, `"50%"`), if set.
    pub min_available: Option<String>,
    /// `spec.maxUnavailable` verbatim, if set.
    pub max_unavailable: Option<String>,
    /// `spec.unhealthyPodEvictionPolicy` (`IfHealthyBudget` or `AlwaysAllow`), if set.
    pub unhealthy_pod_eviction_policy: Option<String>,
}
