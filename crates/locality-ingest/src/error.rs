//! [`IngestError`]: one clear line naming the file, line:column, object and field.

use std::fmt;

/// What went wrong, broadly (the CLI maps every kind to exit code 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The path could not be read (missing, unreadable, a directory without inputs).
    Io,
    /// The input holds no objects (empty file, empty stdin, only comments).
    Empty,
    /// Not UTF-8 text (binary data, UTF-16).
    Encoding,
    /// Not well-formed JSON or YAML (truncated, syntax error, too deeply nested).
    Syntax,
    /// Well-formed, but not a valid Kubernetes object of the expected shape (wrong type,
    /// missing field, invalid IP, port out of range, unsupported apiVersion…).
    Invalid,
    /// The same object (kind, namespace, name) appears twice.
    Duplicate,
    /// A resource limit was hit (YAML alias bomb, budget).
    Limit,
}

/// An input error: where it is, which object and field, and what is wrong.
///
/// Displays as one line:
/// `FILE:LINE:COL: SUBJECT (KIND NS/NAME): MESSAGE at FIELD.PATH`, where the parts that
/// are unknown are left out, e.g.
///
/// ```text
/// dump.json:12:7: items[3] (Pod default/web-1): missing field `name` at metadata.name
/// pods.yaml:4:9: document 1 (Service default/web): port number 70000 out of range (1-65535) at spec.ports[0].port
/// missing.json: cannot read: No such file or directory (os error 2)
/// ```
///
/// Lines are 1-based; columns are 1-based (bytes for JSON, characters for YAML). Parts
/// are available through the accessors ([`IngestError::line`], [`IngestError::field`]…).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct IngestError(Box<Details>);

/// The fields of an [`IngestError`] (boxed: errors are rare, results stay small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Details {
    pub kind: ErrorKind,
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub subject: Option<String>,
    pub object: Option<String>,
    pub field: Option<String>,
    pub message: String,
    pub first_definition: Option<String>,
}

impl IngestError {
    /// Wraps the details.
    pub(crate) fn new(d: Details) -> Self {
        IngestError(Box::new(d))
    }

    /// An error about a whole file (no position).
    pub(crate) fn file(kind: ErrorKind, file: &str, message: impl Into<String>) -> Self {
        IngestError::new(Details {
            kind,
            file: file.to_owned(),
            line: 0,
            column: 0,
            subject: None,
            object: None,
            field: None,
            message: message.into(),
            first_definition: None,
        })
    }

    /// Sets the position.
    pub(crate) fn at(mut self, line: u64, column: u64) -> Self {
        self.0.line = line;
        self.0.column = column;
        self
    }

    /// Broad category.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// File path as given, `-` for stdin.
    pub fn file_name(&self) -> &str {
        &self.0.file
    }

    /// 1-based line, 0 when unknown.
    pub fn line(&self) -> u64 {
        self.0.line
    }

    /// 1-based column, 0 when unknown (bytes for JSON, characters for YAML).
    pub fn column(&self) -> u64 {
        self.0.column
    }

    /// Where in the file, as a path to the object: `items[3]`, `[2]` (top-level array),
    /// `document 1` (YAML stream); `None` for a single top-level object.
    pub fn subject(&self) -> Option<&str> {
        self.0.subject.as_deref()
    }

    /// `Kind namespace/name` of the object, when known.
    pub fn object(&self) -> Option<&str> {
        self.0.object.as_deref()
    }

    /// Field path inside the object (`spec.ports[0].port`), when known.
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// For duplicates: where the first definition is (`FILE:LINE:COL (items[0])`).
    pub fn first_definition(&self) -> Option<&str> {
        self.0.first_definition.as_deref()
    }

    /// `FILE:LINE:COL` (or less when unknown).
    pub fn location(&self) -> String {
        let d = &self.0;
        match (d.line, d.column) {
            (0, _) => d.file.clone(),
            (l, 0) => format!("{}:{l}", d.file),
            (l, c) => format!("{}:{l}:{c}", d.file),
        }
    }
}

impl fmt::Display for IngestError {
    /// One line, always: control characters that came from the input (a name or key
    /// holding a newline, a parser's multi-line message) are shown escaped (`\n`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        let mut line = String::new();
        write!(line, "{}: ", self.location())?;
        let d = &self.0;
        match (&d.subject, &d.object) {
            (Some(s), Some(o)) => write!(line, "{s} ({o}): ")?,
            (Some(s), None) => write!(line, "{s}: ")?,
            (None, Some(o)) => write!(line, "{o}: ")?,
            (None, None) => {}
        }
        line.push_str(&d.message);
        if let Some(p) = d.field.as_deref().filter(|p| !p.is_empty()) {
            write!(line, " at {p}")?;
        }
        if let Some(first) = &d.first_definition {
            write!(line, " (first defined at {first})")?;
        }
        for c in line.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

/// `a.b[3].c` from a `serde_path_to_error` path (empty for the root).
pub(crate) fn format_path(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            serde_path_to_error::Segment::Seq { index } => {
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
            serde_path_to_error::Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(variant);
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}

/// serde_json's message without its ` at line L column C` suffix.
pub(crate) fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match s.strip_suffix(&suffix) {
        Some(m) => m.to_owned(),
        None => s,
    }
}
