//! Properties of what-if rollouts (docs/simulate.md), over generated clusters and timings: an
//! agent DaemonSet on every node behind one Service, rolled with the strategy drawn.
//!
//! kube-proxy's sync interval is the longest a written change waits before the rules hold it:
//! the programming delay (`SimConfig::proxy_sync_delay_ms`, `--proxy-sync`) plus the minimum
//! sync period (`proxy_min_sync_period_ms`, `--proxy-min-sync`; a change written just after a
//! sync waits for the next allowed one), both drawn.
//!
//! 1. `internalTrafficPolicy: Local`, `maxSurge ≥ 1`, and the old pod serving until the new
//!    one is Ready and programmed (a preStop delay of at least one sync interval): no drop
//!    window.
//! 2. `trafficDistribution: PreferSameNode` (ITP Cluster), another Ready endpoint elsewhere:
//!    every drop is the rules still sending to pods that exited: each instant of a window lies
//!    within one sync interval (plus the step the rules are checked at and the EndpointSlice
//!    controller's delay) after some pod's exit. A window that only one exit explains lasts at
//!    most one sync interval plus a step; exits can chain (the rules fall back to another
//!    node's old pod, which exits before the first exit is programmed), and the window then
//!    spans both.
//! 3. Growing `maxSurge` never increases the blind node-seconds, up to the quantisation of
//!    the rules: one step per node with a window, and one minimum sync period per such node
//!    (a change waits for the next allowed sync, and when the previous one happened depends on
//!    the rollout's own timing: `Case { nodes: 5, zones: 1, sync_ms: 500, min_sync_ms: 1000,
//!    pre_stop_s: 0, start_ms: 4069, period_s: 1, seed: 388 }` loses 3,250 ms at maxSurge 2
//!    and 4,750 ms at 3, the same rollout with `min_sync_ms: 0` no more at 3 than at 2).

use crate::whatif::config;
use locality_model::objects::TrafficPolicy;
use locality_sim::whatif::{Cause, Change, RunOptions, WhatIf, Window, run};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};
use proptest::prelude::*;

const STEP: u64 = 250;

/// What a case draws.
#[derive(Debug, Clone)]
struct Case {
    nodes: usize,
    zones: usize,
    sync_ms: u64,
    min_sync_ms: u64,
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
        0u64..3,
        0u64..6,
        500u64..6000,
        1u64..6,
        1u64..1000,
    )
        .prop_map(
            |(nodes, zones, sync_s, min_sync_s, pre_stop_s, start_ms, period_s, seed)| Case {
                nodes,
                zones,
                sync_ms: sync_s * 500,
                min_sync_ms: min_sync_s * 500,
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
        proxy_min_sync_period_ms: c.min_sync_ms,
        ..SimConfig::default()
    };
    let mut e = Engine::from_topology(&t, sim).unwrap();
    e.run_until(60_000);
    e
}

fn rollout(c: &Case, prefer_same_node: bool, surge: u32) -> WhatIf {
    rollout_with_exits(c, prefer_same_node, surge).0
}

/// The rollout of a case, and the instants (virtual ms since the change) at which an agent
/// pod's process exited, read from the store's event log: the kubelet reports an exit by
/// writing the pod not Ready, and with the agent's TCP readiness probe nothing else turns a
/// Ready agent pod not Ready here (no probe fails on SIGTERM, no node goes unreachable).
fn rollout_with_exits(c: &Case, prefer_same_node: bool, surge: u32) -> (WhatIf, Vec<u64>) {
    let mut e = engine(c, prefer_same_node);
    let start = e.now();
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
    let mut ready = std::collections::HashMap::new();
    let mut exits = Vec::new();
    for ev in e.store().events() {
        let Some(p) = ev.object.as_pod() else { continue };
        if ev.key.namespace != "t" {
            continue;
        }
        let was = ready.insert(ev.key.clone(), p.pod.ready).unwrap_or(false);
        if was && !p.pod.ready && ev.time >= start {
            exits.push(ev.time - start);
        }
    }
    (r, exits)
}

/// kube-proxy's sync interval: the longest a written change waits before the rules hold it.
fn sync_interval(c: &Case) -> u64 {
    c.sync_ms + c.min_sync_ms
}

/// How long after a pod's exit a node can still be sent to it: until kube-proxy programs the
/// EndpointSlice write that follows the exit, one sync interval after the first step that sees
/// it (the write comes one controller delay after the exit).
fn exit_reach(c: &Case) -> u64 {
    sync_interval(c) + STEP + SimConfig::default().controller_delay_ms
}

/// The exits that can explain blindness inside `w`: those before its end whose reach
/// extends past its start.
fn exits_in(w: &Window, exits: &[u64], reach: u64) -> Vec<u64> {
    exits
        .iter()
        .copied()
        .filter(|&x| x < w.end_ms && x + reach > w.start_ms)
        .collect()
}

/// The first instant of `w` that no exit explains (an exit at or before it, less than
/// `reach` before it), if any.
fn unexplained(w: &Window, exits: &[u64], reach: u64) -> Option<u64> {
    let mut t = w.start_ms;
    while t < w.end_ms {
        let covered = exits.iter().filter(|&&x| x <= t).map(|&x| x + reach).max();
        match covered {
            Some(until) if until > t => t = until,
            _ => return Some(t),
        }
    }
    None
}

fn blind_ms(r: &WhatIf) -> (u64, usize) {
    let p = &r.ports[0];
    (p.windowed().map(|(_, n)| n.blind_ms).sum(), p.windowed().count())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn local_with_a_surge_and_serving_until_programmed_has_no_window(c in cases(), surge in 1u32..3) {
        let c = Case { pre_stop_s: c.pre_stop_s.max(sync_interval(&c).div_ceil(1000) + 1), ..c };
        let r = rollout(&c, false, surge);
        let p = &r.ports[0];
        prop_assert_eq!(p.windowed().count(), 0, "{:?}: {:?}", c, p.windowed().collect::<Vec<_>>());
    }

    #[test]
    fn prefer_same_node_drops_only_until_exits_are_programmed(c in cases(), surge in 0u32..3) {
        let (r, exits) = rollout_with_exits(&c, true, surge);
        let reach = exit_reach(&c);
        for (node, n) in r.ports[0].windowed() {
            for w in &n.windows {
                prop_assert_eq!(w.cause, Cause::EndpointGone, "{:?} {}", c, node);
                let gap = unexplained(w, &exits, reach);
                prop_assert!(gap.is_none(), "{:?} surge {} {}: {:?} blind at {:?}, exits {:?}", c, surge, node, w, gap, exits);
                if exits_in(w, &exits, reach).len() == 1 {
                    prop_assert!(w.end_ms - w.start_ms <= sync_interval(&c) + STEP, "{:?} surge {} {}: {:?}, exits {:?}", c, surge, node, w, exits);
                }
            }
        }
    }

    #[test]
    fn more_surge_never_drops_more(c in cases(), surge in 0u32..3) {
        let (less, _) = blind_ms(&rollout(&c, false, surge));
        let (more, windowed) = blind_ms(&rollout(&c, false, surge + 1));
        let quantum = STEP + c.min_sync_ms;
        prop_assert!(more <= less + windowed as u64 * quantum, "{:?}: maxSurge {} → {} ms, {} → {} ms", c, surge, less, surge + 1, more);
    }
}

/// The counterexample to "no window longer than one sync": node-0's old pod exits at once; the
/// rules then send node-0 to node-1's old pod, which exits when node-0's new pod is Ready,
/// less than one sync later. node-0 is blind across both exits, longer than one sync, and
/// every instant of it within one sync (and a step) of an exit kube-proxy has not programmed.
#[test]
fn prefer_same_node_chained_exits_are_explained() {
    let c = Case {
        nodes: 2,
        zones: 1,
        sync_ms: 1500,
        min_sync_ms: 0,
        pre_stop_s: 0,
        start_ms: 500,
        period_s: 1,
        seed: 1,
    };
    let (r, exits) = rollout_with_exits(&c, true, 0);
    let node0 = &r.ports[0].nodes["node-0"];
    assert_eq!(node0.windows.len(), 1, "{node0:?}");
    let w = &node0.windows[0];
    assert!(w.end_ms - w.start_ms > sync_interval(&c) + STEP, "{w:?}");
    let reach = exit_reach(&c);
    assert_eq!(exits_in(w, &exits, reach).len(), 2, "{w:?} {exits:?}");
    assert_eq!(unexplained(w, &exits, reach), None, "{w:?} {exits:?}");
}

/// Property 3's quantum: with a minimum sync period, one more surge can lose more, by less than
/// one period (and a step) per node with a window; without one, it loses no more.
#[test]
fn more_surge_can_lose_one_minimum_sync_period_per_node() {
    let c = Case {
        nodes: 5,
        zones: 1,
        sync_ms: 500,
        min_sync_ms: 1000,
        pre_stop_s: 0,
        start_ms: 4069,
        period_s: 1,
        seed: 388,
    };
    let (at2, _) = blind_ms(&rollout(&c, false, 2));
    let (at3, windowed) = blind_ms(&rollout(&c, false, 3));
    assert!(
        at3 > at2 + windowed as u64 * STEP,
        "{at2} → {at3} ms, {windowed} nodes"
    );
    assert!(at3 <= at2 + windowed as u64 * (STEP + c.min_sync_ms));
    let c = Case { min_sync_ms: 0, ..c };
    let (at2, _) = blind_ms(&rollout(&c, false, 2));
    let (at3, windowed) = blind_ms(&rollout(&c, false, 3));
    assert!(
        at3 <= at2 + windowed as u64 * STEP,
        "{at2} → {at3} ms, {windowed} nodes"
    );
}
