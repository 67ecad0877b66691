//! A dump that lacks a kind the rules read (`kubectl get nodes,pods,services,endpointslices`,
//! no DaemonSets or ReplicaSets): `audit` names the rules that could not run and the kind,
//! does not count them as run, and does not advise running as a DaemonSet pods that belong
//! to one. Every doc gives the one dump command that has every kind.

use super::{examples, locality};
use locality_testkit::files::TempDir;
use serde_json::Value;

/// `examples/telemetry-30-nodes.json` (its agent a DaemonSet) dumped without workloads.
fn without_workloads(dir: &TempDir) -> std::path::PathBuf {
    let text = std::fs::read_to_string(examples().join("telemetry-30-nodes.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["items"]
        .as_array_mut()
        .unwrap()
        .retain(|i| ["Node", "Pod", "Service", "EndpointSlice"].contains(&i["kind"].as_str().unwrap()));
    let path = dir.join("no-workloads.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

#[test]
fn rules_that_need_a_missing_kind_say_so_and_are_not_counted_as_run() {
    let dir = TempDir::new("missing-kinds");
    let dump = without_workloads(&dir);
    let out = locality()
        .args(["audit", "-o", "json", "-f"])
        .arg(&dump)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped: Vec<(&str, &str)> = doc["skippedRules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["rule"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    let ids: Vec<&str> = skipped.iter().map(|s| s.0).collect();
    assert_eq!(ids, ["LOC002", "LOC003", "LOC004"]);
    for (rule, reason) in &skipped {
        let kind = if *rule == "LOC002" {
            "ReplicaSet"
        } else {
            "DaemonSet"
        };
        assert!(
            reason.starts_with(&format!("the input has no {kind}s, yet ")),
            "{rule}: {reason}"
        );
        assert!(
            reason.contains(&format!("add {}s to the dump", kind.to_lowercase())),
            "{reason}"
        );
    }
    let run: Vec<&str> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    for id in &ids {
        assert!(!run.contains(id), "{id} did not run");
    }
    // The agent's pods name their DaemonSet: no advice to run them as one.
    for f in doc["findings"].as_array().unwrap() {
        let fix = f["fix"].as_str().unwrap_or("");
        assert!(!fix.contains("run the backend as a DaemonSet"), "{fix}");
        if f["rule"] == "LOC001" {
            assert!(
                fix.starts_with("let DaemonSet otel-agent run on every client node"),
                "{fix}"
            );
        }
    }

    // The table and stderr say it too.
    let out = locality().args(["audit", "-f"]).arg(&dump).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("SKIPPED RULES"), "{table}");
    assert!(
        table.contains(&format!("{} rules run, 3 skipped.", run.len())),
        "{table}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: LOC003 could not run: the input has no DaemonSets"),
        "{stderr}"
    );

    // With every kind, every rule runs.
    let out = locality()
        .args(["audit", "-o", "json", "-f", "telemetry-30-nodes.json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["skippedRules"].as_array().map(Vec::len), Some(0));
}

/// Every dump command in the README and docs is the one command (`DUMP_COMMAND`), which
/// lists every kind audit reads.
#[test]
fn one_dump_command_everywhere() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let one = locality_model::objects::DUMP_COMMAND;
    let mut files = vec![root.join("README.md"), root.join("examples/README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            files.push(e.path());
        }
    }
    let mut seen = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines().map(str::trim) {
            if line.starts_with("kubectl get ") && line.contains("-o json") && line.contains('>') {
                seen += 1;
                assert_eq!(line, one, "{}: one dump command everywhere", f.display());
            }
        }
    }
    assert!(seen >= 3, "the dump commands were not found ({seen})");
    for kind in ["daemonsets", "replicasets", "deployments", "statefulsets"] {
        assert!(one.contains(kind), "{kind}");
    }
}
