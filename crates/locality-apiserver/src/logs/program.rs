//! What a simulated client pod runs, read from its declared `command`/`args`/`env`: a
//! one-shot `curl` or a probe loop (the module [`super`] describes both).

use locality_sim::Target;
use locality_sim::time::Millis;
use serde_json::Value;

use crate::limits::{MAX_PROBE_TRIES_PER_SECOND, MIN_PROBE_INTERVAL_MS};

/// A parsed one-shot curl command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Curl {
    pub(super) silent: bool,
    pub(super) show_error: bool,
    pub(super) fail: bool,
    pub(super) timeout_ms: Option<Millis>,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) path: String,
}

/// A probe loop's parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProbeLoop {
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) interval_ms: Millis,
    pub(super) timeout_ms: Millis,
    pub(super) loops: u32,
    /// The path tried (`/hostname` by default; kube-proxy's `/metrics` on loopback).
    pub(super) path: String,
    /// `LOCALITY_PROBE_GREP` of the form `^(NAME|NAME…) `: of a successful answer, only
    /// the lines starting with one of the names and a space are written, each after the
    /// try's prefix (what `grep -E` and `sed` do in the real script).
    pub(super) grep: Option<Vec<String>>,
}

/// The names of a `^(A|B) ` pattern, the only form of `LOCALITY_PROBE_GREP` simulated.
fn grep_names(pattern: &str) -> Option<Vec<String>> {
    let inner = pattern.strip_prefix("^(")?.strip_suffix(") ")?;
    let names: Vec<String> = inner.split('|').map(str::to_string).collect();
    names
        .iter()
        .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(names)
}

/// What a client pod runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Program {
    Curl(Curl),
    Loop(ProbeLoop),
}

pub(super) fn words_of(c: &Value) -> Vec<String> {
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

pub(super) fn env_of<'a>(c: &'a Value, name: &str) -> Option<&'a str> {
    c.get("env")?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_str()
}

pub(super) fn probe_loop_of(c: &Value) -> Option<ProbeLoop> {
    let target = env_of(c, "LOCALITY_PROBE_TARGET")?;
    let (host, port, path) = split_url(target)?;
    let path = if path == "/" {
        "/hostname".to_string()
    } else {
        path
    };
    let grep = env_of(c, "LOCALITY_PROBE_GREP").and_then(grep_names);
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
        path,
        grep,
    })
}

pub(super) fn secs_to_ms(v: &str) -> Option<Millis> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| (s * 1000.0).round() as Millis)
}

pub(super) fn parse_curl(args: &[String]) -> Option<Curl> {
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
pub(super) fn split_url(url: &str) -> Option<(String, u16, String)> {
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

pub(super) fn target_of(host: &str, port: u16) -> Target {
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => Target::Addr(ip, port),
        Err(_) => Target::Dns(host.to_string(), port),
    }
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
}
