//! Load tests of `locality sim serve` (issue #38), against the built binary in a child
//! process: each test puts one kind of load on the server (long query strings on one
//! kept-alive connection, hostile watch and list parameters, 20,000 connections holding a
//! partial header, 3,000 watches that never read) while a small client lists pods every
//! 100 ms, and checks that nothing panicked, that the small client got every answer within a
//! second, that the server's peak RSS stayed under 300 MB, and that every refused request got
//! the status code and `Status` reason a real API server gives.
//!
//! They take minutes and measure time and memory, so they are `#[ignore]`d and run alone
//! under their own nextest profile: `cargo nextest run -p locality --profile sim-load
//! --run-ignored only`. `LOCALITY_LOAD_BIN` names another `locality` binary to test (a
//! release build, or an older one to compare); by default the one cargo built.

mod connections;
mod lists;
mod objects;
mod queries;
mod watchers;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use locality_testkit::files::TempDir;
use serde_json::Value;

/// Largest peak RSS of the server allowed under load (kB).
pub const MAX_PEAK_RSS_KB: u64 = 300 * 1024;

/// Longest the small client may wait for an answer under load.
pub const MAX_LATENCY: Duration = Duration::from_secs(1);

/// Longest a whole `kubectl get pods -A` may take under load: its own start and discovery
/// (about ten requests, a fresh cache) on top of the answers.
pub const MAX_KUBECTL: Duration = Duration::from_secs(5);

/// A `locality sim serve` child process, killed on drop.
pub struct Server {
    child: std::process::Child,
    /// Holds the kubeconfig and the server's stderr.
    dir: TempDir,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary under test.
fn binary() -> PathBuf {
    std::env::var_os("LOCALITY_LOAD_BIN")
        .map_or_else(|| assert_cmd::cargo::cargo_bin("locality"), PathBuf::from)
}

impl Server {
    /// Starts `locality sim serve` (default topology and fixture) with `args`.
    pub fn start(name: &str, args: &[&str]) -> Server {
        let dir = TempDir::new(&format!("sim-load-{name}"));
        let kubeconfig = dir.join("kubeconfig");
        let stderr = std::fs::File::create(dir.join("stderr")).unwrap();
        let child = std::process::Command::new(binary())
            .args(["sim", "serve", "--kubeconfig-out", kubeconfig.to_str().unwrap()])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("start sim serve");
        let mut server = Server {
            child,
            dir,
            addr: String::new(),
        };
        let start = Instant::now();
        while !kubeconfig.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "sim serve did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&kubeconfig).unwrap();
        server.addr = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: http://"))
            .expect("server URL in the kubeconfig")
            .trim()
            .to_string();
        server
    }

    /// The kubeconfig it wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// How long the real `kubectl get pods -A` takes against the server (`None` when no
    /// kubectl is on PATH); fails when it fails. Its discovery cache is the test's own, so it
    /// asks discovery first, as a new user's would.
    pub fn time_kubectl_get_pods(&self) -> Option<Duration> {
        let cache = self.dir.join("kubectl-cache");
        let start = Instant::now();
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.kubeconfig())
            .arg("--cache-dir")
            .arg(&cache)
            .args(["get", "pods", "-A", "--request-timeout=20s"])
            .output()
            .ok()?;
        let took = start.elapsed();
        assert!(
            out.status.success(),
            "kubectl get pods -A: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("kubectl get pods -A took {took:?}");
        Some(took)
    }

    fn status_field(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// The server's peak resident set (kB, `VmHWM`).
    pub fn peak_rss_kb(&self) -> u64 {
        self.status_field("VmHWM:")
    }

    /// Resets the peak resident set to the current one (`/proc/PID/clear_refs`, Linux 4.0+).
    pub fn reset_peak_rss(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5");
    }

    /// The server's resident set now (kB).
    pub fn rss_kb(&self) -> u64 {
        self.status_field("VmRSS:")
    }

    /// CPU time the server used so far (user and system), from `/proc/PID/stat` in clock
    /// ticks of 10 ms.
    pub fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the command name (which may hold spaces) in parentheses.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<u64> = rest.split_whitespace().map(|v| v.parse().unwrap_or(0)).collect();
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
        Duration::from_millis((f.get(11).unwrap_or(&0) + f.get(12).unwrap_or(&0)) * 10)
    }

    /// File descriptors the server has open.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).map_or(0, Iterator::count)
    }

    /// Fails when the server died or wrote a panic.
    pub fn assert_alive_without_panic(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the server exited: {}",
            self.stderr()
        );
        let stderr = self.stderr();
        assert!(!stderr.contains("panicked"), "the server panicked: {stderr}");
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
    }

    /// Fails unless the peak RSS stayed under [`MAX_PEAK_RSS_KB`].
    pub fn assert_peak_rss_under_limit(&self, what: &str) {
        let peak = self.peak_rss_kb();
        eprintln!("{what}: server peak RSS {} MB", peak / 1024);
        assert!(
            peak < MAX_PEAK_RSS_KB,
            "{what}: peak RSS {} MB, over {} MB",
            peak / 1024,
            MAX_PEAK_RSS_KB / 1024
        );
    }
}

/// An answer: status code, headers and body (de-chunked).
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub code: u16,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The `Status` reason of an error answer.
    pub fn reason(&self) -> String {
        self.json()["reason"].as_str().unwrap_or_default().to_string()
    }
}

/// Reads one HTTP/1.1 answer from `r` (`Content-Length` or chunked, or until the end).
pub fn read_answer(r: &mut impl BufRead) -> Option<Answer> {
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let code = line.split(' ').nth(1)?.parse().ok()?;
    let mut length = None;
    let mut chunked = false;
    loop {
        line.clear();
        r.read_line(&mut line).ok()?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let lower = l.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(&mut body).ok()?;
    } else if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).ok()?;
            let n = usize::from_str_radix(line.trim(), 16).ok()?;
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        r.read_to_end(&mut body).ok()?;
    }
    Some(Answer { code, body })
}

/// One request on a new connection (`Connection: close`), its answer within `timeout`.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    timeout: Duration,
) -> Option<Answer> {
    let sock: std::net::SocketAddr = addr.parse().ok()?;
    let mut s = TcpStream::connect_timeout(&sock, timeout).ok()?;
    s.set_read_timeout(Some(timeout)).ok()?;
    s.set_write_timeout(Some(timeout)).ok()?;
    let body = body.unwrap_or_default();
    let content_type = match method {
        "PATCH" => "application/merge-patch+json",
        _ => "application/json",
    };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    read_answer(&mut BufReader::new(s))
}

/// What the small client saw.
#[derive(Debug)]
pub struct ProbeReport {
    /// Answers received.
    pub answered: usize,
    /// Requests with no answer (or not 200) within 10 s.
    pub failed: usize,
    /// The slowest answer.
    pub slowest: Duration,
}

/// A small client listing pods every 100 ms on a new connection each time, until
/// [`Probe::finish`].
pub struct Probe {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<ProbeReport>,
}

impl Probe {
    /// Starts probing `addr`.
    pub fn start(addr: &str) -> Probe {
        let stop = Arc::new(AtomicBool::new(false));
        let addr = addr.to_string();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut report = ProbeReport {
                answered: 0,
                failed: 0,
                slowest: Duration::ZERO,
            };
            while !flag.load(Ordering::Relaxed) {
                let start = Instant::now();
                let answer = request(
                    &addr,
                    "GET",
                    "/api/v1/namespaces/default/pods?limit=5",
                    None,
                    Duration::from_secs(10),
                );
                let took = start.elapsed();
                match answer {
                    Some(a) if a.code == 200 => report.answered += 1,
                    _ => report.failed += 1,
                }
                report.slowest = report.slowest.max(took);
                std::thread::sleep(Duration::from_millis(100));
            }
            report
        });
        Probe { stop, thread }
    }

    /// Stops probing and fails unless every request was answered within [`MAX_LATENCY`].
    pub fn finish(self, what: &str) -> ProbeReport {
        self.stop.store(true, Ordering::Relaxed);
        let report = self.thread.join().expect("the probe thread");
        eprintln!(
            "{what}: small client {} answered, {} failed, slowest {:?}",
            report.answered, report.failed, report.slowest
        );
        assert!(report.answered > 0, "{what}: the small client got no answer");
        assert_eq!(
            report.failed, 0,
            "{what}: the small client was not answered: {report:?}"
        );
        assert!(
            report.slowest < MAX_LATENCY,
            "{what}: the small client waited {:?}",
            report.slowest
        );
        report
    }
}

/// The store's current resourceVersion, from a list.
pub fn current_resource_version(addr: &str) -> u64 {
    let a = request(addr, "GET", "/api/v1/namespaces", None, Duration::from_secs(10)).expect("a list");
    a.json()["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .expect("a resourceVersion")
}

/// File descriptors this process may still open (its soft limit less those open and a
/// margin).
pub fn spare_fds(margin: usize) -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft: usize = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count);
    soft.saturating_sub(open + margin)
}
