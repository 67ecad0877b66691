//! The HTTP layer's parts: request bodies read within [`MAX_REQUEST_BODY_BYTES`],
//! content negotiation of create, update and delete bodies, query parameters, and the
//! answers' framing (whole or streamed, with the headers every answer carries).

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{HeaderMap, Method, Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::{Bytes, Frame, Incoming};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::SERVER_HEADER;
use crate::limits::{self, MAX_REQUEST_BODY_BYTES};
use crate::protobuf;
use crate::status::ApiError;

/// A response body: all at once, a stream of chunks (followed logs, ConfigMap watches), or a
/// watch's queue bounded in bytes ([`crate::watch_queue`]).
pub(crate) enum Body {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
    Queued(crate::watch_queue::Receiver),
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut *self {
            Body::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            // The event's room in the queue is given back as hyper takes it.
            Body::Queued(rx) => rx.poll_recv(cx).map(|o| o.map(|(b, _room)| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            Body::Full(Some(b)) => hyper::body::SizeHint::with_exact(b.len() as u64),
            Body::Full(None) => hyper::body::SizeHint::with_exact(0),
            Body::Stream(_) | Body::Queued(_) => hyper::body::SizeHint::default(),
        }
    }
}

pub(crate) fn response(code: u16, content_type: &str, body: Bytes) -> Response<Body> {
    let mut r = Response::new(Body::Full(Some(body)));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    if let Ok(v) = content_type.parse() {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(header::SERVER, http::HeaderValue::from_static(SERVER_HEADER));
    h.insert("x-locality-simulated", http::HeaderValue::from_static("true"));
    r
}

pub(crate) fn json_response(code: u16, v: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(v).unwrap_or_default();
    response(code, "application/json", Bytes::from(bytes))
}

pub(crate) fn error_response(e: &ApiError) -> Response<Body> {
    json_response(e.code, &e.to_status())
}

/// A whole JSON answer in the form the client asked for ([`protobuf::negotiate`]): as it is
/// for JSON, for a streamed answer and for a kind protobuf does not carry (a `Table`,
/// discovery documents; the client also accepts JSON, or kubectl and client-go would not
/// have asked for those); otherwise in the protobuf envelope, errors (`Status`) included, as
/// the real API server answers a client that prefers protobuf.
pub(crate) fn in_form(output: protobuf::Output, answer: Response<Body>) -> Response<Body> {
    let json = answer
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == b"application/json");
    if output != protobuf::Output::Protobuf || !json {
        return answer;
    }
    let (mut parts, body) = answer.into_parts();
    let Body::Full(Some(bytes)) = body else {
        return Response::from_parts(parts, body);
    };
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::Full(Some(bytes)));
    };
    match protobuf::envelope(&v) {
        None => Response::from_parts(parts, Body::Full(Some(bytes))),
        Some(Ok(pb)) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static(protobuf::MEDIA_TYPE),
            );
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::Full(Some(Bytes::from(pb))))
        }
        Some(Err(why)) => error_response(&ApiError::internal(format!(
            "the simulated API server could not write its answer in protobuf: {why}"
        ))),
    }
}

/// Query parameters, percent-decoded.
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    pub(crate) fn parse(q: Option<&str>) -> Query {
        Query(
            form_urlencoded::parse(q.unwrap_or_default().as_bytes())
                .into_owned()
                .collect(),
        )
    }

    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str)
    }

    pub(crate) fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("1" | "true" | ""))
    }
}

/// A percent-decoded path segment (`+` stays `+`: it means a space only in a query).
pub(crate) fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// A streamed answer (a watch, a followed log) of `content_type`, with the headers every
/// answer of the simulated server carries.
pub(crate) fn stream_response(rx: mpsc::Receiver<Bytes>, content_type: &'static str) -> Response<Body> {
    streamed(Body::Stream(rx), content_type)
}

/// A streamed answer of any streaming `body`, with the headers every answer carries.
pub(crate) fn streamed(body: Body, content_type: &'static str) -> Response<Body> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    h.insert(header::SERVER, http::HeaderValue::from_static(SERVER_HEADER));
    h.insert("x-locality-simulated", http::HeaderValue::from_static("true"));
    r
}

pub(crate) fn line(v: &Value) -> Bytes {
    let mut b = serde_json::to_vec(v).unwrap_or_default();
    b.push(b'\n');
    Bytes::from(b)
}

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
