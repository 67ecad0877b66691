//! Colour for the text outputs: severities, verdicts and the simulated banner. The caller
//! decides whether colour is on ([`Paint::enabled`]: `--color`, `NO_COLOR`, a terminal);
//! with it off every function returns its text unchanged, so files and pipes get plain
//! text.

use anstyle::{AnsiColor, Style};
use locality_audit::Severity;
use locality_model::proxy::VerdictKind;

/// Whether and how to colour text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paint {
    /// Colour on.
    pub enabled: bool,
}

impl Paint {
    /// No colour.
    pub const PLAIN: Paint = Paint { enabled: false };
    /// Colour.
    pub const COLOR: Paint = Paint { enabled: true };

    fn with(self, style: Style, text: &str) -> String {
        if self.enabled && !text.is_empty() {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// The simulated banner: bold black on yellow.
    pub fn banner(self, text: &str) -> String {
        self.with(
            Style::new()
                .bold()
                .fg_color(Some(AnsiColor::Black.into()))
                .bg_color(Some(AnsiColor::Yellow.into())),
            text,
        )
    }

    /// Secondary text (the header's details).
    pub fn dim(self, text: &str) -> String {
        self.with(Style::new().dimmed(), text)
    }

    /// Bold text.
    pub fn bold(self, text: &str) -> String {
        self.with(Style::new().bold(), text)
    }

    /// A severity's colour: errors red, warnings yellow, info blue.
    pub fn severity(self, severity: Severity, text: &str) -> String {
        let color = match severity {
            Severity::Error => AnsiColor::Red,
            Severity::Warning => AnsiColor::Yellow,
            Severity::Info => AnsiColor::Blue,
        };
        self.with(Style::new().bold().fg_color(Some(color.into())), text)
    }

    /// A verdict's colour: delivered green, dropped red, rejected yellow, not proxied dim.
    pub fn verdict(self, verdict: VerdictKind, text: &str) -> String {
        let style = match verdict {
            VerdictKind::Deliver => Style::new().fg_color(Some(AnsiColor::Green.into())),
            VerdictKind::Drop => Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
            VerdictKind::Reject => Style::new().bold().fg_color(Some(AnsiColor::Yellow.into())),
            VerdictKind::NotProxied => Style::new().dimmed(),
        };
        self.with(style, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_is_unchanged_and_colour_wraps_in_escapes() {
        assert_eq!(Paint::PLAIN.verdict(VerdictKind::Drop, "DROP"), "DROP");
        assert_eq!(Paint::PLAIN.banner("SIMULATED"), "SIMULATED");
        let red = Paint::COLOR.verdict(VerdictKind::Drop, "DROP");
        assert!(
            red.starts_with("\u{1b}[") && red.contains("DROP") && red.ends_with("\u{1b}[0m"),
            "{red:?}"
        );
        assert_ne!(
            Paint::COLOR.severity(Severity::Error, "x"),
            Paint::COLOR.severity(Severity::Info, "x")
        );
    }
}
