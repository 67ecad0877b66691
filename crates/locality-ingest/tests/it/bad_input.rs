//! The bad-input catalogue: every malformed input gives one clear [`IngestError`] naming
//! the file, the line:column (when the input has one) and the field when known; none
//! panics and none is accepted as something else.

use std::path::PathBuf;

use locality_ingest::{ErrorKind, IngestError, LoadOptions, load_bytes, load_paths};

#[path = "bad_input/changing.rs"]
mod changing;
#[path = "bad_input/mutations.rs"]
mod mutations;

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
fn ports_is_a_string() {
    let e = err(
        "svc.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\",\"namespace\":\"n\"},\n \"spec\":{\"ports\":\"80\"}}",
    );
    check(
        &e,
        2,
        21,
        Some("spec.ports"),
        "invalid type: string \"80\", expected a sequence",
        ErrorKind::Invalid,
    );
    assert_eq!(e.object(), Some("Service n/s"));
}

#[test]
fn port_is_a_name_not_a_number() {
    let e = err(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports:\n  - port: http\n",
    );
    check(
        &e,
        6,
        5,
        Some("spec.ports[0].port"),
        "expected a port number",
        ErrorKind::Invalid,
    );
}

#[test]
fn replicas_is_not_a_number() {
    let e = err(
        "d.json",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\",\"namespace\":\"n\"},\n \"spec\":{\"replicas\":\"x\"}}",
    );
    check(
        &e,
        2,
        23,
        Some("spec.replicas"),
        "invalid type: string \"x\", expected a non-negative integer",
        ErrorKind::Invalid,
    );
    assert_eq!(
        e.to_string(),
        "d.json:2:23: Deployment n/d: invalid type: string \"x\", expected a non-negative integer at spec.replicas"
    );
}

#[test]
fn toleration_seconds_is_not_an_integer() {
    let e = err(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\nspec:\n  tolerations:\n  - {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: soon}\n",
    );
    check(
        &e,
        6,
        51,
        Some("spec.tolerations[0].tolerationSeconds"),
        "invalid type: string \"soon\", expected an integer",
        ErrorKind::Invalid,
    );
    let e = err(
        "pod.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},\n \"spec\":{\"tolerations\":[{\"effect\":\"NoExecute\",\"tolerationSeconds\":1.5}]}}",
    );
    check(
        &e,
        2,
        69,
        Some("spec.tolerations[0].tolerationSeconds"),
        "invalid type: floating point `1.5`, expected an integer",
        ErrorKind::Invalid,
    );
}

#[test]
fn negative_replicas() {
    let e = err(
        "s.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: n}\nspec:\n  replicas: -1\n",
    );
    check(
        &e,
        5,
        13,
        Some("spec.replicas"),
        "must not be negative",
        ErrorKind::Invalid,
    );
}

#[test]
fn missing_metadata_name_in_a_list() {
    let e = err(
        "dump.json",
        "{\"apiVersion\":\"v1\",\"items\":[\n {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}},\n {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"n\"},\n  \"spec\":{}}\n],\"kind\":\"List\"}",
    );
    check(
        &e,
        3,
        61,
        Some("metadata.name"),
        "missing field `name`",
        ErrorKind::Invalid,
    );
    assert_eq!(e.subject(), Some("items[1]"));
    assert_eq!(
        e.to_string(),
        "dump.json:3:61: items[1] (Pod): missing field `name` at metadata.name"
    );
}

#[test]
fn missing_kind() {
    let e = err(
        "k.json",
        "\n  {\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}",
    );
    check(&e, 2, 3, Some("kind"), "missing field `kind`", ErrorKind::Invalid);
}

#[test]
fn kind_is_not_a_string() {
    let e = err("k.json", r#"{"apiVersion":"v1","kind":5}"#);
    check(
        &e,
        1,
        27,
        Some("kind"),
        "invalid type: integer `5`, expected a string",
        ErrorKind::Invalid,
    );
}

#[test]
fn missing_api_version_for_a_known_kind() {
    let e = err("k.json", r#"{"kind":"Pod","metadata":{"name":"a"}}"#);
    check(
        &e,
        1,
        1,
        Some("apiVersion"),
        "missing field `apiVersion`",
        ErrorKind::Invalid,
    );
}

#[test]
fn metadata_null() {
    let e = err("k.json", r#"{"apiVersion":"v1","kind":"Pod","metadata":null}"#);
    check(
        &e,
        1,
        48,
        Some("metadata"),
        "`metadata` is null",
        ErrorKind::Invalid,
    );
}

#[test]
fn endpoint_without_addresses() {
    let e = err(
        "es.json",
        "{\"addressType\":\"IPv4\",\"apiVersion\":\"discovery.k8s.io/v1\",\"endpoints\":[\n {\"conditions\":{\"ready\":true}}],\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":\"e\",\"namespace\":\"n\"}}",
    );
    // `endpoints` precede `kind` (kubectl order): buffered, decoded later, still located.
    check(
        &e,
        2,
        30,
        Some("endpoints[0]"),
        "endpoint has no `addresses`",
        ErrorKind::Invalid,
    );
    assert_eq!(e.object(), Some("EndpointSlice n/e"));
}

#[test]
fn endpoint_with_empty_addresses() {
    let e = err(
        "es.yaml",
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: IPv4\nendpoints:\n- addresses: []\n",
    );
    check(
        &e,
        6,
        3,
        Some("endpoints[0]"),
        "endpoint has no addresses",
        ErrorKind::Invalid,
    );
}

#[test]
fn endpoint_invalid_ip() {
    let e = err(
        "es.yaml",
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: IPv4\nendpoints:\n- addresses: [\"10.0.0.300\"]\n",
    );
    check(
        &e,
        6,
        14,
        Some("endpoints[0].addresses"),
        "invalid IP address \"10.0.0.300\"",
        ErrorKind::Invalid,
    );
}

#[test]
fn endpoint_address_of_the_wrong_family_read_before_address_type() {
    let e = err(
        "es.json",
        "{\"endpoints\":[{\"addresses\":[\"10.0.0.1\"]},\n {\"addresses\":[\"fd00::1\"]}],\"addressType\":\"IPv4\",\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":\"e\",\"namespace\":\"n\"}}",
    );
    check(
        &e,
        2,
        25,
        Some("endpoints[1].addresses"),
        "is not an IPv4 address",
        ErrorKind::Invalid,
    );
}

#[test]
fn endpoint_slice_without_address_type() {
    let e = err(
        "es.yaml",
        "# slice\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\nendpoints: []\n",
    );
    check(
        &e,
        2,
        1,
        Some("addressType"),
        "missing field `addressType`",
        ErrorKind::Invalid,
    );
}

#[test]
fn endpoints_address_not_an_ip() {
    let e = err(
        "ep.yaml",
        "apiVersion: v1\nkind: Endpoints\nmetadata: {name: db, namespace: n}\nsubsets:\n- addresses:\n  - ip: 10.0.0.300\n  ports: [{port: 5432}]\n",
    );
    check(
        &e,
        6,
        9,
        Some("subsets[0].addresses[0].ip"),
        "invalid IP address \"10.0.0.300\"",
        ErrorKind::Invalid,
    );
    assert_eq!(e.object(), Some("Endpoints n/db"));
}

#[test]
fn endpoints_port_missing() {
    let e = err(
        "ep.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"db\",\"namespace\":\"n\"},\n\"subsets\":[{\"ports\":[{\"name\":\"sql\"}]}]}",
    );
    check(
        &e,
        2,
        35,
        Some("subsets[0].ports[0].port"),
        "missing field `port`",
        ErrorKind::Invalid,
    );
}

#[test]
fn invalid_pod_ip() {
    let e = err(
        "pod.json",
        format!("{POD},\"status\":{{\n  \"podIP\":\"10.1.2\"}}}}"),
    );
    check(
        &e,
        2,
        18,
        Some("status.podIP"),
        "invalid IP address \"10.1.2\"",
        ErrorKind::Invalid,
    );
    assert_eq!(e.object(), Some("Pod n/p"));
}

#[test]
fn invalid_node_internal_ip() {
    let e = err(
        "node.json",
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"addresses":[{"type":"InternalIP","address":"nope"}]}}"#,
    );
    check(
        &e,
        1,
        120,
        Some("status.addresses"),
        "[0].address: invalid IP address \"nope\"",
        ErrorKind::Invalid,
    );
}

#[test]
fn duplicate_objects_in_one_file() {
    let e = err(
        "dup.json",
        "{\"apiVersion\":\"v1\",\"items\":[\n {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}},\n {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}\n],\"kind\":\"List\"}",
    );
    check(
        &e,
        3,
        2,
        None,
        "duplicate object: Pod n/a is defined twice",
        ErrorKind::Duplicate,
    );
    assert_eq!(e.first_definition(), Some("dup.json:2:2 (items[0])"));
    assert!(
        e.to_string()
            .ends_with("(first defined at dup.json:2:2 (items[0]))"),
        "{e}"
    );
}

#[test]
fn duplicate_objects_across_files() {
    let dir = tempdir("dup");
    let a = dir.join("a.yaml");
    let b = dir.join("b.json");
    std::fs::write(
        &a,
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\n",
    )
    .expect("write");
    std::fs::write(&b, "[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"x\"}},\n {\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\",\"namespace\":\"n\"}}]").expect("write");
    let e = load_paths(&[&dir], &LoadOptions::default()).expect_err("duplicate");
    assert_eq!(e.kind(), ErrorKind::Duplicate);
    assert_eq!((e.line(), e.column()), (2, 2), "{e}");
    assert_eq!(e.subject(), Some("[1]"));
    let first = e.first_definition().unwrap_or_default().to_owned();
    assert!(first.ends_with("a.yaml:1:1 (document 0)"), "{e}");
}

#[test]
fn service_selector_not_a_map() {
    let e = err(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  selector: [app]\n",
    );
    check(
        &e,
        5,
        13,
        Some("spec.selector"),
        "expected mapping",
        ErrorKind::Syntax,
    );
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
fn removed_api_version() {
    let e = err(
        "d.yaml",
        "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: d, namespace: n}\n",
    );
    check(
        &e,
        1,
        1,
        Some("apiVersion"),
        "apps/v1beta1 for Deployment is no longer served",
        ErrorKind::Invalid,
    );
    let e = err("p.yaml", "apiVersion: v2\nkind: Pod\nmetadata: {name: p}\n");
    check(
        &e,
        1,
        1,
        Some("apiVersion"),
        "unsupported apiVersion \"v2\" for Pod",
        ErrorKind::Invalid,
    );
}

#[test]
fn list_with_items_null() {
    let e = err("l.json", r#"{"apiVersion":"v1","items":null,"kind":"List"}"#);
    check(&e, 1, 31, Some("items"), "`items` is null", ErrorKind::Invalid);
}

#[test]
fn list_inside_a_list() {
    let e = err(
        "l.json",
        r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[]}]}"#,
    );
    check(
        &e,
        1,
        43,
        Some("kind"),
        "a List inside a List is not supported",
        ErrorKind::Invalid,
    );
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
fn zone_label_of_the_wrong_type() {
    let e = err(
        "node.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"labels\":{\n  \"topology.kubernetes.io/zone\": 1}}}",
    );
    check(
        &e,
        2,
        34,
        Some("metadata.labels.topology.kubernetes.io/zone"),
        "invalid type: integer `1`, expected a string",
        ErrorKind::Invalid,
    );
    let e = err(
        "node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n    topology.kubernetes.io/zone: [a]\n",
    );
    assert_eq!(
        e.field(),
        Some("metadata.labels.topology.kubernetes.io/zone"),
        "{e}"
    );
    assert_eq!(e.line(), 6, "{e}");
}

#[test]
fn port_out_of_range() {
    let e = err(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports:\n  - port: 70000\n",
    );
    check(
        &e,
        6,
        11,
        Some("spec.ports[0].port"),
        "port number 70000 out of range (1-65535)",
        ErrorKind::Invalid,
    );
    assert_eq!(
        e.to_string(),
        "svc.yaml:6:11: Service n/s: port number 70000 out of range (1-65535) at spec.ports[0].port"
    );
}

#[test]
fn numeric_string_target_port() {
    let e = err(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports:\n  - port: 80\n    targetPort: \"8080\"\n",
    );
    check(
        &e,
        7,
        17,
        Some("spec.ports[0].targetPort"),
        "write the number without quotes",
        ErrorKind::Invalid,
    );
}

#[test]
fn unknown_service_type() {
    let e = err(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  type: Foo\n",
    );
    check(
        &e,
        5,
        9,
        Some("spec.type"),
        "unknown variant `Foo`",
        ErrorKind::Invalid,
    );
}

#[test]
fn cluster_ips_none_with_others() {
    let e = err(
        "svc.json",
        r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"n"},"spec":{"clusterIPs":["None","10.0.0.1"]}}"#,
    );
    check(
        &e,
        1,
        117,
        Some("spec.clusterIPs"),
        "\"None\" must be the only entry",
        ErrorKind::Invalid,
    );
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
