//! What a case must observe, computed by the model from the state read back at probe time
//! (the Service, its EndpointSlices, the pods and the Nodes): for a client on a node (a pod,
//! or the node itself for a hostNetwork client) dialling the Service's cluster IP, or a node's
//! address at the Service's nodePort.

use std::collections::BTreeMap;

use locality_model::matrix::{Matrix, MatrixConfig};
use locality_model::objects::{ClusterState, IpFamily};
use locality_model::proxy::{Destination, Source, VerdictKind};

/// The model's expectation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "camelCase")]
pub enum Expected {
    /// Delivered, by these pods only (names, sorted).
    Deliver {
        /// The pods that may answer.
        pods: Vec<String>,
    },
    /// Dropped: the client times out.
    Drop,
    /// Rejected: connection refused.
    Reject,
    /// The model could not say (the Service or node is missing from the state read back).
    Unknown {
        /// Why.
        why: String,
    },
    /// One expectation per client node (`P`: a client on each sampled node).
    PerNode {
        /// Client node → what its client must observe.
        nodes: BTreeMap<String, Expected>,
    },
}

/// One question to the model: who dials what.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// The Service's namespace.
    pub namespace: &'a str,
    /// The Service.
    pub service: &'a str,
    /// The service port's name (`http`, `udp`).
    pub port: &'a str,
    /// The node whose kube-proxy first handles the connection: the client's for a cluster IP,
    /// the dialled node's for a nodePort.
    pub node: &'a str,
    /// The traffic source as that node sees it (`pod`, `host`, or `external` for a nodePort
    /// dialled from another node).
    pub source: Source,
    /// The destination.
    pub destination: Destination,
}

/// The model's verdict for `q` (IPv4), with the reason code.
pub fn for_route(state: &ClusterState, config: MatrixConfig, q: Query<'_>) -> (Expected, String) {
    let unknown = |why: String| (Expected::Unknown { why }, String::new());
    let matrix = Matrix::new(state, config);
    let Some(port) = matrix.ports.iter().position(|p| {
        p.service.meta.namespace == q.namespace
            && p.service.meta.name == q.service
            && p.info.port.name == q.port
            && p.info.family == IpFamily::IPv4
    }) else {
        return unknown(format!(
            "no port {} of Service {}/{} in the state read back",
            q.port, q.namespace, q.service
        ));
    };
    let Some(n) = matrix.node_position(q.node) else {
        return unknown(format!("no Node {} in the state read back", q.node));
    };
    let routes = matrix.node_routes(port, n);
    let Some(r) = routes
        .routes
        .iter()
        .find(|r| r.route.source == q.source && r.route.destination == q.destination)
    else {
        return unknown(format!(
            "no {} → {} route",
            q.source.as_str(),
            q.destination.as_str()
        ));
    };
    let reason = r.route.reason.as_str().to_string();
    let expected = match r.route.verdict {
        VerdictKind::Deliver => {
            let mut pods: Vec<String> = r
                .route
                .endpoints
                .iter()
                .filter_map(|&i| matrix.ports[port].endpoints[i].target.clone())
                .collect();
            pods.sort();
            pods.dedup();
            Expected::Deliver { pods }
        }
        VerdictKind::Drop => Expected::Drop,
        VerdictKind::Reject => Expected::Reject,
        VerdictKind::NotProxied => Expected::Unknown {
            why: "kube-proxy writes no rule for this Service".into(),
        },
    };
    (expected, reason)
}

/// The model's verdict for `q` if the kube-proxy on `q.node` did not know its node by the
/// Node's name (`--hostname-override` unset or wrong): asked for a node of another name that
/// carries no label, so no endpoint is local and no zone is known to it.
pub fn for_route_as_unnamed_node(state: &ClusterState, config: MatrixConfig, q: Query<'_>) -> Expected {
    let mut state = state.clone();
    let alias = format!("{}.kube-proxy-hostname", q.node);
    let mut node = state
        .nodes
        .iter()
        .find(|n| n.meta.name == q.node)
        .cloned()
        .unwrap_or_default();
    node.meta.name = alias.clone();
    node.meta.labels.clear();
    state.nodes.push(node);
    for_route(&state, config, Query { node: &alias, ..q }).0
}

/// The model's verdict for `q` with `q.node`'s kube-proxy at `version`.
pub fn for_route_at_version(
    state: &ClusterState,
    mut config: MatrixConfig,
    q: Query<'_>,
    version: locality_model::version::KubeVersion,
) -> Expected {
    config.node_proxy_versions.insert(q.node.to_string(), version);
    for_route(state, config, q).0
}
