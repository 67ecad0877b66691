//! Progress on stderr for long work: a spinner shown only when stderr is a terminal and
//! `--quiet` is off (never on stdout).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ui::Ui;

/// Inputs larger than this show a progress spinner (50 MB).
pub const PROGRESS_THRESHOLD_BYTES: u64 = 50 * 1024 * 1024;

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
