//! `locality sim rules`: the simulated kube-proxy's rule table, through the real binary.

use assert_cmd::Command;
use predicates::prelude::*;

fn rules(args: &[&str]) -> String {
    let out = Command::cargo_bin("locality")
        .unwrap()
        .arg("sim")
        .arg("rules")
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn playbook_fixture_rules_per_node() {
    let c = rules(&["node-c"]);
    assert!(c.starts_with("# SIMULATED cluster"), "{c}");
    assert!(
        c.contains("has no local endpoints") && c.contains("-j DROP"),
        "{c}"
    );
    let a = rules(&["node-a"]);
    assert!(!a.contains("-j DROP"), "node-a has a local backend: {a}");
    assert!(a.contains("KUBE-SVL"), "{a}");
    // A faulty data plane that ignores the Local policy programs no DROP.
    let bad = rules(&["node-c", "--profile", "node-c=ignores-local-policy"]);
    assert!(!bad.contains("-j DROP"), "{bad}");
    // Without the fixture there is nothing to drop.
    assert!(!rules(&["node-c", "--fixture", "none"]).contains("-j DROP"));
}

#[test]
fn unknown_names_are_usage_errors() {
    Command::cargo_bin("locality")
        .unwrap()
        .args(["sim", "rules", "node-x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean node-"));
    Command::cargo_bin("locality")
        .unwrap()
        .args(["sim", "rules", "node-a", "--topology", "three-zone"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("three-zones"));
    Command::cargo_bin("locality")
        .unwrap()
        .args(["sim", "rules", "node-a", "--profile", "node-a=bogus"])
        .assert()
        .code(2);
}
