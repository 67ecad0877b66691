//! The objects of the simulated cluster: the model's types (`locality_model::objects`) plus the
//! declared parameters that make simulated pods behave like the images `verify` uses.

use locality_model::objects::{
    EndpointSlice, Namespace, Node, ObjectMeta, Pod, Service, Workload, WorkloadKind,
};
use serde_json::{Map, Value};

/// The kinds the simulated API knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// v1 Namespace (cluster-scoped).
    Namespace,
    /// v1 Node (cluster-scoped).
    Node,
    /// v1 Pod.
    Pod,
    /// v1 Service.
    Service,
    /// discovery.k8s.io/v1 EndpointSlice.
    EndpointSlice,
    /// apps/v1 Deployment.
    Deployment,
    /// apps/v1 ReplicaSet.
    ReplicaSet,
    /// apps/v1 DaemonSet.
    DaemonSet,
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// v1 ServiceAccount (stored, not simulated: see [`Kind::STORED`]).
    ServiceAccount,
    /// batch/v1 Job (stored, not simulated: no Job controller runs it).
    Job,
    /// rbac.authorization.k8s.io/v1 Role (stored, not simulated: no authorizer reads it).
    Role,
    /// rbac.authorization.k8s.io/v1 RoleBinding (stored, not simulated).
    RoleBinding,
    /// rbac.authorization.k8s.io/v1 ClusterRole (cluster-scoped; stored, not simulated).
    ClusterRole,
    /// rbac.authorization.k8s.io/v1 ClusterRoleBinding (cluster-scoped; stored, not simulated).
    ClusterRoleBinding,
    /// policy/v1 PodDisruptionBudget (stored; the simulated eviction computes its status,
    /// `crate::disruption`).
    PodDisruptionBudget,
}

impl Kind {
    /// Kubernetes kind name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Namespace => "Namespace",
            Kind::Node => "Node",
            Kind::Pod => "Pod",
            Kind::Service => "Service",
            Kind::EndpointSlice => "EndpointSlice",
            Kind::Deployment => "Deployment",
            Kind::ReplicaSet => "ReplicaSet",
            Kind::DaemonSet => "DaemonSet",
            Kind::StatefulSet => "StatefulSet",
            Kind::ServiceAccount => "ServiceAccount",
            Kind::Job => "Job",
            Kind::Role => "Role",
            Kind::RoleBinding => "RoleBinding",
            Kind::ClusterRole => "ClusterRole",
            Kind::ClusterRoleBinding => "ClusterRoleBinding",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
        }
    }
    /// True for cluster-scoped kinds (empty namespace).
    pub fn cluster_scoped(self) -> bool {
        matches!(
            self,
            Kind::Namespace | Kind::Node | Kind::ClusterRole | Kind::ClusterRoleBinding
        )
    }
    /// The kinds the simulated cluster stores but does not simulate: no controller, kubelet or
    /// authorizer acts on them (a Job is kept, never run; RBAC objects are kept, never
    /// enforced; a PodDisruptionBudget is read by evictions, its status never written). They
    /// are [`Object::Stored`]: metadata and their other fields as JSON.
    pub const STORED: [Kind; 7] = [
        Kind::ServiceAccount,
        Kind::Job,
        Kind::Role,
        Kind::RoleBinding,
        Kind::ClusterRole,
        Kind::ClusterRoleBinding,
        Kind::PodDisruptionBudget,
    ];
    /// True for a kind of [`Kind::STORED`].
    pub fn is_stored_only(self) -> bool {
        Kind::STORED.contains(&self)
    }
    /// The kind of a workload.
    pub fn of_workload(kind: WorkloadKind) -> Option<Kind> {
        match kind {
            WorkloadKind::Deployment => Some(Kind::Deployment),
            WorkloadKind::ReplicaSet => Some(Kind::ReplicaSet),
            WorkloadKind::DaemonSet => Some(Kind::DaemonSet),
            WorkloadKind::StatefulSet => Some(Kind::StatefulSet),
        }
    }
}

pub use compact_str::CompactString;

/// Identity of an object in the simulated store: (kind, namespace, name).
///
/// The namespace and name are [`CompactString`]s: up to 24 bytes (most Kubernetes names) are
/// held in the key itself, so the engine's many maps keyed by object compare and clone keys
/// without following a pointer or allocating. On a 5,000-node cluster, with 100,000 pods,
/// heap-held names made every lookup a cache miss.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// Kind.
    pub kind: Kind,
    /// Namespace (empty for cluster-scoped kinds).
    pub namespace: CompactString,
    /// Name.
    pub name: CompactString,
}

impl ObjectKey {
    /// A key.
    pub fn new(kind: Kind, namespace: impl AsRef<str>, name: impl AsRef<str>) -> Self {
        ObjectKey {
            kind,
            namespace: CompactString::new(namespace.as_ref()),
            name: CompactString::new(name.as_ref()),
        }
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind.as_str(), self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind.as_str(), self.namespace, self.name)
        }
    }
}

/// How a readiness probe checks the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeHandler {
    /// `tcpSocket`: succeeds while the process listens on the port.
    TcpSocket {
        /// Port.
        port: u16,
    },
    /// `httpGet`: succeeds while the process runs; a `/readyz` path (agnhost netexec) fails
    /// from SIGTERM on.
    HttpGet {
        /// Path, e.g. `/readyz` or `/hostname`.
        path: String,
        /// Port.
        port: u16,
    },
    /// `exec` (or a handler the simulation cannot check, such as `grpc`): succeeds while the
    /// process runs.
    Exec,
}

/// A readiness probe's declared parameters (`readinessProbe`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadinessProbe {
    /// Handler.
    pub handler: ProbeHandler,
    /// `initialDelaySeconds`.
    pub initial_delay_seconds: u64,
    /// `periodSeconds` (default 10, minimum 1).
    pub period_seconds: u64,
    /// `failureThreshold` (default 3, minimum 1).
    pub failure_threshold: u32,
}

impl ReadinessProbe {
    /// True when the probe fails from SIGTERM on (agnhost netexec's `/readyz`).
    pub fn fails_on_sigterm(&self) -> bool {
        matches!(&self.handler, ProbeHandler::HttpGet { path, .. } if path == "/readyz")
    }
}

/// The declared behaviour of a simulated pod's container (by parameters, not by running code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodBehaviour {
    /// Time from binding to the container running (image pull and start), in ms.
    pub start_delay_ms: u64,
    /// Readiness probe; `None`: Ready as soon as the container runs.
    pub readiness: Option<ReadinessProbe>,
    /// `terminationGracePeriodSeconds` (default 30).
    pub termination_grace_period_seconds: u64,
    /// agnhost's `--delay-shutdown` seconds: after SIGTERM the process keeps serving this long
    /// (bounded by the grace period), then exits.
    pub shutdown_delay_seconds: u64,
    /// Whether the process listens on its declared container ports (agnhost `netexec`: yes;
    /// `pause`: no).
    pub listens: bool,
    /// Time from the container running to the application answering its readiness probe, in
    /// ms (its own start-up); a pod without a readiness probe is Ready when its container runs.
    pub ready_after_ms: u64,
}

impl Default for PodBehaviour {
    fn default() -> Self {
        PodBehaviour {
            start_delay_ms: 1_000,
            readiness: None,
            termination_grace_period_seconds: 30,
            shutdown_delay_seconds: 0,
            listens: true,
            ready_after_ms: 0,
        }
    }
}

/// A simulated Pod: the model's [`Pod`] and its declared behaviour.
#[derive(Debug, Clone, PartialEq)]
pub struct SimPod {
    /// The pod as the model reads it (status fields written by the simulated kubelet).
    pub pod: Pod,
    /// Declared behaviour.
    pub behaviour: PodBehaviour,
    /// `status.containerStatuses[].restartCount`: how often the simulated kubelet restarted
    /// the pod's container ([`crate::Engine::restart_container`]).
    pub restart_count: u32,
}

/// A simulated workload: the model's [`Workload`] and its pods' declared behaviour.
#[derive(Debug, Clone, PartialEq)]
pub struct SimWorkload {
    /// The workload (`replicas` of a ReplicaSet is written by the simulated Deployment controller).
    pub workload: Workload,
    /// Behaviour of the pods of its template.
    pub pod_behaviour: PodBehaviour,
    /// `spec.template.metadata.annotations`: copied to its pods and part of the template
    /// hash, so `kubectl rollout restart` (a `restartedAt` annotation) rolls it.
    pub template_annotations: locality_model::objects::Labels,
    /// A digest of the template fields the simulation keeps but does not model (container
    /// images, commands, arguments, environment): part of the template hash, so changing
    /// them rolls the workload as on a real cluster. 0 when there are none.
    pub template_digest: u64,
    /// `metadata.generation`, kept by the simulated store: 1 at creation, one more at each
    /// write that changes anything but metadata (the API server's rule for workloads; their
    /// status is computed when read, never written).
    pub generation: i64,
}

/// An object of a kind the simulated cluster stores without simulating it ([`Kind::STORED`]):
/// its metadata, and every other field (`spec`, `rules`, `roleRef`, `subjects`…, as the API
/// server defaulted them; not `status`) as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredObject {
    /// Its kind (one of [`Kind::STORED`]).
    pub kind: Kind,
    /// Its metadata.
    pub meta: ObjectMeta,
    /// Its fields besides `apiVersion`, `kind`, `metadata` and `status`.
    pub fields: Map<String, Value>,
}

/// An object in the simulated store.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    /// Namespace.
    Namespace(Namespace),
    /// Node.
    Node(Node),
    /// Pod.
    Pod(SimPod),
    /// Service.
    Service(Service),
    /// EndpointSlice.
    EndpointSlice(EndpointSlice),
    /// Deployment, ReplicaSet, DaemonSet or StatefulSet.
    Workload(SimWorkload),
    /// A kind stored, not simulated ([`Kind::STORED`]).
    Stored(StoredObject),
}

impl Object {
    /// Its kind (always `Some` today; kept optional for kinds the simulation cannot store).
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Object::Namespace(_) => Kind::Namespace,
            Object::Node(_) => Kind::Node,
            Object::Pod(_) => Kind::Pod,
            Object::Service(_) => Kind::Service,
            Object::EndpointSlice(_) => Kind::EndpointSlice,
            Object::Workload(w) => return Kind::of_workload(w.workload.kind),
            Object::Stored(o) => o.kind,
        })
    }
    /// Its metadata.
    pub fn meta(&self) -> &ObjectMeta {
        match self {
            Object::Namespace(o) => &o.meta,
            Object::Node(o) => &o.meta,
            Object::Pod(o) => &o.pod.meta,
            Object::Service(o) => &o.meta,
            Object::EndpointSlice(o) => &o.meta,
            Object::Workload(o) => &o.workload.meta,
            Object::Stored(o) => &o.meta,
        }
    }
    /// Its metadata, mutable.
    pub fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Object::Namespace(o) => &mut o.meta,
            Object::Node(o) => &mut o.meta,
            Object::Pod(o) => &mut o.pod.meta,
            Object::Service(o) => &mut o.meta,
            Object::EndpointSlice(o) => &mut o.meta,
            Object::Workload(o) => &mut o.workload.meta,
            Object::Stored(o) => &mut o.meta,
        }
    }
    /// Its store key (`None` when [`Object::kind`] is).
    pub fn key(&self) -> Option<ObjectKey> {
        let kind = self.kind()?;
        let m = self.meta();
        let ns = if kind.cluster_scoped() {
            ""
        } else {
            m.namespace.as_str()
        };
        Some(ObjectKey::new(kind, ns, &m.name))
    }
    /// The pod, if this is one.
    pub fn as_pod(&self) -> Option<&SimPod> {
        match self {
            Object::Pod(p) => Some(p),
            _ => None,
        }
    }
    /// The node, if this is one.
    pub fn as_node(&self) -> Option<&Node> {
        match self {
            Object::Node(n) => Some(n),
            _ => None,
        }
    }
    /// The Service, if this is one.
    pub fn as_service(&self) -> Option<&Service> {
        match self {
            Object::Service(s) => Some(s),
            _ => None,
        }
    }
    /// The EndpointSlice, if this is one.
    pub fn as_endpoint_slice(&self) -> Option<&EndpointSlice> {
        match self {
            Object::EndpointSlice(s) => Some(s),
            _ => None,
        }
    }
    /// The stored-only object ([`Kind::STORED`]), if this is one.
    pub fn as_stored(&self) -> Option<&StoredObject> {
        match self {
            Object::Stored(o) => Some(o),
            _ => None,
        }
    }
    /// The workload, if this is one.
    pub fn as_workload(&self) -> Option<&SimWorkload> {
        match self {
            Object::Workload(w) => Some(w),
            _ => None,
        }
    }
}
