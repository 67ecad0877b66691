//! The routing matrix over a whole cluster: every (service port, IP family, node, source,
//! destination) and its verdict.
//!
//! [`Matrix::new`] does the per-cluster work once: nodes sorted and grouped, the Service
//! ports with their endpoints (observed EndpointSlices; else, for a selector-less Service,
//! mirrored from its Endpoints object by the mirroring controller model; else derived from
//! pods by the EndpointSlice controller model). Then [`Matrix::node_routes`] gives the full routes of one
//! node (the `-o json` matrix, nodes × ports by nature), and [`Matrix::summary`] counts
//! nodes per verdict in time proportional to endpoints + ports × zones: nodes that neither
//! host an endpoint nor are named in a node hint categorize alike within a zone, so one
//! representative answers for all of them.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use crate::endpointslice;
use crate::endpointslice::mirroring::{self, NotMirrored, SkippedAddress};
use crate::featuregate::{FeatureGates, GateError};
use crate::features::{ControlPlaneFeatures, ProxyFeatures};
use crate::objects::{ClusterState, EndpointSlice, Endpoints, Node, Pod, Service};
use crate::proxy::duplicates::DuplicateEndpoint;
use crate::proxy::{
    CategorizeIndex, CategorizedEndpoints, CategorySignature, Destination, ProxyEndpoint, ProxyMode,
    ProxyNode, Route, ServicePortInfo, Source, VerdictKind, endpoints_for_port,
};
use crate::selector::service_selects;
use crate::version::KubeVersion;

mod assumptions;
mod inputs;
mod nodes;
mod routes;
mod summary;

pub use assumptions::{Assumed, VersionSensitivity};
pub use inputs::reads_pods;
use inputs::{PodIndex, destinations, mirror_endpoints, slices_by_service};
use nodes::{Features, NodeGroup};
pub use nodes::{MatrixNode, NodeTable};
use routes::Detail;
pub use summary::{PortSummary, VerdictCounts};

/// Which data plane implements Services on the nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataPlane {
    /// kube-proxy; `None` when its mode is unknown (the matrix then marks cells where the modes disagree).
    KubeProxy(Option<ProxyMode>),
    /// A kube-proxy replacement (Cilium, Calico eBPF, …): the contract is kube-proxy's, the
    /// failure signature is not asserted.
    Other(String),
    /// Nothing is known about the data plane.
    Unknown,
}

impl DataPlane {
    /// `kube-proxy`, `other` or `unknown`.
    pub fn kind(&self) -> &'static str {
        match self {
            DataPlane::KubeProxy(_) => "kube-proxy",
            DataPlane::Other(_) => "other",
            DataPlane::Unknown => "unknown",
        }
    }
    /// The modes to evaluate: the known one, or all three.
    pub fn modes(&self) -> Vec<ProxyMode> {
        match self {
            DataPlane::KubeProxy(Some(m)) => vec![*m],
            DataPlane::Other(_) => vec![ProxyMode::Iptables],
            _ => ProxyMode::ALL.to_vec(),
        }
    }
}

impl std::fmt::Display for DataPlane {
    /// `kube-proxy (iptables)`, `kube-proxy (mode unknown)`, `other (cilium)`, `unknown`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataPlane::KubeProxy(Some(m)) => write!(f, "kube-proxy ({})", m.as_str()),
            DataPlane::KubeProxy(None) => f.write_str("kube-proxy (mode unknown)"),
            DataPlane::Other(name) => write!(f, "other ({name})"),
            DataPlane::Unknown => f.write_str("unknown"),
        }
    }
}

/// Inputs of the matrix besides the objects.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixConfig {
    /// API server and controller manager version.
    pub kube_version: KubeVersion,
    /// kube-proxy version of nodes without an override.
    pub kube_proxy_version: KubeVersion,
    /// Per-node kube-proxy versions (e.g. from each Node's kubeletVersion).
    pub node_proxy_versions: BTreeMap<String, KubeVersion>,
    /// Data plane.
    pub data_plane: DataPlane,
    /// Derive EndpointSlices from pods even where observed slices exist.
    pub derive: bool,
    /// `--feature-gates` overrides per component (checked with
    /// [`MatrixConfig::check_feature_gates`]; unchecked overrides of gates that cannot be set
    /// at a component's version have no effect).
    pub feature_gates: FeatureGates,
}

impl MatrixConfig {
    /// Refuses the feature-gate overrides each component would refuse at its version: the
    /// API server and controller manager at `kube_version`, kube-proxy at
    /// `kube_proxy_version` and every per-node version.
    pub fn check_feature_gates(&self) -> Result<(), GateError> {
        ControlPlaneFeatures::with_gates(self.kube_version, &self.feature_gates)?;
        ProxyFeatures::with_gates(self.kube_proxy_version, &self.feature_gates)?;
        for v in self.node_proxy_versions.values() {
            ProxyFeatures::with_gates(*v, &self.feature_gates)?;
        }
        Ok(())
    }
}

impl Default for MatrixConfig {
    fn default() -> Self {
        MatrixConfig {
            kube_version: KubeVersion::NEWEST,
            kube_proxy_version: KubeVersion::NEWEST,
            node_proxy_versions: BTreeMap::new(),
            data_plane: DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
            derive: false,
            feature_gates: FeatureGates::default(),
        }
    }
}

/// Where a service port's endpoints came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum EndpointSource {
    /// Observed EndpointSlices (what kube-proxy reads).
    EndpointSlices,
    /// Derived from pods by the EndpointSlice controller model.
    #[serde(rename = "derived")]
    Derived,
    /// Mirrored from the Service's core/v1 Endpoints object by the EndpointSlice mirroring
    /// controller model (a selector-less Service without observed slices).
    #[serde(rename = "mirrored")]
    Mirrored,
}

/// One service port in one IP family, with its endpoints.
#[derive(Debug, Clone)]
pub struct PortEntry<'s> {
    /// The Service.
    pub service: &'s Service,
    /// kube-proxy's view of the port (built with the default kube-proxy version).
    pub info: ServicePortInfo,
    /// The endpoints kube-proxy would read, sorted by address (one canonical copy of an
    /// address found in several slices).
    pub endpoints: Vec<ProxyEndpoint>,
    /// Addresses found in several slices with differing copies: which one kube-proxy keeps
    /// depends on its version and node ([`crate::proxy::duplicates`]).
    pub duplicates: Vec<DuplicateEndpoint>,
    /// Where they came from.
    pub endpoint_source: EndpointSource,
    /// Destinations this port has (clusterIP always, others when configured).
    pub destinations: Vec<Destination>,
    /// Which version-dependent rules its routes may follow ([`VersionSensitivity`]).
    pub sensitivity: VersionSensitivity,
}

impl PortEntry<'_> {
    /// A load balancer VIP behind `loadBalancerSourceRanges`: the node's own traffic to it is
    /// decided by each node's address, so nodes do not route alike within a group.
    pub fn firewalled(&self) -> bool {
        self.destinations.contains(&Destination::LoadBalancer)
            && !self.info.load_balancer_source_ranges.is_empty()
    }

    /// The source ranges a route is limited to, as written (`applies`: the route is behind
    /// kube-proxy's load-balancer firewall, [`crate::proxy::Route::source_ranges`]); empty
    /// otherwise.
    pub fn source_ranges(&self, applies: bool) -> Vec<String> {
        if !applies {
            return Vec::new();
        }
        self.info
            .load_balancer_source_ranges
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

/// A route with, when the proxy mode is unknown and the modes disagree, each mode's route.
#[derive(Debug, Clone)]
pub struct MatrixRoute {
    /// The route (the common verdict, or the iptables one when the modes disagree).
    pub route: Route,
    /// Set when the modes disagree: every mode's route.
    pub by_mode: Option<Vec<(ProxyMode, Route)>>,
}

/// The routes of one node for one port.
#[derive(Debug, Clone)]
pub struct NodeRoutes {
    /// Routes, in source then destination order.
    pub routes: Vec<MatrixRoute>,
    /// The categorization used (for `explain`).
    pub categorized: CategorizedEndpoints<'static>,
}

/// Events and notes produced while building the matrix.
#[derive(Debug, Clone, Default)]
pub struct MatrixNotes {
    /// Controller events from derivation, per Service (`ns/name`).
    pub controller_events: Vec<(String, endpointslice::ControllerEvent)>,
    /// What the mirroring controller model did with an Endpoints object, per Endpoints
    /// (`ns/name`, that of its Service), when there is something to say: it was not mirrored
    /// (other than because the Service has a selector), or addresses were left out.
    pub mirroring: Vec<(String, MirroringNote)>,
}

/// What the EndpointSlice mirroring controller model did with one Endpoints object
/// ([`mirroring::mirror`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MirroringNote {
    /// Why it was not mirrored, if so: the Service then has no endpoints of its own.
    pub not_mirrored: Option<NotMirrored>,
    /// Addresses no mirrored slice carries, in the order the controller meets them.
    pub skipped: Vec<SkippedAddress>,
    /// The Warning Events the controller records on the Endpoints object.
    pub events: Vec<endpointslice::ControllerEvent>,
}

/// The routing matrix of a cluster state.
pub struct Matrix<'s> {
    /// The configuration used.
    pub config: MatrixConfig,
    /// Nodes, sorted by name.
    pub nodes: Vec<MatrixNode<'s>>,
    /// Service ports, sorted by namespace, name, port name, protocol, number, family.
    pub ports: Vec<PortEntry<'s>>,
    /// Notes.
    pub notes: MatrixNotes,
    /// What the caller assumed rather than read ([`Matrix::assuming`]); routes that depend on
    /// it name the missing fact and are at most `inferred`.
    pub assumed: Assumed,
    /// The API server's and controller manager's behaviour (with `--feature-gates`).
    pub control_plane: ControlPlaneFeatures,
    default_proxy: ProxyFeatures,
    /// Groups of nodes that categorize alike unless special: (zone, proxy features, windows).
    groups: Cow<'s, [NodeGroup]>,
    /// Group of each node (index into `groups`).
    node_group: Cow<'s, [usize]>,
}

/// A name no Node or hint can have: the representative of a group's ordinary nodes.
const ANONYMOUS_NODE: &str = "\u{0}anonymous-node";

impl<'s> Matrix<'s> {
    /// Builds the matrix inputs for `state`.
    pub fn new(state: &'s ClusterState, config: MatrixConfig) -> Self {
        let features = Features::of(&config);
        let nodes: Vec<MatrixNode<'s>> = nodes::matrix_nodes(&state.nodes, &config, features)
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        let (groups, node_group) = nodes::groups(nodes.iter());
        Self::build(
            state,
            config,
            features,
            nodes,
            Cow::Owned(groups),
            Cow::Owned(node_group),
        )
    }

    /// The same as [`Matrix::new`] with `table`'s configuration, taking the Nodes' order,
    /// zones, OS, kube-proxy behaviour and groups from `table`, which must have been built
    /// from `state.nodes` (the same Nodes in the same order; a table of another length is
    /// not used).
    pub fn with_nodes(state: &'s ClusterState, table: &'s NodeTable) -> Self {
        if table.len() != state.nodes.len() {
            return Self::new(state, table.config.clone());
        }
        let nodes = table.matrix_nodes(&state.nodes);
        debug_assert!(
            nodes.windows(2).all(|w| w[0].name() < w[1].name()),
            "a node table used with other Nodes than its own"
        );
        Self::build(
            state,
            table.config.clone(),
            table.features,
            nodes,
            Cow::Borrowed(&table.groups),
            Cow::Borrowed(&table.node_group),
        )
    }

    /// The rest of the constructors: the Service ports with their endpoints.
    fn build(
        state: &'s ClusterState,
        config: MatrixConfig,
        features: Features,
        nodes: Vec<MatrixNode<'s>>,
        groups: Cow<'s, [NodeGroup]>,
        node_group: Cow<'s, [usize]>,
    ) -> Self {
        let Features {
            control_plane,
            default_proxy,
        } = features;
        // Observed slices per Service.
        let slices_by_service = slices_by_service(state);
        // Endpoints objects by namespace and name (that of their Service).
        let endpoints_by_name: HashMap<(&str, &str), &Endpoints> = state
            .endpoints
            .iter()
            .map(|e| ((e.meta.namespace.as_str(), e.meta.name.as_str()), e))
            .collect();
        // Built on first use: dumps with observed slices never need them.
        let mut pods: Option<PodIndex<'s>> = None;
        let mut derivation: Option<(BTreeMap<&str, &Node>, endpointslice::TopologyCache)> = None;
        let mut notes = MatrixNotes::default();

        let mut services: Vec<&Service> = state.services.iter().collect();
        services.sort_by(|a, b| (&a.meta.namespace, &a.meta.name).cmp(&(&b.meta.namespace, &b.meta.name)));
        let mut ports = Vec::new();
        for svc in services {
            let key = (svc.meta.namespace.as_str(), svc.meta.name.as_str());
            let observed = slices_by_service
                .get(&key)
                .filter(|s| !s.is_empty() && !config.derive);
            // Without observed slices of its own, a selector-less Service gets the slices the
            // mirroring controller writes from its Endpoints object (`syncEndpoints`); a
            // Service with a selector is the EndpointSlice controller's (derived below).
            let mirrored = match (observed, endpoints_by_name.get(&key)) {
                (None, Some(endpoints)) => mirror_endpoints(svc, endpoints, &mut notes),
                _ => None,
            };
            let (slices, source): (Vec<EndpointSlice>, EndpointSource) = match (observed, mirrored) {
                (Some(_), _) => (Vec::new(), EndpointSource::EndpointSlices),
                (None, Some(slices)) => (slices, EndpointSource::Mirrored),
                (None, None) => {
                    let selected = pods.get_or_insert_with(|| PodIndex::new(&state.pods)).select(svc);
                    let (node_by_name, topology) = derivation.get_or_insert_with(|| {
                        (
                            state.nodes.iter().map(|n| (n.meta.name.as_str(), n)).collect(),
                            endpointslice::TopologyCache::from_nodes(&state.nodes),
                        )
                    });
                    let d = endpointslice::derive_endpoint_slices(
                        svc,
                        &selected,
                        &*node_by_name,
                        topology,
                        &control_plane,
                    );
                    let name = format!("{}/{}", svc.meta.namespace, svc.meta.name);
                    notes
                        .controller_events
                        .extend(d.events.into_iter().map(|e| (name.clone(), e)));
                    (d.slices, EndpointSource::Derived)
                }
            };
            // kube-proxy's informers never deliver slices labelled headless (and, before 1.36,
            // service-proxy-name; the EndpointSlice controller copies the Service's labels
            // onto its slices, the mirroring controller the Endpoints'). Judged at the default
            // kube-proxy version.
            let all_slices: Vec<&EndpointSlice> = match observed {
                Some(s) => s.clone(),
                None => slices.iter().collect(),
            };
            let slice_refs: Vec<&EndpointSlice> = all_slices
                .iter()
                .copied()
                .filter(|s| {
                    s.meta
                        .kube_proxy_exclusion(false, default_proxy.informer_filters_per_kind)
                        .is_none()
                })
                .collect();
            let mut svc_ports: Vec<&crate::objects::ServicePort> = svc.ports.iter().collect();
            svc_ports.sort();
            for port in svc_ports {
                for family in svc.families() {
                    let info = ServicePortInfo::new(svc, port, family, &default_proxy);
                    let read = endpoints_for_port(slice_refs.iter().copied(), port, family);
                    let destinations = destinations(&info);
                    let sensitivity = VersionSensitivity::of(
                        svc,
                        &all_slices,
                        &read.endpoints,
                        !read.duplicates.is_empty(),
                        source,
                    );
                    ports.push(PortEntry {
                        service: svc,
                        info,
                        endpoints: read.endpoints,
                        duplicates: read.duplicates,
                        endpoint_source: source,
                        destinations,
                        sensitivity,
                    });
                }
            }
        }
        Matrix {
            config,
            nodes,
            ports,
            notes,
            assumed: Assumed::default(),
            control_plane,
            default_proxy,
            groups,
            node_group,
        }
    }

    /// The same matrix, with what the caller assumed rather than read: routes whose answer
    /// depends on it name the missing fact ([`crate::proxy::MissingFact`]).
    pub fn assuming(mut self, assumed: Assumed) -> Self {
        self.assumed = assumed;
        self
    }

    /// kube-proxy's behaviour on nodes without a version of their own (with
    /// `--feature-gates`).
    pub fn default_proxy(&self) -> ProxyFeatures {
        self.default_proxy
    }

    /// The modes evaluated.
    fn modes(&self) -> Vec<ProxyMode> {
        self.config.data_plane.modes()
    }

    fn index_for<'p>(
        &self,
        entry: &'p PortEntry<'_>,
        proxy: &ProxyFeatures,
    ) -> (ServicePortInfo, CategorizeIndex<'p>) {
        let info = self.info_for(entry, proxy);
        let endpoints: &'p [ProxyEndpoint] = &entry.endpoints;
        let idx = CategorizeIndex::new(endpoints, &info, proxy);
        (info, idx)
    }

    /// The port info at a kube-proxy version (it depends on it only through ITP support).
    fn info_for(&self, entry: &PortEntry<'_>, proxy: &ProxyFeatures) -> ServicePortInfo {
        if *proxy == self.default_proxy {
            entry.info.clone()
        } else {
            ServicePortInfo::new(entry.service, &entry.info.port, entry.info.family, proxy)
        }
    }

    /// The routes of node `node` (index into [`Matrix::nodes`]) and its categorization, from
    /// the port's index at the node's kube-proxy features.
    fn routes_for<'i>(
        &self,
        entry: &PortEntry<'_>,
        info: &ServicePortInfo,
        idx: &'i CategorizeIndex<'_>,
        node: usize,
        detail: Detail,
    ) -> (Vec<MatrixRoute>, CategorizedEndpoints<'i>) {
        let n = &self.nodes[node];
        let cat = idx.categorize(ProxyNode {
            name: n.name(),
            zone: n.zone,
        });
        let node_ip = n.ip(info.family);
        let facts = routes::NodeFacts {
            proxy: &n.proxy,
            ip: node_ip,
            windows: n.windows,
        };
        let routes = self.routes_of(entry, info, &cat, facts, detail);
        (routes, cat)
    }

    /// All routes of `node` (index into [`Matrix::nodes`]) for port `port` (index into [`Matrix::ports`]).
    pub fn node_routes(&self, port: usize, node: usize) -> NodeRoutes {
        self.each_node(port, Some(&[node]), Detail::FULL, |routes, cat| NodeRoutes {
            routes,
            categorized: cat.into_owned(),
        })
        .pop()
        .map(|(_, r)| r)
        .expect("one node asked, one answered")
    }

    /// Routes of every node (in [`Matrix::nodes`] order, restricted to `nodes` when given) for one port.
    pub fn port_routes(&self, port: usize, nodes: Option<&[usize]>) -> Vec<(usize, NodeRoutes)> {
        self.each_node(port, nodes, Detail::FULL, |routes, cat| NodeRoutes {
            routes,
            categorized: cat.into_owned(),
        })
    }

    /// The route from `source` to `destination` of every node (in [`Matrix::nodes`] order,
    /// restricted to `nodes` when given) for one port: the route [`Matrix::port_routes`]
    /// gives for that (source, destination), with an empty trace (no text is built), or
    /// `None` when the port has no such destination. For callers that read only verdicts and
    /// endpoints, over many nodes and many times (a simulation's steps).
    pub fn port_route(
        &self,
        port: usize,
        nodes: Option<&[usize]>,
        source: Source,
        destination: Destination,
    ) -> Vec<(usize, Option<MatrixRoute>)> {
        let detail = Detail {
            explain: false,
            only: Some((source, destination)),
        };
        self.each_node(port, nodes, detail, |routes, _| routes.into_iter().next())
    }

    /// `make` of the routes (as `detail` asks) and the categorization of every node (restricted
    /// to `nodes`) for one port: one categorization index per kube-proxy behaviour met.
    fn each_node<T>(
        &self,
        port: usize,
        nodes: Option<&[usize]>,
        detail: Detail,
        mut make: impl FnMut(Vec<MatrixRoute>, CategorizedEndpoints<'_>) -> T,
    ) -> Vec<(usize, T)> {
        let entry = &self.ports[port];
        let all: Vec<usize>;
        let which = match nodes {
            Some(n) => n,
            None => {
                all = (0..self.nodes.len()).collect();
                &all
            }
        };
        let mut out = Vec::with_capacity(which.len());
        if !entry.duplicates.is_empty() {
            for &i in which {
                let n = &self.nodes[i];
                let node = ProxyNode {
                    name: n.name(),
                    zone: n.zone,
                };
                let node_ip = n.ip(entry.info.family);
                let r = self.routes_with_duplicates(entry, &n.proxy, node, node_ip, n.windows, detail);
                out.push((i, make(r.routes, r.categorized)));
            }
            return out;
        }
        let mut cache: Vec<(ProxyFeatures, ServicePortInfo, CategorizeIndex<'_>)> = Vec::new();
        for &i in which {
            let n = &self.nodes[i];
            let pos = match cache.iter().position(|(p, _, _)| *p == n.proxy) {
                Some(p) => p,
                None => {
                    let (info, idx) = self.index_for(entry, &n.proxy);
                    cache.push((n.proxy, info, idx));
                    cache.len() - 1
                }
            };
            let (_, info, idx) = &cache[pos];
            let (routes, cat) = self.routes_for(entry, info, idx, i, detail);
            out.push((i, make(routes, cat)));
        }
        out
    }

    /// Index of a node by name.
    pub fn node_position(&self, name: &str) -> Option<usize> {
        // Nodes are sorted by name, and names are unique in the API.
        self.nodes.binary_search_by(|n| n.name().cmp(name)).ok()
    }
}
