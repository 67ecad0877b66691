//! The simulated scheduler and Deployment controller.

use super::NS;
use locality_model::objects::Protocol;
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{Client, Engine, Kind, Object, ObjectKey, Outcome, SimConfig, Target, Topology};

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
