//! `verify` against the simulated API server (the same code a real cluster gets): a
//! conformant data plane is accepted; a data plane that ignores the Local policy is caught.

use crate::support;

use std::time::Duration;

use locality_apiserver::ServeOptions;
use locality_live::LiveOptions;
use locality_sim::{DataPlaneProfile, SimConfig, Topology};
use locality_testkit::files::TempDir;
use locality_verify::decision::RepairKind;
use locality_verify::expect::Expected;
use locality_verify::probe::Seen;
use locality_verify::run::{VerifyOptions, VerifyOutcome, verify};
use locality_verify::{Decision, Status};

fn scratch(name: &str) -> TempDir {
    TempDir::new(&format!("verify-test-{name}"))
}

fn run(name: &str, profiles: &[(&str, &str)], only: &[&str]) -> (VerifyOutcome, TempDir) {
    run_on("four-nodes", name, profiles, only)
}

fn run_on(topology: &str, name: &str, profiles: &[(&str, &str)], only: &[&str]) -> (VerifyOutcome, TempDir) {
    Sim {
        topology: topology.into(),
        profiles: profiles
            .iter()
            .map(|(n, p)| (n.to_string(), p.to_string()))
            .collect(),
        only: only.iter().map(|s| s.to_string()).collect(),
        ..Sim::default()
    }
    .verify(name)
}

/// One verify run against its own simulated API server.
#[derive(Clone)]
struct Sim {
    topology: String,
    /// (node, data-plane profile).
    profiles: Vec<(String, String)>,
    /// (node, kube-proxy minor) for a kube-proxy older than the cluster.
    proxy_versions: Vec<(String, u16)>,
    only: Vec<String>,
    seed: u64,
    speed: f64,
    api_latency: Duration,
    max_nodes: Option<usize>,
    /// The container of this pod of the run restarts as soon as the run first reads its log
    /// (a probe loop's, once it is probing).
    restart_on_log_read: Option<String>,
}

impl Default for Sim {
    fn default() -> Self {
        Sim {
            topology: "four-nodes".into(),
            profiles: Vec::new(),
            proxy_versions: Vec::new(),
            only: Vec::new(),
            seed: 1,
            speed: 50.0,
            api_latency: Duration::ZERO,
            max_nodes: Some(locality_verify::run::DEFAULT_MAX_NODES),
            restart_on_log_read: None,
        }
    }
}

impl Sim {
    fn verify(&self, name: &str) -> (VerifyOutcome, TempDir) {
        let (o, evidence, _) = self.verify_recording(name);
        (o, evidence)
    }

    /// [`Sim::verify`], with every request the run sent (method, path and query).
    fn verify_recording(&self, name: &str) -> (VerifyOutcome, TempDir, Vec<(String, String)>) {
        let dir = scratch(name);
        // A built-in name, or a YAML topology.
        let mut topology = if self.topology.contains('\n') {
            Topology::from_yaml(&self.topology, name).unwrap()
        } else {
            Topology::builtin(&self.topology).unwrap()
        };
        for (node, minor) in &self.proxy_versions {
            let n = topology
                .nodes
                .iter_mut()
                .find(|n| n.node.meta.name == *node)
                .unwrap();
            n.kube_proxy_version = Some(locality_model::version::KubeVersion::new(1, *minor));
        }
        let config = SimConfig {
            seed: self.seed,
            ..SimConfig::default()
        };
        let mut serve = ServeOptions::from_topology(&topology, config).unwrap();
        for (node, p) in &self.profiles {
            serve
                .engine
                .set_profile(node, p.parse::<DataPlaneProfile>().unwrap());
        }
        serve.speed = self.speed;
        serve.faults.latency = self.api_latency;
        let running = locality_apiserver::serve(serve).unwrap();
        // The target says it is simulated (its version): detected, not told.
        let opts = VerifyOptions {
            only: self.only.clone(),
            max_nodes: self.max_nodes,
            ..support::options(running.kubeconfig_path(), dir.to_path_buf())
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        let outcome = std::thread::scope(|s| {
            if let Some(pod) = &self.restart_on_log_read {
                let (running, done) = (&running, &done);
                s.spawn(move || restart_when_read(running, pod, done));
            }
            let o = rt.block_on(verify(&opts)).expect("verify runs");
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            o
        });
        assert!(outcome.simulated, "a simulated target is detected as such");
        let requests = running.requests();
        drop(running);
        (outcome, dir, requests)
    }
}

/// Restarts `pod`'s container once a request reads its log (the run is probing through it).
fn restart_when_read(running: &locality_apiserver::Running, pod: &str, done: &std::sync::atomic::AtomicBool) {
    let suffix = format!("/pods/{pod}/log");
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        let ns = running.requests().into_iter().find_map(|(_, path)| {
            let path = path.split('?').next().unwrap_or_default().to_string();
            path.strip_suffix(&suffix)
                .and_then(|p| p.strip_prefix("/api/v1/namespaces/"))
                .map(str::to_string)
        });
        if let Some(ns) = ns {
            let key = locality_sim::objects::ObjectKey::new(locality_sim::objects::Kind::Pod, &ns, pod);
            assert!(
                running.with_engine(|e| e.restart_container(&key)),
                "{ns}/{pod} restarts"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs every `(name, sim)` at once (each its own server and runtime, on its own thread):
/// a run mostly waits on the simulated cluster.
fn concurrently(runs: Vec<(String, Sim)>) -> Vec<(String, VerifyOutcome, TempDir)> {
    let handles: Vec<_> = runs
        .into_iter()
        .map(|(name, sim)| {
            std::thread::spawn(move || {
                let (o, evidence) = sim.verify(&name);
                (name, o, evidence)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("a run panicked"))
        .collect()
}

fn summary(name: &str, o: &VerifyOutcome) -> String {
    let bad: Vec<String> = o
        .cases
        .iter()
        .filter(|c| c.status != Status::Pass)
        .map(|c| format!("{} {}: {}", c.id, c.status.as_str(), c.why))
        .collect();
    format!(
        "{name}: {} {:?}\n  {}",
        o.decision.as_str(),
        o.advice,
        bad.join("\n  ")
    )
}

const NODES: [&str; 4] = ["node-a", "node-b", "node-c", "node-d"];

/// One fault on each node of four-nodes, one at a time.
fn on_each_node(fault: &str) -> Vec<(String, VerifyOutcome, TempDir)> {
    concurrently(
        NODES
            .iter()
            .map(|n| {
                (
                    format!("fm-{}-{n}", fault.replace(':', "-")),
                    Sim {
                        profiles: vec![(n.to_string(), fault.to_string())],
                        ..Sim::default()
                    },
                )
            })
            .collect(),
    )
}

#[test]
fn fault_matrix_a_node_ignoring_the_local_policy_is_never_accepted() {
    for (name, o, _evidence) in on_each_node("ignores-local-policy") {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        assert!(
            o.cases.iter().any(|c| c.status == Status::Fail),
            "{}",
            summary(&name, &o)
        );
    }
}

/// A node whose data plane never falls back to serving-terminating endpoints (KEP-1669) is
/// caught wherever it is: `Pt` probes every node while its only local endpoint terminates.
#[test]
fn fault_matrix_a_node_without_the_terminating_fallback_is_never_accepted() {
    for ((name, o, _evidence), node) in on_each_node("no-terminating-fallback").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        let pt = o.cases.iter().find(|c| c.id == "Pt").unwrap();
        assert_eq!(pt.status, Status::Fail, "{}", summary(&name, &o));
        assert!(pt.why.contains(node), "{}: {}", node, pt.why);
    }
}

#[test]
fn fault_matrix_a_hostname_mismatch_is_a_repair_naming_the_node() {
    for ((name, o, _evidence), node) in on_each_node("hostname-mismatch").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Repair, "{}", summary(&name, &o));
        assert!(
            o.repairs
                .iter()
                .all(|r| r.kind == RepairKind::HostnameOverride && r.node == node),
            "{}: {:?}",
            summary(&name, &o),
            o.repairs
        );
        assert!(
            o.advice
                .iter()
                .any(|a| a.contains("--hostname-override") && a.contains(node))
        );
    }
}

#[test]
fn fault_matrix_an_old_kube_proxy_is_a_repair_naming_the_node() {
    let runs = NODES
        .iter()
        .map(|n| {
            (
                format!("fm-skew-{n}"),
                Sim {
                    proxy_versions: vec![(n.to_string(), 32)],
                    ..Sim::default()
                },
            )
        })
        .collect();
    for ((name, o, _evidence), node) in concurrently(runs).into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Repair, "{}", summary(&name, &o));
        assert!(
            o.repairs
                .iter()
                .any(|r| r.kind == RepairKind::UpgradeKubeProxy && r.node == node),
            "{}: {:?}",
            summary(&name, &o),
            o.repairs
        );
        assert!(o.repairs.iter().all(|r| r.node == node), "{:?}", o.repairs);
    }
}

#[test]
fn fault_matrix_ipvs_on_one_node_is_accepted() {
    for (name, o, _evidence) in on_each_node("kube-proxy:ipvs") {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
    }
}

#[test]
fn fault_matrix_a_kube_proxy_late_within_the_limit_is_accepted() {
    for (name, o, _evidence) in on_each_node("stale-rules:2") {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
    }
}

#[test]
fn fault_matrix_a_kube_proxy_late_beyond_the_limit_is_held_naming_it_and_never_failed() {
    for ((name, o, _evidence), node) in on_each_node("stale-rules:40").into_iter().zip(NODES) {
        assert_eq!(o.decision, Decision::Hold, "{}", summary(&name, &o));
        assert!(
            o.cases.iter().all(|c| c.status != Status::Fail),
            "{}",
            summary(&name, &o)
        );
        assert!(
            o.lagging.iter().any(|l| l.node == node && l.measured_ms > 5_000),
            "{}: {:?}",
            summary(&name, &o),
            o.lagging
        );
    }
}

/// `M` on a node whose kube-proxy is later than the whole lag timeout: its metric is still
/// the old one because nothing was synced, which is lag (INCOMPLETE, a HOLD naming the node),
/// never kube-proxy failing to count the Service (FAIL). The simulated clock runs slowly so
/// that the lag outlasts every read.
#[test]
fn a_kube_proxy_later_than_every_read_is_held_for_lag_never_failed() {
    let (o, _) = Sim {
        profiles: vec![("node-c".into(), "stale-rules:60".into())],
        only: vec!["M".into()],
        speed: 5.0,
        ..Sim::default()
    }
    .verify("m-late");
    let m = o.cases.iter().find(|c| c.id == "M").expect("M ran");
    assert_eq!(
        m.client_node.as_deref(),
        Some("node-c"),
        "{}",
        summary("m-late", &o)
    );
    assert_eq!(m.status, Status::Incomplete, "{}", summary("m-late", &o));
    assert!(m.lag_over_limit.is_some(), "{}", summary("m-late", &o));
    assert!(
        o.lagging.iter().any(|l| l.node == "node-c"),
        "{}",
        summary("m-late", &o)
    );
    // The control probed through node-c is its lag too, not a broken environment.
    assert!(
        o.cases.iter().all(|c| c.status != Status::Fail),
        "{}",
        summary("m-late", &o)
    );
    assert_eq!(o.decision, Decision::Hold, "{}", summary("m-late", &o));
}

/// `--max-nodes` below the usable nodes leaves nodes unprobed: never a plain ACCEPT.
#[test]
fn a_sampled_run_is_partial_never_a_plain_accept() {
    let (o, evidence) = Sim {
        max_nodes: Some(2),
        only: vec!["P".into()],
        ..Sim::default()
    }
    .verify("sampled");
    let line = o.decision_line(false);
    assert!(line.starts_with("PARTIAL "), "{line}");
    assert!(line.contains("of 4 usable nodes probed"), "{line}");
    let decision: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(evidence.join("decision.json")).unwrap()).unwrap();
    assert_eq!(decision["partial"], true);
    assert_eq!(decision["sampled"]["usable"], 4);
    // Every usable node (the default): not partial on that account.
    let (o, _) = Sim {
        max_nodes: None,
        only: vec!["P".into()],
        ..Sim::default()
    }
    .verify("all-nodes");
    assert!(o.sampled.is_none());
}

/// 20 seeds, each a full run on a conformant cluster: ACCEPT, and not one FAIL.
#[test]
fn fault_matrix_a_conformant_cluster_is_accepted_on_twenty_seeds() {
    let runs = (1..=20u64)
        .map(|seed| {
            (
                format!("fm-conformant-{seed}"),
                Sim {
                    seed,
                    ..Sim::default()
                },
            )
        })
        .collect();
    for (name, o, _evidence) in concurrently(runs) {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
    }
}

/// A slow API server (200 ms per request, 10 s of the simulated clock at speed 50) and a
/// fast simulated clock alone: a phase that falls between two observations is never judged
/// a violation.
#[test]
fn fault_matrix_a_conformant_cluster_is_accepted_behind_a_slow_api() {
    let runs = vec![
        (
            "fm-latency".to_string(),
            Sim {
                api_latency: Duration::from_millis(200),
                ..Sim::default()
            },
        ),
        (
            "fm-speed-50".to_string(),
            Sim {
                seed: 7,
                ..Sim::default()
            },
        ),
    ];
    for (name, o, _evidence) in concurrently(runs) {
        assert_eq!(o.decision, Decision::Accept, "{}", summary(&name, &o));
    }
}

/// Two usable nodes are enough for the core cases; one is not (HOLD, with a ledger).
#[test]
fn two_nodes_are_enough_for_the_contract_and_one_is_not() {
    let two = "name: two\nnodes:\n  - {name: node-a, zone: zone-a}\n  - {name: node-b, zone: zone-b}\n";
    let one = "name: one\nnodes:\n  - {name: node-a, zone: zone-a}\n  - name: node-b\n    zone: zone-b\n    taints: [{key: dedicated, value: x, effect: NoSchedule}]\n";
    let runs = vec![
        (
            "two-nodes".to_string(),
            Sim {
                topology: two.into(),
                only: ["P", "Pn", "C1", "B1", "C", "D1", "D2", "F"]
                    .map(String::from)
                    .to_vec(),
                ..Sim::default()
            },
        ),
        (
            "one-node".to_string(),
            Sim {
                topology: one.into(),
                ..Sim::default()
            },
        ),
    ];
    let results = concurrently(runs);
    let (name, o, _) = &results[0];
    for c in &o.cases {
        assert_eq!(c.status, Status::Pass, "{}", summary(name, o));
    }
    assert_eq!(o.decision, Decision::Accept, "{}", summary(name, o));
    assert!(o.decision_line(false).starts_with("PARTIAL ACCEPT"));
    let (name, o, _) = &results[1];
    assert_eq!(o.decision, Decision::Hold, "{}", summary(name, o));
    assert!(
        o.advice
            .iter()
            .any(|a| a.contains("1 usable (node-a)") && a.contains("node-b: tainted")),
        "{:?}",
        o.advice
    );
    assert!(o.evidence.join("ledger.json").is_file() && o.evidence.join("decision.json").is_file());
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
    let catalogue: Vec<&str> = locality_verify::cases::default_run().map(|c| c.id).collect();
    assert_eq!(
        ids, catalogue,
        "every case but the external ones runs, in catalogue order"
    );
    for id in ["G2", "G3", "R"] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    for id in [
        "P", "Bh", "Ch", "H4", "H5", "Z1", "Z2", "Z3", "L1", "U1", "U2", "X1", "X3",
    ] {
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
        "cases/M/proxyMode.txt",
        "cases/M/metrics-1-before.txt",
        "cases/M/metrics-2-no-local-endpoint.txt",
        "cases/M/metrics-3-local-endpoint.txt",
        "cases/M/expected.json",
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
    // H5: N1's pod lacks the port dialled, so N2's answers; X3: the cluster IP of an ETP
    // Local Service is served by N1's pod from N3.
    for (id, pod) in [("H5", "h5-be-n2"), ("X3", "x3-be-n1")] {
        assert!(
            case(id).tries.iter().all(|t| t.seen
                == Seen::Answer {
                    responder: pod.into()
                }),
            "{id}: {:?}",
            case(id).tries
        );
    }
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
fn the_external_cases_catch_a_data_plane_that_masquerades_external_traffic() {
    let runs = vec![
        (
            "external-ok".to_string(),
            Sim {
                only: vec!["X2".into(), "X2s".into()],
                ..Sim::default()
            },
        ),
        (
            "external-masq".to_string(),
            Sim {
                only: vec!["X2".into(), "X2s".into()],
                profiles: vec![("node-a".into(), "masquerades-external".into())],
                ..Sim::default()
            },
        ),
    ];
    let outcomes = concurrently(runs);
    let (_, ok, _) = &outcomes[0];
    for c in &ok.cases {
        assert_eq!(c.status, Status::Pass, "{}: {}", c.id, c.why);
    }
    let x2s = ok.cases.iter().find(|c| c.id == "X2s").unwrap();
    assert!(x2s.why.contains("client's own address"), "{}", x2s.why);
    let (_, masq, _) = &outcomes[1];
    assert_ne!(
        masq.decision,
        Decision::Accept,
        "{}",
        summary("external-masq", masq)
    );
    let x2s = masq.cases.iter().find(|c| c.id == "X2s").unwrap();
    assert_eq!(x2s.status, Status::Fail, "{}", x2s.why);
    assert!(x2s.why.contains("masqueraded"), "{}", x2s.why);
}

#[test]
fn a_client_that_restarts_while_probing_makes_its_case_incomplete() {
    let (o, _) = Sim {
        only: vec!["E-a".into()],
        restart_on_log_read: Some("ea-loop-n1".into()),
        ..Sim::default()
    }
    .verify("restart");
    let ea = o.cases.iter().find(|c| c.id == "E-a").unwrap();
    assert_eq!(ea.status, Status::Incomplete, "{}", ea.why);
    assert!(ea.why.contains("ea-loop-n1 (restartCount 0 → 1)"), "{}", ea.why);
    assert_ne!(o.decision, Decision::Accept, "{}", summary("restart", &o));
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
    // --only runs the controls too, and says the run is partial.
    let ids: Vec<&str> = o.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["N0", "A", "B1", "C"], "--only");
    assert!(
        o.decision_line(false).starts_with("PARTIAL HOLD"),
        "{}",
        o.decision_line(false)
    );
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

/// `M`: N3's kube-proxy counts the Local Service without a local endpoint (+1, one port, one
/// family), and no more once N3 has a Ready backend; the metrics text is evidence.
fn m_counts(evidence: &std::path::Path) {
    let read = |f: &str| std::fs::read_to_string(evidence.join("cases/M").join(f)).unwrap();
    let v = |f: &str| locality_verify::metrics::no_local_internal(&read(f)).unwrap();
    assert_eq!(
        v("metrics-2-no-local-endpoint.txt"),
        v("metrics-1-before.txt") + 1.0
    );
    assert_eq!(v("metrics-3-local-endpoint.txt"), v("metrics-1-before.txt"));
}

#[test]
fn m_reads_the_no_local_endpoints_metric_on_n3() {
    let (o, evidence) = run("m-pass", &[], &["M"]);
    let m = o.cases.iter().find(|c| c.id == "M").unwrap();
    assert_eq!(m.status, Status::Pass, "{}", m.why);
    assert!(
        m.why
            .contains("kubeproxy_sync_proxy_rules_no_local_endpoints_total"),
        "{}",
        m.why
    );
    m_counts(&evidence);
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
}

#[test]
fn m_fails_when_n3_does_not_see_its_own_endpoint_as_local() {
    let (o, _) = run("m-mismatch", &[("node-c", "hostname-mismatch")], &["M"]);
    let m = o.cases.iter().find(|c| c.id == "M").unwrap();
    assert_eq!(m.status, Status::Fail, "{}", m.why);
    assert!(m.why.contains("--hostname-override"), "{}", m.why);
    assert_eq!(o.decision, Decision::Repair, "{:?}", o.advice);
    assert_eq!(o.rerun, vec!["M".to_string()]);
}

#[test]
fn m_is_not_executed_without_kube_proxy_metrics() {
    let (o, _) = run("m-other", &[("node-c", "other")], &["M"]);
    let m = o.cases.iter().find(|c| c.id == "M").unwrap();
    assert_eq!(m.status, Status::NotExecuted, "{}", m.why);
    assert!(m.why.starts_with("no kube-proxy metrics"), "{}", m.why);
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
    // The node's data plane could not be read: judged against the contract, and said so.
    assert!(
        o.advice
            .iter()
            .any(|a| a.starts_with("note: node-c's kube-proxy could not be read")),
        "{:?}",
        o.advice
    );
    assert!(o.planes["node-c"].unreadable.is_some() && o.planes["node-a"].mode.is_some());
}

/// The `logs` channel: probe-loop pods on N1 and N3 dialling `C`'s Local Service, read through
/// `pods/log`: ≥ 10 tries per second, N1 answered by its own backend, N3 dropped (timeouts);
/// with a data plane on N3 ignoring the Local policy, N3's tries are answered.
fn logs_channel(
    profiles: &[(&str, &str)],
) -> (Vec<locality_verify::probe::Try>, Vec<locality_verify::probe::Try>) {
    use locality_verify::cases::{Role, case};
    use locality_verify::cluster::Cluster;
    use locality_verify::fixture;
    use locality_verify::logs::ProbeLoop;
    let topology = Topology::builtin("four-nodes").unwrap();
    let mut serve = ServeOptions::from_topology(&topology, SimConfig::default()).unwrap();
    for (node, p) in profiles {
        serve
            .engine
            .set_profile(node, p.parse::<DataPlaneProfile>().unwrap());
    }
    serve.speed = 50.0;
    let running = locality_apiserver::serve(serve).unwrap();
    let live = LiveOptions {
        kubeconfig: Some(running.kubeconfig_path().to_path_buf()),
        ..LiveOptions::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, target) = locality_live::client(&live).await.unwrap();
        let cluster = Cluster::new(client, target.server.clone());
        let ns = "logs-channel";
        let setup = case("C").unwrap().setup;
        cluster
            .create("/api/v1/namespaces", &fixture::namespace(ns, "t", false))
            .await
            .unwrap();
        let pods = format!("/api/v1/namespaces/{ns}/pods");
        for (role, node) in [(Role::N1, "node-a"), (Role::N2, "node-b")] {
            cluster
                .create(&pods, &fixture::backend(ns, "t", &setup, role, node, true))
                .await
                .unwrap();
        }
        let svc = cluster
            .create(
                &format!("/api/v1/namespaces/{ns}/services"),
                &fixture::service(ns, "t", &setup),
            )
            .await
            .unwrap();
        let ip = svc["spec"]["clusterIP"].as_str().unwrap().to_string();
        let ready = |name: String| {
            let cluster = &cluster;
            let pods = pods.clone();
            async move {
                cluster
                    .wait_for(Duration::from_secs(30), Duration::from_millis(100), || async {
                        let p = cluster.get(&format!("{pods}/{name}")).await?.unwrap_or_default();
                        let ok = p["status"]["conditions"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|c| c["type"] == "Ready" && c["status"] == "True");
                        Ok(ok.then_some(()))
                    })
                    .await
                    .unwrap()
                    .expect("Ready");
            }
        };
        ready(fixture::backend_name("b", Role::N1, true)).await;
        ready(fixture::backend_name("b", Role::N2, true)).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let loops = [
            ProbeLoop::new("loop-n1", "node-a", &format!("{ip}:80")),
            ProbeLoop::new("loop-n3", "node-c", &format!("{ip}:80")),
        ];
        for l in &loops {
            cluster.create(&pods, &l.manifest(ns, "t")).await.unwrap();
        }
        // 20 virtual seconds at speed 50.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let n1 = loops[0].tries(&cluster, ns).await.unwrap();
        let n3 = loops[1].tries(&cluster, ns).await.unwrap();
        (n1, n3)
    })
}

#[test]
fn the_logs_channel_keeps_ten_tries_per_second_through_answers_and_drops() {
    let (n1, n3) = logs_channel(&[]);
    for tries in [&n1, &n3] {
        assert!(tries.len() > 20, "{}", tries.len());
        let rate = locality_verify::logs::rate(tries);
        assert!(rate >= 10.0, "{rate} tries/s");
        assert!(tries.iter().all(|t| t.channel == "logs"));
    }
    assert!(
        n1.iter().all(|t| t.seen
            == Seen::Answer {
                responder: "b-be-n1".into()
            }),
        "{:?}",
        n1.iter().find(|t| t.seen
            != Seen::Answer {
                responder: "b-be-n1".into()
            })
    );
    assert!(
        n3.iter()
            .all(|t| t.seen == Seen::Timeout && t.received_ms >= t.sent_ms + 500)
    );
}

#[test]
fn the_logs_channel_sees_a_data_plane_ignoring_the_local_policy() {
    let (_, n3) = logs_channel(&[("node-c", "ignores-local-policy")]);
    assert!(
        n3.iter().any(|t| matches!(t.seen, Seen::Answer { .. })),
        "{:?}",
        &n3[..n3.len().min(3)]
    );
    assert!(locality_verify::logs::rate(&n3) >= 10.0);
}

/// The rollout cases on a conformant data plane: ≥ 10 tries per second; E-a answered locally
/// (old, then new) with a drop window and never remotely; H3 without a drop window.
#[test]
fn rollouts_keep_their_locality_contract() {
    let (o, evidence) = run("rollout", &[], &["E-a", "E-b", "H3"]);
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["E-a", "E-b", "H3"] {
        let c = case(id);
        assert_eq!(c.status, Status::Pass, "{id}: {}", c.why);
        assert!(locality_verify::logs::rate(&c.tries) >= 10.0, "{id}: {}", c.why);
        assert!(c.tries.iter().all(|t| t.channel == "logs"));
        assert!(evidence.join(format!("cases/{id}/timeline.json")).is_file());
    }
    let ea = case("E-a");
    let responders: std::collections::BTreeSet<String> = ea
        .tries
        .iter()
        .filter_map(|t| match &t.seen {
            Seen::Answer { responder } => Some(responder.clone()),
            _ => None,
        })
        .collect();
    assert!(!responders.contains("ea-be-n2"), "{responders:?}");
    assert!(
        responders.contains("ea-be-n1") && responders.contains("ea-be-n1-new"),
        "{responders:?}"
    );
    assert!(ea.tries.iter().any(|t| t.seen == Seen::Timeout), "{}", ea.why);
    let h3 = case("H3");
    assert!(h3.tries.iter().all(|t| t.seen != Seen::Timeout), "{}", h3.why);
    assert!(
        h3.tries.iter().any(|t| t.seen
            == Seen::Answer {
                responder: "h3-be-n2".into()
            }),
        "{}",
        h3.why
    );
    assert_eq!(o.decision, Decision::Accept, "{:?}", o.advice);
}

#[test]
fn a_rollout_on_a_data_plane_ignoring_the_local_policy_fails() {
    let (o, _) = run("rollout-ignores", &[("node-a", "ignores-local-policy")], &["E-a"]);
    let ea = o.cases.iter().find(|c| c.id == "E-a").unwrap();
    assert_eq!(ea.status, Status::Fail, "{}", ea.why);
    assert!(ea.why.contains("remote"), "{}", ea.why);
}

#[test]
fn a_rollout_slower_than_the_lag_band_is_incomplete_not_failed() {
    // N1's kube-proxy programs every change 12 s late; the band is 5 s.
    let (o, _) = run("rollout-stale", &[("node-a", "stale-rules:12")], &["E-a"]);
    let ea = o.cases.iter().find(|c| c.id == "E-a").unwrap();
    assert_eq!(ea.status, Status::Incomplete, "{}", ea.why);
    assert!(ea.why.contains("lag"), "{}", ea.why);
    // A lag over the limit is never judged: HOLD naming the node and the lag, no FAIL.
    assert_eq!(o.decision, Decision::Hold, "{:?}", o.advice);
    assert_eq!(o.lagging.len(), 1, "{:?}", o.lagging);
    assert_eq!(o.lagging[0].node, "node-a");
    assert!(o.lagging[0].measured_ms > 5_000, "{:?}", o.lagging);
    assert!(o.cases.iter().all(|c| c.status != Status::Fail));
}

#[test]
fn rollouts_catch_a_kube_proxy_that_does_not_know_its_node() {
    // N1's kube-proxy finds no endpoint local: E-b drops throughout, H3 spreads to N2 while
    // N1's backend is ready.
    let (o, _) = run(
        "rollout-mismatch",
        &[("node-a", "hostname-mismatch")],
        &["E-b", "H3"],
    );
    let case = |id: &str| o.cases.iter().find(|c| c.id == id).unwrap();
    for id in ["E-b", "H3"] {
        assert_eq!(case(id).status, Status::Fail, "{id}: {}", case(id).why);
        assert!(case(id).why.contains("OldReady"), "{id}: {}", case(id).why);
    }
    assert!(case("H3").why.contains("h3-be-n2"), "{}", case("H3").why);
    assert_ne!(o.decision, Decision::Accept);
}

/// The RBAC attributes of a request, as the API server's request info gives them: (verb,
/// API group, resource[/subresource]); `None` for a non-resource URL (`/version`, discovery).
fn rbac_attributes(method: &str, uri: &str) -> Option<(String, String, String)> {
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest) = match segs.first() {
        Some(&"api") if segs.len() > 2 => ("", &segs[2..]),
        Some(&"apis") if segs.len() > 3 => (segs[1], &segs[3..]),
        _ => return None,
    };
    let rest = if rest[0] == "namespaces" && rest.len() >= 3 {
        &rest[2..]
    } else {
        rest
    };
    let name = rest.get(1);
    let resource = match rest.get(2) {
        Some(sub) => format!("{}/{sub}", rest[0]),
        None => rest[0].to_string(),
    };
    let watch = query.split('&').any(|kv| kv == "watch=true" || kv == "watch=1");
    let verb = match (method, name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if watch => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        _ => "unknown",
    };
    Some((verb.to_string(), group.to_string(), resource))
}

/// The rules of the ClusterRole `name` in a YAML file of RBAC objects: (apiGroups,
/// resources, verbs) each.
fn cluster_role_rules(text: &str, name: &str) -> Vec<(Vec<String>, Vec<String>, Vec<String>)> {
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).expect("RBAC YAML");
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    docs.iter()
        .filter(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == name)
        .flat_map(|d| d["rules"].as_array().cloned().unwrap_or_default())
        .map(|r| (list(&r["apiGroups"]), list(&r["resources"]), list(&r["verbs"])))
        .collect()
}

/// The requests `rules` do not grant, as `verb group/resource` lines.
fn refused(
    requests: &[(String, String)],
    rules: &[(Vec<String>, Vec<String>, Vec<String>)],
) -> std::collections::BTreeSet<String> {
    let any = |v: &[String], x: &str| v.iter().any(|e| e == "*" || e == x);
    requests
        .iter()
        .filter_map(|(m, uri)| rbac_attributes(m, uri))
        .filter(|(verb, group, resource)| {
            !rules
                .iter()
                .any(|(g, r, v)| any(g, group) && any(r, resource) && any(v, verb))
        })
        .map(|(verb, group, resource)| format!("{verb} {group}/{resource}"))
        .collect()
}

/// deploy/rbac-verify.yaml grants every request a full run sends, and nothing the run does
/// not need goes unnoticed: without its `pods/proxy` rule the same requests are refused.
#[test]
fn every_request_of_a_full_run_is_granted_by_the_verify_rbac_file() {
    let (o, _, requests) = Sim::default().verify_recording("rbac");
    assert_eq!(o.decision, Decision::Accept, "{}", summary("rbac", &o));
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/rbac-verify.yaml"),
    )
    .unwrap();
    let rules = cluster_role_rules(&text, "locality-verify");
    assert!(!rules.is_empty());
    assert!(requests.len() > 100, "{} requests recorded", requests.len());
    assert_eq!(refused(&requests, &rules), Default::default());
    // The control: a rule less, and the run's probes are refused.
    let narrower: Vec<_> = rules
        .iter()
        .cloned()
        .map(|(g, r, v)| (g, r.into_iter().filter(|r| r != "pods/proxy").collect(), v))
        .collect();
    assert!(refused(&requests, &narrower).contains("get /pods/proxy"));
}
