//! `sim-bench`: speed of the **simulated** cluster (issue 4, "Speed (benchmarks)").
//!
//! One run measures, side by side:
//! 1. a full DaemonSet rollout of the `telemetry` topology, simulated as fast as possible;
//! 2. the same rollout on synthetic 3-zone clusters (agent DaemonSet behind an
//!    `internalTrafficPolicy: Local` Service) of 500 nodes and up, with the 5,000/500 cost
//!    ratio against the ≤ 12× target (extrapolated, and flagged so, when 5,000 would exceed
//!    the per-run cap);
//! 3. the simulated API server: LIST of 10,000 pods over HTTP, a watch delivering 1,000
//!    events, and `kubectl get pods -A` on 10,000 pods.
//!
//! Prints a markdown report and writes it to `bench/out/sim-results.md`.
//! Run: `cargo run --release -p locality-bench --bin sim-bench` (see `bench/sim/README.md`).

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use locality_apiserver::{Running, ServeOptions};
use locality_sim::NodeSpec;
use locality_sim::builders::{self, container_port, labels};
use locality_sim::{DataPlaneProfile, Engine, Kind, Object, ObjectKey, SimConfig, Topology};

/// Wall-time cap of one synthetic run (settle + rollout).
const CAP: Duration = Duration::from_secs(60);
const ISSUE_TARGET: f64 = 12.0;

fn main() {
    // `sim-bench synthetic N [N…]`: only the synthetic rollouts of those sizes (for profiling).
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("synthetic") {
        for n in args[1..].iter().filter_map(|a| a.parse::<usize>().ok()) {
            let r = synthetic_run(n);
            println!("{}", r.row("synthetic, 3 zones"));
        }
        return;
    }
    let started = Instant::now();
    let mut report = String::new();
    let _ = writeln!(report, "# locality sim benchmarks (simulated cluster)\n");
    let _ = writeln!(
        report,
        "Everything here is the **simulated** engine and API server; times are wall-clock on this \
         machine ({} CPUs), release build, one run each unless noted.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    // (1) telemetry topology.
    eprintln!("[1/3] telemetry DaemonSet rollout…");
    let tel = telemetry();
    // (2) synthetic clusters.
    eprintln!("[2/3] synthetic clusters…");
    let synth = synthetic();
    // (3) API server.
    eprintln!("[3/3] API server…");
    let api = apiserver();

    let _ = writeln!(report, "## Engine: DaemonSet rollout\n");
    let _ = writeln!(
        report,
        "| cluster | nodes | agents | settle wall | rollout wall | rollout simulated | events | note |"
    );
    let _ = writeln!(report, "|---|---:|---:|---:|---:|---:|---:|---|");
    let _ = writeln!(report, "{}", tel.row("telemetry (built-in)"));
    for r in &synth.runs {
        let _ = writeln!(report, "{}", r.row("synthetic, 3 zones"));
    }
    let _ = writeln!(report);
    let _ = writeln!(report, "{}", synth.summary);

    let _ = writeln!(report, "## API server (10,000 pods, clock frozen: speed 0)\n");
    let _ = writeln!(report, "| measurement | result | throughput | note |");
    let _ = writeln!(report, "|---|---:|---:|---|");
    for row in &api {
        let _ = writeln!(report, "{row}");
    }
    let _ = writeln!(
        report,
        "\nTotal benchmark wall time: {:.1} s.",
        started.elapsed().as_secs_f64()
    );

    println!("{report}");
    let out = std::env::var_os("BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("out"));
    let _ = std::fs::create_dir_all(&out);
    let path = out.join("sim-results.md");
    match std::fs::write(&path, &report) {
        Ok(()) => eprintln!("wrote {}", path.display()),
        Err(e) => eprintln!("cannot write {}: {e}", path.display()),
    }
}

// ---------------------------------------------------------------------------------------------
// Engine rollouts
// ---------------------------------------------------------------------------------------------

struct RolloutRun {
    nodes: usize,
    agents: usize,
    settle: Duration,
    rollout: Duration,
    virtual_ms: Option<u64>,
    events: usize,
    note: String,
}

impl RolloutRun {
    fn row(&self, cluster: &str) -> String {
        format!(
            "| {cluster} | {} | {} | {} | {} | {} | {} | {} |",
            self.nodes,
            self.agents,
            secs(self.settle),
            secs(self.rollout),
            self.virtual_ms.map_or("did not finish".into(), |ms| format!(
                "{:.0} s",
                ms as f64 / 1000.0
            )),
            self.events,
            self.note
        )
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format!("{s:.2} s")
    }
}

fn agent_pods<'a>(e: &'a Engine, ns: &'a str, name: &'a str) -> impl Iterator<Item = (bool, bool)> + 'a {
    e.store()
        .list_namespace(Kind::Pod, ns)
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(move |p| p.pod.meta.labels.get("app").map(String::as_str) == Some(name))
        .map(|p| (p.pod.meta.labels.contains_key("rev"), p.pod.ready))
}

/// Runs until `want` agent pods are Ready (virtual limit `until` ms, wall limit `deadline`).
fn settle(e: &mut Engine, ns: &str, name: &str, want: usize, until: u64, deadline: Instant) -> bool {
    let end = e.now() + until;
    while e.now() < end && Instant::now() < deadline {
        e.run_for(1_000);
        if agent_pods(e, ns, name).filter(|(_, ready)| *ready).count() >= want {
            return true;
        }
    }
    false
}

/// Updates the DaemonSet's template and runs until every agent pod is new and Ready; the
/// simulated duration, or `None` when a limit hit first.
fn rollout(e: &mut Engine, ns: &str, name: &str, until: u64, deadline: Instant) -> Option<u64> {
    let key = ObjectKey::new(Kind::DaemonSet, ns, name);
    let mut w = e.get(&key)?.as_workload()?.clone();
    w.workload.template_labels.insert("rev".into(), "2".into());
    e.update(Object::Workload(w), None).ok()?;
    let start = e.now();
    while e.now() < start + until && Instant::now() < deadline {
        e.run_for(1_000);
        if agent_pods(e, ns, name).all(|(new, ready)| new && ready) {
            return Some(e.now() - start);
        }
    }
    None
}

fn telemetry() -> RolloutRun {
    let t0 = Instant::now();
    let topo = Topology::builtin("telemetry").expect("built-in topology");
    let nodes = topo.nodes.len();
    let mut e = Engine::from_topology(&topo, SimConfig::default()).expect("engine");
    let deadline = t0 + CAP;
    let want = 24; // 27 workers, 3 tainted; control-plane nodes are tainted too.
    let settled = settle(&mut e, "telemetry", "agent", want, 600_000, deadline);
    let agents = agent_pods(&e, "telemetry", "agent").count();
    let settle_wall = t0.elapsed();
    let t1 = Instant::now();
    let virtual_ms = rollout(&mut e, "telemetry", "agent", 3_600_000, t1 + CAP);
    RolloutRun {
        nodes,
        agents,
        settle: settle_wall,
        rollout: t1.elapsed(),
        virtual_ms,
        events: e.store().resource_version() as usize,
        note: format!(
            "maxUnavailable 1 (topology's own){}",
            if settled { "" } else { "; did not settle" }
        ),
    }
}

/// A synthetic cluster: `n` workers over 3 zones, an agent DaemonSet (maxUnavailable 10%)
/// behind an `internalTrafficPolicy: Local` Service, built with the crate's builders.
fn synthetic_topology(n: usize) -> Topology {
    let zones = ["zone-a", "zone-b", "zone-c"];
    let nodes = (0..n)
        .map(|i| NodeSpec {
            node: builders::node(
                &format!("w-{i:05}"),
                Some(zones[i % 3]),
                8000,
                IpAddr::V4(Ipv4Addr::from(
                    u32::from(Ipv4Addr::new(172, 16, 0, 10)) + i as u32,
                )),
            ),
            profile: DataPlaneProfile::default(),
            kube_proxy_version: None,
        })
        .collect();
    let (agent, svc) = builders::telemetry_agent("bench", "10%");
    Topology {
        name: format!("synthetic-{n}"),
        nodes,
        objects: vec![builders::namespace("bench"), Object::Service(svc), agent],
    }
}

fn synthetic_run(n: usize) -> RolloutRun {
    let t0 = Instant::now();
    let deadline = t0 + CAP;
    let topo = synthetic_topology(n);
    let mut e = Engine::from_topology(&topo, SimConfig::default()).expect("engine");
    let settled = settle(&mut e, "bench", "agent", n, 3_600_000, deadline);
    let settle_wall = t0.elapsed();
    let t1 = Instant::now();
    let virtual_ms = if settled {
        rollout(&mut e, "bench", "agent", 36_000_000, deadline)
    } else {
        None
    };
    let mut note = "maxUnavailable 10%".to_string();
    if !settled {
        note.push_str("; did not settle within the cap");
    } else if virtual_ms.is_none() {
        note.push_str("; rollout hit the 60 s cap");
    }
    RolloutRun {
        nodes: n,
        agents: agent_pods(&e, "bench", "agent").count(),
        settle: settle_wall,
        rollout: t1.elapsed(),
        virtual_ms,
        events: e.store().resource_version() as usize,
        note,
    }
}

struct Synthetic {
    runs: Vec<RolloutRun>,
    summary: String,
}

/// Least-squares fit of `t = a · n^b` on log-log points.
fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    let k = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (n, t)| (sx + n.ln(), sy + t.ln()));
    let (mx, my) = (sx / k, sy / k);
    let (mut num, mut den) = (0.0, 0.0);
    for (n, t) in points {
        num += (n.ln() - mx) * (t.ln() - my);
        den += (n.ln() - mx).powi(2);
    }
    let b = num / den;
    ((my - b * mx).exp(), b)
}

fn synthetic() -> Synthetic {
    let mut runs = Vec::new();
    for n in [500usize, 1000, 2000] {
        eprintln!("  {n} nodes…");
        let r = synthetic_run(n);
        eprintln!(
            "    settle {:?}, rollout {:?}, {:?}",
            r.settle, r.rollout, r.virtual_ms
        );
        let done = r.virtual_ms.is_some();
        runs.push(r);
        if !done {
            break;
        }
    }
    let total = |r: &RolloutRun| (r.settle + r.rollout).as_secs_f64();
    // (nodes, rollout wall s, settle + rollout wall s) of the runs that finished.
    let finished: Vec<(usize, f64, f64)> = runs
        .iter()
        .filter(|r| r.virtual_ms.is_some())
        .map(|r| (r.nodes, r.rollout.as_secs_f64(), total(r)))
        .collect();
    let rollout_pts: Vec<(f64, f64)> = finished.iter().map(|f| (f.0 as f64, f.1)).collect();
    let total_pts: Vec<(f64, f64)> = finished.iter().map(|f| (f.0 as f64, f.2)).collect();
    let mut summary = String::new();
    if rollout_pts.len() < 2 {
        let _ = writeln!(
            summary,
            "Too few synthetic runs finished to fit a scaling curve.\n"
        );
        return Synthetic { runs, summary };
    }
    let (ra, rb) = fit(&rollout_pts);
    let (ta, tb) = fit(&total_pts);
    let pred_rollout = ra * 5000f64.powf(rb);
    let pred_total = ta * 5000f64.powf(tb);
    // Measure 5,000 for real when the fit says it fits the cap.
    let mut measured = None;
    if pred_total <= CAP.as_secs_f64() {
        eprintln!("  5000 nodes (predicted {pred_total:.1} s)…");
        let r = synthetic_run(5000);
        if r.virtual_ms.is_some() {
            measured = Some((r.settle + r.rollout).as_secs_f64());
        }
        runs.push(r);
    }
    let (_, base_rollout, base_total) = finished[0];
    let _ = writeln!(
        summary,
        "Scaling fit `t ≈ a·n^b` over {} finished synthetic runs ({}): rollout b = {rb:.2}, \
         settle+rollout b = {tb:.2}.\n",
        finished.len(),
        finished
            .iter()
            .map(|f| f.0.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        summary,
        "| 5,000 vs 500 nodes | 5,000 figure | ratio | target | verdict |"
    );
    let _ = writeln!(summary, "|---|---:|---:|---:|---|");
    let verdict = |ratio: f64| {
        if ratio <= ISSUE_TARGET {
            "meets ≤ 12×"
        } else {
            "**misses** ≤ 12×"
        }
    };
    match (measured, runs.last()) {
        (Some(t5), Some(r5)) => {
            let rr = r5.rollout.as_secs_f64() / base_rollout;
            let _ = writeln!(
                summary,
                "| rollout wall (measured) | {} | {rr:.1}× | {ISSUE_TARGET}× | {} |",
                secs(r5.rollout),
                verdict(rr)
            );
            let tr = t5 / base_total;
            let _ = writeln!(
                summary,
                "| settle + rollout wall (measured) | {t5:.2} s | {tr:.1}× | {ISSUE_TARGET}× | {} |",
                verdict(tr)
            );
        }
        _ => {
            let rr = pred_rollout / base_rollout;
            let tr = pred_total / base_total;
            let _ = writeln!(
                summary,
                "| rollout wall (**extrapolated**, not measured) | {pred_rollout:.1} s | {rr:.1}× | \
                 {ISSUE_TARGET}× | {} |",
                verdict(rr)
            );
            let _ = writeln!(
                summary,
                "| settle + rollout wall (**extrapolated**, not measured) | {pred_total:.1} s | {tr:.1}× | \
                 {ISSUE_TARGET}× | {} |",
                verdict(tr)
            );
            let _ = writeln!(
                summary,
                "\n5,000 nodes was not run: the fit predicts {pred_total:.0} s, over the {} s per-run cap. \
                 The extrapolated figures assume the fitted power law holds up to 5,000 nodes; \
                 an exponent b ≈ 2 means quadratic (10× nodes ≈ 100× time).",
                CAP.as_secs()
            );
        }
    }
    let _ = writeln!(summary);
    Synthetic { runs, summary }
}

// ---------------------------------------------------------------------------------------------
// API server
// ---------------------------------------------------------------------------------------------

const API_PODS: usize = 10_000;
const WATCH_EVENTS: usize = 1_000;

fn request(port: u16, path: &str, accept: &str) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let req =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: {accept}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).expect("write");
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let code = std::str::from_utf8(&buf[..buf.len().min(16)])
        .ok()
        .and_then(|t| t.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body_at = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(buf.len(), |i| i + 4);
    (code, buf.split_off(body_at))
}

fn bench_pod(ns: &str, i: usize) -> Object {
    builders::pod(
        ns,
        &format!("pod-{i:05}"),
        labels(&[("app", "bench"), ("shard", &(i % 10).to_string())]),
        vec![container_port("http", 8080)],
        None,
        builders::netexec_behaviour(8080),
    )
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn apiserver() -> Vec<String> {
    let mut rows = Vec::new();
    let topo = Topology::builtin("three-zones").expect("built-in topology");
    let mut opts = ServeOptions::from_topology(&topo, SimConfig::default()).expect("engine");
    opts.engine.run_for(10_000);
    let t0 = Instant::now();
    opts.engine
        .create(builders::namespace("bench"))
        .expect("namespace");
    for i in 0..API_PODS {
        opts.engine.create(bench_pod("bench", i)).expect("pod");
    }
    let create_wall = t0.elapsed();
    opts.speed = 0.0;
    let dir = std::env::temp_dir().join(format!("locality-sim-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    opts.kubeconfig_out = Some(dir.join("kubeconfig"));
    let r = locality_apiserver::serve(opts).expect("serve");
    let port = r.port();

    // LIST 10,000 pods (all namespaces: 10,000 bench pods + none elsewhere), JSON.
    let (code, body) = request(port, "/api/v1/namespaces/bench/pods", "application/json");
    let items = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["items"].as_array().map(Vec::len))
        .unwrap_or(0);
    let bytes = body.len();
    let runs = 5;
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let _ = request(port, "/api/v1/namespaces/bench/pods", "application/json");
            t.elapsed()
        })
        .collect();
    let best = *times.iter().min().expect("runs");
    let med = median(&mut times);
    rows.push(format!(
        "| LIST 10,000 pods, JSON (`GET /api/v1/namespaces/bench/pods`) | median {} (best {}) | {:.0} pods/s, \
         {:.0} MB/s | HTTP {code}, {items} items, {:.1} MB, median of {runs} after 1 warm-up; Pending \
         (unscheduled) pods created in the engine directly ({} to create) |",
        secs(med),
        secs(best),
        items as f64 / med.as_secs_f64(),
        bytes as f64 / 1e6 / med.as_secs_f64(),
        bytes as f64 / 1e6,
        secs(create_wall)
    ));
    // The same as a Table (what kubectl asks for), one request.
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let t = Instant::now();
    let (code, body) = request(port, "/api/v1/pods", table);
    let d = t.elapsed();
    rows.push(format!(
        "| LIST all pods as a Table (`GET /api/v1/pods`, no limit) | {} | {:.0} pods/s | HTTP {code}, {:.1} MB |",
        secs(d),
        API_PODS as f64 / d.as_secs_f64(),
        body.len() as f64 / 1e6
    ));
    // Paged, as kubectl would (limit=500).
    let t = Instant::now();
    let mut token = String::new();
    let mut pages = 0;
    let mut seen = 0;
    loop {
        let (_, body) = request(
            port,
            &format!("/api/v1/namespaces/bench/pods?limit=500&continue={token}"),
            "application/json",
        );
        pages += 1;
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        seen += v["items"].as_array().map_or(0, Vec::len);
        match v["metadata"]["continue"].as_str() {
            Some(c) if !c.is_empty() && pages < 1000 => token = c.to_string(),
            _ => break,
        }
    }
    let d = t.elapsed();
    rows.push(format!(
        "| LIST 10,000 pods in pages of 500 (`limit`/`continue`) | {} | {:.0} pods/s | {pages} pages, {seen} items |",
        secs(d),
        seen as f64 / d.as_secs_f64()
    ));

    rows.push(kubectl_row(&r));
    rows.push(watch_row(&r));
    r.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
    rows
}

/// Opens a watch on a fresh namespace, then creates 1,000 pods in the engine one at a time
/// (each change wakes the watch); the time until the client has read all 1,000 ADDED events.
fn watch_row(r: &Running) -> String {
    r.with_engine(|e| e.create(builders::namespace("watch")).map(|_| ()))
        .expect("namespace");
    let rv = r.with_engine(|e| e.store().resource_version());
    let port = r.port();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        let req = format!(
            "GET /api/v1/namespaces/watch/pods?watch=1&resourceVersion={rv}&timeoutSeconds=120 HTTP/1.1\r\n\
             Host: x\r\nConnection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).expect("write");
        let needle = b"\"type\":\"ADDED\"";
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let mut count = 0;
        let mut scanned = 0;
        let mut headers = false;
        loop {
            let n = match s.read(&mut chunk) {
                Ok(0) | Err(_) => return (count, None),
                Ok(n) => n,
            };
            buf.extend_from_slice(&chunk[..n]);
            if !headers && buf.windows(4).any(|w| w == b"\r\n\r\n") {
                headers = true;
                let _ = ready_tx.send(());
            }
            while let Some(i) = buf[scanned..].windows(needle.len()).position(|w| w == needle) {
                count += 1;
                scanned += i + needle.len();
            }
            scanned = scanned.max(buf.len().saturating_sub(needle.len()));
            if count >= WATCH_EVENTS {
                return (count, Some(Instant::now()));
            }
        }
    });
    // Wait for the response headers (the watch is registered), at most 5 s.
    let _ = ready_rx.recv_timeout(Duration::from_secs(5));
    let t0 = Instant::now();
    for i in 0..WATCH_EVENTS {
        r.with_engine(|e| e.create(bench_pod("watch", i)).map(|_| ()))
            .expect("pod");
    }
    let produced = t0.elapsed();
    let (count, done) = reader.join().unwrap_or((0, None));
    match done {
        Some(at) => {
            let d = at.duration_since(t0);
            format!(
                "| Watch delivering 1,000 events (ADDED, live) | {} to receive all | {:.0} events/s | \
                 1,000 pod creates applied one by one to the engine while the watch is open ({} to apply); \
                 time from the first create to the 1,000th event read by the client |",
                secs(d),
                count as f64 / d.as_secs_f64(),
                secs(produced)
            )
        }
        None => format!("| Watch delivering 1,000 events | **incomplete**: {count} received | – | |"),
    }
}

fn kubectl_row(r: &Running) -> String {
    let have = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        return "| `kubectl get pods -A` on 10,000 pods | skipped | – | kubectl is not on PATH |".into();
    }
    let run = || {
        let t = Instant::now();
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(r.kubeconfig_path())
            .args(["get", "pods", "-A", "--no-headers"])
            .env_remove("KUBECONFIG")
            .output()
            .expect("run kubectl");
        let lines = String::from_utf8_lossy(&out.stdout).lines().count();
        (t.elapsed(), out.status.success(), lines)
    };
    let _ = run(); // warm-up (discovery cache)
    let mut times = Vec::new();
    let mut last = (false, 0);
    for _ in 0..3 {
        let (d, ok, lines) = run();
        times.push(d);
        last = (ok, lines);
    }
    let med = median(&mut times);
    format!(
        "| `kubectl get pods -A` on 10,000 pods | median {} (best {}) | {:.0} pods/s | exit {}, {} rows; \
         median of 3 after 1 warm-up; kubectl pages by 500 (default `--chunk-size`) |",
        secs(med),
        secs(times[0]),
        last.1 as f64 / med.as_secs_f64(),
        if last.0 { "0" } else { "non-zero" },
        last.1
    )
}
