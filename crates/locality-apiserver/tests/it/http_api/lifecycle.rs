//! Deletion like a cluster: a namespace's contents cascade (NamespaceLifecycle's 403 meanwhile)
//! and owner references propagate deletions in the background or the foreground.

use locality_apiserver::Running;
use serde_json::{Value, json};

use super::common::{get_json, http, start};

const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn send(r: &Running, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let (code, text) = http(r, method, path, "application/json", &body.to_string());
    (code, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "netexec",
                                   "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                   "args": ["netexec", "--http-port=8080", "--delay-shutdown=5"]}]}}}})
}

/// Names of the items of a list in `path` whose name starts with `prefix`.
fn names(r: &Running, path: &str, prefix: &str) -> Vec<String> {
    let (code, v) = get_json(r, path);
    assert_eq!(code, 200, "{v}");
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

fn replicasets(r: &Running, prefix: &str) -> Vec<String> {
    names(r, "/apis/apps/v1/namespaces/default/replicasets", prefix)
}

fn pods(r: &Running, prefix: &str) -> Vec<String> {
    names(r, "/api/v1/namespaces/default/pods", prefix)
}

#[test]
fn a_foreground_deletion_waits_for_the_dependents_and_a_background_one_does_not() {
    let r = start(0.0);
    for name in ["fg", "bg"] {
        assert_eq!(send(&r, "POST", DEPLOYS, &deployment(name)).0, 201);
    }
    r.advance(10_000);
    assert_eq!(pods(&r, "fg-").len(), 2);
    assert_eq!(replicasets(&r, "fg-").len(), 1);
    // Foreground: the Deployment stays, deleting, until its ReplicaSet and pods are gone.
    let (code, v) = send(
        &r,
        "DELETE",
        &format!("{DEPLOYS}/fg"),
        &json!({"propagationPolicy": "Foreground"}),
    );
    assert_eq!(code, 200, "{v}");
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    assert_eq!(v["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    r.advance(1_000);
    let (code, v) = get_json(&r, &format!("{DEPLOYS}/fg"));
    assert_eq!(code, 200, "still there while its pods terminate: {v}");
    assert_eq!(replicasets(&r, "fg-").len(), 1);
    let (_, pod_list) = get_json(&r, "/api/v1/namespaces/default/pods");
    assert!(
        pod_list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("fg-")))
            .all(|p| p["metadata"]["deletionTimestamp"].is_string()),
        "its pods terminate"
    );
    // Background: the Deployment goes at once, its ReplicaSet and pods after it.
    let (code, _) = send(
        &r,
        "DELETE",
        &format!("{DEPLOYS}/bg"),
        &json!({"propagationPolicy": "Background"}),
    );
    assert_eq!(code, 200);
    assert_eq!(get_json(&r, &format!("{DEPLOYS}/bg")).0, 404);
    r.advance(60_000);
    for prefix in ["fg", "bg"] {
        assert_eq!(get_json(&r, &format!("{DEPLOYS}/{prefix}")).0, 404);
        assert!(replicasets(&r, &format!("{prefix}-")).is_empty());
        assert!(pods(&r, &format!("{prefix}-")).is_empty());
    }
}

#[test]
fn a_namespace_deletion_cascades_and_refuses_new_content_meanwhile() {
    let r = start(0.0);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}});
    assert_eq!(send(&r, "POST", "/api/v1/namespaces", &ns).0, 201);
    let deploys = "/apis/apps/v1/namespaces/doomed/deployments";
    assert_eq!(send(&r, "POST", deploys, &deployment("web")).0, 201);
    r.advance(10_000);
    let in_ns = |r: &Running| names(r, "/api/v1/namespaces/doomed/pods", "");
    assert_eq!(in_ns(&r).len(), 2);
    let (code, v) = send(&r, "DELETE", "/api/v1/namespaces/doomed", &json!({}));
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["phase"], "Terminating", "{v}");
    assert_eq!(v["spec"]["finalizers"], json!(["kubernetes"]));
    let (code, v) = send(&r, "POST", deploys, &deployment("late"));
    assert_eq!((code, v["reason"].as_str()), (403, Some("Forbidden")), "{v}");
    assert_eq!(
        v["message"],
        "deployments.apps \"late\" is forbidden: unable to create new content in namespace doomed because it is being terminated"
    );
    assert_eq!(v["details"]["causes"][0]["reason"], "NamespaceTerminating", "{v}");
    assert_eq!(v["details"]["causes"][0]["field"], "metadata.namespace");
    assert_eq!(
        get_json(&r, deploys).1["items"],
        json!([]),
        "its workloads are removed"
    );
    r.advance(60_000);
    assert!(in_ns(&r).is_empty(), "its pods terminated");
    assert_eq!(
        get_json(&r, "/api/v1/namespaces/doomed").0,
        404,
        "then it is gone"
    );
}
