//! `locality simulate --apply FILE` through the real binary: a manifest replacing the
//! telemetry incident's agent DaemonSet with a new image is a rollout, and its strategy decides
//! the drop windows (`maxSurge: 0` opens them on the gateway workers, `maxSurge: 1` with a
//! preStop delay longer than a kube-proxy sync opens none); a Service manifest changes the
//! Service without rolling anything; a malformed manifest exits 2 naming its file and line.

use std::path::{Path, PathBuf};

use locality_testkit::files::TempDir;
use serde_json::Value;

use crate::simulate::{root, run};

const DUMP: &str = "examples/telemetry-incident.json";

const PRE_STOP: &str = r#"{"preStop": {"sleep": {"seconds": 5}}}"#;

/// The telemetry incident's dump with a 5 s preStop sleep on the agent (its DaemonSet and
/// its pods): an old agent pod keeps serving for longer than a kube-proxy sync after its
/// deletion, so with a surge only the strategy decides the windows.
fn dump_with_pre_stop(dir: &Path) -> PathBuf {
    let mut dump: Value = serde_json::from_str(&std::fs::read_to_string(root().join(DUMP)).unwrap()).unwrap();
    let pre_stop: Value = serde_json::from_str(PRE_STOP).unwrap();
    for o in dump["items"].as_array_mut().unwrap() {
        let agent = o["metadata"]["namespace"] == "monitoring"
            && ((o["kind"] == "DaemonSet" && o["metadata"]["name"] == "node-agent")
                || (o["kind"] == "Pod" && o["metadata"]["ownerReferences"][0]["name"] == "node-agent"));
        if !agent {
            continue;
        }
        let spec = if o["kind"] == "Pod" {
            &mut o["spec"]
        } else {
            &mut o["spec"]["template"]["spec"]
        };
        spec["containers"][0]["lifecycle"] = pre_stop.clone();
    }
    let path = dir.join("dump.json");
    std::fs::write(&path, serde_json::to_vec(&dump).unwrap()).unwrap();
    path
}

/// The dump's agent DaemonSet with a new image, the 5 s preStop sleep and the given
/// strategy, as a manifest (what `kubectl apply -f` would send: no status, no uid).
fn agent_manifest(dir: &Path, max_surge: u32, max_unavailable: u32) -> PathBuf {
    let dump: Value = serde_json::from_str(&std::fs::read_to_string(root().join(DUMP)).unwrap()).unwrap();
    let mut ds = dump["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "DaemonSet" && o["metadata"]["name"] == "node-agent")
        .unwrap()
        .clone();
    ds["metadata"] = serde_json::json!({"name": "node-agent", "namespace": "monitoring"});
    ds.as_object_mut().unwrap().remove("status");
    let c = &mut ds["spec"]["template"]["spec"]["containers"][0];
    c["image"] = "ghcr.io/example/node-agent:2.8.0".into();
    c["lifecycle"] = serde_json::from_str(PRE_STOP).unwrap();
    ds["spec"]["updateStrategy"]["rollingUpdate"] =
        serde_json::json!({"maxSurge": max_surge, "maxUnavailable": max_unavailable});
    let path = dir.join(format!("agent-{max_surge}.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&ds).unwrap()).unwrap();
    path
}

fn simulate_apply(dump: &str, manifest: &Path) -> Value {
    let out = run(&[
        "simulate",
        "-f",
        dump,
        "--apply",
        manifest.to_str().unwrap(),
        "-o",
        "json",
        "-q",
    ])
    .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn windowed(alt: &Value) -> usize {
    alt["servicePorts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["nodes"].as_array().unwrap())
        .filter(|n| !n["windows"].as_array().unwrap().is_empty())
        .count()
}

#[test]
fn an_applied_daemon_set_with_a_new_image_rolls_and_its_surge_removes_the_windows() {
    let tmp = TempDir::new("simulate-apply");
    let dump = dump_with_pre_stop(tmp.path());
    let dump = dump.to_str().unwrap();
    let doc = simulate_apply(dump, &agent_manifest(tmp.path(), 0, 1));
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true, "{alt}");
    assert_eq!(alt["changes"][0]["type"], "apply", "{alt}");
    assert_eq!(alt["outcome"], "dropWindows", "{alt}");
    assert!(windowed(alt) >= 12, "every gateway worker: {alt}");

    let doc = simulate_apply(dump, &agent_manifest(tmp.path(), 1, 0));
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true, "{alt}");
    assert_eq!(windowed(alt), 0, "{alt}");
    assert!(
        alt["durationSeconds"].as_f64().unwrap() > 30.0,
        "the rollout ran: {alt}"
    );
}

#[test]
fn an_applied_service_changes_its_policy_without_a_rollout() {
    let tmp = TempDir::new("simulate-apply-svc");
    let dump: Value = serde_json::from_str(&std::fs::read_to_string(root().join(DUMP)).unwrap()).unwrap();
    let svc = dump["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Service" && o["metadata"]["name"] == "node-agent")
        .unwrap()
        .clone();
    let mut svc = svc;
    svc["spec"]["internalTrafficPolicy"] = "Cluster".into();
    svc["spec"].as_object_mut().unwrap().remove("clusterIP");
    svc["spec"].as_object_mut().unwrap().remove("clusterIPs");
    let path = tmp.path().join("svc.json");
    std::fs::write(&path, serde_json::to_vec(&svc).unwrap()).unwrap();
    let doc = simulate_apply(DUMP, &path);
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true, "{alt}");
    // ITP Cluster: the control-plane nodes, blind before, are served now.
    assert_eq!(alt["outcome"], "changedWithoutDrops", "{alt}");
}

#[test]
fn a_malformed_apply_file_exits_2_naming_file_and_line() {
    let tmp = TempDir::new("simulate-apply-bad");
    let path = tmp.path().join("bad.yaml");
    std::fs::write(
        &path,
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: node-agent\n  namespace: monitoring\nspec:\n  updateStrategy: [unclosed\n",
    )
    .unwrap();
    let out = run(&["simulate", "-f", DUMP, "--apply", path.to_str().unwrap(), "-q"]).code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("bad.yaml:"), "{err}");
    let at = err.split("bad.yaml:").nth(1).unwrap();
    let line: String = at.chars().take_while(char::is_ascii_digit).collect();
    assert!(["7", "8"].contains(&line.as_str()), "{err}");
}
