//! Part B: PreferSameNode (Antrea's port of the upstream cases), and the rules that changed with the
//! kube-proxy version.

use super::{NP, Svc, check, ep, newest, svc};
use locality_model::features::ProxyFeatures;
use locality_model::proxy::{ProxyEndpoint, ProxyNode, categorize_endpoints};
use locality_model::version::KubeVersion;

// ---- Part B: PreferSameNode (Antrea port, checked against upstream topology.go) ----

fn hinted_by_node() -> Vec<ProxyEndpoint> {
    vec![
        ep("10.1.2.3:80", "RS", &["zone-a"], &["node-1"]),
        ep("10.1.2.4:80", "RS", &["zone-b"], &["node-2"]),
        ep("10.1.2.5:80", "RS", &["zone-c"], &["node-3"]),
        ep("10.1.2.6:80", "RS", &["zone-a"], &["node-4"]),
    ]
}

#[test]
fn prefer_same_node_b1_falls_back_to_same_zone_when_feature_gate_disabled() {
    let features = ProxyFeatures::at(KubeVersion::new(1, 33));
    assert!(!features.node_hints);
    // With the gate off kube-proxy does not even read node hints (endpointslicecache.go).
    let eps: Vec<ProxyEndpoint> = hinted_by_node()
        .into_iter()
        .map(|mut e| {
            e.node_hints.clear();
            e
        })
        .collect();
    check(
        "B1",
        "zone-a",
        "node-1",
        features,
        NP,
        &eps,
        Some(&["10.1.2.3:80", "10.1.2.6:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn prefer_same_node_b2_available() {
    check(
        "B2",
        "zone-a",
        "node-1",
        newest(),
        NP,
        &hinted_by_node(),
        Some(&["10.1.2.3:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn prefer_same_node_b3_ignored_if_some_endpoints_unhinted() {
    let mut eps = hinted_by_node();
    eps[1].zone_hints.clear();
    eps[1].node_hints.clear();
    check(
        "B3",
        "zone-a",
        "node-1",
        newest(),
        NP,
        &eps,
        Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.5:80", "10.1.2.6:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn prefer_same_node_b4_falls_back_to_prefer_same_zone_if_no_endpoint_for_node() {
    check(
        "B4",
        "zone-a",
        "node-0",
        newest(),
        NP,
        &hinted_by_node(),
        Some(&["10.1.2.3:80", "10.1.2.6:80"]),
        None,
        None,
        false,
    );
}

const ETPL_NP: Svc = Svc {
    itp_local: false,
    etp_local: true,
    node_port: 8080,
};

#[test]
fn antrea_etp_local_externally_accessible_cases() {
    // Antrea's four extra "externalTrafficPolicy: Local, externally accessible, …" cases.
    check(
        "empty",
        "zone-a",
        "this-node",
        newest(),
        ETPL_NP,
        &[],
        Some(&[]),
        Some(&[]),
        Some(&[]),
        false,
    );
    let remote = [
        ep("10.0.0.0:80", "RS", &[], &[]),
        ep("10.0.0.1:80", "RS", &[], &[]),
    ];
    let both: &[&str] = &["10.0.0.0:80", "10.0.0.1:80"];
    check(
        "all remote",
        "zone-a",
        "this-node",
        newest(),
        ETPL_NP,
        &remote,
        Some(both),
        Some(&[]),
        Some(both),
        false,
    );
    let local = [
        ep("10.0.0.0:80", "RSL", &[], &[]),
        ep("10.0.0.1:80", "RSL", &[], &[]),
    ];
    check(
        "all local",
        "zone-a",
        "this-node",
        newest(),
        ETPL_NP,
        &local,
        Some(both),
        Some(both),
        Some(both),
        false,
    );
    let some = [
        ep("10.0.0.0:80", "RSL", &[], &[]),
        ep("10.0.0.1:80", "RS", &[], &[]),
    ];
    check(
        "some local",
        "zone-a",
        "this-node",
        newest(),
        ETPL_NP,
        &some,
        Some(both),
        Some(&["10.0.0.0:80"]),
        Some(both),
        false,
    );
}

#[test]
fn kube_proxy_before_1_26_has_no_terminating_fallback() {
    // ProxyTerminatingEndpoints was on by default only from 1.26: before, case 18 rejects.
    let features = ProxyFeatures::at(KubeVersion::new(1, 25));
    let eps = [
        ep("10.0.0.0:80", "STL", &[], &[]),
        ep("10.0.0.1:80", "ST", &[], &[]),
    ];
    check(
        "pre-1.26",
        "",
        "this-node",
        features,
        NP,
        &eps,
        Some(&[]),
        None,
        None,
        false,
    );
}

#[test]
fn kube_proxy_before_1_31_needs_the_topology_annotation() {
    let features = ProxyFeatures::at(KubeVersion::new(1, 30));
    let eps = [
        ep("10.1.2.3:80", "R", &["zone-a"], &[]),
        ep("10.1.2.4:80", "R", &["zone-b"], &[]),
    ];
    let node = ProxyNode {
        name: "this-node",
        zone: "zone-a",
    };
    let mut info = svc(NP);
    let got = categorize_endpoints(&eps, &info, node, &features);
    assert_eq!(got.cluster.unwrap().len(), 2, "no annotation: hints ignored");
    info.hints_annotation = Some("Auto".into());
    let got = categorize_endpoints(&eps, &info, node, &features);
    assert_eq!(got.cluster.unwrap(), vec![0], "annotation Auto: zone hints used");
    info.hints_annotation = Some("Disabled".into());
    let got = categorize_endpoints(&eps, &info, node, &features);
    assert_eq!(
        got.cluster.unwrap().len(),
        2,
        "annotation Disabled: hints ignored"
    );
}
