//! The simulated agnhost `netexec` server: which pods run it, with which flags, and what its
//! HTTP and UDP routes answer (kubernetes `test/images/agnhost/netexec/netexec.go`).

use std::net::SocketAddr;
use std::sync::Arc;

use locality_model::objects::PodPhase;
use locality_sim::SimPod;
use serde_json::Value;

use super::{Answer, GoQuery};
use crate::encode::Ctx;
use crate::{Shared, Sim};

/// A netexec pod's declared parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Netexec {
    pub(super) http_port: u16,
    udp_port: Option<u16>,
    pub(super) http_override: Option<String>,
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
pub(super) fn netexec_of(sim: &Sim, pod: &SimPod) -> Option<Netexec> {
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
pub(super) fn running(pod: &SimPod) -> bool {
    pod.pod.phase == PodPhase::Running && (pod.pod.meta.deletion_timestamp.is_none() || pod.pod.ready)
}

/// Every route but `/dial`.
pub(super) fn serve(
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
pub(super) fn http_body_for(sim: &Sim, target: &SimPod, request: &str, from: SocketAddr) -> String {
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
pub(super) fn udp_reply_for(target: &SimPod, request: &str, from: SocketAddr) -> Option<String> {
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
}
