//! Rollout cases: the locality contract held through DaemonSet and Deployment rollouts.

use super::run;
use locality_verify::Seen;
use locality_verify::{Decision, Status};

/// The rollout cases on a conformant data plane: ≥ 10 tries per second; E-a answered locally
/// (old, then new) with a drop window and never remotely; H3 without a drop window.
#[test]
fn rollouts_keep_their_locality_contract() {
    let (o, evidence) = run("rollout", &[], &["E-a", "E-b", "H3"]);
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["E-a", "E-b", "H3"] {
        let c = case(id);
        assert_eq!(c.status, Status::Pass, "{id}: {}", c.why);
        assert!(locality_verify::logs::rate(&c.tries) >= 10.0, "{id}: {}", c.why);
        assert!(c.tries.iter().all(|t| t.channel == "logs"));
        assert!(evidence.join(format!("cases/{id}/timeline.json")).is_file());
    }
    let ea = case("E-a");
    let responders: std::collections::BTreeSet<String> = ea
        .tries
        .iter()
        .filter_map(|t| match &t.seen {
            Seen::Answer { responder } => Some(responder.clone()),
            _ => None,
        })
        .collect();
    assert!(!responders.contains("ea-be-n2"), "{responders:?}");
    assert!(
        responders.contains("ea-be-n1") && responders.contains("ea-be-n1-new"),
        "{responders:?}"
    );
    assert!(ea.tries.iter().any(|t| t.seen == Seen::Timeout), "{}", ea.why);
    let h3 = case("H3");
    assert!(h3.tries.iter().all(|t| t.seen != Seen::Timeout), "{}", h3.why);
    assert!(
        h3.tries.iter().any(|t| t.seen
            == Seen::Answer {
                responder: "h3-be-n2".into()
            }),
        "{}",
        h3.why
    );
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
}

#[test]
fn a_rollout_on_a_data_plane_ignoring_the_local_policy_fails() {
    let (o, _) = run("rollout-ignores", &[("node-a", "ignores-local-policy")], &["E-a"]);
    let ea = o.cases.iter().find(|c| c.id == "E-a").unwrap();
    assert_eq!(ea.status, Status::Fail, "{}", ea.why);
    assert!(ea.why.contains("remote"), "{}", ea.why);
}

#[test]
fn a_rollout_slower_than_the_lag_band_is_incomplete_not_failed() {
    // N1's kube-proxy programs every change 12 s late; the band is 5 s.
    let (o, _) = run("rollout-stale", &[("node-a", "stale-rules:12")], &["E-a"]);
    let ea = o.cases.iter().find(|c| c.id == "E-a").unwrap();
    assert_eq!(ea.status, Status::Incomplete, "{}", ea.why);
    assert!(ea.why.contains("lag"), "{}", ea.why);
    // A lag over the limit is never judged: HOLD naming the node and the lag, no FAIL.
    assert_eq!(o.decision, Decision::Hold, "{:?}", o.advice);
    assert_eq!(o.lagging.len(), 1, "{:?}", o.lagging);
    assert_eq!(o.lagging[0].node, "node-a");
    assert!(o.lagging[0].measured_ms > 5_000, "{:?}", o.lagging);
    assert!(o.cases.iter().all(|c| c.status != Status::Fail));
}

#[test]
fn rollouts_catch_a_kube_proxy_that_does_not_know_its_node() {
    // N1's kube-proxy finds no endpoint local: E-b drops throughout, H3 spreads to N2 while
    // N1's backend is ready.
    let (o, _) = run(
        "rollout-mismatch",
        &[("node-a", "hostname-mismatch")],
        &["E-b", "H3"],
    );
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["E-b", "H3"] {
        assert_eq!(case(id).status, Status::Fail, "{id}: {}", case(id).why);
        assert!(case(id).why.contains("OldReady"), "{id}: {}", case(id).why);
    }
    assert!(case("H3").why.contains("h3-be-n2"), "{}", case("H3").why);
    assert_ne!(o.decision, Decision::Accept);
}
