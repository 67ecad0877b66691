//! The simulated StatefulSet controller on the engine: pods by ordinal, created in order; a
//! rolling update from the highest ordinal down, each pod deleted before its replacement (of
//! the same name) is created; `partition` and `OnDelete`; and the window an
//! `internalTrafficPolicy: Local` Service backed by a StatefulSet pod has on its node while
//! the pod is replaced.

use crate::whatif::config;
use locality_model::featuregate::FeatureGates;
use locality_model::objects::{PodManagementPolicy, PodSpec, TargetPort, WorkloadKind};
use locality_model::version::KubeVersion;
use locality_sim::EventType;
use locality_sim::builders::{
    client_pod, container_port, itp_local, labels, netexec_behaviour, pin_to_node, pod, service, workload,
};
use locality_sim::whatif::{Change, RunOptions, WhatIf, run};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};

const NS: &str = "default";

/// `three-zones` with the StatefulSet `default/db` (`replicas`, pinned to `pin` if given),
/// changed by `edit`, and an ITP Local Service `default/db` in front of it, a client on
/// every node.
fn cluster(replicas: u32, pin: Option<&str>, edit: impl FnOnce(&mut locality_sim::SimWorkload)) -> Engine {
    cluster_at(KubeVersion::new(1, 35), replicas, pin, edit)
}

/// [`cluster`] with the simulated control plane at `version`.
fn cluster_at(
    version: KubeVersion,
    replicas: u32,
    pin: Option<&str>,
    edit: impl FnOnce(&mut locality_sim::SimWorkload),
) -> Engine {
    cluster_gated(version, &[], replicas, pin, edit)
}

/// [`cluster_at`] with `--feature-gates` values.
fn cluster_gated(
    version: KubeVersion,
    gates: &[&str],
    replicas: u32,
    pin: Option<&str>,
    edit: impl FnOnce(&mut locality_sim::SimWorkload),
) -> Engine {
    let t = Topology::builtin("three-zones").unwrap();
    let sim = SimConfig {
        kube_version: version,
        feature_gates: FeatureGates::from_flags(gates).unwrap(),
        ..SimConfig::default()
    };
    sim.check_feature_gates().unwrap();
    let mut e = Engine::from_topology(&t, sim).unwrap();
    let mut spec = PodSpec {
        ports: vec![container_port("http", 8080)],
        ..PodSpec::default()
    };
    if let Some(node) = pin {
        pin_to_node(&mut spec, node);
    }
    let mut sts = workload(
        WorkloadKind::StatefulSet,
        NS,
        "db",
        labels(&[("app", "db")]),
        spec,
        Some(replicas),
        netexec_behaviour(8080),
    );
    if let Object::Workload(w) = &mut sts {
        edit(w);
    }
    e.create(sts).unwrap();
    let nodes: Vec<String> = e.node_names().map(str::to_string).collect();
    for n in &nodes {
        e.create(client_pod(NS, &format!("client-{n}"), n)).unwrap();
    }
    let svc = itp_local(service(
        NS,
        "db",
        labels(&[("app", "db")]),
        80,
        TargetPort::Name("http".into()),
    ));
    e.create(Object::Service(svc)).unwrap();
    e.run_until(120_000);
    e
}

fn rollout(e: &mut Engine, max_unavailable: Option<&str>) -> WhatIf {
    let change = Change::Rollout {
        workload: ObjectKey::new(Kind::StatefulSet, NS, "db"),
        max_surge: None,
        max_unavailable: max_unavailable.map(str::to_string),
    };
    let options = RunOptions {
        step_ms: 250,
        limit_ms: 600_000,
        ..RunOptions::default()
    };
    run(e, &[change], &config(), &options, &mut |_| {}).unwrap()
}

/// The store's pod events of `db-N` since `from`: (time, name, what).
fn pod_history(e: &Engine, from: u64) -> Vec<(u64, String, &'static str)> {
    let mut out = Vec::new();
    let mut ready = std::collections::HashMap::new();
    for ev in e.store().events() {
        if ev.key.kind != Kind::Pod || !ev.key.name.starts_with("db-") || ev.time < from {
            continue;
        }
        let Some(p) = ev.object.as_pod() else { continue };
        let what = match ev.event_type {
            EventType::Added => "created",
            EventType::Deleted => "removed",
            EventType::Modified if p.pod.meta.deletion_timestamp.is_some() => "deleting",
            EventType::Modified if p.pod.ready && !ready.get(&ev.key.name).copied().unwrap_or(false) => {
                "ready"
            }
            _ => "",
        };
        ready.insert(
            ev.key.name.clone(),
            p.pod.ready && ev.event_type != EventType::Deleted,
        );
        if !what.is_empty()
            && !out
                .iter()
                .any(|(_, n, w)| *n == ev.key.name && *w == what && what == "deleting")
        {
            out.push((ev.time, ev.key.name.to_string(), what));
        }
    }
    out
}

fn first(h: &[(u64, String, &'static str)], name: &str, what: &str) -> u64 {
    h.iter()
        .find(|(_, n, w)| n == name && *w == what)
        .map(|(t, _, _)| *t)
        .unwrap_or_else(|| panic!("no {what} of {name} in {h:?}"))
}

fn pod_names(e: &Engine) -> Vec<String> {
    e.store()
        .list_namespace(Kind::Pod, NS)
        .filter(|(k, _)| k.name.starts_with("db-"))
        .map(|(k, _)| k.name.to_string())
        .collect()
}

fn revision(e: &Engine, pod: &str) -> String {
    let p = e
        .get(&ObjectKey::new(Kind::Pod, NS, pod))
        .and_then(Object::as_pod)
        .unwrap();
    p.pod.meta.labels["controller-revision-hash"].clone()
}

#[test]
fn ordered_ready_creates_pods_by_ordinal_each_after_the_previous_is_ready() {
    let e = cluster(3, None, |_| {});
    assert_eq!(pod_names(&e), ["db-0", "db-1", "db-2"]);
    let h = pod_history(&e, 0);
    assert!(
        first(&h, "db-1", "created") >= first(&h, "db-0", "ready"),
        "{h:?}"
    );
    assert!(
        first(&h, "db-2", "created") >= first(&h, "db-1", "ready"),
        "{h:?}"
    );
}

#[test]
fn parallel_creates_every_pod_at_once() {
    let e = cluster(3, None, |w| {
        w.workload.pod_management_policy = PodManagementPolicy::Parallel
    });
    let h = pod_history(&e, 0);
    assert_eq!(
        first(&h, "db-2", "created"),
        first(&h, "db-0", "created"),
        "{h:?}"
    );
}

#[test]
fn a_rolling_update_replaces_from_the_highest_ordinal_deleting_before_creating() {
    let mut e = cluster(3, None, |_| {});
    let start = e.now();
    let r = rollout(&mut e, None);
    assert!(r.settled, "{:?}", r.unsettled);
    let h = pod_history(&e, start);
    let (d2, d1, d0) = (
        first(&h, "db-2", "deleting"),
        first(&h, "db-1", "deleting"),
        first(&h, "db-0", "deleting"),
    );
    assert!(d2 < d1 && d1 < d0, "{h:?}");
    // No surge: the replacement of a name is created only once the old pod is gone.
    for n in ["db-2", "db-1", "db-0"] {
        assert!(first(&h, n, "created") >= first(&h, n, "removed"), "{n}: {h:?}");
    }
    // The next pod goes only once the replacement is Ready.
    assert!(d1 >= first(&h, "db-2", "ready"), "{h:?}");
    assert!(d0 >= first(&h, "db-1", "ready"), "{h:?}");
    let revs: Vec<String> = pod_names(&e).iter().map(|p| revision(&e, p)).collect();
    assert!(revs.iter().all(|r| r == &revs[0]), "{revs:?}");
}

#[test]
fn min_ready_seconds_holds_the_next_replacement() {
    let mut e = cluster(2, None, |w| w.workload.min_ready_seconds = 20);
    let start = e.now();
    let r = rollout(&mut e, None);
    assert!(r.settled, "{:?}", r.unsettled);
    let h = pod_history(&e, start);
    assert!(
        first(&h, "db-0", "deleting") >= first(&h, "db-1", "ready") + 20_000,
        "{h:?}"
    );
}

#[test]
fn max_unavailable_replaces_several_at_once_with_the_gate() {
    let mut e = cluster(4, None, |w| {
        w.workload.pod_management_policy = PodManagementPolicy::Parallel
    });
    let start = e.now();
    let r = rollout(&mut e, Some("2"));
    assert!(r.settled, "{:?}", r.unsettled);
    let h = pod_history(&e, start);
    assert_eq!(
        first(&h, "db-3", "deleting"),
        first(&h, "db-2", "deleting"),
        "{h:?}"
    );
    assert!(
        first(&h, "db-1", "deleting") > first(&h, "db-2", "deleting"),
        "{h:?}"
    );
}

#[test]
fn before_1_35_max_unavailable_is_dropped_and_pods_go_one_at_a_time() {
    // A maxUnavailable stored on the StatefulSet (as read from a cluster where the gate was
    // on) and one asked for on the rollout are both ignored.
    let mut e = cluster_at(KubeVersion::new(1, 34), 4, None, |w| {
        w.workload.pod_management_policy = PodManagementPolicy::Parallel;
        w.workload.max_unavailable = Some("2".into());
    });
    let start = e.now();
    let r = rollout(&mut e, Some("3"));
    assert!(r.settled, "{:?}", r.unsettled);
    let h = pod_history(&e, start);
    let order: Vec<u64> = ["db-3", "db-2", "db-1", "db-0"]
        .iter()
        .map(|n| first(&h, n, "deleting"))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{h:?}");
    assert!(
        first(&h, "db-2", "deleting") >= first(&h, "db-3", "ready"),
        "{h:?}"
    );
}

/// The deletions of `db-3`…`db-0` in a rollout asking `maxUnavailable: 2` of a Parallel
/// StatefulSet at `version` with `gates`: true when `db-2` went with `db-3`.
fn two_at_once(version: KubeVersion, gates: &[&str]) -> bool {
    let mut e = cluster_gated(version, gates, 4, None, |w| {
        w.workload.pod_management_policy = PodManagementPolicy::Parallel;
    });
    let start = e.now();
    let r = rollout(&mut e, Some("2"));
    assert!(r.settled, "{:?}", r.unsettled);
    let h = pod_history(&e, start);
    first(&h, "db-3", "deleting") == first(&h, "db-2", "deleting")
}

#[test]
fn the_max_unavailable_gate_follows_feature_gates_on_both_sides_of_1_35() {
    assert!(two_at_once(KubeVersion::new(1, 35), &[]), "beta: on by default");
    assert!(
        !two_at_once(KubeVersion::new(1, 35), &["MaxUnavailableStatefulSet=false"]),
        "switched off at 1.35"
    );
    assert!(
        !two_at_once(KubeVersion::new(1, 34), &[]),
        "alpha: off by default"
    );
    assert!(
        two_at_once(KubeVersion::new(1, 34), &["MaxUnavailableStatefulSet=true"]),
        "switched on at 1.34"
    );
    assert!(
        !two_at_once(
            KubeVersion::new(1, 35),
            &["kube-controller-manager:MaxUnavailableStatefulSet=false"]
        ),
        "the controller alone switched off"
    );
}

#[test]
fn a_partition_keeps_the_lower_ordinals() {
    let mut e = cluster(3, None, |w| w.workload.partition = Some(2));
    let before = revision(&e, "db-0");
    let r = rollout(&mut e, None);
    assert!(r.settled, "{:?}", r.unsettled);
    assert_eq!(revision(&e, "db-0"), before);
    assert_eq!(revision(&e, "db-1"), before);
    assert_ne!(revision(&e, "db-2"), before);
}

#[test]
fn on_delete_replaces_nothing_until_a_pod_is_deleted() {
    let mut e = cluster(2, None, |w| w.workload.update_strategy = Some("OnDelete".into()));
    let before = revision(&e, "db-1");
    let start = e.now();
    let r = rollout(&mut e, None);
    assert!(r.settled, "{:?}", r.unsettled);
    assert!(pod_history(&e, start).iter().all(|(_, _, w)| *w != "deleting"));
    assert_eq!(revision(&e, "db-1"), before);
    // Deleted by hand, it comes back at the new revision.
    e.delete(&ObjectKey::new(Kind::Pod, NS, "db-1")).unwrap();
    e.run_for(120_000);
    assert_ne!(revision(&e, "db-1"), before);
    assert_eq!(revision(&e, "db-0"), before);
}

#[test]
fn an_itp_local_service_backed_by_one_stateful_pod_is_blind_on_its_node_during_the_replacement() {
    let mut e = cluster(1, Some("node-a"), |_| {});
    // Another backend of the Service, on node-b: the Service keeps an endpoint (a node with
    // none locally drops rather than rejects).
    e.create(pod(
        NS,
        "db-elsewhere",
        labels(&[("app", "db")]),
        vec![container_port("http", 8080)],
        Some("node-b"),
        netexec_behaviour(8080),
    ))
    .unwrap();
    e.run_for(30_000);
    let r = rollout(&mut e, None);
    assert!(r.settled, "{:?}", r.unsettled);
    let p = &r.ports[0];
    let node = p.nodes.get("node-a").expect("node-a is in the timeline");
    assert_eq!(node.windows.len(), 1, "{node:?}");
    let w = &node.windows[0];
    // From the old pod's exit to its replacement being Ready and programmed: at least the
    // new pod's start (1 s) and first readiness probe (1 s).
    assert!(w.end_ms - w.start_ms >= 2_000, "{w:?}");
    // Only node-a: node-b keeps its own endpoint, node-c has none before or after (blind
    // throughout, not the change's doing).
    assert_eq!(p.windowed().count(), 1, "{:?}", p.windowed().collect::<Vec<_>>());
}
