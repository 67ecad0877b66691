//! Protobuf request bodies (`Content-Type: application/vnd.kubernetes.protobuf`), decoded into
//! the JSON the rest of the server handles.
//!
//! kubectl 1.32 and later send protobuf from their typed clients: `create namespace`,
//! `create deployment`, `create configmap|secret|service|serviceaccount|job|cronjob|pdb|quota|
//! role|ingress|priorityclass|token`, and the `DeleteOptions` of `drain`'s deletions, each with
//! `Accept: application/vnd.kubernetes.protobuf,application/json`. Everything else kubectl
//! sends (`apply`, `create -f`, `expose`, `run`, patches, `delete`) is JSON, and no kubectl
//! 1.27–1.33 request (watches included) accepts protobuf alone: answers stay JSON. (client-go
//! decodes an answer by its `Content-Type`, so a client that accepts only protobuf reads them
//! too.)
//!
//! The body is upstream's envelope (k8s.io/apimachinery
//! `pkg/runtime/serializer/protobuf/protobuf.go`): the 4 bytes `k8s\0`, then a
//! `runtime.Unknown` (`pkg/runtime/generated.proto`: `typeMeta` {apiVersion, kind} = 1,
//! `raw` = 2, `contentEncoding` = 3, `contentType` = 4) whose `raw` is the object's message
//! (`k8s.io/api/<group>/<version>/generated.proto`). The kinds and messages come from
//! [`schema`] (every kind of core/v1, apps/v1, batch/v1, policy/v1, discovery.k8s.io/v1,
//! autoscaling/v1, networking.k8s.io/v1, rbac.authorization.k8s.io/v1, scheduling.k8s.io/v1
//! and authentication.k8s.io/v1, with `Eviction`, `TokenRequest`, `Scale` and `meta.v1`
//! `DeleteOptions`); a body of another kind is answered `415 UnsupportedMediaType` naming it.
//!
//! Each field becomes its Kubernetes JSON name, with the JSON forms of `meta.v1.Time` and
//! `MicroTime` (RFC 3339; `null` when zero, as Go's `Time.MarshalJSON`), `Duration` (Go's
//! `time.Duration` string), `resource.Quantity` (its string), `intstr.IntOrString` (a number
//! or a string), `runtime.RawExtension` and `meta.v1.FieldsV1` (the embedded JSON), `bytes`
//! (base64, as Go's `encoding/json`), and embedded `json:",inline"` structs flattened (a
//! probe's handler, a volume's source).
//!
//! **Absent and zero.** Upstream's generated `Marshal` writes every non-pointer field, zero or
//! not, and a pointer field only when set; the wire does not say which is which. So a field
//! absent from the wire is absent from the JSON (an unset pointer, an empty list or map), an
//! empty optional string is dropped (Go's `omitempty` and an unset `*string` alike; of the
//! decoded kinds only a volume claim's `storageClassName: ""` means something, and no kind the
//! server stores has one), and numbers and booleans are kept
//! as sent, zero included: `replicas: 0`, a `DeleteOptions`' `gracePeriodSeconds: 0` and a
//! toleration's `tolerationSeconds: 0` mean what they say, and the zero of a non-pointer field
//! (`minReadySeconds: 0`, a port's `hostPort: 0`) means what its absence does.

mod schema;
#[cfg(test)]
mod tests;
mod wire;

use http::{HeaderMap, Method, header};
use hyper::body::Bytes;
use serde_json::Value;

use crate::resources::Resource;
use crate::status::ApiError;
use schema::Schema;

/// The media type of Kubernetes protobuf bodies.
pub(crate) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The envelope's first bytes (`protoEncodingPrefix`).
const MAGIC: &[u8] = b"k8s\0";

/// Whether a `Content-Type` is Kubernetes protobuf (parameters ignored).
pub(crate) fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(MEDIA_TYPE))
}

/// The body a verb on `r` (or its subresource `sub`) reads: a protobuf body as its JSON, any
/// other body as it is.
pub(crate) fn json_body(
    method: &Method,
    headers: &HeaderMap,
    sub: Option<&str>,
    r: &Resource,
    body: &Bytes,
) -> Result<Bytes, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    // No body (a GET, a DELETE without options) has nothing to decode.
    if !is_protobuf(content_type) || body.is_empty() {
        return Ok(body.clone());
    }
    let expected = match (method.as_str(), sub) {
        ("DELETE", _) => ("v1".to_string(), "DeleteOptions"),
        (_, Some("scale")) => ("autoscaling/v1".to_string(), "Scale"),
        _ => (r.api_version(), r.kind_name),
    };
    let v = to_json(body, (&expected.0, expected.1))?;
    let json = serde_json::to_vec(&v).map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Bytes::from(json))
}

/// The JSON object of a protobuf body. `expected` (apiVersion, kind) stands in for an envelope
/// that leaves them out (upstream's `copyKindDefaults` from the request's kind); the object
/// gets `apiVersion` and `kind` from the envelope, as the JSON form carries them.
///
/// # Errors
/// `400 BadRequest` for a body that is not a well-formed envelope or message, `415
/// UnsupportedMediaType` for a kind the schema does not have or an encoded `raw`.
pub(crate) fn to_json(body: &[u8], expected: (&str, &str)) -> Result<Value, ApiError> {
    let bad = |why: String| {
        ApiError::bad_request(format!(
            "the simulated API server could not decode the protobuf body: {why}"
        ))
    };
    let data = match body.strip_prefix(MAGIC) {
        None => {
            return Err(bad(format!(
                "provided data does not appear to be a protobuf message, expected prefix {:?}",
                MAGIC
            )));
        }
        Some([]) => return Err(bad("empty body".into())),
        Some(data) => data,
    };
    let unknown = wire::envelope(data).map_err(bad)?;
    let api_version = if unknown.api_version.is_empty() {
        expected.0
    } else {
        &unknown.api_version
    };
    let kind = if unknown.kind.is_empty() {
        expected.1
    } else {
        &unknown.kind
    };
    if !unknown.content_encoding.is_empty() {
        return Err(unsupported(&format!(
            "a protobuf body with contentEncoding {:?}",
            unknown.content_encoding
        )));
    }
    let schema = Schema::get();
    let Some(message) = schema.kind(api_version, kind) else {
        return Err(unsupported(&format!(
            "kind {kind} (apiVersion {api_version}) in protobuf: the simulated API server decodes protobuf bodies of built-in kinds only; send it as JSON"
        )));
    };
    let mut v = wire::decode(schema, message, unknown.raw).map_err(bad)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("apiVersion".into(), api_version.into());
        obj.insert("kind".into(), kind.into());
    }
    Ok(v)
}

/// `415 UnsupportedMediaType` for what the protobuf decoder does not read.
fn unsupported(what: &str) -> ApiError {
    ApiError::custom(
        415,
        "UnsupportedMediaType",
        format!(
            "the body of the request was in an unknown format - accepted media types include: application/json, {MEDIA_TYPE} (simulated API server: {what})"
        ),
    )
}
