//! `simulate-bench`: speed of `locality simulate` on a dump (issue 14, "Speed").
//!
//! Writes a kubectl-style `v1 List` of N workers over 3 zones with an agent DaemonSet
//! (`maxSurge 0`, `maxUnavailable 10%`, a tcpSocket readiness probe) behind an
//! `internalTrafficPolicy: Local` Service, and a client Deployment with 20 pods per node; then
//! times `locality simulate -f FILE --rollout daemonset/bench/agent -o json` (wall clock, one
//! run after a warm-up read of the file) at 500 and 5,000 nodes and reports the ratio against
//! the ≤ 12× target and the 5,000-node time against 10 s.
//!
//! Run: `cargo build --release -p locality -p locality-bench && target/release/simulate-bench`
//! (`LOCALITY_BIN` for another binary, `BENCH_OUT` for the output directory, arguments for
//! other node counts). See `bench/sim/README.md`.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};

const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];
const CLIENTS_PER_NODE: usize = 20;

fn node(i: usize) -> Value {
    let name = format!("node-{i:05}");
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": format!("node-uid-{i}"),
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": ZONES[i % 3]}},
        "spec": {"podCIDR": format!("10.{}.{}.0/24", 64 + i / 256, i % 256)},
        "status": {"allocatable": {"cpu": "16"},
            "addresses": [{"type": "InternalIP", "address": format!("172.{}.{}.{}", 16 + i / 65536, (i / 256) % 256, i % 256)}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.35.1"}}
    })
}

fn pod(ns: &str, name: &str, node: usize, labels: Value, owner: (&str, &str, &str), spec: &Value) -> Value {
    let mut spec = spec.clone();
    spec["nodeName"] = json!(format!("node-{node:05}"));
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": format!("pod-uid-{ns}-{name}"), "labels": labels,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner.0, "name": owner.1, "uid": owner.2, "controller": true}]},
        "spec": spec,
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    })
}

/// The dump of an `n`-node cluster.
fn dump(n: usize) -> Value {
    let mut items: Vec<Value> = (0..n).map(node).collect();
    items.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}));
    let agent_spec = json!({"containers": [{"name": "agent", "image": "agent:1",
        "ports": [{"name": "otlp", "containerPort": 4317, "protocol": "TCP"}],
        "readinessProbe": {"tcpSocket": {"port": "otlp"}, "periodSeconds": 5}}],
        "terminationGracePeriodSeconds": 30});
    items.push(json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "bench", "uid": "ds-agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": agent_spec},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}}}}));
    items.push(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "agent", "namespace": "bench", "uid": "svc-agent"},
        "spec": {"selector": {"app": "agent"}, "clusterIP": "10.96.0.50", "internalTrafficPolicy": "Local",
            "ports": [{"name": "otlp", "port": 4317, "targetPort": "otlp", "protocol": "TCP"}]}}));
    for i in 0..n {
        items.push(pod(
            "bench",
            &format!("agent-{i:05}"),
            i,
            json!({"app": "agent"}),
            ("DaemonSet", "agent", "ds-agent"),
            &agent_spec,
        ));
    }
    let client_spec = json!({"containers": [{"name": "app", "image": "app:1"}]});
    let replicas = n * CLIENTS_PER_NODE;
    items.push(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "app", "namespace": "bench", "uid": "deploy-app"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "app"}},
            "template": {"metadata": {"labels": {"app": "app"}}, "spec": client_spec}}}));
    items.push(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "app-5d9f", "namespace": "bench", "uid": "rs-app",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "app", "uid": "deploy-app", "controller": true}]},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "app", "pod-template-hash": "5d9f"}},
            "template": {"metadata": {"labels": {"app": "app", "pod-template-hash": "5d9f"}}, "spec": client_spec}}}));
    for i in 0..replicas {
        items.push(pod(
            "bench",
            &format!("app-5d9f-{i:07}"),
            i % n,
            json!({"app": "app", "pod-template-hash": "5d9f"}),
            ("ReplicaSet", "app-5d9f", "rs-app"),
            &client_spec,
        ));
    }
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

fn write_dump(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join(format!("simulate-{n}.json"));
    if !path.exists() {
        let f = std::fs::File::create(&path).expect("create dump");
        serde_json::to_writer(std::io::BufWriter::new(f), &dump(n)).expect("write dump");
    }
    path
}

/// One timed run; `(seconds, drop windows, settled)`.
fn run(bin: &Path, file: &Path) -> (f64, u64, bool) {
    let t = Instant::now();
    let out = Command::new(bin)
        .args(["simulate", "-f"])
        .arg(file)
        .args(["--rollout", "daemonset/bench/agent", "-o", "json", "-q"])
        .output()
        .expect("run locality");
    let secs = t.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let alt = &doc["alternatives"][0];
    (
        secs,
        alt["totals"]["nodesWithDropWindows"].as_u64().unwrap_or(0),
        alt["settled"].as_bool().unwrap_or(false),
    )
}

/// Median, minimum and maximum.
fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let mid = if !v.len().is_multiple_of(2) {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    (mid, v[0], v[v.len() - 1])
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::var_os("BENCH_OUT").map_or_else(|| root.join("bench/out"), PathBuf::from);
    std::fs::create_dir_all(&out).expect("output directory");
    let bin =
        std::env::var_os("LOCALITY_BIN").map_or_else(|| root.join("target/release/locality"), PathBuf::from);
    let sizes: Vec<usize> = {
        let a: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if a.is_empty() { vec![500, 5000] } else { a }
    };
    let mut report = String::from("# `locality simulate` benchmark\n\n");
    let _ = writeln!(
        report,
        "DaemonSet rollout (`maxSurge 0`, `maxUnavailable 10%`) behind ITP Local, {CLIENTS_PER_NODE} client pods per node; wall clock of the whole command (read, seed, warm-up, rollout, report), release build, {} CPUs.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5);
    let _ = writeln!(
        report,
        "Each size is run once to warm the page cache, then {runs} rounds in turn (every size once per round); seconds are medians, a ratio is the median of the rounds' ratios (each taken within one round), with its range.\n"
    );
    let _ = writeln!(
        report,
        "| nodes | pods | median seconds | min–max | nodes with drop windows | settled |\n|---:|---:|---:|---:|---:|---|"
    );
    let files: Vec<PathBuf> = sizes.iter().map(|&n| write_dump(&out, n)).collect();
    let mut last = Vec::new();
    for (&n, file) in sizes.iter().zip(&files) {
        eprintln!("simulate-bench: {n} nodes, warm-up…");
        last.push(run(&bin, file));
    }
    // rounds[r][i]: round r's seconds for size i.
    let mut rounds: Vec<Vec<f64>> = Vec::new();
    for r in 0..runs {
        eprintln!("simulate-bench: round {} of {runs}…", r + 1);
        let round = files
            .iter()
            .zip(&mut last)
            .map(|(file, l)| {
                *l = run(&bin, file);
                l.0
            })
            .collect();
        rounds.push(round);
    }
    for (i, &n) in sizes.iter().enumerate() {
        let (mid, lo, hi) = spread(rounds.iter().map(|r| r[i]).collect());
        let (_, windows, settled) = last[i];
        let _ = writeln!(
            report,
            "| {n} | {} | {mid:.2} | {lo:.2}–{hi:.2} | {windows} | {settled} |",
            n * (CLIENTS_PER_NODE + 1)
        );
    }
    if sizes.len() > 1 && sizes[sizes.len() - 1] > sizes[0] {
        let (a, b) = (sizes[0], sizes[sizes.len() - 1]);
        let (ratio, lo, hi) = spread(rounds.iter().map(|r| r[r.len() - 1] / r[0]).collect());
        let (tb, _, _) = spread(rounds.iter().map(|r| r[r.len() - 1]).collect());
        let _ = writeln!(
            report,
            "\n{b}/{a} nodes: {ratio:.1}× the time ({lo:.1}–{hi:.1}× over the rounds) for {:.0}× the nodes (target ≤ 12×); {b} nodes in {tb:.2} s (target < 10 s).",
            b as f64 / a as f64
        );
    }
    print!("{report}");
    let _ = std::fs::File::create(out.join("simulate-results.md"))
        .and_then(|mut f| f.write_all(report.as_bytes()));
}
