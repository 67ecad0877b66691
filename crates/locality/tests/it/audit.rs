//! Drives the real `locality` binary: `audit` on the shipped examples (snapshot-tested
//! table, JSON, Markdown and SARIF), SARIF validated against the OASIS 2.1.0 schema, the
//! HTML page, exit codes, rule selection, manifest-only inputs and bad inputs.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The binary, run from `examples/` so that file names (and SARIF URIs) are relative.
fn locality() -> Command {
    let mut c = Command::cargo_bin("locality").expect("locality binary");
    // Reports carry the time: fix it (crate::clock) so that snapshots do not rot.
    c.env("SOURCE_DATE_EPOCH", "1767225600");
    c.env_remove("LOCALITY_PROFILE").current_dir(examples());
    c
}

fn audit_out(args: &[&str]) -> String {
    let out = locality()
        .arg("audit")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).expect("utf-8 output")
}

fn audit_json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    serde_json::from_str(&audit_out(&a)).expect("valid JSON")
}

fn rules_of(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

const EXAMPLES: [&str; 5] = [
    "three-zones.json",
    "telemetry-30-nodes.json",
    "two-replicas-local.json",
    "prefer-close.json",
    "auto-too-few-endpoints.json",
];

// ---------------------------------------------------------------- snapshots of the examples

#[test]
fn telemetry_table() {
    insta::assert_snapshot!("telemetry_table", audit_out(&["-f", "telemetry-30-nodes.json"]));
}

#[test]
fn telemetry_json() {
    let text = audit_out(&["-f", "telemetry-30-nodes.json", "-o", "json"]);
    insta::assert_snapshot!("telemetry_json", text);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["apiVersion"], "locality/v1");
    assert_eq!(doc["kind"], "AuditReport");
    assert_eq!(doc["nodeCount"], 30);
    assert_eq!(rules_of(&doc), ["LOC001", "LOC001", "LOC003", "LOC004"]);
    // The three tainted ingress workers are blind, each with its 2 client pods (the
    // gateway's; the node's kube-proxy pod is not a client).
    let blind = &doc["findings"][0];
    assert_eq!(blind["nodeCount"], 3);
    assert_eq!(blind["podCount"], 6);
    assert_eq!(
        blind["nodes"][0],
        serde_json::json!({"node": "ingress-1", "pods": 2})
    );
    // The per-Service summary comes with it.
    let agent = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"]["name"] == "otel-agent")
        .unwrap();
    assert_eq!(
        (agent["delivered"].as_u64(), agent["dropped"].as_u64()),
        (Some(27), Some(3))
    );
}

#[test]
fn telemetry_markdown() {
    insta::assert_snapshot!(
        "telemetry_markdown",
        audit_out(&["-f", "telemetry-30-nodes.json", "-o", "markdown"])
    );
}

#[test]
fn telemetry_sarif() {
    insta::assert_snapshot!(
        "telemetry_sarif",
        audit_out(&["-f", "telemetry-30-nodes.json", "-o", "sarif"])
    );
}

#[test]
fn example_tables() {
    for (name, file) in [
        ("three_zones_table", "three-zones.json"),
        ("two_replicas_table", "two-replicas-local.json"),
        ("prefer_close_table", "prefer-close.json"),
        ("auto_too_few_table", "auto-too-few-endpoints.json"),
    ] {
        insta::assert_snapshot!(name, audit_out(&["-f", file]));
    }
}

#[test]
fn examples_find_what_the_readme_says() {
    let expect: [(&str, &[&str]); 5] = [
        ("three-zones.json", &["LOC001", "LOC002"]),
        (
            "telemetry-30-nodes.json",
            &["LOC001", "LOC001", "LOC003", "LOC004"],
        ),
        ("two-replicas-local.json", &["LOC001", "LOC002"]),
        ("prefer-close.json", &["LOC005"]),
        ("auto-too-few-endpoints.json", &["LOC009"]),
    ];
    for (file, rules) in expect {
        assert_eq!(rules_of(&audit_json(&["-f", file])), rules, "{file}");
    }
}

// ---------------------------------------------------------------- table width

#[test]
fn table_fits_80_columns() {
    for file in EXAMPLES {
        let text = audit_out(&["-f", file]);
        for line in text.lines() {
            if line.chars().count() > 80 {
                // Only an unbreakable word (a documentation URL) may overflow.
                assert!(
                    !line.trim().contains(' ') && line.trim().starts_with("https://"),
                    "{file}: line longer than 80 columns: {line:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------- SARIF and its schema

// ---------------------------------------------------------------- HTML

// ---------------------------------------------------------------- exit codes and selection

#[test]
fn fail_on_sets_exit_code_3() {
    // Without --fail-on findings do not fail the run.
    locality()
        .args(["audit", "-f", "telemetry-30-nodes.json"])
        .assert()
        .code(0);
    locality()
        .args([
            "audit",
            "-f",
            "telemetry-30-nodes.json",
            "--fail-on",
            "error",
            "-o",
            "json",
        ])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("--fail-on error"));
    // prefer-close has one info finding only.
    for (level, code) in [("error", 0), ("warning", 0), ("info", 3)] {
        locality()
            .args(["audit", "-f", "prefer-close.json", "--fail-on", level])
            .assert()
            .code(code);
    }
    // --quiet silences the note, not the code.
    locality()
        .args(["audit", "-q", "-f", "prefer-close.json", "--fail-on", "info"])
        .assert()
        .code(3)
        .stderr(predicate::str::is_empty());
    locality()
        .args(["audit", "-f", "prefer-close.json", "--fail-on", "fatal"])
        .assert()
        .code(2);
}

#[test]
fn rule_and_skip_rule_select_rules() {
    let doc = audit_json(&["-f", "telemetry-30-nodes.json", "--rule", "LOC003"]);
    assert_eq!(rules_of(&doc), ["LOC003"]);
    assert_eq!(doc["rules"], serde_json::json!(["LOC003"]));
    let doc = audit_json(&["-f", "telemetry-30-nodes.json", "--rule", "loc001,LOC004"]);
    assert_eq!(rules_of(&doc), ["LOC001", "LOC001", "LOC004"]);
    let doc = audit_json(&[
        "-f",
        "telemetry-30-nodes.json",
        "--skip-rule",
        "LOC001",
        "--skip-rule",
        "LOC004",
    ]);
    assert_eq!(rules_of(&doc), ["LOC003"]);
    assert_eq!(doc["rules"].as_array().unwrap().len(), 19);
    // --fail-on sees only the selected rules.
    locality()
        .args([
            "audit",
            "-f",
            "telemetry-30-nodes.json",
            "--rule",
            "LOC004",
            "--fail-on",
            "error",
        ])
        .assert()
        .code(0);
}

#[test]
fn unknown_rule_is_a_usage_error_with_suggestions() {
    locality()
        .args(["audit", "-f", "three-zones.json", "--rule", "LOC0O1"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("unknown audit rule \"LOC0O1\"")
                .and(predicate::str::contains("did you mean LOC001")),
        );
    locality()
        .args(["audit", "-f", "three-zones.json", "--skip-rule", "LOC022"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--skip-rule").and(predicate::str::contains("did you mean")));
    // Checked before reading the input.
    locality()
        .args(["audit", "-f", "does-not-exist.json", "--rule", "LOC999"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--rule"));
}

#[test]
fn namespace_restricts_the_report() {
    let doc = audit_json(&["-f", "telemetry-30-nodes.json", "-n", "telemetry"]);
    assert_eq!(doc["totals"]["findings"], 4);
    assert!(
        doc["services"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["service"]["namespace"] == "telemetry")
    );
    locality()
        .args(["audit", "-f", "telemetry-30-nodes.json", "-n", "telemetri"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean telemetry"));
}

#[test]
fn no_false_positive_on_cluster_policy_with_ready_endpoints_everywhere() {
    // catalog-api: internalTrafficPolicy Cluster, a ready endpoint on each of the 6 nodes.
    let doc = audit_json(&["-f", "prefer-close.json"]);
    assert!(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["service"]["name"] != "catalog-api"),
        "{doc}"
    );
    let api = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"]["name"] == "catalog-api")
        .unwrap();
    assert_eq!(api["delivered"], 6);
    assert_eq!(api["findings"], 0);
    // A namespace with only such Services passes even --fail-on info.
    locality()
        .args([
            "audit",
            "-f",
            "telemetry-30-nodes.json",
            "-n",
            "shop",
            "--fail-on",
            "info",
        ])
        .assert()
        .code(0);
}

// ---------------------------------------------------------------- manifests only

#[test]
fn manifests_without_nodes_skip_rules_with_a_note() {
    let chart = data("rendered-chart.yaml");
    let chart = chart.to_str().unwrap();
    let doc = audit_json(&["-f", chart]);
    assert_eq!(doc["findings"], serde_json::json!([]));
    let skipped: Vec<&str> = doc["skippedRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["rule"].as_str().unwrap())
        .collect();
    assert!(
        skipped.contains(&"LOC001") && skipped.contains(&"LOC003"),
        "{skipped:?}"
    );
    let table = audit_out(&["-f", chart]);
    assert!(table.contains("SKIPPED RULES"));
    assert!(table.contains("--nodes N and --zones a,b,c"));

    // With the target cluster's shape the 2-replica ITP Local Deployment is found.
    let doc = audit_json(&["-f", chart, "--nodes", "3", "--zones", "a,b,c"]);
    assert_eq!(
        doc["assumedShape"],
        serde_json::json!({"nodes": 3, "zones": ["a", "b", "c"]})
    );
    assert_eq!(rules_of(&doc), ["LOC001", "LOC002"]);
    assert_eq!(doc["findings"][0]["service"]["name"], "ratings");
    locality()
        .args(["audit", "-f", chart, "--nodes", "0"])
        .assert()
        .code(2);
}

// ---------------------------------------------------------------- other outputs

#[test]
fn yaml_is_the_json_document() {
    let yaml = audit_out(&["-f", "three-zones.json", "-o", "yaml"]);
    let from_yaml: Value = serde_saphyr::from_str(&yaml).expect("valid YAML");
    assert_eq!(from_yaml, audit_json(&["-f", "three-zones.json"]));
}

#[test]
fn json_does_not_depend_on_input_order() {
    fn strip_origins(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("origin");
                // The header names the input (stdin here, the file there).
                m.remove("header");
                m.values_mut().for_each(strip_origins);
            }
            Value::Array(a) => a.iter_mut().for_each(strip_origins),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(examples().join("telemetry-30-nodes.json")).unwrap();
    let mut list: Value = serde_json::from_str(&text).unwrap();
    list["items"].as_array_mut().unwrap().reverse();
    let out = locality()
        .args(["audit", "-f", "-", "-o", "json"])
        .write_stdin(serde_json::to_string(&list).unwrap())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut reversed: Value = serde_json::from_slice(&out).unwrap();
    let mut forward = audit_json(&["-f", "telemetry-30-nodes.json"]);
    strip_origins(&mut reversed);
    strip_origins(&mut forward);
    assert_eq!(reversed, forward);
}

// ---------------------------------------------------------------- bad inputs

// ---------------------------------------------------------------- report headers

#[path = "report/header.rs"]
mod header;

#[path = "report/color.rs"]
mod color;
mod explain_cause;
mod grouped;
mod html;
mod missing_kinds;
mod rules_list;
mod sarif;
mod suppressions;
