//! `locality audit`: the rules LOC001–LOC020 (`locality-audit`) on a cluster state, rendered
//! by `locality_report::audit`.
//!
//! The command is split so that another source of state can be added without touching the
//! rest: [`file_input`] reads `-f` inputs into an [`AuditInput`] (the state, the matrix
//! configuration with its versions, and where it came from); [`run_on`] audits any
//! [`AuditInput`] and renders it. A live cluster source only has to build an `AuditInput`
//! with `kind: InputKind::Live` (its objects carry no file origin, so SARIF gives logical
//! locations).
//!
//! Exit codes: 0, 1 runtime, 2 usage or input, [`EXIT_FINDINGS`] (3) when a finding at or
//! above `--fail-on` exists.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use locality_audit::{AuditOptions, AuditReport, InputKind, RuleId, Severity, audit};
use locality_model::matrix::{Matrix, MatrixConfig};
use locality_model::objects::{ClusterState, Origin};
use locality_report::audit::html::{Grid, write_html};
use locality_report::audit::json::write_json;
use locality_report::audit::markdown::write_markdown;
use locality_report::audit::sarif::{Locations, ToolInfo, write_sarif};
use locality_report::audit::table::write_table;
use locality_report::audit::yaml::write_yaml;

use crate::cli::{AuditArgs, AuditOutput, SeverityArg};
use crate::error::{CliError, EXIT_OK};
use crate::inputs::{load_inputs, matrix_config, report_controller_events};
use crate::profile::Profile;
use crate::suggest::did_you_mean;
use crate::ui::Ui;

/// Exit code when a finding at or above `--fail-on` exists (SPEC §4).
pub const EXIT_FINDINGS: u8 = 3;

/// Inputs larger than this show a progress spinner on stderr (when it is a terminal).
pub const PROGRESS_THRESHOLD_BYTES: u64 = 50 * 1024 * 1024;

/// Re-reading inputs to find the line of objects for SARIF scans at most about this many
/// bytes in total (each lookup scans its file up to the object); the rest point at the file.
const LOCATE_BUDGET_BYTES: u64 = 1 << 30;

/// A cluster state to audit, with the configuration to model it and its provenance.
pub struct AuditInput {
    /// The objects.
    pub state: ClusterState,
    /// Versions and data plane to model.
    pub config: MatrixConfig,
    /// Where the objects came from (`files` objects carry their file origin).
    pub kind: InputKind,
}

/// A spinner on stderr for long work, hidden unless stderr is a terminal, the input is
/// large, and `--quiet` is off.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A spinner that shows only when `enabled` and stderr is a terminal.
    pub fn new(enabled: bool, ui: &Ui) -> Self {
        if !enabled || ui.quiet || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar) }
    }

    /// Shows what is being done.
    pub fn set(&self, msg: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.set_message(msg.into());
        }
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Total size of the input files (directories walked for `.json`/`.yaml`/`.yml`; stdin
/// counts 0): decides whether to show progress.
pub fn input_size(paths: &[PathBuf]) -> u64 {
    fn walk(p: &Path, depth: usize) -> u64 {
        let Ok(meta) = std::fs::metadata(p) else { return 0 };
        if meta.is_file() {
            return meta.len();
        }
        if !meta.is_dir() || depth > 32 {
            return 0;
        }
        let Ok(entries) = std::fs::read_dir(p) else {
            return 0;
        };
        entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|e| {
                e.is_dir()
                    || e.extension()
                        .and_then(|x| x.to_str())
                        .is_some_and(|x| matches!(x, "json" | "yaml" | "yml"))
            })
            .map(|e| walk(&e, depth + 1))
            .sum()
    }
    paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .map(|p| walk(p, 0))
        .sum()
}

/// Reads the `-f` inputs and resolves the versions to model (flags, else the Nodes'
/// kubeletVersions, else the newest supported).
pub fn file_input(args: &AuditArgs, ui: &Ui, progress: &Progress) -> Result<AuditInput, CliError> {
    let size = input_size(&args.model.filenames);
    progress.set(format!("reading {} MB of input", size.div_ceil(1024 * 1024)));
    let loaded = load_inputs(&args.model.filenames, ui)?;
    let config = matrix_config(&loaded.state, &args.model, ui)?;
    Ok(AuditInput {
        state: loaded.state,
        config,
        kind: InputKind::Files,
    })
}

fn parse_rules(values: &[String], flag: &str) -> Result<std::collections::BTreeSet<RuleId>, CliError> {
    let mut out = std::collections::BTreeSet::new();
    for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        match RuleId::from_str(v) {
            Ok(r) => {
                out.insert(r);
            }
            Err(e) => {
                let wanted = v.to_ascii_uppercase();
                return Err(CliError::usage(format!(
                    "{flag}: {e}{}",
                    did_you_mean(&wanted, RuleId::ALL.iter().map(|r| r.as_str()))
                )));
            }
        }
    }
    Ok(out)
}

/// The audit options from the flags; unknown rule IDs and an empty `--nodes` are usage
/// errors (exit 2).
pub fn options(args: &AuditArgs, kind: InputKind) -> Result<AuditOptions, CliError> {
    if args.nodes == Some(0) {
        return Err(CliError::usage("--nodes: expected at least 1 node"));
    }
    if args.zones.iter().any(|z| z.trim().is_empty()) {
        return Err(CliError::usage("--zones: empty zone name"));
    }
    Ok(AuditOptions {
        only: parse_rules(&args.rules, "--rule")?,
        skip: parse_rules(&args.skip_rules, "--skip-rule")?,
        input: kind,
        assumed_nodes: args.nodes,
        assumed_zones: args.zones.iter().map(|z| z.trim().to_string()).collect(),
        ..AuditOptions::default()
    })
}

/// Runs `audit` on the `-f` inputs and returns the exit code.
pub fn run(args: &AuditArgs, ui: &Ui, out: &mut dyn Write) -> Result<u8, CliError> {
    // Flags first: a typo in --rule should not cost reading a large dump.
    options(args, InputKind::Files)?;
    let progress = Progress::new(input_size(&args.model.filenames) > PROGRESS_THRESHOLD_BYTES, ui);
    let mut profile = Profile::from_env();
    let input = file_input(args, ui, &progress)?;
    profile.phase("ingest");
    run_on(&input, args, ui, &progress, &mut profile, out)
}

/// Keeps only the Services of `namespace` (findings, summaries, totals); unknown namespaces
/// are usage errors with the closest names suggested.
fn restrict_namespace(
    report: &mut AuditReport,
    state: &ClusterState,
    namespace: &str,
) -> Result<(), CliError> {
    if !state.services.iter().any(|s| s.meta.namespace == namespace) {
        let mut known: Vec<&str> = state.services.iter().map(|s| s.meta.namespace.as_str()).collect();
        known.sort_unstable();
        known.dedup();
        return Err(CliError::usage(format!(
            "no Service in namespace {namespace:?} in the input{}",
            did_you_mean(namespace, known.into_iter())
        )));
    }
    report.findings.retain(|f| f.service.namespace == namespace);
    report.services.retain(|s| s.service.namespace == namespace);
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    report.totals.error = count(Severity::Error);
    report.totals.warning = count(Severity::Warning);
    report.totals.info = count(Severity::Info);
    report.totals.findings = report.findings.len();
    Ok(())
}

/// Resolves the lines of the objects SARIF points at, re-reading each input file once,
/// within [`LOCATE_BUDGET_BYTES`]; says on stderr how many were left unresolved.
fn resolve_locations(report: &AuditReport, ui: &Ui) -> Locations {
    let mut locations = Locations::new();
    let mut by_file: BTreeMap<&str, Vec<&locality_audit::SourceLocation>> = BTreeMap::new();
    for loc in Locations::wanted(report) {
        by_file.entry(loc.file.as_str()).or_default().push(loc);
    }
    let mut unresolved = 0usize;
    let mut budget = LOCATE_BUDGET_BYTES;
    for (file, locs) in by_file {
        let Ok(bytes) = std::fs::read(file) else {
            unresolved += locs.len();
            continue;
        };
        let len = (bytes.len() as u64).max(1);
        for loc in locs {
            if budget < len {
                unresolved += 1;
                continue;
            }
            budget -= len;
            let origin = Origin {
                file: loc.file.clone(),
                document: loc.document,
                item: loc.item,
                ..Origin::default()
            };
            match locality_ingest::locate(&bytes, &origin) {
                Some((line, column)) => locations.insert(loc, line, column),
                None => unresolved += 1,
            }
        }
    }
    if unresolved > 0 {
        ui.warn(&format!(
            "SARIF: the line of {unresolved} object(s) was not resolved (large input); their results point at the file"
        ));
    }
    locations
}

/// Audits `input` and renders the report; returns [`EXIT_FINDINGS`] when `--fail-on`
/// matches, else 0.
pub fn run_on(
    input: &AuditInput,
    args: &AuditArgs,
    ui: &Ui,
    progress: &Progress,
    profile: &mut Profile,
    out: &mut dyn Write,
) -> Result<u8, CliError> {
    let options = options(args, input.kind)?;
    progress.set("modelling kube-proxy on every node");
    let matrix = Matrix::new(&input.state, input.config.clone());
    profile.phase("prepare");
    report_controller_events(&matrix, ui);
    progress.set("auditing");
    let mut report = audit(&input.state, &matrix, &options);
    if let Some(ns) = &args.namespace {
        restrict_namespace(&mut report, &input.state, ns)?;
    }
    profile.phase("audit");
    for s in &report.skipped_rules {
        ui.note(&format!("{} skipped: {}", s.rule, s.reason));
    }

    progress.set("rendering");
    let mut file_out;
    let mut stdout_ref;
    let target: &mut dyn Write = match &args.output_file {
        Some(path) => {
            let f = File::create(path)
                .map_err(|e| CliError::runtime(format!("cannot write {}: {e}", path.display())))?;
            file_out = BufWriter::new(f);
            &mut file_out
        }
        None => {
            stdout_ref = out;
            &mut stdout_ref
        }
    };
    match args.output {
        AuditOutput::Table => write_table(&report, target)?,
        AuditOutput::Json => write_json(&report, target)?,
        AuditOutput::Yaml => write_yaml(&report, target)?,
        AuditOutput::Markdown => write_markdown(&report, target)?,
        AuditOutput::Sarif => {
            let locations = resolve_locations(&report, ui);
            let tool = ToolInfo {
                name: "locality",
                version: env!("CARGO_PKG_VERSION"),
                information_uri: "https://github.com/locality-dev/locality",
            };
            write_sarif(&report, &locations, &tool, target)?;
        }
        AuditOutput::Html => {
            // Per-node verdicts exist only for a real cluster; an assumed shape has none here.
            let grid = report
                .assumed_shape
                .is_none()
                .then(|| Grid::from_matrix(&matrix, &report));
            write_html(&report, grid.as_ref(), target)?;
        }
    }
    target.flush()?;
    progress.finish();
    profile.phase("render");

    let threshold = args.fail_on.map(|s| match s {
        SeverityArg::Error => Severity::Error,
        SeverityArg::Warning => Severity::Warning,
        SeverityArg::Info => Severity::Info,
    });
    match threshold {
        Some(t) if report.fails_on(t) => {
            let n = report.findings.iter().filter(|f| f.severity.at_least(t)).count();
            if !ui.quiet {
                eprintln!("locality audit: {n} finding(s) at or above {t} (--fail-on {t}): exit code 3");
            }
            Ok(EXIT_FINDINGS)
        }
        _ => Ok(EXIT_OK),
    }
}
