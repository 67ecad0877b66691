//! `locality verify` through the real binary, against the embedded simulated cluster.

use assert_cmd::Command;
use locality_testkit::files::TempDir;
use predicates::prelude::*;

#[test]
fn accept_on_a_conformant_simulated_cluster_with_the_ledger_as_json() {
    let tmp = TempDir::new("verify-cli-accept");
    let dir = tmp.join("evidence");
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args([
            "verify",
            "--only",
            "B1,C",
            "-o",
            "json",
            "--owner",
            "ci",
            "--evidence",
        ])
        .arg(&dir)
        .assert()
        .code(0)
        .stderr(predicate::str::contains("SIMULATED cluster"));
    let ledger: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(ledger["decision"]["decision"], "ACCEPT");
    assert!(
        ledger["decision"]["line"]
            .as_str()
            .unwrap()
            .contains("simulated cluster")
    );
    assert_eq!(ledger["owner"], "ci");
    let ids: Vec<&str> = ledger["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    // --only runs the controls too, and the decision says the run is partial.
    assert_eq!(ids, ["N0", "A", "B1", "C"]);
    assert_eq!(ledger["decision"]["partial"], true);
    assert!(
        ledger["decision"]["line"]
            .as_str()
            .unwrap()
            .starts_with("PARTIAL ACCEPT")
    );
    assert!(dir.join("SHA256SUMS").is_file() && dir.join("junit.xml").is_file());
    // The evidence says what it holds, and the ledger opens with what was tested.
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        readme.contains("SIMULATED") && readme.contains("`SHA256SUMS`"),
        "{readme}"
    );
    let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    assert!(sums.contains("  README.md\n"), "{sums}");
    let md = std::fs::read_to_string(dir.join("ledger.md")).unwrap();
    let tested = md
        .split("## What was tested")
        .nth(1)
        .expect("a What was tested section");
    for line in [
        "- Target: the SIMULATED cluster",
        "- Node `node-a`: kube-proxy v1.",
        "- Roles: N1 `",
        "- Not requested: every case but N0, A, B1, C (`--only`)",
        "- Not requested: the external cases (`--external-cases`)",
    ] {
        assert!(tested.contains(line), "{line}:\n{md}");
    }
    // The evidence is for people and tools, not Rust: no `Debug` strings in any file.
    let versions = std::fs::read_to_string(dir.join("00-versions.yaml")).unwrap();
    assert!(
        versions.contains("dataPlane: kube-proxy (iptables)"),
        "{versions}"
    );
    for path in locality_testkit::files::walk(&dir) {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for debug in ["Some(", "None)", "KubeProxy(", "Iptables)"] {
            assert!(!text.contains(debug), "{}: {debug}", path.display());
        }
    }
}

/// A two-node cluster (issue: a RERUN that could never succeed, 4.5 minutes): a full run ends
/// in a PARTIAL ACCEPT naming what it could not check, NOT_EXECUTED at once, and no rerun.
#[test]
fn a_two_node_cluster_gets_a_partial_accept_not_a_rerun() {
    let tmp = TempDir::new("verify-cli-two");
    let topology = tmp.join("two.yaml");
    std::fs::write(
        &topology,
        "name: two\nnodes:\n  - {name: node-a, zone: zone-a}\n  - {name: node-b, zone: zone-a}\n",
    )
    .unwrap();
    let dir = tmp.join("evidence");
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "-o", "json", "--topology"])
        .arg(&topology)
        .arg("--evidence")
        .arg(&dir)
        .assert()
        .code(0);
    let ledger: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let d = &ledger["decision"];
    assert_eq!(d["decision"], "ACCEPT", "{d}");
    assert_eq!(d["partial"], true);
    assert!(d["rerun"].as_array().unwrap().is_empty(), "{d}");
    let line = d["line"].as_str().unwrap();
    assert!(
        line.starts_with("PARTIAL ACCEPT (not checked on this cluster: B1"),
        "{line}"
    );
    let uncovered: Vec<&str> = d["uncovered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for id in ["B1", "B2", "E-a", "E-b", "H3", "H5", "Z1"] {
        assert!(uncovered.contains(&id), "{id} in {uncovered:?}");
    }
    for c in ledger["cases"].as_array().unwrap() {
        let status = c["status"].as_str().unwrap();
        assert!(matches!(status, "PASS" | "NOT_EXECUTED"), "{c}");
        if status == "NOT_EXECUTED" {
            assert!(c["why"].as_str().unwrap().contains("no node for role"), "{c}");
        }
    }
}

#[test]
fn hold_when_the_data_plane_ignores_the_local_policy() {
    let tmp = TempDir::new("verify-cli-hold");
    let dir = tmp.join("evidence");
    Command::cargo_bin("locality")
        .unwrap()
        .args([
            "verify",
            "--only",
            "A,C",
            "--profile",
            "node-c=ignores-local-policy",
            "--evidence",
        ])
        .arg(&dir)
        .assert()
        .code(5)
        .stdout(predicate::str::contains("PARTIAL HOLD (only N0, A, C ran"))
        .stdout(predicate::str::contains("(simulated cluster"))
        .stdout(predicate::str::contains("FAIL"));
}

#[test]
fn verify_usage_errors() {
    Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--only", "Z9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such case"));
    Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--live", "--profile", "node-a=lossy"])
        .assert()
        .code(2);
    Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--profile", "node-zz=lossy"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("node-"));
    for bad in ["0", "-1", "NaN"] {
        Command::cargo_bin("locality")
            .unwrap()
            .args(["verify", &format!("--request-timeout={bad}")])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--request-timeout"));
    }
}

/// `GET path` on a plain-HTTP loopback API server: the status code.
#[cfg(unix)]
fn http_status(url: &str, path: &str) -> u16 {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return 0;
    };
    let _ = write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    text.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Ctrl-C (SIGINT) in the middle of a run: exit 130, the ledger written with the cases not
/// finished NOT_EXECUTED (interrupted); the owner defaults to the kubeconfig's user (the
/// simulated cluster's `locality-sim`). The namespace's deletion on that path is checked
/// against a server that outlives the run in `locality-verify`'s `tests/interrupt.rs`.
#[cfg(unix)]
#[test]
fn ctrl_c_exits_130_with_partial_evidence() {
    stopped_with_partial_evidence("INT", 130, "interrupted");
}

/// SIGTERM (a cancelled CI job, an evicted pod) does what Ctrl-C does: exit 143 (128 + 15).
#[cfg(unix)]
#[test]
fn sigterm_exits_143_with_partial_evidence() {
    stopped_with_partial_evidence("TERM", 143, "terminated (SIGTERM)");
}

/// Starts `locality verify`, sends it `signal` (a `kill -SIGNAL` name) once its namespace
/// exists, and checks it exits with `code`, says `said: namespace … deleted`, and wrote the
/// partial evidence.
#[cfg(unix)]
fn stopped_with_partial_evidence(signal: &str, code: i32, said: &str) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command as Process, Stdio};
    use std::time::{Duration, Instant};

    let tmp = TempDir::new(&format!("verify-cli-stopped-{signal}"));
    let dir = tmp.join("evidence");
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("locality"))
        .args(["verify", "-v", "-o", "json", "--evidence"])
        .arg(&dir)
        .env_remove("USER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start locality verify");
    let pid = child.id().to_string();
    // Kills the child if an assertion fails before it exits.
    struct Reap(String);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = Process::new("kill").args(["-KILL", &self.0]).status();
        }
    }
    let reap = Reap(pid.clone());
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let stderr_lines = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push(line);
        }
        all
    });
    let mut stdout = child.stdout.take().unwrap();
    let stdout_text = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    // The server's URL (status line) and the namespace (-v note).
    let (mut url, mut ns) = (None, None);
    let deadline = Instant::now() + Duration::from_secs(60);
    while url.is_none() || ns.is_none() {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the URL and the namespace on stderr");
        if let Some(i) = line.find("at http://127.0.0.1:") {
            let rest = &line[i + 3..];
            let end = rest.find(": ").unwrap_or(rest.len());
            url = Some(rest[..end].to_string());
        }
        if let Some(i) = line.find("namespace locality-verify-") {
            let rest = &line[i + "namespace ".len()..];
            let end = rest.find(',').unwrap_or(rest.len());
            ns = Some(rest[..end].to_string());
        }
    }
    let (url, ns) = (url.unwrap(), ns.unwrap());
    // Stop it once the namespace exists (the run is then creating or probing).
    let path = format!("/api/v1/namespaces/{ns}");
    while http_status(&url, &path) != 200 {
        assert!(
            Instant::now() < deadline,
            "namespace {ns} never appeared at {url}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        Process::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "verify did not exit after SIG{signal}");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::mem::forget(reap);
    let stderr = stderr_lines.join().unwrap().join("\n");
    assert_eq!(status.code(), Some(code), "{stderr}");
    assert!(
        stderr.contains(&format!("{said}: namespace {ns} deleted")),
        "{stderr}"
    );

    let ledger: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ledger.json")).unwrap()).unwrap();
    let printed: serde_json::Value = serde_json::from_str(&stdout_text.join().unwrap()).unwrap();
    assert_eq!(printed, ledger, "-o json prints the ledger written");
    assert_eq!(ledger["decision"]["interrupted"], true);
    assert_ne!(ledger["decision"]["decision"], "ACCEPT");
    assert_eq!(ledger["owner"], "locality-sim", "the kubeconfig's user");
    let cases = ledger["cases"].as_array().unwrap();
    assert_eq!(cases.len(), locality_verify::cases::default_run().count());
    let interrupted = cases
        .iter()
        .filter(|c| c["status"] == "NOT_EXECUTED" && c["why"].as_str().unwrap().starts_with("interrupted"))
        .count();
    assert!(interrupted > 0, "{cases:?}");
    for f in [
        "decision.json",
        "junit.xml",
        "report.html",
        "SHA256SUMS",
        "00-versions.yaml",
    ] {
        assert!(dir.join(f).is_file(), "missing {f}");
    }
}

/// On IPVS a Local policy without a local endpoint is refused, not dropped: the simulated
/// cluster's mode reaches the model, and the catalogue's declared timeout reads as a refusal.
#[test]
fn ipvs_refuses_where_iptables_drops() {
    let tmp = TempDir::new("verify-cli-ipvs");
    let dir = tmp.join("evidence");
    let mut cmd = Command::cargo_bin("locality").unwrap();
    cmd.args(["verify", "--only", "C,U2", "-o", "json"]);
    for n in ["node-a", "node-b", "node-c", "node-d"] {
        cmd.args(["--profile", &format!("{n}=ipvs")]);
    }
    let out = cmd.arg("--evidence").arg(&dir).assert().code(0);
    let ledger: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    for c in ledger["cases"].as_array().unwrap() {
        assert_eq!(c["status"], "PASS", "{c}");
        if !c["control"].as_bool().unwrap() {
            assert_eq!(c["expected"]["verdict"], "reject", "{c}");
        }
    }
}

/// The table shows the catalogue's words where the model's expectation is not the point (M),
/// shortened to a column; the ledger keeps them whole.
#[test]
fn the_table_names_what_each_case_expects() {
    let tmp = TempDir::new("verify-cli-table");
    let dir = tmp.join("evidence");
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--only", "M,C", "-q", "--evidence"])
        .arg(&dir)
        .assert()
        .code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let m = text.lines().find(|l| l.starts_with("M ")).expect("a row for M");
    assert!(
        m.contains("N3 counted in kubeproxy_sync_proxy_rules_no_loc…"),
        "{m}"
    );
    let c = text.lines().find(|l| l.starts_with("C ")).expect("a row for C");
    assert!(c.contains("dropped (timeout)"), "{c}");
}

#[test]
fn dry_run_prints_the_plan_and_the_manifests_and_creates_nothing() {
    let tmp = TempDir::new("verify-cli-dry-run");
    let dir = tmp.join("evidence");
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args([
            "verify",
            "--dry-run",
            "--only",
            "B1,C,G2",
            "--image",
            "mirror.example/e2e/agnhost:2.53",
            "--evidence",
        ])
        .arg(&dir)
        .assert()
        .code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.starts_with("# locality verify --dry-run: nothing was created"),
        "{text}"
    );
    for line in ["# role N1: node-a", "#   G2   [g2]", "#   N0   [n0]"] {
        assert!(text.contains(line), "{line} missing:\n{text}");
    }
    let docs: Vec<serde_json::Value> = text
        .split("---\n")
        .skip(1)
        .map(|d| serde_saphyr::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect();
    let names: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["kind"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    for want in [
        "Service/b",
        "Pod/b-be-n1",
        "Service/g2",
        "Pod/client-n3",
        "Pod/n0-be-n2",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
    }
    assert!(names[0].starts_with("Namespace/locality-verify-"), "{names:?}");
    for d in docs.iter().filter(|d| d["kind"] == "Pod") {
        assert_eq!(
            d["spec"]["containers"][0]["image"], "mirror.example/e2e/agnhost:2.53",
            "{d}"
        );
    }
    assert!(!dir.exists(), "a dry run writes no evidence");
}

/// The embedded simulated cluster's kubeconfig lives only as long as the run: `verify` leaves
/// nothing in `$TMPDIR`.
#[test]
fn a_simulated_run_leaves_nothing_in_the_temporary_directory() {
    let tmp = TempDir::new("verify-cli-tmpdir");
    let tmpdir = tmp.join("tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    Command::cargo_bin("locality")
        .unwrap()
        .env("TMPDIR", &tmpdir)
        .args(["verify", "--only", "C", "-q", "-o", "json", "--evidence"])
        .arg(tmp.join("evidence"))
        .assert()
        .code(0);
    let left: Vec<_> = std::fs::read_dir(&tmpdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Off a terminal (a CI log), the run still says each case as it ends, on stderr; the table
/// on stdout stays whole.
#[test]
fn each_case_is_streamed_on_stderr_off_a_terminal_too() {
    let tmp = TempDir::new("verify-stream-pipe");
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args(["verify", "--only", "B1,C", "--evidence"])
        .arg(tmp.join("evidence"))
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for id in ["N0", "A", "B1", "C"] {
        assert!(
            stderr.lines().any(|l| l.starts_with(&format!("  {id:<4} PASS"))),
            "{id} not streamed:\n{stderr}"
        );
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{id:<4}  PASS"))),
            "{id} not in the table:\n{stdout}"
        );
    }
}

/// On a terminal, where the stream and the table meet, the table repeats only the cases that
/// did not pass, then the decision.
#[test]
fn on_a_terminal_the_table_repeats_only_what_did_not_pass() {
    let tmp = TempDir::new("verify-stream-tty");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("locality"));
    cmd.args(["verify", "--only", "B1,C", "--color", "never", "--evidence"])
        .arg(tmp.join("evidence"));
    let term = locality_testkit::terminal::run_with_both_on_terminal(cmd);
    assert_eq!(term.status.code(), Some(0), "{}", term.stdout);
    let text = term.stdout;
    for id in ["N0", "A", "B1", "C"] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("  {id:<4} PASS"))),
            "{id} not streamed:\n{text}"
        );
        assert!(
            !text.lines().any(|l| l.starts_with(&format!("{id:<4}  PASS"))),
            "{id} repeated in the table:\n{text}"
        );
    }
    assert!(text.contains("(the 4 PASS cases are above)"), "{text}");
    assert!(text.contains("PARTIAL ACCEPT"), "{text}");
}
