//! The kinds stored, not simulated (ServiceAccounts, Jobs, the RBAC kinds): discovery, the API
//! server's defaults on read-back, validation, `dryRun=All`, updates, watches and the
//! Namespace's cascade.

use locality_apiserver::Running;
use serde_json::{Value, json};

use super::common::{get_json, http, start};

const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";
const SAS: &str = "/api/v1/namespaces/default/serviceaccounts";
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

fn send(r: &Running, method: &str, path: &str, content_type: &str, body: &Value) -> (u16, Value) {
    let (code, text) = http(r, method, path, content_type, &body.to_string());
    (code, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn post(r: &Running, path: &str, body: &Value) -> (u16, Value) {
    send(r, "POST", path, "application/json", body)
}

fn job(name: &str, restart_policy: Option<&str>) -> Value {
    let mut pod = json!({"containers": [{"name": "audit", "image": "ghcr.io/locality-dev/locality:0.1.0"}]});
    if let Some(p) = restart_policy {
        pod["restartPolicy"] = json!(p);
    }
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
           "spec": {"template": {"metadata": {"labels": {"app": name}}, "spec": pod}}})
}

fn role_binding(kind: &str, name: &str, role_ref: Option<Value>) -> Value {
    let mut v = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
        "metadata": {"name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "locality", "namespace": "default"}]});
    if let Some(r) = role_ref {
        v["roleRef"] = r;
    }
    v
}

#[test]
fn discovery_lists_batch_rbac_and_serviceaccounts() {
    let r = start(10.0);
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
    let resource = |path: &str, name: &str| -> Value {
        let (code, v) = get_json(&r, path);
        assert_eq!(code, 200, "{path}: {v}");
        v["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{path} lists no {name}: {v}"))
    };
    let sa = resource("/api/v1", "serviceaccounts");
    assert_eq!(
        (&sa["kind"], &sa["shortNames"], &sa["namespaced"]),
        (&json!("ServiceAccount"), &json!(["sa"]), &json!(true))
    );
    let jobs = resource("/apis/batch/v1", "jobs");
    assert_eq!(
        (&jobs["kind"], &jobs["categories"]),
        (&json!("Job"), &json!(["all"]))
    );
    assert!(jobs["verbs"].as_array().unwrap().contains(&json!("create")));
    for (name, namespaced) in [
        ("roles", true),
        ("rolebindings", true),
        ("clusterroles", false),
        ("clusterrolebindings", false),
    ] {
        assert_eq!(resource(RBAC, name)["namespaced"], namespaced, "{name}");
    }
    assert_eq!(get_json(&r, "/apis/batch").0, 200);
    let (code, v) = get_json(&r, "/openapi/v3");
    assert_eq!(code, 200);
    assert!(v["paths"]["apis/batch/v1"].is_object(), "{v}");
}

#[test]
fn a_job_reads_back_with_the_api_servers_defaults_and_runs_nothing() {
    let r = start(0.0);
    let (code, v) = post(&r, JOBS, &job("audit", Some("Never")));
    assert_eq!(code, 201, "{v}");
    let (code, v) = get_json(&r, &format!("{JOBS}/audit"));
    assert_eq!(code, 200, "{v}");
    let spec = &v["spec"];
    // SetDefaults_Job.
    assert_eq!(spec["backoffLimit"], 6, "{v}");
    assert_eq!(
        (&spec["completions"], &spec["parallelism"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(
        v["metadata"]["labels"],
        json!({"app": "audit"}),
        "labels from the template"
    );
    // generateSelector, from the uid.
    let uid = v["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        spec["selector"]["matchLabels"],
        json!({"batch.kubernetes.io/controller-uid": uid})
    );
    let labels = &spec["template"]["metadata"]["labels"];
    assert_eq!(labels["batch.kubernetes.io/job-name"], "audit");
    assert_eq!(labels["controller-uid"], uid);
    // The template's pod-spec defaults, as for a Deployment's.
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(v["status"], json!({}));
    // Given values are kept.
    let mut given = job("given", Some("OnFailure"));
    given["spec"]["backoffLimit"] = json!(0);
    given["spec"]["parallelism"] = json!(3);
    let (code, v) = post(&r, JOBS, &given);
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        (
            &v["spec"]["backoffLimit"],
            &v["spec"]["parallelism"],
            &v["spec"]["completions"]
        ),
        (&json!(0), &json!(3), &Value::Null),
        "completions stays unset when parallelism is given"
    );
    // A Job and a template without labels: the Job shows the generated ones.
    let mut bare = job("bare", Some("Never"));
    bare["spec"]["template"]["metadata"] = json!({});
    let (code, v) = post(&r, JOBS, &bare);
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["metadata"]["labels"]["batch.kubernetes.io/job-name"], "bare",
        "{v}"
    );
    // Nothing runs it: no pod appears.
    r.advance(60_000);
    let (_, pods) = get_json(
        &r,
        "/api/v1/namespaces/default/pods?labelSelector=job-name%3Daudit",
    );
    assert_eq!(pods["items"], json!([]), "{pods}");
}

#[test]
fn validation_refuses_a_jobs_restart_policy_a_missing_role_ref_and_a_missing_name() {
    let r = start(0.0);
    for policy in [None, Some("Always")] {
        let (code, v) = post(&r, JOBS, &job("bad", policy));
        assert_eq!(code, 422, "{policy:?}: {v}");
        assert_eq!(
            v["message"],
            "Job.batch \"bad\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
        );
        assert_eq!(
            v["details"]["causes"][0]["field"],
            "spec.template.spec.restartPolicy"
        );
    }
    let (code, v) = post(&r, JOBS, &job("bad", Some("Sometimes")));
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Unsupported value: \"Sometimes\""),
        "{v}"
    );
    for (path, kind) in [
        (format!("{RBAC}/namespaces/default/rolebindings"), "RoleBinding"),
        (format!("{RBAC}/clusterrolebindings"), "ClusterRoleBinding"),
    ] {
        let (code, v) = post(&r, &path, &role_binding(kind, "no-ref", None));
        assert_eq!(code, 422, "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.contains("roleRef.kind: Unsupported value: \"\"")
                && message.contains("roleRef.name: Required value"),
            "{message}"
        );
        let fields: Vec<&str> = v["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["field"].as_str().unwrap())
            .collect();
        assert_eq!(fields, ["roleRef.kind", "roleRef.name"], "{v}");
    }
    let cluster_to_role = role_binding(
        "ClusterRoleBinding",
        "to-role",
        Some(json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"})),
    );
    let (code, v) = post(&r, &format!("{RBAC}/clusterrolebindings"), &cluster_to_role);
    assert_eq!(code, 422, "{v}");
    let (code, v) = post(
        &r,
        SAS,
        &json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {}}),
    );
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("metadata.name: Required value"),
        "{v}"
    );
    let rule = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "no-verbs"}, "rules": [{"apiGroups": [""], "resources": ["pods"]}]});
    let (code, v) = post(&r, &format!("{RBAC}/clusterroles"), &rule);
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("rules[0].verbs: Required value"),
        "{v}"
    );
    // A valid binding: roleRef.apiGroup and a User subject's apiGroup defaulted.
    let mut ok = role_binding(
        "RoleBinding",
        "ok",
        Some(json!({"kind": "Role", "name": "reader"})),
    );
    ok["subjects"] = json!([{"kind": "User", "name": "jane"}]);
    let (code, v) = post(&r, &format!("{RBAC}/namespaces/default/rolebindings"), &ok);
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(v["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
}

#[test]
fn dry_runs_of_stored_kinds_store_nothing() {
    let r = start(0.0);
    let before = get_json(&r, &format!("{SAS}?limit=1")).1["metadata"]["resourceVersion"].clone();
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "dry"}});
    let (code, v) = post(&r, &format!("{SAS}?dryRun=All"), &sa);
    assert_eq!(code, 201, "{v}");
    assert!(v["metadata"]["uid"].is_string(), "{v}");
    assert_eq!(get_json(&r, &format!("{SAS}/dry")).0, 404);
    let (code, _) = post(&r, &format!("{JOBS}?dryRun=All"), &job("dry", Some("Never")));
    assert_eq!(code, 201);
    assert_eq!(get_json(&r, &format!("{JOBS}/dry")).0, 404);
    let after = get_json(&r, &format!("{SAS}?limit=1")).1["metadata"]["resourceVersion"].clone();
    assert_eq!(before, after, "the store's resourceVersion did not move");
    // A dry-run update and delete of a stored ServiceAccount change nothing either.
    assert_eq!(post(&r, SAS, &sa).0, 201);
    let patch = json!({"metadata": {"labels": {"dry": "yes"}}});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{SAS}/dry?dryRun=All"),
        "application/merge-patch+json",
        &patch,
    );
    assert_eq!(
        (code, &v["metadata"]["labels"]["dry"]),
        (200, &json!("yes")),
        "{v}"
    );
    assert_eq!(
        get_json(&r, &format!("{SAS}/dry")).1["metadata"]["labels"],
        Value::Null
    );
    // With no body the query's options count (a body's DeleteOptions would replace them).
    let (code, _) = http(
        &r,
        "DELETE",
        &format!("{SAS}/dry?dryRun=All"),
        "application/json",
        "",
    );
    assert_eq!(code, 200);
    assert_eq!(get_json(&r, &format!("{SAS}/dry")).0, 200, "still there");
}

#[test]
fn updates_keep_a_bindings_role_ref_and_a_jobs_template() {
    let r = start(0.0);
    let rb = format!("{RBAC}/namespaces/default/rolebindings");
    let body = role_binding("RoleBinding", "b", Some(json!({"kind": "Role", "name": "one"})));
    assert_eq!(post(&r, &rb, &body).0, 201);
    let patch = json!({"roleRef": {"name": "two"}});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{rb}/b"),
        "application/merge-patch+json",
        &patch,
    );
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("cannot change roleRef"),
        "{v}"
    );
    let patch = json!({"subjects": [{"kind": "Group", "name": "ops"}]});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{rb}/b"),
        "application/merge-patch+json",
        &patch,
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["subjects"][0]["name"], "ops");
    assert_eq!(post(&r, JOBS, &job("j", Some("Never"))).0, 201);
    let patch = json!({"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{JOBS}/j"),
        "application/merge-patch+json",
        &patch,
    );
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("spec.template: Invalid value"),
        "{v}"
    );
    // A PUT of the Job as read back (selector and generated labels included) is accepted.
    let (_, cur) = get_json(&r, &format!("{JOBS}/j"));
    let mut put = cur.clone();
    put["metadata"]["labels"] = json!({"team": "a"});
    let (code, v) = send(&r, "PUT", &format!("{JOBS}/j"), "application/json", &put);
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["labels"], json!({"team": "a"}));
}

#[test]
fn deleting_a_namespace_deletes_its_stored_kinds() {
    let r = start(0.0);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "audit"}});
    assert_eq!(post(&r, "/api/v1/namespaces", &ns).0, 201);
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "locality"}});
    let paths = [
        ("/api/v1/namespaces/audit/serviceaccounts".to_string(), sa),
        (
            "/apis/batch/v1/namespaces/audit/jobs".to_string(),
            job("j", Some("Never")),
        ),
        (
            format!("{RBAC}/namespaces/audit/roles"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"},
                   "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        ),
        (
            format!("{RBAC}/namespaces/audit/rolebindings"),
            role_binding("RoleBinding", "rb", Some(json!({"kind": "Role", "name": "r"}))),
        ),
    ];
    for (path, body) in &paths {
        let (code, v) = post(&r, path, body);
        assert_eq!(code, 201, "{path}: {v}");
    }
    // A cluster-scoped one is not in the namespace and stays.
    let cr = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "stays"}, "rules": []});
    assert_eq!(post(&r, &format!("{RBAC}/clusterroles"), &cr).0, 201);
    let (code, _) = send(
        &r,
        "DELETE",
        "/api/v1/namespaces/audit",
        "application/json",
        &json!({}),
    );
    assert_eq!(code, 200);
    r.advance(5_000);
    for (path, _) in &paths {
        let (code, v) = get_json(&r, path);
        assert_eq!((code, &v["items"]), (200, &json!([])), "{path}: {v}");
    }
    assert_eq!(
        get_json(&r, "/api/v1/namespaces/audit").0,
        404,
        "the namespace went once empty"
    );
    assert_eq!(get_json(&r, &format!("{RBAC}/clusterroles/stays")).0, 200);
}

#[test]
fn a_watch_sees_a_stored_kind_change() {
    let r = start(0.0);
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "w"}});
    let (_, created) = post(&r, SAS, &sa);
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let patch = json!({"metadata": {"labels": {"v": "2"}}});
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{SAS}/w"),
        "application/merge-patch+json",
        &patch,
    );
    assert_eq!(code, 200);
    let (code, body) = http(
        &r,
        "GET",
        &format!("{SAS}?watch=true&resourceVersion={rv}&timeoutSeconds=1"),
        "application/json",
        "",
    );
    assert_eq!(code, 200);
    assert!(
        body.contains("\"MODIFIED\"") && body.contains("\"v\":\"2\""),
        "{body}"
    );
}
