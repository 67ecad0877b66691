//! `locality sim rules`: the simulated kube-proxy's rule table, through the real binary.

use assert_cmd::Command;
use locality_testkit::files::TempDir;
use predicates::prelude::*;

fn rules(args: &[&str]) -> String {
    let out = Command::cargo_bin("locality")
        .unwrap()
        .arg("sim")
        .arg("rules")
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn playbook_fixture_rules_per_node() {
    let c = rules(&["node-c"]);
    assert!(c.starts_with("# SIMULATED cluster"), "{c}");
    assert!(
        c.contains("has no local endpoints") && c.contains("-j DROP"),
        "{c}"
    );
    let a = rules(&["node-a"]);
    assert!(!a.contains("-j DROP"), "node-a has a local backend: {a}");
    assert!(a.contains("KUBE-SVL"), "{a}");
    // A faulty data plane that ignores the Local policy programs no DROP.
    let bad = rules(&["node-c", "--profile", "node-c=ignores-local-policy"]);
    assert!(!bad.contains("-j DROP"), "{bad}");
    // Without the fixture there is nothing to drop.
    assert!(!rules(&["node-c", "--fixture", "none"]).contains("-j DROP"));
}

#[test]
fn unknown_names_are_usage_errors() {
    Command::cargo_bin("locality")
        .unwrap()
        .args(["sim", "rules", "node-x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean node-"));
    Command::cargo_bin("locality")
        .unwrap()
        .args(["sim", "rules", "node-a", "--topology", "three-zone"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("three-zones"));
    Command::cargo_bin("locality")
        .unwrap()
        .args(["sim", "rules", "node-a", "--profile", "node-a=bogus"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'--profile <NODE=PROFILE>'"))
        .stderr(predicate::str::contains(
            "unknown simulated data-plane profile \"bogus\"",
        ));
    // Parsed by clap: the flag is named and no cluster is built first.
    Command::cargo_bin("locality")
        .unwrap()
        .args(["sim", "rules", "node-a", "--profile", "=ipvs"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected NODE=PROFILE"));
    // Feature gates the simulated components' release would refuse.
    Command::cargo_bin("locality")
        .unwrap()
        .args([
            "sim",
            "rules",
            "node-a",
            "--feature-gates",
            "kube-proxy:PreferSameTrafficDistribution=false",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("locked to true since 1.35"));
}

/// `sim serve` in a child process, then `matrix` and `audit` read it live over the
/// Kubernetes API like any cluster (the issue-3 live path against the simulated API server).
#[test]
fn serve_then_read_the_simulated_cluster_live() {
    let tmp = TempDir::new("sim-serve");
    let dir = tmp.path().to_path_buf();
    let kubeconfig = dir.join("kubeconfig");
    let bin = assert_cmd::cargo::cargo_bin("locality");
    let child = std::process::Command::new(&bin)
        .args([
            "sim",
            "serve",
            "--speed",
            "50",
            "--kubeconfig-out",
            kubeconfig.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start sim serve");
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    // Stops the server even when an assertion fails.
    let guard = Kill(child);
    // Wait for the kubeconfig: it is written only once the server listens.
    let start = std::time::Instant::now();
    while !kubeconfig.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "sim serve did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Let the simulated controllers schedule and start the fixture (50× speed).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let kc = kubeconfig.to_str().unwrap();
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args([
            "matrix",
            "--kubeconfig",
            kc,
            "--proxy-mode",
            "iptables",
            "-o",
            "json",
        ])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let svc = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "myservice")
        .expect("myservice");
    assert_eq!(svc["endpointSource"], "EndpointSlices");
    let node_c = svc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == "node-c")
        .unwrap();
    assert_eq!(node_c["routes"][0]["verdict"], "drop");
    Command::cargo_bin("locality")
        .unwrap()
        .args([
            "audit",
            "--kubeconfig",
            kc,
            "--proxy-mode",
            "iptables",
            "--fail-on",
            "error",
        ])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("LOC001"));
    drop(guard);
}

fn locality(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("locality")
        .unwrap()
        // Reports carry the time: fix it so that snapshots do not rot.
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .args(args)
        .assert()
}

/// `--sim[=TOPOLOGY]`: the read commands on a fresh embedded simulated cluster.
#[test]
fn audit_matrix_and_explain_read_a_fresh_simulated_cluster() {
    let out = locality(&["audit", "--sim=telemetry", "-o", "json", "-q"]).success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let loc001 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "LOC001")
        .expect("LOC001 on the telemetry agent");
    let nodes = loc001["nodes"].to_string();
    for n in ["worker-25", "worker-26", "worker-27"] {
        assert!(nodes.contains(n), "{nodes}");
    }
    assert!(!nodes.contains("worker-01"), "{nodes}");

    let out = locality(&["matrix", "--sim=four-nodes", "-o", "summary", "-q"]).success();
    let summary = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!("sim_four_nodes_summary", summary);

    // The default topology is three-zones with the playbook fixture.
    let out = locality(&["explain", "myservice", "--node", "node-c", "--sim", "-q"]).success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("node-c") && text.to_lowercase().contains("drop"),
        "{text}"
    );
    // It says it is simulated.
    locality(&["audit", "--sim"])
        .success()
        .stderr(predicate::str::contains("SIMULATED cluster"));
}

#[test]
fn sim_flag_errors_are_usage_errors() {
    locality(&["audit", "--sim=three-zone"])
        .code(2)
        .stderr(predicate::str::contains("three-zones"));
    locality(&["audit", "--sim", "-f", "x.json"]).code(2);
    locality(&["audit", "--sim", "--kubeconfig", "k"]).code(2);
    locality(&["audit", "--sim-at", "5"]).code(2);
}

/// `simulate --sim`: what-if over virtual time, seeded from the embedded simulated cluster.
#[test]
fn simulate_a_rollout_and_a_policy_change() {
    let tmp = TempDir::new("whatif");
    let svg = tmp.join("timeline.svg");
    let out = locality(&[
        "simulate",
        "--svg",
        svg.to_str().unwrap(),
        "--sim=telemetry",
        "--rollout",
        "daemonset/telemetry/agent",
        "--max-surge",
        "0",
        "--max-unavailable",
        "3",
        "-o",
        "json",
        "-q",
    ])
    .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["kind"], "SimulationReport");
    assert_eq!(doc["simulated"], true);
    assert_eq!(doc["header"]["simulated"], true, "the input was simulated too");
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true);
    assert_eq!(alt["changes"][0]["maxUnavailable"], "3");
    let port = &alt["servicePorts"][0];
    assert_eq!(port["service"], "telemetry/agent");
    assert!(port["nodes"].as_array().unwrap().len() >= 20, "{port}");
    assert!(
        port["blindThroughout"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "worker-25")
    );
    assert!(port["lostClientTimeShare"].as_f64().unwrap() > 0.0);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg") && picture.trim_end().ends_with("</svg>"));
    let windows: usize = port["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["windows"].as_array().unwrap().len())
        .sum();
    let throughout = port["blindThroughout"].as_array().unwrap().len();
    assert_eq!(
        picture.matches("<rect").count(),
        windows + throughout,
        "one bar per window"
    );
    assert!(!picture.contains("<script"));

    let out = locality(&[
        "simulate",
        "--sim",
        "--set",
        "default/myservice:internalTrafficPolicy=Cluster",
        "-q",
    ])
    .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.starts_with("SIMULATED cluster"), "the banner first: {text}");
    assert!(text.contains("\nSIMULATED what-if"), "{text}");
    assert!(text.contains("blind before: node-c; after: none"), "{text}");
}

#[test]
fn simulate_usage_errors() {
    locality(&["simulate", "--sim"]).code(2);
    locality(&["simulate", "--sim", "--rollout", "statefulset/a/b"]).code(2);
    locality(&["simulate", "--sim", "--rollout", "daemonset/default/nope"])
        .code(2)
        .stderr(predicate::str::contains("no DaemonSet default/nope"));
    locality(&[
        "simulate",
        "--sim",
        "--set",
        "default/myservice:internalTrafficPolicy=Sometimes",
    ])
    .code(2);
    // Flag syntax is clap's: checked before anything runs, the flag named.
    locality(&["simulate", "--sim", "--set", "internalTrafficPolicy=Local"])
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value 'internalTrafficPolicy=Local' for '--set",
        ));
    locality(&["simulate", "--sim", "--rollout", "job/default/x"])
        .code(2)
        .stderr(predicate::str::contains("for '--rollout <KIND/NS/NAME>'"));
    locality(&[
        "simulate",
        "--sim",
        "--rollout",
        "ds/default/x",
        "--compare",
        "colour=blue",
    ])
    .code(2)
    .stderr(predicate::str::contains("unknown key \"colour\""));
    // A DaemonSet takes exactly one of maxSurge and maxUnavailable non-zero, as the API
    // server validates it.
    locality(&[
        "simulate",
        "--sim=telemetry",
        "--rollout",
        "daemonset/telemetry/agent",
        "--max-surge",
        "1",
    ])
    .code(2)
    .stderr(predicate::str::contains(
        "may not be set when maxUnavailable is non-zero",
    ));
}

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
    let start = std::time::Instant::now();
    while !kubeconfig.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "sim serve did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
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

/// `audit` (LOC004's nodes and pods) and `simulate` (its CLIENTS column) count the same
/// clients for the same Service: one definition (`locality_audit::clients`), which leaves
/// out the agent's own DaemonSet pods and kube-proxy's.
#[test]
fn audit_and_simulate_count_the_same_clients() {
    let out = locality(&["audit", "--sim=telemetry", "-o", "json", "-q"]).success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let loc004 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "LOC004" && f["service"]["name"] == "agent")
        .expect("LOC004 on the telemetry agent");
    let audit: std::collections::BTreeMap<String, u64> = loc004["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                n["pods"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(!audit.is_empty());
    assert_eq!(
        loc004["nodeCount"].as_u64(),
        Some(audit.len() as u64),
        "every node listed"
    );

    let out = locality(&[
        "simulate",
        "--sim=telemetry",
        "--rollout",
        "daemonset/telemetry/agent",
        "-o",
        "json",
        "-q",
    ])
    .success();
    let what_if: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let port = &what_if["alternatives"][0]["servicePorts"][0];
    // The nodes the rollout blinds with clients on them are LOC004's nodes, with the same
    // counts.
    let simulated: std::collections::BTreeMap<String, u64> = port["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                n["clients"].as_u64().unwrap(),
            )
        })
        .filter(|(_, c)| *c > 0)
        .collect();
    assert_eq!(simulated, audit);
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
