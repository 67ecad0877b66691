//! The HTTP layer's limits and content negotiation: request bodies read within
//! [`MAX_REQUEST_BODY_BYTES`], which requests are long-running (not bounded by the request
//! timeout), and the media types a create, update or delete body may have.

use http::{HeaderMap, Method, header};
use http_body_util::BodyExt;
use hyper::body::{Bytes, Incoming};
use serde_json::Value;

use crate::limits::{self, MAX_REQUEST_BODY_BYTES};
use crate::protobuf;
use crate::server::Query;
use crate::status::ApiError;

/// Bytes of a refused body still read (and dropped) after its answer, so the client reads
/// the answer instead of a reset connection: 256 KiB, Go's `net/http`
/// `maxPostHandlerReadBytes`, which the real API server's `http.Server` drains likewise.
const MAX_DRAIN_BYTES: usize = 256 << 10;

/// The media types of create, update and delete bodies (k8s.io/apiserver
/// `pkg/endpoints/handlers/negotiation` `NegotiateInputSerializer` over the serializers of
/// built-in kinds).
pub(crate) const BODY_TYPES: &[&str] = &["application/json", "application/yaml", protobuf::MEDIA_TYPE];

/// Reads a request body of at most [`MAX_REQUEST_BODY_BYTES`].
///
/// # Errors
/// A body declared (`Content-Length`) or found larger: `413 RequestEntityTooLarge`, as
/// k8s.io/apiserver `pkg/endpoints/handlers/rest.go` `limitedReadBody`; a body that cannot be
/// read: 400.
pub(crate) async fn read_body(headers: &HeaderMap, mut body: Incoming) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_REQUEST_BODY_BYTES as u64) {
        return Err(limits::body_too_large());
    }
    let mut out: Vec<u8> = Vec::new();
    let mut over = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ApiError::bad_request(format!("cannot read the request body: {e}")))?;
        let Ok(data) = frame.into_data() else { continue };
        if over == 0 && out.len() + data.len() <= MAX_REQUEST_BODY_BYTES {
            out.extend_from_slice(&data);
            continue;
        }
        over += data.len();
        if over > MAX_DRAIN_BYTES {
            break;
        }
    }
    if over > 0 {
        return Err(limits::body_too_large());
    }
    Ok(Bytes::from(out))
}

/// Whether a request is long-running, so not bounded by the request timeout: watches and the
/// `pods/log` and `pods/proxy` subresources (kube-apiserver's `LongRunningFunc`: verbs
/// `watch` and `proxy`, subresources `attach`, `exec`, `proxy`, `log`, `portforward`).
pub(crate) fn is_long_running(method: &Method, segs: &[&str], q: &Query) -> bool {
    if *method == Method::GET && q.get("watch").is_some() && q.flag("watch") {
        return true;
    }
    matches!(
        segs,
        ["api", "v1", "namespaces", _, "pods", _, "log" | "proxy", ..]
    )
}

/// The media type of a `Content-Type` (parameters dropped, lower case); empty when absent.
pub(crate) fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The body of a create, update or delete as JSON or protobuf (decoded later): JSON (also
/// when no `Content-Type` is sent, as upstream takes the first serializer) and protobuf as
/// they are, YAML converted to JSON. Patches negotiate their own types.
///
/// # Errors
/// Another media type: `415 UnsupportedMediaType` listing [`BODY_TYPES`]
/// (`negotiation.NewUnsupportedMediaTypeError`); YAML that does not parse: 400.
pub(crate) fn negotiate_body(method: &Method, headers: &HeaderMap, body: Bytes) -> Result<Bytes, ApiError> {
    if !matches!(*method, Method::POST | Method::PUT | Method::DELETE) || body.is_empty() {
        return Ok(body);
    }
    match media_type(headers).as_str() {
        "" | "application/json" => Ok(body),
        t if t == protobuf::MEDIA_TYPE => Ok(body),
        "application/yaml" => {
            let text = std::str::from_utf8(&body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
            let v: Value = serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
            let json = serde_json::to_vec(&v).map_err(|e| ApiError::internal(e.to_string()))?;
            Ok(Bytes::from(json))
        }
        _ => {
            let raw = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            Err(ApiError::unsupported_media_type(raw, BODY_TYPES))
        }
    }
}
