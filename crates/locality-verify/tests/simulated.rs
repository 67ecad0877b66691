//! `verify` against the simulated API server (the same code a real cluster gets): a
//! conformant data plane is accepted; a data plane that ignores the Local policy is caught.

use std::path::PathBuf;
use std::time::Duration;

use locality_apiserver::ServeOptions;
use locality_live::LiveOptions;
use locality_sim::{DataPlaneProfile, SimConfig, Topology};
use locality_verify::run::{VerifyOptions, VerifyOutcome, verify};
use locality_verify::{Decision, Status};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("locality-verify-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(name: &str, profiles: &[(&str, &str)], only: &[&str]) -> (VerifyOutcome, PathBuf) {
    let dir = scratch(name);
    let topology = Topology::builtin("four-nodes").unwrap();
    let mut serve = ServeOptions::from_topology(&topology, SimConfig::default()).unwrap();
    for (node, p) in profiles {
        serve
            .engine
            .set_profile(node, p.parse::<DataPlaneProfile>().unwrap());
    }
    serve.speed = 50.0;
    serve.kubeconfig_out = Some(dir.join("kubeconfig"));
    let running = locality_apiserver::serve(serve).unwrap();
    let opts = VerifyOptions {
        live: LiveOptions {
            kubeconfig: Some(running.kubeconfig_path().to_path_buf()),
            ..LiveOptions::default()
        },
        only: only.iter().map(|s| s.to_string()).collect(),
        evidence: dir.join("evidence"),
        keep: false,
        run_id: "t1".into(),
        simulated: true,
        owner: "test".into(),
        pod_ready_timeout: Duration::from_secs(30),
        settle: Duration::from_millis(300),
        proxy_lag_timeout: Duration::from_secs(5),
        proxy_mode: None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = rt.block_on(verify(&opts)).expect("verify runs");
    (outcome, dir.join("evidence"))
}

#[test]
fn a_conformant_simulated_cluster_is_accepted_with_complete_evidence() {
    let (o, evidence) = run("accept", &[], &[]);
    for c in &o.cases {
        assert_eq!(c.status, Status::Pass, "{}: {}", c.id, c.why);
    }
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
    assert!(o.decision_line(true).contains("simulated cluster"));
    assert_eq!(o.roles.node(locality_verify::cases::Role::N1z), Some("node-d"));
    for f in [
        "00-versions.yaml",
        "01-nodes.yaml",
        "03-preflight.yaml",
        "ledger.json",
        "ledger.md",
        "junit.xml",
        "decision.json",
        "SHA256SUMS",
        "cases/C/expected.json",
        "cases/C/observed.json",
        "cases/C/endpointslices.yaml",
    ] {
        assert!(evidence.join(f).is_file(), "missing {f}");
    }
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(evidence.join("cases/C/observed.json")).unwrap())
            .unwrap();
    assert!(
        c["tries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["seen"]["kind"] == "timeout"),
        "{c}"
    );
    let sums = std::fs::read_to_string(evidence.join("SHA256SUMS")).unwrap();
    assert!(sums.lines().any(|l| l.ends_with("  ledger.json")), "{sums}");
    assert!(std::fs::read_dir(evidence.join("02-fixture")).unwrap().count() >= 10);
    let junit = std::fs::read_to_string(evidence.join("junit.xml")).unwrap();
    assert!(
        junit.contains("testcase") && junit.contains("ACCEPT (simulated cluster"),
        "{junit}"
    );
}

#[test]
fn a_data_plane_ignoring_the_local_policy_is_held() {
    let (o, _) = run(
        "ignores",
        &[("node-c", "ignores-local-policy")],
        &["A", "B1", "C"],
    );
    let c = o.cases.iter().find(|c| c.id == "C").unwrap();
    assert_eq!(c.status, Status::Fail, "{}", c.why);
    assert!(c.why.contains("answered"), "{}", c.why);
    assert_eq!(
        o.cases.iter().find(|c| c.id == "B1").unwrap().status,
        Status::Pass
    );
    assert_eq!(o.decision, Decision::Hold, "{:?}", o.advice);
    assert_eq!(o.cases.len(), 3, "--only");
}

#[test]
fn a_kube_proxy_that_does_not_know_its_node_name_gets_a_repair() {
    let (o, _) = run("mismatch", &[("node-a", "hostname-mismatch")], &["A", "B1"]);
    let b1 = o.cases.iter().find(|c| c.id == "B1").unwrap();
    assert_eq!(b1.status, Status::Fail, "{}", b1.why);
    assert_eq!(o.decision, Decision::Repair, "{:?}", o.advice);
    assert!(
        o.advice.iter().any(|a| a.contains("--hostname-override")),
        "{:?}",
        o.advice
    );
    assert_eq!(o.rerun, vec!["B1".to_string()]);
}
