//! The simulated API server over raw HTTP on loopback (no kubectl needed).

use crate::common;
#[path = "http_api/hostile.rs"]
mod hostile;
#[path = "http_api/lifecycle.rs"]
mod lifecycle;
#[path = "http_api/limits.rs"]
mod limits;
#[path = "http_api/stored_kinds.rs"]
mod stored_kinds;
#[path = "http_api/validation.rs"]
mod validation;

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

#[test]
fn dry_runs_validate_and_answer_but_change_nothing() {
    let r = start(0.0);
    let rv0 = store_rv(&r);
    // Create.
    let pod = netexec_pod("web-c", "node-c", 0);
    let (code, v) = send(
        &r,
        "POST",
        &format!("{PODS}?dryRun=All"),
        "application/json",
        &pod.to_string(),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["metadata"]["name"], "web-c");
    assert!(v["metadata"]["uid"].is_string() && v["metadata"]["creationTimestamp"].is_string());
    assert!(v["metadata"].get("resourceVersion").is_none(), "{v}");
    assert_eq!(v["spec"]["containers"][0]["args"][0], "netexec");
    assert_eq!(
        get_json(&r, &format!("{PODS}/web-c")).0,
        404,
        "a dry run creates nothing"
    );
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "other"},
                     "spec": {"selector": {"app": "web"}, "ports": [{"port": 81, "targetPort": 8080}]}});
    let (code, v) = send(
        &r,
        "POST",
        "/api/v1/namespaces/default/services?dryRun=All",
        "application/json",
        &svc.to_string(),
    );
    assert_eq!(code, 201, "{v}");
    assert!(
        v["spec"]["clusterIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.96.")),
        "{v}"
    );
    // Validation still runs: AlreadyExists, Invalid.
    let dup = netexec_pod("web-a", "node-a", 0);
    let (code, _) = send(
        &r,
        "POST",
        &format!("{PODS}?dryRun=All"),
        "application/json",
        &dup.to_string(),
    );
    assert_eq!(code, 409);
    // Update and patch.
    let (_, mut cur) = get_json(&r, SVC);
    cur["metadata"]["labels"] = json!({"dry": "run"});
    let (code, v) = send(
        &r,
        "PUT",
        &format!("{SVC}?dryRun=All"),
        "application/json",
        &cur.to_string(),
    );
    assert_eq!(
        (code, &v["metadata"]["labels"]["dry"]),
        (200, &json!("run")),
        "{v}"
    );
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{SVC}?dryRun=All"),
        "application/merge-patch+json",
        r#"{"spec":{"internalTrafficPolicy":"Cluster"}}"#,
    );
    assert_eq!(
        (code, &v["spec"]["internalTrafficPolicy"]),
        (200, &json!("Cluster")),
        "{v}"
    );
    let (_, now) = get_json(&r, SVC);
    assert_eq!(now["spec"]["internalTrafficPolicy"], "Local");
    assert!(
        now["metadata"]
            .get("labels")
            .is_none_or(|l| l.get("dry").is_none())
    );
    // Delete, by query and by DeleteOptions body.
    let (code, v) = send(
        &r,
        "DELETE",
        &format!("{PODS}/web-a?dryRun=All"),
        "application/json",
        "",
    );
    assert_eq!(code, 200, "{v}");
    assert!(
        v["metadata"]["deletionTimestamp"].is_string(),
        "the pod as it would be: {v}"
    );
    let (code, _) = send(
        &r,
        "DELETE",
        &format!("{PODS}/web-b"),
        "application/json",
        r#"{"dryRun":["All"],"gracePeriodSeconds":0}"#,
    );
    assert_eq!(code, 200);
    let (code, _) = send(&r, "DELETE", SVC, "application/json", r#"{"dryRun":["All"]}"#);
    assert_eq!(code, 200);
    for path in [format!("{PODS}/web-a"), format!("{PODS}/web-b"), SVC.to_string()] {
        let (code, v) = get_json(&r, &path);
        assert_eq!(code, 200, "{path} still there");
        assert!(v["metadata"].get("deletionTimestamp").is_none(), "{v}");
    }
    assert_eq!(store_rv(&r), rv0, "no dry run wrote to the store");
    // Unknown dryRun values: 422 Invalid on the options, as ValidateDryRun.
    let (code, v) = send(
        &r,
        "POST",
        &format!("{PODS}?dryRun=Bogus"),
        "application/json",
        &pod.to_string(),
    );
    assert_eq!((code, v["reason"].as_str()), (422, Some("Invalid")), "{v}");
    assert_eq!(
        v["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Bogus\"}: supported values: \"All\""
    );
    let (code, v) = send(
        &r,
        "DELETE",
        &format!("{PODS}/web-a"),
        "application/json",
        r#"{"dryRun":["Nope"]}"#,
    );
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("DeleteOptions.meta.k8s.io"),
        "{v}"
    );
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{SVC}?dryRun=x"),
        "application/merge-patch+json",
        "{}",
    );
    assert_eq!(code, 422);
    assert_eq!(get_json(&r, &format!("{PODS}/web-c")).0, 404);
    assert_eq!(store_rv(&r), rv0);
}

#[test]
fn patches_reach_every_field_and_immutable_ones_are_refused() {
    let r = start(0.0);
    // A Service's routing fields, through the same decoding as create.
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/strategic-merge-patch+json",
        r#"{"spec":{"internalTrafficPolicy":"Cluster","trafficDistribution":"PreferClose","ports":[{"port":80,"name":"web"}]}}"#,
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["internalTrafficPolicy"], "Cluster");
    assert_eq!(v["spec"]["trafficDistribution"], "PreferClose");
    assert_eq!(
        v["spec"]["ports"].as_array().unwrap().len(),
        1,
        "merged by port: {v}"
    );
    assert_eq!(v["spec"]["ports"][0]["name"], "web");
    assert_eq!(v["spec"]["ports"][0]["targetPort"], "http", "kept by the merge");
    let (itp, td) = r.with_engine(|e| {
        let s = e
            .get(&locality_sim::ObjectKey::new(
                locality_sim::Kind::Service,
                "default",
                "myservice",
            ))
            .and_then(locality_sim::Object::as_service)
            .cloned()
            .unwrap();
        (s.itp(), s.traffic_distribution)
    });
    assert_eq!(itp, locality_model::objects::TrafficPolicy::Cluster);
    assert_eq!(td.as_deref(), Some("PreferClose"));
    // Immutable: a Service's cluster IP, a pod's node.
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/merge-patch+json",
        r#"{"spec":{"clusterIP":"10.96.0.99","clusterIPs":["10.96.0.99"]}}"#,
    );
    assert_eq!((code, v["reason"].as_str()), (422, Some("Invalid")), "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.99\"}: may not change once set"),
        "{v}"
    );
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/strategic-merge-patch+json",
        r#"{"spec":{"nodeName":"node-b"}}"#,
    );
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Forbidden: pod updates may not change fields other than"),
        "{v}"
    );
    // What a pod may change: labels (also of a pod the topology built), its image.
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/strategic-merge-patch+json",
        r#"{"metadata":{"labels":{"$patch":"replace","app":"web","only":"these"}}}"#,
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["labels"], json!({"app": "web", "only": "these"}));
    let container = v["spec"]["containers"][0]["name"].as_str().unwrap().to_string();
    let patch = json!({"spec": {"containers": [{"name": container, "image": "registry.k8s.io/e2e-test-images/agnhost:2.52"}]}});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/strategic-merge-patch+json",
        &patch.to_string(),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["spec"]["containers"][0]["image"],
        "registry.k8s.io/e2e-test-images/agnhost:2.52"
    );
    assert_eq!(v["spec"]["nodeName"], "node-a");
    // A Deployment's template: container ports merged by containerPort, a rollout follows.
    let (code, _) = send(
        &r,
        "POST",
        DEPLOYS,
        "application/json",
        &deployment("gateway", 2).to_string(),
    );
    assert_eq!(code, 201);
    r.advance(10_000);
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "netexec",
        "ports": [{"containerPort": 9090, "name": "metrics"}]}]}}}});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{DEPLOYS}/gateway"),
        "application/strategic-merge-patch+json",
        &patch.to_string(),
    );
    assert_eq!(code, 200, "{v}");
    let c = &v["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["args"][0], "netexec", "the container merged by name: {c}");
    let ports: Vec<u64> = c["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["containerPort"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [8080, 9090]);
    r.advance(30_000);
    let (_, rs) = get_json(&r, "/apis/apps/v1/namespaces/default/replicasets");
    assert_eq!(
        rs["items"].as_array().unwrap().len(),
        2,
        "a new ReplicaSet for the new template: {rs}"
    );
    let (_, pods) = get_json(&r, &format!("{PODS}?labelSelector=app%3Dgateway"));
    let pods = pods["items"].as_array().unwrap();
    assert!(
        pods.iter()
            .all(|p| p["spec"]["containers"][0]["ports"].as_array().unwrap().len() == 2),
        "the rollout replaced the pods: {pods:?}"
    );
    // A Deployment's selector is immutable.
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{DEPLOYS}/gateway"),
        "application/merge-patch+json",
        r#"{"spec":{"selector":{"matchLabels":{"app":"x"}}}}"#,
    );
    assert_eq!(code, 422, "{v}");
    assert!(v["message"].as_str().unwrap().contains("spec.selector"), "{v}");
    // A patch that names another object: 400, as checkName.
    let (code, _) = send(
        &r,
        "PATCH",
        SVC,
        "application/merge-patch+json",
        r#"{"metadata":{"name":"other"}}"#,
    );
    assert_eq!(code, 400);
    // A stale resourceVersion in the patch is a precondition: 409.
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/merge-patch+json",
        r#"{"metadata":{"resourceVersion":"1"}}"#,
    );
    assert_eq!((code, v["reason"].as_str()), (409, Some("Conflict")), "{v}");
}

#[test]
fn json_patches_apply_atomically_and_a_failed_test_is_422() {
    let r = start(0.0);
    let ops = json!([
        {"op": "test", "path": "/spec/internalTrafficPolicy", "value": "Local"},
        {"op": "replace", "path": "/spec/internalTrafficPolicy", "value": "Cluster"},
        {"op": "add", "path": "/metadata/labels", "value": {"tier": "front"}},
        {"op": "copy", "from": "/metadata/labels/tier", "path": "/metadata/labels/copied"},
        {"op": "move", "from": "/metadata/labels/copied", "path": "/metadata/labels/moved"},
        {"op": "remove", "path": "/metadata/labels/tier"}]);
    let (code, v) = send(&r, "PATCH", SVC, "application/json-patch+json", &ops.to_string());
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["internalTrafficPolicy"], "Cluster");
    assert_eq!(v["metadata"]["labels"], json!({"moved": "front"}));
    let rv = store_rv(&r);
    let failing = json!([
        {"op": "replace", "path": "/spec/internalTrafficPolicy", "value": "Local"},
        {"op": "test", "path": "/metadata/labels/moved", "value": "back"}]);
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/json-patch+json",
        &failing.to_string(),
    );
    assert_eq!((code, v["reason"].as_str()), (422, Some("Invalid")), "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("the server rejected our request due to an error in our request"),
        "{v}"
    );
    assert_eq!(store_rv(&r), rv, "nothing applied");
    assert_eq!(get_json(&r, SVC).1["spec"]["internalTrafficPolicy"], "Cluster");
    let (code, _) = send(&r, "PATCH", SVC, "application/json-patch+json", r#"{"op":"add"}"#);
    assert_eq!(code, 400, "not a list of operations");
    let (code, _) = send(
        &r,
        "PATCH",
        SVC,
        "application/json-patch+json",
        r#"[{"op":"remove","path":"/spec/nope"}]"#,
    );
    assert_eq!(code, 422);
}

#[test]
fn server_side_apply_creates_updates_and_reports_conflicts() {
    let r = start(0.0);
    const APPLY: &str = "application/apply-patch+yaml";
    let path = "/api/v1/namespaces/default/services/applied";
    let yaml = "apiVersion: v1\nkind: Service\nmetadata:\n  name: applied\n  labels:\n    tier: front\n    team: a\nspec:\n  selector:\n    app: web\n  internalTrafficPolicy: Local\n  ports:\n  - port: 80\n    targetPort: 8080\n";
    let (code, v) = send(&r, "PATCH", &format!("{path}?fieldManager=mgr-a"), APPLY, yaml);
    assert_eq!(code, 201, "an apply creates: {v}");
    assert_eq!(v["metadata"]["managedFields"][0]["manager"], "mgr-a");
    assert_eq!(v["metadata"]["managedFields"][0]["operation"], "Apply");
    assert!(
        v["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:ports"]["k:{\"port\":80}"].is_object(),
        "{v}"
    );
    assert!(
        v["spec"]["clusterIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.96."))
    );
    // Re-apply without the `team` label and with another targetPort: the label goes.
    let yaml2 = yaml
        .replace("    team: a\n", "")
        .replace("targetPort: 8080", "targetPort: 9090");
    let (code, v) = send(&r, "PATCH", &format!("{path}?fieldManager=mgr-a"), APPLY, &yaml2);
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["labels"], json!({"tier": "front"}));
    assert_eq!(v["spec"]["ports"][0]["targetPort"], 9090);
    // A label another manager set survives mgr-a's applies.
    let (code, _) = send(
        &r,
        "PATCH",
        path,
        "application/merge-patch+json",
        r#"{"metadata":{"labels":{"owner":"kubectl"}}}"#,
    );
    assert_eq!(code, 200);
    let (_, v) = send(&r, "PATCH", &format!("{path}?fieldManager=mgr-a"), APPLY, &yaml2);
    assert_eq!(v["metadata"]["labels"]["owner"], "kubectl");
    // Another manager changing mgr-a's field: 409 unless forced.
    let other = "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"applied\",\"labels\":{\"tier\":\"back\"}}}";
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{path}?fieldManager=mgr-b&force=false"),
        APPLY,
        other,
    );
    assert_eq!((code, v["reason"].as_str()), (409, Some("Conflict")), "{v}");
    assert_eq!(
        v["message"],
        "Apply failed with 1 conflict: conflict with \"mgr-a\": .metadata.labels.tier"
    );
    assert_eq!(v["details"]["causes"][0]["reason"], "FieldManagerConflict");
    assert_eq!(v["details"]["causes"][0]["field"], ".metadata.labels.tier");
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{path}?fieldManager=mgr-b&force=true"),
        APPLY,
        other,
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["labels"]["tier"], "back");
    let managers: Vec<&str> = v["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["mgr-a", "mgr-b"]);
    assert!(
        v["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:labels"]
            .get("f:tier")
            .is_none(),
        "forced away from mgr-a: {v}"
    );
    // Same value from another manager: shared, no conflict.
    let (code, _) = send(&r, "PATCH", &format!("{path}?fieldManager=mgr-c"), APPLY, other);
    assert_eq!(code, 200);
    // Options: fieldManager is required for apply, force only for apply.
    let (code, v) = send(&r, "PATCH", path, APPLY, &yaml2);
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("fieldManager: Required value"),
        "{v}"
    );
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{path}?force=true"),
        "application/merge-patch+json",
        "{}",
    );
    assert_eq!(code, 422, "{v}");
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{path}?fieldManager=m"),
        APPLY,
        "kind: Service\n",
    );
    assert_eq!(code, 400, "apiVersion missing");
    // A dry-run apply creates nothing.
    let ghost = yaml.replace("name: applied", "name: ghost");
    let (code, _) = send(
        &r,
        "PATCH",
        "/api/v1/namespaces/default/services/ghost?fieldManager=m&dryRun=All",
        APPLY,
        &ghost,
    );
    assert_eq!(code, 201);
    assert_eq!(get_json(&r, "/api/v1/namespaces/default/services/ghost").0, 404);
}

#[test]
fn delete_options_grace_period_force_preconditions_and_orphans() {
    let r = start(0.0);
    // gracePeriodSeconds=0 (kubectl delete --grace-period=0 --force): gone at once.
    let (code, v) = send(
        &r,
        "DELETE",
        &format!("{PODS}/web-b?gracePeriodSeconds=0"),
        "application/json",
        "",
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(get_json(&r, &format!("{PODS}/web-b")).0, 404);
    // A pod that shuts down slowly (--delay-shutdown=60) dies within the grace period given.
    let (code, _) = send(
        &r,
        "POST",
        PODS,
        "application/json",
        &netexec_pod("slow", "node-c", 60).to_string(),
    );
    assert_eq!(code, 201);
    r.advance(5_000);
    let (code, v) = send(
        &r,
        "DELETE",
        &format!("{PODS}/slow"),
        "application/json",
        r#"{"gracePeriodSeconds":3,"propagationPolicy":"Background"}"#,
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["deletionGracePeriodSeconds"], 3, "{v}");
    r.advance(2_000);
    assert_eq!(get_json(&r, &format!("{PODS}/slow")).0, 200, "terminating");
    r.advance(2_000);
    assert_eq!(
        get_json(&r, &format!("{PODS}/slow")).0,
        404,
        "killed at the end of the 3 s"
    );
    // Preconditions.
    let (code, v) = send(
        &r,
        "DELETE",
        &format!("{PODS}/web-a"),
        "application/json",
        r#"{"preconditions":{"uid":"nope"}}"#,
    );
    assert_eq!((code, v["reason"].as_str()), (409, Some("Conflict")), "{v}");
    // propagationPolicy.
    let (code, v) = send(
        &r,
        "DELETE",
        &format!("{PODS}/web-a"),
        "application/json",
        r#"{"propagationPolicy":"Sideways"}"#,
    );
    assert_eq!(code, 422, "{v}");
    for (name, policy) in [("kept", "Orphan"), ("gone", "Foreground")] {
        let (code, _) = send(
            &r,
            "POST",
            DEPLOYS,
            "application/json",
            &deployment(name, 1).to_string(),
        );
        assert_eq!(code, 201);
        r.advance(10_000);
        let (code, _) = send(
            &r,
            "DELETE",
            &format!("{DEPLOYS}/{name}"),
            "application/json",
            &json!({"propagationPolicy": policy}).to_string(),
        );
        assert_eq!(code, 200);
        r.advance(10_000);
        assert_eq!(get_json(&r, &format!("{DEPLOYS}/{name}")).0, 404);
        let (_, rs) = get_json(
            &r,
            &format!("/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3D{name}"),
        );
        let (_, pods) = get_json(&r, &format!("{PODS}?labelSelector=app%3D{name}"));
        let (rs, pods) = (
            rs["items"].as_array().unwrap().clone(),
            pods["items"].as_array().unwrap().clone(),
        );
        if policy == "Orphan" {
            assert_eq!(rs.len(), 1, "the ReplicaSet is orphaned, not deleted");
            assert!(rs[0]["metadata"].get("ownerReferences").is_none(), "{:?}", rs[0]);
            assert_eq!(pods.len(), 1, "its pod runs on");
        } else {
            assert!(rs.is_empty() && pods.is_empty(), "{rs:?} {pods:?}");
        }
    }
}

#[test]
fn watches_with_selectors_see_objects_enter_and_leave() {
    let r = start(0.0);
    let rv = store_rv(&r);
    let watcher = std::thread::spawn({
        let port = r.port();
        move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            let req = format!(
                "GET /api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dweb&resourceVersion={rv}&timeoutSeconds=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            );
            s.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let label = |app: &str| json!({"metadata": {"labels": {"app": app}}}).to_string();
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/merge-patch+json",
        &label("other"),
    );
    assert_eq!(code, 200);
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/merge-patch+json",
        &label("web"),
    );
    assert_eq!(code, 200);
    // A pod that never matches is not seen.
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{PODS}/client-node-a"),
        "application/merge-patch+json",
        &label("client"),
    );
    assert_eq!(code, 200);
    let out = watcher.join().unwrap();
    let events: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .filter(|v| v.get("type").is_some())
        .collect();
    let seen: Vec<(String, String, String)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["name"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["labels"]["app"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    let want = |t: &str, app: &str| (t.to_string(), "web-a".to_string(), app.to_string());
    assert_eq!(seen, [want("DELETED", "web"), want("ADDED", "web")], "{out}");
    // The DELETED event carries the last matching state at the change's resourceVersion.
    assert!(
        events[0]["object"]["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > rv
    );
}

#[test]
fn followed_logs_stream_until_the_container_ends() {
    use std::io::{Read, Write};
    let r = start(0.0);
    let probe = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe-a"},
        "spec": {"nodeName": "node-a", "containers": [{"name": "probe", "image": "curlimages/curl:8.11.1",
          "env": [{"name": "LOCALITY_PROBE_TARGET", "value": "myservice:80/hostname"},
                  {"name": "LOCALITY_PROBE_INTERVAL_MS", "value": "100"}]}]}});
    let curl = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "curl-c"},
        "spec": {"nodeName": "node-c", "restartPolicy": "Never", "containers": [{"name": "curl",
          "image": "curlimages/curl:8.11.1", "command": ["curl", "-sS", "-m", "2", "http://myservice:80/hostname"]}]}});
    for p in [&probe, &curl] {
        assert_eq!(send(&r, "POST", PODS, "application/json", &p.to_string()).0, 201);
    }
    r.advance(1_500);
    let open = |name: &str| {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", r.port())).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_millis(100)))
            .unwrap();
        let req =
            format!("GET {PODS}/{name}/log?follow=true HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).unwrap();
        s
    };
    // Reads what arrives within `ms` of wall time; true when the server closed the stream.
    let read_for = |s: &mut std::net::TcpStream, buf: &mut String, ms: u64| -> bool {
        let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
        let mut chunk = [0u8; 4096];
        while std::time::Instant::now() < end {
            match s.read(&mut chunk) {
                Ok(0) => return true,
                Ok(n) => buf.push_str(&String::from_utf8_lossy(&chunk[..n])),
                Err(_) => {}
            }
        }
        false
    };
    let count = |buf: &str| buf.lines().filter(|l| l.contains(" 0 web-a")).count();
    let mut probe_stream = open("probe-a");
    let mut got = String::new();
    assert!(
        !read_for(&mut probe_stream, &mut got, 500),
        "follow keeps the connection open"
    );
    assert!(
        got.contains("Transfer-Encoding: chunked") || got.contains("transfer-encoding: chunked"),
        "{got}"
    );
    let before = count(&got);
    assert!(before >= 3, "the log so far: {got}");
    r.advance(1_000);
    assert!(!read_for(&mut probe_stream, &mut got, 700));
    let after = count(&got);
    assert!(
        after >= before + 9,
        "about 10 new tries in 1 s of virtual time: {before} -> {after}: {got}"
    );
    // The curl pod times out 2 s after it starts: its line arrives, then the stream ends.
    let mut curl_stream = open("curl-c");
    let mut text = String::new();
    assert!(!read_for(&mut curl_stream, &mut text, 300));
    assert!(!text.contains("curl: (28)"), "not written yet: {text}");
    r.advance(3_000);
    assert!(
        read_for(&mut curl_stream, &mut text, 3_000),
        "ends with the container: {text}"
    );
    assert!(
        text.contains("curl: (28) Connection timed out after 2000 milliseconds"),
        "{text}"
    );
    // Deleting the probe pod ends its stream.
    assert_eq!(
        send(
            &r,
            "DELETE",
            &format!("{PODS}/probe-a?gracePeriodSeconds=0"),
            "application/json",
            ""
        )
        .0,
        200
    );
    assert!(
        read_for(&mut probe_stream, &mut got, 3_000),
        "ends when the pod goes"
    );
}

#[test]
fn a_label_patch_of_any_kind_changes_nothing_else() {
    let r = start(0.0);
    assert_eq!(
        send(
            &r,
            "POST",
            DEPLOYS,
            "application/json",
            &deployment("gateway", 1).to_string()
        )
        .0,
        201
    );
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"tolerations": [{"operator": "Exists"}],
                                       "containers": [{"name": "agent", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                                       "args": ["netexec", "--http-port=4317"],
                                                       "ports": [{"name": "otlp", "containerPort": 4317}],
                                                       "readinessProbe": {"tcpSocket": {"port": 4317}, "periodSeconds": 1}}]}}}});
    assert_eq!(
        send(
            &r,
            "POST",
            "/apis/apps/v1/namespaces/default/daemonsets",
            "application/json",
            &ds.to_string()
        )
        .0,
        201
    );
    r.advance(10_000);
    let lists = [
        "/api/v1/namespaces",
        "/api/v1/nodes",
        "/api/v1/pods",
        "/api/v1/services",
        "/apis/discovery.k8s.io/v1/endpointslices",
        "/apis/apps/v1/deployments",
        "/apis/apps/v1/replicasets",
        "/apis/apps/v1/daemonsets",
    ];
    let strip = |mut v: serde_json::Value| {
        let m = v["metadata"].as_object_mut().unwrap();
        for k in ["labels", "resourceVersion", "managedFields"] {
            m.remove(k);
        }
        v
    };
    let mut patched = 0;
    for list in lists {
        let (_, items) = get_json(&r, list);
        for item in items["items"].as_array().unwrap() {
            let name = item["metadata"]["name"].as_str().unwrap();
            let path = match item["metadata"]["namespace"].as_str() {
                Some(ns) => list.replacen(
                    &format!("/{}", list.rsplit('/').next().unwrap()),
                    &format!("/namespaces/{ns}/{}/{name}", list.rsplit('/').next().unwrap()),
                    1,
                ),
                None => format!("{list}/{name}"),
            };
            let (_, before) = get_json(&r, &path);
            for ct in [
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
            ] {
                let (code, after) = send(
                    &r,
                    "PATCH",
                    &path,
                    ct,
                    r#"{"metadata":{"labels":{"patched":"yes"}}}"#,
                );
                assert_eq!(code, 200, "{path}: {after}");
                assert_eq!(after["metadata"]["labels"]["patched"], "yes", "{path}");
                assert_eq!(
                    strip(after),
                    strip(before.clone()),
                    "{path}: only the label changed"
                );
            }
            let (code, after) = send(
                &r,
                "PATCH",
                &path,
                "application/json-patch+json",
                r#"[{"op":"remove","path":"/metadata/labels/patched"}]"#,
            );
            assert_eq!(code, 200, "{path}: {after}");
            assert_eq!(strip(after), strip(before.clone()), "{path}");
            patched += 1;
        }
    }
    assert!(patched >= 20, "{patched} objects");
    // The cluster still works: the DaemonSet's pods are ready on every node.
    r.advance(10_000);
    let (_, pods) = get_json(&r, &format!("{PODS}?labelSelector=app%3Dagent"));
    assert_eq!(pods["items"].as_array().unwrap().len(), 3);
}

/// Tolerations through the API: `tolerationSeconds` read and served, the
/// `DefaultTolerationSeconds` admission on create and update, `validateTolerations` (seconds
/// only with NoExecute), an update may change `tolerationSeconds` but remove no toleration, and
/// the simulated taint-eviction controller evicts after the pod's own `tolerationSeconds`.
#[test]
fn tolerations_admission_validation_and_eviction() {
    let r = start(0.0);
    let with = |name: &str, tolerations: serde_json::Value| {
        let mut p = netexec_pod(name, "node-a", 0);
        p["spec"]["tolerations"] = tolerations;
        p.to_string()
    };
    let tolerations = |name: &str| {
        let (code, v) = get_json(&r, &format!("{PODS}/{name}"));
        assert_eq!(code, 200);
        v["spec"]["tolerations"].clone()
    };
    let unreachable = "node.kubernetes.io/unreachable";
    let not_ready = "node.kubernetes.io/not-ready";
    let (code, v) = send(
        &r,
        "POST",
        PODS,
        "application/json",
        &with(
            "quick",
            json!([{"key": unreachable, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20}]),
        ),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        tolerations("quick"),
        json!([{"key": unreachable, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20},
               {"key": not_ready, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}])
    );
    let (code, v) = send(
        &r,
        "POST",
        PODS,
        "application/json",
        &with(
            "bad",
            json!([{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        ),
    );
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"),
        "{v}"
    );
    let (code, v) = send(
        &r,
        "POST",
        PODS,
        "application/json",
        &with("forever", json!([{"operator": "Exists"}])),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(tolerations("forever"), json!([{"operator": "Exists"}]));
    // An update may change tolerationSeconds, not remove a toleration; one that leaves the
    // defaults out gets them back from the admission.
    let patch = |name: &str, body: serde_json::Value| {
        send(
            &r,
            "PATCH",
            &format!("{PODS}/{name}"),
            "application/merge-patch+json",
            &body.to_string(),
        )
    };
    let (code, v) = patch(
        "quick",
        json!({"spec": {"tolerations": [
            {"key": unreachable, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
            {"key": not_ready, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]}}),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(tolerations("quick")[0]["tolerationSeconds"], 10);
    let (code, v) = patch("forever", json!({"spec": {"tolerations": null}}));
    assert_eq!(code, 422, "the own toleration cannot go: {v}");
    let (code, v) = patch("web-a", json!({"spec": {"tolerations": null}}));
    assert_eq!(code, 200, "{v}");
    assert_eq!(tolerations("web-a").as_array().map(Vec::len), Some(2));

    // node-a's kubelet stops: the unreachable taint at the first pass after the grace period
    // plus one, then `quick` goes 10 s later, `web-a` 300 s later, `forever` never.
    let stopped = r.virtual_now();
    r.with_engine(|e| e.set_node_ready("node-a", false)).unwrap();
    let tainted = ((stopped + 50_000) / 5_000 + 2) * 5_000;
    let deleting = |name: &str| {
        let (code, v) = get_json(&r, &format!("{PODS}/{name}"));
        assert_eq!(code, 200, "{name}: the stopped kubelet cannot finish a deletion");
        v["metadata"]["deletionTimestamp"].is_string()
    };
    r.advance(tainted + 9_000 - stopped);
    assert!(!deleting("quick") && !deleting("web-a"));
    r.advance(1_100);
    assert!(deleting("quick"));
    assert!(!deleting("web-a") && !deleting("forever"));
    r.advance(290_000);
    assert!(deleting("web-a"));
    assert!(!deleting("forever"));
}
