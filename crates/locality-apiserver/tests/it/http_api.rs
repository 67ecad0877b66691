//! The simulated API server over raw HTTP on loopback (no kubectl needed).

use crate::common;
mod hostile;
mod lifecycle;
mod limits;
mod list_options;
mod patches;
mod stored_kinds;
mod streams;
mod validation;
mod writes;

use common::{get_json, http, start};
use serde_json::json;

#[test]
fn discovery_version_and_openapi() {
    let r = start(10.0);
    let (code, v) = get_json(&r, "/version");
    assert_eq!(code, 200);
    assert_eq!(v["gitVersion"], "v1.35.0+locality-simulated");
    assert!(locality_live::is_simulated_version(
        v["gitVersion"].as_str().unwrap()
    ));
    assert_eq!(
        locality_apiserver::SIMULATED_BUILD_METADATA,
        locality_live::SIMULATED_BUILD_METADATA
    );
    // The other fields as a real API server has them.
    assert_eq!(
        (v["major"].as_str(), v["minor"].as_str()),
        (Some("1"), Some("35"))
    );
    assert_eq!(v["platform"], "linux/amd64");
    let (_, v) = get_json(&r, "/api/v1");
    let pods = v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods")
        .unwrap();
    assert_eq!(pods["shortNames"], json!(["po"]));
    assert_eq!(pods["namespaced"], true);
    let (_, v) = get_json(&r, "/apis");
    let groups: Vec<&str> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        groups,
        [
            "apps",
            "batch",
            "policy",
            "rbac.authorization.k8s.io",
            "discovery.k8s.io"
        ]
    );
    let (_, v) = get_json(&r, "/apis/apps/v1");
    let names: Vec<&str> = v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"daemonsets") && names.contains(&"deployments/scale"));
    let (code, v) = get_json(&r, "/openapi/v3");
    assert_eq!(code, 200);
    assert!(v["paths"]["apis/apps/v1"]["serverRelativeURL"].is_string());
    let (code, _) = get_json(&r, "/apis/autoscaling/v1");
    assert_eq!(code, 404);
    let kubeconfig = std::fs::read_to_string(r.kubeconfig_path()).unwrap();
    assert!(kubeconfig.contains("current-context: locality-sim"));
    assert!(kubeconfig.contains(r.url()));
}

#[test]
fn list_selectors_and_pages() {
    let r = start(10.0);
    let (code, v) = get_json(&r, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb");
    assert_eq!(code, 200);
    let names: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["web-a", "web-b"]);
    let (_, v) = get_json(&r, "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b");
    let names: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    // node-b's kube-proxy (kube-system, after default) too.
    assert_eq!(names[..2], ["client-node-b", "web-b"]);
    assert!(
        names.len() == 3 && names[2].starts_with("kube-proxy-"),
        "{names:?}"
    );
    assert_eq!(
        v["items"][1]["status"]["podIP"]
            .as_str()
            .map(|s| s.starts_with("10.244.")),
        Some(true)
    );
    assert_eq!(
        v["items"][1]["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap()["status"],
        "True"
    );
    // Pages of 2 cover the 8 pods (5 of the fixture, 3 kube-proxies) once each.
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let (_, v) = get_json(&r, &format!("/api/v1/pods?limit=2&continue={token}"));
        for p in v["items"].as_array().unwrap() {
            seen.push(p["metadata"]["name"].as_str().unwrap().to_string());
        }
        match v["metadata"]["continue"].as_str() {
            Some(t) => token = t.to_string(),
            None => break,
        }
    }
    assert_eq!(seen.len(), 8, "{seen:?}");
    let (code, v) = get_json(&r, "/api/v1/pods?labelSelector=a%20b%20c");
    assert_eq!((code, v["reason"].as_str()), (400, Some("BadRequest")));
    let (code, v) = get_json(&r, "/api/v1/pods?fieldSelector=spec.bogus%3D1");
    assert_eq!((code, v["kind"].as_str()), (400, Some("Status")));
}

#[test]
fn errors_are_status_objects() {
    let r = start(10.0);
    let (code, v) = get_json(&r, "/api/v1/namespaces/default/pods/nope");
    assert_eq!((code, v["reason"].as_str()), (404, Some("NotFound")));
    assert_eq!(v["message"], "pods \"nope\" not found");
    let (code, body) = http(
        &r,
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/json",
        "{not json",
    );
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((code, v["reason"].as_str()), (400, Some("BadRequest")));
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-a"},
                     "spec": {"containers": [{"name": "c", "image": "x"}]}});
    let (code, body) = http(
        &r,
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/json",
        &pod.to_string(),
    );
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((code, v["reason"].as_str()), (409, Some("AlreadyExists")));
    let bad = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"},
                     "spec": {"containers": [{"name": "c", "image": "x"}]}});
    let (code, _) = http(
        &r,
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/json",
        &bad.to_string(),
    );
    assert_eq!(code, 422);
    let nocontainers = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "empty"}, "spec": {}});
    let (code, _) = http(
        &r,
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/json",
        &nocontainers.to_string(),
    );
    assert_eq!(code, 422);
    let (code, v) = get_json(&r, "/api/v1/namespaces/nowhere/pods/x");
    assert_eq!(code, 404, "{v}");
    let (code, body) = http(
        &r,
        "POST",
        "/api/v1/namespaces/nowhere/pods",
        "application/json",
        &pod.to_string(),
    );
    assert_eq!(code, 404, "{body}");
    let (code, body) = http(
        &r,
        "PATCH",
        "/api/v1/namespaces/default/pods/web-a",
        "application/yaml",
        "{}",
    );
    assert_eq!(code, 415, "{body}");
    assert!(
        body.contains("application/json-patch+json") && body.contains("application/apply-patch+yaml"),
        "{body}"
    );
}

#[test]
fn watch_streams_events_and_expires() {
    let r = start(10.0);
    let rv: u64 = get_json(&r, "/api/v1/pods").1["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let t = std::thread::spawn({
        let port = r.port();
        move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            let req = format!(
                "GET /api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}&timeoutSeconds=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            );
            s.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (code, _) = http(
        &r,
        "DELETE",
        "/api/v1/namespaces/default/pods/web-b",
        "application/json",
        "",
    );
    assert_eq!(code, 200);
    let out = t.join().unwrap();
    assert!(out.contains("\"type\":\"MODIFIED\""), "{out}");
    assert!(out.contains("deletionTimestamp"), "{out}");
    assert!(out.contains("\"type\":\"DELETED\""), "{out}");
    assert!(
        !out.contains("\"name\":\"client-node-a\""),
        "only changes after {rv}: {out}"
    );
    // Forced expiry: a watch from an old version gets an ERROR event with a 410 Status.
    r.expire_watches_before(rv);
    let (code, body) = http(
        &r,
        "GET",
        "/api/v1/pods?watch=true&resourceVersion=1",
        "application/json",
        "",
    );
    assert_eq!(code, 200);
    assert!(
        body.contains("\"type\":\"ERROR\"") && body.contains("\"code\":410"),
        "{body}"
    );
}

#[test]
fn tables_for_kubectl_get() {
    let r = start(10.0);
    let (code, body) = {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", r.port())).unwrap();
        let req = "GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json\r\n\r\n";
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        let code: u16 = out.split_whitespace().nth(1).unwrap().parse().unwrap();
        (code, out.split_once("\r\n\r\n").unwrap().1.to_string())
    };
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["kind"], "Table");
    let cols: Vec<(&str, u64)> = v["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["priority"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        &cols[..5],
        [
            ("Name", 0),
            ("Ready", 0),
            ("Status", 0),
            ("Restarts", 0),
            ("Age", 0)
        ]
    );
    assert!(cols.contains(&("Node", 1)) && cols.contains(&("IP", 1)));
    let row = &v["rows"][0];
    assert_eq!(row["cells"][0], "client-node-a");
    assert_eq!(row["cells"][2], "Running");
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn virtual_time_runs_at_speed() {
    let r = start(0.0);
    let t0 = r.virtual_now();
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(r.virtual_now(), t0, "speed 0 freezes the clock");
    r.advance(5_000);
    assert_eq!(r.virtual_now(), t0 + 5_000);
    assert_eq!(r.with_engine(|e| e.now()), t0 + 5_000);
    drop(r);
    let fast = start(100.0);
    let t0 = fast.virtual_now();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let dt = fast.virtual_now() - t0;
    assert!(
        (15_000..40_000).contains(&dt),
        "100x for 200 ms of wall time: {dt} ms"
    );
    fast.shutdown();
}

// ----- writes: dry runs, patches, apply, delete options -----

const PODS: &str = "/api/v1/namespaces/default/pods";
const SVC: &str = "/api/v1/namespaces/default/services/myservice";
const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn send(
    r: &locality_apiserver::Running,
    method: &str,
    path: &str,
    ct: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    let (code, text) = http(r, method, path, ct, body);
    (
        code,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
    )
}

fn store_rv(r: &locality_apiserver::Running) -> u64 {
    r.with_engine(|e| e.store().resource_version())
}

fn netexec_pod(name: &str, node: &str, delay_shutdown: u32) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
           "spec": {"nodeName": node, "containers": [{"name": "netexec",
             "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
             "args": ["netexec", "--http-port=8080", format!("--delay-shutdown={delay_shutdown}")],
             "ports": [{"name": "http", "containerPort": 8080}]}]}})
}

fn deployment(name: &str, replicas: u32) -> serde_json::Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "netexec",
                                   "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                   "args": ["netexec", "--http-port=8080"],
                                   "ports": [{"name": "http", "containerPort": 8080}]}]}}}})
}
