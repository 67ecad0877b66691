//! An [`IngestError`] from a parser's error and what the visitors noted on the way out.

use crate::ctx::Ctx;
use crate::error::{self, ErrorKind, IngestError};

/// Builds an [`IngestError`] from a parser error and what the visitors noted.
pub(crate) fn compose(
    ctx: &Ctx<'_>,
    kind: ErrorKind,
    pos: (u64, u64),
    message: String,
    path: Option<String>,
    doc_label: Option<String>,
    start: Option<(u64, u64)>,
) -> IngestError {
    let failure = std::mem::take(&mut *ctx.failure.borrow_mut());
    let (mut kind, mut pos, mut message) = (kind, pos, message);
    let mut inner_path = String::new();
    if let Some(inner) = failure.inner {
        kind = ErrorKind::Invalid;
        message = inner.message;
        if let Some(off) = inner.offset {
            pos = crate::position::line_col(ctx.base, off);
        } else if inner.at_start
            && let Some(start) = start
        {
            pos = start;
        }
        inner_path = inner.path;
    }
    let item = failure.item.map(|i| {
        if failure.in_items {
            format!("items[{i}]")
        } else {
            format!("[{i}]")
        }
    });
    let mut field = path.unwrap_or_default();
    if let Some(pre) = &item
        && let Some(rest) = field.strip_prefix(pre.as_str())
    {
        field = rest.trim_start_matches('.').to_owned();
    }
    if !inner_path.is_empty() {
        field = if field.is_empty() {
            inner_path
        } else {
            format!("{field}.{inner_path}")
        };
    }
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
        && !field.ends_with(name)
    {
        field = if field.is_empty() {
            name.to_owned()
        } else {
            format!("{field}.{name}")
        };
    }
    if kind == ErrorKind::Limit && !message.starts_with("resource limit") {
        message = format!("resource limit exceeded (nesting too deep or an alias bomb?): {message}");
    }
    if field.len() > 160 {
        let cut = field.len() - 150;
        let cut = (cut..field.len())
            .find(|&i| field.is_char_boundary(i))
            .unwrap_or(field.len());
        field = format!("…{}", &field[cut..]);
    }
    let subject = match (doc_label, item) {
        (Some(d), Some(i)) => Some(format!("{d}, {i}")),
        (d, i) => d.or(i),
    };
    IngestError::new(error::Details {
        kind,
        file: ctx.file.to_owned(),
        line: pos.0,
        column: pos.1,
        subject,
        object: failure.object,
        field: (!field.is_empty()).then_some(field),
        message,
        first_definition: None,
    })
}
