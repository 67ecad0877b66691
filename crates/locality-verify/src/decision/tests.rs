//! Unit tests of the decision table.
use super::*;
use crate::judge::Status;

fn repair() -> Repair {
    Repair {
        kind: RepairKind::HostnameOverride,
        node: "node-a".into(),
        action: "set --hostname-override=node-a on node-a's kube-proxy".into(),
        evidence: vec!["B1 timed out with a local Ready endpoint".into()],
        cases: vec!["B1".into()],
    }
}

fn lag() -> Lag {
    Lag {
        node: "node-b".into(),
        measured_ms: 40_000,
        limit_ms: 5_000,
        cases: vec!["B2".into()],
    }
}

/// One `Findings` that makes exactly the row's condition hold (and none above it).
fn only(c: Condition) -> Findings {
    let mut f = Findings::default();
    match c {
        Condition::ControlFailed => f.controls_failed.push("A".into()),
        Condition::UnexplainedViolation => f.unexplained.push("C".into()),
        Condition::KnownOpenBug => f.known_bugs.push(KnownBug {
            entry: "cilium-etp-local-in-cluster-lb-ip".into(),
            node: "node-b".into(),
            advice: "open upstream bug cilium/cilium#45252: use the cluster IP".into(),
            evidence: vec!["X2 failed".into()],
            cases: vec!["X2".into()],
        }),
        Condition::LagOverLimit => f.lagging.push(lag()),
        Condition::EnvironmentGap => f.gaps.push(("C".into(), "no second usable node".into())),
        Condition::ControlIncomplete => f.controls_incomplete.push("N0".into()),
        Condition::Repairable => f.repairs.push(repair()),
        Condition::Unfinished => f.unfinished.push(("D1".into(), "interrupted".into())),
        Condition::Incomplete => f.incomplete.push("B1".into()),
        Condition::Otherwise => {}
    }
    f
}

/// docs/verify.md lists every case of the catalogue with its kind, and the decision table
/// row by row.
#[test]
fn the_docs_follow_the_catalogue_and_the_table() {
    let doc = include_str!("../../../../docs/verify.md");
    for c in crate::cases::CATALOGUE {
        let kind = if c.control {
            "control"
        } else if CORE.contains(&c.id) {
            "core"
        } else {
            ""
        };
        let row = if kind.is_empty() {
            format!("| `{}` | |", c.id)
        } else {
            format!("| `{}` | {kind} |", c.id)
        };
        assert!(
            doc.contains(&row),
            "docs/verify.md lacks the row starting {row:?}"
        );
    }
    for (i, row) in TABLE.iter().enumerate() {
        let line = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", i + 1)))
            .unwrap_or_else(|| panic!("docs/verify.md lacks decision row {}", i + 1));
        assert!(line.contains(row.decision.as_str()), "row {}: {line}", i + 1);
    }
}

#[test]
fn each_row_decides_alone() {
    for row in TABLE {
        let d = decide(&only(row.when));
        assert_eq!((d.decision, d.condition), (row.decision, row.when), "{row:?}");
    }
}

#[test]
fn row_control_failed_holds_over_everything() {
    let mut f = only(Condition::Repairable);
    f.controls_failed.push("N0".into());
    f.incomplete.push("B1".into());
    assert_eq!(decide(&f).decision, Decision::Hold);
}

#[test]
fn row_unexplained_violation_holds_even_with_a_repair() {
    let mut f = only(Condition::Repairable);
    f.unexplained.push("H2".into());
    let d = decide(&f);
    assert_eq!(d.decision, Decision::Hold);
    assert!(d.advice[0].contains("H2"));
}

#[test]
fn row_lag_over_limit_holds_naming_the_node_and_the_lag() {
    let mut f = only(Condition::LagOverLimit);
    f.repairs.push(repair());
    let d = decide(&f);
    assert_eq!(d.decision, Decision::Hold);
    assert!(d.advice[0].contains("node-b") && d.advice[0].contains("40000 ms"));
}

#[test]
fn row_environment_gap_holds_naming_what_is_missing() {
    let mut f = only(Condition::EnvironmentGap);
    f.incomplete.push("B1".into());
    let d = decide(&f);
    assert_eq!(d.decision, Decision::Hold);
    assert!(d.advice[0].contains("no second usable node"));
}

#[test]
fn row_control_incomplete_reruns_the_control() {
    let mut f = only(Condition::ControlIncomplete);
    f.repairs.push(repair());
    let d = decide(&f);
    assert_eq!((d.decision, d.rerun), (Decision::Rerun, vec!["N0".to_string()]));
}

#[test]
fn row_repairable_names_the_action_and_the_cases() {
    let mut f = only(Condition::Repairable);
    f.incomplete.push("H3".into());
    let d = decide(&f);
    assert_eq!(
        (d.decision, d.rerun.clone()),
        (Decision::Repair, vec!["B1".to_string()])
    );
    assert!(d.advice[0].contains("--hostname-override"));
}

#[test]
fn row_unfinished_reruns_what_was_not_finished() {
    let mut f = only(Condition::Unfinished);
    f.incomplete.push("B1".into());
    let d = decide(&f);
    assert_eq!(d.decision, Decision::Rerun);
    assert_eq!(d.rerun, vec!["D1".to_string(), "B1".to_string()]);
}

#[test]
fn row_incomplete_reruns() {
    let d = decide(&only(Condition::Incomplete));
    assert_eq!((d.decision, d.rerun), (Decision::Rerun, vec!["B1".to_string()]));
}

#[test]
fn a_hold_still_names_its_repairs_and_a_repair_its_incomplete_cases() {
    let mut f = only(Condition::UnexplainedViolation);
    f.repairs = only(Condition::Repairable).repairs;
    f.incomplete.push("H3".into());
    let d = decide(&f);
    assert_eq!(d.decision, Decision::Hold);
    assert!(
        d.advice.iter().any(|a| a.starts_with("also repairable: ")),
        "{:?}",
        d.advice
    );
    assert!(
        d.advice
            .iter()
            .any(|a| a.starts_with("also INCOMPLETE (not judged): H3")),
        "{:?}",
        d.advice
    );
    let mut f = only(Condition::Repairable);
    f.incomplete.push("H3".into());
    let d = decide(&f);
    assert_eq!(d.decision, Decision::Repair);
    assert!(
        !d.advice.iter().any(|a| a.starts_with("also repairable")),
        "{:?}",
        d.advice
    );
    assert!(
        d.advice
            .iter()
            .any(|a| a.contains("also INCOMPLETE (not judged): H3")),
        "{:?}",
        d.advice
    );
}

#[test]
fn a_rerun_command_names_the_runs_target() {
    let mut f = only(Condition::Incomplete);
    f.target = ["--topology", "my shape.yaml", "--profile", "node-c=stale-rules:5"]
        .map(String::from)
        .to_vec();
    let d = decide(&f);
    assert!(
        d.advice.iter().any(|a| a
            == "rerun: locality verify --topology 'my shape.yaml' --profile node-c=stale-rules:5 --only B1"),
        "{:?}",
        d.advice
    );
}

#[test]
fn row_otherwise_accepts_and_a_partial_run_says_so() {
    assert_eq!(decide(&Findings::default()).decision, Decision::Accept);
    let f = Findings {
        partial: Some(vec!["N0".into(), "A".into(), "C".into()]),
        ..Findings::default()
    };
    let d = decide(&f);
    assert_eq!(d.decision, Decision::Accept);
    let line = decision_line(
        d.decision,
        Scope {
            only: d.partial.as_deref(),
            ..Scope::default()
        },
        false,
    );
    assert!(line.starts_with("PARTIAL ACCEPT"), "{line}");
    assert!(d.advice.iter().any(|a| a.contains("not a verdict")));
    assert_eq!(decision_line(Decision::Accept, Scope::default(), false), "ACCEPT");
}

/// `--max-nodes` below the usable nodes: a fault on another node would not be seen, so
/// the decision is partial.
#[test]
fn a_sampled_run_is_partial() {
    let f = Findings {
        sampled: Some(Sampled {
            probed: 10,
            usable: 240,
            nodes: Vec::new(),
        }),
        ..Findings::default()
    };
    let d = decide(&f);
    let line = decision_line(
        d.decision,
        Scope {
            sampled: d.sampled.as_ref(),
            ..Scope::default()
        },
        false,
    );
    assert!(
        line.starts_with("PARTIAL ACCEPT (10 of 240 usable nodes probed"),
        "{line}"
    );
    assert!(d.advice.iter().any(|a| a.contains("--max-nodes")));
}

#[test]
fn findings_of_statuses() {
    let f = findings_of(&[
        ("A", true, Status::Pass),
        ("C", false, Status::Fail),
        ("N0", true, Status::Incomplete),
        ("B1", false, Status::Incomplete),
        ("X1", false, Status::NotExecuted),
    ]);
    assert_eq!(f.unexplained, vec!["C".to_string()]);
    assert_eq!(f.controls_incomplete, vec!["N0".to_string()]);
    assert_eq!(f.incomplete, vec!["B1".to_string()]);
    assert_eq!(decide(&f).decision, Decision::Hold);
}
