//! The Kubernetes objects the model reads, reduced to the fields that decide routing.
//!
//! These are not the full API types: ingest (files, a live cluster, the simulated
//! cluster) fills them from `k8s-openapi` objects or lean wire structs, so the model
//! stays pure and fast. Field names follow the Kubernetes API (`nodeName`, `podIPs`,
//! `internalTrafficPolicy`…) in Rust case. Every object keeps an [`Origin`] (in its [`ObjectMeta`]) so that
//! findings can point back at the file and line (or the live object) it came from.

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
/// Annotation `locality.dev/ignore` (this tool's own): the audit rules a Service or
/// Namespace accepts on purpose (`"LOC004,LOC011"` or `"*"`).
pub const ANNOTATION_LOCALITY_IGNORE: &str = "locality.dev/ignore";
/// Annotation `locality.dev/ignore-reason` (this tool's own): why.
pub const ANNOTATION_LOCALITY_IGNORE_REASON: &str = "locality.dev/ignore-reason";
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

mod labels;
pub use labels::{Iter as LabelsIter, Labels};

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

mod endpoints;
mod node;
mod pod;
mod service;
mod workload;

pub use endpoints::*;
pub use node::*;
pub use pod::*;
pub use service::*;
pub use workload::*;

/// A Namespace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Namespace {
    /// Metadata.
    pub meta: ObjectMeta,
}

/// The one `kubectl get` that dumps every kind a [`ClusterState`] holds, as every doc and
/// message gives it. Endpoints are left out: a cluster's EndpointSlice mirroring controller
/// already gave a selector-less Service's Endpoints their slices (they are read when a file
/// has them and no slices), and kubectl warns that v1 Endpoints are deprecated.
pub const DUMP_COMMAND: &str = "kubectl get namespaces,nodes,pods,services,endpointslices,daemonsets,deployments,replicasets,statefulsets,poddisruptionbudgets -A -o json > dump.json";

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
    /// PodDisruptionBudgets (read by the simulation's drains, not by the routing model).
    pub pod_disruption_budgets: Vec<PodDisruptionBudget>,
}

impl ClusterState {
    /// Appends every object of `other`, kind by kind, keeping both orders (a kind this state
    /// has none of takes `other`'s vector as it is). Every caller that merges states goes
    /// through here, so a kind added to `ClusterState` cannot be dropped by one of them.
    pub fn append(&mut self, other: ClusterState) {
        fn extend<T>(to: &mut Vec<T>, from: Vec<T>) {
            if to.is_empty() && to.capacity() < from.len() {
                *to = from;
            } else {
                to.extend(from);
            }
        }
        let ClusterState {
            nodes,
            pods,
            services,
            endpoint_slices,
            endpoints,
            workloads,
            namespaces,
            pod_disruption_budgets,
        } = other;
        extend(&mut self.nodes, nodes);
        extend(&mut self.pods, pods);
        extend(&mut self.services, services);
        extend(&mut self.endpoint_slices, endpoint_slices);
        extend(&mut self.endpoints, endpoints);
        extend(&mut self.workloads, workloads);
        extend(&mut self.namespaces, namespaces);
        extend(&mut self.pod_disruption_budgets, pod_disruption_budgets);
    }

    /// The metadata of every object, kind by kind.
    pub fn metas_mut(&mut self) -> impl Iterator<Item = &mut ObjectMeta> {
        let ClusterState {
            nodes,
            pods,
            services,
            endpoint_slices,
            endpoints,
            workloads,
            namespaces,
            pod_disruption_budgets,
        } = self;
        let metas = nodes.iter_mut().map(|o| &mut o.meta);
        let metas = metas.chain(pods.iter_mut().map(|o| &mut o.meta));
        let metas = metas.chain(services.iter_mut().map(|o| &mut o.meta));
        let metas = metas.chain(endpoint_slices.iter_mut().map(|o| &mut o.meta));
        let metas = metas.chain(endpoints.iter_mut().map(|o| &mut o.meta));
        let metas = metas.chain(workloads.iter_mut().map(|o| &mut o.meta));
        let metas = metas.chain(namespaces.iter_mut().map(|o| &mut o.meta));
        metas.chain(pod_disruption_budgets.iter_mut().map(|o| &mut o.meta))
    }

    /// True when it holds no object of any kind.
    pub fn is_empty(&self) -> bool {
        let ClusterState {
            nodes,
            pods,
            services,
            endpoint_slices,
            endpoints,
            workloads,
            namespaces,
            pod_disruption_budgets,
        } = self;
        nodes.is_empty()
            && pods.is_empty()
            && services.is_empty()
            && endpoint_slices.is_empty()
            && endpoints.is_empty()
            && workloads.is_empty()
            && namespaces.is_empty()
            && pod_disruption_budgets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One object of every kind, each named `name`.
    fn one_of_each(name: &str) -> ClusterState {
        let meta = ObjectMeta {
            name: name.to_string(),
            ..ObjectMeta::default()
        };
        ClusterState {
            nodes: vec![Node {
                meta: meta.clone(),
                ..Node::default()
            }],
            pods: vec![Pod {
                meta: meta.clone(),
                ..Pod::default()
            }],
            services: vec![Service {
                meta: meta.clone(),
                ..Service::default()
            }],
            endpoint_slices: vec![EndpointSlice {
                meta: meta.clone(),
                address_type: AddressType::IPv4,
                endpoints: Vec::new(),
                ports: Vec::new(),
            }],
            endpoints: vec![Endpoints {
                meta: meta.clone(),
                ..Endpoints::default()
            }],
            workloads: vec![Workload::new(WorkloadKind::DaemonSet, meta.clone())],
            namespaces: vec![Namespace { meta: meta.clone() }],
            pod_disruption_budgets: vec![PodDisruptionBudget {
                meta,
                ..PodDisruptionBudget::default()
            }],
        }
    }

    /// `append` keeps every kind of both states, in order, and `metas_mut` visits every
    /// object: the live reader and the parallel file reader merge through them, and each lost
    /// PodDisruptionBudgets once when they listed the kinds by hand.
    #[test]
    fn append_and_metas_cover_every_kind() {
        let mut state = ClusterState::default();
        assert!(state.is_empty());
        state.append(one_of_each("a"));
        state.append(one_of_each("b"));
        assert!(!state.is_empty());
        let names: Vec<String> = state.metas_mut().map(|m| m.name.clone()).collect();
        assert_eq!(
            names,
            "ab".repeat(8).chars().map(String::from).collect::<Vec<_>>()
        );
        for meta in state.metas_mut() {
            meta.name.push('!');
        }
        assert_eq!(state.pod_disruption_budgets[1].meta.name, "b!");
        assert_eq!(state.namespaces[0].meta.name, "a!");
    }

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
