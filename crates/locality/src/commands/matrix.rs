//! `locality matrix`.

use std::io::Write;

use locality_model::matrix::Matrix;
use locality_report::matrix::{Selection, write_json, write_yaml};
use locality_report::summary::write_summary;
use locality_report::table::write_table;

use crate::cli::{MatrixArgs, MatrixOutput};
use crate::error::CliError;
use crate::inputs::report_controller_events;
use crate::profile::Profile;
use crate::progress::{PROGRESS_THRESHOLD_BYTES, Progress, input_size};
use crate::source;
use crate::ui::Ui;

/// Runs `matrix`.
pub fn run(args: &MatrixArgs, ui: &Ui, out: &mut dyn Write) -> Result<(), CliError> {
    let mut profile = Profile::from_env();
    let progress = Progress::new(input_size(&args.model.filenames) > PROGRESS_THRESHOLD_BYTES, ui);
    // The model reads Pods only for Services without EndpointSlices (`--derive`: all).
    let loaded = source::load_reading(
        &args.model,
        args.namespace.as_deref(),
        args.namespace.as_deref(),
        ui,
        &progress,
        source::PodsRead::WhenModelled,
    )?;
    progress.finish();
    profile.phase("ingest");
    let matrix = Matrix::new(&loaded.state, loaded.config.clone()).assuming(loaded.assumed);
    profile.phase("prepare");
    report_controller_events(&matrix, ui);

    let selection = select(&matrix, args)?;
    let header = loaded.header("matrix", locality_report::summary::counts(&matrix, &selection));
    let paint = ui.paint();
    match MatrixOutput::or_default(args.output, ui.stdout_terminal) {
        MatrixOutput::Summary => {
            // The summary's cost is the categorisation; rendering is small.
            write_summary(&matrix, &selection, &header, paint, out)?;
            profile.phase("categorize");
        }
        MatrixOutput::Json => write_json(&matrix, &selection, Some(&header), out)?,
        MatrixOutput::Yaml => write_yaml(&matrix, &selection, Some(&header), out)?,
        MatrixOutput::Wide => write_table(&matrix, &selection, &header, paint, out)?,
    }
    out.flush()?;
    profile.phase("render");
    crate::free_at_exit(matrix);
    crate::free_at_exit(loaded);
    Ok(())
}

/// Resolves `--service`, `-n` and `--node` to matrix indices; unknown names are usage
/// errors (exit 2) that suggest the closest names.
fn select(m: &Matrix<'_>, args: &MatrixArgs) -> Result<Selection, CliError> {
    let mut sel = Selection::default();
    let mut wanted: Vec<(String, String)> = Vec::new();
    for s in &args.service {
        let (ns, name) = match (s.split_once('/'), &args.namespace) {
            (Some((ns, name)), _) => (ns.to_string(), name.to_string()),
            (None, Some(ns)) => (ns.clone(), s.clone()),
            (None, None) => ("default".to_string(), s.clone()),
        };
        if !m
            .ports
            .iter()
            .any(|p| p.service.meta.namespace == ns && p.service.meta.name == name)
        {
            let known: Vec<String> = m
                .ports
                .iter()
                .map(|p| format!("{}/{}", p.service.meta.namespace, p.service.meta.name))
                .collect();
            return Err(CliError::usage(format!(
                "no Service {ns}/{name} in the input{}",
                crate::suggest::did_you_mean(&format!("{ns}/{name}"), known.iter().map(String::as_str))
            )));
        }
        wanted.push((ns, name));
    }
    if !wanted.is_empty() || args.namespace.is_some() {
        sel.ports = Some(
            (0..m.ports.len())
                .filter(|&i| {
                    let svc = m.ports[i].service;
                    let by_name = wanted.is_empty()
                        || wanted
                            .iter()
                            .any(|(ns, n)| *ns == svc.meta.namespace && *n == svc.meta.name);
                    let by_ns = args.namespace.as_ref().is_none_or(|ns| *ns == svc.meta.namespace);
                    by_name && by_ns
                })
                .collect(),
        );
    }
    if !args.node.is_empty() {
        let mut nodes = Vec::new();
        for n in &args.node {
            match m.node_position(n) {
                Some(i) => nodes.push(i),
                None => {
                    return Err(CliError::usage(format!(
                        "no Node {n:?} in the input{}",
                        crate::suggest::did_you_mean(n, m.nodes.iter().map(|n| n.name()))
                    )));
                }
            }
        }
        nodes.sort_unstable();
        nodes.dedup();
        sel.nodes = Some(nodes);
    }
    Ok(sel)
}
