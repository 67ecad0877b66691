//! What a case must observe, computed by the model from the state read back at probe time
//! (the Service, its EndpointSlices, the pods and the Nodes), for a pod client on a node
//! dialling the Service's cluster IP.

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
}

/// The model's verdict for a pod on `node` dialling `namespace/service` port `http` (IPv4)
/// at its cluster IP, with the reason code.
pub fn for_cluster_ip(
    state: &ClusterState,
    config: MatrixConfig,
    namespace: &str,
    service: &str,
    node: &str,
) -> (Expected, String) {
    let matrix = Matrix::new(state, config);
    let Some(port) = matrix.ports.iter().position(|p| {
        p.service.meta.namespace == namespace
            && p.service.meta.name == service
            && p.info.port.name == "http"
            && p.info.family == IpFamily::IPv4
    }) else {
        return (
            Expected::Unknown {
                why: format!("no port http of Service {namespace}/{service} in the state read back"),
            },
            String::new(),
        );
    };
    let Some(n) = matrix.node_position(node) else {
        return (
            Expected::Unknown {
                why: format!("no Node {node} in the state read back"),
            },
            String::new(),
        );
    };
    let routes = matrix.node_routes(port, n);
    let Some(r) = routes
        .routes
        .iter()
        .find(|r| r.route.source == Source::Pod && r.route.destination == Destination::ClusterIp)
    else {
        return (
            Expected::Unknown {
                why: "no pod → clusterIP route".into(),
            },
            String::new(),
        );
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
