//! `locality audit`: the rules LOC001–LOC021 (`locality-audit`) on a cluster state, rendered
//! by `locality_report::audit`.
//!
//! The command is split so that another source of state can be added without touching the
//! rest: [`crate::source::load`] reads `-f` inputs or a live cluster into an [`AuditInput`] (the state, the matrix
//! configuration with its versions, and where it came from); [`run_on`] audits any
//! [`AuditInput`] and renders it. A live cluster source only has to build an `AuditInput`
//! with `kind: InputKind::Live` (its objects carry no file origin, so SARIF gives logical
//! locations).
//!
//! Exit codes: 0, 1 runtime, 2 usage or input, [`EXIT_FINDINGS`] (3) when a finding at or
//! above `--fail-on` exists.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::str::FromStr;

use locality_audit::{AuditOptions, AuditReport, InputKind, RuleId, Severity, audit};
use locality_model::matrix::Matrix;
use locality_model::objects::{ClusterState, Origin};
use locality_report::audit::html::{Grid, write_html};
use locality_report::audit::json::write_json;
use locality_report::audit::markdown::write_markdown;
use locality_report::audit::sarif::{Locations, ToolInfo, write_sarif};
use locality_report::audit::table::write_table;
use locality_report::audit::yaml::write_yaml;
use locality_report::header::{Count, Summary, plural};

use crate::cli::{AuditArgs, AuditOutput, SeverityArg};
use crate::error::{CliError, EXIT_OK};
use crate::inputs::report_controller_events;
use crate::profile::Profile;
use crate::progress::{PROGRESS_THRESHOLD_BYTES, Progress, input_size};
use crate::suggest::did_you_mean;
use crate::ui::Ui;

/// Exit code when a finding at or above `--fail-on` exists (the table: [`crate::error`]).
pub use crate::error::EXIT_FINDINGS;

/// Re-reading inputs to find the line of objects for SARIF scans at most about this many
/// bytes in total (each lookup scans its file up to the object); the rest point at the file.
const LOCATE_BUDGET_BYTES: u64 = 1 << 30;

/// The state and configuration an audit runs on (files or a live cluster).
pub type AuditInput = crate::source::Loaded;

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
        config: crate::config::resolve(args.config.as_deref())?,
        today: Some(crate::config::today()),
        ..AuditOptions::default()
    })
}

/// Runs `audit` on the `-f` inputs and returns the exit code.
pub fn run(args: &AuditArgs, ui: &Ui, out: &mut dyn Write) -> Result<u8, CliError> {
    if let Some(crate::cli::AuditCommand::Rules(r)) = &args.command {
        return super::rules::list(r.output, out);
    }
    // Flags first: a typo in --rule should not cost reading a large dump.
    let opts = options(args, InputKind::Files)?;
    if args.show_config {
        return show_config(&opts, out);
    }
    if args.model.filenames.is_empty() && (args.nodes.is_some() || !args.zones.is_empty()) {
        return Err(CliError::usage(
            "--nodes and --zones describe the target of manifests given with -f",
        ));
    }
    let progress = Progress::new(input_size(&args.model.filenames) > PROGRESS_THRESHOLD_BYTES, ui);
    let mut profile = Profile::from_env();
    // Live, every namespace is listed: clients in other namespaces count (-n filters the report).
    let input = crate::source::load(&args.model, None, args.namespace.as_deref(), ui, &progress)?;
    profile.phase("ingest");
    let code = run_on(&input, args, ui, &progress, &mut profile, out);
    crate::free_at_exit(input);
    code
}

/// `--show-config`: the effective configuration as YAML, its source in a comment.
fn show_config(opts: &AuditOptions, out: &mut dyn Write) -> Result<u8, CliError> {
    let source = opts
        .config
        .source
        .as_deref()
        .unwrap_or("none (no .locality.yaml found, no --config)");
    let yaml = serde_saphyr::to_string(&opts.config).map_err(|e| CliError::runtime(e.to_string()))?;
    write!(out, "# configuration: {source}\n{yaml}")
        .map_err(|e| CliError::writing("the configuration", &e))?;
    Ok(EXIT_OK)
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
    report.recount();
    Ok(())
}

/// `--baseline FILE`: the findings of an earlier run.
fn read_baseline(path: &std::path::Path) -> Result<locality_audit::Baseline, CliError> {
    let shown = path.display().to_string();
    let bytes = crate::files::read_regular(path, BASELINE_MAX_BYTES)
        .map_err(|e| CliError::usage(format!("--baseline {shown}: {e}")))?;
    locality_report::audit::baseline::read_baseline(&shown, &bytes)
        .map_err(|e| CliError::usage(format!("--baseline {e}")))
}

/// The bytes of `file` when it is still a regular file of `size` bytes (checked before it
/// is opened, so that a file replaced by a FIFO does not block), else `None`.
fn reread(file: &str, size: u64) -> Option<Vec<u8>> {
    let bytes = crate::files::read_regular(std::path::Path::new(file), size).ok()?;
    (bytes.len() as u64 == size).then_some(bytes)
}

/// The largest `--baseline` file read (a SARIF log of 100,000 findings is about 150 MB).
const BASELINE_MAX_BYTES: u64 = 512 << 20;

/// Resolves the lines of the objects SARIF points at, re-reading each input file once,
/// within [`LOCATE_BUDGET_BYTES`]; says on stderr how many were left unresolved. Only the
/// regular files ingest read are read again (`regular`: their sizes then), and only while
/// they are still regular files of that size: stdin, a FIFO or a device is never re-opened.
fn resolve_locations(
    report: &AuditReport,
    regular: &std::collections::BTreeMap<String, u64>,
    ui: &Ui,
) -> Locations {
    let mut locations = Locations::new();
    let mut by_file: BTreeMap<&str, Vec<&locality_audit::SourceLocation>> = BTreeMap::new();
    for loc in Locations::wanted(report) {
        by_file.entry(loc.file.as_str()).or_default().push(loc);
    }
    let mut unresolved = 0usize;
    let mut budget = LOCATE_BUDGET_BYTES;
    for (file, locs) in by_file {
        let Some(bytes) = regular.get(file).and_then(|&size| reread(file, size)) else {
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
            "SARIF: the line of {} was not resolved (large input); {} at the file",
            plural(unresolved as u64, "object", "objects"),
            if unresolved == 1 {
                "its result points"
            } else {
                "their results point"
            }
        ));
    }
    locations
}

/// The header counts of an audit report: findings by severity, suppressed findings,
/// service ports and nodes.
fn counts(report: &AuditReport) -> Summary {
    let t = &report.totals;
    let mut counts = vec![
        Count::new("findings", "finding", "findings", t.findings),
        Count::new("errors", "error", "errors", t.error),
        Count::new("warnings", "warning", "warnings", t.warning),
        Count::new("info", "info", "info", t.info),
        Count::new("suppressed", "suppressed", "suppressed", t.suppressed),
        Count::new(
            "servicePorts",
            "service port",
            "service ports",
            report.services.len(),
        ),
        Count::new("nodes", "node", "nodes", report.node_count),
    ];
    if t.in_baseline > 0 {
        counts.insert(
            5,
            Count::new("inBaseline", "in baseline", "in baseline", t.in_baseline),
        );
    }
    Summary(counts)
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
    let options = AuditOptions {
        data_plane: input.detection.clone(),
        ..options(args, input.kind)?
    };
    progress.set("modelling kube-proxy on every node");
    let matrix = Matrix::new(&input.state, input.config.clone()).assuming(input.assumed);
    profile.phase("prepare");
    report_controller_events(&matrix, ui);
    progress.set("auditing");
    let mut report = audit(&input.state, &matrix, &options);
    if let Some(ns) = &args.namespace {
        restrict_namespace(&mut report, &input.state, ns)?;
    }
    if let Some(path) = &args.baseline {
        report.apply_baseline(&read_baseline(path)?);
    }
    profile.phase("audit");
    // Not a note: a rule that could not run is a gap in the answer (in every format).
    for s in &report.skipped_rules {
        ui.warn(&format!("{} could not run: {}", s.rule, s.reason));
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
    let header = input.header("audit", counts(&report));
    let paint = ui.paint_for(args.output_file.is_none() && ui.stdout_terminal);
    let threshold = args.fail_on.map(|s| match s {
        SeverityArg::Error => Severity::Error,
        SeverityArg::Warning => Severity::Warning,
        SeverityArg::Info => Severity::Info,
    });
    let written = (|| -> Result<(), CliError> {
        match args.output {
            AuditOutput::Table => write_table(&report, &header, paint, target)?,
            AuditOutput::Junit => {
                locality_report::audit::junit::write_junit(&report, &header, threshold, target)?
            }
            AuditOutput::Json => write_json(&report, &header, target)?,
            AuditOutput::Yaml => write_yaml(&report, &header, target)?,
            AuditOutput::Markdown => write_markdown(&report, &header, target)?,
            AuditOutput::Sarif => {
                let locations = resolve_locations(&report, &input.regular_files, ui);
                let tool = ToolInfo {
                    name: "locality",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: "https://github.com/locality-dev/locality",
                };
                write_sarif(&report, &header, &locations, &tool, target)?;
            }
            AuditOutput::Html => {
                // Per-node verdicts exist only for a real cluster; an assumed shape has none here.
                let grid = report
                    .assumed_shape
                    .is_none()
                    .then(|| Grid::from_matrix(&matrix, &input.state, &report));
                write_html(&report, &header, grid.as_ref(), target)?;
            }
        }
        target.flush()?;
        Ok(())
    })();
    // A reader gone (`| head`) ends the report, not the run: the exit code below stands.
    crate::error::unless_reader_gone(written)?;
    progress.finish();
    profile.phase("render");
    crate::free_at_exit(matrix);

    match threshold {
        Some(t) if report.fails_on(t) => {
            let n = report.active().filter(|f| f.severity.at_least(t)).count();
            if !ui.quiet {
                eprintln!(
                    "locality audit: {} at or above {t} (--fail-on {t}): exit code {EXIT_FINDINGS}",
                    plural(n as u64, "finding", "findings")
                );
            }
            Ok(EXIT_FINDINGS)
        }
        _ => Ok(EXIT_OK),
    }
}
