//! The HTTP server: routing, the REST verbs, watches and the virtual-clock driver.

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use hyper::body::{Bytes, Frame, Incoming};
use locality_sim::store::{EventType, StoreError};
use locality_sim::{Kind, Object, ObjectKey, SimError};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::encode::{self, Ctx};
use crate::filter::{LastSeen, filter};
use crate::resources::{self, Resource};
use crate::status::ApiError;
use crate::{SERVER_HEADER, Shared, Sim, discovery, table, write};

/// A response body: all at once, or a stream of chunks (watches).
pub(crate) enum Body {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
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
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            Body::Full(Some(b)) => hyper::body::SizeHint::with_exact(b.len() as u64),
            Body::Full(None) => hyper::body::SizeHint::with_exact(0),
            Body::Stream(_) => hyper::body::SizeHint::default(),
        }
    }
}

/// Accepts connections until `stop`, and drives the virtual clock.
pub(crate) async fn run(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let driver = shared.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            let mut sim = driver.lock();
            sim.catch_up();
            driver.notify(&sim);
        }
    });
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                let header_timeout = shared.limits.header_read_timeout;
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let shared = shared.clone();
                        async move { with_faults(shared, req).await }
                    });
                    // A client that sends no request head in time is disconnected
                    // (`HEADER_READ_TIMEOUT`; hyper also applies it between requests).
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(header_timeout)
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
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

/// Query parameters, percent-decoded.
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    fn parse(q: Option<&str>) -> Query {
        let mut m = HashMap::new();
        for pair in q.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            m.insert(percent_decode(k), percent_decode(v));
        }
        Query(m)
    }

    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str)
    }

    pub(crate) fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("1" | "true" | ""))
    }
}

pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A request for a resource: which, where, what.
pub(crate) struct Target {
    /// The resource.
    pub(crate) r: &'static Resource,
    /// The namespace in the path, if any.
    pub(crate) namespace: Option<String>,
    /// The object's name, if any.
    pub(crate) name: Option<String>,
    /// The subresource, if any.
    pub(crate) sub: Option<String>,
}

/// `/api/v1/...` or `/apis/{g}/{v}/...` after the prefix.
fn parse_target(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let (namespace, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some((*ns).to_string()), tail),
        _ => (None, rest),
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some((*n).to_string()), None),
        [p, n, s] => (*p, Some((*n).to_string()), Some((*s).to_string())),
        _ => return None,
    };
    let r = resources::find(group, version, plural)?;
    if namespace.is_some() && !r.namespaced {
        return None;
    }
    Some(Target {
        r,
        namespace,
        name,
        sub,
    })
}

/// An injected dropped connection: hyper closes the connection without answering.
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by fault injection (simulated)")
    }
}

impl std::error::Error for Dropped {}

/// Applies the configured faults (latency, drops, 5xx, 409 on create), then [`handle`].
async fn with_faults(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, Dropped> {
    {
        // Bounded: a long-running server keeps the first requests only.
        let mut log = shared
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if log.len() < crate::MAX_REQUEST_LOG {
            log.push((req.method().to_string(), req.uri().to_string()));
        }
    }
    // A round trip: half the latency on the way in, half on the way out (so what a client
    // reads is already that old when it arrives, as over a real network).
    let half = shared.injector.faults.latency / 2;
    if !half.is_zero() {
        tokio::time::sleep(half).await;
    }
    let answer = faulted(shared, req).await;
    if !half.is_zero() {
        tokio::time::sleep(half).await;
    }
    answer
}

/// The injected fault's answer, else [`handle`]'s.
async fn faulted(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, Dropped> {
    let faults = &shared.injector.faults;
    let segs: Vec<&str> = req.uri().path().split('/').filter(|s| !s.is_empty()).collect();
    let watch = Query::parse(req.uri().query()).flag("watch");
    if let Some(verb) = crate::faults::classify(req.method(), &segs, watch) {
        match shared.injector.decide(verb) {
            crate::faults::Decision::Serve => {}
            crate::faults::Decision::Drop => return Err(Dropped),
            crate::faults::Decision::Error => {
                let (code, reason) = faults.code_and_reason();
                return Ok(error_response(&ApiError::custom(
                    code,
                    reason,
                    format!(
                        "Internal error occurred: injected fault: {code} for {} (simulated API server)",
                        verb.as_str()
                    ),
                )));
            }
            crate::faults::Decision::Conflict => {
                let plural = segs.last().copied().unwrap_or_default();
                return Ok(error_response(&ApiError::custom(
                    409,
                    "Conflict",
                    format!(
                        "Operation cannot be fulfilled on {plural}: the object has been modified; please apply your changes to the latest version and try again (injected fault, simulated API server)"
                    ),
                )));
            }
        }
    }
    Ok(handle(Arc::clone(&shared), req).await)
}

/// [`route`] within the request timeout, unless the request is long-running (see
/// [`crate::limits::REQUEST_TIMEOUT`]).
async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let segs: Vec<&str> = req.uri().path().split('/').filter(|s| !s.is_empty()).collect();
    let long_running = crate::http::is_long_running(req.method(), &segs, &Query::parse(req.uri().query()));
    let limit = shared.limits.request_timeout;
    if long_running {
        return route(shared, req).await;
    }
    match tokio::time::timeout(limit, route(shared, req)).await {
        Ok(r) => r,
        Err(_) => error_response(&crate::limits::request_timed_out()),
    }
}

/// Reads the body and answers the request.
async fn route(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = Query::parse(parts.uri.query());
    let body = match crate::http::read_body(&parts.headers, body).await {
        Ok(b) => b,
        Err(e) => {
            // The rest of the body is not read: the connection cannot carry another request
            // (Go's server likewise closes it after a too-large body).
            let mut r = error_response(&e);
            r.headers_mut()
                .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
            return r;
        }
    };
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let method = parts.method.clone();
    let get = method == Method::GET;
    let result = match segs.as_slice() {
        ["version"] if get => Ok(json_response(
            200,
            &discovery::version(shared.lock().engine.config().kube_version),
        )),
        ["healthz" | "livez" | "readyz"] if get => Ok(response(200, "text/plain", Bytes::from_static(b"ok"))),
        ["api"] if get => Ok(json_response(
            200,
            &discovery::core_versions(&shared.addr.to_string()),
        )),
        ["apis"] if get => Ok(json_response(200, &discovery::groups())),
        ["apis", g] if get => discovery::group_doc(g)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["api", v] if get => discovery::resource_list("", v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["apis", g, v] if get => discovery::resource_list(g, v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["openapi", "v3"] if get => Ok(json_response(200, &discovery::openapi_v3_root())),
        ["openapi", "v3", "api", v] if get => discovery::openapi_v3_group_version("", v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["openapi", "v3", "apis", g, v] if get => discovery::openapi_v3_group_version(g, v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        // An empty OpenAPI v2 document (protobuf of no fields): kubectl's fallback validation
        // finds no schema and skips client-side checks.
        ["openapi", "v2"] if get => Ok(response(
            200,
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
            Bytes::new(),
        )),
        ["api", "v1", "namespaces", ns, "pods", name, "log"] if get => {
            crate::logs::pods_log(&shared, ns, name, &query)
        }
        ["api", "v1", "namespaces", ns, "pods", id, "proxy", ..] => {
            let marker = format!("/{id}/proxy");
            let tail = path.find(&marker).map_or("", |i| &path[i + marker.len()..]);
            crate::proxy::pods_proxy(
                &shared,
                &method,
                ns,
                id,
                tail,
                parts.uri.query().unwrap_or_default(),
            )
            .await
        }
        ["api", v, rest @ ..] => match parse_target("", v, rest) {
            Some(t) => resource(&shared, &method, &parts.headers, &query, t, &body).await,
            None => Err(ApiError::no_route(&path)),
        },
        ["apis", g, v, rest @ ..] => match parse_target(g, v, rest) {
            Some(t) => resource(&shared, &method, &parts.headers, &query, t, &body).await,
            None => Err(ApiError::no_route(&path)),
        },
        _ => Err(ApiError::no_route(&path)),
    };
    result.unwrap_or_else(|e| error_response(&e))
}

/// How the client wants objects: plain JSON or a `Table`, and what rows carry.
#[derive(Clone, Copy)]
struct Want {
    table: bool,
    include: Include,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Include {
    None,
    Metadata,
    Object,
}

fn want(headers: &HeaderMap, q: &Query) -> Want {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let table = accept.split(',').any(|a| a.contains("as=Table"));
    let include = match q.get("includeObject") {
        Some("Object") => Include::Object,
        Some("None") => Include::None,
        _ => Include::Metadata,
    };
    Want { table, include }
}

async fn resource(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    q: &Query,
    t: Target,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let want = want(headers, q);
    if t.r.plural == "configmaps" {
        return crate::configmaps::request(shared, method, &t, q, want.table);
    }
    let body = crate::http::negotiate_body(method, headers, body.clone())?;
    let body = &crate::protobuf::json_body(method, headers, t.sub.as_deref(), t.r, &body)?;
    if t.sub.as_deref() == Some("scale") && matches!(t.r.kind, Some(Kind::Deployment | Kind::ReplicaSet)) {
        return scale(shared, method, headers, &t, body);
    }
    if t.sub.as_deref().is_some_and(|s| s != "status") {
        return Err(ApiError::no_route(&format!(
            "{}/{}: subresource not served by the simulated API server",
            t.r.plural,
            t.sub.as_deref().unwrap_or_default()
        )));
    }
    match (method.as_str(), &t.name) {
        ("GET", None) if q.flag("watch") && q.get("watch").is_some() => watch(shared, &t, q, want).await,
        ("GET", None) => list(shared, &t, q, want),
        ("GET", Some(name)) => get(shared, &t, name, want),
        ("POST", None) => write::create(shared, &t, q, body),
        ("PUT", Some(name)) if t.sub.is_none() => write::update(shared, &t, name, q, body),
        ("PATCH", Some(name)) if t.sub.is_none() => write::patch(shared, &t, name, headers, q, body),
        ("DELETE", Some(name)) if t.sub.is_none() => write::delete(shared, &t, name, q, body),
        _ => Err(ApiError::method_not_allowed(method.as_str(), t.r.plural)),
    }
}

fn store_kind(t: &Target) -> Option<Kind> {
    t.r.kind
}

pub(crate) fn key_of(t: &Target, kind: Kind, name: &str) -> ObjectKey {
    let ns = if t.r.namespaced {
        t.namespace.clone().unwrap_or_default()
    } else {
        String::new()
    };
    ObjectKey::new(kind, ns, name)
}

pub(crate) fn map_sim_error(t: &Target, name: &str, e: SimError) -> ApiError {
    let r = t.r;
    match e {
        SimError::Store(StoreError::AlreadyExists(_)) => ApiError::already_exists(r.plural, r.group, name),
        SimError::Store(StoreError::NotFound(k))
            if k.kind == Kind::Namespace && r.kind != Some(Kind::Namespace) =>
        {
            ApiError::not_found("namespaces", "", &k.name)
        }
        SimError::Store(StoreError::NotFound(_)) => ApiError::not_found(r.plural, r.group, name),
        SimError::Store(StoreError::Conflict { given, current, .. }) => ApiError::conflict(
            r.plural,
            r.group,
            name,
            &format!(
                "the object has been modified; please apply your changes to the latest version and try again (resourceVersion {given}, current {current})"
            ),
        ),
        SimError::Store(StoreError::Invalid(m)) => ApiError::invalid(r.kind_name, r.group, name, &m),
        SimError::Store(StoreError::Gone { .. }) => ApiError::gone(e.to_string()),
        SimError::Store(StoreError::NamespaceTerminating(ns)) => {
            // NamespaceLifecycle admission (k8s.io/apiserver
            // `pkg/admission/plugin/namespace/lifecycle/admission.go` `Admit`): Forbidden with
            // the cause `NamespaceTerminating`.
            let mut e = ApiError::custom(
                403,
                "Forbidden",
                format!(
                    "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                    r.qualified()
                ),
            );
            e.details = Some(json!({
                "name": name, "group": r.group, "kind": r.plural,
                "causes": [{"reason": "NamespaceTerminating",
                            "message": format!("namespace {ns} is being terminated"),
                            "field": "metadata.namespace"}],
            }));
            e
        }
        other => ApiError::invalid(r.kind_name, r.group, name, &other.to_string()),
    }
}

fn list_kind(t: &Target) -> String {
    format!("{}List", t.r.kind_name)
}

/// `Table` JSON for objects (each with its resourceVersion).
fn table_of(
    ctx: &Ctx<'_>,
    t: &Target,
    items: &[(Arc<Object>, u64)],
    want: Want,
    now: u64,
    list_meta: Value,
) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|(o, rv)| {
            let encoded = encode::encode(ctx, o, *rv);
            let mut row = json!({"cells": table::cells(o, &encoded, now)});
            match want.include {
                Include::Object => row["object"] = encoded,
                Include::Metadata => {
                    row["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                           "metadata": encoded["metadata"]});
                }
                Include::None => {}
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": table::column_definitions(t.r.kind),
        "rows": rows,
    })
}

fn get(shared: &Arc<Shared>, t: &Target, name: &str, want: Want) -> Result<Response<Body>, ApiError> {
    let sim = shared.lock();
    let not_found = || ApiError::not_found(t.r.plural, t.r.group, name);
    let kind = store_kind(t).ok_or_else(not_found)?;
    let key = key_of(t, kind, name);
    let stored = sim.engine.store().get(&key).ok_or_else(not_found)?;
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    let v = if want.table {
        let rv = stored.resource_version;
        table_of(
            &ctx,
            t,
            &[(stored.object.clone(), rv)],
            want,
            sim.engine.now(),
            json!({"resourceVersion": rv.to_string()}),
        )
    } else {
        encode::encode(&ctx, &stored.object, stored.resource_version)
    };
    Ok(json_response(200, &v))
}

/// `continue` token: the resourceVersion and the last key returned.
fn continue_token(rv: u64, key: &ObjectKey) -> String {
    let raw = format!("{}\u{0}{}", key.namespace, key.name);
    let hex: String = raw.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{rv}-{hex}")
}

fn parse_continue(token: &str) -> Option<(u64, String, String)> {
    let (rv, hex) = token.split_once('-')?;
    let rv = rv.parse().ok()?;
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    let s = String::from_utf8(bytes?).ok()?;
    let (ns, name) = s.split_once('\u{0}')?;
    Some((rv, ns.to_string(), name.to_string()))
}

fn list(shared: &Arc<Shared>, t: &Target, q: &Query, want: Want) -> Result<Response<Body>, ApiError> {
    let f = filter(t, q)?;
    let limit = match q.get("limit") {
        None | Some("") => 0,
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
    };
    let after = match q.get("continue") {
        None | Some("") => None,
        Some(c) => Some(
            parse_continue(c)
                .ok_or_else(|| ApiError::bad_request("invalid continue token (simulated API server)"))?,
        ),
    };
    let mut sim = shared.lock();
    sim.catch_up();
    let sim = &*sim;
    let store = sim.engine.store();
    let rv = after.as_ref().map_or(store.resource_version(), |a| a.0);
    let mut items: Vec<(Arc<Object>, u64)> = Vec::new();
    let mut next = None;
    if let Some(kind) = store_kind(t) {
        let iter: Box<dyn Iterator<Item = (&ObjectKey, &locality_sim::store::Stored)>> = match &f.namespace {
            Some(ns) => Box::new(store.list_namespace(kind, ns)),
            None => Box::new(store.list(kind)),
        };
        for (k, s) in iter {
            if let Some((_, ns, name)) = &after
                && (k.namespace.as_str(), k.name.as_str()) <= (ns.as_str(), name.as_str())
            {
                continue;
            }
            if !f.matches(k, &s.object) {
                continue;
            }
            if limit > 0 && items.len() == limit {
                next = items
                    .last()
                    .and_then(|(o, _)| o.key())
                    .map(|k| continue_token(rv, &k));
                break;
            }
            items.push((s.object.clone(), s.resource_version));
        }
    }
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(n) = next {
        meta["continue"] = json!(n);
    }
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    let v = if want.table {
        table_of(&ctx, t, &items, want, sim.engine.now(), meta)
    } else {
        let encoded: Vec<Value> = items.iter().map(|(o, rv)| encode::encode(&ctx, o, *rv)).collect();
        json!({"kind": list_kind(t), "apiVersion": t.r.api_version(), "metadata": meta, "items": encoded})
    };
    Ok(json_response(200, &v))
}

async fn watch(shared: &Arc<Shared>, t: &Target, q: &Query, want: Want) -> Result<Response<Body>, ApiError> {
    let f = filter(t, q)?;
    let from = match q.get("resourceVersion") {
        None | Some("" | "0") => None,
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {v:?}")))?,
        ),
    };
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(Duration::from_secs(1800), Duration::from_secs);
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let kind = store_kind(t);
    let kind_name = t.r;
    let t = Target {
        r: t.r,
        namespace: t.namespace.clone(),
        name: None,
        sub: None,
    };
    let shared = shared.clone();
    let mut changed = shared.changed.subscribe();
    // First batch: the initial state (no resourceVersion) or the replay from `from`.
    let (first, mut cursor) = {
        let mut sim = shared.lock();
        sim.catch_up();
        let store = sim.engine.store();
        let now_rv = store.resource_version();
        match from {
            None => {
                let objs: Vec<(Arc<Object>, u64)> = kind.map_or_else(Vec::new, |k| {
                    store
                        .list(k)
                        .filter(|(key, s)| f.matches(key, &s.object))
                        .map(|(_, s)| (s.object.clone(), s.resource_version))
                        .collect()
                });
                let lines = encode_events(
                    &sim,
                    &t,
                    want,
                    objs.iter().map(|(o, rv)| (EventType::Added, o, *rv)),
                );
                (Ok(lines), now_rv)
            }
            Some(rv) if rv < sim.expire_before => (
                Err(ApiError::gone(format!(
                    "too old resource version: {rv} ({}) (simulated watch expiry)",
                    sim.expire_before
                ))),
                rv,
            ),
            Some(rv) => match store.events_since(rv) {
                Err(e) => (
                    Err(ApiError::gone(format!("too old resource version: {rv} ({e})"))),
                    rv,
                ),
                Ok(_) => (Ok(Vec::new()), rv),
            },
        }
    };
    let _ = kind_name;
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut last = LastSeen::new();
        match first {
            Err(e) => {
                let ev = json!({"type": "ERROR", "object": e.to_status()});
                let _ = tx.send(line(&ev)).await;
                return;
            }
            Ok(lines) => {
                for l in lines {
                    if tx.send(l).await.is_err() {
                        return;
                    }
                }
            }
        }
        loop {
            let lines = {
                let sim = shared.lock();
                let Ok(events) = sim.engine.store().events_since(cursor) else {
                    break;
                };
                let store = sim.engine.store();
                let selected: Vec<(EventType, Arc<Object>, u64)> = events
                    .iter()
                    .filter(|e| Some(e.key.kind) == kind)
                    .filter_map(|e| f.convert(e, &mut last, store))
                    .collect();
                cursor = events.last().map_or(cursor, |e| e.resource_version);
                encode_events(&sim, &t, want, selected.iter().map(|(ty, o, rv)| (*ty, o, *rv)))
            };
            for l in lines {
                if tx.send(l).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { break },
                () = tokio::time::sleep_until(deadline) => break,
                () = tx.closed() => break,
            }
        }
    });
    Ok(stream_response(rx, "application/json"))
}

/// A streamed answer (a watch, a followed log) of `content_type`, with the headers every
/// answer of the simulated server carries.
pub(crate) fn stream_response(rx: mpsc::Receiver<Bytes>, content_type: &'static str) -> Response<Body> {
    let mut r = Response::new(Body::Stream(rx));
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

fn encode_events<'a>(
    sim: &Sim,
    t: &Target,
    want: Want,
    events: impl Iterator<Item = (EventType, &'a Arc<Object>, u64)>,
) -> Vec<Bytes> {
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    events
        .map(|(ty, o, rv)| {
            let object = if want.table {
                table_of(
                    &ctx,
                    t,
                    &[(o.clone(), rv)],
                    want,
                    sim.engine.now(),
                    json!({"resourceVersion": rv.to_string()}),
                )
            } else {
                encode::encode(&ctx, o, rv)
            };
            line(&json!({"type": ty.as_str(), "object": object}))
        })
        .collect()
}

/// `deployments/scale` and `replicasets/scale` (`autoscaling/v1` Scale): GET, PUT, PATCH.
fn scale(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    t: &Target,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let name = t.name.clone().unwrap_or_default();
    let kind = t.r.kind.unwrap_or(Kind::Deployment);
    let key = key_of(t, kind, &name);
    let mut sim = shared.lock();
    sim.catch_up();
    let sim = &mut *sim;
    let not_found = || ApiError::not_found(t.r.plural, t.r.group, &name);
    let (current, rv) = sim
        .engine
        .store()
        .get(&key)
        .map(|s| (s.object.clone(), s.resource_version))
        .ok_or_else(not_found)?;
    let scale_doc = |o: &Object, rv: u64, ctx: &Ctx<'_>| {
        let enc = encode::encode(ctx, o, rv);
        let w = o.as_workload();
        json!({
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": o.meta().name, "namespace": o.meta().namespace, "uid": o.meta().uid,
                         "resourceVersion": rv.to_string(), "creationTimestamp": o.meta().creation_timestamp},
            "spec": {"replicas": w.and_then(|w| w.workload.replicas).unwrap_or(1)},
            "status": {"replicas": enc["status"]["replicas"].clone(),
                       "selector": w.map(|w| w.workload.selector.match_labels.iter()
                           .map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")).unwrap_or_default()},
        })
    };
    let replicas = match method.as_str() {
        "GET" => None,
        "PUT" | "PATCH" => {
            let doc: Value = serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("the simulated API server could not decode the body: {e}"))
            })?;
            if method == Method::PATCH {
                let ct = headers
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                if !ct.contains("merge-patch+json") {
                    return Err(ApiError::unsupported_media_type(
                        ct,
                        &[
                            "application/merge-patch+json",
                            "application/strategic-merge-patch+json",
                        ],
                    ));
                }
            }
            let n = doc
                .pointer("/spec/replicas")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    ApiError::invalid("Scale", "autoscaling", &name, "spec.replicas: Required value")
                })?;
            Some(n)
        }
        m => {
            return Err(ApiError::method_not_allowed(
                m,
                &format!("{}/scale", t.r.qualified()),
            ));
        }
    };
    let (obj, rv) = if let Some(n) = replicas {
        let mut o = (*current).clone();
        if let Object::Workload(w) = &mut o {
            w.workload.replicas = Some(n);
        }
        sim.engine
            .update(o, None)
            .map_err(|e| map_sim_error(t, &name, e))?;
        shared.notify(sim);
        sim.engine
            .store()
            .get(&key)
            .map(|s| (s.object.clone(), s.resource_version))
            .ok_or_else(not_found)?
    } else {
        (current, rv)
    };
    let v = scale_doc(&obj, rv, &Ctx::new(&sim.engine, &sim.raw));
    Ok(json_response(200, &v))
}
