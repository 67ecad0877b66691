//! Server-side apply (`application/apply-patch+yaml`), simplified from
//! sigs.k8s.io/structured-merge-diff: the applied body, the apply managers and their field
//! sets (`managedFields`), conflicts and the merge (see the `write` module docs).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::Sim;
use crate::encode::MANAGED_FIELDS_KEY;
use crate::patch::{self, FieldPath};
use crate::status::ApiError;
use crate::target::Target;

/// An apply patch's body: YAML (or JSON, which is YAML) holding one object.
pub(crate) fn apply_body(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?
        }
    };
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "error decoding patch: an apply patch must be an object",
        ));
    }
    for k in ["apiVersion", "kind"] {
        if v.get(k).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(ApiError::bad_request(format!(
                "error decoding patch: {k} must be set in an apply patch"
            )));
        }
    }
    Ok(v)
}

/// The apply managers of an object (its raw JSON's `managedFields` entries).
pub(crate) fn managers_of(sim: &Sim, uid: &str) -> Vec<Value> {
    sim.raw
        .get(uid)
        .and_then(|r| r.get(MANAGED_FIELDS_KEY))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn fields_of(entry: &Value) -> BTreeSet<FieldPath> {
    entry["x-fields"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| serde_json::from_value::<FieldPath>(p.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn set_fields(entry: &mut Value, fields: &BTreeSet<FieldPath>) {
    entry["fieldsV1"] = patch::fields_v1(fields);
    entry["x-fields"] = json!(fields);
}

/// A `managedFields` entry for an apply by `manager` owning `fields`.
pub(crate) fn manager_entry(sim: &Sim, t: &Target, manager: &str, fields: &BTreeSet<FieldPath>) -> Value {
    let mut e = json!({
        "manager": manager,
        "operation": "Apply",
        "apiVersion": t.r.api_version(),
        "time": locality_sim::time::rfc3339(sim.engine.now()),
        "fieldsType": "FieldsV1",
    });
    set_fields(&mut e, fields);
    e
}

/// Server-side apply of `applied` by `manager` to `doc` (the object as served): conflicts,
/// removal of the fields the manager stopped applying, then the merge (see the module docs).
pub(crate) fn apply(
    t: &Target,
    name: &str,
    mut doc: Value,
    applied: &Value,
    manager: &str,
    force: bool,
    managers: &mut [Value],
) -> Result<Value, ApiError> {
    let new_set = patch::field_set(applied);
    let mut conflicts: Vec<(String, FieldPath)> = Vec::new();
    for path in new_set.iter().filter(|p| patch::is_leaf(p)) {
        let now = patch::get_path(&doc, path);
        if now.is_none() || now == patch::get_path(applied, path) {
            continue;
        }
        for m in managers.iter() {
            let other = m["manager"].as_str().unwrap_or_default();
            if other != manager && fields_of(m).contains(path) {
                conflicts.push((other.to_string(), path.clone()));
            }
        }
    }
    if !conflicts.is_empty() {
        if !force {
            return Err(apply_conflict(t, name, &conflicts));
        }
        for m in managers.iter_mut() {
            let mut fields = fields_of(m);
            let before = fields.len();
            fields.retain(|p| !conflicts.iter().any(|(_, c)| c == p));
            if fields.len() != before {
                set_fields(m, &fields);
            }
        }
    }
    let previous = managers
        .iter()
        .find(|m| m["manager"].as_str() == Some(manager))
        .map(fields_of)
        .unwrap_or_default();
    let shared_with_others = |p: &FieldPath| {
        managers
            .iter()
            .filter(|m| m["manager"].as_str() != Some(manager))
            .any(|m| fields_of(m).contains(p))
    };
    let mut dropped: Vec<&FieldPath> = previous.difference(&new_set).collect();
    dropped.sort_by_key(|p| p.len());
    for path in dropped {
        if new_set.iter().any(|n| n.starts_with(path)) || shared_with_others(path) {
            continue;
        }
        patch::remove_path(&mut doc, path);
    }
    patch::strategic_merge(&mut doc, applied)?;
    Ok(doc)
}

/// `409 Conflict` of an apply (k8s.io/apiserver `pkg/endpoints/handlers/fieldmanager`
/// `internal.NewConflictError`).
fn apply_conflict(t: &Target, name: &str, conflicts: &[(String, FieldPath)]) -> ApiError {
    let message = if let [(m, p)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with \"{m}\": {}",
            patch::display_path(p)
        )
    } else {
        let mut by: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (m, p) in conflicts {
            by.entry(m.as_str()).or_default().push(patch::display_path(p));
        }
        let parts: Vec<String> = by
            .iter()
            .map(|(m, ps)| {
                let mut s = format!("conflict with \"{m}\"");
                for p in ps {
                    s.push_str(&format!("\n- {p}"));
                }
                s
            })
            .collect();
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            parts.join("\n")
        )
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(m, p)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with \"{m}\""), "field": patch::display_path(p)}))
        .collect();
    let mut e = ApiError::custom(409, "Conflict", message);
    e.details = Some(json!({"name": name, "group": t.r.group, "kind": t.r.plural, "causes": causes}));
    e
}
