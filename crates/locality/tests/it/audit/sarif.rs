//! `audit -o sarif`: valid against the OASIS SARIF 2.1.0 schema, rules, levels and locations.

use super::{EXAMPLES, audit_out, data, examples, locality};
use serde_json::Value;

/// The OASIS SARIF 2.1.0 schema (tests/data, byte for byte as published; copied from the
/// `serde-sarif` crate's sources).
pub(super) fn sarif_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(data("sarif-schema-2.1.0.json")).unwrap();
    // The published schema's `run.language` pattern has a stray `]` that ECMA-262 (Annex B)
    // reads as a literal and Rust regex engines refuse; escape it, meaning unchanged.
    let stray = r#"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$"#;
    assert!(text.contains(stray), "the schema file changed");
    let text = text.replace(stray, r#"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$"#);
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft7::new(&schema).expect("the SARIF schema compiles")
}

pub(super) fn assert_valid_sarif(validator: &jsonschema::Validator, doc: &Value, what: &str) {
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
