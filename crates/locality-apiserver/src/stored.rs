//! The kinds the simulated API server **stores without simulating** ([`Kind::STORED`]):
//! ServiceAccounts (`v1`), Jobs (`batch/v1`), and Roles, RoleBindings, ClusterRoles and
//! ClusterRoleBindings (`rbac.authorization.k8s.io/v1`).
//!
//! One generic path serves them all: a written object is defaulted as the real API server
//! defaults it ([`default`]), validated for what a real server rejects as obviously wrong
//! ([`errors`], [`update_errors`]), and kept as a [`StoredObject`] (its metadata and its other
//! fields as JSON); reads lay the metadata over the kept fields ([`encode`]). Create, get,
//! list, watch, update, patch (all four types), delete and `dryRun=All` go through the same
//! handlers as the simulated kinds', and deleting a Namespace deletes the namespaced ones in
//! it.
//!
//! **Stored, not run.** The simulated cluster runs no Job controller: a Job is kept and
//! served, never starts a pod, and its `status` stays empty. It runs no authorizer either:
//! every request is allowed whatever the RBAC objects say (they are kept, never enforced,
//! and a RoleBinding may name a Role that does not exist), and no token controller gives a
//! ServiceAccount a token.

use locality_model::objects::{ObjectMeta, OwnerReference};
use locality_sim::{Kind, Object, StoredObject};
use serde_json::{Map, Value, json};

/// The API group of the RBAC kinds.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Applies the API server's defaults to the JSON of a stored kind, in place.
///
/// Jobs: k8s.io/kubernetes `pkg/apis/batch/v1/defaults.go` `SetDefaults_Job` (`completions`
/// and `parallelism` 1 when both are unset, else `parallelism` 1; `backoffLimit` 6, or
/// 2147483647 with `backoffLimitPerIndex`; the Job's labels from its template's when it has
/// none; `completionMode: NonIndexed`; `suspend: false`; `podReplacementPolicy`
/// `TerminatingOrFailed`, or `Failed` with a `podFailurePolicy` (the `JobPodReplacementPolicy`
/// gate, on since 1.29); `manualSelector: false`), and the pod template's own pod-spec
/// defaults (`SetDefaults_PodSpec`, as for a Deployment's template).
///
/// RoleBindings and ClusterRoleBindings: `pkg/apis/rbac/v1/defaults.go`
/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding` (`roleRef.apiGroup`
/// `rbac.authorization.k8s.io`) and `SetDefaults_Subject` (a User's or Group's `apiGroup`
/// `rbac.authorization.k8s.io`, a ServiceAccount's `""`).
pub(crate) fn default(kind: Kind, v: &mut Value) {
    match kind {
        Kind::Job => default_job(v),
        Kind::RoleBinding | Kind::ClusterRoleBinding => {
            let Some(o) = v.as_object_mut() else { return };
            let role_ref = o.entry("roleRef").or_insert_with(|| json!({}));
            if let Some(r) = role_ref.as_object_mut()
                && r.get("apiGroup")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            {
                r.insert("apiGroup".into(), json!(RBAC_GROUP));
            }
            for s in o
                .get_mut("subjects")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                let Some(s) = s.as_object_mut() else { continue };
                if s.get("apiGroup")
                    .and_then(Value::as_str)
                    .is_some_and(|g| !g.is_empty())
                {
                    continue;
                }
                match s.get("kind").and_then(Value::as_str) {
                    Some("User" | "Group") => {
                        s.insert("apiGroup".into(), json!(RBAC_GROUP));
                    }
                    Some("ServiceAccount") => {
                        s.remove("apiGroup");
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// `SetDefaults_Job` and the template's pod-spec defaults (see [`default`]).
fn default_job(v: &mut Value) {
    let template_labels = v.pointer("/spec/template/metadata/labels").cloned();
    if let Some(labels) = template_labels.filter(Value::is_object)
        && v.pointer("/metadata/labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        && let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.insert("labels".into(), labels);
    }
    let Some(o) = v.as_object_mut() else { return };
    let spec = o.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else { return };
    let unset = |spec: &Map<String, Value>, k: &str| spec.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    if unset(spec, "parallelism") {
        spec.insert("parallelism".into(), json!(1));
    }
    if unset(spec, "backoffLimit") {
        let limit = if unset(spec, "backoffLimitPerIndex") {
            6
        } else {
            i64::from(i32::MAX)
        };
        spec.insert("backoffLimit".into(), json!(limit));
    }
    if unset(spec, "completionMode") {
        spec.insert("completionMode".into(), json!("NonIndexed"));
    }
    if unset(spec, "suspend") {
        spec.insert("suspend".into(), json!(false));
    }
    if unset(spec, "podReplacementPolicy") {
        let policy = if unset(spec, "podFailurePolicy") {
            "TerminatingOrFailed"
        } else {
            "Failed"
        };
        spec.insert("podReplacementPolicy".into(), json!(policy));
    }
    if unset(spec, "manualSelector") {
        spec.insert("manualSelector".into(), json!(false));
    }
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if let Some(t) = template.as_object_mut() {
        let pod_spec = t.entry("spec").or_insert_with(|| json!({}));
        if let Some(ps) = pod_spec.as_object_mut() {
            pod_spec_defaults(ps, 30);
        }
    }
}

/// The store object of a prepared JSON object of a stored kind: defaulted ([`default`]), its
/// metadata read, its other fields kept but `apiVersion`, `kind` and `status` (a write's
/// status is ignored, as upstream strategies' `PrepareForCreate`/`PrepareForUpdate` do).
pub(crate) fn to_object(kind: Kind, v: &Value) -> Object {
    let mut v = v.clone();
    default(kind, &mut v);
    let m = &v["metadata"];
    let text = |k: &str| m[k].as_str().unwrap_or_default().to_string();
    let owner_references = m["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| OwnerReference {
            kind: o["kind"].as_str().unwrap_or_default().to_string(),
            name: o["name"].as_str().unwrap_or_default().to_string(),
            uid: o["uid"].as_str().unwrap_or_default().to_string(),
            controller: o["controller"].as_bool().unwrap_or(false),
        })
        .collect();
    let meta = ObjectMeta {
        name: text("name"),
        namespace: if kind.cluster_scoped() {
            String::new()
        } else {
            text("namespace")
        },
        labels: string_map(&m["labels"]),
        annotations: string_map(&m["annotations"]),
        owner_references,
        ..ObjectMeta::default()
    };
    let mut fields = v.as_object().cloned().unwrap_or_default();
    for k in ["apiVersion", "kind", "metadata", "status"] {
        fields.remove(k);
    }
    Object::Stored(StoredObject { kind, meta, fields })
}

/// Lays the kept fields of `o` into `v` (which holds `apiVersion`, `kind` and `metadata`).
/// A Job without `manualSelector: true` shows the selector and template labels the API server
/// generates from its uid (`pkg/registry/batch/job/strategy.go` `generateSelector`), a Job
/// without labels its template's labels (generated ones included, as upstream's read-back
/// shows them), and an empty `status` (no Job controller runs).
pub(crate) fn encode(o: &StoredObject, v: &mut Value) {
    let Some(out) = v.as_object_mut() else { return };
    for (k, f) in &o.fields {
        out.insert(k.clone(), f.clone());
    }
    if o.kind == Kind::Job {
        if v.pointer("/spec/manualSelector").and_then(Value::as_bool) != Some(true) {
            generate_selector(v, &o.meta.name, &o.meta.uid);
        }
        // Read back, a Job without labels has its template's (`SetDefaults_Job` runs again on
        // the stored object, whose template now has the generated labels).
        if o.meta.labels.is_empty()
            && let Some(labels) = v
                .pointer("/spec/template/metadata/labels")
                .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
                .cloned()
        {
            v["metadata"]["labels"] = labels;
        }
        v["status"] = json!({});
    }
}

/// `generateSelector`: the template gets the labels `batch.kubernetes.io/job-name` and
/// `job-name` (the name), `batch.kubernetes.io/controller-uid` and `controller-uid` (the uid)
/// unless it has them, and the selector matches `batch.kubernetes.io/controller-uid`.
fn generate_selector(v: &mut Value, name: &str, uid: &str) {
    let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if let Some(t) = template.as_object_mut() {
        let meta = t.entry("metadata").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            let labels = meta.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                for (k, val) in [
                    ("job-name", name),
                    ("batch.kubernetes.io/job-name", name),
                    ("controller-uid", uid),
                    ("batch.kubernetes.io/controller-uid", uid),
                ] {
                    labels.entry(k).or_insert_with(|| json!(val));
                }
            }
        }
    }
    let selector = spec.entry("selector").or_insert_with(|| json!({}));
    if let Some(sel) = selector.as_object_mut() {
        let ml = sel.entry("matchLabels").or_insert_with(|| json!({}));
        if let Some(ml) = ml.as_object_mut() {
            ml.entry("batch.kubernetes.io/controller-uid")
                .or_insert_with(|| json!(uid));
        }
    }
}

/// `field.NotSupported`'s message.
fn not_supported(field: &str, got: &Value, supported: &[&str]) -> String {
    let got = got.as_str().unwrap_or_default();
    let shown = supported
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{field}: Unsupported value: {got:?}: supported values: {shown}")
}

/// What validation rejects in a (defaulted) object of a stored kind, each as upstream's
/// `field.Error` text (`spec.template.spec.restartPolicy: Required value: …`); empty when
/// valid. The name is checked before (`decode::prepare_value`).
///
/// Jobs: `pkg/apis/batch/validation/validation.go` `validateJobSpec` (a template whose
/// `restartPolicy` is not `OnFailure` or `Never`; at least one container). Roles and
/// ClusterRoles: `pkg/apis/rbac/validation/validation.go` `ValidatePolicyRule` (verbs; a
/// resource rule's apiGroups and resources; non-resource URLs not in a Role). RoleBindings
/// and ClusterRoleBindings: `ValidateRoleBinding`/`ValidateClusterRoleBinding` (`roleRef`:
/// the RBAC group, kind `Role` or `ClusterRole` — only `ClusterRole` for a
/// ClusterRoleBinding —, a name) and `ValidateRoleBindingSubject` (name; kind
/// `ServiceAccount`, `User` or `Group`; a ServiceAccount's namespace in a ClusterRoleBinding).
pub(crate) fn errors(o: &StoredObject) -> Vec<String> {
    let f = |k: &str| o.fields.get(k).unwrap_or(&Value::Null);
    let mut errs = Vec::new();
    match o.kind {
        Kind::Job => {
            let pod = &f("spec")["template"]["spec"];
            if pod["containers"].as_array().is_none_or(Vec::is_empty) {
                errs.push("spec.template.spec.containers: Required value".to_string());
            }
            let policy = &pod["restartPolicy"];
            match policy.as_str().unwrap_or_default() {
                "OnFailure" | "Never" => {}
                "Always" | "" => errs.push(
                    "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
                        .to_string(),
                ),
                _ => errs.push(not_supported(
                    "spec.template.spec.restartPolicy",
                    policy,
                    &["OnFailure", "Never"],
                )),
            }
        }
        Kind::Role | Kind::ClusterRole => {
            let namespaced = o.kind == Kind::Role;
            for (i, r) in f("rules").as_array().into_iter().flatten().enumerate() {
                errs.extend(rule_errors(r, namespaced, &format!("rules[{i}]")));
            }
        }
        Kind::RoleBinding | Kind::ClusterRoleBinding => {
            let namespaced = o.kind == Kind::RoleBinding;
            let role_ref = f("roleRef");
            if role_ref["apiGroup"].as_str() != Some(RBAC_GROUP) {
                errs.push(not_supported(
                    "roleRef.apiGroup",
                    &role_ref["apiGroup"],
                    &[RBAC_GROUP],
                ));
            }
            let kinds: &[&str] = if namespaced {
                &["Role", "ClusterRole"]
            } else {
                &["ClusterRole"]
            };
            if !kinds.contains(&role_ref["kind"].as_str().unwrap_or_default()) {
                errs.push(not_supported("roleRef.kind", &role_ref["kind"], kinds));
            }
            if role_ref["name"].as_str().is_none_or(str::is_empty) {
                errs.push("roleRef.name: Required value".to_string());
            }
            for (i, s) in f("subjects").as_array().into_iter().flatten().enumerate() {
                let at = format!("subjects[{i}]");
                if s["name"].as_str().is_none_or(str::is_empty) {
                    errs.push(format!("{at}.name: Required value"));
                }
                match s["kind"].as_str().unwrap_or_default() {
                    "ServiceAccount" => {
                        if !namespaced && s["namespace"].as_str().is_none_or(str::is_empty) {
                            errs.push(format!("{at}.namespace: Required value"));
                        }
                    }
                    "User" | "Group" => {}
                    _ => errs.push(not_supported(
                        &format!("{at}.kind"),
                        &s["kind"],
                        &["ServiceAccount", "User", "Group"],
                    )),
                }
            }
        }
        _ => {}
    }
    errs
}

/// `ValidatePolicyRule` for rule `r` at `at`.
fn rule_errors(r: &Value, namespaced: bool, at: &str) -> Vec<String> {
    let empty = |k: &str| r[k].as_array().is_none_or(Vec::is_empty);
    let mut errs = Vec::new();
    if empty("verbs") {
        errs.push(format!(
            "{at}.verbs: Required value: verbs must contain at least one value"
        ));
    }
    if !empty("nonResourceURLs") {
        if namespaced {
            errs.push(format!(
                "{at}.nonResourceURLs: Invalid value: {}: namespaced rules cannot apply to non-resource URLs",
                r["nonResourceURLs"]
            ));
        }
        if !empty("apiGroups") || !empty("resources") || !empty("resourceNames") {
            errs.push(format!(
                "{at}.nonResourceURLs: Invalid value: {}: rules cannot apply to both regular resources and non-resource URLs",
                r["nonResourceURLs"]
            ));
        }
        return errs;
    }
    if empty("apiGroups") {
        errs.push(format!(
            "{at}.apiGroups: Required value: resource rules must supply at least one api group"
        ));
    }
    if empty("resources") {
        errs.push(format!(
            "{at}.resources: Required value: resource rules must supply at least one resource"
        ));
    }
    errs
}

/// What an update may not change (besides [`errors`] of the new object), `cur_doc` being the
/// object as served: a binding's `roleRef` (`ValidateRoleBindingUpdate`: "cannot change
/// roleRef"), a Job's `spec.selector` and `spec.template` (`ValidateJobSpecUpdate`,
/// `ValidateImmutableField`; the simulated server does not make the exceptions upstream makes
/// for suspended Jobs).
pub(crate) fn update_errors(cur_doc: &Value, new: &StoredObject) -> Vec<String> {
    let mut served = json!({});
    encode(
        &StoredObject {
            meta: ObjectMeta {
                uid: cur_doc["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                ..new.meta.clone()
            },
            ..new.clone()
        },
        &mut served,
    );
    let mut errs = Vec::new();
    match new.kind {
        Kind::RoleBinding | Kind::ClusterRoleBinding if cur_doc["roleRef"] != served["roleRef"] => {
            let r = &served["roleRef"];
            errs.push(format!(
                "roleRef: Invalid value: rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}: cannot change roleRef",
                r["apiGroup"], r["kind"], r["name"]
            ));
        }
        Kind::Job => {
            for field in ["selector", "template"] {
                if cur_doc["spec"][field] != served["spec"][field] {
                    errs.push(format!(
                        "spec.{field}: Invalid value: {}: field is immutable",
                        served["spec"][field]
                    ));
                }
            }
        }
        _ => {}
    }
    errs
}

/// A JSON object of strings as a map (non-string values as their JSON text).
pub(crate) fn string_map(v: &Value) -> locality_model::objects::Labels {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The pod-level defaults of a pod spec as the API server stores them, where the spec leaves
/// them out (k8s.io/kubernetes `pkg/apis/core/v1/defaults.go` `SetDefaults_PodSpec`):
/// `restartPolicy: Always`, `dnsPolicy: ClusterFirst`, `schedulerName`,
/// `terminationGracePeriodSeconds` (`grace`), `enableServiceLinks` and an empty
/// `securityContext`. Also for a pod template a Job declares (`crate::stored`).
pub(crate) fn pod_spec_defaults(out: &mut Map<String, Value>, grace: u64) {
    for (k, v) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("terminationGracePeriodSeconds", json!(grace)),
        ("enableServiceLinks", json!(true)),
        ("securityContext", json!({})),
    ] {
        out.entry(k.to_string()).or_insert(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(kind: Kind, v: Value) -> StoredObject {
        match to_object(kind, &v) {
            Object::Stored(o) => o,
            other => panic!("not stored: {other:?}"),
        }
    }

    #[test]
    fn set_defaults_job() {
        let o = stored(
            Kind::Job,
            json!({"metadata": {"name": "j"}, "spec": {"template": {"metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c"}], "restartPolicy": "Never"}}}}),
        );
        let spec = &o.fields["spec"];
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(
            (&spec["completions"], &spec["parallelism"]),
            (&json!(1), &json!(1))
        );
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["manualSelector"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(o.meta.labels.get("a").map(String::as_str), Some("b"));
        // Parallelism alone leaves completions unset; backoffLimitPerIndex raises the limit;
        // a pod failure policy replaces only Failed pods; the Job's own labels stay.
        let o = stored(
            Kind::Job,
            json!({"metadata": {"name": "j", "labels": {"own": "x"}},
                   "spec": {"parallelism": 2, "backoffLimitPerIndex": 1, "podFailurePolicy": {"rules": []},
                            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {}}}}),
        );
        let spec = &o.fields["spec"];
        assert_eq!(
            (&spec["completions"], &spec["parallelism"]),
            (&Value::Null, &json!(2))
        );
        assert_eq!(spec["backoffLimit"], i64::from(i32::MAX));
        assert_eq!(spec["podReplacementPolicy"], "Failed");
        assert_eq!(o.meta.labels.keys().collect::<Vec<_>>(), ["own"]);
        // No status is kept.
        let o = stored(
            Kind::Job,
            json!({"metadata": {"name": "j"}, "status": {"active": 1}}),
        );
        assert!(!o.fields.contains_key("status"));
    }

    #[test]
    fn set_defaults_bindings_and_subjects() {
        let o = stored(
            Kind::ClusterRoleBinding,
            json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "r"},
                   "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "s", "namespace": "n"}]}),
        );
        assert_eq!(o.fields["roleRef"]["apiGroup"], RBAC_GROUP);
        assert_eq!(o.fields["subjects"][0]["apiGroup"], RBAC_GROUP);
        assert_eq!(o.fields["subjects"][1]["apiGroup"], Value::Null);
        assert!(errors(&o).is_empty(), "{:?}", errors(&o));
    }

    #[test]
    fn validation_of_jobs_roles_and_bindings() {
        let job = |policy: &str| {
            stored(
                Kind::Job,
                json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {
                    "containers": [{"name": "c"}], "restartPolicy": policy}}}}),
            )
        };
        assert!(errors(&job("Never")).is_empty());
        assert!(errors(&job("OnFailure")).is_empty());
        assert_eq!(
            errors(&job("Always")),
            ["spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""]
        );
        assert_eq!(
            errors(&job("Sometimes")),
            [
                "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"OnFailure\", \"Never\""
            ]
        );
        let no_ref = stored(
            Kind::RoleBinding,
            json!({"metadata": {"name": "b"}, "subjects": [{"kind": "Robot", "name": ""}]}),
        );
        assert_eq!(
            errors(&no_ref),
            [
                "roleRef.kind: Unsupported value: \"\": supported values: \"Role\", \"ClusterRole\"",
                "roleRef.name: Required value",
                "subjects[0].name: Required value",
                "subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
            ]
        );
        let sa_without_ns = stored(
            Kind::ClusterRoleBinding,
            json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "r"},
                   "subjects": [{"kind": "ServiceAccount", "name": "s"}]}),
        );
        assert_eq!(errors(&sa_without_ns), ["subjects[0].namespace: Required value"]);
        let role = stored(
            Kind::Role,
            json!({"metadata": {"name": "r"}, "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, {}]}),
        );
        assert_eq!(
            errors(&role),
            [
                "rules[0].nonResourceURLs: Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs",
                "rules[1].verbs: Required value: verbs must contain at least one value",
                "rules[1].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[1].resources: Required value: resource rules must supply at least one resource",
            ]
        );
    }
}
