//! `verify` against the simulated API server (the same code a real cluster gets): a
//! conformant data plane is accepted; a data plane that ignores the Local policy is caught.

use std::path::PathBuf;
use std::time::Duration;

use locality_apiserver::ServeOptions;
use locality_live::LiveOptions;
use locality_sim::{DataPlaneProfile, SimConfig, Topology};
use locality_verify::expect::Expected;
use locality_verify::probe::Seen;
use locality_verify::run::{VerifyOptions, VerifyOutcome, verify};
use locality_verify::{Decision, Status};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("locality-verify-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(name: &str, profiles: &[(&str, &str)], only: &[&str]) -> (VerifyOutcome, PathBuf) {
    run_on("four-nodes", name, profiles, only)
}

fn run_on(topology: &str, name: &str, profiles: &[(&str, &str)], only: &[&str]) -> (VerifyOutcome, PathBuf) {
    let dir = scratch(name);
    let topology = Topology::builtin(topology).unwrap();
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
        max_nodes: Some(locality_verify::run::DEFAULT_MAX_NODES),
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
    let ids: Vec<&str> = o.cases.iter().map(|c| c.id.as_str()).collect();
    let catalogue: Vec<&str> = locality_verify::CATALOGUE.iter().map(|c| c.id).collect();
    assert_eq!(ids, catalogue, "every case runs, in catalogue order");
    for id in ["P", "Bh", "Ch", "H4", "Z1", "Z2", "Z3", "L1", "U1", "U2", "X1"] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
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
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    // Z3: PreferClose behaves as PreferSameZone, with the deprecation noted.
    assert!(case("Z3").why.contains("deprecated"), "{}", case("Z3").why);
    // Z1: only the same-zone backend, from a node without one.
    assert!(case("Z1").tries.iter().all(|t| t.seen
        == Seen::Answer {
            responder: "z-be-n1".into()
        }));
    // Bh / Ch: hostNetwork clients; the responder is the backend's own name.
    assert!(case("Bh").tries.iter().all(|t| t.client == "host-client-n1"
        && t.seen
            == Seen::Answer {
                responder: "bh-be-n1".into()
            }));
    assert!(case("Ch").tries.iter().all(|t| t.seen == Seen::Timeout));
    // U1 / U2: UDP, U2 a read timeout.
    assert!(case("U1").tries.iter().all(|t| t.protocol == "udp"));
    assert!(
        case("U2")
            .tries
            .iter()
            .all(|t| t.protocol == "udp" && t.seen == Seen::Timeout && t.raw.contains("i/o timeout"))
    );
    // X1: N3's InternalIP at the nodePort, answered by both backends.
    let x1: Vec<&str> = case("X1").tries.iter().map(|t| t.target.as_str()).collect();
    assert!(x1.iter().all(|t| t.starts_with("172.18.0.4:")), "{x1:?}");
    // P: each node's client served by the DaemonSet pod on its own node.
    match &case("P").expected {
        Some(Expected::PerNode { nodes }) => {
            let names: Vec<&str> = nodes.keys().map(String::as_str).collect();
            assert_eq!(names, ["node-a", "node-b", "node-c", "node-d"]);
            for e in nodes.values() {
                assert!(
                    matches!(e, Expected::Deliver { pods } if pods.len() == 1),
                    "{e:?}"
                );
            }
        }
        e => panic!("P expected {e:?}"),
    }
    let p_clients: std::collections::BTreeSet<&str> =
        case("P").tries.iter().map(|t| t.client.as_str()).collect();
    assert_eq!(p_clients.len(), 4, "{p_clients:?}");
    // A hostNetwork client needs the privileged Pod Security level.
    let ns_manifest = std::fs::read_dir(evidence.join("02-fixture"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("-namespace-"))
        .unwrap();
    let ns_text = std::fs::read_to_string(ns_manifest).unwrap();
    assert!(
        ns_text.contains("pod-security.kubernetes.io/enforce: privileged"),
        "{ns_text}"
    );
    let sums = std::fs::read_to_string(evidence.join("SHA256SUMS")).unwrap();
    assert!(sums.lines().any(|l| l.ends_with("  ledger.json")), "{sums}");
    assert!(std::fs::read_dir(evidence.join("02-fixture")).unwrap().count() >= 10);
    let junit = std::fs::read_to_string(evidence.join("junit.xml")).unwrap();
    assert!(
        junit.contains("testcase") && junit.contains("ACCEPT (simulated cluster"),
        "{junit}"
    );
    assert_report(&o, &evidence);
}

/// `report.html`: self-contained (no script, no external stylesheet, font or image; the only
/// URLs are the Kubernetes docs links of the ledger rows), every case with its evidence link
/// and, when it has tries, its SVG timeline; covered by `SHA256SUMS`.
fn assert_report(o: &VerifyOutcome, evidence: &std::path::Path) {
    let html = std::fs::read_to_string(evidence.join("report.html")).expect("report.html");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("ACCEPT (simulated cluster"));
    for c in &o.cases {
        assert!(
            html.contains(&format!("<a href=\"cases/{0}/\">cases/{0}/</a>", c.id)),
            "{}",
            c.id
        );
        assert!(html.contains(&format!("id=\"case-{}\"", c.id)), "{}", c.id);
    }
    let with_tries = o.cases.iter().filter(|c| !c.tries.is_empty()).count();
    assert!(with_tries > 0);
    assert_eq!(html.matches("<svg").count(), with_tries);
    let tries: usize = o.cases.iter().map(|c| c.tries.len()).sum();
    assert_eq!(html.matches("<rect ").count(), tries);
    for forbidden in ["<script", "<link", "<img", "<iframe", "@import", "url("] {
        assert!(!html.contains(forbidden), "{forbidden} in report.html");
    }
    // 00-versions.yaml, embedded as text, names the (loopback) API server read.
    let (before, versions) = html.split_once("<h2>Versions</h2>").unwrap();
    let (versions, after) = versions.split_once("<h2>Ledger</h2>").unwrap();
    assert!(versions.contains("server: http://127.0.0.1:"), "{versions}");
    assert_eq!(versions.matches("http").count(), 1, "{versions}");
    let html = format!("{before}{after}");
    for (i, _) in html.match_indices("http") {
        let url = &html[i..];
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            continue;
        }
        // Text of a try's tooltip (the raw Go error names the URL dialled) links nothing.
        let in_tooltip = html[..i].rfind("<title>") > html[..i].rfind("</title>");
        if in_tooltip {
            continue;
        }
        assert!(
            url.starts_with("https://kubernetes.io/docs/") && html[..i].ends_with("<a href=\""),
            "a URL outside a docs link: {}",
            &url[..url.len().min(80)]
        );
    }
    let sums = std::fs::read_to_string(evidence.join("SHA256SUMS")).unwrap();
    assert!(sums.lines().any(|l| l.ends_with("  report.html")), "{sums}");
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

#[test]
fn ignoring_the_local_policy_is_caught_from_the_host_over_udp_and_under_a_preference() {
    let (o, _) = run(
        "ignores-new",
        &[("node-c", "ignores-local-policy")],
        &["A", "Ch", "L1", "U2", "X1"],
    );
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["Ch", "L1", "U2"] {
        let c = case(id);
        assert_eq!(c.status, Status::Fail, "{id}: {}", c.why);
        assert!(c.why.contains("answered"), "{id}: {}", c.why);
    }
    // ITP does not govern NodePort traffic: X1 holds on the same node.
    assert_eq!(case("X1").status, Status::Pass, "{}", case("X1").why);
    assert_eq!(o.decision, Decision::Hold, "{:?}", o.advice);
}

#[test]
fn a_kube_proxy_that_does_not_know_its_zone_breaks_the_zone_preference_and_the_daemonset() {
    // kube-proxy on node-d (N1z) does not find its Node: no zone, nothing local.
    let (o, _) = run(
        "zone-unknown",
        &[("node-d", "hostname-mismatch")],
        &["A", "P", "H4", "Z1", "Z2"],
    );
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    let z1 = case("Z1");
    assert_eq!(z1.status, Status::Fail, "{}", z1.why);
    assert!(z1.why.contains("z-be-n2"), "{}", z1.why);
    let p = case("P");
    assert_eq!(p.status, Status::Fail, "{}", p.why);
    assert!(p.why.contains("node-d") && p.why.contains("timeout"), "{}", p.why);
    // Clients elsewhere are unaffected.
    assert_eq!(case("H4").status, Status::Pass, "{}", case("H4").why);
    assert_eq!(case("Z2").status, Status::Pass, "{}", case("Z2").why);
    assert_ne!(o.decision, Decision::Accept);
}

#[test]
fn cases_without_their_role_node_are_not_executed_and_the_rest_run() {
    // three-zones has no second node in N1's zone: no N1z.
    let (o, _) = run_on("three-zones", "no-n1z", &[], &["A", "P", "H4", "Z1", "Z2", "Z3"]);
    assert_eq!(o.roles.node(locality_verify::cases::Role::N1z), None);
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["H4", "Z1", "Z3"] {
        let c = case(id);
        assert_eq!(c.status, Status::NotExecuted, "{id}: {}", c.why);
        assert!(c.why.contains("no node for role N1z"), "{id}: {}", c.why);
    }
    assert_eq!(case("Z2").status, Status::Pass, "{}", case("Z2").why);
    let p = case("P");
    assert_eq!(p.status, Status::Pass, "{}", p.why);
    assert!(matches!(&p.expected, Some(Expected::PerNode { nodes }) if nodes.len() == 3));
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
}
