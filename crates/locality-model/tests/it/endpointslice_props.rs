//! Property tests of the EndpointSlice controller model (`derive_endpoint_slices`).

use crate::endpointslice_common;

use std::collections::BTreeMap;

use endpointslice_common::*;
use locality_model::endpointslice::{
    Derivation, EventType, NodeIndex, TopologyCache, derive_endpoint_slices, hint_counts_by_zone,
};
use locality_model::objects::{Node, Pod, PodPhase, Service};
use proptest::prelude::*;

const ZONES: [&str; 4] = ["zone-a", "zone-b", "zone-c", "zone-d"];

/// A healthy node: zone index and CPU millicores.
fn healthy_nodes() -> impl Strategy<Value = Vec<Node>> {
    prop::collection::vec((0usize..4, 1u64..4000), 1..8).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (z, cpu))| node(&format!("node-{i}"), Some(ZONES[z]), Some(cpu), Some(true)))
            .collect()
    })
}

/// Any node: zone maybe missing/empty, CPU maybe missing/zero, Ready maybe unknown.
fn any_nodes() -> impl Strategy<Value = Vec<Node>> {
    let zone = prop_oneof![
        Just(None),
        Just(Some("")),
        (0usize..4).prop_map(|z| Some(ZONES[z]))
    ];
    let cpu = prop_oneof![Just(None), Just(Some(0u64)), (1u64..4000).prop_map(Some)];
    let ready = prop_oneof![Just(None), Just(Some(false)), Just(Some(true))];
    prop::collection::vec((zone, cpu, ready, any::<bool>()), 0..8).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (z, cpu, ready, cp))| {
                let mut n = node(&format!("node-{i}"), z, cpu, ready);
                if cp {
                    n.meta
                        .labels
                        .insert("node-role.kubernetes.io/control-plane".into(), String::new());
                }
                n
            })
            .collect()
    })
}

/// Pods: node index (may name a missing node), ready, terminating, phase, has IP.
fn pods(max: usize) -> impl Strategy<Value = Vec<Pod>> {
    let phase = prop_oneof![
        6 => Just(PodPhase::Running),
        1 => Just(PodPhase::Pending),
        1 => Just(PodPhase::Succeeded),
        1 => Just(PodPhase::Failed),
    ];
    prop::collection::vec(
        (
            0usize..9,
            prop::bool::weighted(0.8),
            prop::bool::weighted(0.1),
            phase,
            prop::bool::weighted(0.95),
        ),
        0..max,
    )
    .prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (n, ready, term, phase, has_ip))| {
                let mut p = pod(
                    &format!("pod-{i:03}"),
                    &format!("10.{}.{}.{}", i / 62500, (i / 250) % 250, i % 250),
                    &format!("node-{n}"),
                    ready,
                );
                if term {
                    p.meta.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
                }
                p.phase = phase;
                if !has_ip {
                    p.pod_ips.clear();
                }
                p
            })
            .collect()
    })
}

fn run(svc: &Service, pods: &[Pod], nodes: &[Node]) -> Derivation {
    let refs: Vec<&Pod> = pods.iter().collect();
    derive_endpoint_slices(
        svc,
        &refs,
        &NodeIndex::new(nodes),
        &TopologyCache::from_nodes(nodes),
        &at(35),
    )
}

fn auto_service() -> Service {
    let mut svc = service("svc");
    svc.meta
        .annotations
        .insert("service.kubernetes.io/topology-mode".into(), "Auto".into());
    svc
}

/// Per-zone CPU ratios of healthy nodes, computed here independently of the model.
fn ratios(nodes: &[Node]) -> BTreeMap<String, f64> {
    let mut cpu: BTreeMap<String, u64> = BTreeMap::new();
    for n in nodes {
        *cpu.entry(n.zone().unwrap_or_default().to_string()).or_default() +=
            n.allocatable_cpu_millis.unwrap_or(0);
    }
    let total: u64 = cpu.values().sum();
    cpu.into_iter()
        .map(|(z, c)| (z, c as f64 / total as f64))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// With Auto: every ready endpoint carries exactly one zone hint, or none carries any;
    /// hints exist iff a Normal event was emitted; the hint total equals the ready count.
    #[test]
    fn auto_hints_all_or_nothing(nodes in healthy_nodes(), pods in pods(40)) {
        let d = run(&auto_service(), &pods, &nodes);
        let ready: Vec<_> = d.slices.iter().flat_map(|s| &s.endpoints).filter(|e| e.conditions.ready == Some(true)).collect();
        let hinted = ready.iter().filter(|e| e.hints.is_some()).count();
        let enabled = d.events.iter().any(|e| e.event_type == EventType::Normal);
        prop_assert!(hinted == 0 || hinted == ready.len());
        prop_assert!(ready.iter().all(|e| e.hints.as_ref().is_none_or(|h| h.for_zones.len() == 1 && h.for_nodes.is_empty())));
        prop_assert_eq!(enabled, hinted > 0 && !ready.is_empty());
        prop_assert_eq!(d.events.len(), 1);
        if enabled {
            prop_assert_eq!(hint_counts_by_zone(&d.slices).values().sum::<usize>(), ready.len());
        }
    }

    /// With Auto, hints only move from zones above their desired share to zones below it, and
    /// never make a zone's imbalance worse: |hinted − desired| ≤ |own − desired| per zone, with
    /// desired = max(ratio·N, ceil(ratio·N/1.2)) computed independently here. (The stronger
    /// "within [min, max]" does not hold upstream: see
    /// `auto_can_leave_a_zone_below_its_minimum` in endpointslice_reconciler.rs.)
    #[test]
    fn auto_transfers_only_reduce_imbalance(nodes in healthy_nodes(), pods in pods(60)) {
        let d = run(&auto_service(), &pods, &nodes);
        let counts = hint_counts_by_zone(&d.slices);
        prop_assume!(!counts.is_empty());
        let r = ratios(&nodes);
        let n = counts.values().sum::<usize>() as f64;
        let ready: Vec<_> = d.slices.iter().flat_map(|s| &s.endpoints).filter(|e| e.conditions.ready == Some(true)).collect();
        let mut own: BTreeMap<String, usize> = BTreeMap::new();
        for e in &ready {
            *own.entry(e.zone.clone().unwrap_or_default()).or_default() += 1;
        }
        let desired = |z: &str| r.get(z).map(|ratio| (ratio * n).max((ratio * n * (1.0 / 1.2)).ceil()));
        for (zone, ratio) in &r {
            let want = (ratio * n).max((ratio * n * (1.0 / 1.2)).ceil());
            let got = counts.get(zone).copied().unwrap_or(0) as f64;
            let had = own.get(zone).copied().unwrap_or(0) as f64;
            prop_assert!((got - want).abs() <= (had - want).abs() + 1e-9, "zone {}: own {} hinted {} desired {}", zone, had, got, want);
        }
        for e in &ready {
            let (Some(h), Some(z)) = (&e.hints, &e.zone) else { continue };
            if &h.for_zones[0] != z {
                let to = &h.for_zones[0];
                prop_assert!(desired(z).is_some_and(|w| own[z] as f64 > w), "donor {} not above desired", z);
                prop_assert!(desired(to).is_some_and(|w| (own.get(to).copied().unwrap_or(0) as f64) < w), "receiver {} not below desired", to);
            }
        }
    }

    /// trafficDistribution hints only ever sit on ready endpoints and name their own zone
    /// (and node for PreferSameNode).
    #[test]
    fn traffic_distribution_hints_only_on_ready(nodes in any_nodes(), pods in pods(40), td in 0usize..3, pnra in any::<bool>()) {
        let mut svc = service("svc");
        svc.traffic_distribution = Some(["PreferClose", "PreferSameZone", "PreferSameNode"][td].into());
        svc.publish_not_ready_addresses = pnra;
        let d = run(&svc, &pods, &nodes);
        for e in d.slices.iter().flat_map(|s| &s.endpoints) {
            match &e.hints {
                None => prop_assert!(e.conditions.ready != Some(true) || (e.zone.is_none() && (td != 2 || e.node_name.is_none()))),
                Some(h) => {
                    prop_assert_eq!(e.conditions.ready, Some(true));
                    prop_assert_eq!(h.for_zones.clone(), e.zone.iter().cloned().collect::<Vec<_>>());
                    let want_nodes: Vec<String> = if td == 2 { e.node_name.iter().cloned().collect() } else { vec![] };
                    prop_assert_eq!(h.for_nodes.clone(), want_nodes);
                }
            }
        }
    }

    /// The derivation does not depend on the order of the pods given.
    #[test]
    fn independent_of_pod_order(nodes in any_nodes(), pods in pods(50), seed in any::<u64>(), mode in 0usize..3) {
        let mut svc = service("svc");
        match mode {
            0 => svc.traffic_distribution = Some("PreferSameNode".into()),
            1 => { svc.meta.annotations.insert("service.kubernetes.io/topology-aware-hints".into(), "auto".into()); }
            _ => {}
        }
        let mut shuffled = pods.clone();
        // Deterministic Fisher–Yates from the seed.
        let mut s = seed | 1;
        for i in (1..shuffled.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            shuffled.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let a = run(&svc, &pods, &nodes);
        let mut b = run(&svc, &shuffled, &nodes);
        let mut sa = a.skipped.clone();
        sa.sort_by(|x, y| x.pod.cmp(&y.pod));
        b.skipped.sort_by(|x, y| x.pod.cmp(&y.pod));
        prop_assert_eq!(a.slices, b.slices);
        prop_assert_eq!(a.events, b.events);
        prop_assert_eq!(sa, b.skipped);
    }

    /// Every selected pod is either an endpoint (exactly once) or skipped with a reason; no
    /// slice exceeds 100 endpoints; nothing panics on arbitrary nodes and pods.
    #[test]
    fn every_pod_accounted_for(nodes in any_nodes(), pods in pods(120), pnra in any::<bool>()) {
        let mut svc = auto_service();
        svc.publish_not_ready_addresses = pnra;
        let d = run(&svc, &pods, &nodes);
        prop_assert!(d.slices.iter().all(|s| s.endpoints.len() <= 100));
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for e in d.slices.iter().flat_map(|s| &s.endpoints) {
            let name = e.target_ref.as_ref().map(|t| t.2.clone()).unwrap_or_default();
            *seen.entry(name).or_default() += 1;
        }
        for p in &pods {
            let n = seen.get(&p.meta.name).copied().unwrap_or(0);
            let skipped = d.skipped.iter().any(|s| s.pod == p.meta.name);
            prop_assert!(n + usize::from(skipped) == 1, "{}: {} endpoints, skipped {}", p.meta.name, n, skipped);
        }
    }
}
