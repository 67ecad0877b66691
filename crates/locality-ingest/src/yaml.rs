//! YAML input: a stream of documents read with serde-saphyr as kubectl reads YAML
//! (YAML 1.1 octals, `yes`/`no` booleans) under a budget that stops alias bombs.
//!
//! The stream is split into documents at `---` lines (a `---` at column 0 can only be a
//! document marker in YAML), so that each document is parsed with its own budget and the
//! same [`DocSeed`] as JSON, and so that errors and [`locate`](crate::locate) can name the
//! document. Line numbers reported by the parser are relative to the document and are
//! shifted back to the file.

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny};
use serde_saphyr::Spanned;

use crate::ctx::Ctx;
use crate::error::{ErrorKind, IngestError};
use crate::object::DocSeed;
use crate::options::YamlLimits;

/// One document of a stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment<'a> {
    /// Its text, from its first line (a `---` marker included) to the next marker.
    pub text: &'a str,
    /// 1-based line of `text`'s first line in the file.
    pub start_line: u32,
    /// 1-based line of its first content line.
    pub content_line: u32,
}

fn is_marker(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
}

/// Splits a stream into non-empty documents (documents holding only comments, blank
/// lines or a bare `---` are dropped; a directives-only prefix joins the next document).
pub(crate) fn split(text: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut seg_start = 0usize;
    let mut seg_line = 1u32;
    let mut content_line = 0u32;
    let mut has_directive = false;
    let mut started_with_marker = false;
    let mut line_no = 0u32;
    let mut pos = 0usize;
    for line in text.split_inclusive('\n') {
        line_no += 1;
        let line_start = pos;
        pos += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        if is_marker(body) {
            let keep_together = content_line == 0 && has_directive && !started_with_marker;
            if !keep_together {
                if content_line != 0 {
                    out.push(Segment {
                        text: &text[seg_start..line_start],
                        start_line: seg_line,
                        content_line,
                    });
                }
                seg_start = line_start;
                seg_line = line_no;
                content_line = 0;
                has_directive = false;
            }
            started_with_marker = true;
            let rest = body[3..].trim();
            if !rest.is_empty() && !rest.starts_with('#') && content_line == 0 {
                content_line = line_no;
            }
            continue;
        }
        let t = body.trim_start_matches('\u{feff}').trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.starts_with('%') && content_line == 0 {
            has_directive = true;
            continue;
        }
        if content_line == 0 {
            content_line = line_no;
        }
    }
    if content_line != 0 {
        out.push(Segment {
            text: &text[seg_start..],
            start_line: seg_line,
            content_line,
        });
    }
    out
}

/// serde-saphyr options for kubectl-compatible reading under `limits`, for `len` bytes.
pub(crate) fn options(limits: &YamlLimits, len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    // Linear limits scale with the input (a node or event needs at least one byte), so
    // large dumps pass; what input size cannot explain (alias expansion) stays capped.
    let linear = len.saturating_mul(2).saturating_add(1_000_000);
    budget.max_events = linear;
    budget.max_nodes = linear;
    budget.max_total_scalar_bytes = len.saturating_add(64 << 20);
    budget.max_total_comment_bytes = len.saturating_add(64 << 20);
    budget.max_reader_input_bytes = None;
    budget.max_depth = limits.max_depth;
    budget.max_aliases = limits.max_aliases;
    budget.max_anchors = limits.max_aliases;
    let mut o = serde_saphyr::Options::default();
    o.budget = Some(budget);
    o.alias_limits.max_total_replayed_events = limits.max_alias_replay_events;
    o.legacy_octal_numbers = true;
    o.with_snippet = false;
    o
}

/// Reads every document of `text` into `ctx`.
pub(crate) fn load(ctx: &Ctx<'_>, text: &str, limits: &YamlLimits) -> Result<(), IngestError> {
    let segments = split(text);
    if segments.is_empty() {
        return Err(IngestError::file(
            ErrorKind::Empty,
            ctx.file,
            "no Kubernetes objects: the YAML input holds only comments or empty documents",
        ));
    }
    let many = segments.len() > 1;
    for (i, seg) in segments.iter().enumerate() {
        let doc = u32::try_from(i).unwrap_or(u32::MAX);
        ctx.document.set(doc);
        ctx.doc_line.set(seg.content_line);
        let opts = options(limits, seg.text.len());
        let res = serde_saphyr::with_deserializer_from_str_with_options(seg.text, opts, |de| {
            DocSeed::<serde_json::Value>::new(ctx).deserialize(de)
        });
        if let Err(e) = res {
            return Err(error(ctx, seg, doc, many, &e, limits));
        }
    }
    if ctx.non_null_documents.get() == 0 {
        return Err(IngestError::file(
            ErrorKind::Empty,
            ctx.file,
            "no Kubernetes objects: every YAML document is null",
        )
        .at(u64::from(segments[0].content_line), 1));
    }
    Ok(())
}

/// Builds the error for a failed document (re-parses it once to find the field path).
fn error(
    ctx: &Ctx<'_>,
    seg: &Segment<'_>,
    doc: u32,
    many: bool,
    e: &serde_saphyr::Error,
    limits: &YamlLimits,
) -> IngestError {
    let shift = |(l, c): (u64, u64)| (l + u64::from(seg.start_line) - 1, c);
    let item = ctx.failure.borrow().item;
    let start = locate(seg.text, 0, item).map(shift);
    let (line, column) = match e.location() {
        Some(loc) if loc.line() > 0 => shift((loc.line(), loc.column())),
        _ => start.unwrap_or((u64::from(seg.content_line), 1)),
    };
    let msg = message(e);
    let kind = classify(e, &msg);
    // Path: parse the document again, tracking the path (error path only).
    let ctx2 = Ctx::new(ctx.file, seg.text.as_bytes(), true).counting_pods(ctx.count_pods);
    let mut path = None;
    let _ = serde_saphyr::with_deserializer_from_str_with_options(
        seg.text,
        options(limits, seg.text.len()),
        |de| {
            let mut track = serde_path_to_error::Track::new();
            let r = DocSeed::<serde_json::Value>::new(&ctx2)
                .deserialize(serde_path_to_error::Deserializer::new(de, &mut track));
            path = Some(crate::error::format_path(&track.path()));
            r
        },
    );
    let doc_label = many.then(|| format!("document {doc}"));
    crate::compose::compose(ctx, kind, (line, column), msg, path, doc_label, start)
}

fn classify(e: &serde_saphyr::Error, msg: &str) -> ErrorKind {
    let lower = msg.to_ascii_lowercase();
    if lower.contains("budget")
        || lower.contains("alias") && lower.contains("limit")
        || lower.contains("depth")
    {
        return ErrorKind::Limit;
    }
    match e {
        serde_saphyr::Error::Message { .. }
        | serde_saphyr::Error::SerdeInvalidType { .. }
        | serde_saphyr::Error::SerdeMissingField { .. }
        | serde_saphyr::Error::SerdeInvalidValue { .. }
        | serde_saphyr::Error::SerdeUnknownVariant { .. } => ErrorKind::Invalid,
        _ => ErrorKind::Syntax,
    }
}

/// The parser's message without its location (we print our own).
fn message(e: &serde_saphyr::Error) -> String {
    let s = e.to_string();
    let s = s.lines().next().unwrap_or_default().trim().to_owned();
    let s = s.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    // Plain rendering appends " at line L, column C" (or similar); drop it.
    for pat in [" at line ", ", line ", " (line "] {
        if let Some(i) = s.find(pat) {
            return s[..i].trim_end_matches([',', ':']).to_owned();
        }
    }
    s
}

#[derive(Deserialize)]
struct ListLoc {
    #[serde(default)]
    items: Vec<Spanned<IgnoredAny>>,
}

/// 1-based (line, column) of document `doc` (or of its `item`-th List item / array
/// element) in a YAML stream.
pub(crate) fn locate(text: &str, doc: usize, item: Option<u32>) -> Option<(u64, u64)> {
    let segments = split(text);
    let seg = segments.get(doc)?;
    let Some(item) = item else {
        let line_text = text.lines().nth(seg.content_line as usize - 1)?;
        let col = line_text
            .find(|c: char| !c.is_whitespace() && c != '\u{feff}')
            .unwrap_or(0);
        return Some((u64::from(seg.content_line), col as u64 + 1));
    };
    let opts = options(&YamlLimits::default(), seg.text.len());
    let spans: Vec<Spanned<IgnoredAny>> = match serde_saphyr::from_str_with_options::<ListLoc>(seg.text, opts)
    {
        Ok(l) => l.items,
        Err(_) => {
            serde_saphyr::from_str_with_options(seg.text, options(&YamlLimits::default(), seg.text.len()))
                .ok()?
        }
    };
    let loc = spans.get(item as usize)?.referenced;
    Some((loc.line() + u64::from(seg.start_line) - 1, loc.column()))
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn splits_documents() {
        let s = "# c\n---\na: 1\n---\n# only comment\n---\nb: 2\n--- {c: 3}\n";
        let segs = split(s);
        assert_eq!(segs.len(), 3);
        assert_eq!(segs[0].content_line, 3);
        assert_eq!(segs[1].text, "---\nb: 2\n");
        assert_eq!(segs[1].start_line, 6);
        assert_eq!(segs[2].content_line, 8);
        let d = split("%YAML 1.1\n---\na: 1\n");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].start_line, 1);
        assert!(split("\n# x\n---\n").is_empty());
    }
}
