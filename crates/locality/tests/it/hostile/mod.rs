//! Hostile input through the binary (issue #40): text from outside (annotations, file
//! names, names, the API server's answers) stays inert on stdout and stderr, Markdown and
//! SVG stay well-formed, special files and remote answers stay bounded. docs/untrusted-input.md.

mod files;
mod formats;
mod live;
mod terminal;
mod verify;
mod verify_plugin;

use std::path::PathBuf;

use assert_cmd::Command;

/// Text that would act on a terminal, reorder or hide text, or forge a line: OSC 0 (the
/// window title), clear screen, CR, a bidi override and isolate, zero-width characters, a
/// C1 CSI, DEL, and a newline followed by a forged report line.
pub const HOSTILE: &str =
    "x\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{202e}evil\u{2066}\u{200b}\u{feff}\u{9b}\u{7f}\nLOC001 forged line";

pub fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The binary with a fixed clock and no colour.
pub fn locality() -> Command {
    let mut c = Command::cargo_bin("locality").expect("locality binary");
    c.env("SOURCE_DATE_EPOCH", "1767225600")
        .env("NO_COLOR", "1")
        .env_remove("LOCALITY_PROFILE")
        .current_dir(examples());
    c
}

/// The first character a terminal would act on, or that hides or reorders text, in
/// `bytes` (line breaks allowed), with its offset.
pub fn first_unsafe(bytes: &[u8]) -> Option<(usize, char)> {
    String::from_utf8_lossy(bytes).char_indices().find(|(_, c)| {
        *c != '\n'
            && matches!(*c,
                '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
                | '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{2028}' | '\u{2029}')
    })
}

/// Asserts that neither stdout nor stderr of `out` carries a raw unsafe character, and that
/// it did not panic.
pub fn assert_inert(what: &str, out: &std::process::Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some((at, c)) = first_unsafe(bytes) {
            let text = String::from_utf8_lossy(bytes);
            let around: String = text[..at]
                .chars()
                .rev()
                .take(80)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .chain(text[at..].chars().take(80))
                .collect();
            panic!("{what}: raw {c:?} on {stream} at byte {at}: {around:?}");
        }
    }
    assert_ne!(
        out.status.code(),
        Some(101),
        "{what} panicked: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
