//! EndpointSlice controller model (`k8s.io/endpointslice`, docs/design.md §2.1).
//!
//! From a Service, the pods its selector picks and the nodes, [`derive_endpoint_slices`]
//! produces the EndpointSlices the controller would write on a fresh sync: endpoint
//! conditions and topology fields ([`conditions`]), slices per address type and port mapping,
//! and hints: `topology-mode: Auto` ([`topologycache`]) when the annotation asks for it and the
//! `TopologyAwareHints` behaviour is on, else `trafficDistribution` ([`trafficdist`]) when
//! valid, else none (docs/upstream.md §3.1). [`recompute_hints`] runs the hint step alone
//! on observed slices, and [`hint_counts_by_zone`] summarises hints for comparisons (LOC014).
//!
//! Upstream files mirrored: `reconciler.go`, `utils.go`, `util/controller_utils.go`,
//! `trafficdist/trafficdist.go`, `topologycache/{topologycache,utils,sliceinfo,event}.go`
//! (kubernetes/endpointslice, HEAD `daa4d010`).

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};

use crate::objects::{AddressType, EndpointSlice, IpFamily, Node};

pub mod conditions;
pub mod mirroring;
mod reconciler;
pub mod sliceinfo;
pub mod topologycache;
pub mod trafficdist;

pub use conditions::{
    SkipReason, endpoint_ports, find_port, node_for_pod, pod_exclusion, pod_to_endpoint,
    should_pod_be_in_endpoints,
};
pub use reconciler::{
    MAX_ENDPOINTS_PER_SLICE, derive_endpoint_slices, hints_enabled, new_endpoint_slice, recompute_hints,
    reconcile_slice_hints, valid_traffic_distribution,
};
pub use sliceinfo::{SliceInfo, endpoint_ready};
pub use topologycache::TopologyCache;

/// Kind of a Kubernetes Event (`v1.EventTypeNormal` / `v1.EventTypeWarning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

impl EventType {
    /// Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// An Event the controller records on the Service (upstream `topologycache.EventBuilder`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ControllerEvent {
    /// `Normal` or `Warning`.
    pub event_type: EventType,
    /// Event reason, e.g. `TopologyAwareHintsDisabled`.
    pub reason: String,
    /// Event message, exactly as upstream formats it.
    pub message: String,
}

/// A selected pod the controller left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedPod {
    /// The pod's name (same namespace as the Service).
    pub pod: String,
    /// Why it is not an endpoint (for one family, or for all).
    pub reason: SkipReason,
}

/// Result of [`derive_endpoint_slices`] for one Service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Derivation {
    /// The slices, by address type (Service family order), then port mapping, then chunk.
    pub slices: Vec<EndpointSlice>,
    /// Events the controller would record on the Service, in order.
    pub events: Vec<ControllerEvent>,
    /// Pods selected but not (or not in every family) turned into endpoints.
    pub skipped: Vec<SkippedPod>,
}

/// Looks nodes up by name (the controller's `nodeLister.Get`).
///
/// Implemented for [`NodeIndex`] and for `HashMap`/`BTreeMap` keyed by `String` or `&str`
/// with `Node` or `&Node` values.
pub trait NodeLookup {
    /// The node called `name`, if known.
    fn node(&self, name: &str) -> Option<&Node>;
}

/// A name index over a cluster's nodes; build it once per cluster.
#[derive(Debug, Clone, Default)]
pub struct NodeIndex<'a> {
    by_name: HashMap<&'a str, &'a Node>,
}

impl<'a> NodeIndex<'a> {
    /// Indexes nodes by `metadata.name` (a later duplicate name wins).
    pub fn new(nodes: impl IntoIterator<Item = &'a Node>) -> Self {
        NodeIndex {
            by_name: nodes.into_iter().map(|n| (n.meta.name.as_str(), n)).collect(),
        }
    }
    /// Number of indexed nodes.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }
    /// True when no node is indexed.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

impl NodeLookup for NodeIndex<'_> {
    fn node(&self, name: &str) -> Option<&Node> {
        self.by_name.get(name).copied()
    }
}

impl<K, V, S> NodeLookup for HashMap<K, V, S>
where
    K: Borrow<str> + Hash + Eq,
    V: Borrow<Node>,
    S: BuildHasher,
{
    fn node(&self, name: &str) -> Option<&Node> {
        self.get(name).map(Borrow::borrow)
    }
}

impl<K, V> NodeLookup for BTreeMap<K, V>
where
    K: Borrow<str> + Ord,
    V: Borrow<Node>,
{
    fn node(&self, name: &str) -> Option<&Node> {
        self.get(name).map(Borrow::borrow)
    }
}

/// Number of zone hints per zone over the endpoints of `slices` that the controller counts as
/// ready (`conditions.ready == Some(true)`); an endpoint hinted for several zones counts once
/// for each. Hints of other endpoints are ignored, as both the controller and kube-proxy
/// ignore them. This is the quantity upstream's reconciler tests (and LOC014) compare.
pub fn hint_counts_by_zone(slices: &[EndpointSlice]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for ep in slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .filter(|e| endpoint_ready(e))
    {
        for zone in ep.hints.iter().flat_map(|h| &h.for_zones) {
            *counts.entry(zone.clone()).or_insert(0) += 1;
        }
    }
    counts
}

/// Number of node hints per node over the ready endpoints of `slices` (see
/// [`hint_counts_by_zone`]).
pub fn hint_counts_by_node(slices: &[EndpointSlice]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for ep in slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .filter(|e| endpoint_ready(e))
    {
        for node in ep.hints.iter().flat_map(|h| &h.for_nodes) {
            *counts.entry(node.clone()).or_insert(0) += 1;
        }
    }
    counts
}

/// Number of ready endpoints hinted for some zone other than their own (Auto donations).
pub fn cross_zone_hints(slices: &[EndpointSlice]) -> usize {
    slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .filter(|e| endpoint_ready(e))
        .filter(|e| {
            e.hints
                .as_ref()
                .is_some_and(|h| h.for_zones.iter().any(|z| Some(z.as_str()) != e.zone.as_deref()))
        })
        .count()
}

/// The EndpointSlice `addressType` for an IP family.
pub fn address_type_for(family: IpFamily) -> AddressType {
    match family {
        IpFamily::IPv4 => AddressType::IPv4,
        IpFamily::IPv6 => AddressType::IPv6,
    }
}
