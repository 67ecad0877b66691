//! `simulate`'s totals count what one process sees once: an agent that serves two ports of
//! one `internalTrafficPolicy: Local` Service, blind on both at once during its rollout, is one
//! blind node for that time and its clients one set of pods, as with a single port.

use locality_testkit::files::TempDir;
use serde_json::Value;

use super::simulate::{root, run};

/// `examples/telemetry-incident.json` with a second port on the agent (Service, DaemonSet
/// template and pods).
fn with_two_ports(dir: &TempDir) -> std::path::PathBuf {
    let text = std::fs::read_to_string(root().join("examples/telemetry-incident.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let second = serde_json::json!({"name": "otlp-http", "containerPort": 4318, "protocol": "TCP"});
    for item in doc["items"].as_array_mut().unwrap() {
        let agent = item["metadata"]["name"] == "node-agent"
            || item["metadata"]["ownerReferences"][0]["name"] == "node-agent";
        match item["kind"].as_str().unwrap() {
            "Service" if item["metadata"]["name"] == "node-agent" => {
                item["spec"]["ports"]
                    .as_array_mut()
                    .unwrap()
                    .push(serde_json::json!(
                        {"name": "otlp-http", "port": 4318, "protocol": "TCP", "targetPort": "otlp-http"}
                    ));
            }
            "DaemonSet" if agent => {
                item["spec"]["template"]["spec"]["containers"][0]["ports"]
                    .as_array_mut()
                    .unwrap()
                    .push(second.clone());
            }
            "Pod" if agent => {
                item["spec"]["containers"][0]["ports"]
                    .as_array_mut()
                    .unwrap()
                    .push(second.clone());
            }
            _ => {}
        }
    }
    let path = dir.join("two-ports.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

fn totals(file: &str) -> (Value, usize) {
    let out = run(&[
        "simulate",
        "-f",
        file,
        "--rollout",
        "ds/monitoring/node-agent",
        "-o",
        "json",
        "-q",
    ])
    .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let a = &doc["alternatives"][0];
    (a["totals"].clone(), a["servicePorts"].as_array().unwrap().len())
}

#[test]
fn two_ports_of_one_agent_are_counted_once() {
    let dir = TempDir::new("simulate-two-ports");
    let two = with_two_ports(&dir);
    let (one_port, n1) = totals("examples/telemetry-incident.json");
    let (two_ports, n2) = totals(two.to_str().unwrap());
    assert_eq!((n1, n2), (1, 2), "the second port is in scope");
    assert!(one_port["affectedClientPods"].as_u64().unwrap() > 0, "{one_port}");
    for key in [
        "affectedClientPods",
        "blindNodeSeconds",
        "nodesWithDropWindows",
        "worstNode",
        "longestWindowSeconds",
    ] {
        assert_eq!(
            two_ports[key], one_port[key],
            "{key}: {two_ports} against {one_port}"
        );
    }
}
