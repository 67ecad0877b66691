//! Properties of what-if rollouts (docs/simulate.md), over generated clusters and timings: an
//! agent DaemonSet on every node behind one Service, rolled with the strategy drawn.
//!
//! 1. `internalTrafficPolicy: Local`, `maxSurge ≥ 1`, and the old pod serving until the new
//!    one is Ready and programmed (a preStop delay of at least one kube-proxy sync): no drop
//!    window.
//! 2. `trafficDistribution: PreferSameNode` (ITP Cluster), another Ready endpoint elsewhere: no
//!    drop window longer than one sync interval (plus the step the rules are checked at); the
//!    only drop is the old pod exiting before kube-proxy programmed the change.
//! 3. Growing `maxSurge` never increases the blind node-seconds (up to the step quantisation:
//!    one step per node with a window).

use locality_model::matrix::{DataPlane, MatrixConfig};
use locality_model::objects::TrafficPolicy;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_sim::whatif::{Cause, Change, RunOptions, WhatIf, run};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};
use proptest::prelude::*;

const STEP: u64 = 250;

fn config() -> MatrixConfig {
    MatrixConfig {
        kube_version: KubeVersion::new(1, 35),
        kube_proxy_version: KubeVersion::new(1, 35),
        node_proxy_versions: Default::default(),
        data_plane: DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        derive: false,
        feature_gates: Default::default(),
    }
}

/// What a case draws.
#[derive(Debug, Clone)]
struct Case {
    nodes: usize,
    zones: usize,
    sync_ms: u64,
    pre_stop_s: u64,
    start_ms: u64,
    period_s: u64,
    seed: u64,
}

fn cases() -> impl Strategy<Value = Case> {
    (
        2usize..6,
        1usize..4,
        1u64..4,
        0u64..6,
        500u64..6000,
        1u64..6,
        1u64..1000,
    )
        .prop_map(
            |(nodes, zones, sync_s, pre_stop_s, start_ms, period_s, seed)| Case {
                nodes,
                zones,
                sync_ms: sync_s * 500,
                pre_stop_s,
                start_ms,
                period_s,
                seed,
            },
        )
}

/// The cluster of a case: `nodes` workers over `zones` zones, the agent on each.
fn engine(c: &Case, prefer_same_node: bool) -> Engine {
    let yaml: String = (0..c.nodes)
        .map(|i| format!("  - name: node-{i}\n    zone: zone-{}\n", i % c.zones))
        .collect();
    let mut t = Topology::from_yaml(&format!("nodes:\n{yaml}"), "case").unwrap();
    let (mut agent, mut svc) = locality_sim::builders::telemetry_agent("t", "1");
    if let Object::Workload(w) = &mut agent {
        w.pod_behaviour.shutdown_delay_seconds = c.pre_stop_s;
        w.pod_behaviour.start_delay_ms = c.start_ms;
        if let Some(p) = &mut w.pod_behaviour.readiness {
            p.period_seconds = c.period_s;
            p.initial_delay_seconds = 0;
        }
    }
    if prefer_same_node {
        svc.internal_traffic_policy = Some(TrafficPolicy::Cluster);
        svc.traffic_distribution = Some("PreferSameNode".into());
    }
    t.objects = vec![
        locality_sim::builders::namespace("t"),
        Object::Service(svc),
        agent,
    ];
    let sim = SimConfig {
        seed: c.seed,
        proxy_sync_delay_ms: c.sync_ms,
        ..SimConfig::default()
    };
    let mut e = Engine::from_topology(&t, sim).unwrap();
    e.run_until(60_000);
    e
}

fn rollout(c: &Case, prefer_same_node: bool, surge: u32) -> WhatIf {
    let mut e = engine(c, prefer_same_node);
    let change = Change::Rollout {
        workload: ObjectKey::new(Kind::DaemonSet, "t", "agent"),
        max_surge: Some(surge.to_string()),
        max_unavailable: Some(if surge == 0 { "1".into() } else { "0".into() }),
    };
    let options = RunOptions {
        step_ms: STEP,
        limit_ms: 3_600_000,
        ..RunOptions::default()
    };
    let r = run(&mut e, &[change], &config(), &options, &mut |_| {}).unwrap();
    assert!(r.settled, "{c:?}: the rollout settles");
    r
}

fn blind_ms(r: &WhatIf) -> (u64, usize) {
    let p = &r.ports[0];
    (p.windowed().map(|(_, n)| n.blind_ms).sum(), p.windowed().count())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn local_with_a_surge_and_serving_until_programmed_has_no_window(c in cases(), surge in 1u32..3) {
        let c = Case { pre_stop_s: c.pre_stop_s.max(c.sync_ms.div_ceil(1000) + 1), ..c };
        let r = rollout(&c, false, surge);
        let p = &r.ports[0];
        prop_assert_eq!(p.windowed().count(), 0, "{:?}: {:?}", c, p.windowed().collect::<Vec<_>>());
    }

    #[test]
    #[ignore = "a known counterexample, under investigation (issue #14): Case { nodes: 2, zones: 1, sync_ms: 1500, pre_stop_s: 0, start_ms: 500, period_s: 1, seed: 1 }, surge 0 gives node-0 a 2000 ms window (> sync + one step); it fails on the simulation as it was before 2026-12-04 too"]
    fn prefer_same_node_drops_at_most_one_sync(c in cases(), surge in 0u32..3) {
        let r = rollout(&c, true, surge);
        for (node, n) in r.ports[0].windowed() {
            for w in &n.windows {
                prop_assert!(w.end_ms - w.start_ms <= c.sync_ms + STEP, "{:?} {}: {:?}", c, node, w);
                prop_assert_eq!(w.cause, Cause::EndpointGone, "{:?} {}", c, node);
            }
        }
    }

    #[test]
    fn more_surge_never_drops_more(c in cases(), surge in 0u32..3) {
        let (less, _) = blind_ms(&rollout(&c, false, surge));
        let (more, windowed) = blind_ms(&rollout(&c, false, surge + 1));
        prop_assert!(more <= less + windowed as u64 * STEP, "{:?}: maxSurge {} → {} ms, {} → {} ms", c, surge, less, surge + 1, more);
    }
}
