//! Tests of [`super`]: upstream's own cases (named after them: `reconciler_test.go`
//! `TestReconcile`, `utils_test.go` `TestNewEndpointSlice` / `TestAddressToEndpoint`,
//! `endpointslicemirroring_controller_test.go` `TestSyncEndpoints` / `TestShouldMirror`),
//! limited to a fresh sync, then the model's own (`model_*`).

use std::net::IpAddr;

use super::controller_tests::test_endpoints;
use super::*;
use crate::objects::Labels;

/// `service.kubernetes.io/headless`, a label kube-proxy filters on.
const HEADLESS: &str = "service.kubernetes.io/headless";

pub(super) const TCP: Protocol = Protocol::TCP;
const UDP: Protocol = Protocol::UDP;

pub(super) fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(super) fn addr(ip: &str, host: &str, node: &str) -> EndpointAddress {
    EndpointAddress {
        ip: ip.to_string(),
        hostname: Some(host.to_string()),
        node_name: Some(node.to_string()),
        ..EndpointAddress::default()
    }
}

pub(super) fn port(name: &str, port: u16, protocol: Protocol) -> EndpointsPort {
    EndpointsPort {
        name: name.to_string(),
        port,
        protocol,
    }
}

pub(super) fn subset(
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

pub(super) fn endpoints(subsets: Vec<EndpointSubset>) -> Endpoints {
    let meta = ObjectMeta {
        name: "test-ep".into(),
        namespace: "test".into(),
        ..ObjectMeta::default()
    };
    Endpoints { meta, subsets }
}

pub(super) fn service() -> Service {
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

pub(super) fn run(eps: &Endpoints) -> Mirrored {
    mirror(&service(), eps, DEFAULT_MAX_ENDPOINTS_PER_SUBSET)
}

pub(super) fn count(m: &Mirrored) -> usize {
    m.slices.iter().map(|s| s.endpoints.len()).sum()
}

pub(super) fn ip(text: &str) -> IpAddr {
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
