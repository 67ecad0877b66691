//! `locality simulate --rollout statefulset/NS/NAME` on a dump, through the real binary: the
//! StatefulSet's pods are seeded as its own (ordinal names on the dump's nodes) and replaced
//! one at a time without a surge, so an `internalTrafficPolicy: Local` Service backed by them
//! is blind on each of their nodes while its pod is replaced; `--max-surge` is refused as the
//! API server refuses it, and `--max-unavailable` validated as it validates it.

use std::path::{Path, PathBuf};

use locality_testkit::files::TempDir;
use serde_json::{Value, json};

use crate::simulate::{run, windowed_nodes};

const WORKERS: [&str; 3] = ["worker-1", "worker-2", "worker-3"];
const STS_UID: &str = "5d2f4c1e-0000-4000-8000-000000000001";

fn node(name: &str, zone: &str, ip: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": format!("uid-{name}"),
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
        "spec": {},
        "status": {"addresses": [{"type": "InternalIP", "address": ip}],
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "db"}},
        "spec": {"containers": [{"name": "db", "image": "postgres:17",
            "ports": [{"name": "pg", "containerPort": 5432}],
            "readinessProbe": {"tcpSocket": {"port": 5432}, "periodSeconds": 2}}]}})
}

/// Three workers; the StatefulSet `store/db` (one pod per worker) behind the ITP Local
/// Service `store/db`; a client pod on every worker.
fn dump(dir: &Path) -> PathBuf {
    let mut items = Vec::new();
    for (i, w) in WORKERS.iter().enumerate() {
        items.push(node(w, &format!("zone-{i}"), &format!("10.0.0.{}", i + 10)));
    }
    items.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "store"}}));
    items.push(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "store", "uid": STS_UID},
        "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": template(),
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}}}));
    items.push(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "db", "namespace": "store"},
        "spec": {"selector": {"app": "db"}, "internalTrafficPolicy": "Local",
            "clusterIP": "10.96.0.50", "clusterIPs": ["10.96.0.50"],
            "ports": [{"name": "pg", "port": 5432, "targetPort": "pg", "protocol": "TCP"}]}}));
    for (i, w) in WORKERS.iter().enumerate() {
        let mut spec = template()["spec"].clone();
        spec["nodeName"] = json!(w);
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("db-{i}"), "namespace": "store", "uid": format!("uid-db-{i}"),
                "labels": {"app": "db", "controller-revision-hash": "db-7d9f8b6c5"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                    "uid": STS_UID, "controller": true}]},
            "spec": spec,
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("client-{i}"), "namespace": "store", "labels": {"app": "client"}},
            "spec": {"nodeName": w, "containers": [{"name": "c", "image": "curl"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
    }
    let path = dir.join("dump.json");
    std::fs::write(
        &path,
        serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap(),
    )
    .unwrap();
    path
}

#[test]
fn a_stateful_set_rollout_opens_a_window_on_each_of_its_pods_nodes() {
    let tmp = TempDir::new("simulate-sts");
    let dump = dump(tmp.path());
    let dump = dump.to_str().unwrap();
    let out = run(&[
        "simulate",
        "-f",
        dump,
        "--rollout",
        "statefulset/store/db",
        "-o",
        "json",
        "-q",
    ])
    .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true, "{alt}");
    assert_eq!(alt["outcome"], "dropWindows", "{alt}");
    let change = &alt["changes"][0];
    assert_eq!(change["target"], "StatefulSet store/db");
    assert!(change.get("maxSurge").is_none_or(Value::is_null), "{change}");
    assert_eq!(change["maxUnavailable"], "1");
    assert!(
        change["description"].as_str().unwrap().contains("no surge"),
        "{change}"
    );
    let port = &alt["servicePorts"][0];
    assert_eq!(port["service"], "store/db");
    // Every worker held one of the pods, and each pod is deleted before its replacement exists.
    assert_eq!(windowed_nodes(port), WORKERS.map(String::from).into(), "{port}");
    // The seeded pods were the StatefulSet's: no assumption says they are left alone.
    let assumptions = doc["assumptions"].to_string();
    assert!(!assumptions.contains("other owners"), "{assumptions}");
}

#[test]
fn max_surge_is_refused_and_max_unavailable_validated_for_a_stateful_set() {
    let tmp = TempDir::new("simulate-sts-flags");
    let dump = dump(tmp.path());
    let dump = dump.to_str().unwrap();
    let base = ["simulate", "-f", dump, "--rollout", "sts/store/db", "-q"];
    let surge = run(&[&base[..], &["--max-surge", "1"]].concat()).code(2);
    let err = String::from_utf8_lossy(&surge.get_output().stderr).to_string();
    assert!(
        err.contains("unknown field \"spec.updateStrategy.rollingUpdate.maxSurge\""),
        "{err}"
    );
    let zero = run(&[&base[..], &["--max-unavailable", "0"]].concat()).code(2);
    let err = String::from_utf8_lossy(&zero.get_output().stderr).to_string();
    assert!(err.contains("maxUnavailable: \"0\": cannot be 0"), "{err}");
    run(&[&base[..], &["--max-unavailable", "2"]].concat()).success();
}

/// `--max-unavailable 2` is honoured where `MaxUnavailableStatefulSet` is on: by default from
/// 1.35, switched off there by `--feature-gates MaxUnavailableStatefulSet=false`, switched on
/// at 1.34 (alpha) by `=true`; off, the change says so and replaces one pod at a time.
#[test]
fn max_unavailable_follows_the_feature_gate_on_both_sides_of_1_35() {
    let tmp = TempDir::new("simulate-sts-gate");
    let dump = dump(tmp.path());
    let dump = dump.to_str().unwrap();
    let honoured = |version: &str, gates: &[&str]| {
        let mut args = vec![
            "simulate",
            "-f",
            dump,
            "--rollout",
            "statefulset/store/db",
            "--max-unavailable",
            "2",
            "--kube-version",
            version,
            "-o",
            "json",
            "-q",
        ];
        for g in gates {
            args.extend(["--feature-gates", g]);
        }
        let out = run(&args).success();
        let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let change = doc["alternatives"][0]["changes"][0].clone();
        let off = change["description"]
            .as_str()
            .unwrap()
            .contains("the MaxUnavailableStatefulSet gate is off");
        match change["maxUnavailable"].as_str() {
            Some("2") if !off => true,
            Some("1") if off => false,
            _ => panic!("{version} {gates:?}: {change}"),
        }
    };
    assert!(honoured("1.35", &[]));
    assert!(!honoured("1.35", &["MaxUnavailableStatefulSet=false"]));
    assert!(!honoured("1.34", &[]));
    assert!(honoured("1.34", &["MaxUnavailableStatefulSet=true"]));
}
