//! The Kubernetes objects the model reads, reduced to the fields that decide routing.
//!
//! These are not the full API types: ingest (files, a live cluster, the simulated
//! cluster) fills them from `k8s-openapi` objects or lean wire structs, so the model
//! stays pure and fast. Field names follow the Kubernetes API (`nodeName`, `podIPs`,
//! `internalTrafficPolicy`…) in Rust case. Every object keeps an [`Origin`] (in its [`ObjectMeta`]) so that
//! findings can point back at the file and line (or the live object) it came from.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// Label key carrying a node's zone (`topology.kubernetes.io/zone`).
pub const LABEL_ZONE: &str = "topology.kubernetes.io/zone";
/// Label key carrying a node's operating system (`kubernetes.io/os`).
pub const LABEL_OS: &str = "kubernetes.io/os";
/// Label that ties an EndpointSlice to its Service (`kubernetes.io/service-name`).
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";
/// Label naming the manager of an EndpointSlice (`endpointslice.kubernetes.io/managed-by`).
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
/// The value of [`LABEL_MANAGED_BY`] the EndpointSlice controller writes.
pub const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// Annotation `service.kubernetes.io/topology-mode` (current key for `Auto`).
pub const ANNOTATION_TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";
/// Deprecated annotation `service.kubernetes.io/topology-aware-hints`; wins when present.
pub const ANNOTATION_TOPOLOGY_AWARE_HINTS: &str = "service.kubernetes.io/topology-aware-hints";
/// Label naming the proxy that handles a Service (`service.kubernetes.io/service-proxy-name`):
/// kube-proxy's informers exclude Services and EndpointSlices carrying it.
pub const LABEL_SERVICE_PROXY_NAME: &str = "service.kubernetes.io/service-proxy-name";
/// Label `service.kubernetes.io/headless`, set by the EndpointSlice controller on the slices of
/// headless Services; kube-proxy's informers exclude Services and EndpointSlices carrying it.
pub const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";
/// Control-plane role label; such nodes are excluded from `Auto` capacity.
pub const LABEL_CONTROL_PLANE: &str = "node-role.kubernetes.io/control-plane";
/// Legacy master role label; such nodes are excluded from `Auto` capacity.
pub const LABEL_MASTER: &str = "node-role.kubernetes.io/master";

/// String-keyed map as used for labels, annotations and selectors (sorted for determinism).
pub type Labels = BTreeMap<String, String>;

/// Where an object came from, for error messages and findings.
///
/// Ingest records the document and item index cheaply while parsing; the line and column
/// of the object's start are filled in when known (0 otherwise) and can be recomputed on
/// demand from the indices (only findings that point into files need them).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// File path, `-` for stdin, or empty for live/simulated objects.
    pub file: String,
    /// 0-based index of the YAML document (or JSON value) in the file.
    pub document: u32,
    /// 0-based index in the `items` of a `List`, `None` for a top-level object.
    pub item: Option<u32>,
    /// 1-based line of the object's start, 0 when unknown.
    pub line: u32,
    /// 1-based column of the object's start, 0 when unknown.
    pub column: u32,
}

/// Common object metadata (`metadata`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectMeta {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (empty for cluster-scoped objects).
    pub namespace: String,
    /// `metadata.uid` (may be empty in manifests).
    pub uid: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `metadata.annotations` (only the keys the model reads are kept by ingest).
    pub annotations: Labels,
    /// `metadata.ownerReferences`.
    pub owner_references: Vec<OwnerReference>,
    /// `metadata.creationTimestamp` as RFC 3339 text, if set.
    pub creation_timestamp: Option<String>,
    /// `metadata.deletionTimestamp` as RFC 3339 text, if set (the object is terminating).
    pub deletion_timestamp: Option<String>,
    /// Where the object was read from.
    pub origin: Origin,
    /// Fields the API server (or kubectl, for the namespace) would have set before anything
    /// read the object, as set by [`crate::admission`]: empty for objects read from a live
    /// cluster, which are stored that way already.
    pub defaulted: Vec<Defaulted>,
}

/// One field set on admission: what a file left out and the cluster would have filled in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Defaulted {
    /// The field's path, as in `kubectl explain` (`spec.ports[0].protocol`).
    pub field: String,
    /// The value set, or what is known of it (`allocated, number unknown`).
    pub value: String,
    /// Who sets it.
    pub by: DefaultedBy,
}

/// Who fills in a field a file left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DefaultedBy {
    /// The API server's defaulting (`SetDefaults_*`).
    Defaulting,
    /// The API server's allocators (cluster IPs, node ports, IP families).
    Allocation,
    /// kubectl, for `metadata.namespace` (`-n`, the context's namespace, else `default`).
    Kubectl,
}

impl DefaultedBy {
    /// How explain says it.
    pub fn as_str(self) -> &'static str {
        match self {
            DefaultedBy::Defaulting => "defaulted by the API server",
            DefaultedBy::Allocation => "allocated by the API server",
            DefaultedBy::Kubectl => "set by kubectl",
        }
    }
}

impl std::fmt::Display for Defaulted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.field, self.value, self.by.as_str())
    }
}

impl ObjectMeta {
    /// Why kube-proxy's informers never deliver this object, if they do not
    /// (`cmd/kube-proxy/app/server.go`, the label selector of its informer factory): labelled
    /// [`LABEL_SERVICE_PROXY_NAME`] (another proxy handles it) or [`LABEL_HEADLESS`]. Before
    /// 1.36 both labels exclude both kinds; from 1.36 (upstream PR #134623, `per_kind`) a
    /// Service is excluded only by the first and an EndpointSlice only by the second.
    pub fn kube_proxy_exclusion(&self, is_service: bool, per_kind: bool) -> Option<ProxyExclusion> {
        if let Some(name) = self.labels.get(LABEL_SERVICE_PROXY_NAME)
            && (is_service || !per_kind)
        {
            return Some(ProxyExclusion::ServiceProxyName(name.clone()));
        }
        (self.labels.contains_key(LABEL_HEADLESS) && (!is_service || !per_kind))
            .then_some(ProxyExclusion::HeadlessLabel)
    }
}

/// `metadata.ownerReferences[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnerReference {
    /// `kind` of the owner (e.g. `ReplicaSet`).
    pub kind: String,
    /// `name` of the owner.
    pub name: String,
    /// `uid` of the owner.
    pub uid: String,
    /// `controller: true`.
    pub controller: bool,
}

/// Why kube-proxy's informers never deliver an object (Service or EndpointSlice).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProxyExclusion {
    /// Labelled `service.kubernetes.io/service-proxy-name` (the value: the proxy named).
    ServiceProxyName(String),
    /// Labelled `service.kubernetes.io/headless`.
    HeadlessLabel,
}

/// IP family of a Service or an EndpointSlice address type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum IpFamily {
    /// IPv4.
    IPv4,
    /// IPv6.
    IPv6,
}

impl IpFamily {
    /// The family of an address.
    pub fn of(ip: &IpAddr) -> Self {
        match ip {
            IpAddr::V4(_) => IpFamily::IPv4,
            IpAddr::V6(_) => IpFamily::IPv6,
        }
    }
    /// Kubernetes spelling (`IPv4`, `IPv6`).
    pub fn as_str(self) -> &'static str {
        match self {
            IpFamily::IPv4 => "IPv4",
            IpFamily::IPv6 => "IPv6",
        }
    }
}

/// L4 protocol of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub enum Protocol {
    /// TCP (the default).
    #[default]
    TCP,
    /// UDP.
    UDP,
    /// SCTP.
    SCTP,
}

impl Protocol {
    /// Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::TCP => "TCP",
            Protocol::UDP => "UDP",
            Protocol::SCTP => "SCTP",
        }
    }
}

/// A node taint (`spec.taints[]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Taint value (may be empty).
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// A Node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// Metadata (labels carry zone, OS and role).
    pub meta: ObjectMeta,
    /// `status.conditions[type=Ready].status == "True"`; `None` when the condition is absent.
    pub ready: Option<bool>,
    /// `status.allocatable.cpu` in millicores, `None` when absent or unparsable.
    pub allocatable_cpu_millis: Option<u64>,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// `status.addresses[type=InternalIP]`, in order.
    pub internal_ips: Vec<IpAddr>,
    /// `status.nodeInfo.kubeletVersion` (e.g. `v1.35.1`), if present.
    pub kubelet_version: Option<String>,
}

impl Node {
    /// The node's zone from `topology.kubernetes.io/zone` (`None` when absent or empty).
    pub fn zone(&self) -> Option<&str> {
        self.meta
            .labels
            .get(LABEL_ZONE)
            .map(String::as_str)
            .filter(|z| !z.is_empty())
    }
    /// True for nodes labelled `kubernetes.io/os=windows` (kube-proxy `winkernel`, modelled with
    /// inferred confidence: [`crate::proxy::winkernel`]).
    pub fn is_windows(&self) -> bool {
        self.meta.labels.get(LABEL_OS).is_some_and(|os| os == "windows")
    }
    /// True when the node carries a control-plane (or legacy master) role label.
    pub fn is_control_plane(&self) -> bool {
        self.meta.labels.contains_key(LABEL_CONTROL_PLANE) || self.meta.labels.contains_key(LABEL_MASTER)
    }
}

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

/// `spec.ports[]` of a Service.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServicePort {
    /// Port name (`""` when unnamed).
    pub name: String,
    /// Protocol.
    pub protocol: Protocol,
    /// `port`.
    pub port: u16,
    /// `targetPort` (defaults to `port`).
    pub target_port: TargetPort,
    /// `nodePort` (0 when none).
    pub node_port: u16,
}

impl std::fmt::Display for ServicePort {
    /// `name:port/PROTO`, or `port/PROTO` for an unnamed port.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.name.is_empty() {
            write!(f, "{}/{}", self.port, self.protocol.as_str())
        } else {
            write!(f, "{}:{}/{}", self.name, self.port, self.protocol.as_str())
        }
    }
}

/// A Service `targetPort`: a number or a container port name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetPort {
    /// Numeric target port.
    Number(u16),
    /// Named target port, resolved per pod.
    Name(String),
}

impl Default for TargetPort {
    fn default() -> Self {
        TargetPort::Number(0)
    }
}

/// `spec.type` of a Service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServiceType {
    /// ClusterIP (default).
    #[default]
    ClusterIP,
    /// NodePort.
    NodePort,
    /// LoadBalancer.
    LoadBalancer,
    /// ExternalName (not proxied).
    ExternalName,
}

/// `spec.internalTrafficPolicy` / `spec.externalTrafficPolicy` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum TrafficPolicy {
    /// Cluster (default).
    #[default]
    Cluster,
    /// Local.
    Local,
}

/// `status.loadBalancer.ingress[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadBalancerIngress {
    /// `ip`, if any (hostname-only ingresses go through the NodePort path).
    pub ip: Option<IpAddr>,
    /// `hostname`, if any.
    pub hostname: Option<String>,
    /// `ipMode` (`VIP` or `Proxy`); `None` means VIP.
    pub ip_mode: Option<String>,
}

/// A Service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Service {
    /// Metadata (annotations carry `topology-mode`).
    pub meta: ObjectMeta,
    /// `spec.type`.
    pub type_: ServiceType,
    /// `spec.selector`; `None` for a selector-less Service (hand-made slices).
    pub selector: Option<Labels>,
    /// `spec.ports`.
    pub ports: Vec<ServicePort>,
    /// `spec.clusterIP` (`None` when unset; `"None"` is represented by [`Service::headless`]).
    pub cluster_ips: Vec<IpAddr>,
    /// `spec.clusterIP == "None"`.
    pub headless: bool,
    /// `spec.ipFamilies` (empty: inferred from clusterIPs, else IPv4).
    pub ip_families: Vec<IpFamily>,
    /// `spec.externalIPs`.
    pub external_ips: Vec<IpAddr>,
    /// `spec.internalTrafficPolicy` (`None` when unset: Cluster).
    pub internal_traffic_policy: Option<TrafficPolicy>,
    /// `spec.externalTrafficPolicy` (`None` when unset: Cluster).
    pub external_traffic_policy: Option<TrafficPolicy>,
    /// `spec.trafficDistribution` verbatim (unknown values are kept and treated as unset).
    pub traffic_distribution: Option<String>,
    /// `spec.publishNotReadyAddresses`.
    pub publish_not_ready_addresses: bool,
    /// `spec.loadBalancerSourceRanges`.
    pub load_balancer_source_ranges: Vec<String>,
    /// `status.loadBalancer.ingress`.
    pub load_balancer_ingress: Vec<LoadBalancerIngress>,
    /// `spec.allocateLoadBalancerNodePorts` (LoadBalancer only; `None` reads as `true`, the
    /// API server's default).
    pub allocate_load_balancer_node_ports: Option<bool>,
}

impl Service {
    /// The families this Service serves: `spec.ipFamilies`, else the families of its cluster IPs, else IPv4.
    pub fn families(&self) -> Vec<IpFamily> {
        if !self.ip_families.is_empty() {
            let mut f = self.ip_families.clone();
            f.dedup();
            return f;
        }
        let mut f: Vec<IpFamily> = Vec::new();
        for ip in &self.cluster_ips {
            let fam = IpFamily::of(ip);
            if !f.contains(&fam) {
                f.push(fam);
            }
        }
        if f.is_empty() {
            f.push(IpFamily::IPv4);
        }
        f
    }
    /// Whether `port` has a NodePort: a number, or one the API server allocates (a NodePort
    /// Service, or a LoadBalancer unless `allocateLoadBalancerNodePorts: false`), even when a
    /// file does not say which.
    pub fn has_node_port(&self, port: &ServicePort) -> bool {
        match self.type_ {
            ServiceType::NodePort => true,
            ServiceType::LoadBalancer => {
                port.node_port != 0 || self.allocate_load_balancer_node_ports != Some(false)
            }
            _ => false,
        }
    }
    /// Effective internal traffic policy.
    pub fn itp(&self) -> TrafficPolicy {
        self.internal_traffic_policy.unwrap_or_default()
    }
    /// Effective external traffic policy (only meaningful when externally accessible).
    pub fn etp(&self) -> TrafficPolicy {
        self.external_traffic_policy.unwrap_or_default()
    }
}

/// EndpointSlice `addressType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddressType {
    /// IPv4.
    IPv4,
    /// IPv6.
    IPv6,
    /// FQDN (ignored by kube-proxy).
    Fqdn,
}

impl AddressType {
    /// Kubernetes spelling (`IPv4`, `IPv6`, `FQDN`).
    pub fn as_str(self) -> &'static str {
        match self {
            AddressType::IPv4 => "IPv4",
            AddressType::IPv6 => "IPv6",
            AddressType::Fqdn => "FQDN",
        }
    }
    /// The IP family, `None` for FQDN.
    pub fn family(self) -> Option<IpFamily> {
        match self {
            AddressType::IPv4 => Some(IpFamily::IPv4),
            AddressType::IPv6 => Some(IpFamily::IPv6),
            AddressType::Fqdn => None,
        }
    }
}

/// `endpoints[].conditions`: `None` means the field is unset (consumers give it a default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EndpointConditions {
    /// `ready` (kube-proxy: nil ⇒ true; the controller's hint logic: nil ⇒ not ready).
    pub ready: Option<bool>,
    /// `serving` (nil ⇒ true).
    pub serving: Option<bool>,
    /// `terminating` (nil ⇒ false).
    pub terminating: Option<bool>,
}

/// `endpoints[].hints`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct EndpointHints {
    /// `forZones[].name`.
    pub for_zones: Vec<String>,
    /// `forNodes[].name`.
    pub for_nodes: Vec<String>,
}

/// One `endpoints[]` entry of an EndpointSlice.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// `addresses` (kube-proxy uses only the first).
    pub addresses: Vec<IpAddr>,
    /// `conditions`.
    pub conditions: EndpointConditions,
    /// `nodeName`.
    pub node_name: Option<String>,
    /// `zone`.
    pub zone: Option<String>,
    /// `hints` (`None` when absent).
    pub hints: Option<EndpointHints>,
    /// `targetRef` as `(kind, namespace, name)`, when present.
    pub target_ref: Option<(String, String, String)>,
    /// `hostname`.
    pub hostname: Option<String>,
}

/// `ports[]` of an EndpointSlice. kube-proxy ignores entries whose name, port or protocol is unset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct EndpointPort {
    /// `name` (`None` when unset; `Some("")` for the unnamed port).
    pub name: Option<String>,
    /// `port`.
    pub port: Option<u16>,
    /// `protocol`.
    pub protocol: Option<Protocol>,
}

/// An EndpointSlice.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointSlice {
    /// Metadata (label `kubernetes.io/service-name` names the Service).
    pub meta: ObjectMeta,
    /// `addressType`.
    pub address_type: AddressType,
    /// `endpoints`.
    pub endpoints: Vec<Endpoint>,
    /// `ports`.
    pub ports: Vec<EndpointPort>,
}

impl EndpointSlice {
    /// The Service this slice belongs to (`kubernetes.io/service-name`), if labelled.
    pub fn service_name(&self) -> Option<&str> {
        self.meta.labels.get(LABEL_SERVICE_NAME).map(String::as_str)
    }
    /// True when the EndpointSlice controller manages it.
    pub fn is_controller_managed(&self) -> bool {
        self.meta
            .labels
            .get(LABEL_MANAGED_BY)
            .is_some_and(|m| m == CONTROLLER_NAME)
    }
}

/// A core/v1 Endpoints object, reduced to what the EndpointSlice mirroring controller reads
/// ([`crate::endpointslice::mirroring`]): for a selector-less Service it is the source of the
/// EndpointSlices kube-proxy reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Endpoints {
    /// Metadata: name and namespace (those of the Service), labels and annotations.
    pub meta: ObjectMeta,
    /// `subsets`.
    pub subsets: Vec<EndpointSubset>,
}

/// One `subsets[]` entry: addresses sharing a set of ports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointSubset {
    /// `addresses` (ready).
    pub addresses: Vec<EndpointAddress>,
    /// `notReadyAddresses`.
    pub not_ready_addresses: Vec<EndpointAddress>,
    /// `ports`.
    pub ports: Vec<EndpointsPort>,
}

/// One `addresses[]` / `notReadyAddresses[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointAddress {
    /// `ip` as written (may be invalid or irregular text).
    pub ip: String,
    /// `hostname` (`None` or empty: unset).
    pub hostname: Option<String>,
    /// `nodeName`.
    pub node_name: Option<String>,
    /// `targetRef` as `(kind, namespace, name)`, like [`Endpoint::target_ref`].
    pub target_ref: Option<(String, String, String)>,
    /// `targetRef.uid` (empty when unknown); only used to tell addresses apart.
    pub target_uid: String,
}

/// One `ports[]` entry of a subset.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointsPort {
    /// `name` (`""` when unnamed).
    pub name: String,
    /// `port`.
    pub port: u16,
    /// `protocol` (defaults to TCP).
    pub protocol: Protocol,
}

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
}

/// A Namespace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Namespace {
    /// Metadata.
    pub meta: ObjectMeta,
}

/// Everything the model reads about a cluster: the objects of one snapshot.
///
/// Order of the vectors does not matter: every computation sorts or indexes by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterState {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Pods.
    pub pods: Vec<Pod>,
    /// Services.
    pub services: Vec<Service>,
    /// EndpointSlices (observed; authoritative when present).
    pub endpoint_slices: Vec<EndpointSlice>,
    /// core/v1 Endpoints (read for selector-less Services without observed slices, which
    /// the mirroring controller would give slices).
    pub endpoints: Vec<Endpoints>,
    /// DaemonSets, Deployments, ReplicaSets and StatefulSets.
    pub workloads: Vec<Workload>,
    /// Namespaces.
    pub namespaces: Vec<Namespace>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube-proxy's informer label selectors (`cmd/kube-proxy/app/server.go`): both labels
    /// exclude both kinds before 1.36; per kind from 1.36 (upstream PR #134623).
    #[test]
    fn informer_filters_by_kind_and_version() {
        let meta = |key: &str| ObjectMeta {
            labels: Labels::from([(key.to_string(), "x".to_string())]),
            ..ObjectMeta::default()
        };
        let proxy_name = meta(LABEL_SERVICE_PROXY_NAME);
        let headless = meta(LABEL_HEADLESS);
        for per_kind in [false, true] {
            assert!(proxy_name.kube_proxy_exclusion(true, per_kind).is_some());
            assert!(headless.kube_proxy_exclusion(false, per_kind).is_some());
        }
        assert!(headless.kube_proxy_exclusion(true, false).is_some());
        assert!(headless.kube_proxy_exclusion(true, true).is_none());
        assert!(proxy_name.kube_proxy_exclusion(false, false).is_some());
        assert!(proxy_name.kube_proxy_exclusion(false, true).is_none());
        assert!(ObjectMeta::default().kube_proxy_exclusion(true, false).is_none());
    }
}
