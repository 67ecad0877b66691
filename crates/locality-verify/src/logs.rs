//! The `logs` probe channel (docs/design.md §5.2): a probe-loop client pod tries its target
//! continuously and writes one timestamped line per try; the lines are read back through
//! `pods/log` and parsed into [`Try`]s (channel `logs`). Unlike the `proxy` channel (one API
//! round trip per try) it keeps its rate while the API server is slow, which rollout cases
//! need (≥ 10 tries per second, docs/design.md §5.3).
//!
//! The loop's parameters are environment variables (`LOCALITY_PROBE_TARGET` = `host:port/path`,
//! `LOCALITY_PROBE_INTERVAL_MS`, `LOCALITY_PROBE_TIMEOUT_MS`, `LOCALITY_PROBE_LOOPS`); the pod
//! runs [`LOOP_SCRIPT`] with the curl image's `sh`: per loop `L`, each try writes
//! `<start, RFC 3339 with nanoseconds> <L> <responder>` or `<start> <L> ERR <curl exit code>`
//! (7 refused, 28 timeout, 6 unknown host). Read with `timestamps=true`, each line is prefixed
//! with the time the kubelet received it (the try's end).

use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::error::VerifyError;
use crate::fixture::{CURL_IMAGE, RUN_LABEL, pods_path};
use crate::probe::{Seen, Try};

/// The probe loop the pod runs (busybox `sh`, `date`, `awk` and curl, as in the curl image).
/// Loops start staggered by `INTERVAL / LOOPS`; TERM ends them all.
pub const LOOP_SCRIPT: &str = r#"set -u
T=$(awk "BEGIN{print ${LOCALITY_PROBE_TIMEOUT_MS:-1000}/1000}")
I=$(awk "BEGIN{print ${LOCALITY_PROBE_INTERVAL_MS:-100}/1000}")
N=${LOCALITY_PROBE_LOOPS:-1}
trap 'trap - TERM; kill 0; exit 0' TERM INT
run() {
  L=$1
  sleep "$(awk "BEGIN{print $I*$L/$N}")"
  while true; do
    ts=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
    if out=$(curl -s --max-time "$T" "http://$LOCALITY_PROBE_TARGET"); then
      if [ -n "${LOCALITY_PROBE_GREP:-}" ]; then
        echo "$out" | grep -E "$LOCALITY_PROBE_GREP" | sed "s/^/$ts $L /"
      else echo "$ts $L $out"; fi
    else echo "$ts $L ERR $?"; fi
    sleep "$I"
  done
}
L=0
while [ "$L" -lt "$N" ]; do run "$L" & L=$((L+1)); done
wait
"#;

/// A probe loop: which client pod, on which node, tries what, how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeLoop {
    /// The client pod's name.
    pub client: String,
    /// The node it is pinned to.
    pub node: String,
    /// `host:port` tried.
    pub target: String,
    /// The HTTP path (netexec answers `/hostname` with the pod's name).
    pub path: String,
    /// Each loop's interval between tries (ms).
    pub interval_ms: u64,
    /// Each try's timeout (curl `--max-time`, ms).
    pub timeout_ms: u64,
    /// Concurrent loops.
    pub loops: u32,
    /// A hostNetwork pod (to reach the node's kube-proxy on loopback).
    pub host_network: bool,
    /// `LOCALITY_PROBE_GREP`: keep only the answer's lines this `grep -E` pattern matches,
    /// each after the try's prefix (`None`: the answer as it is).
    pub grep: Option<String>,
}

/// The fewest concurrent loops that keep `rate` tries per second while every try times out.
pub fn loops_for(rate: u64, interval_ms: u64, timeout_ms: u64) -> u32 {
    let per_loop_ms = interval_ms.max(timeout_ms).max(1);
    u32::try_from((rate * per_loop_ms).div_ceil(1000).max(1)).unwrap_or(u32::MAX)
}

impl ProbeLoop {
    /// A loop from `client` on `node` to `target`'s `/hostname`, every 100 ms with a 500 ms
    /// timeout, with enough loops for ≥ 10 tries per second even when every try times out.
    pub fn new(client: &str, node: &str, target: &str) -> Self {
        let (interval_ms, timeout_ms) = (100, 500);
        ProbeLoop {
            client: client.to_string(),
            node: node.to_string(),
            target: target.to_string(),
            path: "/hostname".into(),
            interval_ms,
            timeout_ms,
            loops: loops_for(10, interval_ms, timeout_ms),
            host_network: false,
            grep: None,
        }
    }

    /// A loop on `node` reading its kube-proxy's `/metrics` every `interval_ms`, keeping the
    /// lines of `metrics` (unlabelled series): the node's sync state, sampled in the
    /// cluster's clock by the pod itself however slow the API is.
    pub fn metrics(client: &str, node: &str, interval_ms: u64, metrics: &[&str]) -> Self {
        ProbeLoop {
            client: client.to_string(),
            node: node.to_string(),
            target: crate::fixture::KUBE_PROXY_METRICS.to_string(),
            path: "/metrics".into(),
            interval_ms,
            timeout_ms: 1000,
            loops: 1,
            host_network: true,
            grep: Some(format!("^({}) ", metrics.join("|"))),
        }
    }

    /// The client pod's manifest (pinned to its node like every fixture pod).
    pub fn manifest(&self, ns: &str, run: &str) -> Value {
        let mut env = json!([
            {"name": "LOCALITY_PROBE_TARGET", "value": format!("{}{}", self.target, self.path)},
            {"name": "LOCALITY_PROBE_INTERVAL_MS", "value": self.interval_ms.to_string()},
            {"name": "LOCALITY_PROBE_TIMEOUT_MS", "value": self.timeout_ms.to_string()},
            {"name": "LOCALITY_PROBE_LOOPS", "value": self.loops.to_string()},
        ]);
        if let (Some(g), Some(list)) = (&self.grep, env.as_array_mut()) {
            list.push(json!({"name": "LOCALITY_PROBE_GREP", "value": g}));
        }
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": self.client, "namespace": ns, "labels": {
                RUN_LABEL: run,
                "app.kubernetes.io/managed-by": "locality",
                "app": "locality-probe-loop"
            }},
            "spec": {
                "hostNetwork": self.host_network,
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 1,
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [self.node]}]}
                ]}}},
                "securityContext": {"runAsNonRoot": true, "runAsUser": 65534},
                "containers": [{
                    "name": "probe",
                    "image": CURL_IMAGE,
                    "command": ["sh", "-c", LOOP_SCRIPT],
                    "env": env,
                    "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}
                }]
            }
        })
    }

    /// Every try the pod's log holds so far (`pods/log?timestamps=true`), in log order; lines
    /// that are not tries are skipped.
    ///
    /// # Errors
    /// When the API call fails or the log cannot be read (not started yet: 400).
    pub async fn tries(&self, cluster: &Cluster, ns: &str) -> Result<Vec<Try>, VerifyError> {
        self.tries_since(cluster, ns, None).await
    }

    /// [`Self::tries`] written from `since` on (unix ms, `sinceTime` in whole seconds, so a
    /// little earlier).
    ///
    /// # Errors
    /// As [`Self::tries`].
    pub async fn tries_since(
        &self,
        cluster: &Cluster,
        ns: &str,
        since: Option<u128>,
    ) -> Result<Vec<Try>, VerifyError> {
        let mut path = format!("{}/{}/log?timestamps=true", pods_path(ns), self.client);
        if let Some(t) = since.and_then(|ms| jiff::Timestamp::from_second((ms / 1000) as i64).ok()) {
            path.push_str(&format!("&sinceTime={t}"));
        }
        let (code, body) = cluster.call(http::Method::GET, &path, None).await?;
        let text = String::from_utf8_lossy(&body);
        if !(200..300).contains(&code) {
            return Err(VerifyError::Api {
                what: format!("read the log of {}", self.client),
                message: crate::quote::http(code, text.trim()),
            });
        }
        Ok(text.lines().filter_map(|l| self.parse(l)).collect())
    }

    /// One line of the log read with `timestamps=true`: `<written> <start> <L> <rest>`.
    pub fn parse(&self, line: &str) -> Option<Try> {
        let mut words = line.splitn(4, ' ');
        let written = unix_ms(words.next()?)?;
        let start = unix_ms(words.next()?)?;
        let _loop: u32 = words.next()?.parse().ok()?;
        let rest = words.next().unwrap_or("").trim();
        let seen = match rest.strip_prefix("ERR ") {
            Some(code) => match code.trim() {
                "7" => Seen::Refused,
                "28" => Seen::Timeout,
                _ => Seen::Other,
            },
            None if rest.is_empty() => Seen::Incomplete,
            None => Seen::Answer {
                responder: rest.to_string(),
            },
        };
        Some(Try {
            channel: "logs",
            client: self.client.clone(),
            target: self.target.clone(),
            protocol: "http",
            sent_ms: start,
            received_ms: written.max(start),
            seen,
            raw: line.to_string(),
        })
    }
}

/// Unix milliseconds of an RFC 3339 timestamp (`2025-01-01T00:00:01.200000000Z`, any
/// number of fractional digits, or none); `None` before 1970.
pub fn unix_ms(ts: &str) -> Option<u128> {
    u128::try_from(ts.parse::<jiff::Timestamp>().ok()?.as_millisecond()).ok()
}

/// Tries per second over the tries' span (start of the first to start of the last).
pub fn rate(tries: &[Try]) -> f64 {
    let (Some(first), Some(last)) = (
        tries.iter().map(|t| t.sent_ms).min(),
        tries.iter().map(|t| t.sent_ms).max(),
    ) else {
        return 0.0;
    };
    if last == first {
        return 0.0;
    }
    (tries.len() - 1) as f64 * 1000.0 / (last - first) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read() {
        assert_eq!(unix_ms("1970-01-01T00:00:01.250000000Z"), Some(1250));
        assert_eq!(unix_ms("2025-01-01T00:00:00Z"), Some(1_735_689_600_000));
        assert_eq!(unix_ms("2025-01-01T00:00:00.5Z"), Some(1_735_689_600_500));
        assert_eq!(unix_ms("2025-13-01T00:00:00Z"), None);
        assert_eq!(unix_ms("yesterday"), None);
    }

    #[test]
    fn lines_become_tries() {
        let l = ProbeLoop::new("loop-n1", "node-a", "10.96.0.10:80");
        assert_eq!(l.loops, 5);
        let t = l
            .parse("2025-01-01T00:00:01.300000000Z 2025-01-01T00:00:01.200000000Z 0 e-be-n1")
            .unwrap();
        assert_eq!(t.channel, "logs");
        assert_eq!(
            t.seen,
            Seen::Answer {
                responder: "e-be-n1".into()
            }
        );
        assert_eq!(t.received_ms - t.sent_ms, 100);
        let e = |code: &str| {
            l.parse(&format!(
                "2025-01-01T00:00:02.000000000Z 2025-01-01T00:00:01.500000000Z 3 ERR {code}"
            ))
            .unwrap()
            .seen
        };
        assert_eq!(e("28"), Seen::Timeout);
        assert_eq!(e("7"), Seen::Refused);
        assert_eq!(e("6"), Seen::Other);
        assert!(l.parse("sh: date: not found").is_none());
        assert_eq!(loops_for(10, 100, 1000), 10);
        assert_eq!(loops_for(10, 100, 50), 1);
    }

    #[test]
    fn the_manifest_declares_the_loop_in_env() {
        let m = ProbeLoop::new("loop-n1", "node-a", "10.96.0.10:80").manifest("ns", "r");
        let env = &m["spec"]["containers"][0]["env"];
        assert_eq!(env[0]["value"], "10.96.0.10:80/hostname");
        assert_eq!(env[3]["name"], "LOCALITY_PROBE_LOOPS");
        assert!(LOOP_SCRIPT.contains("ERR $?"));
    }
}
