//! Upstream packet-flow vectors, as source/destination verdicts.
//!
//! kubernetes/kubernetes `pkg/proxy/nftables/proxier_test.go`: `TestInternalTrafficPolicy`
//! (C1), `TestTerminatingEndpointsTrafficPolicyLocal` (C2),
//! `TestTerminatingEndpointsTrafficPolicyCluster` (C3) and `TestInternalExternalMasquerade`
//! (C4, "base" configuration), transcribed in docs/upstream.md §6 (§C). Upstream's
//! tracer outputs the possible DNAT targets, `DROP` or `REJECT`, and whether the packet is
//! marked for masquerade; here the same facts come from the model's matrix on node
//! `testNodeName`. The same flows hold in iptables mode (the proxiers share the rule design).

use crate::support;

#[path = "packet_flows/confidence.rs"]
mod confidence;
#[path = "packet_flows/external.rs"]
mod external;
#[path = "packet_flows/feature_gates.rs"]
mod feature_gates;

use locality_model::matrix::{DataPlane, Matrix, MatrixConfig};
use locality_model::objects::*;
use locality_model::proxy::{Destination, ProxyMode, Source, VerdictKind};
use locality_testkit::vectors::{self, Ep, Expect, NODE};
use support::*;

/// Output in upstream's notation: sorted endpoints, or DROP / REJECT; and the masquerade mark.
fn flow(
    state: &ClusterState,
    svc: &str,
    source: Source,
    dest: Destination,
    mode: ProxyMode,
) -> (String, bool) {
    let config = MatrixConfig {
        data_plane: DataPlane::KubeProxy(Some(mode)),
        ..Default::default()
    };
    let m = Matrix::new(state, config);
    let port = m
        .ports
        .iter()
        .position(|p| p.service.meta.name == svc)
        .expect("service port");
    let node = m.node_position(NODE).expect("node");
    let routes = m.node_routes(port, node);
    let r = routes
        .routes
        .iter()
        .find(|r| r.route.source == source && r.route.destination == dest)
        .unwrap_or_else(|| panic!("no route {source:?}->{dest:?} for {svc}"));
    let out = match r.route.verdict {
        VerdictKind::Deliver => {
            let mut eps: Vec<String> = r
                .route
                .endpoints
                .iter()
                .map(|i| m.ports[port].endpoints[*i].to_string())
                .collect();
            eps.sort();
            eps.join(", ")
        }
        VerdictKind::Drop => "DROP".into(),
        VerdictKind::Reject => "REJECT".into(),
        VerdictKind::NotProxied => "NOT-PROXIED".into(),
    };
    (out, r.route.masquerade)
}

fn nodes(names: &[&str]) -> Vec<Node> {
    names.iter().map(|n| node(n, None)).collect()
}

/// A vector's endpoints as the model's.
fn endpoints(eps: &[Ep]) -> Vec<Endpoint> {
    eps.iter().map(|e| endpoint(e.ip, e.node, e.cond)).collect()
}

/// Whether `got` is what a vector expects (the masquerade flag where it says one).
fn matches(got: &(String, bool), want: Expect) -> bool {
    got.0 == want.0 && want.1.is_none_or(|m| m == got.1)
}

fn c1_state(itp: Option<TrafficPolicy>, eps: &[(&str, &str)]) -> ClusterState {
    c1_state_of(itp, eps.iter().map(|(ip, n)| endpoint(ip, n, READY)).collect())
}

fn c1_state_of(itp: Option<TrafficPolicy>, endpoints: Vec<Endpoint>) -> ClusterState {
    let mut svc = service("ns1", "svc1", "172.30.1.1", vec![port("", 80, 0)]);
    svc.internal_traffic_policy = itp;
    let s = slice(&svc, "svc1-1", "", 80, endpoints);
    ClusterState {
        nodes: nodes(&[NODE, "node0", "node1", "node2"]),
        services: vec![svc],
        endpoint_slices: vec![s],
        ..Default::default()
    }
}

fn both_modes(state: &ClusterState, svc: &str, source: Source, dest: Destination) -> (String, bool) {
    let ipt = flow(state, svc, source, dest, ProxyMode::Iptables);
    let nft = flow(state, svc, source, dest, ProxyMode::Nftables);
    assert_eq!(
        ipt, nft,
        "iptables and nftables agree on {svc} {source:?}->{dest:?}"
    );
    nft
}

#[test]
fn c1_internal_traffic_policy() {
    for (name, itp, eps, want) in vectors::c1() {
        let state = c1_state_of(itp, endpoints(&eps));
        let got = both_modes(&state, "svc1", Source::Pod, Destination::ClusterIp);
        assert!(matches(&got, want), "{name}: {got:?}, want {want:?}");
        // "endpoints deleted": every case then rejects.
        let mut deleted = state.clone();
        deleted.endpoint_slices.clear();
        // Without slices the model would derive from pods (there are none): still no endpoints.
        let (out, _) = both_modes(&deleted, "svc1", Source::Pod, Destination::ClusterIp);
        assert_eq!(out, "REJECT", "{name}: after deleting the slice");
    }
}

/// The LoadBalancer Service of C2/C3: clusterIP 172.30.1.1, port 80, ingress 1.2.3.4.
fn lb_state(etp: TrafficPolicy, eps: Vec<Endpoint>) -> ClusterState {
    let mut svc = service("ns1", "svc1", "172.30.1.1", vec![port("", 80, 0)]);
    svc.type_ = ServiceType::LoadBalancer;
    svc.external_traffic_policy = Some(etp);
    svc.load_balancer_ingress = vec![LoadBalancerIngress {
        ip: Some("1.2.3.4".parse().unwrap()),
        ..Default::default()
    }];
    let s = slice(&svc, "svc1-1", "", 80, eps);
    ClusterState {
        nodes: nodes(&[NODE, "node-1", "another-node"]),
        services: vec![svc],
        endpoint_slices: vec![s],
        ..Default::default()
    }
}

#[test]
fn c2_terminating_endpoints_traffic_policy_local() {
    for (name, eps, pod_to_cluster_ip, external_to_lb) in vectors::c2() {
        let state = lb_state(TrafficPolicy::Local, endpoints(&eps));
        let got = both_modes(&state, "svc1", Source::Pod, Destination::ClusterIp);
        assert!(
            matches(&got, pod_to_cluster_ip),
            "{name}: pod to clusterIP: {got:?}"
        );
        let got = both_modes(&state, "svc1", Source::External, Destination::LoadBalancer);
        assert!(matches(&got, external_to_lb), "{name}: external to LB: {got:?}");
        let mut deleted = state.clone();
        deleted.endpoint_slices.clear();
        assert_eq!(
            both_modes(&deleted, "svc1", Source::Pod, Destination::ClusterIp).0,
            "REJECT"
        );
        assert_eq!(
            both_modes(&deleted, "svc1", Source::External, Destination::LoadBalancer).0,
            "REJECT"
        );
    }
}

#[test]
fn c3_terminating_endpoints_traffic_policy_cluster() {
    for (name, eps, pod_to_cluster_ip, external_to_lb) in vectors::c3() {
        let state = lb_state(TrafficPolicy::Cluster, endpoints(&eps));
        let got = both_modes(&state, "svc1", Source::Pod, Destination::ClusterIp);
        assert!(
            matches(&got, pod_to_cluster_ip),
            "{name}: pod to clusterIP: {got:?}"
        );
        let got = both_modes(&state, "svc1", Source::External, Destination::LoadBalancer);
        assert!(matches(&got, external_to_lb), "{name}: external to LB: {got:?}");
    }
}

/// The three LoadBalancer Services of `TestInternalExternalMasquerade`.
fn c4_state() -> ClusterState {
    let (services, endpoint_slices) = vectors::C4_SERVICES
        .iter()
        .map(|c| {
            let mut svc = service(c.ns, c.name, c.cluster_ip, vec![port("p80", 80, c.node_port)]);
            svc.type_ = ServiceType::LoadBalancer;
            svc.load_balancer_ingress = vec![LoadBalancerIngress {
                ip: Some(c.ingress.parse().unwrap()),
                ..Default::default()
            }];
            svc.external_traffic_policy = c.etp_local.then_some(TrafficPolicy::Local);
            svc.internal_traffic_policy = c.itp_local.then_some(TrafficPolicy::Local);
            let eps = vec![
                endpoint(c.local_ip, NODE, vectors::UNSET),
                endpoint(c.remote_ip, "remote-node", vectors::UNSET),
            ];
            let s = slice(&svc, &format!("{}-1", c.name), "p80", 80, eps);
            (svc, s)
        })
        .unzip();
    ClusterState {
        nodes: nodes(&[NODE, "remote-node"]),
        services,
        endpoint_slices,
        ..Default::default()
    }
}

#[test]
fn c4_internal_external_masquerade_base_configuration() {
    let state = c4_state();
    let flows = vectors::C4_FLOWS;
    for (n, name, svc, source, dest, want, masq) in flows {
        let got = both_modes(&state, svc, source, dest);
        assert_eq!((got.0.as_str(), got.1), (want, masq), "flow {n}: {name}");
    }
}

#[test]
fn ipvs_differences() {
    // ITP Local, no local endpoint, not externally reachable: zero real servers → refused.
    let state = c1_state(
        Some(TrafficPolicy::Local),
        &[("10.0.1.1", "node0"), ("10.0.1.2", "node1")],
    );
    assert_eq!(
        flow(
            &state,
            "svc1",
            Source::Pod,
            Destination::ClusterIp,
            ProxyMode::Ipvs
        )
        .0,
        "REJECT"
    );
    // ITP Local on an externally reachable Service (svc3 of C4) with no local endpoint: IPVS
    // programs the cluster endpoints, so ClusterIP traffic is delivered remotely.
    let mut state = c4_state();
    state.endpoint_slices[2]
        .endpoints
        .retain(|e| e.node_name.as_deref() != Some(NODE));
    assert_eq!(
        flow(
            &state,
            "svc3",
            Source::Pod,
            Destination::ClusterIp,
            ProxyMode::Ipvs
        )
        .0,
        "10.180.1.3:80"
    );
    assert_eq!(
        flow(
            &state,
            "svc3",
            Source::Pod,
            Destination::ClusterIp,
            ProxyMode::Iptables
        )
        .0,
        "DROP"
    );
    // ETP Local with a local endpoint: IPVS has no short-circuit, pods get the local endpoint only.
    let state = c4_state();
    assert_eq!(
        flow(
            &state,
            "svc2",
            Source::Pod,
            Destination::NodePort,
            ProxyMode::Ipvs
        )
        .0,
        "10.180.0.2:80"
    );
    // ETP Local without a local endpoint: external traffic's reply is lost (a timeout).
    let mut state = c4_state();
    state.endpoint_slices[1]
        .endpoints
        .retain(|e| e.node_name.as_deref() != Some(NODE));
    assert_eq!(
        flow(
            &state,
            "svc2",
            Source::External,
            Destination::NodePort,
            ProxyMode::Ipvs
        )
        .0,
        "DROP"
    );
    assert_eq!(
        flow(
            &state,
            "svc2",
            Source::Pod,
            Destination::NodePort,
            ProxyMode::Ipvs
        )
        .0,
        "10.180.1.2:80"
    );
}

#[test]
fn nftables_host_to_load_balancer_with_etp_local_and_no_local_endpoint_is_dropped() {
    let mut state = c4_state();
    state.endpoint_slices[1]
        .endpoints
        .retain(|e| e.node_name.as_deref() != Some(NODE));
    assert_eq!(
        flow(
            &state,
            "svc2",
            Source::Host,
            Destination::LoadBalancer,
            ProxyMode::Nftables
        )
        .0,
        "DROP"
    );
    assert_eq!(
        flow(
            &state,
            "svc2",
            Source::Host,
            Destination::LoadBalancer,
            ProxyMode::Iptables
        )
        .0,
        "10.180.1.2:80"
    );
    // NodePort from the host is not checked in filter-output: short-circuited in both modes.
    assert_eq!(
        flow(
            &state,
            "svc2",
            Source::Host,
            Destination::NodePort,
            ProxyMode::Nftables
        )
        .0,
        "10.180.1.2:80"
    );
}

/// kubernetes#93456, as left by #97081: in ipvs mode a host-network client's connection to
/// the load-balancer IP of an ETP Local Service without a local endpoint gets no answer (the
/// LB IP is bound on every node's kube-ipvs0, so the remote endpoint's reply never returns),
/// while a pod on the same node is served from the cluster endpoints and a nodePort works.
#[test]
fn ipvs_host_to_load_balancer_with_etp_local_and_no_local_endpoint_gets_no_answer() {
    let mut state = c4_state();
    state.endpoint_slices[1]
        .endpoints
        .retain(|e| e.node_name.as_deref() != Some(NODE));
    let got = |source, dest| flow(&state, "svc2", source, dest, ProxyMode::Ipvs).0;
    assert_eq!(got(Source::Host, Destination::LoadBalancer), "DROP");
    assert_eq!(got(Source::Pod, Destination::LoadBalancer), "10.180.1.2:80");
    assert_eq!(got(Source::Host, Destination::NodePort), "10.180.1.2:80");
}
