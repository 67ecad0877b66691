//! Well-formed documents with bad fields: wrong types, bad addresses and ports, missing
//! required fields, duplicates, removed API versions.

use super::{POD, check, err, tempdir};
use locality_ingest::{ErrorKind, LoadOptions, load_paths};

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
