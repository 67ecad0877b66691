//! Streams (stdin, a FIFO, a device given with `-f`) are read up to a limit, and stop as
//! soon as what arrived cannot be one Kubernetes input, instead of buffering an endless
//! stream to the limit:
//!
//! - binary data (a NUL byte in the first [`SNIFF`] bytes, as from `/dev/zero`);
//! - JSON (the first byte is `{` or `[`) is one value: once it closes, the first byte
//!   that is not whitespace ends the reading, and the parse reports it where it is (as
//!   serde_json's "trailing characters"), e.g. `yes '{"kind": …}'`;
//! - YAML whose first content line is neither a mapping key, a sequence item nor a flow
//!   collection is a scalar, not an object (`yes` prints `y` forever);
//! - YAML in which a top-level key repeats within one document (`yes 'a: b'`): the
//!   reading stops after that line and the parse reports the duplicate key there.
//!
//! An endless stream of valid, distinct objects stops at the limit.

use std::io::Read;

use crate::error::{ErrorKind, IngestError};

/// The first bytes a stream is checked with before more is read.
const SNIFF: usize = 64 << 10;

/// Bytes read at a time after the first [`SNIFF`].
const STEP: usize = 1 << 20;

/// Reads a stream up to `limit` bytes (see the module docs for when it stops early).
pub(crate) fn read(mut r: impl Read, name: &str, limit: u64) -> Result<Vec<u8>, IngestError> {
    let io = |e: std::io::Error| IngestError::file(ErrorKind::Io, name, format!("cannot read: {e}"));
    let mut buf = Vec::new();
    (&mut r).take(SNIFF as u64).read_to_end(&mut buf).map_err(io)?;
    if let Some(at) = buf.iter().position(|b| *b == 0) {
        return Err(IngestError::file(
            ErrorKind::Encoding,
            name,
            format!("binary data (a NUL byte at offset {at}), not JSON or YAML"),
        ));
    }
    let text = crate::position::strip_bom(&buf);
    let bom = buf.len() - text.len();
    let mut yaml = YamlKeys::default();
    let mut json = match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{' | b'[') => Some(JsonEnd::default()),
        Some(_) => {
            if let Some((line, shown)) = scalar_start(text) {
                return Err(IngestError::file(
                    ErrorKind::Invalid,
                    name,
                    format!(
                        "not a Kubernetes object: line {line} ({shown:?}) is neither a YAML mapping nor JSON; stopped reading"
                    ),
                )
                .at(line, 1));
            }
            None
        }
        None => None,
    };
    let mut scanned = bom;
    loop {
        let stop = match json.as_mut() {
            // Keep the trailing byte: the parse reports it where it is.
            Some(j) => j.trailing(&buf[scanned..]).map(|at| scanned + at + 1),
            None => yaml.repeated(&buf, scanned),
        };
        if let Some(end) = stop {
            buf.truncate(end);
            return Ok(buf);
        }
        scanned = buf.len();
        let before = buf.len();
        let room = limit.saturating_sub(before as u64).saturating_add(1);
        (&mut r)
            .take(room.min(STEP as u64))
            .read_to_end(&mut buf)
            .map_err(io)?;
        if buf.len() as u64 > limit {
            return Err(crate::files::too_large(name, limit));
        }
        if buf.len() == before {
            return Ok(buf);
        }
    }
}

/// Finds where the first JSON value of a stream ends, as bytes arrive.
#[derive(Default)]
struct JsonEnd {
    depth: u64,
    in_string: bool,
    escaped: bool,
    /// The first value has closed.
    closed: bool,
}

impl JsonEnd {
    /// Feeds the next bytes; the offset in `bytes` of the first byte that is not
    /// whitespace after the first value closed, if any.
    fn trailing(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            if self.closed {
                if !b.is_ascii_whitespace() {
                    return Some(i);
                }
                continue;
            }
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.closed = self.depth == 0;
                }
                _ => {}
            }
        }
        None
    }
}

/// Finds a top-level key that repeats within one YAML document, line by line as bytes
/// arrive.
#[derive(Default)]
struct YamlKeys {
    /// Start of the first line not yet scanned.
    line: usize,
    keys: std::collections::HashSet<Vec<u8>>,
}

impl YamlKeys {
    /// Scans the complete lines of `buf` not yet seen (`new` is where the bytes just read
    /// start); the end (after its newline) of a line whose top-level key repeated.
    fn repeated(&mut self, buf: &[u8], new: usize) -> Option<usize> {
        let mut from = new.max(self.line);
        while let Some(nl) = memchr::memchr(b'\n', &buf[from..]) {
            let end = from + nl + 1;
            let line = &buf[self.line..end - 1];
            self.line = end;
            from = end;
            if line.starts_with(b"---") || line.starts_with(b"...") {
                self.keys.clear();
                continue;
            }
            let Some(first) = line.first() else { continue };
            if first.is_ascii_whitespace() || matches!(first, b'#' | b'-' | b'%' | b'{' | b'[' | b'?') {
                continue;
            }
            let Some(colon) = memchr::memchr(b':', line) else {
                continue;
            };
            let after = line.get(colon + 1);
            if after.is_some_and(|b| !b.is_ascii_whitespace()) {
                continue;
            }
            if !self.keys.insert(line[..colon].to_vec()) {
                return Some(end);
            }
        }
        None
    }
}

/// The first content line of a YAML stream (after blank lines, comments, directives and
/// document markers) when it starts a scalar: its number and its start, shortened.
fn scalar_start(text: &[u8]) -> Option<(u64, String)> {
    let text = String::from_utf8_lossy(text);
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        // The last line may be cut short by the sniff: undecided.
        lines.peek()?;
        let t = line.trim();
        let t = t.strip_prefix("--- ").map_or(t, str::trim);
        if t.is_empty() || t.starts_with('#') || t.starts_with('%') || t == "---" || t == "..." {
            continue;
        }
        let mapping_or_sequence = t == "-"
            || t.starts_with("- ")
            || t.starts_with(['{', '[', '?', '&', '!', '*', '|', '>'])
            || t.ends_with(':')
            || t.contains(": ")
            || t.contains(":\t");
        if mapping_or_sequence {
            return None;
        }
        let shown: String = t.chars().take(40).collect();
        return Some((i as u64 + 1, shown));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_the_first_json_value_is_found_across_reads() {
        let mut j = JsonEnd::default();
        assert_eq!(j.trailing(br#"{"a": "}\"]", "b": [1, {"#), None);
        assert_eq!(j.trailing(b"}]}  \n "), None);
        assert_eq!(j.trailing(b"\n{"), Some(1));
    }

    #[test]
    fn a_repeated_top_level_key_is_found_across_reads() {
        let mut y = YamlKeys::default();
        let mut buf =
            b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n---\nkind: Pod\nki".to_vec();
        assert_eq!(
            y.repeated(&buf, 0),
            None,
            "nested keys and a new document are fine"
        );
        let at = buf.len();
        buf.extend_from_slice(b"nd: x\nkind: Node\n");
        // `kind: x` repeats the second document's `kind`.
        assert_eq!(y.repeated(&buf, at), Some(at + b"nd: x\n".len()));
    }

    #[test]
    fn scalars_are_told_from_objects() {
        assert_eq!(scalar_start(b"y\ny\n"), Some((1, "y".into())));
        assert_eq!(
            scalar_start(b"# c\n---\n\nhello world\n"),
            Some((4, "hello world".into()))
        );
        for object in [
            &b"apiVersion: v1\n"[..],
            b"---\nkind: Pod\n",
            b"- a: b\n",
            b"{\"a\": 1}\n",
            b"key:\n  v\n",
            b"--- \nkind: Pod\n",
            b"y", // cut short: undecided
        ] {
            assert_eq!(scalar_start(object), None, "{}", String::from_utf8_lossy(object));
        }
    }
}
