//! The bad-input catalogue: every malformed input gives one clear [`IngestError`] naming
//! the file, the line:column (when the input has one) and the field when known; none
//! panics and none is accepted as something else.

use std::path::PathBuf;

use locality_ingest::{ErrorKind, IngestError, LoadOptions, load_bytes};

#[path = "bad_input/changing.rs"]
mod changing;
mod fields;
#[path = "bad_input/mutations.rs"]
mod mutations;
#[path = "bad_input/names.rs"]
mod names;
mod syntax;

/// Loads `input` as `name` and returns the error (fails the test if it loads).
fn err(name: &str, input: impl AsRef<[u8]>) -> IngestError {
    match load_bytes(name, input.as_ref(), &LoadOptions::default()) {
        Ok(l) => panic!("{name} must not load, but gave {:?}", l.state),
        Err(e) => e,
    }
}

/// Asserts position, field, message fragment and kind, and that the one-line display
/// starts with `name:line:col`.
#[track_caller]
fn check(e: &IngestError, line: u64, col: u64, field: Option<&str>, msg: &str, kind: ErrorKind) {
    let shown = e.to_string();
    assert!(!shown.contains('\n'), "one line: {shown}");
    assert_eq!((e.line(), e.column()), (line, col), "position of: {shown}");
    assert!(
        shown.starts_with(&format!("{}:{line}:{col}: ", e.file_name())),
        "{shown}"
    );
    assert_eq!(e.field(), field, "field of: {shown}");
    assert!(shown.contains(msg), "message {msg:?} in: {shown}");
    assert_eq!(e.kind(), kind, "kind of: {shown}");
}

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}"#;

#[test]
fn the_catalogue_never_panics_on_prefixes() {
    // Every prefix of a realistic dump is either valid or a clean error.
    let text = std::fs::read(fixture("kubectl-list.json")).expect("fixture");
    for cut in (0..text.len()).step_by(97) {
        let _ = load_bytes("cut.json", &text[..cut], &LoadOptions::default());
    }
    let text = std::fs::read(fixture("multi-doc.yaml")).expect("fixture");
    for cut in 0..text.len() {
        let _ = load_bytes("cut.yaml", &text[..cut], &LoadOptions::default());
    }
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn tempdir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("locality-ingest-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
