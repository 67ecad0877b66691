//! What-if over virtual time on the simulated cluster: a DaemonSet rollout with
//! `maxSurge: 0` opens drop windows on the nodes being replaced; with `maxSurge: 1` only the
//! old pod exiting before kube-proxy programmed the new one opens any (none when a preStop
//! delay outlasts the sync); switching a Service to ITP Local makes the nodes without backends
//! blind.

use locality_model::matrix::{DataPlane, MatrixConfig};
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_sim::whatif::{Cause, Change, RunOptions, WhatIf, run};
use locality_sim::{Engine, Kind, ObjectKey, SimConfig, Topology};

/// The model configuration the what-if tests ask: 1.35 everywhere, iptables.
pub(crate) fn config() -> MatrixConfig {
    MatrixConfig {
        kube_version: KubeVersion::new(1, 35),
        kube_proxy_version: KubeVersion::new(1, 35),
        node_proxy_versions: Default::default(),
        data_plane: DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        derive: false,
        feature_gates: Default::default(),
    }
}

/// The telemetry topology; the agent's pods sleep `pre_stop` s in a preStop hook.
fn telemetry(pre_stop: u64) -> Engine {
    let mut t = Topology::builtin("telemetry").unwrap();
    for o in &mut t.objects {
        if let locality_sim::Object::Workload(w) = o
            && w.workload.meta.name == "agent"
        {
            w.pod_behaviour.shutdown_delay_seconds = pre_stop;
        }
    }
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    e.run_until(60_000);
    e
}

fn opts(step_ms: u64, limit_ms: u64) -> RunOptions {
    RunOptions {
        step_ms,
        limit_ms,
        ..RunOptions::default()
    }
}

fn rollout_with(surge: &str, pre_stop: u64) -> WhatIf {
    let mut e = telemetry(pre_stop);
    let change = Change::Rollout {
        workload: ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"),
        max_surge: Some(surge.into()),
        max_unavailable: Some(if surge == "0" { "1".into() } else { "0".into() }),
    };
    run(
        &mut e,
        std::slice::from_ref(&change),
        &config(),
        &opts(250, 3_600_000),
        &mut |_| {},
    )
    .unwrap()
}

fn rollout(surge: &str) -> WhatIf {
    rollout_with(surge, 0)
}

#[test]
fn max_surge_zero_opens_drop_windows_and_max_surge_one_none() {
    let r = rollout("0");
    assert!(r.settled, "the rollout finished");
    let agent = r
        .ports
        .iter()
        .find(|p| p.service == "telemetry/agent")
        .expect("the agent Service's blind nodes changed during the rollout");
    // Every worker that runs an agent is replaced once: one window each.
    let windowed: Vec<_> = agent.windowed().collect();
    assert_eq!(
        windowed.len(),
        24,
        "{:?}",
        windowed.iter().map(|w| w.0).collect::<Vec<_>>()
    );
    assert!(
        windowed
            .iter()
            .all(|(_, t)| t.windows.len() == 1 && t.windows[0].end_ms > t.windows[0].start_ms),
        "{windowed:?}"
    );
    assert_eq!(
        agent.blind_before, agent.blind_after,
        "the same nodes are blind once done"
    );
    assert!(
        agent.lost_share > 0.0 && agent.lost_share < 0.5,
        "{}",
        agent.lost_share
    );

    // With a surge the old pod exits as soon as the new one is Ready, before kube-proxy has
    // programmed the new one: a window of at most one sync (plus a step) on each node.
    let r = rollout("1");
    assert!(r.settled);
    let agent = r.ports.iter().find(|p| p.service == "telemetry/agent").unwrap();
    for (node, t) in agent.windowed() {
        for w in &t.windows {
            assert_eq!(w.cause, Cause::EndpointGone, "{node}: {w:?}");
            assert!(
                w.end_ms - w.start_ms <= r.proxy_sync_ms + r.step_ms,
                "{node}: {w:?}"
            );
        }
    }
    // A preStop delay longer than the sync keeps the old pod serving until the rules moved on.
    let r = rollout_with("1", 3);
    let agent = r.ports.iter().find(|p| p.service == "telemetry/agent").unwrap();
    assert_eq!(
        agent.windowed().count(),
        0,
        "{:?}",
        agent.windowed().collect::<Vec<_>>()
    );
}

#[test]
fn switching_to_local_blinds_the_nodes_without_backends() {
    let mut e =
        Engine::from_topology(&Topology::builtin("three-zones").unwrap(), SimConfig::default()).unwrap();
    locality_sim::builders::playbook_fixture(&mut e).unwrap();
    e.run_until(30_000);
    let svc = ObjectKey::new(Kind::Service, "default", "myservice");
    let change = Change::SetService {
        service: svc.clone(),
        field: "internalTrafficPolicy".into(),
        value: "Cluster".into(),
    };
    let r = run(
        &mut e,
        std::slice::from_ref(&change),
        &config(),
        &opts(500, 60_000),
        &mut |_| {},
    )
    .unwrap();
    let p = &r.ports[0];
    assert_eq!(p.blind_before, vec!["node-c".to_string()]);
    assert!(p.blind_after.is_empty(), "Cluster policy: nobody blind");
    let back = Change::SetService {
        service: svc,
        field: "internalTrafficPolicy".into(),
        value: "Local".into(),
    };
    let r = run(&mut e, &[back], &config(), &opts(500, 60_000), &mut |_| {}).unwrap();
    assert_eq!(r.ports[0].blind_after, vec!["node-c".to_string()]);
    assert!(r.ports[0].windowed().any(|(n, _)| n == "node-c"));
    let bad = Change::SetService {
        service: ObjectKey::new(Kind::Service, "default", "myservice"),
        field: "internalTrafficPolicy".into(),
        value: "Sometimes".into(),
    };
    assert!(run(&mut e, &[bad], &config(), &opts(500, 60_000), &mut |_| {}).is_err());
}

/// A hostPort keeps the surge pod off its node while the old pod holds the port (the
/// scheduler's NodePorts filter): with maxSurge 1 the DaemonSet rollout cannot progress.
#[test]
fn a_host_port_blocks_the_surge() {
    let mut t = Topology::builtin("telemetry").unwrap();
    for o in &mut t.objects {
        if let locality_sim::Object::Workload(w) = o
            && w.workload.meta.name == "agent"
        {
            for p in &mut w.workload.template.ports {
                p.host_port = Some(p.container_port);
            }
        }
    }
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    e.run_until(60_000);
    let change = Change::Rollout {
        workload: ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"),
        max_surge: Some("1".into()),
        max_unavailable: Some("0".into()),
    };
    let r = run(&mut e, &[change], &config(), &opts(500, 120_000), &mut |_| {}).unwrap();
    assert!(!r.settled, "the surge pod never starts next to the old one");
    let pending = e
        .store()
        .list_namespace(Kind::Pod, "telemetry")
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(|p| p.pod.spec.node_name.is_empty())
        .count();
    assert_eq!(pending, 1, "one surge pod waits for its node's port");
    let agent = r.ports.iter().find(|p| p.service == "telemetry/agent").unwrap();
    assert_eq!(agent.windowed().count(), 0, "the old pods keep serving");
}
