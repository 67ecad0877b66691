//! Determinism, fault profiles, metrics, topologies and the rules snapshot of the simulated
//! cluster.

use std::net::IpAddr;

use locality_model::objects::{IpFamily, Protocol, ServiceType, TargetPort, TrafficPolicy};
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::topology::TopologyError;
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
fn fault_ignores_local_policy_answers_where_it_must_drop() {
    let mut ok = fixture(1, &[]);
    ok.run_until(10_000);
    assert_eq!(from(&mut ok, "node-c", "myservice"), Outcome::Timeout);
    let mut bad = fixture(1, &[("node-c", "ignores-local-policy")]);
    bad.run_until(10_000);
    assert!(matches!(
        from(&mut bad, "node-c", "myservice"),
        Outcome::Response { .. }
    ));
}

#[test]
fn fault_hostname_mismatch_makes_nothing_local() {
    let mut bad = fixture(1, &[("node-a", "hostname-mismatch")]);
    bad.run_until(10_000);
    assert_eq!(from(&mut bad, "node-a", "myservice"), Outcome::Timeout);
    assert!(matches!(
        from(&mut bad, "node-b", "myservice"),
        Outcome::Response { .. }
    ));
    let p = bad.kube_proxy("node-a").unwrap();
    assert_eq!(p.zone(), "", "it cannot read its own Node's zone");
    assert_eq!(p.no_local_endpoints("internal", IpFamily::IPv4), 1);
}

#[test]
fn fault_stale_rules_programs_changes_late() {
    let mut ok = fixture(1, &[]);
    let mut bad = fixture(1, &[("node-a", "stale-rules:5")]);
    // Backends are ready by ~2.3 s; a conformant kube-proxy programs them 1 s later.
    for e in [&mut ok, &mut bad] {
        e.run_until(4_000);
    }
    assert!(matches!(
        from(&mut ok, "node-a", "myservice"),
        Outcome::Response { .. }
    ));
    assert_ne!(from(&mut bad, "node-a", "myservice").class(), "response");
    bad.run_until(9_000);
    assert!(matches!(
        from(&mut bad, "node-a", "myservice"),
        Outcome::Response { .. }
    ));
    let late = bad.kube_proxy("node-a").unwrap().lag_ms;
    assert_eq!(late, 6_000);
}

#[test]
fn fault_lossy_loses_a_fraction() {
    let mut bad = fixture(3, &[("node-a", "lossy:0.5")]);
    bad.run_until(10_000);
    let outcomes: Vec<Outcome> = (0..400).map(|_| from(&mut bad, "node-a", "myservice")).collect();
    let lost = outcomes.iter().filter(|o| **o == Outcome::Timeout).count();
    assert!((120..280).contains(&lost), "lost {lost} of 400");
    assert!(
        outcomes
            .iter()
            .all(|o| *o == Outcome::Timeout || matches!(o, Outcome::Response { .. }))
    );
}

#[test]
fn fault_other_has_no_metrics() {
    let mut e = fixture(1, &[("node-a", "other:cilium")]);
    e.run_until(10_000);
    assert_eq!(e.metrics_text("node-a").unwrap(), None);
    assert_eq!(e.proxy_mode_text("node-a").unwrap(), None);
    assert!(e.metrics_text("node-b").unwrap().is_some());
    // Routing itself is kube-proxy's contract.
    assert!(matches!(
        from(&mut e, "node-a", "myservice"),
        Outcome::Response { .. }
    ));
}

#[test]
fn profiles_parse_and_reject_nonsense() {
    for p in [
        "kube-proxy",
        "kube-proxy:ipvs",
        "nftables",
        "stale-rules",
        "stale-rules:2.5+ipvs",
        "lossy:0.1",
        "other",
    ] {
        let parsed: DataPlaneProfile = p.parse().unwrap();
        let again: DataPlaneProfile = parsed.to_string().parse().unwrap();
        assert_eq!(parsed, again, "{p}");
    }
    for p in [
        "",
        "kube-proxy:bpf",
        "lossy:2",
        "stale-rules:-1",
        "lossy:x",
        "cilium",
    ] {
        let err = p.parse::<DataPlaneProfile>().unwrap_err().to_string();
        assert!(err.contains("simulated data-plane profile"), "{err}");
    }
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
fn refused_when_the_process_exited_but_the_endpoint_is_still_programmed() {
    let mut e = fixture(1, &[]);
    e.run_until(10_000);
    // Delete web-a (no shutdown delay): the process exits at once; node-a's kube-proxy keeps
    // the endpoint until it syncs one second later.
    e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a")).unwrap();
    e.run_until(10_100);
    assert_eq!(from(&mut e, "node-a", "myservice"), Outcome::Refused);
    e.run_until(12_000);
    assert_eq!(from(&mut e, "node-a", "myservice"), Outcome::Timeout);
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
fn scheduler_honours_selectors_affinity_and_taints() {
    let mut e =
        Engine::from_topology(&Topology::builtin("telemetry").unwrap(), SimConfig::default()).unwrap();
    // Pending: a nodeSelector nothing matches.
    let mut p = builders::pod(NS, "picky", labels(&[]), vec![], None, Default::default());
    if let Object::Pod(sp) = &mut p {
        sp.pod.spec.node_selector = labels(&[("disktype", "ssd")]);
    }
    e.create(p).unwrap();
    // Pinned to a tainted worker without toleration: pending with the taint as reason.
    e.create(builders::pod(
        NS,
        "pinned",
        labels(&[]),
        vec![],
        Some("worker-25"),
        Default::default(),
    ))
    .unwrap();
    e.run_until(30_000);
    let key = ObjectKey::new(Kind::Pod, NS, "picky");
    assert!(
        e.unschedulable_reason(&key)
            .unwrap()
            .contains("node affinity/selector")
    );
    let key = ObjectKey::new(Kind::Pod, NS, "pinned");
    assert!(
        e.unschedulable_reason(&key).unwrap().contains("dedicated: gpu"),
        "{:?}",
        e.unschedulable_reason(&key)
    );
    // The agent DaemonSet runs on the 24 untainted workers only, all ready.
    let agents: Vec<_> = e
        .store()
        .list_namespace(Kind::Pod, "telemetry")
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(|p| p.pod.meta.labels.get("app").map(String::as_str) == Some("agent"))
        .collect();
    assert_eq!(agents.len(), 24);
    assert!(
        agents
            .iter()
            .all(|p| p.pod.ready && !p.pod.spec.node_name.starts_with("cp-"))
    );
    assert!(
        agents
            .iter()
            .all(|p| !["worker-25", "worker-26", "worker-27"].contains(&p.pod.spec.node_name.as_str()))
    );
    let gateways = e
        .store()
        .list_namespace(Kind::Pod, "telemetry")
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(|p| p.pod.meta.labels.get("app").map(String::as_str) == Some("gateway") && p.pod.ready)
        .count();
    assert_eq!(gateways, 9);
    // A gateway pod on a tainted worker is blind: the agent Service drops its traffic there.
    let ip = e
        .get(&ObjectKey::new(Kind::Service, "telemetry", "agent"))
        .unwrap()
        .as_service()
        .unwrap()
        .cluster_ips[0];
    assert_eq!(
        e.connect(
            &Client::host("worker-25"),
            &Target::Addr(ip, 4317),
            Protocol::TCP,
            1000
        )
        .unwrap(),
        Outcome::Timeout
    );
    assert!(matches!(
        e.connect(
            &Client::host("worker-01"),
            &Target::Addr(ip, 4317),
            Protocol::TCP,
            1000
        )
        .unwrap(),
        Outcome::Response { .. }
    ));
}

#[test]
fn deployment_rolling_update_replaces_every_pod() {
    let mut e =
        Engine::from_topology(&Topology::builtin("four-nodes").unwrap(), SimConfig::default()).unwrap();
    let l = labels(&[("app", "web")]);
    let spec = locality_model::objects::PodSpec {
        ports: vec![container_port("http", 8080)],
        ..Default::default()
    };
    e.create(builders::workload(
        locality_model::objects::WorkloadKind::Deployment,
        NS,
        "web",
        l.clone(),
        spec,
        Some(4),
        netexec_behaviour(8080),
    ))
    .unwrap();
    e.run_until(20_000);
    let ready = |e: &Engine| {
        e.store()
            .list_namespace(Kind::Pod, NS)
            .filter_map(|(_, s)| s.object.as_pod())
            .filter(|p| p.pod.ready && p.pod.meta.deletion_timestamp.is_none())
            .map(|p| {
                p.pod
                    .meta
                    .labels
                    .get("pod-template-hash")
                    .cloned()
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(ready(&e).len(), 4);
    let key = ObjectKey::new(Kind::Deployment, NS, "web");
    let mut w = e.get(&key).unwrap().as_workload().unwrap().clone();
    w.workload.template_labels.insert("v".into(), "2".into());
    e.update(Object::Workload(w), None).unwrap();
    let mut min_ready = 4;
    for t in 0..600 {
        e.run_until(20_000 + t * 100);
        min_ready = min_ready.min(ready(&e).len());
    }
    let after = ready(&e);
    assert_eq!(after.len(), 4);
    assert!(after.iter().all(|h| h == &after[0]));
    // maxUnavailable 25% of 4 = 1.
    assert!(min_ready >= 3, "{min_ready}");
    assert_eq!(e.store().list_namespace(Kind::ReplicaSet, NS).count(), 2);
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

/// The value of an unlabelled sample in a Prometheus text exposition.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn metrics_build_info_follows_each_nodes_kube_proxy_version() {
    let mut e = fixture(1, &[]);
    e.set_proxy_version("node-b", locality_model::version::KubeVersion::new(1, 32));
    e.run_until(10_000);
    let b = e.metrics_text("node-b").unwrap().unwrap();
    assert!(
        b.contains(
            "\nkubernetes_build_info{build_date=\"2025-01-01T00:00:00Z\",compiler=\"gc\",\
             git_commit=\"0000000000000000000000000000000000000000\",git_tree_state=\"clean\",\
             git_version=\"v1.32.0\",go_version=\"go1.23.0\",major=\"1\",minor=\"32\",\
             platform=\"linux/amd64\"} 1\n"
        ),
        "{b}"
    );
    assert!(b.contains("# TYPE kubernetes_build_info gauge\n"), "{b}");
    // The other nodes run the cluster default (1.35).
    let a = e.metrics_text("node-a").unwrap().unwrap();
    assert!(
        a.contains("git_version=\"v1.35.0\",go_version=\"go1.25.0\",major=\"1\",minor=\"35\""),
        "{a}"
    );
    assert_eq!(a.matches("kubernetes_build_info{").count(), 1, "{a}");
    // A topology's kubeProxyVersion reaches the metric too.
    let t = Topology::from_yaml(
        "nodes:\n  - name: n1\n  - name: n2\n    kubeProxyVersion: \"1.30\"\n",
        "lab.yaml",
    )
    .unwrap();
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    e.run_until(5_000);
    let n2 = e.metrics_text("n2").unwrap().unwrap();
    assert!(
        n2.contains("git_version=\"v1.30.0\",go_version=\"go1.22.0\""),
        "{n2}"
    );
    // Families come in name order, each with its HELP and TYPE, as the Prometheus client
    // writes them.
    let families: Vec<&str> = n2
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    let mut sorted = families.clone();
    sorted.sort_unstable();
    assert_eq!(families, sorted);
    assert!(families.contains(&"kubernetes_build_info"));
    for l in n2.lines().filter(|l| !l.starts_with('#')) {
        let name = l.split(['{', ' ']).next().unwrap();
        assert!(families.contains(&name), "{l} has no TYPE line");
    }
}

/// A node with `stale-rules:5` keeps programming the old endpoints for the sync delay plus 5 s
/// after an EndpointSlice change: its last-sync timestamp stays before the change and its
/// pending endpoint changes above 0 all that time, while a conformant node catches up after
/// the sync delay alone; the metrics follow what each rule table actually holds.
#[test]
fn metrics_pending_endpoint_changes_and_last_sync_follow_the_rule_table() {
    const PENDING: &str = "kubeproxy_sync_proxy_rules_endpoint_changes_pending";
    const LAST: &str = "kubeproxy_sync_proxy_rules_last_timestamp_seconds";
    let mut e = fixture(1, &[("node-a", "stale-rules:5")]);
    let unix = |t: u64| locality_sim::time::unix_seconds(t);
    let web_b_ip = |e: &Engine| {
        e.get(&ObjectKey::new(Kind::Pod, NS, "web-b"))
            .unwrap()
            .as_pod()
            .unwrap()
            .pod
            .pod_ips[0]
    };
    let programs = |e: &Engine, node: &str, ip: IpAddr| {
        e.kube_proxy(node)
            .unwrap()
            .table()
            .entries()
            .any(|r| r.endpoints.iter().any(|ep| ep.ip == ip))
    };
    // Before its first sync a kube-proxy has its initial list pending: every labelled slice.
    e.run_until(500);
    let slices = e
        .store()
        .list(Kind::EndpointSlice)
        .filter(|(_, s)| {
            s.object
                .meta()
                .labels
                .contains_key(locality_model::objects::LABEL_SERVICE_NAME)
        })
        .count();
    assert!(slices >= 3, "{slices}");
    assert_eq!(e.endpoint_changes_pending("node-b"), Some(slices));
    assert_eq!(
        sample(&e.metrics_text("node-b").unwrap().unwrap(), LAST),
        Some(0.0)
    );

    e.run_until(30_000);
    let ip = web_b_ip(&e);
    for node in ["node-a", "node-b"] {
        assert_eq!(e.endpoint_changes_pending(node), Some(0), "{node}");
        assert!(programs(&e, node, ip), "{node}");
    }
    let synced_a = e.kube_proxy("node-a").unwrap().last_sync().unwrap();
    let synced_b = e.kube_proxy("node-b").unwrap().last_sync().unwrap();

    // web-b force-deleted: the simulated EndpointSlice controller removes its endpoint.
    let rv = e.store().resource_version();
    e.delete_with(&ObjectKey::new(Kind::Pod, NS, "web-b"), Some(0))
        .unwrap();
    e.run_until(30_500);
    let changes: Vec<u64> = e
        .events_since(rv)
        .unwrap()
        .iter()
        .filter(|ev| ev.key.kind == Kind::EndpointSlice)
        .map(|ev| ev.time)
        .collect();
    assert!(!changes.is_empty());
    let changed = *changes.last().unwrap();
    assert!(changed < 30_500);
    let delay = e.config().proxy_sync_delay_ms;
    assert_eq!(delay, 1_000);

    // Within the sync delay: both have the change pending and still program web-b.
    for (node, synced) in [("node-a", synced_a), ("node-b", synced_b)] {
        let m = e.metrics_text(node).unwrap().unwrap();
        assert_eq!(sample(&m, PENDING), Some(changes.len() as f64), "{node}: {m}");
        assert_eq!(sample(&m, LAST), Some(unix(synced)), "{node}: {m}");
        assert!(programs(&e, node, ip), "{node}");
    }

    // After the sync delay: the conformant node applied it, the stale one has not.
    e.run_until(changed + delay + 2_000);
    let b = e.metrics_text("node-b").unwrap().unwrap();
    assert_eq!(sample(&b, PENDING), Some(0.0), "{b}");
    assert_eq!(sample(&b, LAST), Some(unix(changed + delay)), "{b}");
    assert!(!programs(&e, "node-b", ip));
    let a = e.metrics_text("node-a").unwrap().unwrap();
    assert_eq!(sample(&a, PENDING), Some(changes.len() as f64), "{a}");
    assert_eq!(sample(&a, LAST), Some(unix(synced_a)), "{a}");
    assert!(sample(&a, LAST).unwrap() < unix(changed));
    assert!(programs(&e, "node-a", ip), "the stale node still programs web-b");

    // Once the sync delay plus the 5 s lag have passed, the stale node applies it too.
    e.run_until(changed + delay + 5_000 - 1);
    assert!(programs(&e, "node-a", ip));
    assert!(e.endpoint_changes_pending("node-a").unwrap() > 0);
    e.run_until(changed + delay + 5_000);
    let a = e.metrics_text("node-a").unwrap().unwrap();
    assert_eq!(sample(&a, PENDING), Some(0.0), "{a}");
    assert_eq!(sample(&a, LAST), Some(unix(changed + delay + 5_000)), "{a}");
    assert!(!programs(&e, "node-a", ip));
}

/// A Node update that changes nothing a kube-proxy programs (a label other than the zone) is
/// not a sync: the last-sync timestamp stays that of the last sync that applied state.
#[test]
fn metrics_last_sync_ignores_events_that_change_no_rules() {
    let mut e = fixture(1, &[]);
    e.run_until(20_000);
    let before = e.kube_proxy("node-c").unwrap().last_sync().unwrap();
    let key = ObjectKey::new(Kind::Node, "", "node-c");
    let mut node = e.get(&key).unwrap().as_node().unwrap().clone();
    node.meta.labels.insert("example.com/team".into(), "blue".into());
    e.update(Object::Node(node.clone()), None).unwrap();
    e.run_until(30_000);
    let p = e.kube_proxy("node-c").unwrap();
    assert_eq!(p.last_sync(), Some(before));
    assert_eq!(e.endpoint_changes_pending("node-c"), Some(0));
    // A zone change is applied state: every Service is reprogrammed.
    node.meta
        .labels
        .insert(locality_model::objects::LABEL_ZONE.into(), "zone-x".into());
    e.update(Object::Node(node), None).unwrap();
    e.run_until(40_000);
    let p = e.kube_proxy("node-c").unwrap();
    assert_eq!(p.zone(), "zone-x");
    assert!(p.last_sync().unwrap() > before);
}
