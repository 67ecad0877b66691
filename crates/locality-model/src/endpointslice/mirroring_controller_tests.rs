//! Tests of [`super`], continued: upstream's `utils_test.go` `TestNewEndpointSlice` /
//! `TestAddressToEndpoint`, `endpointslicemirroring_controller_test.go` `TestSyncEndpoints` /
//! `TestShouldMirror`, and `reconciler_test.go`'s annotation cases, limited to a fresh sync.

use super::tests::{TCP, addr, count, endpoints, ip, labels, port, run, service, subset};
use super::*;
use crate::objects::Labels;

fn one_address_with_annotations(annotations: &[(&str, &str)]) -> Mirrored {
    let mut eps = endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[addr("10.0.0.1", "pod-1", "")],
        &[],
    )]);
    eps.meta.annotations = labels(annotations);
    run(&eps)
}

#[test]
fn reconcile_the_last_applied_configuration_annotation_should_not_get_mirrored() {
    let m = one_address_with_annotations(&[(
        ANNOTATION_LAST_APPLIED_CONFIG,
        r#"{"apiVersion":"v1","kind":"Endpoints","subsets":[]}"#,
    )]);
    assert_eq!(m.slices.len(), 1);
    assert!(m.slices[0].meta.annotations.is_empty());
}

#[test]
fn reconcile_the_last_applied_configuration_should_not_get_mirrored_when_its_value_is_empty() {
    let m = one_address_with_annotations(&[(ANNOTATION_LAST_APPLIED_CONFIG, "")]);
    assert!(m.slices[0].meta.annotations.is_empty());
}

#[test]
fn reconcile_annotations_other_than_last_applied_configuration_should_get_correctly_mirrored() {
    let m = one_address_with_annotations(&[(ANNOTATION_LAST_APPLIED_CONFIG, "{}"), ("foo", "bar")]);
    assert_eq!(m.slices[0].meta.annotations, labels(&[("foo", "bar")]));
}

fn new_slice_with(label_pairs: &[(&str, &str)], annotation_pairs: &[(&str, &str)]) -> EndpointSlice {
    let mut eps = endpoints(vec![]);
    eps.meta.name = "foo".into();
    eps.meta.labels = labels(label_pairs);
    eps.meta.annotations = labels(annotation_pairs);
    let slice = new_mirrored_slice(&eps, &[port("foo", 80, TCP)], AddressType::IPv4, "foo-x".into());
    assert_eq!(
        (
            slice.address_type,
            slice.meta.namespace.as_str(),
            slice.endpoints.len()
        ),
        (AddressType::IPv4, "test", 0)
    );
    assert_eq!(slice.meta.owner_references[0].kind, "Endpoints");
    slice
}

fn managed(extra: &[(&str, &str)]) -> Labels {
    let mut l = labels(extra);
    l.insert(LABEL_SERVICE_NAME.into(), "foo".into());
    l.insert(LABEL_MANAGED_BY.into(), MIRRORING_CONTROLLER_NAME.into());
    l
}

#[test]
fn new_endpoint_slice_create_slice_from_endpoints() {
    let s = new_slice_with(&[], &[]);
    assert_eq!((s.meta.labels, s.meta.annotations), (managed(&[]), Labels::new()));
}

#[test]
fn new_endpoint_slice_create_slice_from_endpoints_with_annotations() {
    let s = new_slice_with(&[], &[("foo", "bar")]);
    assert_eq!(
        (s.meta.labels, s.meta.annotations),
        (managed(&[]), labels(&[("foo", "bar")]))
    );
}

#[test]
fn new_endpoint_slice_create_slice_from_endpoints_with_labels() {
    let s = new_slice_with(&[("foo", "bar")], &[]);
    assert_eq!(
        (s.meta.labels, s.meta.annotations),
        (managed(&[("foo", "bar")]), Labels::new())
    );
}

#[test]
fn new_endpoint_slice_create_slice_from_endpoints_with_labels_and_annotations() {
    let s = new_slice_with(&[("foo", "bar")], &[("foo2", "bar2")]);
    assert_eq!(
        (s.meta.labels, s.meta.annotations),
        (managed(&[("foo", "bar")]), labels(&[("foo2", "bar2")]))
    );
}

#[test]
fn new_endpoint_slice_create_slice_from_endpoints_with_labels_and_annotations_triggertime() {
    let s = new_slice_with(
        &[("foo", "bar")],
        &[("foo2", "bar2"), (ANNOTATION_LAST_CHANGE_TRIGGER_TIME, "date")],
    );
    assert_eq!(
        (s.meta.labels, s.meta.annotations),
        (managed(&[("foo", "bar")]), labels(&[("foo2", "bar2")]))
    );
}

#[test]
fn address_to_endpoint_simple() {
    let address = EndpointAddress {
        target_ref: Some(("Pod".into(), "default".into(), "foo".into())),
        ..addr("10.1.2.3", "foo", "node-abc")
    };
    let (endpoint, address_type) = address_to_endpoint(&address, true).unwrap();
    let want = Endpoint {
        addresses: vec![ip("10.1.2.3")],
        hostname: Some("foo".into()),
        conditions: EndpointConditions {
            ready: Some(true),
            ..EndpointConditions::default()
        },
        target_ref: Some(("Pod".into(), "default".into(), "foo".into())),
        node_name: Some("node-abc".into()),
        ..Endpoint::default()
    };
    assert_eq!((endpoint, address_type), (want, AddressType::IPv4));
}

fn one_port(addresses: Vec<EndpointAddress>) -> Endpoints {
    let mut eps = endpoints(vec![subset(&[port("", 80, TCP)], &addresses, &[])]);
    eps.meta.name = "testing-sync-endpoints".into();
    eps.meta.namespace = "default".into();
    eps
}

fn sync_service() -> Service {
    let mut svc = service();
    svc.meta.name = "testing-sync-endpoints".into();
    svc.meta.namespace = "default".into();
    svc
}

fn sync(eps: &Endpoints) -> Mirrored {
    mirror(&sync_service(), eps, DEFAULT_MAX_ENDPOINTS_PER_SUBSET)
}

/// `generateAddresses` of the controller test: `10.0.{i/255}.{i%255}`.
fn generate_addresses(n: usize) -> Vec<EndpointAddress> {
    (0..n)
        .map(|i| EndpointAddress {
            ip: format!("10.0.{}.{}", i / 255, i % 255),
            ..EndpointAddress::default()
        })
        .collect()
}

#[test]
fn sync_endpoints_endpoints_with_no_addresses() {
    let m = sync(&one_port(vec![]));
    assert_eq!((m.not_mirrored, m.slices.len()), (None, 0));
}

#[test]
fn sync_endpoints_endpoints_with_skip_label_true() {
    let mut eps = one_port(generate_addresses(1));
    eps.meta.labels = labels(&[(LABEL_SKIP_MIRROR, "true")]);
    let m = sync(&eps);
    assert_eq!(
        (m.not_mirrored, m.slices.len()),
        (Some(NotMirrored::SkipMirrorLabel), 0)
    );
}

#[test]
fn sync_endpoints_endpoints_with_skip_label_false() {
    let mut eps = one_port(generate_addresses(1));
    eps.meta.labels = labels(&[(LABEL_SKIP_MIRROR, "false")]);
    let m = sync(&eps);
    assert_eq!((m.not_mirrored, m.slices.len()), (None, 1));
    assert_eq!(
        m.slices[0].meta.labels.get(LABEL_SKIP_MIRROR).map(String::as_str),
        Some("false"),
        "copied like any label"
    );
}

#[test]
fn sync_endpoints_endpoints_with_missing_service() {
    let eps = one_port(generate_addresses(1));
    assert_eq!(should_mirror(None, &eps), Err(NotMirrored::NoService));
    let m = mirror(&service(), &eps, DEFAULT_MAX_ENDPOINTS_PER_SUBSET);
    assert_eq!(
        (m.not_mirrored, m.slices.len()),
        (Some(NotMirrored::NoService), 0),
        "a Service of another name"
    );
}

#[test]
fn sync_endpoints_endpoints_with_service_with_selector_specified() {
    let mut svc = sync_service();
    svc.selector = Some(labels(&[("foo", "bar")]));
    let m = mirror(
        &svc,
        &one_port(generate_addresses(1)),
        DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
    );
    assert_eq!(
        (m.not_mirrored, m.slices.len()),
        (Some(NotMirrored::ServiceHasSelector), 0)
    );
}

#[test]
fn sync_endpoints_endpoints_with_1000_addresses() {
    let m = sync(&one_port(generate_addresses(1000)));
    assert_eq!(
        (m.slices.len(), count(&m), m.skipped.len(), m.events.len()),
        (1, 1000, 0, 0)
    );
}

#[test]
fn sync_endpoints_endpoints_with_1001_addresses_1_should_not_be_mirrored() {
    let m = sync(&one_port(generate_addresses(1001)));
    assert_eq!((m.slices.len(), count(&m)), (1, 1000));
    // Repacking sorts addresses by IP text: "10.0.3.99" comes last.
    let skipped = SkippedAddress {
        ip: "10.0.3.99".into(),
        ready: true,
        reason: AddressSkip::OverMaxPerSubset,
    };
    assert_eq!(m.skipped, vec![skipped]);
    assert_eq!(m.events.len(), 1);
    assert_eq!(m.events[0].reason, EVENT_TOO_MANY_ADDRESSES);
}

pub(super) fn test_endpoints(label_pairs: &[(&str, &str)], annotation_pairs: &[(&str, &str)]) -> Endpoints {
    let mut eps = endpoints(vec![]);
    eps.meta.labels = labels(label_pairs);
    eps.meta.annotations = labels(annotation_pairs);
    eps
}

#[test]
fn should_mirror_standard_endpoints() {
    assert_eq!(should_mirror(Some(&service()), &test_endpoints(&[], &[])), Ok(()));
}

#[test]
fn should_mirror_endpoints_with_skip_mirror_true() {
    let eps = test_endpoints(&[(LABEL_SKIP_MIRROR, "true")], &[]);
    assert_eq!(
        should_mirror(Some(&service()), &eps),
        Err(NotMirrored::SkipMirrorLabel)
    );
}

#[test]
fn should_mirror_endpoints_with_skip_mirror_invalid() {
    let eps = test_endpoints(&[(LABEL_SKIP_MIRROR, "invalid")], &[]);
    assert_eq!(should_mirror(Some(&service()), &eps), Ok(()));
}

#[test]
fn should_mirror_endpoints_with_leader_election_annotation() {
    let eps = test_endpoints(&[], &[(ANNOTATION_LEADER_ELECTION, "")]);
    assert_eq!(
        should_mirror(Some(&service()), &eps),
        Err(NotMirrored::LeaderElection)
    );
}
