//! The shape sweep: full runs on generated cluster shapes (one zone, no zone labels, partly
//! zoned, 2, 2+1, 2+2+1, 3+3, ten nodes with tainted, NotReady and Windows nodes, and a
//! 30-node cluster with three control-plane nodes), each conformant and with a data plane
//! that ignores the Local policy on a role node and on a node outside every role. Each run is
//! checked against what the catalogue predicts for any shape, not against a list per shape:
//! - a conformant cluster is an ACCEPT, partial exactly when a case could not be placed or a
//!   node could not be probed, with no FAIL, no INCOMPLETE and never a RERUN;
//! - a case the shape cannot host is NOT_EXECUTED naming the role it lacks, never INCOMPLETE;
//! - a faulty node the run probes is never accepted; a faulty node it cannot probe is named in
//!   a PARTIAL decision;
//! - one usable node is a HOLD without creating anything.

use super::{Sim, concurrently, summary};
use locality_verify::{Decision, Status, VerifyOutcome};

/// A generated topology: `zones[i]` nodes in zone `zone-i` (`None`: no zone label), then
/// `extra` YAML node lines.
fn topology(name: &str, zones: &[(Option<&str>, usize)], extra: &[String]) -> String {
    let mut out = format!("name: {name}\nnodes:\n");
    let mut i = 0;
    for (zone, n) in zones {
        for _ in 0..*n {
            match zone {
                Some(z) => out.push_str(&format!("  - {{name: node-{i:02}, zone: {z}}}\n")),
                None => out.push_str(&format!("  - {{name: node-{i:02}}}\n")),
            }
            i += 1;
        }
    }
    for line in extra {
        out.push_str(&format!("  - {line}\n"));
    }
    out
}

/// The generated shapes: (name, topology, a node outside every role that the run cannot
/// probe, if the shape has one).
fn shapes() -> Vec<(String, String, Option<String>)> {
    let z = |s: &'static str| Some(s);
    let mut out = vec![
        (
            "one-zone".into(),
            topology("one-zone", &[(z("zone-a"), 3)], &[]),
            None,
        ),
        ("no-zones".into(), topology("no-zones", &[(None, 4)], &[]), None),
        (
            "partly-zoned".into(),
            topology(
                "partly-zoned",
                &[(z("zone-a"), 2), (None, 2), (z("zone-b"), 1)],
                &[],
            ),
            None,
        ),
        ("two".into(), topology("two", &[(z("zone-a"), 2)], &[]), None),
        (
            "2+1".into(),
            topology("2-1", &[(z("zone-a"), 2), (z("zone-b"), 1)], &[]),
            None,
        ),
        (
            "2+2+1".into(),
            topology(
                "2-2-1",
                &[(z("zone-a"), 2), (z("zone-b"), 2), (z("zone-c"), 1)],
                &[],
            ),
            None,
        ),
        (
            "3+3".into(),
            topology("3-3", &[(z("zone-a"), 3), (z("zone-b"), 3)], &[]),
            None,
        ),
    ];
    // Ten nodes: seven usable over three zones, a tainted one whose data plane ignores the
    // Local policy, a NotReady one and a Windows one.
    out.push((
        "ten".into(),
        topology(
            "ten",
            &[(z("zone-a"), 3), (z("zone-b"), 2), (z("zone-c"), 2)],
            &[
                "{name: node-tainted, zone: zone-b, taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}".into(),
                "{name: node-notready, zone: zone-c, ready: false}".into(),
                "{name: node-windows, zone: zone-a, labels: {kubernetes.io/os: windows}}".into(),
            ],
        ),
        Some("node-tainted".into()),
    ));
    // Thirty nodes: three control-plane nodes (tainted) and 27 workers over three zones.
    out.push((
        "thirty".into(),
        topology(
            "thirty",
            &[(z("zone-a"), 9), (z("zone-b"), 9), (z("zone-c"), 9)],
            &(0..3)
                .map(|i| {
                    format!(
                        "{{name: cp-{i}, zone: zone-{}, controlPlane: true}}",
                        ["a", "b", "c"][i]
                    )
                })
                .collect::<Vec<_>>(),
        ),
        Some("cp-0".into()),
    ));
    out
}

/// What holds of every run, whatever the shape and the fault.
fn check_common(name: &str, o: &VerifyOutcome) {
    assert_ne!(
        o.decision,
        Decision::Rerun,
        "a rerun cannot change this: {}",
        summary(name, o)
    );
    for c in &o.cases {
        if c.status == Status::NotExecuted {
            assert!(
                c.why.contains("role")
                    || c.why.contains("placement")
                    || c.why.contains("contract needs")
                    || c.why.contains("nothing to compare"),
                "{}: {} not executed without naming the role it lacks: {}",
                name,
                c.id,
                c.why
            );
        }
    }
    let partial = !o.uncovered.is_empty() || !o.unprobed_nodes.is_empty();
    assert_eq!(
        o.decision_line(false).starts_with("PARTIAL"),
        partial,
        "{}",
        summary(name, o)
    );
}

#[test]
fn shape_sweep_conformant_clusters_are_accepted_and_faults_never_are() {
    let shapes = shapes();
    let conformant: Vec<(String, Sim)> = shapes
        .iter()
        .map(|(name, yaml, _)| {
            (
                format!("shape-{name}"),
                Sim {
                    topology: yaml.clone(),
                    max_nodes: None,
                    ..Sim::default()
                },
            )
        })
        .collect();
    let results = concurrently(conformant);
    let mut faulty: Vec<(String, Sim)> = Vec::new();
    for ((name, o, _), (_, yaml, outside)) in results.iter().zip(&shapes) {
        check_common(name, o);
        assert_eq!(o.decision, Decision::Accept, "{}", summary(name, o));
        for c in &o.cases {
            assert!(
                matches!(c.status, Status::Pass | Status::NotExecuted),
                "{}",
                summary(name, o)
            );
        }
        let not_run: Vec<&str> = o
            .cases
            .iter()
            .filter(|c| c.status == Status::NotExecuted)
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(o.uncovered, not_run, "{}", summary(name, o));
        if let Some(n) = outside {
            assert!(
                o.unprobed_nodes.iter().any(|u| u.starts_with(n.as_str())),
                "{name}: {n} not named: {:?}",
                o.unprobed_nodes
            );
        }
        // The faults: on the node without a backend (N3), and on the node the run cannot probe.
        let n3 = o
            .roles
            .node(locality_verify::cases::Role::N3)
            .expect("N3")
            .to_string();
        for (node, probed) in [(n3, true)]
            .into_iter()
            .chain(outside.clone().map(|n| (n, false)))
        {
            faulty.push((
                format!("{name}-ignores-{node}-{probed}"),
                Sim {
                    topology: yaml.clone(),
                    profiles: vec![(node, "ignores-local-policy".into())],
                    max_nodes: None,
                    ..Sim::default()
                },
            ));
        }
    }
    for (name, o, _) in concurrently(faulty) {
        check_common(&name, &o);
        if name.ends_with("-true") {
            assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
            assert!(
                o.cases.iter().any(|c| c.status == Status::Fail),
                "{}",
                summary(&name, &o)
            );
        } else {
            // Not probed: accepted only as PARTIAL, naming the node.
            assert!(
                o.decision_line(false).starts_with("PARTIAL"),
                "{}",
                summary(&name, &o)
            );
        }
    }
}

#[test]
fn shape_sweep_one_usable_node_is_a_hold_at_once() {
    let one = topology(
        "one",
        &[(Some("zone-a"), 1)],
        &[
            "{name: node-t, zone: zone-b, taints: [{key: dedicated, value: x, effect: NoSchedule}]}".into(),
            "{name: node-cp, zone: zone-c, controlPlane: true}".into(),
        ],
    );
    let (o, _) = Sim {
        topology: one,
        ..Sim::default()
    }
    .verify("shape-one");
    check_common("one", &o);
    assert_eq!(o.decision, Decision::Hold, "{}", summary("one", &o));
    assert!(o.cases.iter().all(|c| c.status == Status::NotExecuted));
    assert!(o.unprobed_nodes.len() == 2, "{:?}", o.unprobed_nodes);
}
