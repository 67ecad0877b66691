//! The faster bookkeeping of a what-if run gives the same answers as the straightforward one:
//! `RolloutWatch` (following the store's events) agrees with `rolled_by_scan` (listing every
//! pod) at every step of DaemonSet and Deployment rollouts, across event-log compaction and a
//! deleted workload.

use locality_sim::whatif::rollout::{RolloutWatch, rolled_by_scan};
use locality_sim::whatif::{Change, apply};
use locality_sim::{Engine, Kind, ObjectKey, SimConfig, Topology};

fn telemetry(config: SimConfig) -> Engine {
    let mut e = Engine::from_topology(&Topology::builtin("telemetry").unwrap(), config).unwrap();
    e.run_until(60_000);
    e
}

/// Rolls `workload` and compares the watch with the scan every 250 ms until it is done;
/// returns (steps not done, steps done).
fn follow(e: &mut Engine, workload: ObjectKey, delete_at: Option<usize>) -> (usize, usize) {
    let change = Change::Rollout {
        workload: workload.clone(),
        max_surge: None,
        max_unavailable: None,
    };
    let marker = apply(e, &change).unwrap();
    let mut watch = RolloutWatch::new(e, &workload, &marker);
    let (mut pending, mut done) = (0, 0);
    for step in 0..2_000 {
        if delete_at == Some(step) {
            e.delete(&workload).unwrap();
        }
        let by_scan = rolled_by_scan(e, &workload, &marker);
        assert_eq!(watch.done(e), by_scan, "step {step} at {} ms", e.now());
        if by_scan {
            done += 1;
            if done == 8 {
                break;
            }
        } else {
            pending += 1;
        }
        e.run_for(250);
    }
    (pending, done)
}

#[test]
fn rollout_watch_agrees_with_the_scan_for_a_daemon_set() {
    let mut e = telemetry(SimConfig::default());
    let (pending, done) = follow(
        &mut e,
        ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"),
        None,
    );
    assert!(pending > 10 && done == 8, "{pending} {done}");
}

#[test]
fn rollout_watch_agrees_with_the_scan_for_a_deployment() {
    let mut e = telemetry(SimConfig::default());
    let (pending, done) = follow(
        &mut e,
        ObjectKey::new(Kind::Deployment, "telemetry", "gateway"),
        None,
    );
    assert!(pending > 10 && done == 8, "{pending} {done}");
}

#[test]
fn rollout_watch_relists_after_compaction_and_a_deleted_workload() {
    // A short event log: the watch falls behind it (410 Gone) and lists again.
    let config = SimConfig {
        event_history: 20,
        ..SimConfig::default()
    };
    let mut e = telemetry(config);
    let (pending, done) = follow(
        &mut e,
        ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"),
        None,
    );
    assert!(pending > 10 && done == 8, "{pending} {done}");
    let mut e = telemetry(SimConfig::default());
    let (pending, done) = follow(
        &mut e,
        ObjectKey::new(Kind::Deployment, "telemetry", "gateway"),
        Some(5),
    );
    assert!(pending == 5 && done == 8, "{pending} {done}");
}

fn matrix_config() -> locality_model::matrix::MatrixConfig {
    use locality_model::matrix::{DataPlane, MatrixConfig};
    use locality_model::version::KubeVersion;
    MatrixConfig {
        kube_version: KubeVersion::new(1, 35),
        kube_proxy_version: KubeVersion::new(1, 35),
        node_proxy_versions: Default::default(),
        data_plane: DataPlane::KubeProxy(Some(locality_model::proxy::ProxyMode::Iptables)),
        derive: false,
        feature_gates: Default::default(),
    }
}

/// A what-if run and the store's event log after it.
fn what_if(kube_proxies: bool, change: &Change) -> (locality_sim::whatif::WhatIf, String) {
    let mut e = telemetry(SimConfig {
        kube_proxies,
        ..SimConfig::default()
    });
    let r = locality_sim::whatif::run(
        &mut e,
        std::slice::from_ref(change),
        &matrix_config(),
        &locality_sim::whatif::RunOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    (r, e.event_log_text())
}

#[test]
fn what_if_runs_the_same_without_simulated_kube_proxies() {
    let changes = [
        Change::Rollout {
            workload: ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"),
            max_surge: Some("0".into()),
            max_unavailable: Some("2".into()),
        },
        Change::Rollout {
            workload: ObjectKey::new(Kind::Deployment, "telemetry", "gateway"),
            max_surge: None,
            max_unavailable: None,
        },
        Change::SetService {
            service: ObjectKey::new(Kind::Service, "telemetry", "agent"),
            field: "internalTrafficPolicy".into(),
            value: "Cluster".into(),
        },
        Change::Drain {
            node: "worker-04".into(),
        },
        Change::NodeDown {
            node: "worker-05".into(),
        },
    ];
    for change in &changes {
        let (with, log_with) = what_if(true, change);
        let (without, log_without) = what_if(false, change);
        assert!(with.steps > 10, "{change}");
        assert_eq!(with, without, "{change}");
        assert!(log_with == log_without, "{change}: the store's events differ");
    }
}
