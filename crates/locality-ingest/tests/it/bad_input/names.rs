//! Names and label values a real API server refuses (`crate::names` in the library,
//! after apimachinery's `validation.go` and core's `ValidateObjectMeta`): an input error
//! naming file, line, column and field, never a name the reports would have to escape.

use locality_ingest::ErrorKind;

use super::{check, err};

#[test]
fn a_control_character_in_any_name_is_refused_where_it_is() {
    let e = err(
        "n.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\n\"metadata\":{\"name\":\"node\\u001b]0;x\\u0007\"}}",
    );
    // JSON positions are those after the value, as for every field error.
    check(
        &e,
        2,
        42,
        Some("metadata.name"),
        "is not a valid object name",
        ErrorKind::Invalid,
    );
}

#[test]
fn a_service_name_is_a_dns_1035_label() {
    let e = err(
        "s.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: Web-1\n  namespace: ns\nspec:\n  ports: [{port: 80}]\n",
    );
    check(
        &e,
        1,
        1,
        Some("metadata.name"),
        "\"Web-1\" is not a valid DNS-1035 label",
        ErrorKind::Invalid,
    );
    let e = err(
        "s.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: 1web\n  namespace: ns\nspec:\n  ports: [{port: 80}]\n",
    );
    assert_eq!(e.field(), Some("metadata.name"), "{e}");
}

#[test]
fn a_namespace_is_a_dns_1123_label() {
    let e = err(
        "p.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: \"a\\u202eb\"\n",
    );
    check(
        &e,
        5,
        14,
        Some("metadata.namespace"),
        "is not a valid DNS-1123 label",
        ErrorKind::Invalid,
    );
}

#[test]
fn a_zone_is_a_label_value() {
    let e = err(
        "z.yaml",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n    topology.kubernetes.io/zone: \"eu west\"\n",
    );
    assert_eq!(e.field(), Some("metadata.labels"), "{e}");
    assert!(
        e.to_string().contains("label \"topology.kubernetes.io/zone\""),
        "{e}"
    );
    assert!(e.to_string().contains("is not a valid label value"), "{e}");
    let e = err(
        "e.json",
        "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":\"e\",\"namespace\":\"n\"},\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.0.0.1\"],\"zone\":\"a\\u200bb\"}],\"ports\":[]}",
    );
    assert!(e.field().is_some_and(|f| f.ends_with("zone")), "{e}");
}

#[test]
fn names_clusters_store_load() {
    let ok = "apiVersion: v1\nkind: Node\nmetadata:\n  name: ip-10-0-0-1.eu-west-1.compute.internal\n  labels: {topology.kubernetes.io/zone: eu-west-1a, a: \"\"}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: kube-system}\nspec:\n  ports: [{port: 80}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \"system:controller:x\"}\n";
    let loaded =
        locality_ingest::load_bytes("ok.yaml", ok.as_bytes(), &locality_ingest::LoadOptions::default())
            .expect("valid names load");
    assert_eq!(loaded.state.nodes.len(), 1);
}
