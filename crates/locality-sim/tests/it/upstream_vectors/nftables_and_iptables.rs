//! C1–C4 (`TestInternalTrafficPolicy`, `TestTerminatingEndpointsTrafficPolicyLocal`,
//! `TestTerminatingEndpointsTrafficPolicyCluster`, `TestInternalExternalMasquerade`) through the simulated
//! iptables and nftables kube-proxies.

use super::{Flow, Svc, assert_no_failures, run_case};
use locality_model::objects::{ServiceType, TrafficPolicy};
use locality_model::proxy::{Destination, Source};
use locality_sim::ProxyMode;
use locality_testkit::vectors::{self, Ep, LbCase, NODE, UNSET, ep};

// ----- C1 -----

/// C1: `TestInternalTrafficPolicy` (nftables and iptables `proxier_test.go`): ClusterIP
/// `ns1/svc1` 172.30.1.1:80, every endpoint ready; flow "pod to ClusterIP" (`10.0.0.2 →
/// 172.30.1.1:80`, masq false); then `OnEndpointSliceDelete` ⇒ REJECT.
fn c1(mode: ProxyMode) {
    let mut failures = Vec::new();
    for (name, itp, endpoints, (output, masq)) in vectors::c1() {
        let mut svc = Svc::cluster_ip("ns1", "svc1", "172.30.1.1", endpoints);
        svc.itp = itp;
        let flow = |output, masq| Flow {
            name: "pod to ClusterIP",
            ns: "ns1",
            svc: "svc1",
            source: Source::Pod,
            dest: Destination::ClusterIp,
            output,
            masq,
        };
        failures.extend(run_case(
            mode,
            name,
            &["node0", "node1", "node2"],
            vec![svc],
            &[flow(output, masq)],
            &[flow("REJECT", None)],
        ));
    }
    assert_no_failures(mode, failures);
}

#[test]
fn c1_internal_traffic_policy_iptables() {
    c1(ProxyMode::Iptables);
}

#[test]
fn c1_internal_traffic_policy_nftables() {
    c1(ProxyMode::Nftables);
}

// ----- C2 / C3 -----

/// The LoadBalancer Service of C2/C3: `ns1/svc1`, clusterIP 172.30.1.1, port ""/80, ingress
/// 1.2.3.4.
fn lb_svc(etp: TrafficPolicy, endpoints: Vec<Ep>) -> Svc {
    Svc {
        type_: ServiceType::LoadBalancer,
        etp: Some(etp),
        ingress: Some("1.2.3.4"),
        ..Svc::cluster_ip("ns1", "svc1", "172.30.1.1", endpoints)
    }
}

/// C2/C3's two flows: "pod to clusterIP" (`10.0.0.2 → 172.30.1.1:80`) and "external to LB"
/// (`testExternalClient → 1.2.3.4:80`).
fn pod_and_external_flows(
    pod: (&'static str, Option<bool>),
    external: (&'static str, Option<bool>),
) -> [Flow; 2] {
    [
        Flow {
            name: "pod to clusterIP",
            ns: "ns1",
            svc: "svc1",
            source: Source::Pod,
            dest: Destination::ClusterIp,
            output: pod.0,
            masq: pod.1,
        },
        Flow {
            name: "external to LB",
            ns: "ns1",
            svc: "svc1",
            source: Source::External,
            dest: Destination::LoadBalancer,
            output: external.0,
            masq: external.1,
        },
    ]
}

fn run_lb_cases(mode: ProxyMode, etp: TrafficPolicy, nodes: &[&str], cases: Vec<LbCase>) {
    let mut failures = Vec::new();
    for (name, endpoints, pod, external) in cases {
        failures.extend(run_case(
            mode,
            name,
            nodes,
            vec![lb_svc(etp, endpoints)],
            &pod_and_external_flows(pod, external),
            // "After deleting the slice: both flows ⇒ REJECT".
            &pod_and_external_flows(("REJECT", None), ("REJECT", None)),
        ));
    }
    assert_no_failures(mode, failures);
}

/// C2: `TestTerminatingEndpointsTrafficPolicyLocal` (nftables and iptables `proxier_test.go`).
fn c2(mode: ProxyMode) {
    run_lb_cases(mode, TrafficPolicy::Local, &["node-1"], vectors::c2());
}

#[test]
fn c2_terminating_endpoints_traffic_policy_local_iptables() {
    c2(ProxyMode::Iptables);
}

#[test]
fn c2_terminating_endpoints_traffic_policy_local_nftables() {
    c2(ProxyMode::Nftables);
}

/// C3: `TestTerminatingEndpointsTrafficPolicyCluster` (nftables and iptables
/// `proxier_test.go`); external to LB is masqueraded under ETP Cluster.
fn c3(mode: ProxyMode) {
    run_lb_cases(
        mode,
        TrafficPolicy::Cluster,
        &["another-node", "node-1"],
        vectors::c3(),
    );
}

#[test]
fn c3_terminating_endpoints_traffic_policy_cluster_iptables() {
    c3(ProxyMode::Iptables);
}

#[test]
fn c3_terminating_endpoints_traffic_policy_cluster_nftables() {
    c3(ProxyMode::Nftables);
}

// ----- C4 -----

/// The three LoadBalancer Services of `TestInternalExternalMasquerade`; `drop_local` removes
/// the local endpoint of the named Service (for the ipvs / nftables derived vectors below).
pub(super) fn c4_services(drop_local: Option<&str>) -> Vec<Svc> {
    vectors::C4_SERVICES
        .iter()
        .map(|c| {
            let mut endpoints = vec![ep(c.local_ip, NODE, UNSET), ep(c.remote_ip, "remote-node", UNSET)];
            if drop_local == Some(c.name) {
                endpoints.remove(0);
            }
            Svc {
                type_: ServiceType::LoadBalancer,
                port_name: "p80",
                node_port: c.node_port,
                ingress: Some(c.ingress),
                etp: c.etp_local.then_some(TrafficPolicy::Local),
                itp: c.itp_local.then_some(TrafficPolicy::Local),
                ..Svc::cluster_ip(c.ns, c.name, c.cluster_ip, endpoints)
            }
        })
        .collect()
}

pub(super) fn ns_of(svc: &str) -> &'static str {
    vectors::c4_namespace(svc)
}

/// C4: `TestInternalExternalMasquerade` (nftables and iptables `proxier_test.go`),
/// configuration "base" (masqueradeAll=false, LocalTrafficDetector on), its 27 flows.
fn c4(mode: ProxyMode) {
    let table = vectors::C4_FLOWS;
    let flows: Vec<Flow> = table
        .iter()
        .map(|&(_, name, svc, source, dest, output, masq)| Flow {
            name,
            ns: ns_of(svc),
            svc,
            source,
            dest,
            output,
            masq: Some(masq),
        })
        .collect();
    let failures = run_case(
        mode,
        "base configuration",
        &["remote-node"],
        c4_services(None),
        &flows,
        &[],
    );
    assert_no_failures(mode, failures);
}

#[test]
fn c4_internal_external_masquerade_iptables() {
    c4(ProxyMode::Iptables);
}

#[test]
fn c4_internal_external_masquerade_nftables() {
    c4(ProxyMode::Nftables);
}
