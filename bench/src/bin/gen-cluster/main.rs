//! `gen-cluster`: writes a synthetic cluster as a kubectl-style `v1 List` JSON (what
//! `kubectl get ns,nodes,ds,deploy,rs,pods,svc,endpointslices -A -o json` prints),
//! deterministic for a seed. See `bench/README.md`.

mod objects;
mod plan;
mod rng;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use plan::{Config, Detail, Item, Plan};
use serde::Serialize;

const USAGE: &str = "\
usage: gen-cluster [--nodes N] [--zones Z] [--pods P] [--services S] [--seed X]
                   [--ref-nodes R] [--deployments D] [--detail typical|full]
                   [--indent K] -o FILE|-

Writes a kubectl-style `v1 List` JSON of Namespaces, Nodes, DaemonSets, Deployments,
ReplicaSets, Pods, Services and EndpointSlices. Defaults: --nodes 5000 --zones 3
--pods 100000 --services 10000 --seed 1. DaemonSet sizes come from --ref-nodes
(default: pods / 20), so changing --nodes alone keeps pods, Services and endpoints
identical and only moves pods between nodes. --deployments (default 150) is how many
Deployments, each with its ReplicaSet, are written as objects (all DaemonSets are).
--detail (default typical) sets how heavy objects are: typical is a small-pod cluster
(few env vars and volumes, managedFields on ~3% of objects); full has more env vars,
config volumes and probes and managedFields on every object but 90% of pods. It never
changes which objects exist, their names, states or endpoints. --indent (default 4,
as kubectl prints) is spaces per level; 0 writes compact JSON (as the API server sends).";

/// Command-line options that shape the output but not the plan.
struct Output {
    path: PathBuf,
    /// Spaces per nesting level; 0 writes compact JSON (what the API server returns).
    indent: usize,
}

fn parse_args() -> Result<(Config, Output), String> {
    let mut cfg = Config {
        nodes: 5000,
        zones: 3,
        pods: 100_000,
        services: 10_000,
        seed: 1,
        ref_nodes: 0,
        workload_objects: 150,
        detail: Detail::Typical,
    };
    let mut out = None;
    let mut indent = 4;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        let num = |v: String| -> Result<u64, String> {
            v.replace('_', "")
                .parse::<u64>()
                .map_err(|e| format!("{flag}: {v:?}: {e}"))
        };
        match flag.as_str() {
            "--nodes" => cfg.nodes = num(value()?)? as usize,
            "--zones" => cfg.zones = num(value()?)? as usize,
            "--pods" => cfg.pods = num(value()?)? as usize,
            "--services" => cfg.services = num(value()?)? as usize,
            "--seed" => cfg.seed = num(value()?)?,
            "--ref-nodes" => cfg.ref_nodes = num(value()?)? as usize,
            "--deployments" => cfg.workload_objects = num(value()?)? as usize,
            "--detail" => {
                cfg.detail = match value()?.as_str() {
                    "typical" => Detail::Typical,
                    "full" => Detail::Full,
                    v => return Err(format!("--detail: {v:?}: expected typical or full")),
                }
            }
            "--indent" => indent = num(value()?)? as usize,
            "-o" | "--output" => out = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument {a:?}\n\n{USAGE}")),
        }
    }
    if cfg.nodes == 0 || cfg.zones == 0 {
        return Err("--nodes and --zones must be at least 1".into());
    }
    if cfg.services > 0 && cfg.pods == 0 {
        return Err("--services needs --pods of at least 1".into());
    }
    if indent > 8 {
        return Err("--indent must be at most 8".into());
    }
    if cfg.ref_nodes == 0 {
        cfg.ref_nodes = (cfg.pods / 20).max(1);
    }
    let path = out.ok_or_else(|| format!("missing -o FILE\n\n{USAGE}"))?;
    Ok((cfg, Output { path, indent }))
}

/// Serialises one item as kubectl does (`indent` spaces per level, 4 by default),
/// indented by two more levels so that it sits inside `{"items": [ ... ]}`; with
/// `indent` 0, compact.
fn write_item(plan: &Plan, item: Item, indent: usize, buf: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    let value = plan.build(item);
    if indent == 0 {
        serde_json::to_writer(&mut *buf, &value).expect("serialising to memory");
        return;
    }
    scratch.clear();
    let unit = vec![b' '; indent];
    let mut ser = serde_json::Serializer::with_formatter(
        &mut *scratch,
        serde_json::ser::PrettyFormatter::with_indent(&unit),
    );
    value.serialize(&mut ser).expect("serialising to memory");
    let base = vec![b' '; 2 * indent];
    buf.extend_from_slice(&base);
    for line in scratch.split_inclusive(|&b| b == b'\n') {
        buf.extend_from_slice(line);
        if line.ends_with(b"\n") {
            buf.extend_from_slice(&base);
        }
    }
}

fn main() -> ExitCode {
    let (cfg, output) = match parse_args() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("gen-cluster: {e}");
            return ExitCode::from(2);
        }
    };
    let out = &output.path;
    let t0 = Instant::now();
    let plan = Plan::new(cfg.clone());
    let n_slices = plan.items.iter().filter(|i| matches!(i, Item::Slice(..))).count();
    let n_endpoints: usize = plan.endpoints.iter().flatten().map(Vec::len).sum();

    let sink: Box<dyn Write> = if out.as_os_str() == "-" {
        Box::new(io::stdout().lock())
    } else {
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            eprintln!("gen-cluster: {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
        match File::create(out) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("gen-cluster: {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
        }
    };
    let mut w = BufWriter::with_capacity(1 << 22, sink);
    match write_list(&plan, output.indent, &mut w).and_then(|b| w.flush().map(|()| b)) {
        Ok(bytes) => {
            let count = |f: fn(&Item) -> bool| plan.items.iter().filter(|i| f(i)).count();
            eprintln!(
                "gen-cluster: wrote {} ({:.1} MB) in {:.1} s: {} items: {} namespaces, {} nodes, {} daemonsets, \
                 {} deployments, {} replicasets, {} pods, {} services, {} endpointslices ({} endpoints)",
                out.display(),
                bytes as f64 / 1e6,
                t0.elapsed().as_secs_f64(),
                plan.items.len(),
                count(|i| matches!(i, Item::Namespace(_))),
                count(|i| matches!(i, Item::Node(_))),
                count(|i| matches!(i, Item::DaemonSet(_))),
                count(|i| matches!(i, Item::Deployment(_))),
                count(|i| matches!(i, Item::ReplicaSet(_))),
                count(|i| matches!(i, Item::Pod(_))),
                count(|i| matches!(i, Item::Service(_))),
                n_slices,
                n_endpoints,
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-cluster: {}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}

/// Writes the List; items are built and serialised in parallel batches and written in
/// order, so the output is identical whatever the thread count.
fn write_list(plan: &Plan, indent: usize, w: &mut impl Write) -> io::Result<u64> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 16);
    const BATCH: usize = 512;
    let mut written = 0u64;
    let i = " ".repeat(indent);
    let (head, sep, tail) = if indent == 0 {
        (
            r#"{"apiVersion":"v1","items":["#.to_string(),
            ",".to_string(),
            "],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}\n".to_string(),
        )
    } else {
        (
            format!("{{\n{i}\"apiVersion\": \"v1\",\n{i}\"items\": [\n"),
            ",\n".to_string(),
            format!(
                "\n{i}],\n{i}\"kind\": \"List\",\n{i}\"metadata\": {{\n{i}{i}\"resourceVersion\": \"\"\n{i}}}\n}}\n"
            ),
        )
    };
    let (head, sep, tail) = (head.as_bytes(), sep.as_bytes(), tail.as_bytes());
    w.write_all(head)?;
    written += head.len() as u64;
    let items = &plan.items;
    let mut start = 0;
    while start < items.len() {
        let round_end = (start + BATCH * threads).min(items.len());
        let round = &items[start..round_end];
        let bufs: Vec<Vec<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = round
                .chunks(BATCH)
                .enumerate()
                .map(|(k, chunk)| {
                    let first_index = start + k * BATCH;
                    s.spawn(move || {
                        let mut buf = Vec::with_capacity(chunk.len() * 4096);
                        let mut scratch = Vec::with_capacity(16384);
                        for (j, &item) in chunk.iter().enumerate() {
                            if first_index + j > 0 {
                                buf.extend_from_slice(sep);
                            }
                            write_item(plan, item, indent, &mut buf, &mut scratch);
                        }
                        buf
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("generator thread"))
                .collect()
        });
        for b in bufs {
            w.write_all(&b)?;
            written += b.len() as u64;
        }
        start = round_end;
    }
    w.write_all(tail)?;
    written += tail.len() as u64;
    Ok(written)
}
