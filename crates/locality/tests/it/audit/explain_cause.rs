//! `explain`'s "What would change it" for a blind node reuses the cause `audit` found (the
//! DaemonSet that does not tolerate the node's taint), not generic advice.

use super::locality;

/// The "What would change it" section of `explain`'s text.
fn remedies(args: &[&str]) -> String {
    let out = locality().arg("explain").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = text.find("What would change it:").expect("remedies");
    text[start..].trim_end().to_string()
}

#[test]
fn a_blind_node_is_told_the_audits_cause() {
    let section = remedies(&[
        "-f",
        "telemetry-30-nodes.json",
        "telemetry/otel-agent",
        "--node",
        "ingress-1",
        "--port",
        "4317",
    ]);
    insta::assert_snapshot!("explain_cause_telemetry", section);
    assert!(
        section.contains("ingress-1 and 2 other nodes have no local endpoint because DaemonSet telemetry/otel-agent does not tolerate their taint dedicated=ingress:NoSchedule (LOC003"),
        "{section}"
    );
    // The generic advice is replaced, the alternative kept.
    assert!(!section.contains("e.g. make the backing DaemonSet"), "{section}");
    assert!(section.contains("PreferSameNode"), "{section}");
}

/// Too few replicas: the cause is LOC002's.
#[test]
fn too_few_replicas_is_the_cause_named() {
    let section = remedies(&[
        "-f",
        "two-replicas-local.json",
        "payments/fraud-score",
        "--node",
        "node-3",
    ]);
    assert!(
        section.contains("because Deployment payments/fraud-score (2 replicas) for 6 client nodes (LOC002"),
        "{section}"
    );
}
