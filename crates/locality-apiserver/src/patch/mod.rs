//! Patches over an object's JSON as the API serves it: JSON merge patch (RFC 7386), strategic
//! merge patch, JSON patch (RFC 6902, with the `json-patch` crate) and the field sets of
//! server-side apply.
//!
//! Mirrors k8s.io/apiserver `pkg/endpoints/handlers/patch.go` (which patch type does what, and
//! the status codes of failures) and k8s.io/apimachinery `pkg/util/strategicpatch/patch.go`
//! (the strategic merge), written for the kinds the simulated API server serves.//!
//! Strategic merge patch is [`strategic`], the field sets of server-side apply [`fields`].

use serde_json::Value;

use crate::limits::{self, JSON_PATCH_MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS};
use crate::status::ApiError;

mod fields;
mod strategic;

pub(crate) use fields::{FieldPath, display_path, field_set, fields_v1, get_path, is_leaf, remove_path};
pub(crate) use strategic::strategic_merge;

/// RFC 7386 JSON merge patch (k8s.io/apiserver `patch.go`, `types.MergePatchType`): objects
/// merge, `null` removes, anything else replaces; keys starting with `$` are plain keys.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    json_patch::merge(target, patch);
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
}
