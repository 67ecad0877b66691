//! The real binary in live mode (no `-f`), over real HTTP against the loopback fake API
//! server of `locality-testkit` (recorded Lists, pagination, faults, RBAC).

use assert_cmd::Command;
use locality_testkit::fake_api::FakeApi;
use locality_testkit::files::{TempDir, write_exec_kubeconfig, write_kubeconfig};
use predicates::prelude::*;
use serde_json::Value;

fn locality() -> Command {
    let mut c = Command::cargo_bin("locality").expect("locality binary");
    // Reports carry the time: fix it (crate::clock) so that snapshots do not rot.
    c.env("SOURCE_DATE_EPOCH", "1767225600");
    c.env_remove("LOCALITY_PROFILE").env_remove("KUBECONFIG");
    c
}

#[test]
fn matrix_audit_and_explain_read_the_current_context() {
    let api = FakeApi::cluster();
    let token = api.token.clone();
    let server = api.start();
    let dir = TempDir::new("cli-live");
    let kubeconfig = write_kubeconfig(&dir.0, &server.url(), &token);
    let kc = kubeconfig.to_str().unwrap();

    // matrix: the three-zone fixture's blind node, with the server's version and the mode
    // read from the kube-proxy DaemonSet/ConfigMap.
    let out = locality()
        .args(["matrix", "--kubeconfig", kc, "-o", "json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["kubernetesVersion"], "1.35");
    assert_eq!(doc["dataPlane"]["kind"], "kube-proxy");
    let svc = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "myservice")
        .expect("myservice");
    let node_c = svc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == "node-c")
        .unwrap();
    assert_eq!(node_c["routes"][0]["verdict"], "drop");

    // audit: LOC001 for the blind node, logical locations (no files) in SARIF.
    let out = locality()
        .args(["audit", "--kubeconfig", kc, "-o", "json"])
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(report["input"], "live");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "LOC001")
    );
    locality()
        .args(["audit", "--kubeconfig", kc, "--fail-on", "error"])
        .assert()
        .code(3);

    // explain lists only the Service's namespace.
    locality()
        .args([
            "explain",
            "internal-acceptance/myservice",
            "--node",
            "node-c",
            "--kubeconfig",
            kc,
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("Verdict:    DROP"));
}

#[test]
fn unreachable_server_is_a_runtime_error_with_the_cause() {
    // A port nothing listens on: bind, note the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = TempDir::new("cli-live-down");
    let kubeconfig = write_kubeconfig(&dir.0, &format!("http://127.0.0.1:{port}"), "t");
    locality()
        .args(["matrix", "--kubeconfig", kubeconfig.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("127.0.0.1").and(predicate::str::contains("refused")));
}

#[test]
fn missing_kubeconfig_is_a_usage_error() {
    locality()
        .args(["matrix", "--kubeconfig", "/nonexistent/kubeconfig"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/kubeconfig"));
}

/// No secret reaches the terminal: an exec plugin's output that is not JSON, and a
/// kubeconfig whose parse error sits next to its key data.
#[test]
fn errors_never_print_exec_output_or_key_data() {
    let dir = TempDir::new("cli-secrets");
    let exec = write_exec_kubeconfig(
        &dir.0,
        "https://127.0.0.1:1",
        "plugin.sh",
        "echo 'garbage token=SuperSecretTokenValue1234567890'\n",
    );
    let broken = dir.0.join("broken-kubeconfig");
    std::fs::write(
        &broken,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nusers:\n- name: u\n  user:\n    client-key-data: SECRETKEYDATAabcdefghijklmnopqrstuvwxyz0123456789\n    client-certificate-data: [unclosed\ncontexts: []\n",
    )
    .unwrap();
    for (kc, secret) in [(&exec, "SuperSecretTokenValue"), (&broken, "SECRETKEYDATA")] {
        let out = locality()
            .args(["audit", "--kubeconfig", kc.to_str().unwrap()])
            .timeout(std::time::Duration::from_secs(30))
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(
            !stderr.contains(secret) && !stdout.contains(secret),
            "{stderr}{stdout}"
        );
        assert!(stderr.contains("kubeconfig"), "{stderr}");
    }
}

/// Every secret a kubeconfig can carry, planted in plain and base64 form, never reaches
/// stdout, stderr or a written report, in a run that works and in one that fails: the
/// bearer token, a password in the server URL (`https://user:pass@host`) and basic-auth
/// fields.
#[test]
fn no_planted_secret_reaches_any_output() {
    use base64::Engine as _;
    const PASSWORD: &str = "PlantedUrlPassw0rd";
    const BASIC: &str = "PlantedBasicPassw0rd";
    let api = FakeApi::cluster();
    let token = api.token.clone();
    let server = api.start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = TempDir::new("cli-planted");
    let with_userinfo = |url: &str| url.replacen("://", &format!("://admin:{PASSWORD}@"), 1);
    let up = write_kubeconfig(&dir.0, &with_userinfo(&server.url()), &token);
    let up = std::fs::rename(&up, dir.0.join("up"))
        .map(|()| dir.0.join("up"))
        .unwrap();
    let down = write_kubeconfig(
        &dir.0,
        &with_userinfo(&format!("http://127.0.0.1:{closed}")),
        &token,
    );
    let basic = dir.0.join("basic");
    std::fs::write(
        &basic,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nclusters:\n- name: k\n  cluster: {{server: \"http://127.0.0.1:{closed}\"}}\nusers:\n- name: u\n  user: {{username: admin, password: {BASIC}}}\n"
        ),
    )
    .unwrap();
    let secrets: Vec<String> = [token.as_str(), PASSWORD, BASIC]
        .iter()
        .flat_map(|s| {
            [
                s.to_string(),
                base64::engine::general_purpose::STANDARD.encode(s),
                base64::engine::general_purpose::STANDARD.encode(format!("admin:{s}")),
            ]
        })
        .collect();
    let out_dir = dir.0.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut runs = 0;
    for kc in [&up, &down, &basic] {
        let kc = kc.to_str().unwrap();
        let report = |name: &str| out_dir.join(name).to_str().unwrap().to_owned();
        let commands: Vec<Vec<String>> = vec![
            vec!["matrix".into(), "-o".into(), "json".into()],
            vec!["matrix".into(), "-v".into()],
            vec!["audit".into(), "-o".into(), "json".into()],
            vec!["audit".into(), "-o".into(), "sarif".into()],
            vec!["audit".into(), "-o".into(), "junit".into()],
            vec![
                "audit".into(),
                "-o".into(),
                "html".into(),
                "--output-file".into(),
                report("audit.html"),
            ],
            vec![
                "explain".into(),
                "internal-acceptance/myservice".into(),
                "--node".into(),
                "node-c".into(),
            ],
            // The fake server is read-only: verify fails, after writing what it did.
            vec![
                "verify".into(),
                "-q".into(),
                "--evidence".into(),
                report("evidence"),
            ],
        ];
        for args in commands {
            let out = locality()
                .args(&args)
                .args(["--kubeconfig", kc])
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            runs += 1;
            let works = kc == up.to_str().unwrap() && args[0] != "verify";
            assert_eq!(out.status.success(), works, "{args:?} with {kc}: {out:?}");
            let mut shown = String::from_utf8_lossy(&out.stdout).to_string();
            shown.push_str(&String::from_utf8_lossy(&out.stderr));
            if args[0] == "verify" && kc == up.to_str().unwrap() {
                let evidence = locality_testkit::files::walk(&out_dir.join("evidence"));
                assert!(!evidence.is_empty(), "verify wrote no evidence: {out:?}");
            }
            for entry in locality_testkit::files::walk(&out_dir) {
                shown.push_str(&String::from_utf8_lossy(&std::fs::read(entry).unwrap()));
            }
            for s in &secrets {
                assert!(
                    !shown.contains(s.as_str()),
                    "{args:?} with {kc} shows {s}:\n{shown}"
                );
            }
        }
    }
    assert_eq!(runs, 24);
}

/// `--request-timeout` bounds what can hang a live read: a server that accepts the
/// connection and never answers, and a credential plugin that never exits (named by its
/// command in the error, its output never shown).
#[test]
fn request_timeout_bounds_a_silent_server_and_a_hanging_credential_plugin() {
    let dir = TempDir::new("cli-hang");
    // Accepts connections, never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in silent.incoming() {
            held.push(conn);
        }
    });
    let kubeconfig = write_kubeconfig(&dir.0, &format!("http://127.0.0.1:{port}"), "t");
    let started = std::time::Instant::now();
    locality()
        .args([
            "matrix",
            "--request-timeout",
            "1s",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ])
        .timeout(std::time::Duration::from_secs(10))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--request-timeout").and(predicate::str::contains("127.0.0.1")));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    let exec = write_exec_kubeconfig(
        &dir.0,
        &format!("http://127.0.0.1:{port}"),
        "hang.sh",
        "echo PluginOutputSecret0123456789\nexec sleep 60\n",
    );
    let out = locality()
        .args([
            "audit",
            "--request-timeout",
            "2s",
            "--kubeconfig",
            exec.to_str().unwrap(),
        ])
        .timeout(std::time::Duration::from_secs(10))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("hang.sh") && stderr.contains("did not answer"),
        "{stderr}"
    );
    assert!(!stderr.contains("PluginOutputSecret"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

/// A kubeconfig that cannot be used is a usage error (exit 2) for every command that reads a
/// cluster, `verify` included; a server that cannot be reached is a runtime error (exit 1).
#[test]
fn an_unusable_kubeconfig_is_a_usage_error_for_every_command() {
    let dir = TempDir::new("cli-unusable");
    // Nothing listens on port 9 of 127.0.0.1 (discard): connection refused.
    let kubeconfig = write_kubeconfig(&dir.0, "http://127.0.0.1:9", "t");
    let kc = kubeconfig.to_str().unwrap();
    for cmd in [
        vec!["matrix"],
        vec!["audit"],
        vec!["explain", "a/b", "--node", "n"],
        vec![
            "verify",
            "-q",
            "--evidence",
            dir.join("evidence").to_str().unwrap(),
        ],
    ] {
        locality()
            .args(&cmd)
            .args(["--kubeconfig", kc, "--context", "nope"])
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("context \"nope\""));
        locality()
            .args(&cmd)
            .args(["--kubeconfig", kc])
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(1);
    }
}
