//! `pods/log` for simulated client pods, by their declared parameters (no code runs).
//!
//! Two kinds of pods write logs; every other pod's log is empty.
//!
//! **One-shot `curl` pods**: a container whose `command`/`args` run `curl` (a word ending in
//! `curl`, also inside `sh -c "…"`), or whose image contains `curl` (the image's entrypoint
//! is curl: the words are curl's arguments). Read: `-s`/`--silent`, `-S`/`--show-error`,
//! `-f`/`--fail`, `-m T`/`--max-time T`, `--connect-timeout T` (seconds, fractions allowed;
//! default 300 s), and the first non-option word as the URL (`http://` optional, `[::1]`
//! brackets). When the container starts (the instant the simulated kubelet runs it):
//! - `127.0.0.1`, `localhost`, `[::1]` port 10249 from a **hostNetwork** pod on node N reach
//!   N's simulated kube-proxy: `/proxyMode` ([`locality_sim::Engine::proxy_mode_text`], no
//!   trailing newline, as kube-proxy writes it), `/metrics`
//!   ([`locality_sim::Engine::metrics_text`]), any other path `404 page not found` (exit 22
//!   with `-f`). A pod-network pod, any other loopback port, and a node whose profile is
//!   `other` (no kube-proxy): connection refused.
//! - Any other host (Service name, ClusterIP, pod IP) is a connection through
//!   [`locality_sim::Engine::connect`] from the pod; the body is the responder's hostname (the
//!   simulated netexec `/hostname`; other paths are answered the same way — a simplification).
//!
//! The log is what curl prints: the body, or on failure (unless `-s` without `-S`, as real
//! curl) one line `curl: (7) Failed to connect to HOST port PORT after 0 ms: Couldn't connect
//! to server`, `curl: (28) Connection timed out after T milliseconds` (T = the timeout in ms),
//! `curl: (6) Could not resolve host: NAME`. A timeout's line is written T ms after the start.
//! The pod then becomes `Succeeded` (exit 0) or `Failed` (curl's exit code), and
//! `status.containerStatuses[].state.terminated.exitCode` carries the code.
//!
//! **Probe-loop client pods** (docs/design.md §5.2 channel `logs`): a container with the environment
//! variable `LOCALITY_PROBE_TARGET` (`host:port/path`, path default `/hostname`),
//! `LOCALITY_PROBE_INTERVAL_MS` (default 100), `LOCALITY_PROBE_TIMEOUT_MS` (default 1000) and
//! `LOCALITY_PROBE_LOOPS` (default 1, at most 1000), and optionally `LOCALITY_PROBE_GREP`
//! (simulated in the form `^(NAME|NAME…) `: only the answer's lines starting with one of the
//! names and a space are written, each after the try's prefix; a hostNetwork loop on
//! `127.0.0.1:10249/metrics` so follows kube-proxy's sync state). The interval is at least
//! [`MIN_PROBE_INTERVAL_MS`] and at least `LOOPS × 1000 / MAX_PROBE_TRIES_PER_SECOND` ms
//! (shorter ones run at that interval: the simulated pods run inside the server, and a 1 ms
//! loop would hold it). The real pod runs, per loop `L` in `0..LOOPS`:
//!
//! ```sh
//! while true; do
//!   ts=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
//!   if out=$(curl -s --max-time "$TIMEOUT_S" "http://$LOCALITY_PROBE_TARGET"); then
//!     echo "$ts $L $out"; else echo "$ts $L ERR $?"; fi
//!   sleep "$INTERVAL_S"
//! done
//! ```
//!
//! Simulated, loop `L`'s tries start on the grid `start + k × INTERVAL` (virtual time; a try
//! that outlasts the interval makes the loop skip the grid points it missed) and each is one
//! [`locality_sim::Engine::connect`] at that instant with the timeout. Each try writes one line
//! `<ts> <L> <responder hostname>` or `<ts> <L> ERR <curl exit code>` (7 refused, 28 timeout,
//! 6 unknown host), `<ts>` the try's start as RFC 3339 with 9 fractional digits
//! (`2025-01-01T00:00:01.200000000Z`). The line is written when the try ends (at its start,
//! or its start plus the timeout for a timeout); the log is ordered by that write time. Loops
//! stop once the pod is deleted (the documented script traps TERM and exits).
//!
//! Pods created through the API are followed from their start. A pod made by a controller
//! (Deployment, DaemonSet) from a template declaring a program is only noticed when its log is
//! first read: it runs from that instant (earlier tries are not invented).
//!
//! Tries are computed as the virtual clock passes their instants (the engine is run event by
//! event up to each try), so repeated reads agree and each read extends the previous one.
//!
//! **Parameters**: `container` (checked against the pod's containers: 400 when unknown, or
//! when missing for a multi-container pod, as the real API server), `sinceTime` (RFC 3339;
//! lines written at or after it), `sinceSeconds`, `timestamps=true` (each line prefixed with
//! its write time, RFC 3339 with 9 fractional digits, and one space, as the kubelet does),
//! `tailLines`, `limitBytes`, and `follow=true`: the answer streams (chunked) the log so far, then
//! every line as the scaled virtual clock reaches its write instant, and ends when the
//! container terminates (the pod `Succeeded`, `Failed`, or removed), when `limitBytes` is
//! reached, or when the client disconnects; a pod that writes no log (netexec) streams nothing
//! until it goes. `previous` is ignored (containers never restart). A pod that has not
//! started: 400 `container "C" in pod "P" is waiting to start: ContainerCreating`.

use std::sync::Arc;

use hyper::body::Bytes;
use locality_model::objects::{PodPhase, Protocol};
use locality_sim::time::{Millis, rfc3339_micros};
use locality_sim::{Client, ConnectError, Outcome};
use locality_sim::{Kind, Object, ObjectKey};
use serde_json::Value;

use crate::http::{Body, Query, response};
use crate::status::ApiError;
use crate::{Shared, Sim};

mod program;
mod read;

use program::target_of;
pub(crate) use program::{Program, program_of};
pub(crate) use read::pods_log;

/// kube-proxy's metrics port.
const METRICS_PORT: u16 = 10249;
/// curl's default connect timeout (ms).
const CURL_DEFAULT_TIMEOUT_MS: Millis = 300_000;
/// Key in the raw JSON of a pod holding its container's exit code (read by `encode`).
pub(crate) const EXIT_CODE_KEY: &str = "x-locality-sim-exit-code";
/// A client pod's run: its program, start instant and log so far.
#[derive(Debug, Clone)]
pub(crate) struct ClientRun {
    key: ObjectKey,
    uid: String,
    program: Program,
    started: Option<Millis>,
    /// Per loop: the next try's start (probe loops).
    next: Vec<Millis>,
    /// One-shot: (finish instant, exit code) once computed; `done` once applied.
    finish: Option<(Millis, i32)>,
    done: bool,
    /// (write instant, text) ordered by write instant; text may hold several lines.
    log: Vec<(Millis, String)>,
}

/// Registers a pod created through the API when its JSON declares a client program.
pub(crate) fn register(sim: &mut Sim, key: &ObjectKey, uid: &str, value: &Value) {
    let Some(program) = value.get("spec").and_then(program_of) else {
        return;
    };
    sim.clients.insert(
        uid.to_string(),
        ClientRun {
            key: key.clone(),
            uid: uid.to_string(),
            program,
            started: None,
            next: Vec::new(),
            finish: None,
            done: false,
            log: Vec::new(),
        },
    );
}
/// RFC 3339 with 9 fractional digits (Go's `RFC3339NanoFixed`, `date +%N`).
pub(crate) fn rfc3339_nano(t: Millis) -> String {
    let micros = rfc3339_micros(t);
    format!("{}000Z", &micros[..micros.len() - 1])
}

/// Runs the engine up to `t`, event by event, starting client pods and running their tries
/// at their virtual instants.
pub(crate) fn run_until(sim: &mut Sim, t: Millis) {
    loop {
        let due = next_due(sim);
        let event = sim.engine.next_event_time().filter(|e| *e <= t);
        match (event, due.filter(|d| *d <= t)) {
            (Some(e), d) if d.is_none_or(|d| e <= d) => {
                sim.engine.step();
                detect_starts(sim);
            }
            (_, Some(d)) => {
                sim.engine.run_until(d);
                act(sim, d);
            }
            _ => break,
        }
    }
    if t > sim.engine.now() {
        sim.engine.run_until(t);
    }
    detect_starts(sim);
}

fn next_due(sim: &Sim) -> Option<Millis> {
    sim.clients
        .values()
        .filter(|c| c.started.is_some() && !c.done)
        .filter_map(|c| match &c.program {
            Program::Curl(_) => Some(c.finish.map_or(c.started.unwrap_or(0), |f| f.0)),
            Program::Loop(_) => c.next.iter().min().copied(),
        })
        .min()
}

fn detect_starts(sim: &mut Sim) {
    let now = sim.engine.now();
    let mut gone = Vec::new();
    for (uid, c) in sim.clients.iter_mut() {
        let pod = sim.engine.get(&c.key).and_then(Object::as_pod);
        let Some(pod) = pod.filter(|p| p.pod.meta.uid == *uid) else {
            gone.push(uid.clone());
            continue;
        };
        if c.started.is_none() && pod.pod.phase == PodPhase::Running {
            c.started = Some(now);
            if let Program::Loop(l) = &c.program {
                c.next = vec![now; l.loops as usize];
            }
        }
        if matches!(c.program, Program::Loop(_)) && pod.pod.meta.deletion_timestamp.is_some() {
            c.done = true;
        }
    }
    for uid in gone {
        sim.clients.remove(&uid);
    }
}

/// What one connection attempt gives: `Ok(body)` or `Err(curl exit code, message, duration)`.
fn attempt(
    sim: &mut Sim,
    key: &ObjectKey,
    host: &str,
    port: u16,
    path: &str,
    timeout_ms: Millis,
) -> Result<String, (i32, String, Millis)> {
    let refused = |h: &str| {
        (
            7,
            format!("curl: (7) Failed to connect to {h} port {port} after 0 ms: Couldn't connect to server"),
            0,
        )
    };
    let pod = sim.engine.get(key).and_then(Object::as_pod).cloned();
    let Some(pod) = pod else {
        return Err(refused(host));
    };
    if matches!(host, "127.0.0.1" | "localhost" | "::1") {
        if !(pod.pod.spec.host_network && port == METRICS_PORT) {
            return Err(refused(host));
        }
        let node = &pod.pod.spec.node_name;
        let text = match path {
            "/proxyMode" => sim.engine.proxy_mode_text(node),
            "/metrics" => sim.engine.metrics_text(node),
            _ => sim
                .engine
                .proxy_mode_text(node)
                .map(|m| m.map(|_| "404 page not found\n".into())),
        };
        return match text {
            Ok(Some(body)) => Ok(body),
            _ => Err(refused(host)),
        };
    }
    let client = Client::pod(&key.namespace, &key.name);
    match sim
        .engine
        .connect(&client, &target_of(host, port), Protocol::TCP, timeout_ms)
    {
        Ok(Outcome::Response { namespace, pod, .. }) => {
            let responder = sim
                .engine
                .get(&ObjectKey::new(Kind::Pod, namespace, &pod))
                .and_then(Object::as_pod)
                .map_or(pod.clone(), crate::proxy::hostname);
            Ok(responder)
        }
        Ok(Outcome::Timeout) => Err((
            28,
            format!("curl: (28) Connection timed out after {timeout_ms} milliseconds"),
            timeout_ms,
        )),
        Ok(Outcome::Refused) => Err(refused(host)),
        Err(ConnectError::NoSuchHost(_)) => Err((6, format!("curl: (6) Could not resolve host: {host}"), 0)),
        Err(_) => Err(refused(host)),
    }
}

fn push_log(log: &mut Vec<(Millis, String)>, at: Millis, text: String) {
    let i = log.partition_point(|(w, _)| *w <= at);
    log.insert(i, (at, text));
}

/// Runs everything due at `d`.
fn act(sim: &mut Sim, d: Millis) {
    let due: Vec<String> = sim
        .clients
        .iter()
        .filter(|(_, c)| c.started.is_some() && !c.done)
        .map(|(u, _)| u.clone())
        .collect();
    for uid in due {
        let Some(mut c) = sim.clients.remove(&uid) else {
            continue;
        };
        match c.program.clone() {
            Program::Curl(curl) => match c.finish {
                None if c.started.is_some_and(|s| s <= d) => {
                    let timeout = curl.timeout_ms.unwrap_or(CURL_DEFAULT_TIMEOUT_MS);
                    let (text, code, dur) =
                        match attempt(sim, &c.key, &curl.host, curl.port, &curl.path, timeout) {
                            Ok(body) if curl.fail && body.starts_with("404 page not found") => (
                                "curl: (22) The requested URL returned error: 404\n".to_string(),
                                22,
                                0,
                            ),
                            Ok(body) => (body, 0, 0),
                            Err((code, msg, dur)) => (format!("{msg}\n"), code, dur),
                        };
                    let shown = code == 0 || !curl.silent || curl.show_error;
                    if shown && !text.is_empty() {
                        push_log(&mut c.log, d + dur, text);
                    }
                    c.finish = Some((d + dur, code));
                }
                Some((f, code)) if f <= d => {
                    c.done = true;
                    finish_pod(sim, &c, code);
                }
                _ => {}
            },
            Program::Loop(l) => {
                let start = c.started.unwrap_or(d);
                for (i, next) in c.next.clone().iter().enumerate() {
                    if *next > d {
                        continue;
                    }
                    let host = l.host.clone();
                    let ts = rfc3339_nano(*next);
                    let line = match attempt(sim, &c.key, &host, l.port, &l.path, l.timeout_ms) {
                        Ok(body) => match &l.grep {
                            // `echo "$out" | grep -E … | sed "s/^/$ts $L /"`: nothing when no
                            // line matches.
                            Some(names) => (
                                d,
                                body.lines()
                                    .filter(|line| {
                                        names.iter().any(|n| {
                                            line.strip_prefix(n.as_str()).is_some_and(|r| r.starts_with(' '))
                                        })
                                    })
                                    .map(|line| format!("{ts} {i} {line}\n"))
                                    .collect(),
                            ),
                            None => (d, format!("{ts} {i} {}\n", body.trim_end())),
                        },
                        Err((code, _, dur)) => (d + dur, format!("{ts} {i} ERR {code}\n")),
                    };
                    let end = line.0.max(*next + l.interval_ms);
                    let k = (end - start).div_ceil(l.interval_ms);
                    c.next[i] = start + k * l.interval_ms;
                    if !line.1.is_empty() {
                        push_log(&mut c.log, line.0, line.1);
                    }
                }
            }
        }
        sim.clients.insert(uid, c);
    }
}

fn finish_pod(sim: &mut Sim, c: &ClientRun, code: i32) {
    let Some(Object::Pod(mut pod)) = sim.engine.get(&c.key).cloned() else {
        return;
    };
    if pod.pod.meta.uid != c.uid {
        return;
    }
    pod.pod.phase = if code == 0 {
        PodPhase::Succeeded
    } else {
        PodPhase::Failed
    };
    pod.pod.ready = false;
    // The engine accepts status updates; if it refused, the log is still served.
    let _ = sim.engine.update(Object::Pod(pod), None);
    if let Some(raw) = sim.raw.get_mut(&c.uid).and_then(Value::as_object_mut) {
        raw.insert(EXIT_CODE_KEY.into(), Value::from(code));
    }
}

/// Parses RFC 3339 (`2025-01-01T00:00:05Z`, fractions and offsets allowed) into virtual ms
/// (instants before the simulated epoch are 0).
pub(crate) fn parse_rfc3339(s: &str) -> Option<Millis> {
    let unix_ms = s.parse::<jiff::Timestamp>().ok()?.as_millisecond();
    let rel = unix_ms - locality_sim::time::EPOCH_UNIX_SECONDS as i64 * 1000;
    Some(rel.max(0) as Millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips() {
        assert_eq!(parse_rfc3339("2025-01-01T00:00:05Z"), Some(5000));
        assert_eq!(parse_rfc3339("2025-01-01T00:00:05.250000000Z"), Some(5250));
        assert_eq!(parse_rfc3339("2025-01-01T01:00:05+01:00"), Some(5000));
        assert_eq!(rfc3339_nano(1_250), "2025-01-01T00:00:01.250000000Z");
        assert_eq!(
            parse_rfc3339(&locality_sim::time::rfc3339(86_400_000 * 40 + 7_000)),
            Some(86_400_000 * 40 + 7_000)
        );
    }
}
