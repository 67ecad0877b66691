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
//! The netexec routes live in [`netexec`], `/dial` and its Go-worded errors in [`dial`].

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use hyper::body::Bytes;
use locality_sim::{Kind, Object};

use crate::http::{Body, percent_decode, response};
use crate::status::ApiError;
use crate::{Shared, Sim};

mod dial;
mod netexec;

pub(crate) use netexec::hostname;
use netexec::{netexec_of, running};

/// kube-proxy's metrics port.
const KUBE_PROXY_METRICS_PORT: u16 = 10249;
/// Go's `http.Error` and sniffed plain text.
const TEXT: &str = "text/plain; charset=utf-8";

pub(super) fn next_port(sim: &mut Sim) -> u16 {
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
pub(super) struct GoQuery(Vec<(String, String)>);

impl GoQuery {
    pub(super) fn parse(q: &str) -> Self {
        GoQuery(form_urlencoded::parse(q.as_bytes()).into_owned().collect())
    }

    pub(super) fn get(&self, k: &str) -> &str {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// An answer from the simulated netexec.
pub(super) struct Answer {
    pub(super) code: u16,
    content_type: &'static str,
    body: String,
    nosniff: bool,
}

impl Answer {
    pub(super) fn ok(body: impl Into<String>) -> Self {
        Answer {
            code: 200,
            content_type: TEXT,
            body: body.into(),
            nosniff: false,
        }
    }

    pub(super) fn status(code: u16) -> Self {
        Answer {
            code,
            content_type: TEXT,
            body: String::new(),
            nosniff: false,
        }
    }

    /// Go's `http.Error`: the message and a newline, `nosniff`.
    pub(super) fn error(code: u16, msg: impl Into<String>) -> Self {
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
        let pod = sim.pod(ns, name)?;
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
        dial::dial(shared, &pod, &GoQuery::parse(&query)).await
    } else {
        netexec::serve(&pod, netexec, &path, &GoQuery::parse(&query), from, shared)
    };
    Ok(answer.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
