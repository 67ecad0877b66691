//! Tests of [`super`]: upstream's own cases (named after them: `reconciler_test.go`
//! `TestReconcile`, `utils_test.go` `TestNewEndpointSlice` / `TestAddressToEndpoint`,
//! `endpointslicemirroring_controller_test.go` `TestSyncEndpoints` / `TestShouldMirror`),
//! limited to a fresh sync, then the model's own (`model_*`).

use std::net::IpAddr;

use super::*;
use crate::objects::Labels;

/// `service.kubernetes.io/headless`, a label kube-proxy filters on.
const HEADLESS: &str = "service.kubernetes.io/headless";

const TCP: Protocol = Protocol::TCP;
const UDP: Protocol = Protocol::UDP;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn addr(ip: &str, host: &str, node: &str) -> EndpointAddress {
    EndpointAddress {
        ip: ip.to_string(),
        hostname: Some(host.to_string()),
        node_name: Some(node.to_string()),
        ..EndpointAddress::default()
    }
}

fn port(name: &str, port: u16, protocol: Protocol) -> EndpointsPort {
    EndpointsPort {
        name: name.to_string(),
        port,
        protocol,
    }
}

fn subset(
    ports: &[EndpointsPort],
    ready: &[EndpointAddress],
    not_ready: &[EndpointAddress],
) -> EndpointSubset {
    EndpointSubset {
        addresses: ready.to_vec(),
        not_ready_addresses: not_ready.to_vec(),
        ports: ports.to_vec(),
    }
}

fn endpoints(subsets: Vec<EndpointSubset>) -> Endpoints {
    let meta = ObjectMeta {
        name: "test-ep".into(),
        namespace: "test".into(),
        ..ObjectMeta::default()
    };
    Endpoints { meta, subsets }
}

fn service() -> Service {
    let meta = ObjectMeta {
        name: "test-ep".into(),
        namespace: "test".into(),
        ..ObjectMeta::default()
    };
    Service {
        meta,
        ..Service::default()
    }
}

fn run(eps: &Endpoints) -> Mirrored {
    mirror(&service(), eps, DEFAULT_MAX_ENDPOINTS_PER_SUBSET)
}

fn count(m: &Mirrored) -> usize {
    m.slices.iter().map(|s| s.endpoints.len()).sum()
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// (address, ready) of every endpoint of a slice, in order.
fn ready_of(slice: &EndpointSlice) -> Vec<(IpAddr, Option<bool>)> {
    slice
        .endpoints
        .iter()
        .map(|e| (e.addresses[0], e.conditions.ready))
        .collect()
}

fn two_subsets(first: &[EndpointAddress], second: &[EndpointAddress]) -> Vec<EndpointSubset> {
    vec![
        subset(&[port("http", 80, TCP), port("https", 443, UDP)], first, &[]),
        subset(&[port("http", 3000, TCP), port("https", 3001, UDP)], second, &[]),
    ]
}

fn five() -> (Vec<EndpointAddress>, Vec<EndpointAddress>) {
    (
        vec![
            addr("10.0.0.1", "pod-1", "node-1"),
            addr("10.0.0.2", "pod-2", "node-2"),
        ],
        vec![
            addr("10.0.1.1", "pod-11", "node-1"),
            addr("10.0.1.2", "pod-12", "node-2"),
            addr("10.0.1.3", "pod-13", "node-3"),
        ],
    )
}

#[test]
fn reconcile_endpoints_with_no_subsets() {
    let m = run(&endpoints(vec![]));
    assert_eq!((m.not_mirrored, m.slices.len(), m.events.len()), (None, 0, 0));
}

#[test]
fn reconcile_endpoints_with_no_addresses() {
    let m = run(&endpoints(vec![subset(&[port("http", 80, TCP)], &[], &[])]));
    assert!(m.slices.is_empty() && m.skipped.is_empty());
}

#[test]
fn reconcile_endpoints_with_1_subset_port_and_address() {
    let m = run(&endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[addr("10.0.0.1", "pod-1", "node-1")],
        &[],
    )]));
    assert_eq!(m.slices.len(), 1);
    let s = &m.slices[0];
    assert_eq!(
        (s.meta.name.as_str(), s.meta.namespace.as_str()),
        ("test-ep-mirror-0", "test")
    );
    assert_eq!(s.address_type, AddressType::IPv4);
    let want_port = EndpointPort {
        name: Some("http".into()),
        port: Some(80),
        protocol: Some(TCP),
    };
    assert_eq!(s.ports, vec![want_port]);
    let want = Endpoint {
        addresses: vec![ip("10.0.0.1")],
        conditions: EndpointConditions {
            ready: Some(true),
            serving: None,
            terminating: None,
        },
        node_name: Some("node-1".into()),
        hostname: Some("pod-1".into()),
        ..Endpoint::default()
    };
    assert_eq!(s.endpoints, vec![want]);
    let want_labels = labels(&[
        (LABEL_SERVICE_NAME, "test-ep"),
        (LABEL_MANAGED_BY, MIRRORING_CONTROLLER_NAME),
    ]);
    assert_eq!(s.meta.labels, want_labels);
    assert_eq!(s.meta.owner_references.len(), 1);
    let owner = &s.meta.owner_references[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Endpoints", "test-ep", true)
    );
}

#[test]
fn reconcile_endpoints_with_2_subset_different_port_and_address() {
    let m = run(&endpoints(vec![
        subset(
            &[port("http", 80, TCP)],
            &[addr("10.0.0.1", "pod-1", "node-1")],
            &[],
        ),
        subset(
            &[port("https", 443, TCP)],
            &[addr("10.0.0.2", "pod-2", "node-1")],
            &[],
        ),
    ]));
    assert_eq!(m.slices.len(), 2);
    assert!(
        m.slices
            .iter()
            .all(|s| s.endpoints.len() == 1 && s.ports.len() == 1)
    );
}

#[test]
fn reconcile_endpoints_with_2_subset_different_port_and_same_address() {
    let a = addr("10.0.0.1", "pod-1", "node-1");
    let m = run(&endpoints(vec![
        subset(&[port("http", 80, TCP)], std::slice::from_ref(&a), &[]),
        subset(&[port("https", 443, TCP)], &[a], &[]),
    ]));
    assert_eq!(m.slices.len(), 1, "repacked into one subset with both ports");
    assert_eq!((m.slices[0].ports.len(), m.slices[0].endpoints.len()), (2, 1));
}

#[test]
fn reconcile_endpoints_with_2_subset_different_address_and_same_port() {
    let m = run(&endpoints(vec![
        subset(
            &[port("http", 80, TCP)],
            &[addr("10.0.0.1", "pod-1", "node-1")],
            &[],
        ),
        subset(
            &[port("http", 80, TCP)],
            &[addr("10.0.0.2", "pod-2", "node-1")],
            &[],
        ),
    ]));
    assert_eq!(m.slices.len(), 1);
    assert_eq!(m.slices[0].endpoints.len(), 2);
}

#[test]
fn reconcile_endpoints_with_1_subset_port_and_address_pending_deletion() {
    let mut eps = endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[addr("10.0.0.1", "pod-1", "node-1")],
        &[],
    )]);
    eps.meta.deletion_timestamp = Some("2025-01-01T00:00:00Z".into());
    let m = run(&eps);
    assert_eq!(
        (m.not_mirrored, m.slices.len()),
        (Some(NotMirrored::EndpointsDeleting), 0)
    );
}

#[test]
fn reconcile_endpoints_with_1_subset_2_ports_and_2_addresses() {
    let ready = [
        addr("10.0.0.1", "pod-1", "node-1"),
        addr("10.0.0.2", "pod-2", "node-2"),
    ];
    let m = run(&endpoints(vec![subset(
        &[port("http", 80, TCP), port("https", 443, UDP)],
        &ready,
        &[],
    )]));
    assert_eq!(m.slices.len(), 1);
    assert_eq!(m.slices[0].ports.len(), 2);
    let want = vec![(ip("10.0.0.1"), Some(true)), (ip("10.0.0.2"), Some(true))];
    assert_eq!(ready_of(&m.slices[0]), want);
}

#[test]
fn reconcile_endpoints_with_1_subset_2_ports_and_2_not_ready_addresses() {
    let not_ready = [
        addr("10.0.0.1", "pod-1", "node-1"),
        addr("10.0.0.2", "pod-2", "node-2"),
    ];
    let m = run(&endpoints(vec![subset(
        &[port("http", 80, TCP), port("https", 443, UDP)],
        &[],
        &not_ready,
    )]));
    let want = vec![(ip("10.0.0.1"), Some(false)), (ip("10.0.0.2"), Some(false))];
    assert_eq!(ready_of(&m.slices[0]), want);
}

#[test]
fn reconcile_endpoints_with_1_subset_2_ports_and_2_ready_and_2_not_ready_addresses() {
    let ready = [
        addr("10.1.1.1", "pod-11", "node-1"),
        addr("10.1.1.2", "pod-12", "node-2"),
    ];
    let not_ready = [
        addr("10.0.0.1", "pod-1", "node-1"),
        addr("10.0.0.2", "pod-2", "node-2"),
    ];
    let m = run(&endpoints(vec![subset(
        &[port("http", 80, TCP), port("https", 443, UDP)],
        &ready,
        &not_ready,
    )]));
    assert_eq!(m.slices.len(), 1);
    let want = vec![
        (ip("10.1.1.1"), Some(true)),
        (ip("10.1.1.2"), Some(true)),
        (ip("10.0.0.1"), Some(false)),
        (ip("10.0.0.2"), Some(false)),
    ];
    assert_eq!(ready_of(&m.slices[0]), want);
}

#[test]
fn reconcile_endpoints_with_2_subsets_multiple_ports_and_addresses() {
    let (a, b) = five();
    let m = run(&endpoints(two_subsets(&a, &b)));
    assert_eq!((m.slices.len(), count(&m)), (2, 5));
}

#[test]
fn reconcile_endpoints_with_2_subsets_multiple_ports_and_dual_stack_addresses() {
    let a = [
        addr("2001:db8:2222:3333:4444:5555:6666:7777", "pod-1", "node-1"),
        addr("10.0.0.2", "pod-2", "node-2"),
    ];
    let b = [
        addr("10.0.1.1", "pod-11", "node-1"),
        addr("10.0.1.2", "pod-12", "node-2"),
        addr("2001:db8:3333:4444:5555:6666:7777:8888", "pod-13", "node-3"),
    ];
    let m = run(&endpoints(two_subsets(&a, &b)));
    assert_eq!((m.slices.len(), count(&m)), (4, 5));
    for s in &m.slices {
        let family = if s.address_type == AddressType::IPv4 {
            IpAddr::is_ipv4
        } else {
            IpAddr::is_ipv6
        };
        assert!(
            s.endpoints.iter().all(|e| family(&e.addresses[0])),
            "{}",
            s.meta.name
        );
    }
}

#[test]
fn reconcile_endpoints_with_2_subsets_multiple_ports_ipv6_only_addresses() {
    let a = [
        addr("2001:db8:1111:3333:4444:5555:6666:7777", "pod-1", "node-1"),
        addr("2001:db8:2222:3333:4444:5555:6666:7777", "pod-2", "node-2"),
    ];
    let b = [
        addr("2001:db8:3333:3333:4444:5555:6666:7777", "pod-11", "node-1"),
        addr("2001:db8:4444:3333:4444:5555:6666:7777", "pod-12", "node-2"),
        addr("2001:db8:5555:3333:4444:5555:6666:7777", "pod-13", "node-3"),
    ];
    let m = run(&endpoints(two_subsets(&a, &b)));
    assert_eq!((m.slices.len(), count(&m)), (2, 5));
    assert!(m.slices.iter().all(|s| s.address_type == AddressType::IPv6));
}

#[test]
fn reconcile_endpoints_with_2_subsets_multiple_ports_some_invalid_addresses() {
    let a = [
        addr("2001:db8:1111:3333:4444:5555:6666:7777", "pod-1", "node-1"),
        addr("this-is-not-an-ip", "pod-2", "node-2"),
    ];
    let b = [
        addr("this-is-also-not-an-ip", "pod-11", "node-1"),
        addr("2001:db8:4444:3333:4444:5555:6666:7777", "pod-12", "node-2"),
        addr("2001:db8:5555:3333:4444:5555:6666:7777", "pod-13", "node-3"),
    ];
    let m = run(&endpoints(two_subsets(&a, &b)));
    assert_eq!((m.slices.len(), count(&m)), (2, 3));
    let mut skipped: Vec<_> = m.skipped.iter().map(|s| (s.ip.as_str(), s.reason)).collect();
    skipped.sort();
    let want = vec![
        ("this-is-also-not-an-ip", AddressSkip::InvalidIp),
        ("this-is-not-an-ip", AddressSkip::InvalidIp),
    ];
    assert_eq!(skipped, want);
    assert_eq!(
        m.events.len(),
        1,
        "no TooManyAddressesToMirror when only invalid ones were skipped"
    );
    assert_eq!(m.events[0].reason, EVENT_INVALID_IP_ADDRESS);
    assert_eq!(
        m.events[0].message,
        "Skipped 2 invalid IP addresses when mirroring to EndpointSlices"
    );
}

#[test]
fn reconcile_endpoints_with_2_subsets_multiple_ports_all_invalid_addresses() {
    let a = [
        addr("this-is-not-an-ip1", "pod-1", "node-1"),
        addr("this-is-not-an-ip12", "pod-2", "node-2"),
    ];
    let b = [
        addr("this-is-not-an-ip11", "pod-11", "node-1"),
        addr("this-is-not-an-ip12", "pod-12", "node-2"),
        addr("this-is-not-an-ip3", "pod-13", "node-3"),
    ];
    let m = run(&endpoints(two_subsets(&a, &b)));
    assert_eq!((m.slices.len(), m.skipped.len()), (0, 5));
    assert_eq!(m.events.len(), 1);
    assert_eq!(
        m.events[0].message,
        "Skipped 5 invalid IP addresses when mirroring to EndpointSlices"
    );
}

#[test]
fn reconcile_endpoints_with_2_subsets_1_exceeding_max_endpoints_per_subset() {
    let (a, b) = five();
    let m = mirror(&service(), &endpoints(two_subsets(&a, &b)), 2);
    assert_eq!((m.slices.len(), count(&m)), (2, 4));
    let skipped = SkippedAddress {
        ip: "10.0.1.3".into(),
        ready: true,
        reason: AddressSkip::OverMaxPerSubset,
    };
    assert_eq!(m.skipped, vec![skipped]);
    assert_eq!(m.events.len(), 1);
    assert_eq!(
        (m.events[0].event_type, m.events[0].reason.as_str()),
        (EventType::Warning, EVENT_TOO_MANY_ADDRESSES)
    );
    let message = "A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 1 addresses were skipped";
    assert_eq!(m.events[0].message, message);
}

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

fn test_endpoints(label_pairs: &[(&str, &str)], annotation_pairs: &[(&str, &str)]) -> Endpoints {
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

#[test]
fn model_empty_selector_counts_as_none() {
    let mut svc = service();
    svc.selector = Some(Labels::new());
    assert_eq!(should_mirror(Some(&svc), &test_endpoints(&[], &[])), Ok(()));
}

#[test]
fn model_repack_not_ready_trumps_ready_for_a_port() {
    let a = addr("10.0.0.1", "pod-1", "node-1");
    let ready = subset(&[port("http", 80, TCP)], std::slice::from_ref(&a), &[]);
    let not_ready = subset(&[port("http", 80, TCP)], &[], std::slice::from_ref(&a));
    for subsets in [vec![ready.clone(), not_ready.clone()], vec![not_ready, ready]] {
        let m = run(&endpoints(subsets));
        assert_eq!(m.slices.len(), 1);
        assert_eq!(ready_of(&m.slices[0]), vec![(ip("10.0.0.1"), Some(false))]);
    }
}

#[test]
fn model_endpoint_set_keeps_the_last_of_one_address() {
    // Two spellings of one IP are two addresses to RepackSubsets but one endpoint to the
    // EndpointSet (`hashEndpoint`): the later one ("10.0.0.1" sorts after "010.0.0.1") wins.
    let m = run(&endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[addr("10.0.0.1", "", "node-b"), addr("010.0.0.1", "", "node-a")],
        &[],
    )]));
    assert_eq!(count(&m), 1);
    assert_eq!(m.slices[0].endpoints[0].node_name.as_deref(), Some("node-b"));
}

#[test]
fn model_repack_drops_addresses_without_ports() {
    let m = run(&endpoints(vec![subset(
        &[],
        &[addr("10.0.0.1", "pod-1", "node-1")],
        &[],
    )]));
    assert_eq!((m.slices.len(), m.skipped.len(), m.events.len()), (0, 0, 0));
}

#[test]
fn model_repack_same_ip_distinct_pods_stay_apart() {
    let pod = |name: &str, uid: &str| EndpointAddress {
        target_ref: Some(("Pod".into(), "test".into(), name.into())),
        target_uid: uid.into(),
        ..addr("10.0.0.1", "", "node-1")
    };
    let same = run(&endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[pod("a", "u1"), pod("a", "u1")],
        &[],
    )]));
    assert_eq!(count(&same), 1);
    let distinct = run(&endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[pod("a", "u1"), pod("b", "u2")],
        &[],
    )]));
    assert_eq!(count(&distinct), 2);
}

#[test]
fn model_parse_ip_sloppy() {
    assert_eq!(parse_ip_sloppy("010.000.000.001"), Some(ip("10.0.0.1")));
    assert_eq!(parse_ip_sloppy("::ffff:10.0.0.1"), Some(ip("10.0.0.1")));
    assert_eq!(parse_ip_sloppy("::ffff:010.0.0.1"), Some(ip("10.0.0.1")));
    assert_eq!(parse_ip_sloppy("2001:DB8::1"), Some(ip("2001:db8::1")));
    for bad in [
        "",
        "1.2.3",
        "1.2.3.256",
        "1.2.3.4.5",
        "1..2.3",
        "a.b.c.d",
        "10.0.0.1/32",
    ] {
        assert_eq!(parse_ip_sloppy(bad), None, "{bad}");
    }
}

#[test]
fn model_irregular_ip_is_mirrored_in_canonical_form() {
    let m = run(&endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[addr("::ffff:010.0.0.7", "", "n")],
        &[],
    )]));
    assert_eq!(m.slices.len(), 1);
    assert_eq!(m.slices[0].address_type, AddressType::IPv4);
    assert_eq!(m.slices[0].endpoints[0].addresses, vec![ip("10.0.0.7")]);
    assert_eq!(
        m.slices[0].endpoints[0].hostname, None,
        "an empty hostname is unset"
    );
}

#[test]
fn model_reserved_labels_are_overwritten_and_others_copied() {
    let mut eps = endpoints(vec![subset(
        &[port("http", 80, TCP)],
        &[addr("10.0.0.1", "", "n")],
        &[],
    )]);
    eps.meta.labels = labels(&[
        (LABEL_SERVICE_NAME, "other"),
        (LABEL_MANAGED_BY, "me"),
        (HEADLESS, ""),
    ]);
    let m = run(&eps);
    let want = labels(&[
        (LABEL_SERVICE_NAME, "test-ep"),
        (LABEL_MANAGED_BY, MIRRORING_CONTROLLER_NAME),
        (HEADLESS, ""),
    ]);
    assert_eq!(m.slices[0].meta.labels, want);
}

#[test]
fn model_slice_names_are_stable() {
    let (a, b) = five();
    let names: Vec<String> = run(&endpoints(two_subsets(&a, &b)))
        .slices
        .into_iter()
        .map(|s| s.meta.name)
        .collect();
    assert_eq!(names, vec!["test-ep-mirror-0", "test-ep-mirror-1"]);
}

#[test]
fn model_repacked_subsets_are_ordered_by_ports() {
    let m = run(&endpoints(vec![
        subset(&[port("http", 80, TCP)], &[addr("10.0.0.1", "", "n")], &[]),
        subset(&[port("a", 1, TCP)], &[addr("10.0.0.9", "", "n")], &[]),
    ]));
    let first: Vec<_> = m
        .slices
        .iter()
        .map(|s| s.ports[0].name.clone().unwrap())
        .collect();
    assert_eq!(first, vec!["a", "http"]);
}

#[test]
fn model_repack_keeps_the_first_copy_of_an_address() {
    let m = run(&endpoints(vec![
        subset(&[port("http", 80, TCP)], &[addr("10.0.0.1", "first", "n")], &[]),
        subset(&[port("http", 80, TCP)], &[addr("10.0.0.1", "second", "n")], &[]),
    ]));
    assert_eq!(count(&m), 1);
    assert_eq!(m.slices[0].endpoints[0].hostname.as_deref(), Some("first"));
}
