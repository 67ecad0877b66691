//! `locality simulate --rollout daemonset/…` of a DaemonSet with `minReadySeconds`, through
//! the real binary: the dump's Ready pods count as available from the start (the seeded
//! cluster warms up past `minReadySeconds`), and the rolling update (`maxSurge: 0`,
//! `maxUnavailable: 1`) replaces one node's pod at a time, the next only once the previous
//! replacement has been Ready for `minReadySeconds`.

use std::path::{Path, PathBuf};

use locality_testkit::files::TempDir;
use serde_json::{Value, json};

use crate::simulate::run;

const WORKERS: [&str; 3] = ["worker-1", "worker-2", "worker-3"];
const DS_UID: &str = "7a1e2b3c-0000-4000-8000-000000000002";

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "agent"}},
        "spec": {"containers": [{"name": "agent", "image": "agent:1",
            "ports": [{"name": "http", "containerPort": 8080}],
            "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}]}})
}

/// Three workers; the DaemonSet `mon/agent` (`minReadySeconds: 60`) with its pod on every
/// worker behind the ITP Local Service `mon/agent`; a client pod on every worker.
fn dump(dir: &Path) -> PathBuf {
    let mut items = vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mon"}})];
    for (i, w) in WORKERS.iter().enumerate() {
        items.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": w, "labels": {"kubernetes.io/hostname": w,
                "topology.kubernetes.io/zone": format!("zone-{i}")}},
            "spec": {},
            "status": {"addresses": [{"type": "InternalIP", "address": format!("10.0.0.{}", i + 10)}],
                "conditions": [{"type": "Ready", "status": "True"}]}}));
    }
    items.push(json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "mon", "uid": DS_UID},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template(),
            "minReadySeconds": 60,
            "updateStrategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}}}));
    items.push(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "agent", "namespace": "mon"},
        "spec": {"selector": {"app": "agent"}, "internalTrafficPolicy": "Local",
            "clusterIP": "10.96.0.60", "clusterIPs": ["10.96.0.60"],
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}}));
    for (i, w) in WORKERS.iter().enumerate() {
        let mut spec = template()["spec"].clone();
        spec["nodeName"] = json!(w);
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("agent-{i}"), "namespace": "mon",
                "labels": {"app": "agent", "controller-revision-hash": "5c7d9f"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                    "uid": DS_UID, "controller": true}]},
            "spec": spec,
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("client-{i}"), "namespace": "mon", "labels": {"app": "client"}},
            "spec": {"nodeName": w, "containers": [{"name": "c", "image": "curl"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
    }
    let path = dir.join("dump.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&path, serde_json::to_vec(&list).unwrap()).unwrap();
    path
}

#[test]
fn a_daemon_set_with_min_ready_seconds_is_rolled_one_node_at_a_time() {
    let tmp = TempDir::new("simulate-min-ready");
    let dump = dump(tmp.path());
    let out = run(&[
        "simulate",
        "-f",
        dump.to_str().unwrap(),
        "--rollout",
        "daemonset/mon/agent",
        "-o",
        "json",
        "-q",
    ])
    .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true, "{alt}");
    let port = &alt["servicePorts"][0];
    // One drop window per worker (its pod replaced), opening minReadySeconds apart.
    let mut starts: Vec<f64> = port["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["windows"].as_array().unwrap().iter())
        .map(|w| w["startSeconds"].as_f64().unwrap())
        .collect();
    starts.sort_by(f64::total_cmp);
    assert_eq!(starts.len(), 3, "{port}");
    assert!(
        starts.windows(2).all(|w| w[1] - w[0] >= 60.0),
        "windows open at {starts:?} s: {port}"
    );
}
