//! Messages on stderr: warnings and notes, honouring `--quiet` and `-v`; and whether text
//! reports on stdout are coloured (`--color`, `NO_COLOR`, a terminal).

use locality_report::style::Paint;

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is not set.
    Auto,
    /// Always colour (also into files and pipes).
    Always,
    /// Never colour.
    Never,
}

/// Where human messages go.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// `--quiet`: only errors.
    pub quiet: bool,
    /// `-v` count.
    pub verbose: u8,
    /// `--color`.
    pub color: ColorChoice,
    /// Whether stdout is a terminal.
    pub stdout_terminal: bool,
}

/// Whether colour is on: `always` and `never` decide; `auto` colours a terminal unless
/// `NO_COLOR` is set to anything but the empty string (<https://no-color.org>) or `TERM`
/// is `dumb`.
pub fn colour_on(choice: ColorChoice, terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb"),
    }
}

impl Ui {
    /// How to colour a text report written to stdout.
    pub fn paint(&self) -> Paint {
        self.paint_for(self.stdout_terminal)
    }

    /// How to colour a text report written where `terminal` says.
    pub fn paint_for(&self, terminal: bool) -> Paint {
        let no_color = std::env::var("NO_COLOR").ok();
        let term = std::env::var("TERM").ok();
        Paint {
            enabled: colour_on(self.color, terminal, no_color.as_deref(), term.as_deref()),
        }
    }

    /// A warning (shown unless `--quiet`). Like every message on stderr it passes the
    /// display path (`locality_report::display::term`): input text in it is escaped, a line
    /// break included, so that one warning is one line.
    pub fn warn(&self, msg: &str) {
        if !self.quiet {
            eprintln!("warning: {}", locality_report::display::term(msg));
        }
    }
    /// A status line (shown unless `--quiet`).
    pub fn status(&self, msg: &str) {
        if !self.quiet {
            eprintln!("locality: {}", locality_report::display::term(msg));
        }
    }
    /// A note (shown with `-v`).
    pub fn note(&self, msg: &str) {
        if !self.quiet && self.verbose > 0 {
            eprintln!("note: {}", locality_report::display::term(msg));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_the_flag_no_color_and_the_terminal() {
        assert!(colour_on(ColorChoice::Auto, true, None, Some("xterm")));
        assert!(
            !colour_on(ColorChoice::Auto, false, None, Some("xterm")),
            "not a terminal"
        );
        assert!(!colour_on(ColorChoice::Auto, true, Some("1"), None), "NO_COLOR");
        assert!(
            colour_on(ColorChoice::Auto, true, Some(""), None),
            "NO_COLOR empty"
        );
        assert!(!colour_on(ColorChoice::Auto, true, None, Some("dumb")));
        assert!(colour_on(ColorChoice::Always, false, Some("1"), None));
        assert!(!colour_on(ColorChoice::Never, true, None, None));
    }
}
