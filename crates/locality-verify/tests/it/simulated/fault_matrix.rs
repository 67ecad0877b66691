//! The fault matrix on the simulated cluster: one faulty node (of each fault, on each node) is never
//! accepted; a late kube-proxy is held, never failed; a cluster too small for the contract is held.

use super::{NODES, Sim, concurrently, on_each_node, summary};
use locality_verify::RepairKind;
use locality_verify::{Decision, Status};
use std::time::Duration;

#[test]
fn fault_matrix_a_node_ignoring_the_local_policy_is_never_accepted() {
    for (name, o, _evidence) in on_each_node("ignores-local-policy") {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        assert!(
            o.cases.iter().any(|c| c.status == Status::Fail),
            "{}",
            summary(&name, &o)
        );
    }
}

/// A node whose data plane never falls back to serving-terminating endpoints (KEP-1669) is
/// caught wherever it is: `Pt` probes every node while its only local endpoint terminates.
#[test]
fn fault_matrix_a_node_without_the_terminating_fallback_is_never_accepted() {
    for ((name, o, _evidence), node) in on_each_node("no-terminating-fallback").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        let pt = o.cases.iter().find(|c| c.id == "Pt").unwrap();
        assert_eq!(pt.status, Status::Fail, "{}", summary(&name, &o));
        assert!(pt.why.contains(node), "{}: {}", node, pt.why);
    }
}

#[test]
fn fault_matrix_a_hostname_mismatch_is_a_repair_naming_the_node() {
    for ((name, o, _evidence), node) in on_each_node("hostname-mismatch").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Repair, "{}", summary(&name, &o));
        assert!(
            o.repairs
                .iter()
                .all(|r| r.kind == RepairKind::HostnameOverride && r.node == node),
            "{}: {:?}",
            summary(&name, &o),
            o.repairs
        );
        assert!(
            o.advice
                .iter()
                .any(|a| a.contains("--hostname-override") && a.contains(node))
        );
    }
}

#[test]
fn fault_matrix_an_old_kube_proxy_is_a_repair_naming_the_node() {
    let runs = NODES
        .iter()
        .map(|n| {
            (
                format!("fm-skew-{n}"),
                Sim {
                    proxy_versions: vec![(n.to_string(), 32)],
                    ..Sim::default()
                },
            )
        })
        .collect();
    for ((name, o, _evidence), node) in concurrently(runs).into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Repair, "{}", summary(&name, &o));
        assert!(
            o.repairs
                .iter()
                .any(|r| r.kind == RepairKind::UpgradeKubeProxy && r.node == node),
            "{}: {:?}",
            summary(&name, &o),
            o.repairs
        );
        assert!(o.repairs.iter().all(|r| r.node == node), "{:?}", o.repairs);
    }
}

#[test]
fn fault_matrix_ipvs_on_one_node_is_accepted() {
    for (name, o, _evidence) in on_each_node("kube-proxy:ipvs") {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
    }
}

#[test]
fn fault_matrix_a_kube_proxy_late_within_the_limit_is_accepted() {
    for (name, o, _evidence) in on_each_node("stale-rules:2") {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
    }
}

#[test]
fn fault_matrix_a_kube_proxy_late_beyond_the_limit_is_held_naming_it_and_never_failed() {
    for ((name, o, _evidence), node) in on_each_node("stale-rules:40").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        assert!(
            o.cases.iter().all(|c| c.status != Status::Fail),
            "{}",
            summary(&name, &o)
        );
        assert!(
            o.lagging.iter().any(|l| l.node == node && l.measured_ms > 5_000),
            "{}: {:?}",
            summary(&name, &o),
            o.lagging
        );
    }
}

/// A kube-proxy just beyond the limit (rules written 5 s after each change, plus its sync
/// period) is measured as late in the cluster's clock by the node's lag reader, not blurred
/// into the time a one-shot reader pod takes to start: held, naming the node.
#[test]
fn fault_matrix_a_kube_proxy_just_beyond_the_limit_is_held_naming_it() {
    for ((name, o, _evidence), node) in on_each_node("stale-rules:5").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        assert!(
            o.cases.iter().all(|c| c.status != Status::Fail),
            "{}",
            summary(&name, &o)
        );
        assert!(
            o.lagging.iter().all(|l| l.node == node) && !o.lagging.is_empty(),
            "{}: {:?}",
            summary(&name, &o),
            o.lagging
        );
    }
}

/// `M` on a node whose kube-proxy is later than the whole lag timeout: its metric is still
/// the old one because nothing was synced, which is lag (INCOMPLETE, a HOLD naming the node),
/// never kube-proxy failing to count the Service (FAIL). The simulated clock runs slowly so
/// that the lag outlasts every read.
#[test]
fn a_kube_proxy_later_than_every_read_is_held_for_lag_never_failed() {
    let (o, _) = Sim {
        profiles: vec![("node-c".into(), "stale-rules:60".into())],
        only: vec!["M".into()],
        speed: 5.0,
        ..Sim::default()
    }
    .verify("m-late");
    let m = o.cases.iter().find(|c| c.id == "M").expect("M ran");
    assert_eq!(
        m.client_node.as_deref(),
        Some("node-c"),
        "{}",
        summary("m-late", &o)
    );
    assert_eq!(m.status, Status::Incomplete, "{}", summary("m-late", &o));
    assert!(m.lag_over_limit.is_some(), "{}", summary("m-late", &o));
    assert!(
        o.lagging.iter().any(|l| l.node == "node-c"),
        "{}",
        summary("m-late", &o)
    );
    // The control probed through node-c is its lag too, not a broken environment.
    assert!(
        o.cases.iter().all(|c| c.status != Status::Fail),
        "{}",
        summary("m-late", &o)
    );
    assert_eq!(o.decision, Decision::Hold, "{}", summary("m-late", &o));
}

/// `--max-nodes` below the usable nodes leaves nodes unprobed: never a plain ACCEPT.
#[test]
fn a_sampled_run_is_partial_never_a_plain_accept() {
    let (o, evidence) = Sim {
        max_nodes: Some(2),
        only: vec!["P".into()],
        ..Sim::default()
    }
    .verify("sampled");
    let line = o.decision_line(false);
    assert!(line.starts_with("PARTIAL "), "{line}");
    assert!(line.contains("of 4 usable nodes probed"), "{line}");
    let decision: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(evidence.join("decision.json")).unwrap()).unwrap();
    assert_eq!(decision["partial"], true);
    assert_eq!(decision["sampled"]["usable"], 4);
    // Every usable node (the default): not partial on that account.
    let (o, _) = Sim {
        max_nodes: None,
        only: vec!["P".into()],
        ..Sim::default()
    }
    .verify("all-nodes");
    assert!(o.sampled.is_none());
}

/// 20 seeds, each a full run on a conformant cluster: ACCEPT, and not one FAIL.
#[test]
fn fault_matrix_a_conformant_cluster_is_accepted_on_twenty_seeds() {
    let runs = (1..=20u64)
        .map(|seed| {
            (
                format!("fm-conformant-{seed}"),
                Sim {
                    seed,
                    ..Sim::default()
                },
            )
        })
        .collect();
    for (name, o, _evidence) in concurrently(runs) {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
    }
}

/// The cases whose verdict rests on phases seen between two observations: the terminating
/// window (`Pt`), the lag gate (`Pn`) and the three rollouts.
const PHASED: [&str; 6] = ["P", "Pn", "Pt", "E-a", "E-b", "H3"];

/// A slow API server (200 ms per request, 10 s of the simulated clock at speed 50) and a
/// fast simulated clock alone: a phase that falls between two observations is never judged
/// a violation. `cases`: the cases run behind the slow server (every case when empty).
fn accepted_behind_a_slow_api(cases: &[&str]) {
    let runs = vec![
        (
            "fm-latency".to_string(),
            Sim {
                api_latency: Duration::from_millis(200),
                only: cases.iter().map(|c| c.to_string()).collect(),
                ..Sim::default()
            },
        ),
        (
            "fm-speed-50".to_string(),
            Sim {
                seed: 7,
                ..Sim::default()
            },
        ),
    ];
    for (name, o, _evidence) in concurrently(runs) {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
        assert!(
            o.cases.iter().all(|c| c.status == Status::Pass),
            "{}",
            summary(&name, &o)
        );
    }
}

/// The phased cases behind a slow API server, a full run on the fast clock.
#[test]
fn fault_matrix_a_conformant_cluster_is_accepted_behind_a_slow_api() {
    accepted_behind_a_slow_api(&PHASED);
}

/// Every case behind the slow API server: about four minutes on two cores.
#[test]
#[ignore = "a full run behind a 200 ms API takes minutes: nextest profile verify-sweep"]
fn fault_matrix_every_case_is_accepted_behind_a_slow_api() {
    accepted_behind_a_slow_api(&[]);
}

/// Two usable nodes are enough for a partial verdict (what they cannot host is named); one is
/// not (HOLD, with a ledger).
#[test]
fn two_nodes_are_enough_for_the_contract_and_one_is_not() {
    let two = "name: two\nnodes:\n  - {name: node-a, zone: zone-a}\n  - {name: node-b, zone: zone-b}\n";
    let one = "name: one\nnodes:\n  - {name: node-a, zone: zone-a}\n  - name: node-b\n    zone: zone-b\n    taints: [{key: dedicated, value: x, effect: NoSchedule}]\n";
    let runs = vec![
        (
            "two-nodes".to_string(),
            Sim {
                topology: two.into(),
                only: ["P", "Pn", "C1", "B1", "C", "D1", "D2", "F"]
                    .map(String::from)
                    .to_vec(),
                ..Sim::default()
            },
        ),
        (
            "one-node".to_string(),
            Sim {
                topology: one.into(),
                ..Sim::default()
            },
        ),
    ];
    let results = concurrently(runs);
    let (name, o, _) = &results[0];
    // B1 needs a second node with a backend (N2): not checked, said at once; the rest pass.
    for c in &o.cases {
        let want = if c.id == "B1" {
            Status::NotExecuted
        } else {
            Status::Pass
        };
        assert_eq!(c.status, want, "{}", summary(name, o));
    }
    let b1 = o.cases.iter().find(|c| c.id == "B1").unwrap();
    assert!(b1.why.contains("no node for role N2"), "{}", b1.why);
    assert_eq!(o.uncovered, ["B1"], "{}", summary(name, o));
    assert_eq!(o.decision, Decision::Accept, "{}", summary(name, o));
    assert!(o.decision_line(false).starts_with("PARTIAL ACCEPT"));
    assert!(o.decision_line(false).contains("not checked on this cluster: B1"));
    let (name, o, _) = &results[1];
    assert_eq!(o.decision, Decision::Hold, "{}", summary(name, o));
    assert!(
        o.advice
            .iter()
            .any(|a| a.contains("1 usable (node-a)") && a.contains("node-b: tainted")),
        "{:?}",
        o.advice
    );
    assert!(o.evidence.join("ledger.json").is_file() && o.evidence.join("decision.json").is_file());
}

/// A node that picks among every ready endpoint, a local one included (the fault `P` is sized
/// for), is never accepted and fails `P` on that node.
#[test]
fn fault_matrix_a_node_spreading_a_local_service_over_every_endpoint_is_never_accepted() {
    for ((name, o, _evidence), node) in on_each_node("ignores-local-policy:always").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        let p = o.cases.iter().find(|c| c.id == "P").unwrap();
        assert_eq!(p.status, Status::Fail, "{}", summary(&name, &o));
        assert!(p.why.contains(node), "{node}: {}", p.why);
    }
}
