//! External paths and spread: `loadBalancerSourceRanges` (kube-proxy's firewall in front of
//! load balancer VIPs), `allocateLoadBalancerNodePorts: false`, `sessionAffinity: ClientIP`.
//!
//! Upstream: `pkg/proxy/serviceport.go` `newBaseServiceInfo` (ranges of the port's family,
//! `StickyMaxAgeSeconds`), `pkg/proxy/iptables/proxier.go` `syncProxyRules` (the `KUBE-FW-…`
//! chain, `allowFromNode`, `KUBE-PROXY-FIREWALL`), `pkg/proxy/nftables/proxier.go`
//! (`firewall-check`), `pkg/proxy/ipvs/proxier.go` (`KUBE-LOAD-BALANCER-SOURCE-CIDR`,
//! persistent virtual servers).

use locality_model::matrix::{DataPlane, Matrix, MatrixConfig, MatrixRoute};
use locality_model::objects::*;
use locality_model::proxy::{Destination, ProxyMode, Reason, Source, VerdictKind};

use super::support::*;

/// A LoadBalancer Service `web` (VIP 203.0.113.5, nodePort 30080) with one ready endpoint on
/// each of `node-in` (InternalIP 10.0.0.1) and `node-out` (InternalIP 192.168.0.2), plus a
/// Windows node `node-win` (10.0.0.3, outside the ranges used below too when they exclude it).
fn state(edit: impl FnOnce(&mut Service)) -> ClusterState {
    let mut svc = service("shop", "web", "10.96.0.10", vec![port("http", 80, 30080)]);
    svc.type_ = ServiceType::LoadBalancer;
    svc.load_balancer_ingress = vec![LoadBalancerIngress {
        ip: Some("203.0.113.5".parse().unwrap()),
        ..Default::default()
    }];
    edit(&mut svc);
    let s = slice(
        &svc,
        "web-1",
        "http",
        8080,
        vec![
            endpoint("10.244.0.5", "node-in", READY),
            endpoint("10.244.1.5", "node-out", READY),
        ],
    );
    let mut nodes = vec![
        node("node-in", None),
        node("node-out", None),
        node("node-win", None),
    ];
    nodes[0].internal_ips = vec!["10.0.0.1".parse().unwrap()];
    nodes[1].internal_ips = vec!["192.168.0.2".parse().unwrap()];
    nodes[2].internal_ips = vec!["192.168.0.3".parse().unwrap()];
    nodes[2].meta.labels.insert(LABEL_OS.into(), "windows".into());
    ClusterState {
        nodes,
        services: vec![svc],
        endpoint_slices: vec![s],
        ..Default::default()
    }
}

fn routes(state: &ClusterState, node: &str, mode: ProxyMode) -> Vec<MatrixRoute> {
    let config = MatrixConfig {
        data_plane: DataPlane::KubeProxy(Some(mode)),
        ..Default::default()
    };
    let m = Matrix::new(state, config);
    let n = m.node_position(node).expect("node");
    m.node_routes(0, n).routes
}

fn find(routes: &[MatrixRoute], source: Source, dest: Destination) -> &MatrixRoute {
    routes
        .iter()
        .find(|r| r.route.source == source && r.route.destination == dest)
        .unwrap_or_else(|| panic!("no route {source:?}->{dest:?}"))
}

fn ranged(ranges: &[&str]) -> ClusterState {
    state(|s| s.load_balancer_source_ranges = ranges.iter().map(|r| r.to_string()).collect())
}

/// The node's own traffic to the VIP is judged by its address (kube-proxy's `nodeIP`): inside
/// a range it passes, outside it is dropped before DNAT, in every mode.
#[test]
fn load_balancer_source_ranges_drop_the_node_outside_every_range() {
    let state = ranged(&["10.0.0.0/8"]);
    for mode in ProxyMode::ALL {
        let out = routes(&state, "node-out", mode);
        let host = &find(&out, Source::Host, Destination::LoadBalancer).route;
        assert_eq!(host.verdict, VerdictKind::Drop, "{mode:?}");
        assert_eq!(host.reason, Reason::LoadBalancerSourceRanges);
        assert!(host.endpoints.is_empty() && !host.source_ranges);
        let inside = routes(&state, "node-in", mode);
        let host = &find(&inside, Source::Host, Destination::LoadBalancer).route;
        assert_eq!(host.verdict, VerdictKind::Deliver, "{mode:?}");
        assert!(!host.source_ranges, "the node's address is known: no condition");
    }
}

/// A pod's or an outside client's address is not in the input: the verdict is the one for
/// clients inside the ranges, marked as such.
#[test]
fn load_balancer_source_ranges_condition_pods_and_outside_clients() {
    let state = ranged(&["10.0.0.0/8"]);
    let out = routes(&state, "node-out", ProxyMode::Iptables);
    for source in [Source::Pod, Source::External] {
        let r = &find(&out, source, Destination::LoadBalancer).route;
        assert_eq!(r.verdict, VerdictKind::Deliver);
        assert!(r.source_ranges, "{source:?}");
        assert!(r.trace.iter().any(|t| t.step == "source-ranges"));
    }
}

/// Ranges never apply to NodePorts or cluster IPs.
#[test]
fn load_balancer_source_ranges_spare_node_ports_and_cluster_ips() {
    let state = ranged(&["10.0.0.0/8"]);
    let out = routes(&state, "node-out", ProxyMode::Nftables);
    for source in Source::ALL {
        for dest in [Destination::ClusterIp, Destination::NodePort] {
            let r = &find(&out, source, dest).route;
            assert_eq!(r.verdict, VerdictKind::Deliver, "{source:?}->{dest:?}");
            assert!(!r.source_ranges, "{source:?}->{dest:?}");
        }
    }
}

/// Only ranges of the port's family count (`MapCIDRsByIPFamily`): IPv6 ranges put no
/// firewall in front of an IPv4 VIP. No ranges, no firewall.
#[test]
fn load_balancer_source_ranges_of_another_family_or_none_leave_the_vip_open() {
    for state in [ranged(&["fd00::/64"]), ranged(&[])] {
        let out = routes(&state, "node-out", ProxyMode::Iptables);
        for source in Source::ALL {
            let r = &find(&out, source, Destination::LoadBalancer).route;
            assert_eq!(r.verdict, VerdictKind::Deliver);
            assert!(!r.source_ranges);
        }
    }
}

/// `ipMode: Proxy` and hostname-only ingresses are not VIPs: no load balancer route at all,
/// so no firewall (the proxying load balancer reaches the NodePort).
#[test]
fn load_balancer_source_ranges_do_not_apply_to_proxy_mode_or_hostname_ingresses() {
    for ingress in [
        LoadBalancerIngress {
            ip: Some("203.0.113.5".parse().unwrap()),
            ip_mode: Some("Proxy".into()),
            ..Default::default()
        },
        LoadBalancerIngress {
            hostname: Some("lb.example.com".into()),
            ..Default::default()
        },
    ] {
        let state = state(|s| {
            s.load_balancer_source_ranges = vec!["10.0.0.0/8".into()];
            s.load_balancer_ingress = vec![ingress];
        });
        let out = routes(&state, "node-out", ProxyMode::Iptables);
        assert!(
            out.iter()
                .all(|r| r.route.destination != Destination::LoadBalancer)
        );
        assert!(out.iter().all(|r| r.route.verdict == VerdictKind::Deliver));
    }
}

/// winkernel implements no source ranges (upstream issues #107019, #120033).
#[test]
fn load_balancer_source_ranges_are_not_applied_on_windows_nodes() {
    let state = ranged(&["10.0.0.0/8"]);
    let out = routes(&state, "node-win", ProxyMode::Iptables);
    let host = &find(&out, Source::Host, Destination::LoadBalancer).route;
    assert_eq!(host.verdict, VerdictKind::Deliver);
    assert!(!host.source_ranges);
}

/// `allocateLoadBalancerNodePorts: false` on a LoadBalancer without a nodePort: no NodePort
/// routes; left to its default (true), the allocated NodePort is routed.
#[test]
fn allocate_load_balancer_node_ports_false_has_no_node_port_routes() {
    let without = state(|s| {
        s.ports[0].node_port = 0;
        s.allocate_load_balancer_node_ports = Some(false);
    });
    let out = routes(&without, "node-in", ProxyMode::Iptables);
    assert!(out.iter().all(|r| r.route.destination != Destination::NodePort));
    assert!(
        out.iter()
            .any(|r| r.route.destination == Destination::LoadBalancer)
    );
    let allocated = state(|s| s.ports[0].node_port = 0);
    let out = routes(&allocated, "node-in", ProxyMode::Iptables);
    assert!(out.iter().any(|r| r.route.destination == Destination::NodePort));
}

/// `sessionAffinity: ClientIP`: every delivered route sticks per client address for the
/// timeout (default 10800 s), in every mode; nothing else changes.
#[test]
fn session_affinity_client_ip_sticks_per_client_on_delivered_routes() {
    let sticky = state(|s| s.session_affinity = Some("ClientIP".into()));
    let plain = state(|s| s.session_affinity = Some("None".into()));
    for mode in ProxyMode::ALL {
        let a = routes(&sticky, "node-in", mode);
        let b = routes(&plain, "node-in", mode);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.route.verdict, y.route.verdict);
            assert_eq!(x.route.endpoints, y.route.endpoints);
            assert_eq!(x.route.session_affinity, Some(10800), "{mode:?}");
            assert!(
                x.route
                    .trace
                    .iter()
                    .any(|t| t.step == "session-affinity" && t.detail.contains("not a uniform spread")),
                "{:?}",
                x.route.trace
            );
            assert_eq!(y.route.session_affinity, None);
        }
    }
}

/// A written timeout wins over the default; a dropped route has no spread to speak of.
#[test]
fn session_affinity_timeout_as_written_and_none_on_drops() {
    let state = state(|s| {
        s.session_affinity = Some("ClientIP".into());
        s.session_affinity_timeout_seconds = Some(60);
        s.internal_traffic_policy = Some(TrafficPolicy::Local);
        s.load_balancer_source_ranges = vec!["10.0.0.0/8".into()];
    });
    let out = routes(&state, "node-out", ProxyMode::Iptables);
    let cluster_ip = &find(&out, Source::Pod, Destination::ClusterIp).route;
    assert_eq!(cluster_ip.session_affinity, Some(60));
    let dropped = &find(&out, Source::Host, Destination::LoadBalancer).route;
    assert_eq!(dropped.verdict, VerdictKind::Drop);
    assert_eq!(dropped.session_affinity, None);
}
