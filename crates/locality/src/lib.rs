//! The `locality` command-line program (also the kubectl plugin `kubectl-locality`).
//!
//! Thin: flags ([`cli`]), inputs ([`inputs`]), one module per command ([`commands`]); the
//! routing semantics live in `locality-model`, reading files in `locality-ingest`, output
//! formats in `locality-report`.

pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod error;
pub mod examples;
pub mod files;

/// Leaves a value to the operating system instead of freeing it: the process is about to
/// exit, and freeing a 100,000-pod state allocation by allocation costs a quarter of a second.
pub fn free_at_exit<T>(value: T) {
    std::mem::forget(value);
}

/// The header of a report made now by `command` (the one builder is
/// [`locality_report::header::build`]; this adds the tool's version and the clock).
pub fn report_header(
    command: &'static str,
    source: locality_report::header::ReportSource,
    simulated: bool,
    cluster_version: Option<String>,
    config: &locality_model::matrix::MatrixConfig,
    detection: Option<&locality_model::dataplane::Detection>,
    summary: locality_report::header::Summary,
) -> locality_report::header::ReportHeader {
    locality_report::header::build(
        locality_report::header::HeaderInput {
            command,
            tool_version: env!("CARGO_PKG_VERSION"),
            generated_at: clock::now_rfc3339(),
            source,
            simulated,
            cluster_version,
            config,
            detection,
        },
        summary,
    )
}
pub mod inputs;
pub mod profile;
pub mod progress;
pub mod snippet;
pub mod source;
pub mod suggest;
pub mod ui;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::FromArgMatches;

use crate::cli::{Cli, Command};
use crate::error::CliError;
use crate::ui::Ui;

/// How the program was invoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invocation {
    /// As `locality`.
    Standalone,
    /// As the kubectl plugin (`kubectl locality`).
    KubectlPlugin,
}

/// Parses the command line, runs the command, and returns the exit code.
pub fn main(invocation: Invocation) -> ExitCode {
    let mut command = examples::command();
    if invocation == Invocation::KubectlPlugin {
        command = command.bin_name("kubectl locality").name("kubectl-locality");
    }
    let matches = command.get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let ui = Ui {
        quiet: cli.quiet,
        verbose: cli.verbose,
        color: cli.color,
        stdout_terminal: std::io::IsTerminal::is_terminal(&std::io::stdout()),
    };
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = match &cli.command {
        Command::Matrix(args) => commands::matrix::run(args, &ui, &mut out),
        Command::Explain(args) => commands::explain::run(args, &ui, &mut out),
        Command::Completions { shell } => {
            let mut command = examples::command();
            let name = if invocation == Invocation::KubectlPlugin {
                "kubectl-locality"
            } else {
                "locality"
            };
            clap_complete::generate(*shell, &mut command, name, &mut out);
            Ok(())
        }
        Command::Version => writeln!(
            out,
            "locality {}\nKubernetes releases modelled: {}..={} (kube-proxy, EndpointSlice controller, API defaulting)",
            env!("CARGO_PKG_VERSION"),
            locality_model::version::KubeVersion::OLDEST,
            locality_model::version::KubeVersion::NEWEST
        )
        .map_err(|e| CliError::writing("the version", &e)),
        Command::Man => clap_mangen::Man::new(examples::command())
            .render(&mut out)
            .map_err(|e| CliError::writing("the man page", &e)),
        Command::Simulate(args) => commands::simulate::run(args, &ui, &mut out),
        Command::Sim(cli::SimCommand::Rules(args)) => commands::sim::rules(args, &mut out),
        Command::Sim(cli::SimCommand::Serve(args)) => commands::sim::serve(args, &ui, &mut out),
        Command::Verify(args) => match commands::verify::run(args, &ui, &mut out) {
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
        Command::Audit(args) => match commands::audit::run(args, &ui, &mut out) {
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::from(error::EXIT_OK),
        Err(e) => report(e),
    }
}

fn report(e: CliError) -> ExitCode {
    // A closed pipe (`locality … | head`) is not an error worth a message.
    if e.is_broken_pipe() {
        return ExitCode::from(error::EXIT_OK);
    }
    // The display path (locality_report::display): input text in the message is escaped;
    // the snippet under it keeps miette's colours and nothing else.
    eprintln!("error: {}", locality_report::display::term_lines(&e.message));
    if let Some(detail) = &e.detail {
        let mut err = locality_report::display::Terminal::new(io::stderr().lock());
        let _ = writeln!(err, "{detail}");
    }
    ExitCode::from(e.code())
}
