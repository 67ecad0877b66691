//! Pods: the spec fields that decide scheduling and endpoints, and their status.

use std::net::IpAddr;

use super::*;

/// A container port (`spec.containers[].ports[]`), used to resolve named targetPorts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerPort {
    /// Port name (may be empty).
    pub name: String,
    /// `containerPort`.
    pub container_port: u16,
    /// Protocol.
    pub protocol: Protocol,
    /// `hostPort`, if set.
    pub host_port: Option<u16>,
}

/// Pod phase (`status.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PodPhase {
    /// Pending.
    Pending,
    /// Running.
    #[default]
    Running,
    /// Succeeded (terminal: excluded from endpoints).
    Succeeded,
    /// Failed (terminal: excluded from endpoints).
    Failed,
    /// Unknown or absent.
    Unknown,
}

/// A pod toleration (`spec.tolerations[]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toleration {
    /// Key (empty with `Exists` tolerates everything).
    pub key: String,
    /// `Equal` (default) or `Exists`.
    pub operator: String,
    /// Value for `Equal`.
    pub value: String,
    /// Effect (empty = all effects).
    pub effect: String,
    /// `tolerationSeconds`: with effect `NoExecute`, how long the pod stays bound to a node
    /// after a matching taint is added (`None`: forever; zero or negative: evicted at once), as
    /// the taint-eviction controller reads it (k8s.io/kubernetes
    /// `pkg/controller/tainteviction/taint_eviction.go` `getMinTolerationTime`).
    pub toleration_seconds: Option<i64>,
}

/// The scheduling-relevant part of a pod spec (also used in workload templates).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodSpec {
    /// `spec.nodeName` (empty when unscheduled).
    pub node_name: String,
    /// `spec.hostNetwork`.
    pub host_network: bool,
    /// `spec.hostname`.
    pub hostname: String,
    /// `spec.subdomain`.
    pub subdomain: String,
    /// All container ports of all containers, in order.
    pub ports: Vec<ContainerPort>,
    /// `spec.nodeSelector`.
    pub node_selector: Labels,
    /// `spec.tolerations`.
    pub tolerations: Vec<Toleration>,
    /// Required node affinity terms (`requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`); ORed.
    pub required_node_affinity: Vec<NodeSelectorTerm>,
}

/// One `nodeSelectorTerms[]` entry: its expressions and fields are ANDed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeSelectorTerm {
    /// `matchExpressions` over node labels.
    pub match_expressions: Vec<SelectorRequirement>,
    /// `matchFields` over node fields (only `metadata.name` exists).
    pub match_fields: Vec<SelectorRequirement>,
}

/// A selector requirement (`key`, `operator`, `values`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectorRequirement {
    /// Key.
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`.
    pub operator: String,
    /// Values.
    pub values: Vec<String>,
}

/// A Pod.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pod {
    /// Metadata (labels select it into Services; deletionTimestamp makes it terminating).
    pub meta: ObjectMeta,
    /// Spec fields the model reads.
    pub spec: PodSpec,
    /// `status.phase`.
    pub phase: PodPhase,
    /// `status.conditions[type=Ready].status == "True"`.
    pub ready: bool,
    /// `status.podIPs` (or `status.podIP` when `podIPs` is absent), in order.
    pub pod_ips: Vec<IpAddr>,
}
