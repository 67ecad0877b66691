//! Patches over an object's JSON as the API serves it: JSON merge patch (RFC 7386), strategic
//! merge patch, JSON patch (RFC 6902, with the `json-patch` crate) and the field sets of
//! server-side apply.
//!
//! Mirrors k8s.io/apiserver `pkg/endpoints/handlers/patch.go` (which patch type does what, and
//! the status codes of failures) and k8s.io/apimachinery `pkg/util/strategicpatch/patch.go`
//! (the strategic merge), written for the kinds the simulated API server serves.
//!
//! **Strategic merge patch**, supported: maps merge recursively, `null` deletes a key; lists
//! with a patch merge key merge element by element on that key — `containers`,
//! `initContainers`, `ephemeralContainers`, `env`, `volumes`, `imagePullSecrets`,
//! `resourceClaims` by `name`, container `ports` by `containerPort`, a Service's `ports` by
//! `port`, `volumeMounts` by `mountPath`, `volumeDevices` by `devicePath`, `hostAliases` by
//! `ip`, `ownerReferences` by `uid`, `conditions` and Node `addresses` by `type`,
//! `topologySpreadConstraints` by `topologyKey`; `finalizers` merge as a set; every other list
//! is replaced whole. Directives: `$patch: replace` and `$patch: delete` on maps and on list
//! elements (`{"name": "c", "$patch": "delete"}`), `$patch: replace` as a list element
//! (replace the whole list), `$retainKeys`, `$deleteFromPrimitiveList/<field>`. Not supported:
//! `$setElementOrder/<field>` is accepted and ignored (merged lists keep the server's order,
//! new elements are appended), and the merge keys of kinds the simulation does not serve.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::limits::{self, JSON_PATCH_MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS};
use crate::status::ApiError;

/// How a list field merges in a strategic merge patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListStrategy {
    /// Replaced whole (no patch strategy).
    Replace,
    /// Merged element by element on this key (`patchStrategy:"merge"`, `patchMergeKey`).
    MergeBy(&'static str),
    /// A list of scalars merged as a set (`finalizers`).
    Set,
}

/// The strategy of list `field` under the map keys `parents` (list indices left out), as the
/// `patchStrategy`/`patchMergeKey` tags of k8s.io/api declare it.
pub(crate) fn list_strategy(parents: &[String], field: &str) -> ListStrategy {
    let parent = parents.last().map(String::as_str);
    let in_container = matches!(
        parent,
        Some("containers" | "initContainers" | "ephemeralContainers")
    );
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => ListStrategy::MergeBy("name"),
        "env" if in_container => ListStrategy::MergeBy("name"),
        "ports" if in_container => ListStrategy::MergeBy("containerPort"),
        // A Service's `spec.ports` (an EndpointSlice's top-level `ports` is atomic).
        "ports" if parents.len() == 1 && parent == Some("spec") => ListStrategy::MergeBy("port"),
        "volumeMounts" if in_container => ListStrategy::MergeBy("mountPath"),
        "volumeDevices" if in_container => ListStrategy::MergeBy("devicePath"),
        "hostAliases" => ListStrategy::MergeBy("ip"),
        "ownerReferences" if parent == Some("metadata") => ListStrategy::MergeBy("uid"),
        "finalizers" if parent == Some("metadata") => ListStrategy::Set,
        "conditions" => ListStrategy::MergeBy("type"),
        "addresses" if parent == Some("status") => ListStrategy::MergeBy("type"),
        "topologySpreadConstraints" => ListStrategy::MergeBy("topologyKey"),
        _ => ListStrategy::Replace,
    }
}

/// RFC 7386 JSON merge patch (k8s.io/apiserver `patch.go`, `types.MergePatchType`): objects
/// merge, `null` removes, anything else replaces; keys starting with `$` are plain keys.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// A strategic-merge error: 400 for a malformed patch, 422 for one that cannot apply
/// (`interpretStrategicMergePatchError`).
fn smp_bad(why: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("strategic merge patch: {why}"))
}

/// Applies a strategic merge patch to `target` (an object's full JSON).
///
/// # Errors
/// A patch that is not an object, an unknown `$patch` directive, a list element without its
/// merge key, or `$patch: delete` of the whole object: 400.
pub(crate) fn strategic_merge(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let Value::Object(p) = patch else {
        return Err(smp_bad("the patch must be a JSON object"));
    };
    if p.get("$patch").and_then(Value::as_str) == Some("delete") {
        return Err(smp_bad("$patch: delete of the whole object is not allowed"));
    }
    if !target.is_object() {
        *target = json!({});
    }
    let mut parents = Vec::new();
    if let Value::Object(t) = target {
        merge_map(t, p, &mut parents)?;
    }
    Ok(())
}

/// The patch without its directives (what a replaced or appended value stores).
fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|e| e.get("$patch").is_none())
                .map(strip_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

fn merge_map(
    target: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    parents: &mut Vec<String>,
) -> Result<(), ApiError> {
    match patch.get("$patch").map(|d| d.as_str().unwrap_or_default()) {
        None | Some("merge") => {}
        Some("replace") => {
            if let Value::Object(m) = strip_directives(&Value::Object(patch.clone())) {
                *target = m;
            }
            return Ok(());
        }
        Some(other) => return Err(smp_bad(format!("unknown patch type: {other:?} in map"))),
    }
    for (k, v) in patch {
        if k == "$patch" || k == "$retainKeys" || k.starts_with("$setElementOrder/") {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let Value::Array(gone) = v else {
                return Err(smp_bad(format!("{k} must be a list")));
            };
            if let Some(Value::Array(list)) = target.get_mut(field) {
                list.retain(|e| !gone.contains(e));
            }
            continue;
        }
        if k.starts_with('$') {
            return Err(smp_bad(format!("unknown directive {k:?}")));
        }
        match v {
            Value::Null => {
                target.remove(k);
            }
            Value::Object(pm) => {
                if pm.get("$patch").and_then(Value::as_str) == Some("delete") {
                    target.remove(k);
                    continue;
                }
                let entry = target.entry(k.clone()).or_insert_with(|| json!({}));
                if !entry.is_object() {
                    *entry = json!({});
                }
                parents.push(k.clone());
                let r = match entry {
                    Value::Object(em) => merge_map(em, pm, parents),
                    _ => Ok(()),
                };
                parents.pop();
                r?;
            }
            Value::Array(pl) => match list_strategy(parents, k) {
                ListStrategy::Replace => {
                    target.insert(k.clone(), strip_directives(v));
                }
                ListStrategy::Set => {
                    let entry = target.entry(k.clone()).or_insert_with(|| json!([]));
                    if !entry.is_array() {
                        *entry = json!([]);
                    }
                    if let Value::Array(list) = entry {
                        for e in pl {
                            if !list.contains(e) {
                                list.push(e.clone());
                            }
                        }
                    }
                }
                ListStrategy::MergeBy(key) => {
                    let entry = target.entry(k.clone()).or_insert_with(|| json!([]));
                    if !entry.is_array() {
                        *entry = json!([]);
                    }
                    parents.push(k.clone());
                    let r = match entry {
                        Value::Array(list) => merge_list(list, pl, key, parents),
                        _ => Ok(()),
                    };
                    parents.pop();
                    r?;
                }
            },
            scalar => {
                target.insert(k.clone(), scalar.clone());
            }
        }
    }
    if let Some(retain) = patch.get("$retainKeys") {
        let Value::Array(keys) = retain else {
            return Err(smp_bad("$retainKeys must be a list of strings"));
        };
        let keep: BTreeSet<&str> = keys.iter().filter_map(Value::as_str).collect();
        target.retain(|k, _| keep.contains(k.as_str()));
    }
    Ok(())
}

fn merge_list(
    target: &mut Vec<Value>,
    patch: &[Value],
    key: &str,
    parents: &mut Vec<String>,
) -> Result<(), ApiError> {
    if patch.iter().any(|e| {
        e.get("$patch").and_then(Value::as_str) == Some("replace")
            && e.as_object().is_some_and(|m| m.len() == 1)
    }) {
        *target = patch
            .iter()
            .filter(|e| e.get("$patch").is_none())
            .map(strip_directives)
            .collect();
        return Ok(());
    }
    for e in patch {
        let Value::Object(pm) = e else {
            if !target.contains(e) {
                target.push(e.clone());
            }
            continue;
        };
        let Some(kv) = pm.get(key) else {
            return Err(smp_bad(format!(
                "map: {} does not contain declared merge key: {key}",
                Value::Object(pm.clone())
            )));
        };
        let at = target.iter().position(|t| t.get(key) == Some(kv));
        match (pm.get("$patch").and_then(Value::as_str), at) {
            (Some("delete"), Some(_)) => target.retain(|t| t.get(key) != Some(kv)),
            (Some("delete"), None) => {}
            (Some("replace"), Some(i)) => target[i] = strip_directives(e),
            (_, Some(i)) => {
                if let Value::Object(tm) = &mut target[i] {
                    merge_map(tm, pm, parents)?;
                } else {
                    target[i] = strip_directives(e);
                }
            }
            (_, None) => target.push(strip_directives(e)),
        }
    }
    Ok(())
}

/// Applies an RFC 6902 JSON patch (add, remove, replace, move, copy, test) to `target`,
/// atomically (the operations apply to a copy, which replaces `target` once all succeeded),
/// within upstream's limits (k8s.io/apiserver `pkg/endpoints/handlers/patch.go`
/// `applyJSPatch`): at most [`MAX_JSON_PATCH_OPERATIONS`] operations, and `copy` operations
/// adding at most [`JSON_PATCH_MAX_COPY_BYTES`] in all (evanphx/json-patch's
/// `AccumulatedCopySizeLimit`, which the `json-patch` crate does not have: each copy is
/// measured before it is applied).
///
/// # Errors
/// A body that is not a list of operations: 400. More operations than allowed: 413
/// RequestEntityTooLarge. An operation that fails (a `test` that does not match, a path that
/// does not exist, the copy limit): 422 Invalid, worded as upstream's
/// `NewGenericServerResponse(422, …)` ("the server rejected our request due to an error in
/// our request"), with the operation's error appended.
pub(crate) fn json_patch(target: &mut Value, body: &[u8]) -> Result<(), ApiError> {
    let ops: json_patch::Patch = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the simulated API server could not decode the JSON patch: {e}"
        ))
    })?;
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(limits::too_large(&format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let rejected = |why: String| {
        ApiError::custom(
            422,
            "Invalid",
            format!("the server rejected our request due to an error in our request ({why})"),
        )
    };
    let mut work = target.clone();
    let mut copied = 0usize;
    for (i, op) in ops.iter().enumerate() {
        if let json_patch::PatchOperation::Copy(c) = op {
            copied += work.pointer(c.from.as_str()).map_or(0, limits::json_len);
            if copied > JSON_PATCH_MAX_COPY_BYTES {
                return Err(rejected(format!(
                    "operation '/{i}' failed at path '{}': Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}",
                    c.path
                )));
            }
        }
        // `work` is a copy: a failed operation leaves `target` as it was, no undo needed.
        json_patch::patch_unsafe(&mut work, std::slice::from_ref(op)).map_err(|e| {
            rejected(format!(
                "operation '/{i}' failed at path '{}': {}",
                e.path, e.kind
            ))
        })?;
    }
    *target = work;
    Ok(())
}

// ----- server-side apply: field sets -----

/// A field path in `FieldsV1` notation, one segment per step: `f:name` (a map key),
/// `k:{"name":"c"}` (a list element by its merge key), `v:"x"` (a set element), as
/// sigs.k8s.io/structured-merge-diff `fieldpath` writes them.
pub(crate) type FieldPath = Vec<String>;

/// True for fields no manager owns (identity and server-set fields).
fn unowned(path: &[String]) -> bool {
    match path {
        [one] => matches!(one.as_str(), "f:apiVersion" | "f:kind" | "f:status"),
        [m, f] if m == "f:metadata" => matches!(
            f.as_str(),
            "f:name"
                | "f:namespace"
                | "f:uid"
                | "f:resourceVersion"
                | "f:generation"
                | "f:creationTimestamp"
                | "f:deletionTimestamp"
                | "f:deletionGracePeriodSeconds"
                | "f:managedFields"
        ),
        _ => false,
    }
}

/// The fields an applied configuration sets: every leaf (scalar, atomic list, empty map) and
/// every element of a merged list.
pub(crate) fn field_set(applied: &Value) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    let mut path = Vec::new();
    let mut parents = Vec::new();
    collect(applied, &mut path, &mut parents, &mut out);
    out.retain(|p| !p.is_empty() && !(1..=p.len()).any(|n| unowned(&p[..n])));
    out
}

fn collect(v: &Value, path: &mut FieldPath, parents: &mut Vec<String>, out: &mut BTreeSet<FieldPath>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                if k.starts_with('$') {
                    continue;
                }
                path.push(format!("f:{k}"));
                match x {
                    Value::Array(items) => match list_strategy(parents, k) {
                        ListStrategy::Replace => {
                            out.insert(path.clone());
                        }
                        ListStrategy::Set => {
                            for e in items {
                                path.push(format!("v:{e}"));
                                out.insert(path.clone());
                                path.pop();
                            }
                        }
                        ListStrategy::MergeBy(key) => {
                            parents.push(k.clone());
                            for e in items {
                                let Some(kv) = e.get(key) else { continue };
                                path.push(format!("k:{}", json!({ key: kv })));
                                out.insert(path.clone());
                                collect(e, path, parents, out);
                                path.pop();
                            }
                            parents.pop();
                        }
                    },
                    _ => {
                        parents.push(k.clone());
                        collect(x, path, parents, out);
                        parents.pop();
                    }
                }
                path.pop();
            }
        }
        _ => {
            out.insert(path.clone());
        }
    }
}

/// True for a path whose last step is a leaf value (not a merged list's element).
pub(crate) fn is_leaf(path: &[String]) -> bool {
    path.last().is_some_and(|s| !s.starts_with("k:"))
}

/// The value at `path` in `doc`.
pub(crate) fn get_path<'a>(doc: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut cur = doc;
    for seg in path {
        cur = step(cur, seg)?;
    }
    Some(cur)
}

fn matches_seg(e: &Value, seg: &str) -> bool {
    if let Some(k) = seg.strip_prefix("k:") {
        let Ok(Value::Object(key)) = serde_json::from_str::<Value>(k) else {
            return false;
        };
        key.iter().all(|(f, v)| e.get(f) == Some(v))
    } else if let Some(v) = seg.strip_prefix("v:") {
        serde_json::from_str::<Value>(v).is_ok_and(|v| *e == v)
    } else {
        false
    }
}

fn step<'a>(cur: &'a Value, seg: &str) -> Option<&'a Value> {
    match seg.strip_prefix("f:") {
        Some(f) => cur.as_object()?.get(f),
        None => cur.as_array()?.iter().find(|e| matches_seg(e, seg)),
    }
}

/// Removes the field or list element at `path` from `doc` (nothing when absent).
pub(crate) fn remove_path(doc: &mut Value, path: &[String]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    let mut cur = doc;
    for seg in parent {
        let next = match seg.strip_prefix("f:") {
            Some(f) => cur.as_object_mut().and_then(|m| m.get_mut(f)),
            None => cur
                .as_array_mut()
                .and_then(|a| a.iter_mut().find(|e| matches_seg(e, seg))),
        };
        let Some(next) = next else { return };
        cur = next;
    }
    match last.strip_prefix("f:") {
        Some(f) => {
            if let Some(m) = cur.as_object_mut() {
                m.remove(f);
            }
        }
        None => {
            if let Some(a) = cur.as_array_mut() {
                a.retain(|e| !matches_seg(e, last));
            }
        }
    }
}

/// A path as conflict messages print it (`.spec.containers[name="c"].image`).
pub(crate) fn display_path(path: &[String]) -> String {
    let mut s = String::new();
    for seg in path {
        if let Some(f) = seg.strip_prefix("f:") {
            s.push('.');
            s.push_str(f);
        } else if let Some(k) = seg.strip_prefix("k:") {
            let inner = serde_json::from_str::<Value>(k)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .map(|m| {
                    m.iter()
                        .map(|(f, v)| format!("{f}={v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default();
            s.push_str(&format!("[{inner}]"));
        } else if let Some(v) = seg.strip_prefix("v:") {
            s.push_str(&format!("[={v}]"));
        }
    }
    s
}

/// `metadata.managedFields[].fieldsV1` of a field set (list elements get their `"."` entry).
pub(crate) fn fields_v1(fields: &BTreeSet<FieldPath>) -> Value {
    let mut root = Map::new();
    for path in fields {
        let mut cur = &mut root;
        for seg in path {
            let next = cur.entry(seg.clone()).or_insert_with(|| json!({}));
            if !next.is_object() {
                *next = json!({});
            }
            let Value::Object(m) = next else { break };
            if seg.starts_with("k:") && !m.contains_key(".") {
                m.insert(".".into(), json!({}));
            }
            cur = m;
        }
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategic_merge_merges_containers_and_ports_by_key() {
        let mut doc = json!({"spec": {"containers": [
            {"name": "a", "image": "x:1", "ports": [{"containerPort": 80, "name": "http"}]},
            {"name": "b", "image": "y:1"}]}});
        let patch = json!({"spec": {"containers": [
            {"name": "a", "ports": [{"containerPort": 9090, "name": "metrics"}]},
            {"name": "b", "$patch": "delete"},
            {"name": "c", "image": "z:1"}],
            "$setElementOrder/containers": [{"name": "a"}, {"name": "c"}]}});
        strategic_merge(&mut doc, &patch).unwrap();
        assert_eq!(
            doc,
            json!({"spec": {"containers": [
                {"name": "a", "image": "x:1", "ports": [{"containerPort": 80, "name": "http"},
                                                         {"containerPort": 9090, "name": "metrics"}]},
                {"name": "c", "image": "z:1"}]}})
        );
    }

    #[test]
    fn strategic_merge_directives() {
        let mut doc = json!({"metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
                             "spec": {"selector": {"app": "web", "tier": "front"}, "ports": [{"port": 80, "name": "http"}],
                                      "args": ["a", "b"]}});
        let patch = json!({"metadata": {"labels": {"$patch": "replace", "c": "3"}, "finalizers": ["y"],
                                        "$deleteFromPrimitiveList/finalizers": ["x"]},
                           "spec": {"selector": {"$patch": "delete"}, "ports": [{"port": 80, "targetPort": 8080}],
                                    "args": ["c"]}});
        strategic_merge(&mut doc, &patch).unwrap();
        assert_eq!(
            doc,
            json!({"metadata": {"labels": {"c": "3"}, "finalizers": ["y"]},
                   "spec": {"ports": [{"port": 80, "name": "http", "targetPort": 8080}], "args": ["c"]}})
        );
        let mut doc = json!({"spec": {"ports": [{"port": 80}, {"port": 81}]}});
        strategic_merge(
            &mut doc,
            &json!({"spec": {"ports": [{"$patch": "replace"}, {"port": 90}]}}),
        )
        .unwrap();
        assert_eq!(doc, json!({"spec": {"ports": [{"port": 90}]}}));
        let mut doc =
            json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        strategic_merge(
            &mut doc,
            &json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
        )
        .unwrap();
        assert_eq!(doc, json!({"spec": {"strategy": {"type": "Recreate"}}}));
        assert_eq!(
            strategic_merge(&mut doc, &json!({"spec": {"x": {"$patch": "bogus"}}}))
                .unwrap_err()
                .code,
            400
        );
        let mut doc = json!({"spec": {"containers": [{"name": "a"}]}});
        assert_eq!(
            strategic_merge(&mut doc, &json!({"spec": {"containers": [{"image": "x"}]}}))
                .unwrap_err()
                .code,
            400,
            "an element without its merge key"
        );
    }

    #[test]
    fn merge_patch_is_rfc_7386() {
        let mut doc = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        merge_patch(&mut doc, &json!({"a": {"b": null, "c": [3]}, "e": {"f": 1}}));
        assert_eq!(doc, json!({"a": {"c": [3]}, "d": 1, "e": {"f": 1}}));
    }

    #[test]
    fn json_patch_ops_and_failed_test() {
        let mut doc = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"ports": [{"port": 80}]}});
        let ops = json!([
            {"op": "test", "path": "/metadata/labels/a", "value": "1"},
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "copy", "from": "/metadata/labels/b", "path": "/metadata/labels/c"},
            {"op": "move", "from": "/metadata/labels/a", "path": "/metadata/labels/d"},
            {"op": "replace", "path": "/spec/ports/0/port", "value": 81},
            {"op": "remove", "path": "/metadata/labels/b"}]);
        json_patch(&mut doc, ops.to_string().as_bytes()).unwrap();
        assert_eq!(
            doc,
            json!({"metadata": {"labels": {"c": "2", "d": "1"}}, "spec": {"ports": [{"port": 81}]}})
        );
        let before = doc.clone();
        let bad = json!([{"op": "add", "path": "/metadata/labels/e", "value": "5"},
                         {"op": "test", "path": "/metadata/labels/c", "value": "nope"}]);
        let e = json_patch(&mut doc, bad.to_string().as_bytes()).unwrap_err();
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        assert_eq!(doc, before, "atomic: nothing applied");
        assert_eq!(json_patch(&mut doc, b"{}").unwrap_err().code, 400);
    }

    #[test]
    fn field_sets_paths_and_fields_v1() {
        let applied = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "s", "labels": {"app": "x"}},
            "spec": {"ports": [{"port": 80, "targetPort": 8080}], "selector": {"app": "x"}}});
        let set = field_set(&applied);
        let paths: Vec<String> = set.iter().map(|p| display_path(p)).collect();
        assert_eq!(
            paths,
            [
                ".metadata.labels.app",
                ".spec.ports[port=80]",
                ".spec.ports[port=80].port",
                ".spec.ports[port=80].targetPort",
                ".spec.selector.app"
            ]
        );
        let mut doc = applied.clone();
        let port: FieldPath = vec!["f:spec".into(), "f:ports".into(), "k:{\"port\":80}".into()];
        assert_eq!(
            get_path(&doc, &[port.clone(), vec!["f:targetPort".into()]].concat()),
            Some(&json!(8080))
        );
        remove_path(&mut doc, &port);
        assert_eq!(doc["spec"]["ports"], json!([]));
        let v1 = fields_v1(&set);
        assert_eq!(
            v1["f:spec"]["f:ports"]["k:{\"port\":80}"],
            json!({".": {}, "f:port": {}, "f:targetPort": {}})
        );
    }
}
