//! `locality sim serve` in a child process: the API faults its flags ask for, kube-proxy published
//! in kube-system, flags checked when parsed, `sim rules` through its kubeconfig, a signal's clean stop.

use super::{locality, rules};
use assert_cmd::Command;
use locality_testkit::files::TempDir;
use predicates::prelude::*;

/// A `locality sim serve` child process, killed on drop.
struct Served {
    child: std::process::Child,
    /// Holds the kubeconfig; removed after the child is stopped (fields drop after `drop`).
    dir: TempDir,
    /// `127.0.0.1:PORT`.
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `locality sim serve ARGS` and waits for its kubeconfig (written once it listens).
fn serve(name: &str, args: &[&str]) -> Served {
    let dir = TempDir::new(&format!("sim-{name}"));
    let kubeconfig = dir.join("kubeconfig");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("locality"))
        .args(["sim", "serve", "--kubeconfig-out", kubeconfig.to_str().unwrap()])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start sim serve");
    let mut served = Served {
        child,
        dir,
        addr: String::new(),
    };
    super::wait_for_kubeconfig(&kubeconfig);
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    served.addr = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: http://"))
        .expect("server URL in the kubeconfig")
        .trim()
        .to_string();
    served
}

/// One HTTP/1.1 GET: the status (`None` when the connection closed without an answer), the
/// body and how long it took.
fn http_get(addr: &str, path: &str) -> (Option<u16>, String, std::time::Duration) {
    use std::io::{Read, Write};
    let start = std::time::Instant::now();
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = conn.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok());
    (status, text, start.elapsed())
}

/// `sim serve --api-latency/--api-faults/--api-error-code/--drop-rate`: the simulated API
/// server waits, fails GETs with the chosen 5xx (lists are served), drops connections.
#[test]
fn serve_injects_the_api_faults_its_flags_ask_for() {
    let s = serve(
        "faults",
        &[
            "--api-latency",
            "400ms",
            "--api-faults",
            "get=1,create=0.5",
            "--api-faults",
            "conflict=1",
            "--api-error-code",
            "503",
        ],
    );
    let (status, body, took) = http_get(&s.addr, "/version");
    assert_eq!(status, Some(200), "{body}");
    assert!(took >= std::time::Duration::from_millis(400), "{took:?}");
    let (status, body, took) = http_get(&s.addr, "/api/v1/namespaces/default");
    assert_eq!(status, Some(503), "{body}");
    assert!(body.contains("\"reason\":\"ServiceUnavailable\""), "{body}");
    assert!(body.contains("injected fault"), "{body}");
    assert!(took >= std::time::Duration::from_millis(400), "{took:?}");
    // A list is another verb: served.
    let (status, body, _) = http_get(&s.addr, "/api/v1/namespaces");
    assert_eq!(status, Some(200), "{body}");
    drop(s);

    let fast = serve("no-faults", &[]);
    let (status, _, took) = http_get(&fast.addr, "/api/v1/namespaces/default");
    assert_eq!(status, Some(200));
    assert!(took < std::time::Duration::from_millis(400), "{took:?}");
    drop(fast);

    let lossy = serve("drops", &["--drop-rate", "1"]);
    let (status, raw, _) = http_get(&lossy.addr, "/api/v1/namespaces/default");
    assert_eq!(status, None, "closed without an answer: {raw:?}");
    // Discovery is never dropped.
    assert_eq!(http_get(&lossy.addr, "/version").0, Some(200));
}

/// `sim serve` publishes kube-proxy in kube-system as a kubeadm cluster does (issue #11), so
/// `matrix` and `audit` read live, without `--proxy-mode`, find kube-proxy's mode (the
/// ConfigMap the DaemonSet mounts) and version (the DaemonSet's image) instead of an unknown
/// data plane.
#[test]
fn serve_publishes_kube_proxy_so_live_reads_find_its_mode_and_version() {
    let s = serve(
        "kube-proxy",
        &["--speed", "50", "--profile", "node-c=kube-proxy:ipvs"],
    );
    let kubeconfig = s.dir.join("kubeconfig");
    let kc = kubeconfig.to_str().unwrap();
    let out = locality(&["matrix", "--kubeconfig", kc, "-o", "json", "-v"]).success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["dataPlane"]["kind"], "kube-proxy", "{}", doc["dataPlane"]);
    assert_eq!(doc["dataPlane"]["mode"], "iptables", "{}", doc["dataPlane"]);
    assert_eq!(doc["kubeProxyVersion"], "1.35");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("ConfigMap kube-system/kube-proxy config.conf: mode iptables"),
        "{stderr}"
    );
    assert!(!stderr.contains("proxy mode is not known"), "{stderr}");
    let out = locality(&["audit", "--kubeconfig", kc, "-o", "json"]).success();
    let report: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(report["dataPlane"]["kind"], "kube-proxy");
    assert_eq!(report["dataPlane"]["mode"], "iptables");
    assert_eq!(report["kubeProxyVersion"], "1.35");
}

#[test]
fn api_fault_flags_are_checked_when_parsed() {
    for (args, want) in [
        (&["--api-faults", "bogus=0.1"][..], "unknown verb \"bogus\""),
        (&["--api-faults", "get"][..], "VERB=FRACTION"),
        (&["--api-faults", "get=1.5"][..], "between 0 and 1"),
        (&["--drop-rate", "1.1"][..], "between 0 and 1"),
        (&["--api-latency", "fast"][..], "200ms"),
        (&["--api-latency", "5"][..], "with a unit"),
        (&["--api-error-code", "404"][..], "500..=599"),
    ] {
        Command::cargo_bin("locality")
            .unwrap()
            .args(["sim", "serve"])
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(want));
    }
    // verify takes them for its simulated target only.
    locality(&["verify", "--kubeconfig", "k", "--api-latency", "1s"])
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    locality(&["verify", "--live", "--drop-rate", "0.1"]).code(2);
}

#[test]
fn sim_rules_reads_the_served_cluster_through_its_kubeconfig() {
    // The served cluster has a fault the default one does not: its rules must show it.
    let s = serve("rules", &["--profile", "node-c=ignores-local-policy"]);
    let kc = s.dir.join("kubeconfig");
    let kc = kc.to_str().unwrap();
    // Once its kube-proxy has synced the backends (the clock runs from serving on).
    let start = std::time::Instant::now();
    let served = loop {
        let served = rules(&["node-c", "--kubeconfig", kc]);
        if served.contains("KUBE-SVC") || start.elapsed() > std::time::Duration::from_secs(20) {
            break served;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(
        served.starts_with("# SIMULATED cluster (locality sim serve"),
        "{served}"
    );
    assert!(served.contains("KUBE-SVC"), "{served}");
    assert!(
        !served.contains("-j DROP"),
        "the served node ignores Local: {served}"
    );
    // A fresh cluster of the same topology (no fault) drops.
    assert!(rules(&["node-c"]).contains("-j DROP"));
    // An unknown node: the server's 404, named.
    locality(&["sim", "rules", "node-x", "--kubeconfig", kc])
        .failure()
        .stderr(predicate::str::contains(
            "no node \"node-x\" in the served simulated cluster",
        ));
    // Building flags make no sense with a served cluster.
    locality(&["sim", "rules", "node-c", "--kubeconfig", kc, "--seed", "3"]).code(2);
}

/// `sim serve` stopped by SIGINT or SIGTERM exits 0 and removes the temporary kubeconfig it
/// wrote: a run leaves nothing in `$TMPDIR`.
#[test]
fn sim_serve_stopped_by_a_signal_removes_its_temporary_kubeconfig() {
    use std::io::BufRead;
    for signal in ["INT", "TERM"] {
        let tmpdir = TempDir::new(&format!("sim-serve-{signal}"));
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("locality"))
            .args(["sim", "serve", "-q"])
            .env("TMPDIR", tmpdir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start sim serve");
        // The first line of stdout is the kubeconfig's path, printed once it listens.
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let kubeconfig = std::path::PathBuf::from(line.trim());
        assert!(kubeconfig.starts_with(tmpdir.path()), "{}", kubeconfig.display());
        assert!(kubeconfig.exists(), "{}", kubeconfig.display());
        let killed = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("sim serve did not stop on SIG{signal}");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(status.success(), "SIG{signal}: {status}");
        let left: Vec<_> = std::fs::read_dir(tmpdir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(left.is_empty(), "SIG{signal} left {left:?}");
    }
}
