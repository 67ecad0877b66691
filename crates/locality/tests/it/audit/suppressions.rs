//! Suppressed findings (annotations, the config file with expiry), bad inputs, and JUnit output.

use super::sarif::{assert_valid_sarif, sarif_validator};
use super::{audit_json, examples, locality};
use assert_cmd::Command;
use locality_testkit::files::TempDir;
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bad_inputs_exit_2_with_file_line_column() {
    let tmp = TempDir::new("audit-bad");
    let dir = tmp.path().to_path_buf();
    let cases = [
        (
            "port.json",
            r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"},"spec":{"ports":[{"port":"http"}]}}]}"#,
            ":1:",
            "spec.ports[0].port",
        ),
        (
            "truncated.json",
            "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\"",
            ":2:",
            "EOF",
        ),
        (
            "name.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: [a\n",
            ":4:",
            "metadata.name",
        ),
        (
            "oldapi.yaml",
            "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata:\n  name: a\n  namespace: b\n",
            ":",
            "extensions/v1beta1",
        ),
        (
            "dup.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: a\n",
            ":",
            "Node",
        ),
    ];
    for (name, text, position, detail) in cases {
        let path = write(&dir, name, text);
        for output in ["table", "sarif"] {
            locality()
                .args(["audit", "-o", output, "-f"])
                .arg(&path)
                .assert()
                .code(2)
                .stdout(predicate::str::is_empty())
                .stderr(
                    predicate::str::contains(format!("{name}{position}"))
                        .and(predicate::str::contains(detail)),
                );
        }
    }
}

// ---------------------------------------------------------------- suppressions

/// `telemetry-30-nodes.json` with `locality.dev/ignore` annotations: on the Service
/// (`service`), and on a Namespace object added for its namespace (`namespace`).
/// Returns the directory too: the file lives as long as it does.
fn annotated_telemetry(tag: &str, service: Option<&str>, namespace: Option<&str>) -> (TempDir, PathBuf) {
    let text = std::fs::read_to_string(examples().join("telemetry-30-nodes.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let items = doc["items"].as_array_mut().unwrap();
    if let Some(rules) = service {
        let svc = items
            .iter_mut()
            .find(|i| i["kind"] == "Service" && i["metadata"]["name"] == "otel-agent")
            .unwrap();
        svc["metadata"]["labels"] = serde_json::json!({"team": "obs"});
        svc["metadata"]["annotations"] = serde_json::json!({
            "locality.dev/ignore": rules,
            "locality.dev/ignore-reason": "node agent; callers tolerate short outages"
        });
    }
    if let Some(rules) = namespace {
        items.push(serde_json::json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "telemetry", "annotations": {"locality.dev/ignore": rules}}
        }));
    }
    let dir = TempDir::new(&format!("audit-{tag}"));
    let path = dir.join("telemetry.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    (dir, path)
}

fn audit_exit(path: &Path, extra: &[&str]) -> (i32, String) {
    audit_exit_in(&examples(), path, extra)
}

/// `audit -f PATH EXTRA…` run from `cwd`: the exit code and the output's words.
fn audit_exit_in(cwd: &Path, path: &Path, extra: &[&str]) -> (i32, String) {
    let out = locality()
        .current_dir(cwd)
        .arg("audit")
        .arg("-f")
        .arg(path)
        .args(extra)
        .output()
        .unwrap();
    // Words only: the table wraps at 80 columns.
    let text = String::from_utf8_lossy(&out.stdout);
    (
        out.status.code().unwrap_or(-1),
        text.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

#[test]
fn suppressed_findings_are_kept_marked_and_never_fail_the_run() {
    // LOC003 and LOC004 accepted on the Service; the two LOC001 errors stay open.
    let (_dir, path) = annotated_telemetry("suppress-service", Some("LOC003, LOC004"), None);
    let (code, table) = audit_exit(&path, &["--fail-on", "warning"]);
    assert_eq!(code, 3, "{table}");
    assert!(
        table.contains("2 findings (2 errors, 0 warnings, 0 info), 2 suppressed"),
        "{table}"
    );
    assert!(table.contains("SUPPRESSED (2)"), "{table}");
    assert!(
        table.contains("Service telemetry/otel-agent annotation locality.dev/ignore: node agent"),
        "{table}"
    );
    let (_, json) = audit_exit(&path, &["-o", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["totals"]["suppressed"], 2);
    assert_eq!(doc["totals"]["findings"], 2);
    let kinds: Vec<(&str, bool)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["suppression"].is_object()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("LOC001", false),
            ("LOC001", false),
            ("LOC003", true),
            ("LOC004", true)
        ]
    );
    // SARIF: every result is there; the suppressed ones say so, with the reason.
    let (_, sarif) = audit_exit(&path, &["-o", "sarif"]);
    let doc: Value = serde_json::from_str(&sarif).unwrap();
    assert_valid_sarif(&sarif_validator(), &doc, "suppressed SARIF");
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let suppressed: Vec<&Value> = results
        .iter()
        .filter_map(|r| r["suppressions"].as_array())
        .flatten()
        .collect();
    assert_eq!(suppressed.len(), 2, "{sarif}");
    for s in suppressed {
        assert_eq!(s["kind"], "inSource");
        assert!(
            s["justification"]
                .as_str()
                .unwrap()
                .starts_with("node agent; callers tolerate short outages"),
            "{s}"
        );
    }
    // The Namespace accepts every rule: nothing open, the run passes even --fail-on info.
    let (_dir, all) = annotated_telemetry("suppress-namespace", Some("LOC003,LOC004"), Some("*"));
    let (code, table) = audit_exit(&all, &["--fail-on", "info"]);
    assert_eq!(code, 0, "{table}");
    assert!(table.contains("No findings."), "{table}");
    assert!(
        table.contains("Namespace telemetry annotation locality.dev/ignore (no reason given)"),
        "{table}"
    );
}

#[test]
fn an_ignore_annotation_naming_no_rule_is_noted() {
    let (_dir, path) = annotated_telemetry("suppress-typo", Some("LOC04"), None);
    let (code, table) = audit_exit(&path, &[]);
    assert_eq!(code, 0, "{table}");
    assert!(table.contains("names no rule: LOC04"), "{table}");
    assert!(!table.contains("SUPPRESSED"), "{table}");
}

/// `.locality.yaml` found upward from the working directory: LOC003 accepted by annotation,
/// LOC004 by an exemption, LOC001's exemption expired (a date long past: the test never
/// rots); then LOC001 exempted until 9999-12-31.
#[test]
fn the_config_file_exempts_overrides_and_expires() {
    let (_dir, path) = annotated_telemetry("config-file", Some("LOC003"), None);
    let dir = path.parent().unwrap().to_path_buf();
    let sub = dir.join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let config = |loc001_expires: &str| {
        format!(
            "rules:\n  LOC003: {{severity: info}}\nexemptions:\n  - rules: [LOC004]\n    namespace: telemetry\n    name: otel-agent\n    reason: node agent; callers tolerate short outages\n  - rules: [LOC001]\n    selector: {{matchLabels: {{team: obs}}}}\n    reason: migration to PreferSameNode planned\n    expires: {loc001_expires}\n"
        )
    };
    std::fs::write(dir.join(".locality.yaml"), config("2001-01-01")).unwrap();
    let run = |extra: &[&str]| audit_exit_in(&sub, &path, extra);
    let (code, table) = run(&["--fail-on", "warning"]);
    assert_eq!(code, 3, "{table}");
    assert!(
        table.contains("2 findings (2 errors, 0 warnings, 0 info), 2 suppressed"),
        "{table}"
    );
    assert!(
        table.contains("expired on 2001-01-01: it no longer applies"),
        "{table}"
    );
    let (_, sarif) = run(&["-o", "sarif"]);
    let doc: Value = serde_json::from_str(&sarif).unwrap();
    assert_valid_sarif(&sarif_validator(), &doc, "config SARIF");
    let kinds: Vec<(String, String)> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let s = r["suppressions"].as_array()?.first()?;
            Some((r["ruleId"].as_str()?.to_string(), s["kind"].as_str()?.to_string()))
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("LOC004".to_string(), "external".to_string()),
            ("LOC003".to_string(), "inSource".to_string())
        ],
        "LOC003 is info now, listed after the warnings"
    );
    // The severity override applies to the suppressed LOC003 too.
    let (_, json) = run(&["-o", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let loc003 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "LOC003")
        .unwrap();
    assert_eq!(loc003["severity"], "info");
    // Exempt LOC001 too: nothing open.
    std::fs::write(dir.join(".locality.yaml"), config("9999-12-31")).unwrap();
    let (code, table) = run(&["--fail-on", "info"]);
    assert_eq!(code, 0, "{table}");
    assert!(table.contains("0 findings"), "{table}");
    let (code, shown) = run(&["--show-config"]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains(".locality.yaml") && shown.contains("9999-12-31"),
        "{shown}"
    );
    // A bad file names its line, exit 2.
    std::fs::write(dir.join(".locality.yaml"), "exemptions:\n  - rules: [LOC004]\n").unwrap();
    let out = Command::cargo_bin("locality")
        .unwrap()
        .current_dir(&sub)
        .args(["audit", "-f"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".locality.yaml:2:") && err.contains("reason is required"),
        "{err}"
    );
}

/// `-o junit`: open findings at or above `--fail-on` fail, suppressed ones are skipped with
/// the reason, Services without a finding pass.
#[test]
fn junit_fails_open_findings_and_skips_suppressed_ones() {
    let (_dir, path) = annotated_telemetry("junit", Some("LOC003,LOC004"), None);
    let (code, _) = audit_exit(&path, &["--fail-on", "warning"]);
    assert_eq!(code, 3);
    let out = locality()
        .args(["audit", "-o", "junit", "--fail-on", "warning", "-f"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let xml = String::from_utf8(out.stdout).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
    assert_eq!(xml.matches("<skipped").count(), 2, "{xml}");
    assert!(
        xml.contains("suppressed by Service telemetry/otel-agent annotation locality.dev/ignore: node agent"),
        "{xml}"
    );
    let services = audit_json(&["-f", "telemetry-30-nodes.json"])["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}/{}",
                s["service"]["namespace"].as_str().unwrap(),
                s["service"]["name"].as_str().unwrap()
            )
        })
        .collect::<std::collections::BTreeSet<_>>();
    // One case per finding, one per Service without a finding.
    let cases = 4 + services.len() - 1;
    assert!(xml.contains(&format!("tests=\"{cases}\"")), "{cases}: {xml}");
    // Below the threshold a finding is a passing case with its message kept.
    let out = locality()
        .args([
            "audit",
            "-o",
            "junit",
            "--fail-on",
            "error",
            "-f",
            "telemetry-30-nodes.json",
        ])
        .output()
        .unwrap();
    let xml = String::from_utf8(out.stdout).unwrap();
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
    assert!(xml.contains("<system-out>warning: "), "{xml}");
}
