//! Pod → endpoint: conditions, topology fields, inclusion, ports.
//!
//! Naming: one module per upstream test function (snake_case), one test per table case.
//! Sources: kubernetes/endpointslice `utils_test.go` `TestPodToEndpoint` (upstream test table D7, docs/upstream.md §6)
//! and `TestFindPort`.

use crate::endpointslice_common;

use endpointslice_common::*;
use locality_model::endpointslice::{
    SkipReason, endpoint_ports, find_port, node_for_pod, pod_to_endpoint, should_pod_be_in_endpoints,
};
use locality_model::objects::{
    ContainerPort, Endpoint, EndpointPort, IpFamily, Node, Pod, PodPhase, Protocol, Service, ServicePort,
    TargetPort,
};

/// `(ready, serving, terminating)` as written.
fn rst(e: &Endpoint) -> (Option<bool>, Option<bool>, Option<bool>) {
    (e.conditions.ready, e.conditions.serving, e.conditions.terminating)
}

const T: Option<bool> = Some(true);
const F: Option<bool> = Some(false);

fn d7_pod(ready: bool) -> Pod {
    pod("pod1", "1.2.3.5", "node-1", ready)
}

fn svc_pnra() -> Service {
    Service {
        publish_not_ready_addresses: true,
        ..service("foo")
    }
}

fn node1() -> Node {
    let mut n = node("node-1", Some("us-central1-a"), Some(1000), Some(true));
    n.meta
        .labels
        .insert("topology.kubernetes.io/region".into(), "us-central1".into());
    n
}

fn terminating(mut p: Pod) -> Pod {
    p.meta.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
    p
}

fn to_ep(p: &Pod, n: Option<&Node>, s: &Service) -> Endpoint {
    pod_to_endpoint(p, n, s, IpFamily::IPv4).expect("pod has an IPv4 address")
}

mod test_pod_to_endpoint {
    use super::*;

    /// `TestPodToEndpoint` "Ready pod".
    #[test]
    fn ready_pod() {
        let e = to_ep(&d7_pod(true), None, &service("foo"));
        assert_eq!(rst(&e), (T, T, F));
        assert_eq!(e.addresses, vec![ip("1.2.3.5")]);
        assert_eq!(e.node_name.as_deref(), Some("node-1"));
        assert_eq!(e.zone, None);
        assert_eq!(e.hostname, None);
        assert_eq!(e.hints, None);
        assert_eq!(e.target_ref, Some(("Pod".into(), "ns1".into(), "pod1".into())));
    }

    /// `TestPodToEndpoint` "Ready pod + publishNotReadyAddresses".
    #[test]
    fn ready_pod_publish_not_ready_addresses() {
        assert_eq!(rst(&to_ep(&d7_pod(true), None, &svc_pnra())), (T, T, F));
    }

    /// `TestPodToEndpoint` "Unready pod".
    #[test]
    fn unready_pod() {
        assert_eq!(rst(&to_ep(&d7_pod(false), None, &service("foo"))), (F, F, F));
    }

    /// `TestPodToEndpoint` "Unready pod + publishNotReadyAddresses".
    #[test]
    fn unready_pod_publish_not_ready_addresses() {
        assert_eq!(rst(&to_ep(&d7_pod(false), None, &svc_pnra())), (T, F, F));
    }

    /// `TestPodToEndpoint` "Ready pod + node labels".
    #[test]
    fn ready_pod_node_labels() {
        let n = node1();
        let e = to_ep(&d7_pod(true), Some(&n), &service("foo"));
        assert_eq!(rst(&e), (T, T, F));
        assert_eq!(e.zone.as_deref(), Some("us-central1-a"));
    }

    /// `TestPodToEndpoint` "Multi IP Ready pod + node labels".
    #[test]
    fn multi_ip_ready_pod_node_labels() {
        let mut p = d7_pod(true);
        p.pod_ips = vec![ip("1.2.3.4"), ip("1234::5678:0000:0000:9abc:def0")];
        let n = node1();
        let e = to_ep(&p, Some(&n), &service("foo"));
        assert_eq!(e.addresses, vec![ip("1.2.3.4")]);
        assert_eq!(rst(&e), (T, T, F));
        assert_eq!(e.zone.as_deref(), Some("us-central1-a"));
        let v6 = pod_to_endpoint(&p, Some(&n), &service("foo"), IpFamily::IPv6).expect("v6");
        assert_eq!(v6.addresses, vec![ip("1234::5678:0:0:9abc:def0")]);
    }

    /// `TestPodToEndpoint` "Ready pod + hostname".
    #[test]
    fn ready_pod_hostname() {
        let mut p = d7_pod(true);
        p.spec.subdomain = "foo".into();
        p.spec.hostname = "example-hostname".into();
        let n = node1();
        let e = to_ep(&p, Some(&n), &service("foo"));
        assert_eq!(e.hostname.as_deref(), Some("example-hostname"));
        assert_eq!(rst(&e), (T, T, F));
        // Subdomain naming another Service: no hostname.
        p.spec.subdomain = "bar".into();
        assert_eq!(to_ep(&p, Some(&n), &service("foo")).hostname, None);
    }

    /// `TestPodToEndpoint` second "Ready pod" entry (node nil).
    #[test]
    fn ready_pod_2() {
        let e = to_ep(&d7_pod(true), None, &service("foo"));
        assert_eq!(rst(&e), (T, T, F));
        assert_eq!(e.zone, None);
    }

    /// `TestPodToEndpoint` "Ready terminating pod".
    #[test]
    fn ready_terminating_pod() {
        assert_eq!(
            rst(&to_ep(&terminating(d7_pod(true)), None, &service("foo"))),
            (F, T, T)
        );
    }

    /// `TestPodToEndpoint` "Not ready terminating pod".
    #[test]
    fn not_ready_terminating_pod() {
        assert_eq!(
            rst(&to_ep(&terminating(d7_pod(false)), None, &service("foo"))),
            (F, F, T)
        );
    }
}

/// docs/upstream.md §4.2: a terminating pod is still Ready with publishNotReadyAddresses.
#[test]
fn terminating_pod_with_publish_not_ready_addresses_is_ready() {
    assert_eq!(
        rst(&to_ep(&terminating(d7_pod(true)), None, &svc_pnra())),
        (T, T, T)
    );
}

/// A node with an empty zone label gives no zone; a pod without an address of the family
/// gives no endpoint.
#[test]
fn empty_zone_label_and_missing_family() {
    let n = node("node-1", Some(""), Some(1000), Some(true));
    assert_eq!(to_ep(&d7_pod(true), Some(&n), &service("foo")).zone, None);
    assert_eq!(
        pod_to_endpoint(&d7_pod(true), Some(&n), &service("foo"), IpFamily::IPv6),
        None
    );
}

/// `util/controller_utils.go` `ShouldPodBeInEndpoints(pod, true)`.
#[test]
fn should_pod_be_in_endpoints_excludes_terminal_and_ipless() {
    let mut p = d7_pod(true);
    assert!(should_pod_be_in_endpoints(&p));
    assert!(should_pod_be_in_endpoints(&terminating(p.clone())));
    for phase in [PodPhase::Pending, PodPhase::Running, PodPhase::Unknown] {
        p.phase = phase;
        assert!(should_pod_be_in_endpoints(&p), "{phase:?}");
    }
    for phase in [PodPhase::Succeeded, PodPhase::Failed] {
        p.phase = phase;
        assert!(!should_pod_be_in_endpoints(&p), "{phase:?}");
    }
    let mut no_ip = d7_pod(true);
    no_ip.pod_ips.clear();
    assert!(!should_pod_be_in_endpoints(&no_ip));
}

/// `reconciler.go` missing-node rule (`TestReconcilerPodMissingNode`).
#[test]
fn node_for_pod_missing_node_rule() {
    let nodes: std::collections::BTreeMap<String, Node> = [("node-1".to_string(), node1())].into();
    let p = d7_pod(true);
    assert_eq!(
        node_for_pod(&p, &service("foo"), &nodes).map(|n| n.map(|n| n.meta.name.clone())),
        Ok(Some("node-1".into()))
    );
    let mut lost = p.clone();
    lost.spec.node_name = "node-9".into();
    assert_eq!(
        node_for_pod(&lost, &service("foo"), &nodes).map(|n| n.is_some()),
        Err(SkipReason::NodeNotFound {
            node: "node-9".into()
        })
    );
    assert_eq!(
        node_for_pod(&lost, &svc_pnra(), &nodes).map(|n| n.is_some()),
        Ok(false)
    );
    lost.spec.node_name.clear();
    assert_eq!(
        node_for_pod(&lost, &service("foo"), &nodes).map(|n| n.is_some()),
        Err(SkipReason::NodeNotFound { node: String::new() })
    );
}

fn cport(name: &str, port: u16, protocol: Protocol) -> ContainerPort {
    ContainerPort {
        name: name.into(),
        container_port: port,
        protocol,
        host_port: None,
    }
}

fn sport(target: TargetPort) -> ServicePort {
    ServicePort {
        name: "p".into(),
        protocol: Protocol::TCP,
        port: 80,
        target_port: target,
        node_port: 0,
    }
}

fn with_ports(ports: Vec<ContainerPort>) -> Pod {
    let mut p = d7_pod(true);
    p.spec.ports = ports;
    p
}

mod test_find_port {
    use super::*;

    /// `TestFindPort` "valid int, no ports".
    #[test]
    fn valid_int_no_ports() {
        assert_eq!(
            find_port(&with_ports(vec![]), &sport(TargetPort::Number(93))),
            Some(93)
        );
    }
    /// `TestFindPort` "valid int, with ports".
    #[test]
    fn valid_int_with_ports() {
        let p = with_ports(vec![cport("", 11, Protocol::TCP), cport("p", 22, Protocol::TCP)]);
        assert_eq!(find_port(&p, &sport(TargetPort::Number(93))), Some(93));
    }
    /// `TestFindPort` "valid str, no ports".
    #[test]
    fn valid_str_no_ports() {
        assert_eq!(
            find_port(&with_ports(vec![]), &sport(TargetPort::Name("p".into()))),
            None
        );
    }
    /// `TestFindPort` "valid str, one ctr with ports".
    #[test]
    fn valid_str_one_ctr_with_ports() {
        let p = with_ports(vec![
            cport("", 11, Protocol::UDP),
            cport("p", 22, Protocol::TCP),
            cport("q", 33, Protocol::TCP),
        ]);
        assert_eq!(find_port(&p, &sport(TargetPort::Name("q".into()))), Some(33));
    }
    /// `TestFindPort` "valid str, two ctr with same port".
    #[test]
    fn valid_str_two_ctr_with_same_port() {
        let p = with_ports(vec![
            cport("", 11, Protocol::UDP),
            cport("p", 22, Protocol::TCP),
            cport("q", 22, Protocol::TCP),
        ]);
        assert_eq!(find_port(&p, &sport(TargetPort::Name("q".into()))), Some(22));
    }
    /// `TestFindPort` "valid str, invalid protocol" (container port protocol differs).
    #[test]
    fn valid_str_invalid_protocol() {
        let p = with_ports(vec![cport("a", 11, Protocol::SCTP)]);
        assert_eq!(find_port(&p, &sport(TargetPort::Name("a".into()))), None);
    }
    /// `TestFindPort` "valid hostPort".
    #[test]
    fn valid_host_port() {
        let mut c = cport("a", 11, Protocol::TCP);
        c.host_port = Some(81);
        assert_eq!(
            find_port(&with_ports(vec![c]), &sport(TargetPort::Name("a".into()))),
            Some(11)
        );
    }
}

/// An unset numeric targetPort (0) defaults to the port, as API defaulting does.
#[test]
fn zero_target_port_defaults_to_port() {
    assert_eq!(
        find_port(&with_ports(vec![]), &sport(TargetPort::Number(0))),
        Some(80)
    );
}

/// `getEndpointPorts`: unresolvable Service ports are skipped, the rest keep name/protocol.
#[test]
fn endpoint_ports_skip_unresolved() {
    let mut svc = service("foo");
    svc.ports = vec![
        ServicePort {
            name: "http".into(),
            port: 80,
            target_port: TargetPort::Name("web".into()),
            ..Default::default()
        },
        ServicePort {
            name: "dns".into(),
            protocol: Protocol::UDP,
            port: 53,
            target_port: TargetPort::Name("dns".into()),
            ..Default::default()
        },
    ];
    let p = with_ports(vec![
        cport("web", 8080, Protocol::TCP),
        cport("dns", 5353, Protocol::TCP),
    ]);
    assert_eq!(
        endpoint_ports(&svc, &p),
        vec![EndpointPort {
            name: Some("http".into()),
            port: Some(8080),
            protocol: Some(Protocol::TCP)
        }]
    );
}
