//! Malformed documents: JSON and YAML syntax, empty and binary inputs, nesting and size limits,
//! encodings, several values in one document.

use super::{POD, check, err, tempdir};
use locality_ingest::{ErrorKind, LoadOptions, load_paths};

#[test]
fn truncated_json() {
    let e = err(
        "dump.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"",
    );
    check(
        &e,
        2,
        54,
        Some("metadata"),
        "EOF while parsing an object",
        ErrorKind::Syntax,
    );
    assert_eq!(e.subject(), Some("items[0]"));
    assert_eq!(e.file_name(), "dump.json");
}

#[test]
fn yaml_syntax_error() {
    let e = err(
        "bad.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n labels: {}\n",
    );
    assert_eq!(e.kind(), ErrorKind::Syntax, "{e}");
    assert_eq!(e.line(), 5, "{e}");
    assert!(e.to_string().starts_with("bad.yaml:5:"), "{e}");
}

#[test]
fn yaml_unclosed_flow_sequence() {
    let e = err(
        "bad.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n",
    );
    check(
        &e,
        4,
        9,
        Some("metadata.name"),
        "expected string",
        ErrorKind::Syntax,
    );
}

#[test]
fn list_items_not_objects() {
    let e = err("list.json", r#"{"apiVersion":"v1","kind":"List","items":[1, 2]}"#);
    check(
        &e,
        1,
        43,
        None,
        "invalid type: integer `1`, expected a Kubernetes object",
        ErrorKind::Invalid,
    );
    assert_eq!(e.subject(), Some("items[0]"));
}

#[test]
fn top_level_array_of_strings() {
    let e = err("arr.json", r#"["a"]"#);
    check(&e, 1, 4, None, "expected a Kubernetes object", ErrorKind::Invalid);
    assert_eq!(e.subject(), Some("[0]"));
}

#[test]
fn struct_written_as_a_sequence_is_refused() {
    // serde's derived structs would read `[..]` positionally; we refuse it.
    let e = err("pod.json", format!("{POD},\"spec\":[\"node-a\", true]}}"));
    check(
        &e,
        1,
        79,
        Some("spec"),
        "invalid type: sequence, expected a map",
        ErrorKind::Invalid,
    );
    let e = err(
        "pod.json",
        format!("{POD},\"status\":{{\"conditions\":[[\"Ready\",\"True\"]]}}}}"),
    );
    assert_eq!(e.field(), Some("status.conditions[0]"), "{e}");
}

#[test]
fn binary_garbage() {
    let e = err("blob.bin", b"\x00\x01\xff\xfe\x80garbage");
    check(&e, 1, 3, None, "not UTF-8 text", ErrorKind::Encoding);
    let e = err("ctrl.yaml", b"\x00\x01\x02\x03");
    assert_eq!(e.file_name(), "ctrl.yaml");
    assert!(e.line() >= 1, "{e}");
}

#[test]
fn empty_file() {
    let e = err("empty.json", "  \n\t\n");
    assert_eq!(e.kind(), ErrorKind::Empty);
    assert_eq!(e.to_string(), "empty.json: empty file: no Kubernetes objects");
}

#[test]
fn empty_stdin() {
    let e = err("-", "");
    assert_eq!(e.kind(), ErrorKind::Empty);
    assert_eq!(e.to_string(), "-: empty input on stdin: no Kubernetes objects");
}

#[test]
fn comments_only_yaml() {
    let e = err("c.yaml", "# nothing here\n---\n# nor here\n");
    assert_eq!(e.kind(), ErrorKind::Empty, "{e}");
}

#[test]
fn null_only_yaml() {
    let e = err("n.yaml", "null\n--- ~\n");
    check(&e, 1, 1, None, "every YAML document is null", ErrorKind::Empty);
}

#[test]
fn directory_without_inputs() {
    let dir = tempdir("noinputs");
    std::fs::write(dir.join("README.md"), "hello").expect("write");
    let e = load_paths(&[&dir], &LoadOptions::default()).expect_err("no inputs");
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(
        e.to_string()
            .ends_with(": directory contains no .json, .yaml or .yml files"),
        "{e}"
    );
    assert_eq!(e.file_name(), dir.display().to_string());
}

#[test]
fn nonexistent_path() {
    let e = load_paths(&["/nonexistent/locality/dump.json"], &LoadOptions::default()).expect_err("missing");
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/locality/dump.json: cannot read: "),
        "{e}"
    );
}

#[test]
fn deeply_nested_json() {
    // As a document: refused at the first level, no recursion.
    let deep = "[".repeat(200_000);
    let e = err("deep.json", &deep);
    assert_eq!((e.line(), e.column()), (1, 1), "{e}");
    // Inside an object field we skip: skipped iteratively, then the truncation is reported.
    let e = err("deep2.json", format!("{POD},\"x\":{deep}"));
    check(
        &e,
        1,
        (POD.len() + 5 + 200_000) as u64,
        Some("x"),
        "EOF while parsing",
        ErrorKind::Syntax,
    );
    // Where a value is materialised (YAML-style buffering is recursive): the depth limit.
    let nested = format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    let e = err("deep3.json", format!("[{{\"spec\":{nested},\"kind\":\"Pod\"}}]"));
    assert_eq!(e.file_name(), "deep3.json");
    assert!(e.line() == 1 && e.column() > 0, "{e}");
}

#[test]
fn deeply_nested_yaml() {
    let mut block = String::new();
    for i in 0..500 {
        block.push_str(&"  ".repeat(i));
        block.push_str("a:\n");
    }
    let e = err("deep.yaml", &block);
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    assert_eq!(e.line(), 129, "{e}");
    assert!(e.to_string().contains("Depth"), "{e}");
    let e = err("flow.yaml", format!("x: {}", "[".repeat(100_000)));
    assert!(matches!(e.kind(), ErrorKind::Limit | ErrorKind::Syntax), "{e}");
    assert_eq!(e.line(), 1, "{e}");
}

#[test]
fn huge_line() {
    // 64 MiB on one line, then a syntax error at its end: the column is exact and the
    // error is clean (the same code path reads a 1 GiB line from one buffer, no copies).
    let n = 64 << 20;
    let mut s = String::with_capacity(n + 200);
    s.push_str(POD);
    s.push_str(",\"x\":\"");
    s.extend(std::iter::repeat_n('a', n));
    s.push_str("\" oops}");
    let e = err("huge.json", &s);
    let col = (POD.len() + 6 + n + 3) as u64; // the `o` of `oops`
    check(&e, 1, col, None, "expected `,` or `}`", ErrorKind::Syntax);
}

#[test]
fn alias_bomb() {
    let bomb = r#"a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"#;
    let start = std::time::Instant::now();
    let e = err("bomb.yaml", bomb);
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    assert!(e.line() >= 1 && e.line() <= 9, "{e}");
    assert!(start.elapsed().as_secs() < 20, "stopped early");
}

#[test]
fn non_utf8_yaml_file() {
    let e = err(
        "latin1.yaml",
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: caf\xe9\n",
    );
    check(&e, 4, 12, None, "not UTF-8 text", ErrorKind::Encoding);
}

#[test]
fn non_utf8_json_string() {
    let e = err(
        "latin1.json",
        b"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"caf\xe9\"}}",
    );
    check(
        &e,
        1,
        56,
        Some("metadata.name"),
        "invalid unicode code point",
        ErrorKind::Syntax,
    );
}

#[test]
fn utf16_input() {
    let e = err("w.json", b"\xff\xfe{\x00");
    assert_eq!(e.kind(), ErrorKind::Encoding);
    assert!(e.to_string().contains("UTF-16"), "{e}");
}

#[test]
fn yaml_document_is_a_scalar() {
    let e = err(
        "s.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\njust a string\n",
    );
    check(&e, 5, 1, None, "expected a Kubernetes object", ErrorKind::Invalid);
    assert_eq!(e.subject(), Some("document 1"));
}

#[test]
fn yaml_duplicate_keys() {
    let e = err(
        "k.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nmetadata: {name: t}\n",
    );
    check(
        &e,
        4,
        1,
        None,
        "duplicate mapping key: metadata",
        ErrorKind::Syntax,
    );
}

#[test]
fn concatenated_json_values() {
    let e = err(
        "two.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"}}\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"b\"}}",
    );
    check(&e, 2, 1, None, "trailing characters", ErrorKind::Syntax);
}

#[test]
fn item_kind_differs_from_typed_list() {
    let e = err(
        "l.json",
        r#"{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Service","metadata":{"name":"s"}}]}"#,
    );
    check(
        &e,
        1,
        62,
        Some("kind"),
        "item of kind Service in a PodList",
        ErrorKind::Invalid,
    );
}
