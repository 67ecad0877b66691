//! `locality sim rules`: the simulated kube-proxy's rule table, through the real binary.

mod serve;

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
    wait_for_kubeconfig(&kubeconfig);
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

/// Waits (at most 20 s) for the kubeconfig `sim serve` writes only once it listens.
fn wait_for_kubeconfig(kubeconfig: &std::path::Path) {
    let start = std::time::Instant::now();
    while !kubeconfig.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "sim serve did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
