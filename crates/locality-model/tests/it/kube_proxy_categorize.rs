//! Upstream vectors for `CategorizeEndpoints`.
//!
//! Part A: kubernetes/kubernetes `pkg/proxy/topology_test.go` @ 6c039d9075ef18d200bb0ba7dbdb362f4d0deef0,
//! `TestCategorizeEndpoints` (26 cases, transcribed in docs/upstream.md §6 (§A)).
//! Part B: the PreferSameNode cases of Antrea's port of the same function, checked by hand
//! against upstream `topology.go` (docs/upstream.md §6).
//!
//! The harness follows upstream's: an expected `nil` set must be absent (`None`), otherwise the
//! sets are compared as sets of `IP:port`; `hasAnyEndpoints` = non-empty reachable set or
//! "only remote endpoints".

use locality_model::features::ProxyFeatures;
use locality_model::objects::{IpFamily, Protocol, ServicePort, TargetPort};
use locality_model::proxy::{ProxyEndpoint, ProxyNode, ServicePortInfo, categorize_endpoints};
use locality_model::version::KubeVersion;

/// Endpoint flags as the upstream test table writes them: R ready, S serving, T terminating, L local.
fn ep(addr: &str, flags: &str, zones: &[&str], nodes: &[&str]) -> ProxyEndpoint {
    let (ip, port) = addr.rsplit_once(':').unwrap();
    ProxyEndpoint {
        ip: ip.parse().unwrap(),
        port: port.parse().unwrap(),
        node_name: Some(
            if flags.contains('L') {
                "this-node"
            } else {
                "other-node"
            }
            .to_string(),
        ),
        ready: flags.contains('R'),
        serving: flags.contains('S'),
        terminating: flags.contains('T'),
        zone_hints: zones.iter().map(|s| s.to_string()).collect(),
        node_hints: nodes.iter().map(|s| s.to_string()).collect(),
        zone: None,
        target: None,
    }
}

#[derive(Default, Clone, Copy)]
struct Svc {
    itp_local: bool,
    etp_local: bool,
    node_port: u16,
}

fn svc(s: Svc) -> ServicePortInfo {
    ServicePortInfo {
        namespace: "ns".into(),
        name: "svc".into(),
        port: ServicePort {
            name: String::new(),
            protocol: Protocol::TCP,
            port: 80,
            target_port: TargetPort::Number(80),
            node_port: s.node_port,
        },
        family: IpFamily::IPv4,
        cluster_ip: Some("172.30.1.1".parse().unwrap()),
        internal_policy_local: s.itp_local,
        // upstream's test sets externalPolicyLocal directly on the fake service info.
        external_policy_local: s.etp_local,
        external_ips: vec![],
        load_balancer_vips: vec![],
        hints_annotation: None,
        not_proxied: None,
        has_node_port: s.node_port != 0,
        sticky_max_age_seconds: None,
        load_balancer_source_ranges: vec![],
    }
}

type Set<'a> = Option<&'a [&'a str]>;

#[allow(clippy::too_many_arguments)]
fn check(
    name: &str,
    zone: &str,
    node: &str,
    features: ProxyFeatures,
    s: Svc,
    eps: &[ProxyEndpoint],
    cluster: Set,
    local: Set,
    all: Option<&[&str]>,
    only_remote: bool,
) {
    // Upstream's harness uses a node name only through endpoint locality: "this-node".
    let node = ProxyNode { name: node, zone };
    let got = categorize_endpoints(eps, &svc(s), node, &features);
    let names = |v: &[usize]| {
        let mut n: Vec<String> = v.iter().map(|i| eps[*i].to_string()).collect();
        n.sort();
        n
    };
    let want = |v: &[&str]| {
        let mut n: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        n.sort();
        n
    };
    let check_set = |what: &str, got: &Option<std::borrow::Cow<'_, [usize]>>, exp: Set| match exp {
        None => assert!(
            got.is_none(),
            "{name}: {what} should be nil, got {:?}",
            got.as_deref().map(names)
        ),
        Some(exp) => {
            let got = got.as_deref().map(names).unwrap_or_default();
            assert_eq!(got, want(exp), "{name}: {what} set");
        }
    };
    check_set("cluster", &got.cluster, cluster);
    check_set("local", &got.local, local);
    let expected_all: Vec<String> = match (cluster, local) {
        (Some(c), None) => want(c),
        (None, Some(l)) => want(l),
        (None, None) => vec![],
        (Some(_), Some(_)) => want(all.expect("explicit allEndpoints when both sets are used")),
    };
    assert_eq!(names(&got.all_reachable()), expected_all, "{name}: allEndpoints");
    let expected_has_any = !expected_all.is_empty() || only_remote;
    assert_eq!(got.has_any_endpoints, expected_has_any, "{name}: hasAnyEndpoints");
}

fn newest() -> ProxyFeatures {
    ProxyFeatures::at(KubeVersion::NEWEST)
}

const NP: Svc = Svc {
    itp_local: false,
    etp_local: false,
    node_port: 0,
};

/// Runs one `TestCategorizeEndpoints` row with the newest kube-proxy.
#[allow(clippy::too_many_arguments)]
fn row(
    name: &str,
    zone: &str,
    s: Svc,
    eps: &[ProxyEndpoint],
    c: Set,
    l: Set,
    all: Option<&[&str]>,
    only_remote: bool,
) {
    check(name, zone, "this-node", newest(), s, eps, c, l, all, only_remote);
}

#[test]
fn categorize_01_should_use_topology_since_all_endpoints_have_hints() {
    row(
        "should use topology since all endpoints have hints, node has a zone label and and there are endpoints for the node's zone",
        "zone-a",
        NP,
        &[
            ep("10.1.2.3:80", "R", &["zone-a"], &[]),
            ep("10.1.2.4:80", "R", &["zone-b"], &[]),
            ep("10.1.2.5:80", "R", &["zone-c"], &[]),
            ep("10.1.2.6:80", "R", &["zone-a"], &[]),
        ],
        Some(&["10.1.2.3:80", "10.1.2.6:80"]),
        None,
        None,
        false,
    );
}

fn four_mixed_local() -> Vec<ProxyEndpoint> {
    vec![
        ep("10.1.2.3:80", "RL", &["zone-a"], &[]),
        ep("10.1.2.4:80", "RL", &["zone-b"], &[]),
        ep("10.1.2.5:80", "R", &["zone-c"], &[]),
        ep("10.1.2.6:80", "R", &["zone-a"], &[]),
    ]
}

#[test]
fn categorize_02_external_traffic_policy_local_topology_ignored_for_local_endpoints() {
    row(
        "externalTrafficPolicy: Local, topology ignored for Local endpoints",
        "zone-a",
        Svc {
            etp_local: true,
            node_port: 8080,
            ..NP
        },
        &four_mixed_local(),
        Some(&["10.1.2.3:80", "10.1.2.6:80"]),
        Some(&["10.1.2.3:80", "10.1.2.4:80"]),
        Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"]),
        false,
    );
}

#[test]
fn categorize_03_internal_traffic_policy_local_topology_ignored_for_local_endpoints() {
    row(
        "internalTrafficPolicy: Local, topology ignored for Local endpoints",
        "zone-a",
        Svc {
            itp_local: true,
            node_port: 8080,
            ..NP
        },
        &four_mixed_local(),
        Some(&["10.1.2.3:80", "10.1.2.6:80"]),
        Some(&["10.1.2.3:80", "10.1.2.4:80"]),
        Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"]),
        false,
    );
}

#[test]
fn categorize_04_empty_node_labels() {
    row(
        "empty node labels",
        "",
        NP,
        &[ep("10.1.2.3:80", "R", &["zone-a"], &[])],
        Some(&["10.1.2.3:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_05_empty_zone_label() {
    row(
        "empty zone label",
        "",
        NP,
        &[ep("10.1.2.3:80", "R", &["zone-a"], &[])],
        Some(&["10.1.2.3:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_06_node_in_different_zone_no_endpoint_filtering() {
    row(
        "node in different zone, no endpoint filtering",
        "zone-b",
        NP,
        &[ep("10.1.2.3:80", "R", &["zone-a"], &[])],
        Some(&["10.1.2.3:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_07_unready_endpoint() {
    row(
        "unready endpoint",
        "zone-a",
        NP,
        &[
            ep("10.1.2.3:80", "R", &["zone-a"], &[]),
            ep("10.1.2.4:80", "R", &["zone-b"], &[]),
            ep("10.1.2.5:80", "R", &["zone-c"], &[]),
            ep("10.1.2.6:80", "", &["zone-a"], &[]),
        ],
        Some(&["10.1.2.3:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_08_only_unready_endpoints_in_same_zone_should_not_filter() {
    row(
        "only unready endpoints in same zone (should not filter)",
        "zone-a",
        NP,
        &[
            ep("10.1.2.3:80", "", &["zone-a"], &[]),
            ep("10.1.2.4:80", "R", &["zone-b"], &[]),
            ep("10.1.2.5:80", "R", &["zone-c"], &[]),
            ep("10.1.2.6:80", "", &["zone-a"], &[]),
        ],
        Some(&["10.1.2.4:80", "10.1.2.5:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_09_missing_hints_no_filtering_applied() {
    row(
        "missing hints, no filtering applied",
        "zone-a",
        NP,
        &[
            ep("10.1.2.3:80", "R", &["zone-a"], &[]),
            ep("10.1.2.4:80", "R", &["zone-b"], &[]),
            ep("10.1.2.5:80", "R", &[], &[]),
            ep("10.1.2.6:80", "R", &["zone-a"], &[]),
        ],
        Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.5:80", "10.1.2.6:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_10_multiple_hints_per_endpoint() {
    row(
        "multiple hints per endpoint, filtering includes any endpoint with zone included",
        "zone-c",
        NP,
        &[
            ep("10.1.2.3:80", "R", &["zone-a", "zone-b", "zone-c"], &[]),
            ep("10.1.2.4:80", "R", &["zone-b", "zone-c"], &[]),
            ep("10.1.2.5:80", "R", &["zone-b", "zone-d"], &[]),
            ep("10.1.2.6:80", "R", &["zone-c"], &[]),
        ],
        Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_11_conflicting_topology_and_localness_require_merging_all_endpoints() {
    row(
        "conflicting topology and localness require merging allEndpoints",
        "zone-a",
        Svc {
            etp_local: true,
            node_port: 8080,
            ..NP
        },
        &[
            ep("10.0.0.0:80", "RL", &["zone-a"], &[]),
            ep("10.0.0.1:80", "RL", &["zone-b"], &[]),
            ep("10.0.0.2:80", "R", &["zone-a"], &[]),
            ep("10.0.0.3:80", "R", &["zone-b"], &[]),
        ],
        Some(&["10.0.0.0:80", "10.0.0.2:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80", "10.0.0.2:80"]),
        false,
    );
}

const ITPL: Svc = Svc {
    itp_local: true,
    etp_local: false,
    node_port: 0,
};

#[test]
fn categorize_12_internal_traffic_policy_local_with_empty_endpoints() {
    row(
        "internalTrafficPolicy: Local, with empty endpoints",
        "",
        ITPL,
        &[],
        None,
        Some(&[]),
        None,
        false,
    );
}

#[test]
fn categorize_13_internal_traffic_policy_local_but_all_endpoints_are_remote() {
    row(
        "internalTrafficPolicy: Local, but all endpoints are remote",
        "",
        ITPL,
        &[ep("10.0.0.0:80", "R", &[], &[]), ep("10.0.0.1:80", "R", &[], &[])],
        None,
        Some(&[]),
        None,
        true,
    );
}

#[test]
fn categorize_14_internal_traffic_policy_local_all_endpoints_are_local() {
    row(
        "internalTrafficPolicy: Local, all endpoints are local",
        "",
        ITPL,
        &[
            ep("10.0.0.0:80", "RL", &[], &[]),
            ep("10.0.0.1:80", "RL", &[], &[]),
        ],
        None,
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        None,
        false,
    );
}

#[test]
fn categorize_15_internal_traffic_policy_local_some_endpoints_are_local() {
    row(
        "internalTrafficPolicy: Local, some endpoints are local",
        "",
        ITPL,
        &[
            ep("10.0.0.0:80", "RL", &[], &[]),
            ep("10.0.0.1:80", "R", &[], &[]),
        ],
        None,
        Some(&["10.0.0.0:80"]),
        None,
        false,
    );
}

#[test]
fn categorize_16_cluster_traffic_policy_endpoints_not_ready() {
    row(
        "Cluster traffic policy, endpoints not Ready",
        "",
        NP,
        &[ep("10.0.0.0:80", "", &[], &[]), ep("10.0.0.1:80", "", &[], &[])],
        Some(&[]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_17_cluster_traffic_policy_some_endpoints_are_ready() {
    row(
        "Cluster traffic policy, some endpoints are Ready",
        "",
        NP,
        &[ep("10.0.0.0:80", "", &[], &[]), ep("10.0.0.1:80", "R", &[], &[])],
        Some(&["10.0.0.1:80"]),
        None,
        None,
        false,
    );
}

#[test]
fn categorize_18_cluster_traffic_policy_all_endpoints_are_terminating() {
    row(
        "Cluster traffic policy, all endpoints are terminating",
        "",
        NP,
        &[
            ep("10.0.0.0:80", "STL", &[], &[]),
            ep("10.0.0.1:80", "ST", &[], &[]),
        ],
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        None,
        None,
        false,
    );
}

fn one_local_one_remote() -> Vec<ProxyEndpoint> {
    vec![
        ep("10.0.0.0:80", "RL", &[], &[]),
        ep("10.0.0.1:80", "R", &[], &[]),
    ]
}

#[test]
fn categorize_19_itp_local_etp_cluster_some_endpoints_local() {
    row(
        "iTP: Local, eTP: Cluster, some endpoints local",
        "",
        Svc {
            itp_local: true,
            etp_local: false,
            node_port: 8080,
        },
        &one_local_one_remote(),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_20_itp_cluster_etp_local_some_endpoints_local() {
    row(
        "iTP: Cluster, eTP: Local, some endpoints local",
        "",
        Svc {
            itp_local: false,
            etp_local: true,
            node_port: 8080,
        },
        &one_local_one_remote(),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_21_itp_local_etp_local_some_endpoints_local() {
    row(
        "iTP: Local, eTP: Local, some endpoints local",
        "",
        Svc {
            itp_local: true,
            etp_local: true,
            node_port: 8080,
        },
        &one_local_one_remote(),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_22_itp_local_etp_local_all_endpoints_remote() {
    row(
        "iTP: Local, eTP: Local, all endpoints remote",
        "",
        Svc {
            itp_local: true,
            etp_local: true,
            node_port: 8080,
        },
        &[ep("10.0.0.0:80", "R", &[], &[]), ep("10.0.0.1:80", "R", &[], &[])],
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&[]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_23_itp_local_etp_local_all_endpoints_remote_and_terminating() {
    row(
        "iTP: Local, eTP: Local, all endpoints remote and terminating",
        "",
        Svc {
            itp_local: true,
            etp_local: true,
            node_port: 8080,
        },
        &[
            ep("10.0.0.0:80", "ST", &[], &[]),
            ep("10.0.0.1:80", "ST", &[], &[]),
        ],
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&[]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        true,
    );
}

#[test]
fn categorize_24_itp_cluster_etp_local_with_terminating_endpoints() {
    row(
        "iTP: Cluster, eTP: Local, with terminating endpoints",
        "",
        Svc {
            itp_local: false,
            etp_local: true,
            node_port: 8080,
        },
        &[
            ep("10.0.0.0:80", "R", &[], &[]),
            ep("10.0.0.1:80", "L", &[], &[]),
            ep("10.0.0.2:80", "STL", &[], &[]),
            ep("10.0.0.3:80", "ST", &[], &[]),
        ],
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.2:80"]),
        Some(&["10.0.0.0:80", "10.0.0.2:80"]),
        false,
    );
}

#[test]
fn categorize_25_external_traffic_policy_ignored_if_not_externally_accessible() {
    // Upstream sets externalPolicyLocal on the fake info but no nodePort: the service is not
    // externally accessible, so UsesLocalEndpoints() is false.
    row(
        "externalTrafficPolicy ignored if not externally accessible",
        "",
        Svc {
            itp_local: false,
            etp_local: true,
            node_port: 0,
        },
        &[
            ep("10.0.0.0:80", "R", &[], &[]),
            ep("10.0.0.1:80", "RL", &[], &[]),
        ],
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        None,
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_26_no_cluster_endpoints_for_itp_local_internal_only_service() {
    row(
        "no cluster endpoints for iTP:Local internal-only service",
        "",
        ITPL,
        &[
            ep("10.0.0.0:80", "R", &[], &[]),
            ep("10.0.0.1:80", "RL", &[], &[]),
        ],
        None,
        Some(&["10.0.0.1:80"]),
        None,
        false,
    );
}

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
