//! `pods/proxy` to simulated agnhost `netexec` pods.
//!
//! A pod is a netexec pod when one of its containers runs `netexec` (command and args, e.g.
//! `args: [netexec, --http-port=8080]`); a pod the simulation built itself without a JSON spec
//! (builders, topology workloads, the playbook fixture) is a netexec pod on the default ports.
//! Flags read: `--http-port` (8080), `--udp-port` (8081, -1 disables), `--http-override`.
//!
//! The API server dials the pod IP directly (no kube-proxy). The pod's HTTP port answers while
//! the pod runs (phase Running, not terminating-and-unready, i.e. its process has not exited);
//! any other port, a pod that is not a netexec pod, and a hostNetwork pod's `10249` (kube-proxy's
//! metrics bind `127.0.0.1`; no simulated profile binds `0.0.0.0`) answer as a real API server
//! does when the dial fails: `503 ServiceUnavailable`, message
//! `error trying to reach service: dial tcp IP:PORT: connect: connection refused`
//! (k8s.io/apimachinery `pkg/util/proxy/transport.go`). A pod with no IP yet: `400 BadRequest`
//! `address not allowed`.
//!
//! Routes, as netexec (kubernetes `test/images/agnhost/netexec/netexec.go`) serves them:
//! `/hostname` and `/hostName` (the pod's hostname: `spec.hostname` or its name; a hostNetwork
//! pod's is its node's name), `/healthz` (200; 412 when `--udp-port=-1`, as the real one never
//! becomes "ready" without its UDP server), `/readyz` (200, 503 once the pod got SIGTERM, i.e.
//! has a `deletionTimestamp`), `/clientip` (`IP:PORT` of the caller: for `pods/proxy` the API
//! server, at the first control-plane node's InternalIP, or `192.0.2.1` when the topology has
//! none), `/echo?msg=&code=`, `/dial` and `/` (and any other path, as Go's ServeMux sends it to
//! `/`: `NOW: …`, in virtual time). `/exit`, `/shell`, `/shutdown`, `/upload`, `/redirect`:
//! `501`, not simulated.
//!
//! `/dial?host=&port=&request=&protocol=&tries=` copies the real handler's behaviour: `400`
//! (plain text, Go's `http.Error`) for a bad `tries` (and, simulated only, for more than
//! [`MAX_DIAL_TRIES`]), a missing `request` (`request parameter
//! not specified. <nil>`), an unknown protocol or an unresolvable host (`host and/or port param
//! are invalid. lookup NAME on DNS:53: no such host`, DNS being `kube-system/kube-dns`'s
//! ClusterIP or `10.96.0.10`); otherwise **200 always**, with a JSON object (keys sorted, HTML
//! characters escaped as Go's `encoding/json` does) holding `errors` when any try failed and
//! `responses` only when the **last** try returned a non-empty body (so successes are dropped
//! when the last try fails). The host is resolved once (cluster DNS: Service names with the
//! pod's search path); each try is a connection through [`locality_sim::Engine::connect`] from
//! the pod at the current virtual time with a 5 s timeout. Error strings (Go `net/http`, `net`):
//! - HTTP refused: `Get "http://IP:PORT/REQUEST": dial tcp IP:PORT: connect: connection refused`
//! - HTTP timeout: `Get "http://IP:PORT/REQUEST": context deadline exceeded (Client.Timeout
//!   exceeded while awaiting headers)` (the `http.Client` has `Timeout: 5s`; the dialer's own
//!   timeout is 30 s, so the client's deadline fires first)
//! - UDP: `reading from udp connection failed. err:'read udp SRC->IP:PORT: i/o timeout'` (no
//!   answer in 5 s) or `…: read: connection refused'` (ICMP port unreachable)
//! - SCTP (not checked against a capture): `sctp dial failed. err:dial sctp IP:PORT: connect:
//!   connection refused` / `reading from sctp connection failed. err:'i/o timeout'`.
//!
//! **Time**: a try that times out costs 5 s of virtual time by *waiting*: the answer is held for
//! 5 s / speed of wall time, during which the engine's clock runs as usual (it is never jumped),
//! and the next try happens at the later virtual instant. At speed 0 (frozen clock) the 5 s are
//! only accounted: nothing waits and all tries happen at the same virtual instant.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Bytes;
use locality_model::objects::{PodPhase, Protocol};
use locality_sim::traffic::{Client, Outcome, Target};
use locality_sim::{Kind, Object, ObjectKey, SimPod};
use serde_json::Value;

use crate::encode::Ctx;
use crate::http::{Body, percent_decode, response};
use crate::limits::MAX_DIAL_TRIES;
use crate::status::ApiError;
use crate::{Shared, Sim};

/// Per-try timeout of netexec's `/dial` (ms).
const DIAL_TIMEOUT_MS: u64 = 5_000;
/// kube-proxy's metrics port.
const KUBE_PROXY_METRICS_PORT: u16 = 10249;
/// Go's `http.Error` and sniffed plain text.
const TEXT: &str = "text/plain; charset=utf-8";

/// A netexec pod's declared parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Netexec {
    http_port: u16,
    udp_port: Option<u16>,
    http_override: Option<String>,
}

impl Default for Netexec {
    fn default() -> Self {
        Netexec {
            http_port: 8080,
            udp_port: Some(8081),
            http_override: None,
        }
    }
}

/// The netexec parameters of a pod's containers, if one runs `netexec`.
fn netexec_of(sim: &Sim, pod: &SimPod) -> Option<Netexec> {
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    let meta = &pod.pod.meta;
    let Some(spec) = ctx.raw_pod_spec(meta, &meta.namespace, 0) else {
        return Some(Netexec::default());
    };
    let containers = spec.get("containers").and_then(Value::as_array)?;
    containers.iter().find_map(|c| {
        let words: Vec<&str> = ["command", "args"]
            .iter()
            .filter_map(|k| c.get(*k).and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let at = words.iter().position(|w| *w == "netexec")?;
        if at > 0 && !words[at - 1].ends_with("agnhost") {
            return None;
        }
        Some(parse_flags(&words[at + 1..]))
    })
}

fn parse_flags(words: &[&str]) -> Netexec {
    let mut n = Netexec::default();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].trim_start_matches('-');
        let (flag, value) = match w.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => {
                let v = words.get(i + 1).map(|s| (*s).to_string());
                if v.is_some() && !words[i + 1].starts_with('-') {
                    i += 1;
                }
                (w, v)
            }
        };
        match (flag, value) {
            ("http-port", Some(v)) => n.http_port = v.parse().unwrap_or(n.http_port),
            ("udp-port", Some(v)) => n.udp_port = v.parse::<i64>().ok().and_then(|p| u16::try_from(p).ok()),
            ("http-override", Some(v)) if !v.is_empty() => n.http_override = Some(v),
            _ => {}
        }
        i += 1;
    }
    n
}

/// A pod's hostname as `os.Hostname()` reports it inside the pod.
pub(crate) fn hostname(pod: &SimPod) -> String {
    if pod.pod.spec.host_network {
        return pod.pod.spec.node_name.clone();
    }
    if pod.pod.spec.hostname.is_empty() {
        pod.pod.meta.name.chars().take(63).collect()
    } else {
        pod.pod.spec.hostname.clone()
    }
}

/// Whether the pod's process runs (and so listens).
fn running(pod: &SimPod) -> bool {
    pod.pod.phase == PodPhase::Running && (pod.pod.meta.deletion_timestamp.is_none() || pod.pod.ready)
}

fn next_port(sim: &mut Sim) -> u16 {
    sim.ephemeral = sim.ephemeral.wrapping_add(1);
    32768 + (sim.ephemeral % 28232) as u16
}

/// Where the API server's connections come from.
fn apiserver_ip(sim: &Sim) -> IpAddr {
    sim.engine
        .store()
        .list(Kind::Node)
        .filter_map(|(_, s)| match &*s.object {
            Object::Node(n) if n.is_control_plane() => n.internal_ips.first().copied(),
            _ => None,
        })
        .next()
        .unwrap_or(IpAddr::from([192, 0, 2, 1]))
}

/// Query parameters as Go's `url.Values.Get` reads them (the first value wins).
struct GoQuery(Vec<(String, String)>);

impl GoQuery {
    fn parse(q: &str) -> Self {
        GoQuery(
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (percent_decode(k), percent_decode(v))
                })
                .collect(),
        )
    }

    fn get(&self, k: &str) -> &str {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// An answer from the simulated netexec.
struct Answer {
    code: u16,
    content_type: &'static str,
    body: String,
    nosniff: bool,
}

impl Answer {
    fn ok(body: impl Into<String>) -> Self {
        Answer {
            code: 200,
            content_type: TEXT,
            body: body.into(),
            nosniff: false,
        }
    }

    fn status(code: u16) -> Self {
        Answer {
            code,
            content_type: TEXT,
            body: String::new(),
            nosniff: false,
        }
    }

    /// Go's `http.Error`: the message and a newline, `nosniff`.
    fn error(code: u16, msg: impl Into<String>) -> Self {
        Answer {
            code,
            content_type: TEXT,
            body: format!("{}\n", msg.into()),
            nosniff: true,
        }
    }

    fn into_response(self) -> hyper::Response<Body> {
        let mut r = response(self.code, self.content_type, Bytes::from(self.body));
        if self.nosniff {
            r.headers_mut().insert(
                "x-content-type-options",
                http::HeaderValue::from_static("nosniff"),
            );
        }
        r
    }
}

/// `[scheme:]name[:port]` (`utilnet.SplitSchemeNamePort`).
fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    match parts.as_slice() {
        [name] => Some(("", *name, "")),
        [name, port] => Some(("", *name, *port)),
        [scheme, name, port] if matches!(*scheme, "http" | "https") => Some((*scheme, *name, *port)),
        _ => None,
    }
    .filter(|(_, name, _)| !name.is_empty())
}

/// `GET /api/v1/namespaces/NS/pods/ID/proxy[TAIL]?QUERY`.
pub(crate) async fn pods_proxy(
    shared: &Arc<Shared>,
    method: &http::Method,
    ns: &str,
    id: &str,
    tail: &str,
    query: &str,
) -> Result<hyper::Response<Body>, ApiError> {
    let id = percent_decode(id);
    let (scheme, name, port) = split_scheme_name_port(&id)
        .ok_or_else(|| ApiError::bad_request(format!("invalid request {id:?}")))?;
    let (pod, netexec, addr, from) = {
        let mut sim = shared.lock();
        sim.catch_up();
        let key = ObjectKey::new(Kind::Pod, ns, name);
        let pod = sim
            .engine
            .get(&key)
            .and_then(Object::as_pod)
            .cloned()
            .ok_or_else(|| ApiError::not_found("pods", "", name))?;
        let ip = *pod
            .pod
            .pod_ips
            .first()
            .ok_or_else(|| ApiError::bad_request("address not allowed"))?;
        let port: u16 = if port.is_empty() {
            pod.pod.spec.ports.first().map_or(80, |p| p.container_port)
        } else {
            port.parse().map_err(|_| {
                ApiError::service_unavailable(format!(
                    "error trying to reach service: dial tcp: address {ip}:{port}: invalid port"
                ))
            })?
        };
        let netexec = netexec_of(&sim, &pod);
        let from = SocketAddr::new(apiserver_ip(&sim), next_port(&mut sim));
        (pod, netexec, SocketAddr::new(ip, port), from)
    };
    let serving = netexec
        .as_ref()
        .filter(|n| n.http_port == addr.port() && running(&pod))
        .filter(|_| !(pod.pod.spec.host_network && addr.port() == KUBE_PROXY_METRICS_PORT));
    let Some(netexec) = serving else {
        return Err(ApiError::service_unavailable(format!(
            "error trying to reach service: dial tcp {addr}: connect: connection refused"
        )));
    };
    if scheme == "https" {
        return Err(ApiError::service_unavailable(
            "error trying to reach service: tls: first record does not look like a TLS handshake",
        ));
    }
    let _ = method;
    let (path, query) = match &netexec.http_override {
        Some(o) => {
            let (p, q) = o.split_once('?').unwrap_or((o, ""));
            (p.to_string(), q.to_string())
        }
        None => (
            if tail.is_empty() {
                "/".to_string()
            } else {
                tail.to_string()
            },
            query.to_string(),
        ),
    };
    let answer = if path == "/dial" {
        dial(shared, &pod, &GoQuery::parse(&query)).await
    } else {
        serve(&pod, netexec, &path, &GoQuery::parse(&query), from, shared)
    };
    Ok(answer.into_response())
}

/// Every route but `/dial`.
fn serve(
    pod: &SimPod,
    netexec: &Netexec,
    path: &str,
    q: &GoQuery,
    from: SocketAddr,
    shared: &Arc<Shared>,
) -> Answer {
    match path {
        "/hostname" | "/hostName" => Answer::ok(hostname(pod)),
        "/healthz" if netexec.udp_port.is_some() => Answer::status(200),
        "/healthz" => Answer::status(412),
        "/readyz" if pod.pod.meta.deletion_timestamp.is_some() => Answer::status(503),
        "/readyz" => Answer::status(200),
        "/clientip" => Answer::ok(from.to_string()),
        "/echo" => {
            let code = q.get("code");
            if code.is_empty() {
                return Answer::ok(q.get("msg"));
            }
            match code.parse::<u16>() {
                Ok(c) if (100..=999).contains(&c) => Answer {
                    code: c,
                    ..Answer::ok(q.get("msg"))
                },
                _ => Answer::ok(format!(
                    "argument 'code' must be an integer or empty, got {code:?}\n"
                )),
            }
        }
        "/exit" | "/shell" | "/shutdown" | "/upload" | "/redirect" => Answer::error(
            501,
            format!("simulated netexec: {path} is not simulated (locality-sim)"),
        ),
        _ => {
            let now = shared.lock().engine.now();
            Answer::ok(format!(
                "NOW: {}.{:03}s of simulated time",
                now / 1000,
                now % 1000
            ))
        }
    }
}

/// The body a netexec target returns for `GET /REQUEST` (what `/dial` keeps).
fn http_body_for(sim: &Sim, target: &SimPod, request: &str, from: SocketAddr) -> String {
    let netexec = netexec_of(sim, target).unwrap_or_default();
    let (path, query) = request.split_once('?').unwrap_or((request, ""));
    let path = format!("/{path}");
    let q = GoQuery::parse(query);
    match path.as_str() {
        "/hostname" | "/hostName" => hostname(target),
        "/clientip" => from.to_string(),
        "/echo" => q.get("msg").to_string(),
        "/healthz" | "/readyz" | "/dial" => String::new(),
        _ if netexec.http_override.is_some() => String::new(),
        _ => format!(
            "NOW: {}.{:03}s of simulated time",
            sim.engine.now() / 1000,
            sim.engine.now() % 1000
        ),
    }
}

/// The reply a netexec UDP server sends to `request`, if any.
fn udp_reply_for(target: &SimPod, request: &str, from: SocketAddr) -> Option<String> {
    let text = request.trim().to_lowercase();
    if text == "hostname" {
        Some(hostname(target))
    } else if let Some(msg) = text.strip_prefix("echo ") {
        Some(msg.to_string())
    } else if text == "clientip" {
        Some(from.to_string())
    } else {
        None
    }
}

/// Cluster DNS as the pod's resolver sees it: Service names with the search path
/// `NS.svc.cluster.local svc.cluster.local cluster.local`.
fn resolve(sim: &Sim, host: &str, client_ns: &str) -> Option<IpAddr> {
    if let Ok(ip) = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return Some(ip);
    }
    let trimmed = host.trim_end_matches('.');
    let trimmed = trimmed.strip_suffix(".cluster.local").unwrap_or(trimmed);
    let trimmed = trimmed.strip_suffix(".svc").unwrap_or(trimmed);
    let (svc, ns) = match trimmed.split_once('.') {
        Some((s, n)) if !n.contains('.') => (s, n),
        Some(_) => return None,
        None => (trimmed, client_ns),
    };
    let s = sim
        .engine
        .get(&ObjectKey::new(Kind::Service, ns, svc))
        .and_then(Object::as_service)?;
    if let Some(ip) = s.cluster_ips.first() {
        return Some(*ip);
    }
    sim.engine
        .store()
        .list_namespace(Kind::EndpointSlice, ns)
        .filter_map(|(_, o)| o.object.as_endpoint_slice())
        .filter(|sl| sl.service_name() == Some(svc))
        .flat_map(|sl| sl.endpoints.iter())
        .filter(|e| e.conditions.ready != Some(false))
        .find_map(|e| e.addresses.first().copied())
}

fn dns_server(sim: &Sim) -> String {
    sim.engine
        .get(&ObjectKey::new(Kind::Service, "kube-system", "kube-dns"))
        .and_then(Object::as_service)
        .and_then(|s| s.cluster_ips.first().copied())
        .map_or_else(
            || "10.96.0.10:53".to_string(),
            |ip| SocketAddr::new(ip, 53).to_string(),
        )
}

/// Go's `encoding/json` string escaping of `<`, `>`, `&`, U+2028 and U+2029.
fn go_json(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum DialProto {
    Http,
    Udp,
    Sctp,
}

/// netexec's `dialHandler`.
async fn dial(shared: &Arc<Shared>, client: &SimPod, q: &GoQuery) -> Answer {
    let (host, port, request, try_param) = (q.get("host"), q.get("port"), q.get("request"), q.get("tries"));
    let tries: i64 = if try_param.is_empty() {
        1
    } else {
        match go_atoi(try_param) {
            Ok(n) => n,
            Err(e) => return Answer::error(400, format!("tries parameter is invalid. {e}")),
        }
    };
    if tries > MAX_DIAL_TRIES {
        return Answer::error(
            400,
            format!(
                "tries parameter is invalid. the simulated netexec runs at most {MAX_DIAL_TRIES} tries, not {tries}"
            ),
        );
    }
    if request.is_empty() {
        return Answer::error(400, "request parameter not specified. <nil>");
    }
    let protocol = q.get("protocol");
    let proto = match protocol.to_lowercase().as_str() {
        "" | "http" => DialProto::Http,
        "udp" => DialProto::Udp,
        "sctp" => DialProto::Sctp,
        _ => return Answer::error(400, format!("unsupported protocol. {protocol}")),
    };
    let client_ns = client.pod.meta.namespace.clone();
    let client_name = client.pod.meta.name.clone();
    let resolved = {
        let sim = shared.lock();
        let port_num: Result<u16, String> = if port.is_empty() {
            Ok(0)
        } else if port.bytes().all(|b| b.is_ascii_digit()) {
            port.parse::<u16>()
                .map_err(|_| format!("address {}: invalid port", join_host_port(host, port)))
        } else {
            let net = if proto == DialProto::Udp { "udp" } else { "tcp" };
            Err(format!("lookup {net}/{port}: unknown port"))
        };
        match port_num {
            Err(e) => Err(e),
            Ok(p) => resolve(&sim, host, &client_ns)
                .map(|ip| SocketAddr::new(ip, p))
                .ok_or_else(|| format!("lookup {host} on {}: no such host", dns_server(&sim))),
        }
    };
    let addr = match resolved {
        Ok(a) => a,
        Err(e) => return Answer::error(400, format!("host and/or port param are invalid. {e}")),
    };
    let mut errors: Vec<String> = Vec::new();
    let mut responses: Vec<String> = Vec::new();
    let mut last = String::new();
    for _ in 0..tries.max(0) {
        // Each try holds the simulation's lock only for itself: other requests run between.
        tokio::task::yield_now().await;
        let (result, waited) = one_try(shared, &client_ns, &client_name, client, addr, request, proto);
        match result {
            Ok(body) => {
                responses.push(body.clone());
                last = body;
            }
            Err(e) => {
                errors.push(e);
                last.clear();
            }
        }
        if waited {
            let speed = shared.lock().clock.speed;
            if speed > 0.0 {
                tokio::time::sleep(Duration::from_secs_f64(DIAL_TIMEOUT_MS as f64 / 1000.0 / speed)).await;
            }
        }
    }
    let mut out = serde_json::Map::new();
    if !last.is_empty() {
        out.insert("responses".into(), Value::from(responses));
    }
    if !errors.is_empty() {
        out.insert("errors".into(), Value::from(errors));
    }
    Answer::ok(go_json(&Value::Object(out)))
}

fn join_host_port(host: &str, port: &str) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Go's `strconv.Atoi` (its error wording).
fn go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

/// One try of `/dial`: the body or Go's error, and whether it waited the full 5 s.
fn one_try(
    shared: &Arc<Shared>,
    ns: &str,
    name: &str,
    client: &SimPod,
    addr: SocketAddr,
    request: &str,
    proto: DialProto,
) -> (Result<String, String>, bool) {
    let mut sim = shared.lock();
    sim.catch_up();
    let src_ip = client
        .pod
        .pod_ips
        .first()
        .copied()
        .unwrap_or(IpAddr::from([0, 0, 0, 0]));
    let src = SocketAddr::new(src_ip, next_port(&mut sim));
    let protocol = match proto {
        DialProto::Http => Protocol::TCP,
        DialProto::Udp => Protocol::UDP,
        DialProto::Sctp => Protocol::SCTP,
    };
    let outcome = sim.engine.connect(
        &Client::pod(ns, name),
        &Target::Addr(addr.ip(), addr.port()),
        protocol,
        DIAL_TIMEOUT_MS,
    );
    let url = format!("http://{addr}/{request}");
    let result = match (proto, outcome) {
        (
            _,
            Ok(Outcome::Response {
                namespace,
                pod,
                masqueraded_to,
                ..
            }),
        ) => {
            let target = sim
                .engine
                .get(&ObjectKey::new(Kind::Pod, &namespace, &pod))
                .and_then(Object::as_pod)
                .cloned();
            // The address the target sees: the client's, unless the data plane masqueraded it.
            let seen = masqueraded_to.map_or(src, |ip| SocketAddr::new(ip, src.port()));
            match (proto, target) {
                (DialProto::Http, Some(t)) => Ok(http_body_for(&sim, &t, request, seen)),
                (DialProto::Http, None) => Ok(String::new()),
                (_, t) => match t.and_then(|t| udp_reply_for(&t, request, seen)) {
                    Some(r) if !r.is_empty() => Ok(r),
                    _ => Err(udp_timeout(proto, src, addr)),
                },
            }
        }
        (DialProto::Http, Ok(Outcome::Refused)) => Err(format!(
            "Get {url:?}: dial tcp {addr}: connect: connection refused"
        )),
        (DialProto::Http, Ok(Outcome::Timeout)) => Err(format!(
            "Get {url:?}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        )),
        (DialProto::Udp, Ok(Outcome::Refused)) => Err(format!(
            "reading from udp connection failed. err:'read udp {src}->{addr}: read: connection refused'"
        )),
        (DialProto::Sctp, Ok(Outcome::Refused)) => Err(format!(
            "sctp dial failed. err:dial sctp {addr}: connect: connection refused"
        )),
        (_, Ok(Outcome::Timeout)) => Err(udp_timeout(proto, src, addr)),
        (_, Err(e)) => Err(format!("dial {addr}: {e}")),
    };
    let waited = match &result {
        Ok(_) => false,
        Err(e) => e.contains("Client.Timeout exceeded") || e.contains("i/o timeout"),
    };
    drop(sim);
    (result, waited)
}

fn udp_timeout(proto: DialProto, src: SocketAddr, addr: SocketAddr) -> String {
    match proto {
        DialProto::Sctp => "reading from sctp connection failed. err:'i/o timeout'".to_string(),
        _ => format!("reading from udp connection failed. err:'read udp {src}->{addr}: i/o timeout'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_like_cobra() {
        let n = parse_flags(&["--http-port=80", "--udp-port", "-1", "--http-override=/hostname"]);
        assert_eq!(n.http_port, 80);
        assert_eq!(n.udp_port, None);
        assert_eq!(n.http_override.as_deref(), Some("/hostname"));
        assert_eq!(parse_flags(&[]), Netexec::default());
    }

    #[test]
    fn atoi_errors_are_go_worded() {
        assert_eq!(go_atoi("3"), Ok(3));
        assert_eq!(go_atoi("+2"), Ok(2));
        assert_eq!(
            go_atoi("x"),
            Err("strconv.Atoi: parsing \"x\": invalid syntax".to_string())
        );
    }

    #[test]
    fn scheme_name_port() {
        assert_eq!(split_scheme_name_port("web:8080"), Some(("", "web", "8080")));
        assert_eq!(split_scheme_name_port("web"), Some(("", "web", "")));
        assert_eq!(
            split_scheme_name_port("https:web:443"),
            Some(("https", "web", "443"))
        );
        assert_eq!(split_scheme_name_port(":80"), None);
    }

    #[test]
    fn json_escapes_like_go() {
        let v = serde_json::json!({"responses": ["a<b>&"], "errors": ["x"]});
        assert_eq!(
            go_json(&v),
            r#"{"errors":["x"],"responses":["a\u003cb\u003e\u0026"]}"#
        );
    }
}
