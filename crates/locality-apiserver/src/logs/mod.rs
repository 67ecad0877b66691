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
//! `LOCALITY_PROBE_LOOPS` (default 1, at most 1000). The interval is at least
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
use locality_sim::time::{Millis, rfc3339};
use locality_sim::traffic::{Client, ConnectError, Outcome, Target};
use locality_sim::{Kind, Object, ObjectKey};
use serde_json::Value;

use crate::http::{Body, Query, response};
use crate::limits::{MAX_PROBE_TRIES_PER_SECOND, MIN_PROBE_INTERVAL_MS};
use crate::status::ApiError;
use crate::{Shared, Sim};

mod read;

pub(crate) use read::pods_log;

/// kube-proxy's metrics port.
const METRICS_PORT: u16 = 10249;
/// curl's default connect timeout (ms).
const CURL_DEFAULT_TIMEOUT_MS: Millis = 300_000;
/// Key in the raw JSON of a pod holding its container's exit code (read by `encode`).
pub(crate) const EXIT_CODE_KEY: &str = "x-locality-sim-exit-code";

/// A parsed one-shot curl command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Curl {
    silent: bool,
    show_error: bool,
    fail: bool,
    timeout_ms: Option<Millis>,
    host: String,
    port: u16,
    path: String,
}

/// A probe loop's parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProbeLoop {
    host: String,
    port: u16,
    interval_ms: Millis,
    timeout_ms: Millis,
    loops: u32,
}

/// What a client pod runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Program {
    Curl(Curl),
    Loop(ProbeLoop),
}

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

fn words_of(c: &Value) -> Vec<String> {
    let mut words: Vec<String> = ["command", "args"]
        .iter()
        .filter_map(|k| c.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    // `sh -c "script"`: split the script.
    if let Some(i) = words.iter().position(|w| w == "-c")
        && i > 0
        && words[i - 1].ends_with("sh")
        && let Some(script) = words.get(i + 1).cloned()
    {
        words = script
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
            .collect();
    }
    words
}

/// The client program a pod spec declares, if any.
pub(crate) fn program_of(spec: &Value) -> Option<Program> {
    let containers = spec.get("containers").and_then(Value::as_array)?;
    containers.iter().find_map(|c| {
        if let Some(p) = probe_loop_of(c) {
            return Some(Program::Loop(p));
        }
        let words = words_of(c);
        let args = match words.iter().position(|w| w.ends_with("curl")) {
            Some(i) => &words[i + 1..],
            None if c
                .get("image")
                .and_then(Value::as_str)
                .is_some_and(|i| i.contains("curl")) =>
            {
                &words[..]
            }
            None => return None,
        };
        parse_curl(args).map(Program::Curl)
    })
}

fn env_of<'a>(c: &'a Value, name: &str) -> Option<&'a str> {
    c.get("env")?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_str()
}

fn probe_loop_of(c: &Value) -> Option<ProbeLoop> {
    let target = env_of(c, "LOCALITY_PROBE_TARGET")?;
    let (host, port, _) = split_url(target)?;
    let num = |k: &str, d: u64| {
        env_of(c, k)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(d)
    };
    let loops = u32::try_from(num("LOCALITY_PROBE_LOOPS", 1))
        .unwrap_or(1)
        .clamp(1, 1000);
    // What the server sustains: a minimum interval, and at most MAX_PROBE_TRIES_PER_SECOND
    // tries per virtual second over all loops.
    let floor = (u64::from(loops) * 1000).div_ceil(MAX_PROBE_TRIES_PER_SECOND);
    Some(ProbeLoop {
        host,
        port,
        interval_ms: num("LOCALITY_PROBE_INTERVAL_MS", 100)
            .max(MIN_PROBE_INTERVAL_MS)
            .max(floor),
        timeout_ms: num("LOCALITY_PROBE_TIMEOUT_MS", 1000).max(1),
        loops,
    })
}

fn secs_to_ms(v: &str) -> Option<Millis> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| (s * 1000.0).round() as Millis)
}

fn parse_curl(args: &[String]) -> Option<Curl> {
    let mut c = Curl {
        silent: false,
        show_error: false,
        fail: false,
        timeout_ms: None,
        host: String::new(),
        port: 80,
        path: "/".into(),
    };
    let mut url = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut value = || {
            i += 1;
            args.get(i).map(String::as_str)
        };
        match a {
            "-m" | "--max-time" => c.timeout_ms = value().and_then(secs_to_ms).or(c.timeout_ms),
            "--connect-timeout" => {
                let t = value().and_then(secs_to_ms);
                c.timeout_ms = c.timeout_ms.or(t);
            }
            "--silent" => c.silent = true,
            "--show-error" => c.show_error = true,
            "--fail" => c.fail = true,
            "-H" | "-o" | "-w" | "-X" | "-d" | "-A" | "-u" | "--header" | "--output" | "--write-out"
            | "--request" | "--data" | "--retry" => {
                value();
            }
            s if s.starts_with("--") => {}
            s if s.starts_with('-') && s.len() > 1 => {
                for ch in s[1..].chars() {
                    match ch {
                        's' => c.silent = true,
                        'S' => c.show_error = true,
                        'f' => c.fail = true,
                        _ => {}
                    }
                }
                if s.ends_with('m') {
                    c.timeout_ms = value().and_then(secs_to_ms).or(c.timeout_ms);
                }
            }
            s if url.is_none() => url = Some(s.to_string()),
            _ => {}
        }
        i += 1;
    }
    let (host, port, path) = split_url(&url?)?;
    c.host = host;
    c.port = port;
    c.path = path;
    Some(c)
}

/// `[http://]host[:port][/path]` → (host without brackets, port, path).
fn split_url(url: &str) -> Option<(String, u16, String)> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .unwrap_or(url);
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let (host, port) = if let Some(h) = authority.strip_prefix('[') {
        let (h, after) = h.split_once(']')?;
        (h.to_string(), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => 80,
    };
    (!host.is_empty()).then_some((host, port, path))
}

fn target_of(host: &str, port: u16) -> Target {
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => Target::Addr(ip, port),
        Err(_) => Target::Dns(host.to_string(), port),
    }
}

/// RFC 3339 with 9 fractional digits (Go's `RFC3339NanoFixed`, `date +%N`).
pub(crate) fn rfc3339_nano(t: Millis) -> String {
    let base = rfc3339(t);
    format!("{}.{:03}000000Z", &base[..base.len() - 1], t % 1000)
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
                    let line = match attempt(sim, &c.key, &host, l.port, "/hostname", l.timeout_ms) {
                        Ok(who) => (d, format!("{} {i} {who}\n", rfc3339_nano(*next))),
                        Err((code, _, dur)) => (d + dur, format!("{} {i} ERR {code}\n", rfc3339_nano(*next))),
                    };
                    let end = line.0.max(*next + l.interval_ms);
                    let k = (end - start).div_ceil(l.interval_ms);
                    c.next[i] = start + k * l.interval_ms;
                    push_log(&mut c.log, line.0, line.1);
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

/// Days from 1970-01-01 of a civil date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses RFC 3339 (`2025-01-01T00:00:05Z`, fractions and offsets allowed) into virtual ms
/// (instants before the simulated epoch are 0).
pub(crate) fn parse_rfc3339(s: &str) -> Option<Millis> {
    let b = s.as_bytes();
    // ASCII only: every index below is then a character boundary (no slicing panic).
    if !s.is_ascii() || b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    let mut ms = 0i64;
    if let Some(f) = rest.strip_prefix('.') {
        let digits: String = f.chars().take_while(char::is_ascii_digit).collect();
        let padded = format!("{digits:0<3}");
        ms = padded[..3].parse().ok()?;
        rest = &f[digits.len()..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        o if o.len() == 6 => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (o[1..3].parse::<i64>().ok()? * 3600 + o[4..6].parse::<i64>().ok()? * 60)
        }
        _ => return None,
    };
    let unix = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset;
    let rel = (unix - locality_sim::time::EPOCH_UNIX_SECONDS as i64) * 1000 + ms;
    Some(rel.max(0) as Millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_curl_and_urls() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let c = parse_curl(&w("-sS -m 2 http://myservice:80/hostname")).unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.path.as_str()),
            ("myservice", 80, "/hostname")
        );
        assert_eq!(c.timeout_ms, Some(2000));
        assert!(c.silent && c.show_error);
        let c = parse_curl(&w("-s [::1]:10249/metrics")).unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.path.as_str()),
            ("::1", 10249, "/metrics")
        );
        let spec = serde_json::json!({"containers": [{"name": "c", "image": "busybox",
            "command": ["sh", "-c", "curl -s 127.0.0.1:10249/proxyMode"]}]});
        assert!(matches!(program_of(&spec), Some(Program::Curl(_))));
    }

    #[test]
    fn rfc3339_round_trips() {
        assert_eq!(parse_rfc3339("2025-01-01T00:00:05Z"), Some(5000));
        assert_eq!(parse_rfc3339("2025-01-01T00:00:05.250000000Z"), Some(5250));
        assert_eq!(parse_rfc3339("2025-01-01T01:00:05+01:00"), Some(5000));
        assert_eq!(rfc3339_nano(1_250), "2025-01-01T00:00:01.250000000Z");
        assert_eq!(
            parse_rfc3339(&rfc3339(86_400_000 * 40 + 7_000)),
            Some(86_400_000 * 40 + 7_000)
        );
    }
}
