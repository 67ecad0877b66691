//! `minReadySeconds` in the simulated DaemonSet and Deployment controllers: a rolling update
//! with `maxSurge: 0`, `maxUnavailable: 1` deletes the next old pod only once the previous
//! replacement has been Ready for `minReadySeconds` (`podutil.IsPodAvailable`, read by
//! `pkg/controller/daemon/update.go` `rollingUpdate` and `pkg/controller/deployment/rolling.go`
//! `reconcileOldReplicaSets`), so each step takes `minReadySeconds` longer.

use locality_model::objects::{PodSpec, WorkloadKind};
use locality_sim::builders::{container_port, labels, netexec_behaviour, workload};
use locality_sim::whatif::{Change, RunOptions, run};
use locality_sim::{Engine, EventType, Kind, Object, ObjectKey, SimConfig, Topology};

use crate::whatif::config;

const NS: &str = "default";

/// When, after `from`, each pod labelled `app: web` started deleting and each pod created
/// after `from` first became Ready, both sorted.
fn steps(e: &Engine, from: u64) -> (Vec<u64>, Vec<u64>) {
    let (mut deleting, mut ready) = (Vec::new(), Vec::new());
    let mut seen_deleting = std::collections::HashSet::new();
    let mut seen_ready = std::collections::HashSet::new();
    let mut created_after = std::collections::HashSet::new();
    for ev in e.store().events() {
        let Some(p) = ev.object.as_pod() else { continue };
        if ev.time < from || p.pod.meta.labels.get("app").map(String::as_str) != Some("web") {
            continue;
        }
        let name = ev.key.name.clone();
        if ev.event_type == EventType::Added {
            created_after.insert(name.clone());
        }
        if p.pod.meta.deletion_timestamp.is_some() && seen_deleting.insert(name.clone()) {
            deleting.push(ev.time);
        }
        if p.pod.ready && created_after.contains(&name) && seen_ready.insert(name) {
            ready.push(ev.time);
        }
    }
    deleting.sort_unstable();
    ready.sort_unstable();
    (deleting, ready)
}

/// `three-zones` with the workload `default/web` of `kind` (3 replicas for a Deployment,
/// one pod per node for a DaemonSet), `maxSurge: 0`, `maxUnavailable: 1` and
/// `minReadySeconds: min_ready`, rolled: the deletions and readiness of its pods.
fn rolled(kind: WorkloadKind, min_ready: u32) -> (Vec<u64>, Vec<u64>) {
    let t = Topology::builtin("three-zones").unwrap();
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    let spec = PodSpec {
        ports: vec![container_port("http", 8080)],
        ..PodSpec::default()
    };
    let replicas = (kind != WorkloadKind::DaemonSet).then_some(3);
    let mut w = workload(
        kind,
        NS,
        "web",
        labels(&[("app", "web")]),
        spec,
        replicas,
        netexec_behaviour(8080),
    );
    if let Object::Workload(w) = &mut w {
        w.workload.min_ready_seconds = min_ready;
        w.workload.max_surge = Some("0".into());
        w.workload.max_unavailable = Some("1".into());
    }
    e.create(w).unwrap();
    e.run_until(120_000);
    let start = e.now();
    let target = Kind::of_workload(kind).unwrap();
    let change = Change::Rollout {
        workload: ObjectKey::new(target, NS, "web"),
        max_surge: Some("0".into()),
        max_unavailable: Some("1".into()),
    };
    let options = RunOptions {
        step_ms: 250,
        limit_ms: 600_000,
        ..RunOptions::default()
    };
    let r = run(&mut e, &[change], &config(), &options, &mut |_| {}).unwrap();
    assert!(r.settled, "{:?}", r.unsettled);
    // Let the last replacement become available too.
    e.run_for(30_000);
    steps(&e, start)
}

/// Each old pod after the first is deleted at least `min_ready` s after the previous
/// replacement became Ready, and the whole rollout takes at least that much longer per step
/// than without `minReadySeconds`.
fn check(kind: WorkloadKind) {
    let (d0, r0) = rolled(kind, 0);
    let (d10, r10) = rolled(kind, 10);
    assert_eq!(d0.len(), 3, "{kind:?}: three old pods replaced: {d0:?}");
    assert_eq!((d10.len(), r10.len()), (3, 3), "{kind:?}: {d10:?} {r10:?}");
    for i in 1..d10.len() {
        assert!(
            d10[i] >= r10[i - 1] + 10_000,
            "{kind:?}: old pod {i} deleted at {} ms, the previous replacement Ready at {} ms: {d10:?} {r10:?}",
            d10[i],
            r10[i - 1]
        );
    }
    // Without minReadySeconds the next deletion follows the replacement's readiness at once.
    for i in 1..d0.len() {
        assert!(d0[i] < r0[i - 1] + 10_000, "{kind:?}: {d0:?} {r0:?}");
    }
    let span = |d: &[u64]| d[d.len() - 1] - d[0];
    assert!(
        span(&d10) >= span(&d0) + 10_000 * (d0.len() as u64 - 1),
        "{kind:?}: {} ms with minReadySeconds 10, {} ms without",
        span(&d10),
        span(&d0)
    );
}

#[test]
fn a_daemon_set_rollout_waits_min_ready_seconds_per_node() {
    check(WorkloadKind::DaemonSet);
}

#[test]
fn a_deployment_rollout_waits_min_ready_seconds_per_pod() {
    check(WorkloadKind::Deployment);
}
