//! The field sets of server-side apply: which fields an applied configuration owns, in
//! sigs.k8s.io/structured-merge-diff `FieldsV1` notation.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::strategic::{ListStrategy, list_strategy};

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
