//! Messages on stderr: warnings and notes, honouring `--quiet` and `-v`.

/// Where human messages go.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// `--quiet`: only errors.
    pub quiet: bool,
    /// `-v` count.
    pub verbose: u8,
}

impl Ui {
    /// A warning (shown unless `--quiet`).
    pub fn warn(&self, msg: &str) {
        if !self.quiet {
            eprintln!("warning: {msg}");
        }
    }
    /// A status line (shown unless `--quiet`).
    pub fn status(&self, msg: &str) {
        if !self.quiet {
            eprintln!("locality: {msg}");
        }
    }
    /// A note (shown with `-v`).
    pub fn note(&self, msg: &str) {
        if !self.quiet && self.verbose > 0 {
            eprintln!("note: {msg}");
        }
    }
}
