//! The one display path for text that came from outside (object names and annotations, file
//! names, the API server's answers, a credential plugin's stderr) on its way to a terminal.
//!
//! - [`term`] / [`Term`]: every character a terminal would act on or that hides or reorders
//!   text is written visibly instead: C0 controls (`\n`, `\r`, `\t`, `\x1b`, …), DEL
//!   (`\x7f`), C1 controls (`\u{85}`), the bidi overrides, embeddings, isolates and marks
//!   (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), the zero-width characters
//!   (U+200B–U+200D, U+2060, U+FEFF) and the line and paragraph separators (U+2028, U+2029).
//! - [`server_text`]: the API server's (or a plugin's) text: the credentials locality sent
//!   masked, shortened to [`SERVER_TEXT_CHARS`] with a `… (N bytes)` marker, then [`term`].
//! - [`pad`] / [`pad_left`]: padded columns of any width (`format!`'s width stops at 65,535
//!   and panics beyond).
//! - [`Terminal`]: a writer that applies the same escaping to everything a text report
//!   writes, letting through only line breaks and the colour sequences of
//!   [`crate::style`]: what a text writer forgot to escape still reaches the terminal inert.
//!
//! docs/untrusted-input.md lists what is escaped and the limits.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

/// Server text is shortened to this many characters before it is quoted.
pub const SERVER_TEXT_CHARS: usize = 300;

/// Whether `c` is written escaped (see the [module](self) documentation).
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        | '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{2028}' | '\u{2029}')
}

fn escape_char(c: char, out: &mut impl fmt::Write) -> fmt::Result {
    match c {
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        '\u{0}'..='\u{1f}' | '\u{7f}' => write!(out, "\\x{:02x}", c as u32),
        _ => write!(out, "\\u{{{:x}}}", c as u32),
    }
}

/// `text` with every unsafe character escaped visibly (`\x1b`, `\n`, `\u{202e}`); borrowed
/// when there is none.
pub fn term(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let _ = write!(&mut out as &mut dyn fmt::Write, "{}", Term(text));
    Cow::Owned(out)
}

/// [`term`] as a `Display` value, for `format!` arguments.
#[derive(Debug, Clone, Copy)]
pub struct Term<'a>(pub &'a str);

impl fmt::Display for Term<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(is_unsafe) {
            f.write_str(&rest[..i])?;
            let c = rest[i..].chars().next().unwrap_or_default();
            escape_char(c, f)?;
            rest = &rest[i + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

/// Each line of `text` escaped with [`term`], the line breaks kept: for messages made of
/// lines (an error and its source snippet).
pub fn term_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&term(line));
    }
    out
}

/// `text` cut to `max` characters with a `… (N bytes)` marker (N: the whole text's length),
/// unchanged when it is short enough.
pub fn shorten(text: &str, max: usize) -> Cow<'_, str> {
    shorten_of(text, max, text.len())
}

/// As [`shorten`], the marker giving `total` (the length of the text before masking).
fn shorten_of(text: &str, max: usize, total: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}… ({total} bytes)", &text[..cut])),
    }
}

/// Text written by a server or a plugin, ready to quote: every secret in `secrets` (the
/// token or credential locality sent; empty ones ignored) replaced by `[masked]`, then
/// shortened ([`shorten`], [`SERVER_TEXT_CHARS`]) and escaped ([`term`]).
pub fn server_text(text: &str, secrets: &[&str]) -> String {
    let mut masked = Cow::Borrowed(text);
    for s in secrets.iter().filter(|s| s.len() >= 4) {
        if masked.contains(s) {
            masked = Cow::Owned(masked.replace(s, "[masked]"));
        }
    }
    let masked = mask_assignments(&masked);
    term(&shorten_of(masked.trim(), SERVER_TEXT_CHARS, text.len())).into_owned()
}

/// Words that name a secret: the value given to one (`password=…`, `token: …`) is masked.
const SECRET_WORDS: [&str; 7] = [
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "credential",
];

/// `text` with the value after every `WORD=` or `WORD:` whose word names a secret
/// ([`SECRET_WORDS`], any case, as the end of a longer key too: `db_password=`) replaced by
/// `[masked]`, up to the next space, quote, comma or semicolon.
pub fn mask_assignments(text: &str) -> Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    let mut out = String::new();
    let mut copied = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let hit = SECRET_WORDS.iter().find(|w| lower[i..].starts_with(*w));
        let Some(word) = hit else {
            // On to the next character (the secret words are ASCII).
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let mut j = i + word.len();
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'"' || bytes[j] == b'\'') {
            j += 1;
        }
        if j >= bytes.len() || !matches!(bytes[j], b'=' | b':') {
            i += word.len();
            continue;
        }
        j += 1;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'"' | b'\'') {
            j += 1;
        }
        let end = text[j..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '&'))
            .map_or(text.len(), |e| j + e);
        if end > j {
            out.push_str(&text[copied..j]);
            out.push_str("[masked]");
            copied = end;
        }
        i = end.max(i + word.len());
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `text` followed by spaces up to `width` characters (nothing added when it is longer):
/// `format!("{text:<width$}")` without its 65,535 limit.
pub fn pad(text: &str, width: usize) -> String {
    let n = text.chars().count();
    let mut s = String::with_capacity(text.len() + width.saturating_sub(n));
    s.push_str(text);
    s.extend(std::iter::repeat_n(' ', width.saturating_sub(n)));
    s
}

/// Spaces up to `width` characters, then `text`: `format!("{text:>width$}")` without its
/// limit.
pub fn pad_left(text: &str, width: usize) -> String {
    let n = text.chars().count();
    let mut s = String::with_capacity(text.len() + width.saturating_sub(n));
    s.extend(std::iter::repeat_n(' ', width.saturating_sub(n)));
    s.push_str(text);
    s
}

/// `text` for a Markdown line or table cell that GitHub renders inert: escaped as
/// [`term`] first, then every character Markdown acts on (`\\`, `` ` ``, `*`, `_`, `[`,
/// `]`, `<`, `>`, `|`, `#`, `~`) backslash-escaped, and every `@name` (a user or
/// `@org/team` mention, which would notify) put in a code span, where GitHub does not
/// mention.
pub fn markdown(text: &str) -> String {
    let text = term(text);
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '@' => {
                out.push_str("`@");
                while let Some(&n) = chars.peek() {
                    if !(n.is_alphanumeric() || matches!(n, '-' | '_' | '/' | '.')) {
                        break;
                    }
                    out.push(n);
                    chars.next();
                }
                out.push('`');
            }
            _ => out.push(c),
        }
    }
    out
}

/// `text` for XML (SVG) content and quoted attributes: escaped as [`term`] first (XML 1.0
/// cannot carry most C0 controls at all), then `&`, `<`, `>`, `"` and `'` as entities.
pub fn xml(text: &str) -> String {
    html_escape::encode_quoted_attribute(&term(text)).into_owned()
}

/// A writer for text outputs on their way to a terminal or a text file: everything written
/// is escaped as [`term`] does, except line breaks and SGR colour sequences (`ESC [ … m`,
/// what [`crate::style::Paint`] writes). Text is passed on line by line (a partial UTF-8
/// character or colour sequence waits for its end); [`flush`](Write::flush) passes the rest.
pub struct Terminal<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Terminal<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        Terminal {
            inner,
            pending: Vec::new(),
        }
    }

    /// Passes on the pending bytes up to `end`.
    fn pass(&mut self, end: usize) -> io::Result<()> {
        let chunk: Vec<u8> = self.pending.drain(..end).collect();
        let text = String::from_utf8_lossy(&chunk);
        let mut out = String::with_capacity(text.len());
        let mut rest: &str = &text;
        while let Some(i) = rest.find(|c: char| c != '\n' && is_unsafe(c)) {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            let sgr = sgr_len(tail.as_bytes());
            if sgr > 0 {
                out.push_str(&tail[..sgr]);
                rest = &tail[sgr..];
            } else {
                let c = tail.chars().next().unwrap_or_default();
                let _ = escape_char(c, &mut out);
                rest = &tail[c.len_utf8()..];
            }
        }
        out.push_str(rest);
        self.inner.write_all(out.as_bytes())
    }

    /// How many pending bytes can be passed on now: up to the last line break, keeping back
    /// an unfinished colour sequence or UTF-8 character at the end.
    fn ready(&self) -> usize {
        let p = &self.pending;
        if p.len() < 64 * 1024 {
            return p.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        }
        let mut end = p.len();
        if let Some(esc) = p[end.saturating_sub(32)..].iter().rposition(|&b| b == 0x1b) {
            let at = end.saturating_sub(32) + esc;
            if !p[at..].contains(&b'm') {
                end = at;
            }
        }
        while end > 0 && end < p.len() && (p[end] & 0xc0) == 0x80 {
            end -= 1;
        }
        end
    }
}

/// The length of the SGR sequence `ESC [ digits/semicolons m` at the start of `b`, or 0.
fn sgr_len(b: &[u8]) -> usize {
    if b.len() < 3 || b[0] != 0x1b || b[1] != b'[' {
        return 0;
    }
    for (i, &c) in b.iter().enumerate().skip(2).take(32) {
        match c {
            b'm' => return i + 1,
            b'0'..=b'9' | b';' => {}
            _ => return 0,
        }
    }
    0
}

impl<W: Write> Write for Terminal<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let end = self.ready();
        if end > 0 {
            self.pass(end)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let end = self.pending.len();
        if end > 0 {
            self.pass(end)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Terminal<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_zero_width_are_escaped_visibly() {
        assert_eq!(term("plain name-1"), "plain name-1");
        assert!(matches!(term("plain"), Cow::Borrowed(_)));
        assert_eq!(
            term("a\u{1b}]0;title\u{7}b\nc\rd\te\u{7f}"),
            "a\\x1b]0;title\\x07b\\nc\\rd\\te\\x7f"
        );
        assert_eq!(term("\u{85}\u{9b}"), "\\u{85}\\u{9b}");
        assert_eq!(
            term("x\u{202e}y\u{2066}z\u{200e}\u{061c}"),
            "x\\u{202e}y\\u{2066}z\\u{200e}\\u{61c}"
        );
        assert_eq!(
            term("\u{200b}\u{200d}\u{2060}\u{feff}"),
            "\\u{200b}\\u{200d}\\u{2060}\\u{feff}"
        );
        // Ordinary non-ASCII text stays.
        assert_eq!(term("zone → ü 東京"), "zone → ü 東京");
        assert_eq!(term_lines("a\u{1b}\nb"), "a\\x1b\nb");
    }

    #[test]
    fn server_text_is_masked_shortened_and_escaped() {
        let long = format!("token abcd1234secret {}", "\u{1b}[2J".repeat(1000));
        let shown = server_text(&long, &["abcd1234secret", ""]);
        assert!(!shown.contains("abcd1234secret"), "{shown}");
        assert!(shown.contains("[masked]"));
        assert!(shown.ends_with(&format!("… ({} bytes)", long.len())), "{shown}");
        assert!(!shown.contains('\u{1b}'));
        assert!(shown.chars().count() < SERVER_TEXT_CHARS * 4 + 40);
        assert_eq!(server_text(" short ", &[]), "short");
        assert_eq!(
            server_text(
                "login failed: password=hunter2 user=bob; DB_PASSWORD: \"s3cr3t\" token=abc",
                &[]
            ),
            "login failed: password=[masked] user=bob; DB_PASSWORD: \"[masked]\" token=[masked]"
        );
        assert_eq!(
            mask_assignments("no secrets here: tokens are fine"),
            "no secrets here: tokens are fine"
        );
        assert_eq!(
            mask_assignments("\u{202e}é token=ü x"),
            "\u{202e}é token=[masked] x"
        );
    }

    #[test]
    fn markdown_stays_inert() {
        assert_eq!(markdown("cc @org/team-a, ok"), "cc `@org/team-a`, ok");
        assert_eq!(markdown("a|b\n# H *x*"), "a\\|b\\\\n\\# H \\*x\\*");
        assert!(!markdown("\u{1b}[2J").contains('\u{1b}'));
        assert_eq!(xml("a<b>&\u{1}"), "a&lt;b&gt;&amp;\\x01");
    }

    #[test]
    fn padding_has_no_width_limit() {
        let name = "n".repeat(70_000);
        assert_eq!(pad(&name, 70_005).len(), 70_005);
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad("abcdef", 4), "abcdef");
        assert_eq!(pad_left("7", 3), "  7");
    }

    #[test]
    fn the_terminal_writer_keeps_colours_and_line_breaks_only() {
        let mut out = Vec::new();
        {
            let mut t = Terminal::new(&mut out);
            t.write_all(b"\x1b[1;31mDROP\x1b[0m a\x1b]0;t\x07\n").unwrap();
            // A character and a colour split between writes.
            let bidi = "\u{202e}".as_bytes();
            t.write_all(&bidi[..1]).unwrap();
            t.write_all(&bidi[1..]).unwrap();
            t.write_all(b"x\x1b[2Jy\r\n").unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\x1b[1;31mDROP\x1b[0m a\\x1b]0;t\\x07\n\\u{202e}x\\x1b[2Jy\\r\n"
        );
    }
}
