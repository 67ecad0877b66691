//! Writes over raw HTTP: dry runs, server-side apply, delete options, and the admission of
//! tolerations with eviction.

use super::{DEPLOYS, PODS, SVC, deployment, netexec_pod, send, store_rv};
use crate::common;
use common::{get_json, start};
use serde_json::json;

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
