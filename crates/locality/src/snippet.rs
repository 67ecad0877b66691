//! The source snippet under an input error: the lines around `FILE:LINE:COL`, the column
//! marked and labelled with the field, rendered by `miette` below the one-line message.
//!
//! Only for regular files small enough to read again ([`MAX_SNIPPET_FILE`]); stdin, special
//! files and large dumps keep the one line, which already names file, line, column and field.

use locality_ingest::IngestError;
use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource, SourceSpan};

/// Files larger than this are not read again for a snippet.
pub const MAX_SNIPPET_FILE: u64 = 4 << 20;

/// Longest line shown in full; a longer one (compact JSON) gives no snippet.
const MAX_LINE: usize = 400;

/// What [`render`] draws: the file's text, where, and the label.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{label}")]
struct Snippet {
    #[source_code]
    src: NamedSource<String>,
    #[label("{label}")]
    at: SourceSpan,
    label: String,
}

/// The snippet under `e`, rendered (no colour when `color` is false), or `None` when the
/// error has no position or the file cannot be shown.
pub fn for_ingest_error(e: &IngestError, color: bool) -> Option<String> {
    let (line, column) = (e.line(), e.column());
    let path = e.file_name();
    if line == 0 || path == "-" {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_SNIPPET_FILE {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let offset = byte_offset(&text, line, column.max(1))?;
    // The file's lines are shown escaped (locality_report::display), the mark moved with
    // them: a control character in the input is not acted on below the message either.
    let offset = locality_report::display::term_lines(&text[..offset]).len();
    let text = locality_report::display::term_lines(&text);
    let label = match e.field().filter(|f| !f.is_empty()) {
        Some(field) => field.to_string(),
        None => "here".to_string(),
    };
    render(
        &Snippet {
            src: NamedSource::new(path, text),
            at: SourceSpan::from((offset, 1)),
            label,
        },
        color,
    )
}

/// The byte offset of 1-based `line` and `column` (characters, which are bytes in ASCII
/// JSON), or `None` past the end or on a line too long to show.
fn byte_offset(text: &str, line: u64, column: u64) -> Option<usize> {
    let start = if line == 1 {
        0
    } else {
        let nth = usize::try_from(line - 2).ok()?;
        text.match_indices('\n').nth(nth)?.0 + 1
    };
    let rest = &text[start..];
    let this = rest.split('\n').next().unwrap_or("");
    if this.len() > MAX_LINE {
        return None;
    }
    let col = usize::try_from(column - 1).ok()?;
    let within = this.char_indices().nth(col).map_or(this.len(), |(i, _)| i);
    Some(start + within)
}

/// The snippet drawn, without miette's heading line (the caller prints its own message).
fn render(d: &Snippet, color: bool) -> Option<String> {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let mut out = String::new();
    GraphicalReportHandler::new_themed(theme)
        .with_context_lines(1)
        .with_width(100)
        .render_report(&mut out, d)
        .ok()?;
    // The first line repeats the label as the diagnostic's message.
    let body: Vec<&str> = out.lines().skip(1).collect();
    (!body.is_empty()).then(|| body.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_lines_and_characters() {
        let text = "a: 1\nbé: x\nc: 3\n";
        assert_eq!(byte_offset(text, 1, 1), Some(0));
        assert_eq!(byte_offset(text, 2, 3), Some(8));
        assert_eq!(byte_offset(text, 3, 1), Some(12));
        assert_eq!(byte_offset(text, 9, 1), None);
        let long = format!("{}\n", "x".repeat(MAX_LINE + 1));
        assert_eq!(byte_offset(&long, 1, 5), None);
    }

    #[test]
    fn the_snippet_marks_the_column_and_names_the_field() {
        let d = Snippet {
            src: NamedSource::new(
                "svc.yaml",
                "kind: Service\nspec:\n  ports:\n  - port: 70000\n".to_string(),
            ),
            at: SourceSpan::from((
                byte_offset("kind: Service\nspec:\n  ports:\n  - port: 70000\n", 4, 11).unwrap(),
                1,
            )),
            label: "spec.ports[0].port".into(),
        };
        let s = render(&d, false).unwrap();
        assert!(s.contains("svc.yaml:4:11"), "{s}");
        assert!(s.contains("4 │   - port: 70000"), "{s}");
        assert!(s.contains("spec.ports[0].port"), "{s}");
        assert!(!s.contains('×'), "{s}");
    }
}
