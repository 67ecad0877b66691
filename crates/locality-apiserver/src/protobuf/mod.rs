//! Protobuf (`application/vnd.kubernetes.protobuf`): request bodies decoded into the JSON
//! the rest of the server handles, and answers and watches written in protobuf for a client
//! that prefers it.
//!
//! kubectl 1.32 and later send protobuf from their typed clients: `create namespace`,
//! `create deployment`, `create configmap|secret|service|serviceaccount|job|cronjob|pdb|quota|
//! role|ingress|priorityclass|token`, and the `DeleteOptions` of `drain`'s deletions, each with
//! `Accept: application/vnd.kubernetes.protobuf,application/json`; their `describe`, `drain`
//! and `events` read through the same typed clients. Everything else kubectl sends (`apply`,
//! `create -f`, `expose`, `run`, patches, `delete`, `get`'s tables) is JSON. Answers follow
//! [`negotiate`] as the real API server's do: a client that prefers protobuf gets objects,
//! lists and errors (`Status`) in the envelope below, and watches as length-delimited
//! `WatchEvent` frames ([`watch_frame`]); tables and discovery stay JSON.
//!
//! A body is upstream's envelope (k8s.io/apimachinery
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

mod encode;
mod list;
mod schema;
pub(crate) use list::ListEncoder;
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

/// The media type of a protobuf watch (length-delimited `WatchEvent` frames).
pub(crate) const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The form of an answer, from the request's `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Output {
    Json,
    Protobuf,
}

/// The form a client asked for (k8s.io/apiserver `pkg/endpoints/handlers/negotiation`
/// `NegotiateOutputMediaType`): the media ranges of `Accept` by quality, then order; the
/// first the server writes wins. Protobuf is written for objects (a media range without an
/// `as=` conversion such as `as=Table`, which stays JSON); JSON for `application/json`,
/// `application/*` and `*/*`, and when nothing matches (no `Accept`, or only types the
/// simulated server does not write, such as YAML).
pub(crate) fn negotiate(headers: &HeaderMap) -> Output {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Output::Json;
    };
    let mut ranges: Vec<(f32, usize, Option<Output>)> = accept
        .split(',')
        .enumerate()
        .map(|(i, range)| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default().to_ascii_lowercase();
            let mut q = 1.0f32;
            let mut conversion = false;
            for p in parts {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                match k.trim() {
                    "q" => q = v.trim().parse().unwrap_or(0.0),
                    "as" => conversion = true,
                    _ => {}
                }
            }
            let out = match media.as_str() {
                MEDIA_TYPE if !conversion => Some(Output::Protobuf),
                "application/json" | "application/*" | "*/*" => Some(Output::Json),
                _ => None,
            };
            (q, i, out)
        })
        .filter(|(q, _, _)| *q > 0.0)
        .collect();
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranges.into_iter().find_map(|(_, _, o)| o).unwrap_or(Output::Json)
}

/// `v` (an object with its `apiVersion` and `kind`) in the envelope, or `None` for a kind the
/// schema does not have (a `Table`, discovery documents: written as JSON).
///
/// # Errors
/// A value that does not fit its kind's message (a bug of the server): the field.
pub(crate) fn envelope(v: &Value) -> Option<Result<Vec<u8>, String>> {
    let api_version = v.get("apiVersion")?.as_str()?;
    let kind = v.get("kind")?.as_str()?;
    let schema = Schema::get();
    let m = schema.kind(api_version, kind)?;
    Some(encode::encode(schema, m, v).map(|raw| {
        let mut type_meta = Vec::new();
        encode::field_bytes(&mut type_meta, 1, api_version.as_bytes());
        encode::field_bytes(&mut type_meta, 2, kind.as_bytes());
        let mut out = MAGIC.to_vec();
        encode::field_bytes(&mut out, 1, &type_meta);
        encode::field_bytes(&mut out, 2, &raw);
        out
    }))
}

/// One frame of a protobuf watch: the 4-byte big-endian length, then a `meta.v1.WatchEvent`
/// (`type` = 1, `object` = 2, a `RawExtension` whose `raw` is the object in its envelope),
/// without an envelope of its own (k8s.io/apimachinery `pkg/runtime/serializer/protobuf`
/// `LengthDelimitedFramer` over the raw serializer, `pkg/apis/meta/v1/generated.proto`).
///
/// # Errors
/// As [`envelope`]; an object of a kind the schema lacks.
pub(crate) fn watch_frame(event_type: &str, object: &Value) -> Result<Bytes, String> {
    let raw = match envelope(object) {
        Some(r) => r?,
        None => return Err(format!("no protobuf message for {}", object["kind"])),
    };
    let mut extension = Vec::new();
    encode::field_bytes(&mut extension, 1, &raw);
    let mut event = Vec::new();
    encode::field_bytes(&mut event, 1, event_type.as_bytes());
    encode::field_bytes(&mut event, 2, &extension);
    let mut frame = (event.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&event);
    Ok(Bytes::from(frame))
}
