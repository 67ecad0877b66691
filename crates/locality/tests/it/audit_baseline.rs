//! Drives the real `locality` binary: `audit --baseline` with an earlier run's SARIF log and
//! JSON/YAML report reports only new findings, never fails `--fail-on` on known ones, and
//! refuses what is not a baseline with a message naming the file.

use std::path::PathBuf;

use assert_cmd::Command;
use locality_testkit::files::TempDir;
use serde_json::Value;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn locality() -> Command {
    let mut c = Command::cargo_bin("locality").expect("locality binary");
    c.env("SOURCE_DATE_EPOCH", "1767225600");
    c.env_remove("LOCALITY_PROFILE").current_dir(examples());
    c
}

/// `audit -f telemetry-30-nodes.json ARGS…`: exit code and stdout.
fn audit(args: &[&str]) -> (i32, String) {
    let out = locality()
        .args(["audit", "-f", "telemetry-30-nodes.json"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn rules(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_baseline_hides_known_findings_and_keeps_new_ones() {
    let tmp = TempDir::new("baseline-hides");
    let dir = tmp.path().to_path_buf();
    let (_, full) = audit(&["-o", "json"]);
    let full: Value = serde_json::from_str(&full).unwrap();
    let all = rules(&full);
    assert!(
        all.iter().any(|r| r == "LOC004") && all.iter().any(|r| r != "LOC004"),
        "{all:?}"
    );

    // An earlier run that only knew LOC004, as SARIF, JSON and YAML.
    for (format, file) in [("sarif", "old.sarif"), ("json", "old.json"), ("yaml", "old.yaml")] {
        let (code, old) = audit(&["--rule", "LOC004", "-o", format]);
        assert_eq!(code, 0);
        let path = dir.join(file);
        std::fs::write(&path, old).unwrap();
        let (code, now) = audit(&["-o", "json", "--baseline", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{format}");
        let now: Value = serde_json::from_str(&now).unwrap();
        let left = rules(&now);
        let known = all.iter().filter(|r| *r == "LOC004").count();
        assert_eq!(left.len(), all.len() - known, "{format}: {left:?}");
        assert!(left.iter().all(|r| r != "LOC004"), "{format}: {left:?}");
        assert_eq!(now["totals"]["inBaseline"], known, "{format}");
    }

    // A baseline of everything: nothing is new, and --fail-on no longer fails.
    let (_, sarif) = audit(&["-o", "sarif"]);
    let path = dir.join("all.sarif");
    std::fs::write(&path, sarif).unwrap();
    assert_eq!(audit(&["--fail-on", "warning"]).0, 3);
    let (code, text) = audit(&["--fail-on", "warning", "--baseline", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("in baseline"), "{text}");
}

#[test]
fn what_is_not_a_baseline_is_refused_naming_the_file() {
    let tmp = TempDir::new("baseline-refused");
    let dir = tmp.path().to_path_buf();
    let cases = [
        (
            "dump.json",
            r#"{"apiVersion": "v1", "kind": "List", "items": []}"#,
            "kind \"List\"",
        ),
        (
            "other.sarif",
            r#"{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "kube-linter"}}, "results": []}]}"#,
            "kube-linter",
        ),
        (
            "broken.json",
            r#"{"kind": "AuditReport", "findings": [{"rule": "LOC004"}]}"#,
            "findings[0].service.namespace",
        ),
        ("garbage.json", "{ not json: [", "neither JSON"),
    ];
    for (file, text, says) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let out = locality()
            .args(["audit", "-f", "telemetry-30-nodes.json", "--baseline"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(file) && err.contains(says), "{file}: {err}");
    }
    let out = locality()
        .args([
            "audit",
            "-f",
            "telemetry-30-nodes.json",
            "--baseline",
            "/dev/zero",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
}
