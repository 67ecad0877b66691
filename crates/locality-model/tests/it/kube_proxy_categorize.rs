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

mod policies;
mod prefer_same_node_and_versions;

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
