//! netexec's `/dial?host=&port=&request=&protocol=&tries=` copies the real handler's behaviour: `400`
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

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use locality_model::objects::Protocol;
use locality_sim::{Client, Outcome, Target};
use locality_sim::{Kind, Object, ObjectKey, SimPod};
use serde_json::Value;

use super::netexec::{http_body_for, udp_reply_for};
use super::{Answer, GoQuery, next_port};
use crate::limits::MAX_DIAL_TRIES;
use crate::{Shared, Sim};

/// Per-try timeout of netexec's `/dial` (ms).
const DIAL_TIMEOUT_MS: u64 = 5_000;

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
pub(super) async fn dial(shared: &Arc<Shared>, client: &SimPod, q: &GoQuery) -> Answer {
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
    fn atoi_errors_are_go_worded() {
        assert_eq!(go_atoi("3"), Ok(3));
        assert_eq!(go_atoi("+2"), Ok(2));
        assert_eq!(
            go_atoi("x"),
            Err("strconv.Atoi: parsing \"x\": invalid syntax".to_string())
        );
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
