//! One root cause, one line: audit's human output opens with one line per blind Service and
//! cause (blind node count of the client nodes, the cause, the fix; the clients there by
//! owner, the CNI's own pods not among them), before the findings it stands for.

use super::{audit_out, examples, locality};
use locality_testkit::files::TempDir;
use serde_json::Value;

/// The BLIND SERVICES section of a table.
fn grouped(table: &str) -> String {
    let start = table.find("BLIND SERVICES").expect("the grouped section");
    let end = table[start..].find("\nERRORS").map_or(table.len(), |e| start + e);
    table[start..end].trim_end().to_string()
}

#[test]
fn one_line_per_service_and_cause() {
    let table = audit_out(&["-f", "telemetry-30-nodes.json"]);
    let section = grouped(&table);
    insta::assert_snapshot!("grouped_telemetry", section);
    // LOC001 on two ports and LOC003: one line, the blind nodes named once.
    assert_eq!(
        section
            .matches("telemetry/otel-agent ITP=Local blind on 3/30 nodes")
            .count(),
        1
    );
    assert_eq!(section.matches("ingress-1").count(), 1, "{section}");
    assert!(section.contains("findings: LOC001 ×2, LOC003"), "{section}");
    assert!(
        section.contains("clients there: Deployment edge/gateway (6 pods)"),
        "{section}"
    );
}

/// A CNI agent's pod (calico-node) on a blind node is not a client of the Service.
#[test]
fn the_cnis_own_pods_are_not_clients() {
    let text = std::fs::read_to_string(examples().join("telemetry-30-nodes.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let items = doc["items"].as_array_mut().unwrap();
    let mut calico = items
        .iter()
        .find(|i| i["kind"] == "Pod" && i["metadata"]["name"].as_str().unwrap().starts_with("kube-proxy"))
        .cloned()
        .unwrap();
    calico["metadata"]["name"] = "calico-node-x1".into();
    calico["metadata"]["uid"] = "uid-calico-node-x1".into();
    calico["metadata"]["labels"] = serde_json::json!({"k8s-app": "calico-node"});
    calico["metadata"]["ownerReferences"] = serde_json::json!([{
        "apiVersion": "apps/v1", "kind": "DaemonSet", "name": "calico-node",
        "uid": "uid-calico-node", "controller": true
    }]);
    calico["spec"]["nodeName"] = "ingress-1".into();
    items.push(calico);
    let dir = TempDir::new("cni-pods");
    let dump = dir.join("with-calico.json");
    std::fs::write(&dump, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = locality().args(["audit", "-f"]).arg(&dump).output().unwrap();
    let section = grouped(&String::from_utf8_lossy(&out.stdout));
    assert!(
        section.contains("clients there: Deployment edge/gateway (6 pods)"),
        "{section}"
    );
    assert!(!section.contains("calico"), "{section}");
}

/// An assumption warning ends with the flag that states what was assumed.
#[test]
fn assumption_warnings_end_with_the_flag() {
    let out = locality()
        .args(["audit", "-f", "telemetry-30-nodes.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let assuming: Vec<&str> = stderr.lines().filter(|l| l.contains("assuming")).collect();
    assert!(!assuming.is_empty(), "{stderr}");
    for l in assuming {
        assert!(
            l.ends_with("to state it: --kube-version (and --kube-proxy-version)"),
            "{l}"
        );
    }
}
