//! What-if over virtual time on the simulated cluster: a DaemonSet rollout with
//! `maxSurge: 0` opens drop windows on the nodes being replaced; with `maxSurge: 1` it
//! opens none; switching a Service to ITP Local makes the nodes without backends blind.

use locality_model::matrix::{DataPlane, MatrixConfig};
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_sim::whatif::{Change, run};
use locality_sim::{Engine, Kind, ObjectKey, SimConfig, Topology};

fn config() -> MatrixConfig {
    MatrixConfig {
        kube_version: KubeVersion::new(1, 35),
        kube_proxy_version: KubeVersion::new(1, 35),
        node_proxy_versions: Default::default(),
        data_plane: DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        derive: false,
    }
}

fn telemetry() -> Engine {
    let mut e =
        Engine::from_topology(&Topology::builtin("telemetry").unwrap(), SimConfig::default()).unwrap();
    e.run_until(60_000);
    e
}

fn rollout(surge: &str) -> locality_sim::whatif::WhatIf {
    let mut e = telemetry();
    let change = Change::Rollout {
        workload: ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"),
        max_surge: Some(surge.into()),
        max_unavailable: Some(if surge == "0" { "1".into() } else { "0".into() }),
    };
    run(&mut e, &change, &config(), 250, 3_600_000).unwrap()
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
    // Every worker that runs an agent and has clients is replaced once: one window each.
    assert!(agent.windows.len() >= 20, "{:?}", agent.windows.keys());
    assert!(
        agent
            .windows
            .values()
            .all(|w| w.len() == 1 && w[0].end_ms > w[0].start_ms)
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

    let r = rollout("1");
    assert!(r.settled);
    assert!(
        r.ports
            .iter()
            .all(|p| p.service != "telemetry/agent" || p.windows.is_empty()),
        "surge keeps a local endpoint everywhere: {:?}",
        r.ports
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
    let r = run(&mut e, &change, &config(), 500, 60_000).unwrap();
    let p = &r.ports[0];
    assert_eq!(p.blind_before, vec!["node-c".to_string()]);
    assert!(p.blind_after.is_empty(), "Cluster policy: nobody blind");
    let back = Change::SetService {
        service: svc,
        field: "internalTrafficPolicy".into(),
        value: "Local".into(),
    };
    let r = run(&mut e, &back, &config(), 500, 60_000).unwrap();
    assert_eq!(r.ports[0].blind_after, vec!["node-c".to_string()]);
    assert!(r.ports[0].windows.contains_key("node-c"));
    let bad = Change::SetService {
        service: ObjectKey::new(Kind::Service, "default", "myservice"),
        field: "internalTrafficPolicy".into(),
        value: "Sometimes".into(),
    };
    assert!(run(&mut e, &bad, &config(), 500, 60_000).is_err());
}
