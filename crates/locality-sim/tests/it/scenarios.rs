//! Playbook cases as simulated-engine scenarios.

use locality_model::objects::{Protocol, TargetPort, TrafficPolicy, WorkloadKind};
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{Client, Engine, Kind, Object, ObjectKey, Outcome, SimConfig, Target, Topology};

const NS: &str = "default";

fn engine(topology: &str) -> Engine {
    Engine::from_topology(&Topology::builtin(topology).unwrap(), SimConfig::default()).unwrap()
}

fn backend(e: &mut Engine, name: &str, node: &str) {
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

fn web_service(e: &mut Engine, itp_local: bool) -> std::net::IpAddr {
    let mut s = builders::service(
        NS,
        "web",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    );
    if itp_local {
        s.internal_traffic_policy = Some(TrafficPolicy::Local);
    }
    e.create(Object::Service(s)).unwrap();
    let svc = e
        .get(&ObjectKey::new(Kind::Service, NS, "web"))
        .unwrap()
        .as_service()
        .unwrap();
    svc.cluster_ips[0]
}

fn clients(e: &mut Engine, nodes: &[&str]) {
    for n in nodes {
        e.create(builders::client_pod(NS, &format!("client-{n}"), n))
            .unwrap();
    }
}

fn connect(e: &mut Engine, from_node: &str, to: &Target) -> Outcome {
    e.connect(
        &Client::pod(NS, &format!("client-{from_node}")),
        to,
        Protocol::TCP,
        5_000,
    )
    .unwrap()
}

#[test]
fn itp_local_client_without_backend_times_out_and_with_backend_gets_its_own_node() {
    let mut e = engine("three-zones");
    backend(&mut e, "web-a", "node-a");
    backend(&mut e, "web-b", "node-b");
    let ip = web_service(&mut e, true);
    clients(&mut e, &["node-a", "node-b", "node-c"]);
    e.run_until(10_000);
    let to = Target::Addr(ip, 80);
    for _ in 0..20 {
        match connect(&mut e, "node-a", &to) {
            Outcome::Response { node, pod, .. } => {
                assert_eq!((node.as_str(), pod.as_str()), ("node-a", "web-a"))
            }
            o => panic!("node-a: {o:?}"),
        }
        match connect(&mut e, "node-b", &to) {
            Outcome::Response { node, .. } => assert_eq!(node, "node-b"),
            o => panic!("node-b: {o:?}"),
        }
        assert_eq!(connect(&mut e, "node-c", &to), Outcome::Timeout);
    }
    // By DNS name too.
    let dns = Target::Dns("web.default.svc.cluster.local".into(), 80);
    assert_eq!(connect(&mut e, "node-c", &dns), Outcome::Timeout);
    assert!(matches!(
        connect(&mut e, "node-a", &dns),
        Outcome::Response { .. }
    ));
    let rules = e.rules_text("node-c").unwrap();
    assert!(
        rules.contains("default/web:http has no local endpoints"),
        "{rules}"
    );
    let metrics = e.metrics_text("node-c").unwrap().unwrap();
    assert!(
        metrics.contains(
            "kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv4\",traffic_policy=\"internal\"} 1"
        ),
        "{metrics}"
    );
}

#[test]
fn no_endpoints_is_refused() {
    let mut e = engine("three-zones");
    let ip = web_service(&mut e, false);
    clients(&mut e, &["node-a"]);
    e.run_until(5_000);
    assert_eq!(connect(&mut e, "node-a", &Target::Addr(ip, 80)), Outcome::Refused);
    assert!(
        e.rules_text("node-a")
            .unwrap()
            .contains("default/web:http has no endpoints")
    );
}

#[test]
fn prefer_same_node_falls_back_to_other_nodes() {
    let mut e = engine("three-zones");
    backend(&mut e, "web-a", "node-a");
    backend(&mut e, "web-b", "node-b");
    let mut s = builders::service(
        NS,
        "web",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    );
    s.traffic_distribution = Some("PreferSameNode".into());
    e.create(Object::Service(s)).unwrap();
    clients(&mut e, &["node-a", "node-c"]);
    e.run_until(10_000);
    let ip = e
        .get(&ObjectKey::new(Kind::Service, NS, "web"))
        .unwrap()
        .as_service()
        .unwrap()
        .cluster_ips[0];
    let to = Target::Addr(ip, 80);
    let mut from_c = std::collections::BTreeSet::new();
    for _ in 0..50 {
        match connect(&mut e, "node-a", &to) {
            Outcome::Response { node, .. } => assert_eq!(node, "node-a"),
            o => panic!("{o:?}"),
        }
        match connect(&mut e, "node-c", &to) {
            Outcome::Response { node, .. } => {
                from_c.insert(node);
            }
            o => panic!("{o:?}"),
        }
    }
    assert_eq!(from_c.len(), 2, "node-c falls back to both backends: {from_c:?}");
}

/// A DaemonSet behind an ITP Local Service rolled out with `maxSurge`: returns the outcome
/// classes seen by a client on node-a probing every 100 ms during the rollout.
fn daemonset_rollout(max_surge: &str, max_unavailable: &str) -> Vec<(u64, Outcome)> {
    let mut e = engine("three-zones");
    let l = labels(&[("app", "agent")]);
    let spec = locality_model::objects::PodSpec {
        ports: vec![container_port("http", 8080)],
        ..Default::default()
    };
    let behaviour = locality_sim::PodBehaviour {
        readiness: Some(locality_sim::ReadinessProbe {
            handler: locality_sim::ProbeHandler::HttpGet {
                path: "/readyz".into(),
                port: 8080,
            },
            initial_delay_seconds: 3,
            period_seconds: 1,
            failure_threshold: 1,
        }),
        shutdown_delay_seconds: 10,
        ..Default::default()
    };
    let mut ds = builders::workload(
        WorkloadKind::DaemonSet,
        NS,
        "agent",
        l.clone(),
        spec,
        None,
        behaviour,
    );
    if let Object::Workload(w) = &mut ds {
        w.workload.max_surge = Some(max_surge.into());
        w.workload.max_unavailable = Some(max_unavailable.into());
    }
    e.create(ds).unwrap();
    let svc = builders::itp_local(builders::service(
        NS,
        "agent",
        l,
        80,
        TargetPort::Name("http".into()),
    ));
    e.create(Object::Service(svc)).unwrap();
    clients(&mut e, &["node-a"]);
    e.run_until(15_000);
    let ip = e
        .get(&ObjectKey::new(Kind::Service, NS, "agent"))
        .unwrap()
        .as_service()
        .unwrap()
        .cluster_ips[0];
    let to = Target::Addr(ip, 80);
    assert!(matches!(connect(&mut e, "node-a", &to), Outcome::Response { .. }));
    // Roll out: a template change.
    let key = ObjectKey::new(Kind::DaemonSet, NS, "agent");
    let mut w = e.get(&key).unwrap().as_workload().unwrap().clone();
    w.workload.template_labels.insert("version".into(), "2".into());
    e.update(Object::Workload(w), None).unwrap();
    let mut seen = Vec::new();
    for step in 0..600u64 {
        e.run_until(15_000 + step * 100);
        seen.push((e.now(), connect(&mut e, "node-a", &to)));
    }
    // The rollout finished: every pod is new.
    let pods: Vec<_> = e
        .store()
        .list(Kind::Pod)
        .filter_map(|(_, s)| s.object.as_pod().cloned())
        .filter(|p| p.pod.meta.labels.get("app").map(String::as_str) == Some("agent"))
        .collect();
    assert_eq!(pods.len(), 3, "{pods:#?}");
    assert!(
        pods.iter()
            .all(|p| p.pod.meta.labels.get("version").map(String::as_str) == Some("2"))
    );
    seen
}

#[test]
fn daemonset_rollout_max_surge_0_has_a_drop_window() {
    let seen = daemonset_rollout("0", "1");
    let timeouts = seen.iter().filter(|(_, o)| *o == Outcome::Timeout).count();
    assert!(timeouts > 0, "expected a drop window on node-a");
}

#[test]
fn daemonset_rollout_max_surge_1_has_none() {
    let seen = daemonset_rollout("1", "0");
    let bad: Vec<_> = seen
        .iter()
        .filter(|(_, o)| !matches!(o, Outcome::Response { .. }))
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
}
