//! Single cases against simulated faults: external traffic, restarting clients, the Local policy
//! ignored, node names and zones unknown to kube-proxy, roles without a node, the metrics case M.

use super::{Sim, concurrently, run, run_on, summary};
use locality_verify::Expected;
use locality_verify::{Decision, Status};

#[test]
fn the_external_cases_catch_a_data_plane_that_masquerades_external_traffic() {
    let runs = vec![
        (
            "external-ok".to_string(),
            Sim {
                only: vec!["X2".into(), "X2s".into()],
                ..Sim::default()
            },
        ),
        (
            "external-masq".to_string(),
            Sim {
                only: vec!["X2".into(), "X2s".into()],
                profiles: vec![("node-a".into(), "masquerades-external".into())],
                ..Sim::default()
            },
        ),
    ];
    let outcomes = concurrently(runs);
    let (_, ok, _) = &outcomes[0];
    for c in &ok.cases {
        assert_eq!(c.status, Status::Pass, "{}: {}", c.id, c.why);
    }
    let x2s = ok.cases.iter().find(|c| c.id == "X2s").unwrap();
    assert!(x2s.why.contains("client's own address"), "{}", x2s.why);
    let (_, masq, _) = &outcomes[1];
    assert_ne!(
        masq.decision,
        Decision::Accept,
        "{}",
        summary("external-masq", masq)
    );
    let x2s = masq.cases.iter().find(|c| c.id == "X2s").unwrap();
    assert_eq!(x2s.status, Status::Fail, "{}", x2s.why);
    assert!(x2s.why.contains("masqueraded"), "{}", x2s.why);
}

#[test]
fn a_client_that_restarts_while_probing_makes_its_case_incomplete() {
    let (o, _) = Sim {
        only: vec!["E-a".into()],
        restart_on_log_read: Some("ea-loop-n1".into()),
        ..Sim::default()
    }
    .verify("restart");
    let ea = o.cases.iter().find(|c| c.id == "E-a").unwrap();
    assert_eq!(ea.status, Status::Incomplete, "{}", ea.why);
    assert!(ea.why.contains("ea-loop-n1 (restartCount 0 → 1)"), "{}", ea.why);
    assert_ne!(o.decision, Decision::Accept, "{}", summary("restart", &o));
}

#[test]
fn a_data_plane_ignoring_the_local_policy_is_held() {
    let (o, _) = run(
        "ignores",
        &[("node-c", "ignores-local-policy")],
        &["A", "B1", "C"],
    );
    let c = o.cases.iter().find(|c| c.id == "C").unwrap();
    assert_eq!(c.status, Status::Fail, "{}", c.why);
    assert!(c.why.contains("answered"), "{}", c.why);
    assert_eq!(
        o.cases.iter().find(|c| c.id == "B1").unwrap().status,
        Status::Pass
    );
    assert_eq!(o.decision, Decision::Hold, "{:?}", o.advice);
    // --only runs the controls too, and says the run is partial.
    let ids: Vec<&str> = o.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["N0", "A", "B1", "C"], "--only");
    assert!(
        o.decision_line(false).starts_with("PARTIAL HOLD"),
        "{}",
        o.decision_line(false)
    );
}

#[test]
fn a_kube_proxy_that_does_not_know_its_node_name_gets_a_repair() {
    let (o, _) = run("mismatch", &[("node-a", "hostname-mismatch")], &["A", "B1"]);
    let b1 = o.cases.iter().find(|c| c.id == "B1").unwrap();
    assert_eq!(b1.status, Status::Fail, "{}", b1.why);
    assert_eq!(o.decision, Decision::Repair, "{:?}", o.advice);
    assert!(
        o.advice.iter().any(|a| a.contains("--hostname-override")),
        "{:?}",
        o.advice
    );
    assert_eq!(o.rerun, vec!["B1".to_string()]);
}

#[test]
fn ignoring_the_local_policy_is_caught_from_the_host_over_udp_and_under_a_preference() {
    let (o, _) = run(
        "ignores-new",
        &[("node-c", "ignores-local-policy")],
        &["A", "Ch", "L1", "U2", "X1"],
    );
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["Ch", "L1", "U2"] {
        let c = case(id);
        assert_eq!(c.status, Status::Fail, "{id}: {}", c.why);
        assert!(c.why.contains("answered"), "{id}: {}", c.why);
    }
    // ITP does not govern NodePort traffic: X1 holds on the same node.
    assert_eq!(case("X1").status, Status::Pass, "{}", case("X1").why);
    assert_eq!(o.decision, Decision::Hold, "{:?}", o.advice);
}

#[test]
fn a_kube_proxy_that_does_not_know_its_zone_breaks_the_zone_preference_and_the_daemonset() {
    // kube-proxy on node-d (N1z) does not find its Node: no zone, nothing local.
    let (o, _) = run(
        "zone-unknown",
        &[("node-d", "hostname-mismatch")],
        &["A", "P", "H4", "Z1", "Z2"],
    );
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    let z1 = case("Z1");
    assert_eq!(z1.status, Status::Fail, "{}", z1.why);
    assert!(z1.why.contains("z-be-n2"), "{}", z1.why);
    let p = case("P");
    assert_eq!(p.status, Status::Fail, "{}", p.why);
    assert!(p.why.contains("node-d") && p.why.contains("timeout"), "{}", p.why);
    // Clients elsewhere are unaffected.
    assert_eq!(case("H4").status, Status::Pass, "{}", case("H4").why);
    assert_eq!(case("Z2").status, Status::Pass, "{}", case("Z2").why);
    assert_ne!(o.decision, Decision::Accept);
}

#[test]
fn cases_without_their_role_node_are_not_executed_and_the_rest_run() {
    // three-zones has no second node in N1's zone: no N1z.
    let (o, _) = run_on("three-zones", "no-n1z", &[], &["A", "P", "H4", "Z1", "Z2", "Z3"]);
    assert_eq!(o.roles.node(locality_verify::cases::Role::N1z), None);
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["H4", "Z1", "Z3"] {
        let c = case(id);
        assert_eq!(c.status, Status::NotExecuted, "{id}: {}", c.why);
        assert!(c.why.contains("no node for role N1z"), "{id}: {}", c.why);
    }
    assert_eq!(case("Z2").status, Status::Pass, "{}", case("Z2").why);
    let p = case("P");
    assert_eq!(p.status, Status::Pass, "{}", p.why);
    assert!(matches!(&p.expected, Some(Expected::PerNode { nodes }) if nodes.len() == 3));
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
}

/// `M`: N3's kube-proxy counts the Local Service without a local endpoint (+1, one port, one
/// family), and no more once N3 has a Ready backend; the metrics text is evidence.
fn m_counts(evidence: &std::path::Path) {
    let read = |f: &str| std::fs::read_to_string(evidence.join("cases/M").join(f)).unwrap();
    let v = |f: &str| locality_verify::metrics::no_local_internal(&read(f)).unwrap();
    assert_eq!(
        v("metrics-2-no-local-endpoint.txt"),
        v("metrics-1-before.txt") + 1.0
    );
    assert_eq!(v("metrics-3-local-endpoint.txt"), v("metrics-1-before.txt"));
}

#[test]
fn m_reads_the_no_local_endpoints_metric_on_n3() {
    let (o, evidence) = run("m-pass", &[], &["M"]);
    let m = o.cases.iter().find(|c| c.id == "M").unwrap();
    assert_eq!(m.status, Status::Pass, "{}", m.why);
    assert!(
        m.why
            .contains("kubeproxy_sync_proxy_rules_no_local_endpoints_total"),
        "{}",
        m.why
    );
    m_counts(&evidence);
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
}

#[test]
fn m_fails_when_n3_does_not_see_its_own_endpoint_as_local() {
    let (o, _) = run("m-mismatch", &[("node-c", "hostname-mismatch")], &["M"]);
    let m = o.cases.iter().find(|c| c.id == "M").unwrap();
    assert_eq!(m.status, Status::Fail, "{}", m.why);
    assert!(m.why.contains("--hostname-override"), "{}", m.why);
    assert_eq!(o.decision, Decision::Repair, "{:?}", o.advice);
    assert_eq!(o.rerun, vec!["M".to_string()]);
}

#[test]
fn m_is_not_executed_without_kube_proxy_metrics() {
    let (o, _) = run("m-other", &[("node-c", "other")], &["M"]);
    let m = o.cases.iter().find(|c| c.id == "M").unwrap();
    assert_eq!(m.status, Status::NotExecuted, "{}", m.why);
    assert!(m.why.starts_with("no kube-proxy metrics"), "{}", m.why);
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
    // The node's data plane could not be read: judged against the contract, and said so.
    assert!(
        o.advice
            .iter()
            .any(|a| a.starts_with("note: node-c's kube-proxy could not be read")),
        "{:?}",
        o.advice
    );
    assert!(o.planes["node-c"].unreadable.is_some() && o.planes["node-a"].mode.is_some());
}

/// A node whose data plane cannot be read (a replacement without kube-proxy's metrics): a
/// case that expects no answer from it is probed only once `--max-proxy-lag` (here 30 s of
/// the cluster's clock, far longer than the case's own setup takes) has passed since its
/// change, so a rule still missing cannot pass for a drop.
#[test]
fn a_drop_on_a_node_without_metrics_is_probed_after_the_lag_bound() {
    let (o, evidence) = Sim {
        profiles: vec![("node-c".into(), "other".into())],
        only: vec!["C".into()],
        max_proxy_lag: Some(std::time::Duration::from_secs(30)),
        ..Sim::default()
    }
    .verify("unreadable-drop");
    let c = o.cases.iter().find(|c| c.id == "C").unwrap();
    assert_eq!(c.client_node.as_deref(), Some("node-c"));
    assert_eq!(c.status, Status::Pass, "{}", c.why);
    let slices: serde_json::Value = serde_saphyr::from_str(
        &std::fs::read_to_string(evidence.join("cases/C/endpointslices.yaml")).unwrap(),
    )
    .unwrap();
    let created: i64 = slices["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap()
                .parse::<jiff::Timestamp>()
                .unwrap()
                .as_millisecond()
        })
        .min()
        .unwrap();
    let first = c.tries.iter().map(|t| t.sent_ms).min().unwrap() as i64;
    assert!(
        first >= created + 30_000,
        "C's first try {} ms after its endpoints were created",
        first - created
    );
}
