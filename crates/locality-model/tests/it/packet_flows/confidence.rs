//! Confidence that degrades with a named reason: a route whose answer follows a rule that
//! changed across releases (docs/semantics.md "Version history"), or differs between proxy
//! modes, loses `upstream-test`/`source-read` when the input does not give the version or
//! mode it depends on, and names the missing fact; routes that do not depend on it keep
//! their confidence.

use locality_model::matrix::{Assumed, DataPlane, Matrix, MatrixConfig, MatrixRoute};
use locality_model::objects::*;
use locality_model::proxy::{Confidence, Destination, MissingFact, ProxyMode, Source, VerdictKind};
use locality_model::version::KubeVersion;

use super::support::*;

const EVERYTHING: Assumed = Assumed {
    kube_proxy_version: true,
    kube_version: true,
    proxy_mode: true,
};

fn nodes3() -> Vec<Node> {
    vec![
        node("node-a", Some("zone-a")),
        node("node-b", Some("zone-b")),
        node("node-c", Some("zone-c")),
    ]
}

/// A ClusterIP Service `web` with the given endpoints in one observed slice.
fn observed(edit: impl FnOnce(&mut Service), eps: Vec<Endpoint>) -> ClusterState {
    let mut svc = service("shop", "web", "10.96.0.10", vec![port("http", 80, 0)]);
    edit(&mut svc);
    let s = slice(&svc, "web-1", "http", 8080, eps);
    ClusterState {
        nodes: nodes3(),
        services: vec![svc],
        endpoint_slices: vec![s],
        ..Default::default()
    }
}

fn pod_to_cluster_ip(
    state: &ClusterState,
    node: &str,
    config: MatrixConfig,
    assumed: Assumed,
) -> MatrixRoute {
    let m = Matrix::new(state, config).assuming(assumed);
    let n = m.node_position(node).expect("node");
    m.node_routes(0, n)
        .routes
        .into_iter()
        .find(|r| r.route.source == Source::Pod && r.route.destination == Destination::ClusterIp)
        .expect("pod -> clusterIP")
}

fn iptables() -> MatrixConfig {
    MatrixConfig {
        data_plane: DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        ..Default::default()
    }
}

/// The serving-terminating fallback exists from kube-proxy 1.26: a route that uses it depends
/// on the version; assumed, it is `inferred` and names `kube-proxy-version`; given, it is not.
#[test]
fn an_assumed_kube_proxy_version_lowers_a_fallback_route() {
    let state = observed(
        |_| {},
        vec![endpoint("10.244.0.5", "node-a", rst(false, true, true))],
    );
    let given = pod_to_cluster_ip(&state, "node-b", iptables(), Assumed::default()).route;
    assert!(given.fallback.is_some());
    assert_eq!(given.confidence, Confidence::UpstreamTest);
    assert!(given.missing.is_empty());
    let assumed = pod_to_cluster_ip(&state, "node-b", iptables(), EVERYTHING).route;
    assert_eq!(
        assumed.verdict, given.verdict,
        "the verdict itself does not change"
    );
    assert_eq!(assumed.confidence, Confidence::Inferred);
    assert!(assumed.missing.contains(MissingFact::KubeProxyVersion));
    assert!(
        assumed
            .trace
            .iter()
            .any(|t| t.step == "confidence" && t.detail.contains("--kube-proxy-version"))
    );
}

/// Assumed older than 1.26, the same endpoints are rejected; that answer depends on the
/// version too.
#[test]
fn an_assumed_old_kube_proxy_without_the_fallback_is_lowered_too() {
    let state = observed(
        |_| {},
        vec![endpoint("10.244.0.5", "node-a", rst(false, true, true))],
    );
    let config = MatrixConfig {
        kube_proxy_version: KubeVersion::new(1, 25),
        ..iptables()
    };
    let r = pod_to_cluster_ip(&state, "node-b", config, EVERYTHING).route;
    assert_eq!(r.verdict, VerdictKind::Reject);
    assert!(r.missing.contains(MissingFact::KubeProxyVersion));
}

/// Ready endpoints without hints, labels or duplicates: every supported release answers
/// alike, so nothing assumed matters and the confidence stays.
#[test]
fn a_version_independent_route_keeps_its_confidence() {
    let state = observed(|_| {}, vec![endpoint("10.244.0.5", "node-a", READY)]);
    let r = pod_to_cluster_ip(&state, "node-b", iptables(), EVERYTHING).route;
    assert_eq!(r.confidence, Confidence::UpstreamTest);
    assert!(r.missing.is_empty());
}

/// Hints are read from 1.24 (zones), without the annotation from 1.31: a cluster-set route
/// over hinted endpoints depends on the version; an ITP Local route (hints never filter the
/// local set) does not.
#[test]
fn hints_make_cluster_routes_version_dependent_but_not_local_ones() {
    let hinted = |ip: &str, node: &str, zone: &str| {
        let mut e = endpoint(ip, node, READY);
        e.hints = Some(EndpointHints {
            for_zones: vec![zone.into()],
            for_nodes: vec![],
        });
        e
    };
    let eps = vec![
        hinted("10.244.0.5", "node-a", "zone-a"),
        hinted("10.244.1.5", "node-b", "zone-b"),
    ];
    let cluster = observed(|_| {}, eps.clone());
    let r = pod_to_cluster_ip(&cluster, "node-a", iptables(), EVERYTHING).route;
    assert!(r.missing.contains(MissingFact::KubeProxyVersion), "{:?}", r.trace);
    let local = observed(|s| s.internal_traffic_policy = Some(TrafficPolicy::Local), eps);
    let config = MatrixConfig {
        data_plane: DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        ..Default::default()
    };
    let r = pod_to_cluster_ip(
        &local,
        "node-a",
        config,
        Assumed {
            proxy_mode: false,
            ..EVERYTHING
        },
    )
    .route;
    assert_eq!(r.verdict, VerdictKind::Deliver);
    assert!(r.missing.is_empty(), "{:?}", r.missing);
}

/// ITP Local without a local endpoint: iptables and nftables drop, ipvs rejects (no real
/// servers). With the mode assumed, the route names `proxy-mode` and lists ipvs' outcome;
/// with ITP Cluster every mode agrees and nothing is lowered.
#[test]
fn an_assumed_proxy_mode_lowers_routes_where_the_modes_disagree() {
    let local = observed(
        |s| s.internal_traffic_policy = Some(TrafficPolicy::Local),
        vec![endpoint("10.244.0.5", "node-a", READY)],
    );
    let mode_only = Assumed {
        proxy_mode: true,
        ..Assumed::default()
    };
    let r = pod_to_cluster_ip(&local, "node-c", iptables(), mode_only).route;
    assert_eq!(r.verdict, VerdictKind::Drop);
    assert_eq!(r.confidence, Confidence::Inferred);
    assert!(r.missing.contains(MissingFact::ProxyMode));
    assert!(
        r.trace
            .iter()
            .any(|t| t.step == "possible-outcome" && t.detail.contains("ipvs: reject")),
        "{:?}",
        r.trace
    );
    let given = pod_to_cluster_ip(&local, "node-c", iptables(), Assumed::default()).route;
    assert!(given.missing.is_empty());
    let cluster = observed(|_| {}, vec![endpoint("10.244.0.5", "node-a", READY)]);
    let r = pod_to_cluster_ip(&cluster, "node-c", iptables(), mode_only).route;
    assert!(r.missing.is_empty());
}

/// Slices derived by the controller model for a Service asking for hints depend on the
/// control plane's version: assumed, its cluster routes name `kube-version`; observed slices
/// are facts and do not.
#[test]
fn derived_hints_depend_on_an_assumed_control_plane_version() {
    let mut svc = service("shop", "web", "10.96.0.10", vec![port("http", 80, 0)]);
    svc.traffic_distribution = Some("PreferSameZone".into());
    let pods = ["node-a", "node-b"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut meta = meta("shop", &format!("web-{i}"));
            meta.labels.insert("app".into(), "web".into());
            Pod {
                meta,
                spec: PodSpec {
                    node_name: n.to_string(),
                    ..Default::default()
                },
                phase: PodPhase::Running,
                ready: true,
                pod_ips: vec![format!("10.244.{i}.5").parse().unwrap()],
            }
        })
        .collect();
    let state = ClusterState {
        nodes: nodes3(),
        services: vec![svc],
        pods,
        ..Default::default()
    };
    let control_plane_only = Assumed {
        kube_version: true,
        ..Assumed::default()
    };
    let r = pod_to_cluster_ip(&state, "node-a", iptables(), control_plane_only).route;
    assert_eq!(r.verdict, VerdictKind::Deliver);
    assert!(r.missing.contains(MissingFact::KubeVersion), "{:?}", r.trace);
    assert!(!r.missing.contains(MissingFact::KubeProxyVersion));
    let given = pod_to_cluster_ip(&state, "node-a", iptables(), Assumed::default()).route;
    assert!(given.missing.is_empty());
}
