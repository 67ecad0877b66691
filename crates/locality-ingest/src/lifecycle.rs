//! Lean wire types of what decides how a container becomes ready and stops: `readinessProbe`,
//! `lifecycle.preStop`. Read for `locality simulate`, which times rollouts with them; nothing
//! here decides routing, so values are read leniently (an odd probe never fails a dump).

use std::fmt;

use locality_model::objects as m;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::wire::{Int64, M, nullable};

/// `readinessProbe`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProbeW {
    #[serde(default)]
    tcp_socket: Option<M<PortHolderW>>,
    #[serde(default)]
    http_get: Option<M<HttpGetW>>,
    #[serde(default)]
    grpc: Option<M<GrpcW>>,
    #[serde(default)]
    initial_delay_seconds: Option<Int64>,
    #[serde(default)]
    period_seconds: Option<Int64>,
    #[serde(default)]
    failure_threshold: Option<Int64>,
    #[serde(default)]
    success_threshold: Option<Int64>,
}

#[derive(Deserialize, Default)]
pub(crate) struct PortHolderW {
    #[serde(default)]
    port: Option<ProbePortW>,
}

#[derive(Deserialize, Default)]
pub(crate) struct HttpGetW {
    #[serde(default, deserialize_with = "nullable")]
    path: String,
    #[serde(default)]
    port: Option<ProbePortW>,
}

#[derive(Deserialize, Default)]
pub(crate) struct GrpcW {
    #[serde(default)]
    port: Option<Int64>,
}

/// A probe's port: a number or a container port name (an out-of-range number is kept as 0,
/// which resolves to no port).
pub(crate) struct ProbePortW(m::TargetPort);

impl<'de> Deserialize<'de> for ProbePortW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ProbePortW;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a port number or a port name")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ProbePortW, E> {
                Ok(ProbePortW(m::TargetPort::Number(u16::try_from(v).unwrap_or(0))))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ProbePortW, E> {
                Ok(ProbePortW(m::TargetPort::Number(u16::try_from(v).unwrap_or(0))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProbePortW, E> {
                Ok(ProbePortW(match v.parse::<u16>() {
                    Ok(n) => m::TargetPort::Number(n),
                    Err(_) => m::TargetPort::Name(v.to_owned()),
                }))
            }
        }
        d.deserialize_any(V)
    }
}

impl ProbeW {
    pub(crate) fn into_model(self) -> m::Probe {
        let port = |p: Option<ProbePortW>| p.map_or(m::TargetPort::Number(0), |p| p.0);
        let handler = if let Some(M(t)) = self.tcp_socket {
            m::ProbeHandler::TcpSocket { port: port(t.port) }
        } else if let Some(M(h)) = self.http_get {
            m::ProbeHandler::HttpGet {
                path: h.path,
                port: port(h.port),
            }
        } else if let Some(M(g)) = self.grpc {
            m::ProbeHandler::Grpc {
                port: g.port.and_then(|p| u16::try_from(p.0).ok()).unwrap_or(0),
            }
        } else {
            m::ProbeHandler::Exec
        };
        m::Probe {
            handler,
            initial_delay_seconds: self.initial_delay_seconds.map(|v| v.0),
            period_seconds: self.period_seconds.map(|v| v.0),
            failure_threshold: self.failure_threshold.map(|v| v.0),
            success_threshold: self.success_threshold.map(|v| v.0),
        }
    }
}

/// `lifecycle`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LifecycleW {
    #[serde(default)]
    pre_stop: Option<M<HandlerW>>,
}

/// A lifecycle handler (`exec`, `httpGet`, `sleep`, `tcpSocket`).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HandlerW {
    #[serde(default)]
    exec: Option<M<ExecW>>,
    #[serde(default)]
    http_get: Option<de::IgnoredAny>,
    #[serde(default)]
    sleep: Option<M<SleepW>>,
}

#[derive(Deserialize, Default)]
pub(crate) struct ExecW {
    #[serde(default, deserialize_with = "nullable")]
    command: Vec<String>,
}

#[derive(Deserialize, Default)]
pub(crate) struct SleepW {
    #[serde(default)]
    seconds: Option<Int64>,
}

/// Seconds of an `exec` command that only sleeps: `sleep N`, `/bin/sleep N`, or a shell's
/// `-c "sleep N"` (the usual way to hold a pod in the endpoints while kube-proxy catches up).
fn sleep_seconds(command: &[String]) -> Option<i64> {
    let words: Vec<&str> = match command {
        [sh, c, script] if sh.ends_with("sh") && c == "-c" => script.split_whitespace().collect(),
        _ => command.iter().map(String::as_str).collect(),
    };
    match words[..] {
        [cmd, n] if cmd == "sleep" || cmd.ends_with("/sleep") => n.trim_end_matches('s').parse::<i64>().ok(),
        _ => None,
    }
}

impl LifecycleW {
    /// The preStop hook, if any.
    pub(crate) fn pre_stop(self) -> Option<m::PreStop> {
        let M(h) = self.pre_stop?;
        if let Some(M(s)) = h.sleep {
            return Some(m::PreStop::Sleep {
                seconds: s.seconds.map_or(0, |v| v.0),
            });
        }
        if let Some(M(e)) = h.exec {
            return Some(match sleep_seconds(&e.command) {
                Some(seconds) => m::PreStop::Sleep { seconds },
                None => m::PreStop::Unknown {
                    handler: "exec".into(),
                },
            });
        }
        h.http_get.map(|_| m::PreStop::Unknown {
            handler: "httpGet".into(),
        })
    }
}

/// agnhost netexec's `--delay-shutdown` in a container's `command` or `args` (`--delay-shutdown=N`
/// or `--delay-shutdown N`): after SIGTERM the process keeps serving N seconds, then exits (as
/// the simulated API server reads it). Read word by word without keeping the words: most
/// containers' command lines are not wanted.
#[derive(Default)]
pub(crate) struct DelayShutdownW(pub(crate) Option<i64>);

/// One word of a command line, as [`DelayShutdownW`] needs it.
enum Word {
    /// `--delay-shutdown=N`.
    Flag(Option<i64>),
    /// `--delay-shutdown`: the value is the next word.
    Bare,
    /// Another word, and its value as a number if it is one.
    Other(Option<i64>),
}

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Word;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Word, E> {
                Ok(Word::of(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Word, E> {
                Ok(Word::Other(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Word, E> {
                Ok(Word::Other(i64::try_from(v).ok()))
            }
        }
        d.deserialize_any(V)
    }
}

/// [`DelayShutdownW`] of a command line already read (a workload template's container).
pub(crate) fn delay_shutdown<'a>(words: impl Iterator<Item = &'a str>) -> Option<i64> {
    let (mut found, mut bare) = (None, false);
    for w in words {
        let w = Word::of(w);
        match w {
            Word::Flag(n) => found = n.or(found),
            Word::Other(n) if bare => found = n.or(found),
            Word::Bare | Word::Other(_) => {}
        }
        bare = matches!(w, Word::Bare);
    }
    found
}

impl Word {
    fn of(v: &str) -> Word {
        match v.strip_prefix("--delay-shutdown") {
            Some("") => Word::Bare,
            Some(rest) => match rest.strip_prefix('=') {
                Some(n) => Word::Flag(n.parse().ok()),
                None => Word::Other(None),
            },
            None => Word::Other(v.parse().ok()),
        }
    }
}

impl<'de> Deserialize<'de> for DelayShutdownW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DelayShutdownW;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_unit<E: de::Error>(self) -> Result<DelayShutdownW, E> {
                Ok(DelayShutdownW(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<DelayShutdownW, E> {
                Ok(DelayShutdownW(None))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<DelayShutdownW, A::Error> {
                let (mut found, mut bare) = (None, false);
                while let Some(w) = seq.next_element::<Word>()? {
                    match w {
                        Word::Flag(n) => found = n.or(found),
                        Word::Other(n) if bare => found = n.or(found),
                        Word::Bare | Word::Other(_) => {}
                    }
                    bare = matches!(w, Word::Bare);
                }
                Ok(DelayShutdownW(found))
            }
        }
        d.deserialize_any(V)
    }
}

/// The longer of two preStop hooks (an unknown duration wins: it is what must be assumed).
pub(crate) fn longer(a: Option<m::PreStop>, b: Option<m::PreStop>) -> Option<m::PreStop> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(m::PreStop::Sleep { seconds: x }), Some(m::PreStop::Sleep { seconds: y })) => {
            Some(m::PreStop::Sleep { seconds: x.max(y) })
        }
        (Some(u @ m::PreStop::Unknown { .. }), _) | (_, Some(u @ m::PreStop::Unknown { .. })) => Some(u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agnhost_delay_shutdown_is_read_in_both_spellings() {
        let read = |j: &str| serde_json::from_str::<DelayShutdownW>(j).unwrap().0;
        assert_eq!(
            read(r#"["netexec", "--http-port=8080", "--delay-shutdown=3600"]"#),
            Some(3600)
        );
        assert_eq!(read(r#"["netexec", "--delay-shutdown", "15"]"#), Some(15));
        assert_eq!(read(r#"["netexec", "--http-port=8080", "15"]"#), None);
        assert_eq!(read(r#"["--delay-shutdown-x=3"]"#), None);
        assert_eq!(read("null"), None);
    }

    #[test]
    fn exec_sleep_is_read_in_its_usual_spellings() {
        let c = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(sleep_seconds(&c(&["sleep", "5"])), Some(5));
        assert_eq!(sleep_seconds(&c(&["/bin/sleep", "15"])), Some(15));
        assert_eq!(sleep_seconds(&c(&["/bin/sh", "-c", "sleep 10"])), Some(10));
        assert_eq!(
            sleep_seconds(&c(&["/bin/sh", "-c", "nginx -s quit; sleep 3"])),
            None
        );
        assert_eq!(sleep_seconds(&c(&["drain.sh"])), None);
    }
}
