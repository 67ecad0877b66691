//! `simulate` agrees with what `verify`'s rollout cases measure on the simulated cluster
//! (issue #14, Correctness): the same pod replacement, the same topology and timings, the same
//! drop window on N1.
//!
//! `verify --only E-a,E-b,H3` runs in-process against the simulated API server (four-nodes),
//! so the store's events give each case's instants exactly: the old backend's deletion, its
//! endpoint ceasing to serve (Ready false, or the pod gone with `verify`'s grace-0 delete),
//! the new backend's creation and readiness. The drop window is what N1's probe loop saw: its
//! failed tries, each edge bracketed by the last try on one side and the first on the other.
//! Then `locality simulate --sim=four-nodes` gets the case's own manifests from the evidence
//! (`--apply`: Namespace, Service, both backends, the probe loop) and the same replacement
//! (`--replace` with the new backend's manifest under the old name, as `kubectl replace
//! --force` names what it replaces; `--grace-period` as long as `verify` let the old backend
//! serve), with the simulated cluster's own timings (`--pull 1s --ready-after 0s
//! --proxy-sync 1s`), and reports N1's window and the pod's events.
//!
//! The two runs have different clocks, readiness-probe phases and delays between `verify`'s
//! calls, so each window is placed against its own run's events: its start after the old
//! endpoint stopped serving, its end after the new one became Ready (the EndpointSlice
//! controller and kube-proxy's programming). Those offsets must agree within one probe
//! interval of the probe loop ([`locality_verify::logs::ProbeLoop::new`]: 100 ms) around
//! `verify`'s bracket. A bracket is as narrow as the tries around the edge: about one interval
//! where the loop is answered, about one timeout (500 ms) where its tries time out, as at the
//! end of a window.
//!
//! Both sides program every change on its own, one sync after it: the simulated cluster is
//! given kube-proxy's minimum sync period 0, and `simulate` too (`--proxy-min-sync 0s`; both
//! default to upstream's 1 s). With 1 s, a change that follows the previous sync by
//! less than a second waits for the next one, and when the previous sync happened depends on
//! the readiness probe's phase against the deletion, which the two runs do not share: an edge
//! then moves by up to a second on either side (the rule itself is the same on both sides:
//! `locality_sim`'s `proxies` and `whatif::observe::History`).
//!
//! Seen red: `simulate --kube-proxy-version 1.25` (no serving-terminating fallback) opens
//! E-a's window at the deletion, 13 s before the old endpoint stopped; programming 250 ms
//! later than the simulated kube-proxy moves E-b's start out of its bracket; a seed that
//! ignores agnhost's `--delay-shutdown` ends every old backend at SIGTERM (and gives H3 a
//! window `verify` did not see).

use std::path::{Path, PathBuf};
use std::time::Duration;

use locality_apiserver::ServeOptions;
use locality_sim::EventType;
use locality_sim::{Kind, SimConfig, Topology};
use locality_testkit::files::TempDir;
use locality_verify::{Seen, VerifyOptions, VerifyOutcome};
use serde_json::Value;

/// The probe loop's interval (ms): the tolerance.
fn probe_interval_ms() -> u64 {
    locality_verify::logs::ProbeLoop::new("c", "n", "t:80").interval_ms
}

/// One side's instants (virtual ms) and N1's drop window.
#[derive(Debug, Default, Clone)]
struct Side {
    deleted: u64,
    /// The old endpoint stopped serving: Ready false, or the pod gone.
    stopped: u64,
    gone: u64,
    created: u64,
    ready: u64,
    /// The window's start and end, each as a bracket (earliest, latest) on this side's clock;
    /// `None`: no window.
    window: Option<((u64, u64), (u64, u64))>,
}

/// One pod event of the simulated cluster's store.
struct PodRow {
    at: u64,
    kind: EventType,
    name: String,
    ready: bool,
    deleting: bool,
}

/// `verify` on the simulated cluster, in-process; its outcome and the store's pod events.
fn run_verify(dir: &Path) -> (VerifyOutcome, Vec<PodRow>) {
    let topology = Topology::builtin("four-nodes").unwrap();
    let config = SimConfig {
        event_history: 10_000_000,
        // As `simulate` is told (`--proxy-min-sync 0s`): see the module docs.
        proxy_min_sync_period_ms: 0,
        ..SimConfig::default()
    };
    let mut serve = ServeOptions::from_topology(&topology, config).unwrap();
    serve.speed = 50.0;
    let running = locality_apiserver::serve(serve).unwrap();
    let opts = VerifyOptions {
        live: locality_live::LiveOptions {
            kubeconfig: Some(running.kubeconfig_path().to_path_buf()),
            ..locality_live::LiveOptions::default()
        },
        only: ["E-a", "E-b", "H3"].map(String::from).to_vec(),
        evidence: dir.join("evidence"),
        keep: false,
        run_id: locality_verify::new_run_id(),
        simulated: true,
        owner: "test".into(),
        pod_ready_timeout: Duration::from_secs(60),
        settle: Duration::from_secs(1),
        proxy_lag_timeout: Duration::from_secs(30),
        max_proxy_lag: Duration::from_secs(5),
        proxy_mode: None,
        max_nodes: None,
        request_timeout: locality_verify::cluster::DEFAULT_REQUEST_TIMEOUT,
        external_cases: false,
        images: Default::default(),
        target_args: Vec::new(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = rt.block_on(locality_verify::verify(&opts)).expect("verify runs");
    let events = running.with_engine(|e| {
        e.events_since(0)
            .expect("the whole event log")
            .iter()
            .filter(|ev| ev.key.kind == Kind::Pod)
            .filter_map(|ev| {
                let p = ev.object.as_pod()?;
                Some(PodRow {
                    at: ev.time,
                    kind: ev.event_type,
                    name: p.pod.meta.name.clone(),
                    ready: p.pod.ready,
                    deleting: p.pod.meta.deletion_timestamp.is_some(),
                })
            })
            .collect()
    });
    (outcome, events)
}

/// What `verify` measured for one case (`group`: its objects' prefix).
fn verify_side(outcome: &VerifyOutcome, id: &str, group: &str, events: &[PodRow]) -> Side {
    let case = outcome.cases.iter().find(|c| c.id == id).unwrap();
    assert_eq!(case.status, locality_verify::Status::Pass, "{id}: {}", case.why);
    let (old, new) = (format!("{group}-be-n1"), format!("{group}-be-n1-new"));
    let first = |f: &dyn Fn(&PodRow) -> bool| {
        events
            .iter()
            .find(|e| f(e))
            .map(|e| e.at)
            .unwrap_or_else(|| panic!("{id}: an event missing"))
    };
    let deleted = first(&|e| e.name == old && e.deleting);
    let gone = first(&|e| e.name == old && e.kind == EventType::Deleted);
    let not_ready = events
        .iter()
        .find(|e| e.name == old && e.deleting && !e.ready && e.kind != EventType::Deleted)
        .map_or(gone, |e| e.at);
    let created = first(&|e| e.name == new && e.kind == EventType::Added);
    let ready = first(&|e| e.name == new && e.ready);
    // The tries on the virtual clock, in order.
    let epoch = locality_sim::time::EPOCH_UNIX_SECONDS * 1000;
    let mut tries: Vec<(u64, bool)> = case
        .tries
        .iter()
        .map(|t| {
            let failed = matches!(t.seen, Seen::Timeout | Seen::Refused | Seen::Other);
            (u64::try_from(t.sent_ms).unwrap() - epoch, failed)
        })
        .collect();
    tries.sort();
    let failed: Vec<usize> = (0..tries.len()).filter(|&i| tries[i].1).collect();
    let window = failed.first().zip(failed.last()).map(|(&a, &b)| {
        assert!(
            tries[a..=b].iter().all(|t| t.1),
            "{id}: one drop window, no answer within it: {:?}",
            &tries[a..=b]
        );
        let before = a.checked_sub(1).map_or(0, |i| tries[i].0);
        let after = tries.get(b + 1).map_or(u64::MAX, |t| t.0);
        ((before, tries[a].0), (tries[b].0, after))
    });
    Side {
        deleted,
        stopped: not_ready.min(gone),
        gone,
        created,
        ready,
        window,
    }
}

/// `locality simulate` of the same replacement on the case's own manifests.
fn simulate_side(dir: &Path, id: &str, group: &str, v: &Side) -> (Side, Value) {
    let fixture = dir.join("evidence/02-fixture");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&fixture)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let named = |f: &PathBuf, s: &str| f.file_name().unwrap().to_string_lossy().contains(s);
    let (old, new) = (format!("{group}-be-n1"), format!("{group}-be-n1-new"));
    let input = dir.join(format!("{group}-input.yaml"));
    let mut docs = Vec::new();
    for f in &files {
        let keep = named(f, "-namespace-")
            || named(f, &format!("-service-{group}"))
            || named(f, &format!("-pod-{old}.yaml"))
            || named(f, &format!("-pod-{group}-be-n2.yaml"))
            || named(f, &format!("-pod-{group}-loop-n1.yaml"));
        if keep {
            docs.push(std::fs::read_to_string(f).unwrap());
        }
    }
    std::fs::write(&input, docs.join("\n---\n")).unwrap();
    // `kubectl replace --force` names the pod it replaces: the new backend under the old name.
    let new_file = files
        .iter()
        .find(|f| named(f, &format!("-pod-{new}.yaml")))
        .unwrap_or_else(|| panic!("{id}: no manifest of {new} in {}", fixture.display()));
    let replacement = dir.join(format!("{group}-replacement.yaml"));
    std::fs::write(
        &replacement,
        std::fs::read_to_string(new_file)
            .unwrap()
            .replace(&format!("name: {new}"), &format!("name: {old}")),
    )
    .unwrap();
    // As long as `verify` let the old backend serve (whole seconds: a grace period).
    let grace = (v.gone - v.deleted).div_ceil(1000).to_string();
    let out = super::simulate::run(&[
        "simulate",
        "--sim=four-nodes",
        "--apply",
        input.to_str().unwrap(),
        "--replace",
        replacement.to_str().unwrap(),
        "--grace-period",
        &grace,
        "--pull",
        "1s",
        "--ready-after",
        "0s",
        "--proxy-sync",
        "1s",
        "--proxy-min-sync",
        "0s",
        "--step-ms",
        "10",
        "-o",
        "json",
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let report: Value = serde_json::from_slice(&out).unwrap();
    let a = &report["alternatives"][0];
    let at = |event: &str| -> u64 {
        let e = a["podEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"] == event)
            .unwrap_or_else(|| panic!("{id}: simulate reported no {event}: {}", a["podEvents"]));
        (e["atSeconds"].as_f64().unwrap() * 1000.0).round() as u64
    };
    let n1 = a["servicePorts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["nodes"].as_array().unwrap())
        .filter(|n| n["name"] == "node-a")
        .flat_map(|n| n["windows"].as_array().unwrap())
        .map(|w| {
            let s = |k: &str| (w[k].as_f64().unwrap() * 1000.0).round() as u64;
            (
                (s("startSeconds"), s("startSeconds")),
                (s("endSeconds"), s("endSeconds")),
            )
        })
        .collect::<Vec<_>>();
    assert!(n1.len() <= 1, "{id}: one window at most on N1: {n1:?}");
    let gone = at("gone");
    let side = Side {
        deleted: at("deleted"),
        stopped: a["podEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"] == "notReady")
            .map_or(gone, |e| {
                (e["atSeconds"].as_f64().unwrap() * 1000.0).round() as u64
            })
            .min(gone),
        gone,
        created: at("created"),
        ready: at("ready"),
        window: n1.first().copied(),
    };
    (side, report)
}

/// The window's edges after the old endpoint stopped and after the new one was Ready (ms,
/// as brackets), for comparison across the two clocks.
fn offsets(s: &Side) -> Option<((i64, i64), (i64, i64))> {
    let rel = |(a, b): (u64, u64), t: u64| (a as i64 - t as i64, b.min(u64::MAX / 2) as i64 - t as i64);
    s.window
        .map(|(start, end)| (rel(start, s.stopped), rel(end, s.ready)))
}

/// The two brackets overlap once widened by `tol`.
fn agree((a0, a1): (i64, i64), (b0, b1): (i64, i64), tol: i64) -> bool {
    a0 - tol <= b1 && b0 - tol <= a1
}

#[test]
fn simulate_agrees_with_verify_on_the_rollout_cases() {
    let tmp = TempDir::new("simulate-agreement");
    let (outcome, events) = run_verify(tmp.path());
    let tol = probe_interval_ms() as i64;
    let mut table = Vec::new();
    let mut wrong = Vec::new();
    for (id, group) in [("E-a", "ea"), ("E-b", "eb"), ("H3", "h3")] {
        let v = verify_side(&outcome, id, group, &events);
        let (s, report) = simulate_side(tmp.path(), id, group, &v);
        table.push(format!(
            "{id}: verify {v:?}\n       offsets {:?}\n     simulate {s:?}\n       offsets {:?}",
            offsets(&v),
            offsets(&s)
        ));
        // The same order of events on both sides.
        for side in [&v, &s] {
            if !(side.deleted <= side.stopped
                && side.stopped <= side.gone
                && side.gone <= side.created
                && side.created < side.ready)
            {
                wrong.push(format!("{id}: events out of order: {side:?}"));
            }
        }
        // The old backend served as long on both sides: `verify` deleted it with grace 0 after
        // `H` ms; `simulate` was given `--grace-period` ⌈H⌉ s (its kubelet then removes the
        // pod, `SimConfig::kubelet_cleanup_delay_ms` later).
        let held = v.gone - v.deleted;
        let cleanup = SimConfig::default().kubelet_cleanup_delay_ms;
        if !(held..=held.div_ceil(1000) * 1000 + cleanup).contains(&(s.gone - s.deleted)) {
            wrong.push(format!("{id}: the old backend was not deleted as long after"));
        }
        match (offsets(&v), offsets(&s)) {
            (None, None) => {}
            (Some((vs, ve)), Some((ss, se))) => {
                if !agree(vs, ss, tol) {
                    wrong.push(format!("{id}: the window's start after the old endpoint stopped"));
                }
                if !agree(ve, se, tol) {
                    wrong.push(format!("{id}: the window's end after the new endpoint was Ready"));
                }
            }
            _ => wrong.push(format!("{id}: a window on one side only; simulate: {report}")),
        }
    }
    eprintln!("{}", table.join("\n"));
    assert!(wrong.is_empty(), "{}\n{}", wrong.join("\n"), table.join("\n"));
}
