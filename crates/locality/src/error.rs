//! Errors at the binary edge and their exit codes: one table, [`EXIT_CODES`], maps every
//! kind of ending ([`ExitKind`]) to its code; `--help` prints it ([`exit_codes_help`]) and
//! docs/exit-codes.md is checked against it ([`exit_codes_markdown`]).

use std::fmt;

/// How a run of `locality` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// The command did its job (`verify`: ACCEPT; `audit`: no finding at or above
    /// `--fail-on`).
    Success,
    /// A runtime error: I/O, the API server, writing the output.
    Runtime,
    /// A usage or input error: bad flags, unknown names, unreadable or invalid input,
    /// nothing to analyse, an invalid `.locality.yaml`, a kubeconfig that cannot be used.
    Usage,
    /// `audit`: an unsuppressed finding at or above `--fail-on`; `verify`: REPAIR.
    Findings,
    /// `verify`: RERUN (the evidence is incomplete; run again).
    Rerun,
    /// `verify`: HOLD (the data plane does not do what the model says).
    Hold,
    /// Interrupted by Ctrl-C (SIGINT): 128 + 2, as shells report it.
    Interrupted,
    /// Terminated by SIGTERM: 128 + 15, as shells report it.
    Terminated,
}

/// One row of the exit-code table.
#[derive(Debug, Clone, Copy)]
pub struct ExitCodeRow {
    /// The kind of ending.
    pub kind: ExitKind,
    /// Its exit code.
    pub code: u8,
    /// What it means, for `--help` and the docs.
    pub meaning: &'static str,
}

/// The exit codes of every command.
pub const EXIT_CODES: [ExitCodeRow; 8] = [
    ExitCodeRow {
        kind: ExitKind::Success,
        code: 0,
        meaning: "success (audit: no finding at or above --fail-on; verify: ACCEPT)",
    },
    ExitCodeRow {
        kind: ExitKind::Runtime,
        code: 1,
        meaning: "runtime error: I/O, the API server, writing the output",
    },
    ExitCodeRow {
        kind: ExitKind::Usage,
        code: 2,
        meaning: "usage or input error: bad flags or names, unreadable or invalid input, nothing to analyse",
    },
    ExitCodeRow {
        kind: ExitKind::Findings,
        code: 3,
        meaning: "audit: a finding at or above --fail-on; verify: REPAIR",
    },
    ExitCodeRow {
        kind: ExitKind::Rerun,
        code: 4,
        meaning: "verify: RERUN (the evidence is incomplete)",
    },
    ExitCodeRow {
        kind: ExitKind::Hold,
        code: 5,
        meaning: "verify: HOLD (the data plane contradicts the model)",
    },
    ExitCodeRow {
        kind: ExitKind::Interrupted,
        code: 130,
        meaning: "interrupted (Ctrl-C); verify deletes its namespace and writes the evidence first",
    },
    ExitCodeRow {
        kind: ExitKind::Terminated,
        code: 143,
        meaning: "terminated (SIGTERM); as for Ctrl-C",
    },
];

impl ExitKind {
    /// Its exit code, from [`EXIT_CODES`].
    pub const fn code(self) -> u8 {
        let mut i = 0;
        while i < EXIT_CODES.len() {
            if EXIT_CODES[i].kind as u8 == self as u8 {
                return EXIT_CODES[i].code;
            }
            i += 1;
        }
        1
    }
}

/// Exit code for success.
pub const EXIT_OK: u8 = ExitKind::Success.code();
/// Exit code for a runtime error (I/O, API server).
pub const EXIT_RUNTIME: u8 = ExitKind::Runtime.code();
/// Exit code for a usage or input error.
pub const EXIT_USAGE: u8 = ExitKind::Usage.code();
/// Exit code when `audit` finds something at or above `--fail-on`.
pub const EXIT_FINDINGS: u8 = ExitKind::Findings.code();
/// Exit code after Ctrl-C (SIGINT): 128 + 2, as shells report a process killed by it.
pub const EXIT_INTERRUPTED: u8 = ExitKind::Interrupted.code();
/// Exit code after SIGTERM: 128 + 15, as shells report a process killed by it.
pub const EXIT_TERMINATED: u8 = ExitKind::Terminated.code();

/// The exit-code kind of a `verify` decision.
pub fn decision_exit(decision: locality_verify::Decision) -> ExitKind {
    use locality_verify::Decision;
    match decision {
        Decision::Accept => ExitKind::Success,
        Decision::Repair => ExitKind::Findings,
        Decision::Rerun => ExitKind::Rerun,
        Decision::Hold => ExitKind::Hold,
    }
}

/// How a live-read error ends the run: a kubeconfig that cannot be used is a usage error,
/// everything that happened while talking to the cluster a runtime error.
pub fn live_exit(e: &locality_live::LiveError) -> ExitKind {
    use locality_live::LiveError;
    match e {
        LiveError::NoKubeconfig { .. } | LiveError::Kubeconfig { .. } => ExitKind::Usage,
        _ => ExitKind::Runtime,
    }
}

/// How a `verify` run that could not be carried out ends: as its live-read error, or as a
/// runtime error (an API call, an unsuitable cluster, the evidence not written).
pub fn verify_error_exit(e: &locality_verify::VerifyError) -> ExitKind {
    match e {
        locality_verify::VerifyError::Live(live) => live_exit(live),
        _ => ExitKind::Runtime,
    }
}

/// The table for `--help`: `Exit codes:` then one line per code.
pub fn exit_codes_help() -> String {
    let mut s = String::from("Exit codes:\n");
    for r in EXIT_CODES {
        s.push_str(&format!("  {:>3}  {}\n", r.code, r.meaning));
    }
    s
}

/// The table as Markdown, as docs/exit-codes.md carries it.
pub fn exit_codes_markdown() -> String {
    let mut s = String::from("| code | meaning |\n|---|---|\n");
    for r in EXIT_CODES {
        s.push_str(&format!("| {} | {} |\n", r.code, r.meaning));
    }
    s
}

/// An error that ends the program with a message on stderr and the exit code of its kind.
#[derive(Debug)]
pub struct CliError {
    /// What kind of ending it is ([`EXIT_CODES`] gives the code).
    pub kind: ExitKind,
    /// One-line message (may continue on following lines with details).
    pub message: String,
    /// The I/O error kind when writing failed: a closed pipe (`locality … | head`) ends the
    /// run quietly.
    pub io: Option<std::io::ErrorKind>,
    /// Printed under the message: for an input error, the source lines around it
    /// ([`crate::snippet`]).
    pub detail: Option<String>,
}

impl CliError {
    /// An error of `kind`.
    pub fn new(kind: ExitKind, message: impl Into<String>) -> Self {
        CliError {
            kind,
            message: message.into(),
            io: None,
            detail: None,
        }
    }
    /// An input error (exit 2): the one-line message naming file, line, column and field,
    /// and under it the lines of the file around that place when the file can be shown.
    pub fn input(e: &locality_ingest::IngestError) -> Self {
        use std::io::IsTerminal as _;
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        CliError {
            detail: crate::snippet::for_ingest_error(e, color),
            ..CliError::usage(e.to_string())
        }
    }
    /// A usage or input error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::new(ExitKind::Usage, message)
    }
    /// A runtime error (exit 1).
    pub fn runtime(message: impl Into<String>) -> Self {
        CliError::new(ExitKind::Runtime, message)
    }
    /// Writing `what` failed: a runtime error that keeps the I/O error's kind.
    pub fn writing(what: &str, e: &std::io::Error) -> Self {
        CliError {
            io: Some(e.kind()),
            ..CliError::runtime(format!("writing {what}: {e}"))
        }
    }
    /// Its exit code.
    pub fn code(&self) -> u8 {
        self.kind.code()
    }
    /// Whether it is the reader of the output going away (`EPIPE`), not worth a message.
    pub fn is_broken_pipe(&self) -> bool {
        self.io == Some(std::io::ErrorKind::BrokenPipe)
    }
}

/// The result of writing a report whose reader may have gone away (`locality … | head`):
/// a closed pipe ends the output, not the run, so the command still ends with the code it
/// decided (`audit --fail-on`: 3; `verify`: its decision), silently (docs/exit-codes.md).
/// Every other error is kept.
pub fn unless_reader_gone(written: Result<(), CliError>) -> Result<(), CliError> {
    match written {
        Err(e) if e.is_broken_pipe() => Ok(()),
        other => other,
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl From<locality_live::LiveError> for CliError {
    fn from(e: locality_live::LiveError) -> Self {
        CliError::new(live_exit(&e), e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::writing("output", &e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locality_verify::Decision;

    #[test]
    fn a_closed_pipe_is_told_by_its_io_kind_not_by_its_message() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(CliError::from(pipe).is_broken_pipe());
        let other = std::io::Error::other("Broken pipe (in a file name)");
        assert!(!CliError::from(other).is_broken_pipe());
        assert!(!CliError::runtime("Broken pipe").is_broken_pipe());
        let gone = CliError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(unless_reader_gone(Err(gone)).is_ok());
        let full = CliError::from(std::io::Error::from(std::io::ErrorKind::StorageFull));
        assert_eq!(unless_reader_gone(Err(full)).unwrap_err().code(), EXIT_RUNTIME);
        assert_eq!(CliError::usage("x").code(), EXIT_USAGE);
        assert_eq!(
            CliError::writing("x", &std::io::Error::other("y")).code(),
            EXIT_RUNTIME
        );
    }

    #[test]
    fn one_code_per_kind_and_verify_decisions_agree() {
        let mut codes: Vec<u8> = EXIT_CODES.iter().map(|r| r.code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), EXIT_CODES.len(), "codes are distinct");
        for d in [
            Decision::Accept,
            Decision::Repair,
            Decision::Rerun,
            Decision::Hold,
        ] {
            assert_eq!(
                i32::from(decision_exit(d).code()),
                d.exit_code(),
                "{}",
                d.as_str()
            );
        }
        assert_eq!((EXIT_INTERRUPTED, EXIT_TERMINATED), (130, 143));
    }

    #[test]
    fn the_docs_carry_the_table() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/exit-codes.md"))
            .expect("docs/exit-codes.md");
        assert!(
            doc.contains(&exit_codes_markdown()),
            "docs/exit-codes.md must contain, verbatim:\n{}",
            exit_codes_markdown()
        );
    }
}
