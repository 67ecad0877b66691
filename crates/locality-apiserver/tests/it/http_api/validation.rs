//! Status codes of requests the server cannot take: body media types (415), `resourceVersion`
//! preconditions (409).

use serde_json::{Value, json};

use super::common::{get_json, http, start};

const PODS: &str = "/api/v1/namespaces/default/pods";

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})
}

#[test]
fn bodies_of_unknown_media_types_are_415_and_yaml_is_read() {
    let r = start(10.0);
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/cbor",
    ] {
        let (code, body) = http(&r, "POST", PODS, ct, &pod("typed").to_string());
        let v: Value = serde_json::from_str(&body).expect("a Status");
        assert_eq!(
            (code, v["reason"].as_str()),
            (415, Some("UnsupportedMediaType")),
            "{ct}: {body}"
        );
        let message = v["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("application/json, application/yaml, application/vnd.kubernetes.protobuf"),
            "{message}"
        );
    }
    assert_eq!(
        get_json(&r, &format!("{PODS}/typed")).0,
        404,
        "nothing was stored"
    );
    // No Content-Type is JSON; YAML is converted.
    let (code, body) = http(&r, "POST", PODS, "", &pod("untyped").to_string());
    assert_eq!(code, 201, "{body}");
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: from-yaml\nspec:\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n";
    let (code, body) = http(&r, "POST", PODS, "application/yaml; charset=utf-8", yaml);
    assert_eq!(code, 201, "{body}");
    let (code, body) = http(&r, "POST", PODS, "application/yaml", "kind: [unclosed");
    assert_eq!(code, 400, "{body}");
    // Updates too.
    let (_, current) = get_json(&r, &format!("{PODS}/untyped"));
    let (code, body) = http(
        &r,
        "PUT",
        &format!("{PODS}/untyped"),
        "text/plain",
        &current.to_string(),
    );
    assert_eq!(code, 415, "{body}");
}

#[test]
fn a_stale_resource_version_is_a_409_conflict() {
    let r = start(10.0);
    let (code, body) = http(
        &r,
        "POST",
        PODS,
        "application/json",
        &pod("versioned").to_string(),
    );
    assert_eq!(code, 201, "{body}");
    let created: Value = serde_json::from_str(&body).expect("pod");
    let mut stale = created.clone();
    let (code, body) = http(
        &r,
        "PATCH",
        &format!("{PODS}/versioned"),
        "application/merge-patch+json",
        r#"{"metadata":{"labels":{"a":"b"}}}"#,
    );
    assert_eq!(code, 200, "{body}");
    stale["metadata"]["labels"] = json!({"a": "c"});
    let (code, body) = http(
        &r,
        "PUT",
        &format!("{PODS}/versioned"),
        "application/json",
        &stale.to_string(),
    );
    let v: Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!((code, v["reason"].as_str()), (409, Some("Conflict")), "{body}");
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    let patch = json!({"metadata": {"resourceVersion": rv, "labels": {"a": "d"}}});
    let (code, body) = http(
        &r,
        "PATCH",
        &format!("{PODS}/versioned"),
        "application/merge-patch+json",
        &patch.to_string(),
    );
    assert_eq!(code, 409, "a patch naming a stale resourceVersion: {body}");
    let (_, now) = get_json(&r, &format!("{PODS}/versioned"));
    assert_eq!(now["metadata"]["labels"]["a"], "b");
}
