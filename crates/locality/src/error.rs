//! Errors at the binary edge and their exit codes (docs/design.md §4).

use std::fmt;

/// Exit code for success.
pub const EXIT_OK: u8 = 0;
/// Exit code for a runtime error (I/O, API server).
pub const EXIT_RUNTIME: u8 = 1;
/// Exit code for a usage or input error.
pub const EXIT_USAGE: u8 = 2;
/// Exit code after Ctrl-C (SIGINT): 128 + 2, as shells report a process killed by it.
pub const EXIT_INTERRUPTED: u8 = 130;
/// Exit code after SIGTERM: 128 + 15, as shells report a process killed by it.
pub const EXIT_TERMINATED: u8 = 143;

/// An error that ends the program with a message on stderr and an exit code.
#[derive(Debug)]
pub struct CliError {
    /// Exit code.
    pub code: u8,
    /// One-line message (may continue on following lines with details).
    pub message: String,
}

impl CliError {
    /// A usage or input error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }
    /// A runtime error (exit 1).
    pub fn runtime(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_RUNTIME,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::runtime(format!("writing output: {e}"))
    }
}
