//! LoadBalancer Services in the simulated cluster: ingress IPs from the simulated pool, in-cluster
//! clients short-circuiting the VIP, outside clients through healthy nodes.

use super::{NS, answers, cluster, endpoint_ready, node, pod, service_ip, set};
use locality_model::objects::{
    IpFamily, LoadBalancerIngress, Protocol, ServiceType, TargetPort, TrafficPolicy,
};
use locality_sim::LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS;
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{
    Client, ConnectError, Engine, Kind, Object, ObjectKey, Outcome, PodBehaviour, SimConfig, Target, Topology,
};
use std::net::IpAddr;

pub(super) fn lb_service(name: &str, etp: Option<TrafficPolicy>) -> locality_model::objects::Service {
    let mut s = builders::service(
        NS,
        name,
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    );
    s.type_ = ServiceType::LoadBalancer;
    s.external_traffic_policy = etp;
    s
}

fn ingress(e: &Engine, name: &str) -> Vec<LoadBalancerIngress> {
    e.get(&ObjectKey::new(Kind::Service, NS, name))
        .unwrap()
        .as_service()
        .unwrap()
        .load_balancer_ingress
        .clone()
}

pub(super) fn vip(e: &Engine, name: &str) -> IpAddr {
    ingress(e, name)[0].ip.unwrap()
}

/// The simulated cloud load-balancer controller hands out TEST-NET-3 addresses (`ipMode:
/// VIP`), one per family, leaves Services with ingress alone, reclaims addresses.
#[test]
fn load_balancer_services_get_ingress_ips_from_the_simulated_pool() {
    let mut e = Engine::new(SimConfig {
        dual_stack: true,
        ..SimConfig::default()
    });
    for n in &Topology::builtin("three-zones").unwrap().nodes {
        e.create(Object::Node(n.node.clone())).unwrap();
    }
    e.create(Object::Service(lb_service("lb1", None))).unwrap();
    e.create(Object::Service(lb_service("lb2", None))).unwrap();
    e.create(Object::Service(builders::service(
        NS,
        "plain",
        labels(&[("app", "web")]),
        80,
        TargetPort::Number(80),
    )))
    .unwrap();
    let mut preset = lb_service("preset", None);
    preset.load_balancer_ingress = vec![LoadBalancerIngress {
        ip: Some("198.51.100.7".parse().unwrap()),
        ..LoadBalancerIngress::default()
    }];
    e.create(Object::Service(preset)).unwrap();
    let mut dual = lb_service("dual", None);
    dual.ip_families = vec![IpFamily::IPv4, IpFamily::IPv6];
    e.create(Object::Service(dual)).unwrap();
    e.run_for(100);
    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    assert_eq!(
        ingress(&e, "lb1"),
        vec![LoadBalancerIngress {
            ip: Some(ip("203.0.113.1")),
            hostname: None,
            ip_mode: Some("VIP".into()),
        }]
    );
    assert_eq!(vip(&e, "lb2"), ip("203.0.113.2"));
    assert!(ingress(&e, "plain").is_empty());
    assert_eq!(ingress(&e, "preset").len(), 1);
    assert_eq!(vip(&e, "preset"), ip("198.51.100.7"));
    let dual: Vec<IpAddr> = ingress(&e, "dual").iter().filter_map(|i| i.ip).collect();
    assert_eq!(dual, vec![ip("203.0.113.3"), ip("2001:db8:203:113::1")]);

    // Freed on deletion and reused; cleared when the Service stops being a LoadBalancer.
    e.delete(&ObjectKey::new(Kind::Service, NS, "lb1")).unwrap();
    e.run_for(100);
    e.create(Object::Service(lb_service("lb3", None))).unwrap();
    e.run_for(100);
    assert_eq!(vip(&e, "lb3"), ip("203.0.113.1"));
    let mut lb2 = e
        .get(&ObjectKey::new(Kind::Service, NS, "lb2"))
        .unwrap()
        .as_service()
        .unwrap()
        .clone();
    lb2.type_ = ServiceType::ClusterIP;
    e.update(Object::Service(lb2.clone()), None).unwrap();
    e.run_for(100);
    assert!(ingress(&e, "lb2").is_empty());
    // A replace that drops the status gets the same address back.
    let mut lb3 = e
        .get(&ObjectKey::new(Kind::Service, NS, "lb3"))
        .unwrap()
        .as_service()
        .unwrap()
        .clone();
    lb3.load_balancer_ingress.clear();
    e.update(Object::Service(lb3), None).unwrap();
    e.run_for(100);
    assert_eq!(vip(&e, "lb3"), ip("203.0.113.1"));
    assert_eq!(
        e.load_balancer_service(&ip("203.0.113.1"))
            .map(|(k, _)| k.name.to_string()),
        Some("lb3".to_string())
    );
    assert!(e.load_balancer_service(&ip("203.0.113.2")).is_none());
}

/// In-cluster clients to an LB VIP: kube-proxy short-circuits them (ETP Local does not apply
/// to pods and, in iptables mode, the host); nftables drops the host client when the node has
/// no local endpoint. The VIP is in the rules text.
#[test]
fn in_cluster_clients_to_a_load_balancer_vip_short_circuit() {
    let mut e = cluster(2, &[("node-c", "kube-proxy:nftables")]);
    e.create(Object::Service(lb_service("web-lb", Some(TrafficPolicy::Local))))
        .unwrap();
    e.run_until(10_000);
    let target = Target::Addr(vip(&e, "web-lb"), 80);
    let rules = e.rules_text("node-a").unwrap();
    assert!(
        rules.contains("203.0.113.1/32") && rules.contains("loadbalancer IP"),
        "{rules}"
    );
    // Pod on node-c (no local endpoint): cluster-wide.
    assert_eq!(
        answers(&mut e, &Client::pod(NS, "client-node-c"), &target),
        set(&["web-a", "web-b"])
    );
    // iptables host on node-a: short-circuited to the cluster chain.
    assert_eq!(
        answers(&mut e, &Client::host("node-a"), &target),
        set(&["web-a", "web-b"])
    );
    // nftables host on node-c without a local endpoint: the no-endpoint-services drop.
    assert_eq!(
        answers(&mut e, &Client::host("node-c"), &target),
        set(&["timeout"])
    );
    // From outside, arriving at node-c: ETP Local, no local endpoint, DROP.
    assert_eq!(
        answers(&mut e, &Client::external("node-c"), &target),
        set(&["timeout"])
    );
    // Arriving at node-b: its own endpoint only.
    assert_eq!(
        answers(&mut e, &Client::external("node-b"), &target),
        set(&["web-b"])
    );
}

/// Outside clients through the simulated cloud load balancer: every node with ETP Cluster,
/// only health-checked nodes with ETP Local (so no timeouts while some endpoint is ready), none
/// when no endpoint is ready; excluded nodes never; `ipMode: Proxy` through the NodePort.
#[test]
fn outside_clients_reach_lb_vips_through_healthy_nodes() {
    let mut e = cluster(4, &[]);
    // A second backend on node-a that keeps serving 30 s after SIGTERM.
    e.create(builders::pod(
        NS,
        "web-a-slow",
        labels(&[("app", "web")]),
        vec![container_port("http", 8080)],
        Some("node-a"),
        PodBehaviour {
            shutdown_delay_seconds: 30,
            ..netexec_behaviour(8080)
        },
    ))
    .unwrap();
    e.create(Object::Service(lb_service("web-cluster", None)))
        .unwrap();
    e.create(Object::Service(lb_service(
        "web-local",
        Some(TrafficPolicy::Local),
    )))
    .unwrap();
    e.run_until(10_000);
    let outside = Client::external_via_load_balancer();
    let key = |n: &str| ObjectKey::new(Kind::Service, NS, n);
    assert_eq!(
        e.load_balancer_backends(&key("web-cluster")),
        vec!["node-a", "node-b", "node-c"]
    );
    assert_eq!(
        e.load_balancer_backends(&key("web-local")),
        vec!["node-a", "node-b"]
    );
    assert!(
        e.load_balancer_backends(&key("web")).is_empty(),
        "not a LoadBalancer"
    );
    let cluster_vip = Target::Addr(vip(&e, "web-cluster"), 80);
    let local_vip = Target::Addr(vip(&e, "web-local"), 80);
    let all = set(&["web-a", "web-a-slow", "web-b"]);
    assert_eq!(answers(&mut e, &outside, &cluster_vip), all);
    // Only nodes with a local ready endpoint: never node-c's DROP.
    assert_eq!(answers(&mut e, &outside, &local_vip), all);
    // No listener on another port; cluster-internal addresses and names are not reachable.
    assert_eq!(
        e.connect(
            &outside,
            &Target::Addr(vip(&e, "web-local"), 81),
            Protocol::TCP,
            1_000
        )
        .unwrap(),
        Outcome::Timeout
    );
    assert_eq!(
        e.connect(
            &outside,
            &Target::Addr(service_ip(&e, "web"), 80),
            Protocol::TCP,
            1_000
        )
        .unwrap(),
        Outcome::Timeout
    );
    assert!(matches!(
        e.connect(&outside, &Target::Dns("web".into(), 80), Protocol::TCP, 1_000),
        Err(ConnectError::NoSuchHost(_))
    ));

    // Only a terminating (still serving) endpoint left on node-a: it fails the health check,
    // which counts ready endpoints only, though node-a would still serve what reaches it.
    e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a")).unwrap();
    e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a-slow")).unwrap();
    e.run_for(4_000);
    assert!(pod(&e, "web-a").is_none());
    assert_eq!(endpoint_ready(&e, "web-local", "web-a-slow"), Some(false));
    assert_eq!(e.load_balancer_backends(&key("web-local")), vec!["node-b"]);
    assert_eq!(answers(&mut e, &outside, &local_vip), set(&["web-b"]));
    assert_eq!(
        answers(&mut e, &Client::external("node-a"), &local_vip),
        set(&["web-a-slow"])
    );

    // An excluded node is not a backend.
    let mut b = node(&e, "node-b");
    b.meta
        .labels
        .insert(LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS.into(), String::new());
    e.update(Object::Node(b), None).unwrap();
    e.run_for(100);
    assert!(e.load_balancer_backends(&key("web-local")).is_empty());
    assert_eq!(answers(&mut e, &outside, &local_vip), set(&["timeout"]));
    assert_eq!(
        e.load_balancer_backends(&key("web-cluster")),
        vec!["node-a", "node-c"]
    );
    assert_eq!(answers(&mut e, &outside, &cluster_vip), set(&["web-b"]));

    // ipMode Proxy: not programmed as a VIP; the load balancer goes through a NodePort, and
    // in-cluster clients go out through it too.
    let mut proxied = lb_service("web-proxied", Some(TrafficPolicy::Local));
    proxied.load_balancer_ingress = vec![LoadBalancerIngress {
        ip: Some("198.51.100.20".parse().unwrap()),
        hostname: None,
        ip_mode: Some("Proxy".into()),
    }];
    e.create(Object::Service(proxied)).unwrap();
    let mut b = node(&e, "node-b");
    b.meta.labels.remove(LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS);
    e.update(Object::Node(b), None).unwrap();
    e.run_for(3_000);
    let proxied_vip = Target::Addr("198.51.100.20".parse().unwrap(), 80);
    assert!(!e.rules_text("node-b").unwrap().contains("198.51.100.20"));
    assert_eq!(answers(&mut e, &outside, &proxied_vip), set(&["web-b"]));
    assert_eq!(
        answers(&mut e, &Client::pod(NS, "client-node-c"), &proxied_vip),
        set(&["web-b"])
    );
}
