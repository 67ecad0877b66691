//! The `proxy` probe channel (docs/design.md §5.2): the API server's `pods/proxy` subresource to the
//! client's agnhost `netexec /dial`, one try per call. netexec's `/dial` always answers 200,
//! keeps only the last try's success and gives each try a fixed 5 s timeout, so one try per
//! call is the only way to see every outcome; `len(responses) + len(errors) == tries` or the
//! try is incomplete. Errors are classified by substrings of Go's error strings; the raw
//! string is kept.

use http::Method;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::error::VerifyError;

/// What one try saw.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Seen {
    /// A response naming the pod that answered (netexec `/hostname`).
    Answer {
        /// The responder.
        responder: String,
    },
    /// No answer within the try's timeout.
    Timeout,
    /// Connection refused (REJECT, or nothing listening).
    Refused,
    /// Another error.
    Other,
    /// The channel failed (the API server could not reach the client, a malformed answer).
    Incomplete,
}

/// Where tries go: from which client (and the port its netexec serves `/dial` on), to which
/// `host:port`, over which protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The client pod (netexec).
    pub client: String,
    /// The port the client's netexec serves HTTP on (`pods/{client}:{port}/proxy`).
    pub client_port: u16,
    /// The address dialled (a cluster IP, a pod IP, a node's InternalIP).
    pub host: String,
    /// The port dialled.
    pub port: u16,
    /// UDP (`/dial?protocol=udp`), else HTTP over TCP.
    pub udp: bool,
    /// What the backend is asked: `hostname` (its pod name: who answered) or `clientip`
    /// (the address the connection came from, as the backend saw it).
    pub request: &'static str,
}

/// One try, as recorded in `observed.json`.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Try {
    /// Channel used.
    pub channel: &'static str,
    /// Client pod.
    pub client: String,
    /// `host:port` dialled.
    pub target: String,
    /// `http` or `udp`.
    pub protocol: &'static str,
    /// Send time (Unix ms, in the cluster's clock: the tool's own on a real cluster, the
    /// server's on the simulated one).
    pub sent_ms: u128,
    /// Receive time (Unix ms).
    pub received_ms: u128,
    /// What was seen.
    pub seen: Seen,
    /// The raw answer (netexec's JSON, or the API server's error).
    pub raw: String,
}

/// Classifies one of netexec's error strings (Go `net`/`net/http` wording).
pub fn classify(error: &str) -> Seen {
    if error.contains("connection refused") {
        Seen::Refused
    } else if error.contains("i/o timeout")
        || error.contains("deadline exceeded")
        || error.contains("Client.Timeout")
    {
        Seen::Timeout
    } else {
        Seen::Other
    }
}

/// Reads netexec's `/dial` answer for one try.
pub fn parse_dial(body: &Value) -> Seen {
    let responses: Vec<&str> = body["responses"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let errors: Vec<&str> = body["errors"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match (responses.as_slice(), errors.as_slice()) {
        ([r], []) => Seen::Answer {
            responder: r.trim().to_string(),
        },
        ([], [e]) => classify(e),
        _ => Seen::Incomplete,
    }
}

/// One try of `probe` (its client a netexec pod in `namespace`). The request is normally
/// `hostname`: over HTTP `GET /hostname`, over UDP netexec's `hostname` datagram command;
/// either way the backend answers with its own hostname, its pod name (`clientip`: the
/// client's `IP:PORT` as the backend saw it).
pub async fn dial(cluster: &Cluster, namespace: &str, probe: &Probe) -> Result<Try, VerifyError> {
    let Probe {
        client,
        client_port,
        host,
        port,
        udp,
        request,
    } = probe;
    let protocol = if *udp { "udp" } else { "http" };
    let path = format!(
        "/api/v1/namespaces/{namespace}/pods/{client}:{client_port}/proxy/dial?request={request}&protocol={protocol}&host={host}&port={port}&tries=1"
    );
    // Stamped in the cluster's clock, as the probe loops' tries and the objects are.
    let sent_ms = cluster.clock().now_ms();
    let (code, bytes) = cluster.call(Method::GET, &path, None).await?;
    let received_ms = cluster.clock().now_ms();
    let raw = String::from_utf8_lossy(&bytes).into_owned();
    let seen = if code == 200 {
        serde_json::from_slice::<Value>(&bytes).map_or(Seen::Incomplete, |v| parse_dial(&v))
    } else {
        Seen::Incomplete
    };
    Ok(Try {
        channel: "proxy",
        client: client.clone(),
        target: format!("{host}:{port}"),
        protocol,
        sent_ms,
        received_ms,
        seen,
        raw: if code == 200 {
            raw
        } else {
            crate::quote::http(code, &raw)
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_error_strings_are_classified() {
        let t = r#"Get "http://10.96.0.10:80/hostname": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"#;
        assert_eq!(classify(t), Seen::Timeout);
        let r = r#"Get "http://10.96.0.10:80/hostname": dial tcp 10.96.0.10:80: connect: connection refused"#;
        assert_eq!(classify(r), Seen::Refused);
        let u =
            "reading from udp connection failed. err:'read udp 10.0.0.1:4000->10.96.0.10:80: i/o timeout'";
        assert_eq!(classify(u), Seen::Timeout);
        let ur = "reading from udp connection failed. err:'read udp 10.0.0.1:4000->10.96.0.10:80: read: connection refused'";
        assert_eq!(classify(ur), Seen::Refused);
        assert_eq!(classify("no route to host"), Seen::Other);
    }

    #[test]
    fn one_try_answers_are_read_and_odd_ones_are_incomplete() {
        assert_eq!(
            parse_dial(&json!({"responses": ["web-a"]})),
            Seen::Answer {
                responder: "web-a".into()
            }
        );
        assert_eq!(
            parse_dial(&json!({"errors": ["connect: connection refused"]})),
            Seen::Refused
        );
        assert_eq!(parse_dial(&json!({})), Seen::Incomplete);
        assert_eq!(
            parse_dial(&json!({"responses": ["a"], "errors": ["x"]})),
            Seen::Incomplete
        );
    }
}
