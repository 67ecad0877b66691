//! The EndpointSlice controller's hints with `--feature-gates` overrides of the control plane:
//! a default-on gate switched off changes what the controller writes.
//!
//! Upstream: `pkg/controller/endpointslice/endpointslice_controller.go` `NewController`
//! (a topology cache only with `TopologyAwareHints`; `WithTrafficDistributionEnabled` from
//! `ServiceTrafficDistribution`), `pkg/registry/core/service/strategy.go`
//! `dropServiceDisabledFields` (the API server drops `trafficDistribution` with the gate off),
//! and `reconciler.go` `validTrafficDistribution` (PreferSameZone / PreferSameNode need
//! `PreferSameTrafficDistribution`).

use crate::endpointslice_common;

use endpointslice_common::*;
use locality_model::endpointslice::{
    Derivation, NodeIndex, TopologyCache, derive_endpoint_slices, hint_counts_by_node, hint_counts_by_zone,
};
use locality_model::featuregate::FeatureGates;
use locality_model::features::ControlPlaneFeatures;
use locality_model::objects::{Node, Pod};
use locality_model::version::KubeVersion;

/// node-0 (zone-a) {pod-0}; node-1 (zone-b) {pod-1..3}; node-2 (zone-c) {pod-4, pod-5}.
fn cluster() -> (Vec<Node>, Vec<Pod>) {
    let nodes: Vec<Node> = (0..3)
        .map(|i| {
            let zone = format!("zone-{}", (b'a' + i) as char);
            node(&format!("node-{i}"), Some(&zone), Some(100), Some(true))
        })
        .collect();
    let pods = [0, 1, 1, 1, 2, 2]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            pod(
                &format!("pod-{i}"),
                &format!("10.0.0.{}", i + 1),
                &format!("node-{n}"),
                true,
            )
        })
        .collect();
    (nodes, pods)
}

fn features(minor: u16, flags: &[&str]) -> ControlPlaneFeatures {
    let gates = FeatureGates::from_flags(flags).expect("flags");
    ControlPlaneFeatures::with_gates(KubeVersion::new(1, minor), &gates).expect("accepted")
}

fn derive(traffic_distribution: Option<&str>, mode_auto: bool, f: &ControlPlaneFeatures) -> Derivation {
    let (nodes, pods) = cluster();
    let mut svc = service("foo");
    svc.traffic_distribution = traffic_distribution.map(str::to_string);
    if mode_auto {
        svc.meta
            .annotations
            .insert("service.kubernetes.io/topology-mode".into(), "Auto".into());
    }
    let refs: Vec<&Pod> = pods.iter().collect();
    derive_endpoint_slices(
        &svc,
        &refs,
        &NodeIndex::new(&nodes),
        &TopologyCache::from_nodes(&nodes),
        f,
    )
}

fn zone_hinted(d: &Derivation) -> usize {
    hint_counts_by_zone(&d.slices).values().sum()
}

/// 1.27, `topology-mode: Auto`: the controller writes zone hints; with
/// `kube-controller-manager:TopologyAwareHints=false` it has no topology cache and writes none.
#[test]
fn topology_aware_hints_off_on_the_controller_manager_writes_no_hints() {
    assert_eq!(zone_hinted(&derive(None, true, &features(27, &[]))), 6);
    let off = derive(
        None,
        true,
        &features(27, &["kube-controller-manager:TopologyAwareHints=false"]),
    );
    assert_eq!(zone_hinted(&off), 0);
    assert!(off.events.is_empty(), "no topology cache, no event");
}

/// 1.31, `trafficDistribution: PreferClose`: hinted by default; not when either the API
/// server (field dropped) or the controller manager has `ServiceTrafficDistribution` off.
#[test]
fn service_traffic_distribution_off_on_either_control_plane_component_writes_no_hints() {
    assert_eq!(
        zone_hinted(&derive(Some("PreferClose"), false, &features(31, &[]))),
        6
    );
    for flag in [
        "kube-apiserver:ServiceTrafficDistribution=false",
        "kube-controller-manager:ServiceTrafficDistribution=false",
    ] {
        assert_eq!(
            zone_hinted(&derive(Some("PreferClose"), false, &features(31, &[flag]))),
            0,
            "{flag}"
        );
    }
    // Switched on in its alpha release, it works.
    assert_eq!(
        zone_hinted(&derive(
            Some("PreferClose"),
            false,
            &features(30, &["ServiceTrafficDistribution=true"])
        )),
        6
    );
}

/// 1.34, `trafficDistribution: PreferSameNode`: node hints by default; none with
/// `PreferSameTrafficDistribution` off on the controller manager.
#[test]
fn prefer_same_traffic_distribution_off_on_the_controller_manager_writes_no_node_hints() {
    let on = derive(Some("PreferSameNode"), false, &features(34, &[]));
    assert_eq!(hint_counts_by_node(&on.slices).values().sum::<usize>(), 6);
    let off = derive(
        Some("PreferSameNode"),
        false,
        &features(
            34,
            &["kube-controller-manager:PreferSameTrafficDistribution=false"],
        ),
    );
    assert!(hint_counts_by_node(&off.slices).is_empty());
    assert_eq!(zone_hinted(&off), 0);
}

/// End to end through the matrix: slices derived at 1.27 for `topology-mode: Auto` keep a
/// pod's traffic in its zone; with the controller manager's `TopologyAwareHints` off they
/// carry no hints, the pod reaches every endpoint, and the route names the override.
#[test]
fn the_matrix_follows_and_names_a_controller_manager_gate() {
    use locality_model::matrix::{Matrix, MatrixConfig};
    use locality_model::objects::ClusterState;
    use locality_model::proxy::{Destination, Source};

    let (nodes, pods) = cluster();
    let mut svc = service("foo");
    svc.cluster_ips = vec![ip("10.96.0.10")];
    svc.meta
        .annotations
        .insert("service.kubernetes.io/topology-mode".into(), "Auto".into());
    let state = ClusterState {
        nodes,
        pods,
        services: vec![svc],
        ..Default::default()
    };
    let route = |flags: &[&str]| {
        let config = MatrixConfig {
            kube_version: KubeVersion::new(1, 27),
            kube_proxy_version: KubeVersion::new(1, 27),
            feature_gates: FeatureGates::from_flags(flags).unwrap(),
            ..Default::default()
        };
        config.check_feature_gates().unwrap();
        let m = Matrix::new(&state, config);
        let n = m.node_position("node-0").unwrap();
        m.node_routes(0, n)
            .routes
            .into_iter()
            .find(|r| r.route.source == Source::Pod && r.route.destination == Destination::ClusterIp)
            .unwrap()
    };
    let on = route(&[]);
    assert_eq!(
        on.route.endpoints.len(),
        2,
        "zone-a's share: {:?}",
        on.route.trace
    );
    let off = route(&["kube-controller-manager:TopologyAwareHints=false"]);
    assert_eq!(off.route.endpoints.len(), 6, "{:?}", off.route.trace);
    assert!(
        off.route.trace.iter().any(|t| t.step == "feature-gates"
            && t.detail
                .contains("kube-controller-manager:TopologyAwareHints=false")),
        "{:?}",
        off.route.trace
    );
}
