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
    pub containers: Vec<ContainerFacts>,
    /// `spec.minReadySeconds` (0 when unset): how long a new pod must be Ready before it
    /// counts as available.
    pub min_ready_seconds: u32,
    /// A StatefulSet's `spec.updateStrategy.rollingUpdate.partition`, if set: ordinals below
    /// it keep the old template.
    pub partition: Option<u32>,
    /// A StatefulSet's `spec.podManagementPolicy`.
    pub pod_management_policy: PodManagementPolicy,
}

/// A StatefulSet's `spec.podManagementPolicy` (the API server's default: `OrderedReady`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PodManagementPolicy {
    /// Pods are created in ordinal order, each once the previous is Running and Ready, and
    /// removed in reverse order.
    #[default]
    OrderedReady,
    /// Pods are created and removed without waiting for one another.
    Parallel,
}

impl PodManagementPolicy {
    /// Its API name.
    pub fn as_str(self) -> &'static str {
        match self {
            PodManagementPolicy::OrderedReady => "OrderedReady",
            PodManagementPolicy::Parallel => "Parallel",
        }
    }
}

impl Workload {
    /// A workload of `kind` with `meta` and nothing else set: an empty selector and template,
    /// no replicas and no strategy (what a manifest that names none of them gives before
    /// defaulting). Builders start from it so a field added here is added once.
    pub fn new(kind: WorkloadKind, meta: ObjectMeta) -> Self {
        Workload {
            kind,
            meta,
            selector: LabelSelector::default(),
            template_labels: Labels::new(),
            template: PodSpec::default(),
            replicas: None,
            max_surge: None,
            max_unavailable: None,
            update_strategy: None,
            containers: Vec::new(),
            min_ready_seconds: 0,
            partition: None,
            pod_management_policy: Default::default(),
        }
    }
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

/// One container of a DaemonSet's template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerFacts {
    /// Name.
    pub name: String,
    /// Image reference.
    pub image: String,
    /// `env[]` with a literal `value` (those set through `valueFrom` are left out).
    pub env: Vec<(String, String)>,
    /// `command` and `args`, in order.
    pub args: Vec<String>,
}

impl ContainerFacts {
    /// The literal value of environment variable `name`.
    pub(crate) fn env(&self, name: &str) -> Option<&str> {
        self.env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// `--name=value` or `--name value` in its command line.
    pub(crate) fn flag(&self, name: &str) -> Option<String> {
        let words: Vec<&str> = self.args.iter().flat_map(|a| a.split_whitespace()).collect();
        let mut it = words.iter();
        while let Some(w) = it.next() {
            let Some(bare) = w.strip_prefix("--") else {
                continue;
            };
            if let Some(v) = bare.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                return Some(v.to_string());
            }
            if bare == name {
                return Some(it.next().map_or("true", |v| *v).to_string());
            }
        }
        None
    }
}
