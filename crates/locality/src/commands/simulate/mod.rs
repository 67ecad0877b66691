//! `locality simulate`: what-if on the user's own cluster, **simulated** (docs/simulate.md).
//!
//! The state comes from the same place as every command's ([`crate::source::load`]: `-f`,
//! live, or `--sim`); [`locality_sim::seed`] builds a simulated cluster from it; each
//! alternative (`changes`) runs on a fresh copy with [`locality_sim::whatif::run`]; the
//! results become one `SimulationReport` (`document`) that `locality_report::simulate`
//! renders.

mod changes;
mod document;

use std::io::Write;

use locality_model::matrix::MatrixConfig;
use locality_model::objects::ClusterState;
use locality_report::header::{Count, Summary};
use locality_report::simulate::{
    API_VERSION, Alternative, Assumption, KIND, NOTICE, Settings, SimulationReport, json, markdown, svg, text,
};
use locality_sim::whatif::{RunOptions, run as what_if, services_in_scope};
use locality_sim::{Engine, Kind, ObjectKey, SimConfig};
use locality_sim::{SeedOptions, seed};

use crate::cli::{Override, SimulateArgs, SimulateOutput};
use crate::error::CliError;
use crate::profile::Profile;
use crate::progress::Progress;
use crate::ui::Ui;

/// Virtual ms the seeded cluster runs before anything is changed: every pod started and
/// probed ready (image pull, start-up, the slowest readiness probe), then available (the
/// longest `minReadySeconds` of a workload: a pod the input shows Ready has been so long
/// enough, else a rolling update would take every old pod for unavailable and replace them
/// all at once).
fn warm_up_ms(state: &ClusterState, options: &SeedOptions) -> u64 {
    let min_ready = state
        .workloads
        .iter()
        .map(|w| u64::from(w.min_ready_seconds) * 1000)
        .max()
        .unwrap_or(0);
    let probe = state
        .pods
        .iter()
        .filter_map(|p| p.spec.lifecycle.readiness_probe.as_ref())
        .map(|p| {
            let s = |v: Option<i64>, d: i64| u64::try_from(v.unwrap_or(d).max(0)).unwrap_or(0);
            (s(p.initial_delay_seconds, 0) + 2 * s(p.period_seconds, 10).max(1)) * 1000
        })
        .max()
        .unwrap_or(0);
    (options.pull_ms + options.ready_after_ms + probe + 10_000).min(900_000) + min_ready.min(3_600_000)
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What every alternative's simulated cluster is seeded from: the input's state, the simulated
/// cluster's configuration and the timings the input does not state.
struct Seeding<'a> {
    state: &'a ClusterState,
    sim: &'a SimConfig,
    options: &'a SeedOptions,
}

/// A seeded, warmed-up simulated cluster.
fn seeded(seeding: &Seeding<'_>, profile: &mut Profile) -> Result<(Engine, Vec<Assumption>), CliError> {
    let Seeding { state, sim, options } = *seeding;
    let s = seed(state, sim.clone(), options)
        .map_err(|e| CliError::usage(format!("seeding the simulation: {e}")))?;
    profile.phase("seed");
    let mut engine = s.engine;
    engine.run_until(warm_up_ms(state, options));
    profile.phase("warm-up");
    let assumptions = s
        .assumptions
        .into_iter()
        .map(|a| Assumption {
            subject: a.subject,
            value: a.value,
            reason: a.reason,
        })
        .collect();
    Ok((engine, assumptions))
}

/// Runs one scenario on a fresh seeded cluster.
fn run_scenario(
    scenario: &changes::Scenario,
    seeding: &Seeding<'_>,
    matrix: &MatrixConfig,
    run_options: &RunOptions,
    progress: &Progress,
    profile: &mut Profile,
) -> Result<(Alternative, Vec<Assumption>), CliError> {
    let (mut engine, assumptions) = seeded(seeding, profile)?;
    let docs = |engine: &Engine, list: &[locality_sim::whatif::Change]| {
        list.iter()
            .map(|c| document::change_doc(engine, c))
            .collect::<Result<Vec<_>, String>>()
            .map_err(CliError::usage)
    };
    let prepared = docs(&engine, &scenario.prepared)?;
    for c in &scenario.prepared {
        locality_sim::whatif::apply(&mut engine, c).map_err(|e| CliError::usage(e.to_string()))?;
    }
    if !scenario.prepared.is_empty() {
        // Let the controllers and every kube-proxy take the prepared changes in.
        engine.run_for(30_000);
    }
    let measured = docs(&engine, &scenario.measured)?;
    let name = scenario.name.clone();
    let r = what_if(&mut engine, &scenario.measured, matrix, run_options, &mut |now| {
        if now % 10_000 < run_options.step_ms.max(1) {
            progress.set(format!("simulating [{name}]: {} s of virtual time", now / 1000));
        }
    })
    .map_err(|e| CliError::usage(e.to_string()))?;
    profile.phase("what-if");
    // Freeing a 100,000-pod simulated cluster allocation by allocation takes a second or two:
    // let another thread do it while the report is written (or the process exits).
    std::thread::spawn(move || drop(engine));
    Ok((
        document::alternative(&scenario.name, prepared, measured, &r),
        assumptions,
    ))
}

/// The `--apply` manifests as one change: read as `-f` reads files (errors name file:line),
/// defaulted by the model's admission as the API server defaults what `kubectl apply` sends
/// (objects without a namespace land in the kubeconfig context's, else `default`).
fn applied(
    args: &SimulateArgs,
    options: &SeedOptions,
    ui: &Ui,
) -> Result<Option<locality_sim::whatif::Change>, CliError> {
    if args.apply.is_empty() {
        return Ok(None);
    }
    let loaded = load_manifests(&args.apply, args, ui)?;
    Ok(Some(locality_sim::whatif::Change::Apply {
        files: loaded.files.clone(),
        objects: locality_sim::whatif::apply::objects_of(&loaded.state, options),
    }))
}

/// Manifests of `--apply` or `--replace`, read as applied (in the kubeconfig context's
/// namespace, else `default`, when they name none).
fn load_manifests(
    paths: &[std::path::PathBuf],
    args: &SimulateArgs,
    ui: &Ui,
) -> Result<locality_ingest::Loaded, CliError> {
    let loaded = crate::inputs::load_as_applied(
        paths,
        args.model.max_input_size,
        locality_ingest::Pods::Decode,
        None,
    )?;
    crate::inputs::warn_about(&loaded, ui);
    Ok(loaded)
}

/// `--replace FILE`: its one Pod, read and defaulted as `--apply` reads a manifest.
fn replacement(
    args: &SimulateArgs,
    options: &SeedOptions,
    ui: &Ui,
) -> Result<Option<(String, locality_sim::Object)>, CliError> {
    let Some(path) = &args.replace else {
        return Ok(None);
    };
    let loaded = load_manifests(std::slice::from_ref(path), args, ui)?;
    let file = path.display().to_string();
    let mut objects = locality_sim::whatif::apply::objects_of(&loaded.state, options);
    objects.retain(|o| !matches!(o, locality_sim::Object::Namespace(_)));
    match (objects.pop(), objects.is_empty()) {
        (Some(o @ locality_sim::Object::Pod(_)), true) => Ok(Some((file, o))),
        _ => Err(CliError::usage(format!(
            "--replace {file}: expected exactly one Pod (kubectl replace --force of a pod)"
        ))),
    }
}

/// Runs `simulate`.
pub fn run(args: &SimulateArgs, ui: &Ui, out: &mut dyn Write) -> Result<(), CliError> {
    // Flags are checked before any input is read.
    changes::scenario(args, None, None)?;
    let overrides: Vec<(String, Vec<Override>)> = args
        .compare
        .iter()
        .map(|a| (a.text.clone(), a.overrides.clone()))
        .collect();
    let progress = Progress::new(true, ui);
    let mut profile = Profile::from_env();
    let loaded = crate::source::load(&args.model, None, None, ui, &progress)?;
    profile.phase("load");
    let sim = SimConfig {
        kube_version: loaded.config.kube_version,
        kube_proxy_version: loaded.config.kube_proxy_version,
        proxy_sync_delay_ms: ms(args.proxy_sync),
        proxy_min_sync_period_ms: ms(args.proxy_min_sync),
        // The verdicts are the model's: no simulated kube-proxy is asked.
        kube_proxies: false,
        // Checked with the model's configuration when it was loaded.
        feature_gates: loaded.config.feature_gates.clone(),
        ..SimConfig::default()
    };
    let seed_options = SeedOptions {
        pull_ms: ms(args.pull),
        ready_after_ms: ms(args.ready_after),
    };
    let base = changes::scenario(
        args,
        applied(args, &seed_options, ui)?,
        replacement(args, &seed_options, ui)?,
    )?;
    let matrix = MatrixConfig {
        derive: false,
        ..loaded.config.clone()
    };
    let run_options = RunOptions {
        step_ms: args.step_ms.max(1),
        limit_ms: args.limit.saturating_mul(1000),
        ..RunOptions::default()
    };
    ui.status(&format!(
        "SIMULATED what-if seeded from {}: verdicts are the model's on the simulated state",
        loaded.source.text()
    ));
    let seeding = Seeding {
        state: &loaded.state,
        sim: &sim,
        options: &seed_options,
    };
    let mut scenarios = vec![base.clone()];
    if !overrides.is_empty() {
        // Where `itp=`… apply: the Services the base changes touch.
        let (engine, _) = seeded(&seeding, &mut profile)?;
        let scope: Vec<ObjectKey> = services_in_scope(&engine, &base.measured)
            .unwrap_or_default()
            .into_iter()
            .map(|(ns, name)| ObjectKey::new(Kind::Service, ns, name))
            .collect();
        for (name, o) in &overrides {
            scenarios.push(changes::alternative(&base, name, o, &scope)?);
        }
    }
    let mut alternatives = Vec::new();
    let mut assumptions = Vec::new();
    for s in &scenarios {
        let (a, asm) = run_scenario(s, &seeding, &matrix, &run_options, &progress, &mut profile)?;
        alternatives.push(a);
        assumptions = asm;
    }
    progress.finish();
    let first = &alternatives[0];
    let header = loaded.header(
        "simulate",
        Summary(vec![
            Count::new("alternatives", "alternative", "alternatives", alternatives.len()),
            Count::new(
                "servicePorts",
                "service port in scope",
                "service ports in scope",
                first.service_ports.len(),
            ),
            Count::new(
                "nodesWithDropWindows",
                "node with a drop window",
                "nodes with a drop window",
                first.totals.nodes_with_drop_windows as usize,
            ),
        ]),
    );
    let report = SimulationReport {
        api_version: API_VERSION,
        kind: KIND,
        simulated: true,
        notice: NOTICE,
        header,
        settings: Settings {
            proxy_sync_seconds: ms(args.proxy_sync) as f64 / 1000.0,
            proxy_min_sync_seconds: ms(args.proxy_min_sync) as f64 / 1000.0,
            pull_seconds: ms(args.pull) as f64 / 1000.0,
            ready_after_seconds: ms(args.ready_after) as f64 / 1000.0,
            step_seconds: run_options.step_ms as f64 / 1000.0,
        },
        assumptions,
        alternatives,
    };
    if let Some(path) = &args.svg {
        std::fs::write(path, svg::svg(&report))
            .map_err(|e| CliError::runtime(format!("{}: {e}", path.display())))?;
    }
    match args.output {
        SimulateOutput::Json => json::write_json(&report, out)?,
        SimulateOutput::Markdown => markdown::write_markdown(&report, out)?,
        SimulateOutput::Text => text::write_text(&report, ui.paint(), out)?,
    }
    out.flush()?;
    profile.phase("report");
    crate::free_at_exit(loaded);
    Ok(())
}
