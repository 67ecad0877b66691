//! Determinism, fault profiles, metrics, topologies and the rules snapshot of the simulated
//! cluster.

mod controllers;
mod faults;
mod metrics;

use std::net::IpAddr;

use locality_model::objects::{IpFamily, Protocol, ServiceType, TargetPort, TrafficPolicy};
use locality_sim::TopologyError;
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{
    Client, DataPlaneProfile, Engine, Kind, Object, ObjectKey, Outcome, SimConfig, Target, Topology,
};

const NS: &str = "default";

/// The playbook fixture on three-zones: backends on node-a and node-b behind an ITP Local
/// Service, a NodePort Service with ETP Local, and a client pod per node.
fn fixture(seed: u64, profiles: &[(&str, &str)]) -> Engine {
    let mut e = Engine::new(SimConfig {
        seed,
        ..SimConfig::default()
    });
    for (node, p) in profiles {
        e.set_profile(node, p.parse::<DataPlaneProfile>().unwrap());
    }
    let t = Topology::builtin("three-zones").unwrap();
    for n in &t.nodes {
        e.create(Object::Node(n.node.clone())).unwrap();
    }
    for (name, node) in [("web-a", "node-a"), ("web-b", "node-b")] {
        e.create(builders::pod(
            NS,
            name,
            labels(&[("app", "web")]),
            vec![container_port("http", 8080)],
            Some(node),
            netexec_behaviour(8080),
        ))
        .unwrap();
    }
    for node in ["node-a", "node-b", "node-c"] {
        e.create(builders::client_pod(NS, &format!("client-{node}"), node))
            .unwrap();
    }
    let svc = builders::itp_local(builders::service(
        NS,
        "myservice",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    ));
    e.create(Object::Service(svc)).unwrap();
    let mut np = builders::service(
        NS,
        "web-np",
        labels(&[("app", "web")]),
        8080,
        TargetPort::Number(8080),
    );
    np.type_ = ServiceType::NodePort;
    np.external_traffic_policy = Some(TrafficPolicy::Local);
    e.create(Object::Service(np)).unwrap();
    e.create(Object::Service(builders::service(
        NS,
        "empty",
        labels(&[("app", "none")]),
        80,
        TargetPort::Number(80),
    )))
    .unwrap();
    e
}

fn cluster_ip(e: &Engine, name: &str) -> IpAddr {
    e.get(&ObjectKey::new(Kind::Service, NS, name))
        .unwrap()
        .as_service()
        .unwrap()
        .cluster_ips[0]
}

fn from(e: &mut Engine, node: &str, svc: &str) -> Outcome {
    let to = Target::Addr(cluster_ip(e, svc), 80);
    e.connect(
        &Client::pod(NS, &format!("client-{node}")),
        &to,
        Protocol::TCP,
        2_000,
    )
    .unwrap()
}

#[test]
fn same_seed_same_event_log_different_seed_differs() {
    let run = |seed| {
        let mut e = fixture(seed, &[]);
        e.run_until(20_000);
        let _ = e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a"));
        e.run_until(40_000);
        let outcomes: Vec<Outcome> = (0..20).map(|_| from(&mut e, "node-a", "myservice")).collect();
        (e.event_log_text(), outcomes, e.rules_text("node-b").unwrap())
    };
    let a = run(7);
    assert_eq!(a, run(7));
    assert!(a.0.lines().count() > 20);
    assert_ne!(a.0, run(8).0, "the seed drives start-up jitter");
}

#[test]
fn conformant_profiles_per_mode() {
    let mut e = fixture(
        1,
        &[("node-b", "kube-proxy:nftables"), ("node-c", "kube-proxy:ipvs")],
    );
    e.run_until(10_000);
    // ITP Local, no local endpoint: iptables DROP (timeout)... node-c has none: ipvs has no
    // real servers for a Service that is not externally reachable (refused).
    assert_eq!(from(&mut e, "node-c", "myservice"), Outcome::Refused);
    assert!(matches!(
        from(&mut e, "node-b", "myservice"),
        Outcome::Response { .. }
    ));
    assert_eq!(e.proxy_mode_text("node-b").unwrap().as_deref(), Some("nftables"));
    assert_eq!(e.proxy_mode_text("node-c").unwrap().as_deref(), Some("ipvs"));
    assert!(e.rules_text("node-b").unwrap().contains("table ip kube-proxy"));
    assert!(e.rules_text("node-c").unwrap().contains("IP Virtual Server"));
    assert_eq!(from(&mut e, "node-b", "empty"), Outcome::Refused);
}

#[test]
fn nodeport_etp_local_external_and_short_circuit() {
    let mut e = fixture(1, &[]);
    e.run_until(10_000);
    let svc = e
        .get(&ObjectKey::new(Kind::Service, NS, "web-np"))
        .unwrap()
        .as_service()
        .unwrap()
        .clone();
    let np = svc.ports[0].node_port;
    assert!((30000..=32767).contains(&np));
    let node_c_ip = e
        .get(&ObjectKey::new(Kind::Node, "", "node-c"))
        .unwrap()
        .as_node()
        .unwrap()
        .internal_ips[0];
    let node_a_ip = e
        .get(&ObjectKey::new(Kind::Node, "", "node-a"))
        .unwrap()
        .as_node()
        .unwrap()
        .internal_ips[0];
    let to_c = Target::Addr(node_c_ip, np);
    // From outside via node-c: no local endpoint, DROP.
    assert_eq!(
        e.connect(&Client::external("node-c"), &to_c, Protocol::TCP, 1000)
            .unwrap(),
        Outcome::Timeout
    );
    // From a pod or the host on node-c: short-circuit to the cluster chain.
    assert!(matches!(
        e.connect(&Client::pod(NS, "client-node-c"), &to_c, Protocol::TCP, 1000)
            .unwrap(),
        Outcome::Response { .. }
    ));
    assert!(matches!(
        e.connect(&Client::host("node-c"), &to_c, Protocol::TCP, 1000)
            .unwrap(),
        Outcome::Response { .. }
    ));
    // From outside via node-a: its own pod.
    match e
        .connect(
            &Client::external("node-a"),
            &Target::Addr(node_a_ip, np),
            Protocol::TCP,
            1000,
        )
        .unwrap()
    {
        Outcome::Response { node, .. } => assert_eq!(node, "node-a"),
        o => panic!("{o:?}"),
    }
    let metrics = e.metrics_text("node-c").unwrap().unwrap();
    assert!(
        metrics.contains("{ip_family=\"IPv4\",traffic_policy=\"external\"} 1"),
        "{metrics}"
    );
    // Wrong protocol / port: nothing listens.
    assert_eq!(
        e.connect(
            &Client::external("node-a"),
            &Target::Addr(node_a_ip, 1),
            Protocol::TCP,
            1000
        )
        .unwrap(),
        Outcome::Refused
    );
}

#[test]
fn pods_to_pod_ips_and_unknown_things() {
    let mut e = fixture(1, &[]);
    e.run_until(10_000);
    let ip = e
        .get(&ObjectKey::new(Kind::Pod, NS, "web-b"))
        .unwrap()
        .as_pod()
        .unwrap()
        .pod
        .pod_ips[0];
    let c = Client::pod(NS, "client-node-a");
    assert!(matches!(
        e.connect(&c, &Target::Addr(ip, 8080), Protocol::TCP, 1000)
            .unwrap(),
        Outcome::Response { .. }
    ));
    assert_eq!(
        e.connect(&c, &Target::Addr(ip, 9999), Protocol::TCP, 1000)
            .unwrap(),
        Outcome::Refused
    );
    assert_eq!(
        e.connect(&c, &Target::Addr(ip, 8080), Protocol::UDP, 1000)
            .unwrap(),
        Outcome::Refused
    );
    assert!(
        e.connect(&c, &Target::Dns("nope.default".into(), 80), Protocol::TCP, 1000)
            .is_err()
    );
    assert!(
        e.connect(
            &Client::pod(NS, "ghost"),
            &Target::Addr(ip, 8080),
            Protocol::TCP,
            1000
        )
        .is_err()
    );
    assert!(e.rules_text("node-z").is_err());
}

#[test]
fn yaml_topologies_and_their_errors() {
    let ok = "name: lab\nnodes:\n  - name: n1\n    zone: z1\n    cpu: 3500m\n    taints:\n      - {key: a, value: b, effect: NoSchedule}\n    profile: stale-rules:2+nftables\n  - name: n2\n    controlPlane: true\n    kubeProxyVersion: \"1.30\"\n";
    let t = Topology::from_yaml(ok, "lab.yaml").unwrap();
    assert_eq!(t.name, "lab");
    assert_eq!(t.nodes.len(), 2);
    assert_eq!(t.nodes[0].node.allocatable_cpu_millis, Some(3500));
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    e.run_until(5_000);
    assert_eq!(e.proxy_mode_text("n1").unwrap().as_deref(), Some("nftables"));

    let cases: &[(&str, &str)] = &[
        ("nodes: []\n", "at least one node"),
        ("nodes:\n  - name: n1\n    colour: red\n", "colour"),
        ("nodes:\n  - name: n1\n  - name: n1\n", "duplicate node name"),
        ("nodes:\n  - name: N_1\n", "DNS name"),
        ("nodes:\n  - name: n1\n    cpu: lots\n", "cpu \"lots\""),
        ("nodes:\n  - name: n1\n    internalIP: 300.1.1.1\n", "internalIP"),
        (
            "nodes:\n  - name: n1\n    taints: [{key: a, effect: Sometimes}]\n",
            "effect",
        ),
        (
            "nodes:\n  - name: n1\n    profile: turbo\n",
            "simulated data-plane profile",
        ),
        (
            "nodes:\n  - name: n1\n    kubeProxyVersion: \"2.0\"\n",
            "unsupported Kubernetes version",
        ),
        ("nodes: [\n", "invalid simulated topology"),
        ("- just a list\n", "invalid simulated topology"),
    ];
    for (text, want) in cases {
        let err = Topology::from_yaml(text, "bad.yaml").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(want) && msg.starts_with("bad.yaml"),
            "{text:?}: {msg}"
        );
    }
    assert!(matches!(
        Topology::builtin("five-zones"),
        Err(TopologyError::Unknown { .. })
    ));
}

#[test]
fn rules_text_three_zones_snapshot() {
    let mut e = fixture(1, &[]);
    e.run_until(10_000);
    insta::assert_snapshot!("three_zones_node_a", e.rules_text("node-a").unwrap());
    insta::assert_snapshot!("three_zones_node_c", e.rules_text("node-c").unwrap());
    insta::assert_snapshot!(
        "three_zones_node_c_metrics",
        e.metrics_text("node-c").unwrap().unwrap()
    );
}

#[test]
fn watch_replay_from_a_resource_version() {
    let mut e = fixture(1, &[]);
    e.run_until(3_000);
    let rv = e.store().resource_version();
    e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a")).unwrap();
    e.run_until(6_000);
    let since = e.events_since(rv).unwrap();
    assert!(since.iter().all(|ev| ev.resource_version > rv));
    let kinds: Vec<String> = since
        .iter()
        .map(|ev| format!("{} {}", ev.event_type.as_str(), ev.key))
        .collect();
    assert!(
        kinds.contains(&"MODIFIED Pod/default/web-a".to_string()),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&"DELETED Pod/default/web-a".to_string()),
        "{kinds:?}"
    );
    let pod_deleted = since
        .iter()
        .find(|ev| ev.event_type.as_str() == "DELETED")
        .unwrap();
    assert!(pod_deleted.object.meta().deletion_timestamp.is_some());
}

#[test]
fn dual_stack_services_get_both_families() {
    let mut e = Engine::new(SimConfig {
        dual_stack: true,
        ..SimConfig::default()
    });
    let t = Topology::builtin("three-zones").unwrap();
    for n in &t.nodes {
        e.create(Object::Node(n.node.clone())).unwrap();
    }
    e.create(builders::pod(
        NS,
        "web-a",
        labels(&[("app", "web")]),
        vec![container_port("http", 8080)],
        Some("node-a"),
        netexec_behaviour(8080),
    ))
    .unwrap();
    e.create(builders::client_pod(NS, "client-node-b", "node-b"))
        .unwrap();
    let mut s = builders::service(
        NS,
        "web",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    );
    s.ip_families = vec![IpFamily::IPv4, IpFamily::IPv6];
    e.create(Object::Service(s)).unwrap();
    e.run_until(10_000);
    let svc = e
        .get(&ObjectKey::new(Kind::Service, NS, "web"))
        .unwrap()
        .as_service()
        .unwrap()
        .clone();
    assert_eq!(svc.cluster_ips.len(), 2);
    let v6 = svc.cluster_ips[1];
    assert!(v6.is_ipv6());
    let got = e
        .connect(
            &Client::pod(NS, "client-node-b"),
            &Target::Addr(v6, 80),
            Protocol::TCP,
            1000,
        )
        .unwrap();
    assert!(
        matches!(got, Outcome::Response { ref pod, .. } if pod == "web-a"),
        "{got:?}"
    );
    let rules = e.rules_text("node-b").unwrap();
    assert!(
        rules.contains("# ip6tables-save") && rules.contains("fd00:10:244:1::2]:8080"),
        "{rules}"
    );
    assert_eq!(e.store().list(Kind::EndpointSlice).count(), 2);
}

#[test]
fn namespaces_must_exist() {
    let mut e = Engine::new(SimConfig::default());
    let err = e
        .create(builders::client_pod("nowhere", "c", "node-a"))
        .unwrap_err();
    assert!(err.to_string().contains("Namespace/nowhere not found"), "{err}");
}

#[test]
fn rules_for_a_topology_node() {
    let t = Topology::builtin("telemetry").unwrap();
    let text = locality_sim::rules_for_topology(&t, SimConfig::default(), "worker-25", 30_000).unwrap();
    assert!(
        text.contains("telemetry/agent:otlp-grpc has no local endpoints\" -m tcp --dport 4317 -j DROP"),
        "{text}"
    );
    let text = locality_sim::rules_for_topology(&t, SimConfig::default(), "worker-01", 30_000).unwrap();
    assert!(text.contains("KUBE-SVL-") && !text.contains("-j DROP"), "{text}");
    assert!(locality_sim::rules_for_topology(&t, SimConfig::default(), "nope", 0).is_err());
}
