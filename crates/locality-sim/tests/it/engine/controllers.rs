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

/// Pods past each node's `maxPods` stay Pending with kube-scheduler's message, and are placed
/// once a pod leaves a node (a topology's `maxPods`, the Node's `status.allocatable.pods`).
#[test]
fn pods_past_every_nodes_max_pods_stay_pending_until_room_is_made() {
    let topology = Topology::from_yaml(
        "nodes:\n  - {name: a, maxPods: 3}\n  - {name: b, maxPods: 3}\n",
        "test",
    )
    .unwrap();
    let mut e = Engine::from_topology(&topology, SimConfig::default()).unwrap();
    let on_nodes = |e: &Engine| {
        let pods: Vec<_> = e
            .store()
            .list(Kind::Pod)
            .filter_map(|(k, s)| Some((k.clone(), s.object.as_pod()?.pod.spec.node_name.clone())))
            .collect();
        let bound = pods.iter().filter(|(_, n)| !n.is_empty()).count();
        let pending: Vec<ObjectKey> = pods
            .into_iter()
            .filter(|(_, n)| n.is_empty())
            .map(|(k, _)| k)
            .collect();
        (bound, pending)
    };
    let already = on_nodes(&e).0;
    assert!(already <= 6, "{already} pods before the test's");
    for i in 0..8 {
        e.create(builders::pod(
            NS,
            &format!("p{i}"),
            labels(&[]),
            vec![],
            None,
            Default::default(),
        ))
        .unwrap();
    }
    e.run_until(30_000);
    let (bound, pending) = on_nodes(&e);
    assert_eq!(bound, 6, "two nodes of maxPods 3 hold 6 pods");
    assert_eq!(pending.len(), already + 8 - 6);
    for key in &pending {
        assert_eq!(
            e.unschedulable_reason(key),
            Some("0/2 nodes are available: 2 Too many pods."),
            "{key}"
        );
    }
    // A pod leaves a node: the oldest pending one takes its place.
    let leaving = e
        .store()
        .list(Kind::Pod)
        .find(|(_, s)| {
            s.object
                .as_pod()
                .is_some_and(|p| !p.pod.spec.node_name.is_empty())
        })
        .map(|(k, _)| k.clone())
        .unwrap();
    e.delete_with(&leaving, Some(0)).unwrap();
    e.run_until(60_000);
    let (bound, still) = on_nodes(&e);
    assert_eq!(bound, 6);
    assert_eq!(still.len(), pending.len() - 1);
}
