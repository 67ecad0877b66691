//! Drives the real `locality` binary: `audit` on the shipped examples (snapshot-tested
//! table, JSON, Markdown and SARIF), SARIF validated against the OASIS 2.1.0 schema, the
//! HTML page, exit codes, rule selection, manifest-only inputs and bad inputs.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use locality_testkit::files::TempDir;
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

/// The OASIS SARIF 2.1.0 schema (tests/data, byte for byte as published; copied from the
/// `serde-sarif` crate's sources).
fn sarif_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(data("sarif-schema-2.1.0.json")).unwrap();
    // The published schema's `run.language` pattern has a stray `]` that ECMA-262 (Annex B)
    // reads as a literal and Rust regex engines refuse; escape it, meaning unchanged.
    let stray = r#"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$"#;
    assert!(text.contains(stray), "the schema file changed");
    let text = text.replace(stray, r#"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$"#);
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft7::new(&schema).expect("the SARIF schema compiles")
}

fn assert_valid_sarif(validator: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: SARIF schema violations:\n{}",
        errors.join("\n")
    );
}

#[test]
fn sarif_validates_against_the_2_1_0_schema() {
    let validator = sarif_validator();
    // The schema is the real one: a broken log is rejected.
    let broken = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {}}]});
    assert!(!validator.is_valid(&broken));
    for file in EXAMPLES {
        let doc: Value = serde_json::from_str(&audit_out(&["-f", file, "-o", "sarif"])).unwrap();
        assert_valid_sarif(&validator, &doc, file);
    }
    let chart = data("rendered-chart.yaml");
    let chart = chart.to_str().unwrap();
    for extra in [&[][..], &["--nodes", "3", "--zones", "a,b,c"][..]] {
        let mut args = vec!["-f", chart, "-o", "sarif"];
        args.extend_from_slice(extra);
        let doc: Value = serde_json::from_str(&audit_out(&args)).unwrap();
        assert_valid_sarif(&validator, &doc, "rendered chart");
    }
}

#[test]
fn sarif_rules_levels_and_locations() {
    let doc: Value =
        serde_json::from_str(&audit_out(&["-f", "telemetry-30-nodes.json", "-o", "sarif"])).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let run = &doc["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 21, "one rule per LOC id");
    assert_eq!(rules[0]["id"], "LOC001");
    assert_eq!(
        rules[0]["helpUri"],
        "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/"
    );
    assert_eq!(rules[4]["defaultConfiguration"]["level"], "note");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let levels: Vec<&str> = results.iter().map(|r| r["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["error", "error", "warning", "warning"]);
    // File input: a physical location at the Service object's line, and the logical name.
    let loc = &results[0]["locations"][0];
    assert_eq!(
        loc["physicalLocation"]["artifactLocation"]["uri"],
        "telemetry-30-nodes.json"
    );
    let line = loc["physicalLocation"]["region"]["startLine"].as_u64().unwrap() as usize;
    let text = std::fs::read_to_string(examples().join("telemetry-30-nodes.json")).unwrap();
    let object: String = text
        .lines()
        .skip(line - 1)
        .take(40)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(object.contains("\"kind\": \"Service\""), "{object}");
    assert!(object.contains("\"name\": \"otel-agent\""), "{object}");
    assert_eq!(
        loc["logicalLocations"][0]["fullyQualifiedName"],
        "telemetry/Service/otel-agent"
    );
    assert_eq!(results[0]["ruleIndex"], 0);
}

#[test]
fn sarif_from_stdin_gives_logical_locations_only() {
    let text = std::fs::read_to_string(examples().join("two-replicas-local.json")).unwrap();
    let out = locality()
        .args(["audit", "-f", "-", "-o", "sarif"])
        .write_stdin(text)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_valid_sarif(&sarif_validator(), &doc, "stdin");
    let loc = &doc["runs"][0]["results"][0]["locations"][0];
    assert!(loc.get("physicalLocation").is_none(), "{loc}");
    assert_eq!(
        loc["logicalLocations"][0]["fullyQualifiedName"],
        "payments/Service/fraud-score"
    );
}

// ---------------------------------------------------------------- HTML

fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    for bad in ["<link", "<iframe", "<img", "@import", "url("] {
        assert!(!html.contains(bad), "external resource: {bad}");
    }
    assert!(!html.contains(" src="), "no src attributes");
    // The only network references are documentation links in <a href>.
    let refs = html
        .match_indices("http://")
        .chain(html.match_indices("https://"));
    for (i, _) in refs {
        let before = &html[i.saturating_sub(9)..i];
        let url: String = html[i..].chars().take_while(|c| *c != '"' && *c != '<').collect();
        assert!(
            before.ends_with("<a href=\"") && url.starts_with("https://kubernetes.io/docs/"),
            "reference outside a docs link: {url} (after {before:?})"
        );
    }
}

#[test]
fn html_is_one_self_contained_page_with_the_grid() {
    let tmp = TempDir::new("audit-html");
    let dir = tmp.path().to_path_buf();
    let page = dir.join("audit.html");
    let out = locality()
        .args([
            "audit",
            "-f",
            "telemetry-30-nodes.json",
            "-o",
            "html",
            "--output-file",
        ])
        .arg(&page)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(out.is_empty(), "the page goes to --output-file, not stdout");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    // Zones as column groups, one square per node with its verdict, the blind nodes named.
    for zone in ["eu-west-1a", "eu-west-1b", "eu-west-1c"] {
        assert!(html.contains(zone), "{zone}");
    }
    // Each square names its node's zone, roles and client pods (kube-proxy's pod is not one).
    assert!(
        html.contains("title=\"ingress-1 (zone eu-west-1a, roles &lt;none&gt;, 2 client pods): dropped\"")
    );
    assert!(
        html.contains("title=\"worker-01 (zone eu-west-1a, roles &lt;none&gt;, 3 client pods): delivered\"")
    );
    assert!(html.contains("blind on 3: ingress-1, ingress-2, ingress-3"));
    assert_eq!(html.matches("class=\"finding ").count(), 4);
}

#[test]
fn html_without_nodes_says_the_grid_is_unavailable() {
    let chart = data("rendered-chart.yaml");
    let html = audit_out(&[
        "-f",
        chart.to_str().unwrap(),
        "-o",
        "html",
        "--nodes",
        "3",
        "--zones",
        "a,b,c",
    ]);
    assert_self_contained(&html);
    assert!(html.contains("assumed cluster shape"));
}

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

// ---------------------------------------------------------------- report headers

#[path = "report/header.rs"]
mod header;

#[path = "report/color.rs"]
mod color;
