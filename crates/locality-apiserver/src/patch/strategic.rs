//! Strategic merge patch over an object's JSON (k8s.io/apimachinery
//! `pkg/util/strategicpatch/patch.go`), for the kinds the simulated API server serves.
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

#[cfg(test)]
mod tests {
    use serde_json::json;

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
}
