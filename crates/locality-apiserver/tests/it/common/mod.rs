//! Shared helpers: a served simulated cluster, raw HTTP, and the real kubectl.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use locality_apiserver::{Running, ServeOptions};
use locality_sim::{SimConfig, Topology};
use locality_testkit::files::TempDir;

/// A scratch directory for one test, removed when dropped.
pub fn scratch() -> TempDir {
    TempDir::new("apiserver")
}

/// The `three-zones` topology with the playbook fixture, settled, served at `speed`.
pub fn start(speed: f64) -> Running {
    let topology = Topology::builtin("three-zones").expect("built-in topology");
    let mut opts = ServeOptions::from_topology(&topology, SimConfig::default()).expect("engine");
    locality_sim::builders::playbook_fixture(&mut opts.engine).expect("fixture");
    opts.engine.run_for(10_000);
    opts.speed = speed;
    locality_apiserver::serve(opts).expect("serve")
}

/// Fails the test unless a kubectl binary runs (the kubectl tests are ignored by default).
pub fn require_kubectl() {
    let ok = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "kubectl is not on PATH: this test is #[ignore]d by default and runs under the nextest profile `kubectl`, which needs it"
    );
}

/// Output of `kubectl --kubeconfig K ARGS`.
pub struct Out {
    /// Exit status 0.
    pub ok: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the real kubectl against the server.
pub fn kubectl(r: &Running, args: &[&str]) -> Out {
    kubectl_bin(std::path::Path::new("kubectl"), r, args)
}

/// Runs the kubectl binary `bin` (e.g. a versioned `kubectl.1.32`) against the server.
#[allow(dead_code)] // not every test binary that includes the kit runs other versions
pub fn kubectl_bin(bin: &std::path::Path, r: &Running, args: &[&str]) -> Out {
    let out = Command::new(bin)
        .arg("--kubeconfig")
        .arg(r.kubeconfig_path())
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run kubectl");
    Out {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Polls `f` until it returns `Some`, for at most `secs` wall seconds.
pub fn eventually<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A raw HTTP/1.1 request (`Connection: close`); returns the status code and the whole
/// response after the headers (chunk framing included for streamed answers).
pub fn http(r: &Running, method: &str, path: &str, content_type: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).expect("write");
    let (code, text) = read_response(s);
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    (code, body)
}

/// Reads until the server closes: the status code (0 when nothing came) and the whole text.
pub fn read_response(mut s: TcpStream) -> (u16, String) {
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, text)
}

/// `http` for a JSON answer.
pub fn get_json(r: &Running, path: &str) -> (u16, serde_json::Value) {
    let (code, body) = http(r, "GET", path, "application/json", "");
    (
        code,
        serde_json::from_str(&body).unwrap_or(serde_json::Value::Null),
    )
}
