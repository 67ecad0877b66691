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
    /// How the pod becomes ready and how it stops (what `simulate` times a rollout with).
    pub lifecycle: PodLifecycle,
}

/// How a pod becomes ready and stops: `readinessProbe`, `terminationGracePeriodSeconds`,
/// `lifecycle.preStop`. Read for `locality simulate`; routing does not depend on them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodLifecycle {
    /// `spec.terminationGracePeriodSeconds` as written (`None`: unset, the API server's
    /// default is 30).
    pub termination_grace_period_seconds: Option<i64>,
    /// The readiness probe of the first container (app containers, then sidecars) that has one.
    pub readiness_probe: Option<Probe>,
    /// The longest `preStop` hook of the containers, if any has one.
    pub pre_stop: Option<PreStop>,
    /// The longest shutdown delay a container's process declares on its command line
    /// (agnhost netexec's `--delay-shutdown`): after SIGTERM it keeps serving this long.
    pub shutdown_delay_seconds: Option<i64>,
}

/// A container probe (`readinessProbe`), reduced to its handler and timing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    /// `tcpSocket`, `httpGet`, `grpc` or `exec`.
    pub handler: ProbeHandler,
    /// `initialDelaySeconds` (`None`: unset, 0).
    pub initial_delay_seconds: Option<i64>,
    /// `periodSeconds` (`None`: unset, 10).
    pub period_seconds: Option<i64>,
    /// `failureThreshold` (`None`: unset, 3).
    pub failure_threshold: Option<i64>,
    /// `successThreshold` (`None`: unset, 1).
    pub success_threshold: Option<i64>,
}

/// How a probe checks a container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProbeHandler {
    /// `tcpSocket.port` (a number or a container port name).
    TcpSocket {
        /// The port as written.
        port: TargetPort,
    },
    /// `httpGet` (`path`, `port`).
    HttpGet {
        /// `path` (empty when unset).
        path: String,
        /// The port as written.
        port: TargetPort,
    },
    /// `grpc.port`.
    Grpc {
        /// The port.
        port: u16,
    },
    /// `exec` (a command the model does not run).
    #[default]
    Exec,
}

/// A `preStop` hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreStop {
    /// `sleep.seconds`, or an `exec` command that is `sleep N` (possibly through `sh -c`).
    Sleep {
        /// Seconds.
        seconds: i64,
    },
    /// Another `exec` command or an `httpGet`: how long it takes is not stated.
    Unknown {
        /// `exec` or `httpGet`.
        handler: String,
    },
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
