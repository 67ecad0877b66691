//! kube-proxy with `--feature-gates` overrides: a default-on gate switched off changes the
//! verdict, and the route names the gate it followed.
//!
//! Upstream: `pkg/proxy/topology.go` `topologyModeFromHints` (node hints only with
//! `PreferSameTrafficDistribution`) and `CategorizeEndpoints` (the serving-terminating
//! fallback only with `ProxyTerminatingEndpoints`, before 1.30).

use locality_model::featuregate::FeatureGates;
use locality_model::matrix::{DataPlane, Matrix, MatrixConfig, MatrixRoute};
use locality_model::objects::*;
use locality_model::proxy::{Destination, ProxyMode, Source, VerdictKind};
use locality_model::version::KubeVersion;

use super::support::*;

fn state(eps: Vec<Endpoint>) -> ClusterState {
    let svc = service("shop", "web", "10.96.0.10", vec![port("http", 80, 0)]);
    let s = slice(&svc, "web-1", "http", 8080, eps);
    ClusterState {
        nodes: vec![node("node-a", Some("zone-a")), node("node-b", Some("zone-b"))],
        services: vec![svc],
        endpoint_slices: vec![s],
        ..Default::default()
    }
}

fn config(minor: u16, flags: &[&str]) -> MatrixConfig {
    let config = MatrixConfig {
        kube_version: KubeVersion::new(1, minor),
        kube_proxy_version: KubeVersion::new(1, minor),
        data_plane: DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        feature_gates: FeatureGates::from_flags(flags).expect("flags"),
        ..Default::default()
    };
    config.check_feature_gates().expect("accepted");
    config
}

fn pod_to_cluster_ip(state: &ClusterState, node: &str, config: MatrixConfig) -> MatrixRoute {
    let m = Matrix::new(state, config);
    let n = m.node_position(node).expect("node");
    m.node_routes(0, n)
        .routes
        .into_iter()
        .find(|r| r.route.source == Source::Pod && r.route.destination == Destination::ClusterIp)
        .expect("pod -> clusterIP")
}

/// A ready endpoint on `node`, hinted for that node only.
fn hinted(ip: &str, node: &str) -> Endpoint {
    let mut e = endpoint(ip, node, READY);
    e.hints = Some(EndpointHints {
        for_zones: vec![],
        for_nodes: vec![node.into()],
    });
    e
}

fn gate_trace(r: &MatrixRoute) -> Option<String> {
    r.route
        .trace
        .iter()
        .find(|t| t.step == "feature-gates")
        .map(|t| t.detail.clone())
}

/// Endpoints hinted for their own node: kube-proxy 1.34 keeps traffic on the node
/// (PreferSameNode); with `PreferSameTrafficDistribution=false` it ignores `forNodes` and
/// spreads over both.
#[test]
fn prefer_same_traffic_distribution_off_ignores_node_hints() {
    let s = state(vec![
        hinted("10.244.0.5", "node-a"),
        hinted("10.244.1.5", "node-b"),
    ]);
    let on = pod_to_cluster_ip(&s, "node-a", config(34, &[]));
    assert_eq!(on.route.endpoints.len(), 1, "{:?}", on.route.trace);
    assert!(gate_trace(&on).is_none(), "nothing overridden, nothing named");
    let off = pod_to_cluster_ip(
        &s,
        "node-a",
        config(34, &["kube-proxy:PreferSameTrafficDistribution=false"]),
    );
    assert_eq!(off.route.verdict, VerdictKind::Deliver);
    assert_eq!(off.route.endpoints.len(), 2, "{:?}", off.route.trace);
    assert_eq!(
        gate_trace(&off).as_deref(),
        Some(
            "follows feature gates set by --feature-gates, not the release defaults: kube-proxy:PreferSameTrafficDistribution=false"
        )
    );
}

/// Each node follows its own kube-proxy's version (`MatrixConfig::node_proxy_versions`, as
/// read from each Node's kubeletVersion): with endpoints hinted for their own nodes, the
/// nodes at 1.34 keep traffic on the node, the one at 1.32 (before node hints) spreads it.
/// Versions named for nodes the state does not have change nothing.
#[test]
fn each_node_follows_its_own_kube_proxy_version() {
    let mut s = state(vec![
        hinted("10.244.0.5", "node-a"),
        hinted("10.244.1.5", "node-b"),
        hinted("10.244.2.5", "node-c"),
    ]);
    s.nodes.push(node("node-c", Some("zone-a")));
    let mut c = config(34, &[]);
    for name in ["node-0", "node-b", "node-bz", "node-d"] {
        c.node_proxy_versions.insert(name.into(), KubeVersion::new(1, 32));
    }
    let endpoints = |node: &str| pod_to_cluster_ip(&s, node, c.clone()).route.endpoints.len();
    assert_eq!(endpoints("node-a"), 1);
    assert_eq!(endpoints("node-b"), 3);
    assert_eq!(endpoints("node-c"), 1);
}

/// Only a serving-terminating endpoint: kube-proxy 1.27 falls back to it; with
/// `ProxyTerminatingEndpoints=false` it has no endpoint and rejects.
#[test]
fn proxy_terminating_endpoints_off_drops_instead_of_falling_back() {
    let s = state(vec![endpoint("10.244.0.5", "node-a", rst(false, true, true))]);
    let on = pod_to_cluster_ip(&s, "node-b", config(27, &[]));
    assert_eq!(on.route.verdict, VerdictKind::Deliver);
    assert!(on.route.fallback.is_some());
    let off = pod_to_cluster_ip(
        &s,
        "node-b",
        config(27, &["kube-proxy:ProxyTerminatingEndpoints=false"]),
    );
    assert_eq!(off.route.verdict, VerdictKind::Reject);
    assert!(
        gate_trace(&off).is_some_and(|t| t.contains("kube-proxy:ProxyTerminatingEndpoints=false")),
        "{:?}",
        off.route.trace
    );
}

/// `internalTrafficPolicy: Local` on 1.25: the client on a node without an endpoint is
/// dropped; with the API server's `ServiceInternalTrafficPolicy=false` the field is dropped
/// on write and traffic goes to the other node's endpoint.
#[test]
fn service_internal_traffic_policy_off_on_the_api_server_drops_the_field() {
    let mut s = state(vec![endpoint("10.244.0.5", "node-a", READY)]);
    s.services[0].internal_traffic_policy = Some(TrafficPolicy::Local);
    let on = pod_to_cluster_ip(&s, "node-b", config(25, &[]));
    assert_eq!(on.route.verdict, VerdictKind::Drop);
    let off = pod_to_cluster_ip(
        &s,
        "node-b",
        config(25, &["kube-apiserver:ServiceInternalTrafficPolicy=false"]),
    );
    assert_eq!(off.route.verdict, VerdictKind::Deliver);
    assert!(
        gate_trace(&off).is_some_and(|t| t.contains("kube-apiserver:ServiceInternalTrafficPolicy=false")),
        "{:?}",
        off.route.trace
    );
}

/// A locked gate switched off, or a gate the release does not have, is refused.
#[test]
fn the_matrix_config_refuses_what_the_components_refuse() {
    let locked = MatrixConfig {
        kube_proxy_version: KubeVersion::new(1, 35),
        feature_gates: FeatureGates::from_flags(&["kube-proxy:PreferSameTrafficDistribution=false"]).unwrap(),
        ..Default::default()
    };
    assert!(
        locked
            .check_feature_gates()
            .unwrap_err()
            .to_string()
            .contains("locked to true since 1.35")
    );
    let mut per_node = MatrixConfig {
        kube_version: KubeVersion::new(1, 29),
        kube_proxy_version: KubeVersion::new(1, 29),
        feature_gates: FeatureGates::from_flags(&["kube-proxy:ProxyTerminatingEndpoints=true"]).unwrap(),
        ..Default::default()
    };
    assert!(per_node.check_feature_gates().is_ok());
    per_node
        .node_proxy_versions
        .insert("node-b".into(), KubeVersion::new(1, 30));
    assert!(
        per_node
            .check_feature_gates()
            .unwrap_err()
            .to_string()
            .contains("kube-proxy 1.30: unrecognized feature gate: ProxyTerminatingEndpoints")
    );
}
