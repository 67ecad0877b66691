//! `verify` against the simulated API server (the same code a real cluster gets): a
//! conformant data plane is accepted; a data plane that ignores the Local policy is caught.

mod cases;
mod fault_matrix;
mod fault_sweep;
mod logs_channel;
mod planes;
mod rbac;
mod rollouts;
mod shapes;

use crate::support;

use std::time::Duration;

use locality_apiserver::ServeOptions;
use locality_sim::{DataPlaneProfile, SimConfig, Topology};
use locality_testkit::files::TempDir;
use locality_verify::Expected;
use locality_verify::Seen;
use locality_verify::{Decision, Status};
use locality_verify::{VerifyOptions, VerifyOutcome, verify};

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
    /// `--max-proxy-lag` (cluster time) when not the default.
    max_proxy_lag: Option<Duration>,
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
            max_nodes: Some(locality_verify::DEFAULT_MAX_NODES),
            restart_on_log_read: None,
            max_proxy_lag: None,
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
        // The tests check what verify asked (RBAC rules, the log channel).
        serve.record_requests = true;
        serve.faults.latency = self.api_latency;
        let running = locality_apiserver::serve(serve).unwrap();
        // The target says it is simulated (its version): detected, not told.
        let mut opts = VerifyOptions {
            only: self.only.clone(),
            max_nodes: self.max_nodes,
            ..support::options(running.kubeconfig_path(), dir.to_path_buf())
        };
        if let Some(lag) = self.max_proxy_lag {
            opts.max_proxy_lag = lag;
        }
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
            let key = locality_sim::ObjectKey::new(locality_sim::Kind::Pod, &ns, pod);
            assert!(
                running.with_engine(|e| e.restart_container(&key)),
                "{ns}/{pod} restarts"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// At most this many simulated clusters run at once in one test: each is a whole cluster at
/// `speed` 50, and a run waits in its cluster's clock, so an overloaded machine must not
/// leave a cluster too little CPU to keep its speed.
const AT_ONCE: usize = 5;

/// Runs every `(name, sim)`, [`AT_ONCE`] at a time (each its own server and runtime, on its
/// own thread), in order.
fn concurrently(runs: Vec<(String, Sim)>) -> Vec<(String, VerifyOutcome, TempDir)> {
    let mut out = Vec::new();
    let mut runs = runs.into_iter().peekable();
    while runs.peek().is_some() {
        let handles: Vec<_> = runs
            .by_ref()
            .take(AT_ONCE)
            .map(|(name, sim)| {
                std::thread::spawn(move || {
                    let (o, evidence) = sim.verify(&name);
                    (name, o, evidence)
                })
            })
            .collect();
        out.extend(handles.into_iter().map(|h| h.join().expect("a run panicked")));
    }
    out
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
    // Every try is drawn: one mark per try, or per column of a row, counting its tries.
    let tries: usize = o.cases.iter().map(|c| c.tries.len()).sum();
    let marks = html.matches("<rect ").count();
    assert!(marks > 0 && marks <= tries, "{marks} marks for {tries} tries");
    let drawn: usize = html
        .split("<rect ")
        .skip(1)
        .map(|r| {
            let title = r.split("<title>").nth(1).unwrap_or_default();
            match title.split_once(" tries from try ") {
                Some((n, _)) => n.parse::<usize>().unwrap(),
                None => {
                    assert!(title.starts_with("try "), "{title}");
                    1
                }
            }
        })
        .sum();
    assert_eq!(drawn, tries);
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
