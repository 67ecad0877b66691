//! `locality verify` through the real binary, against the embedded simulated cluster.

use assert_cmd::Command;
use predicates::prelude::*;

fn evidence(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("locality-verify-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn accept_on_a_conformant_simulated_cluster_with_the_ledger_as_json() {
    let dir = evidence("accept");
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args([
            "verify",
            "--only",
            "B1,C",
            "-o",
            "json",
            "--owner",
            "ci",
            "--evidence",
        ])
        .arg(&dir)
        .assert()
        .code(0)
        .stderr(predicate::str::contains("SIMULATED cluster"));
    let ledger: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(ledger["decision"]["decision"], "ACCEPT");
    assert!(
        ledger["decision"]["line"]
            .as_str()
            .unwrap()
            .contains("simulated cluster")
    );
    assert_eq!(ledger["owner"], "ci");
    let ids: Vec<&str> = ledger["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["B1", "C"]);
    assert!(dir.join("SHA256SUMS").is_file() && dir.join("junit.xml").is_file());
}

#[test]
fn hold_when_the_data_plane_ignores_the_local_policy() {
    let dir = evidence("hold");
    Command::cargo_bin("locality")
        .unwrap()
        .args([
            "verify",
            "--only",
            "A,C",
            "--profile",
            "node-c=ignores-local-policy",
            "--evidence",
        ])
        .arg(&dir)
        .assert()
        .code(5)
        .stdout(predicate::str::contains("HOLD (simulated cluster"))
        .stdout(predicate::str::contains("FAIL"));
}

#[test]
fn verify_usage_errors() {
    Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--only", "Z9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such case"));
    Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--live", "--profile", "node-a=lossy"])
        .assert()
        .code(2);
    Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--profile", "node-zz=lossy"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("node-"));
}
