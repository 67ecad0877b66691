//! Slices end to end: chunking, names and labels, port mappings, dual stack and placeholders, hints
//! on observed slices, duplicate pod references.

use super::{H, counts, d2_cluster, derive, endpoints, unhinted};
use crate::endpointslice_common;
use endpointslice_common::*;
use locality_model::endpointslice::{
    EventType, MAX_ENDPOINTS_PER_SLICE, NodeIndex, SkipReason, TopologyCache, derive_endpoint_slices,
    hint_counts_by_zone, recompute_hints,
};
use locality_model::objects::{
    AddressType, ContainerPort, IpFamily, Pod, Protocol, ServicePort, ServiceType, TargetPort,
};

/// Slice shape: names, labels, owner, chunking at 100, address type, endpoint order.
#[test]
fn slices_are_chunked_named_and_labelled() {
    let nodes = vec![node("n1", Some("zone-a"), Some(1000), Some(true))];
    let pods: Vec<Pod> = (0..250)
        .map(|i| {
            pod(
                &format!("p{i:03}"),
                &format!("10.1.{}.{}", i / 200, i % 200),
                "n1",
                true,
            )
        })
        .collect();
    let mut svc = service("web");
    svc.meta.uid = "uid-1".into();
    svc.meta.labels.insert("team".into(), "x".into());
    svc.meta
        .labels
        .insert("kubernetes.io/service-name".into(), "spoof".into());
    let d = derive(&svc, &pods, &nodes, &at(35));
    assert_eq!(MAX_ENDPOINTS_PER_SLICE, 100);
    let sizes: Vec<usize> = d.slices.iter().map(|s| s.endpoints.len()).collect();
    assert_eq!(sizes, vec![100, 100, 50]);
    let names: Vec<&str> = d.slices.iter().map(|s| s.meta.name.as_str()).collect();
    assert_eq!(names, vec!["web-ipv4-0", "web-ipv4-1", "web-ipv4-2"]);
    let s = &d.slices[0];
    assert_eq!(s.address_type, AddressType::IPv4);
    assert_eq!(s.meta.namespace, "ns1");
    assert_eq!(s.service_name(), Some("web"));
    assert!(s.is_controller_managed());
    assert_eq!(s.meta.labels.get("team").map(String::as_str), Some("x"));
    assert_eq!(s.meta.owner_references[0].kind, "Service");
    assert_eq!(s.meta.owner_references[0].uid, "uid-1");
    assert!(s.meta.owner_references[0].controller);
    assert_eq!(s.ports.len(), 1);
    assert_eq!(
        (s.ports[0].name.as_deref(), s.ports[0].port, s.ports[0].protocol),
        (Some("http"), Some(8080), Some(Protocol::TCP))
    );
    let all: Vec<_> = d
        .slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .map(|e| e.addresses[0])
        .collect();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
    assert_eq!(all.len(), 250);
}

/// Pods whose named targetPort resolves differently land in different slices; a pod without
/// the named port gets a slice without that port (upstream `getEndpointPorts` skips it).
#[test]
fn port_mappings_split_slices() {
    let nodes = vec![node("n1", Some("zone-a"), Some(1000), Some(true))];
    let with = |name: &str, ip: &str, port: Option<u16>| {
        let mut p = pod(name, ip, "n1", true);
        if let Some(n) = port {
            p.spec.ports = vec![ContainerPort {
                name: "web".into(),
                container_port: n,
                protocol: Protocol::TCP,
                host_port: None,
            }];
        }
        p
    };
    let pods = vec![
        with("a", "10.0.0.1", Some(8080)),
        with("b", "10.0.0.2", Some(9090)),
        with("c", "10.0.0.3", Some(8080)),
        with("d", "10.0.0.4", None),
    ];
    let mut svc = service("web");
    svc.ports = vec![
        ServicePort {
            name: "http".into(),
            port: 80,
            target_port: TargetPort::Name("web".into()),
            ..Default::default()
        },
        ServicePort {
            name: "metrics".into(),
            port: 9100,
            target_port: TargetPort::Number(9100),
            ..Default::default()
        },
    ];
    let d = derive(&svc, &pods, &nodes, &at(35));
    let shape: Vec<(Vec<Option<u16>>, usize)> = d
        .slices
        .iter()
        .map(|s| (s.ports.iter().map(|p| p.port).collect(), s.endpoints.len()))
        .collect();
    assert_eq!(
        shape,
        vec![
            (vec![Some(9100)], 1),
            (vec![Some(8080), Some(9100)], 2),
            (vec![Some(9090), Some(9100)], 1)
        ]
    );
}

/// No slices for ExternalName, selector-less, empty-selector and deleting Services.
#[test]
fn services_without_controller_slices() {
    let (nodes, pods) = d2_cluster();
    let mut ext = service("foo");
    ext.type_ = ServiceType::ExternalName;
    let mut none = service("foo");
    none.selector = None;
    let mut empty = service("foo");
    empty.selector = Some(Default::default());
    let mut deleting = service("foo");
    deleting.meta.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
    for svc in [ext, none, empty, deleting] {
        let d = derive(&svc, &pods, &nodes, &at(35));
        assert!(d.slices.is_empty() && d.events.is_empty() && d.skipped.is_empty());
    }
}

/// Dual stack: one group of slices per family; IPv4-only pods leave an IPv6 placeholder.
#[test]
fn dual_stack_and_placeholder() {
    let (nodes, mut pods) = d2_cluster();
    pods[0].pod_ips.push(ip("fd00::1"));
    let mut svc = service("foo");
    svc.ip_families = vec![IpFamily::IPv4, IpFamily::IPv6];
    svc.traffic_distribution = Some("PreferClose".into());
    let d = derive(&svc, &pods, &nodes, &at(35));
    let shape: Vec<(&str, AddressType, usize)> = d
        .slices
        .iter()
        .map(|s| (s.meta.name.as_str(), s.address_type, s.endpoints.len()))
        .collect();
    assert_eq!(
        shape,
        vec![
            ("foo-ipv4-0", AddressType::IPv4, 6),
            ("foo-ipv6-0", AddressType::IPv6, 1)
        ]
    );
    assert_eq!(d.skipped.len(), 5);
    assert!(
        d.skipped
            .iter()
            .all(|s| s.reason == SkipReason::NoAddressForFamily(IpFamily::IPv6))
    );
    assert_eq!(hint_counts_by_zone(&d.slices[1..]), counts(&[("zone-a", 1)]));

    let mut v6_only = pods.clone();
    v6_only.truncate(1);
    v6_only[0].pod_ips.remove(0);
    svc.ip_families = vec![IpFamily::IPv4];
    let d = derive(&svc, &v6_only, &nodes, &at(35));
    assert_eq!(d.slices.len(), 1);
    assert!(d.slices[0].endpoints.is_empty() && d.slices[0].ports.is_empty());
}

/// Auto events carry the address type of each family; insufficient node info is reported
/// per family.
#[test]
fn auto_gives_up_per_family_with_exact_message() {
    let (mut nodes, mut pods) = d2_cluster();
    nodes.push(node("node-3", None, Some(100), Some(true)));
    for p in &mut pods {
        let v6 = format!(
            "fd00::{}",
            p.pod_ips[0].to_string().rsplit('.').next().unwrap_or("9")
        );
        p.pod_ips.push(ip(&v6));
    }
    let mut svc = service("foo");
    svc.ip_families = vec![IpFamily::IPv6, IpFamily::IPv4];
    svc.meta
        .annotations
        .insert("service.kubernetes.io/topology-mode".into(), "Auto".into());
    let d = derive(&svc, &pods, &nodes, &at(35));
    let msgs: Vec<&str> = d.events.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        msgs,
        vec![
            "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv6",
            "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4",
        ]
    );
    assert!(unhinted(&d));
}

/// Auto with an endpoint whose node has no zone: "One or more endpoints do not have a zone
/// specified" (the zone-less node is NotReady, so capacity is still sufficient).
#[test]
fn auto_endpoint_without_zone() {
    let (mut nodes, mut pods) = d2_cluster();
    nodes.push(node("node-3", None, Some(100), Some(false)));
    pods.push(pod("pod-6", "10.0.0.7", "node-3", true));
    let mut svc = service("foo");
    svc.meta.annotations.insert(H.into(), "auto".into());
    let d = derive(&svc, &pods, &nodes, &at(35));
    assert_eq!(d.events.len(), 1);
    assert_eq!(
        d.events[0].message,
        "One or more endpoints do not have a zone specified, addressType: IPv4"
    );
    assert_eq!(d.events[0].event_type, EventType::Warning);
    assert!(unhinted(&d));
}

/// Not-ready pods never get hints from trafficDistribution; with publishNotReadyAddresses
/// they are ready and do.
#[test]
fn traffic_distribution_hints_only_ready_endpoints() {
    let (nodes, mut pods) = d2_cluster();
    pods[1].ready = false;
    let mut svc = service("foo");
    svc.traffic_distribution = Some("PreferSameZone".into());
    let d = derive(&svc, &pods, &nodes, &at(35));
    assert_eq!(
        hint_counts_by_zone(&d.slices),
        counts(&[("zone-a", 1), ("zone-b", 2), ("zone-c", 2)])
    );
    let hinted = d.slices[0].endpoints.iter().filter(|e| e.hints.is_some()).count();
    assert_eq!(hinted, 5);
    svc.publish_not_ready_addresses = true;
    let d = derive(&svc, &pods, &nodes, &at(35));
    assert_eq!(
        hint_counts_by_zone(&d.slices),
        counts(&[("zone-a", 1), ("zone-b", 3), ("zone-c", 2)])
    );
}

/// `recompute_hints`: the next sync's hint step on observed slices.
#[test]
fn recompute_hints_on_observed_slices() {
    let (nodes, pods) = d2_cluster();
    let topo = TopologyCache::from_nodes(&nodes);
    let mut svc = service("foo");
    svc.traffic_distribution = Some("PreferClose".into());
    let observed = derive(&svc, &pods, &nodes, &at(35)).slices;
    // Same Service: nothing to change.
    let (again, events) = recompute_hints(&svc, &observed, &topo, &at(35));
    assert_eq!(again, observed);
    assert!(events.is_empty());
    // Field removed: the controller strips the hints.
    svc.traffic_distribution = None;
    let (stripped, _) = recompute_hints(&svc, &observed, &topo, &at(35));
    assert!(hint_counts_by_zone(&stripped).is_empty());
    // Switched to Auto: observed 1/3/2 own-zone hints exceed zone-b's maximum (2) → rewritten.
    svc.meta.annotations.insert(H.into(), "Auto".into());
    let (auto, events) = recompute_hints(&svc, &observed, &topo, &at(35));
    assert_eq!(
        hint_counts_by_zone(&auto),
        counts(&[("zone-a", 2), ("zone-b", 2), ("zone-c", 2)])
    );
    assert_eq!(events.len(), 1);
    // Slices of another Service are ignored.
    let (other, _) = recompute_hints(&service("bar"), &observed, &topo, &at(35));
    assert!(other.is_empty());
}

/// The same pod given twice is one endpoint.
#[test]
fn duplicate_pod_references_are_one_endpoint() {
    let (nodes, pods) = d2_cluster();
    let refs: Vec<&Pod> = pods.iter().chain(pods.iter()).collect();
    let d = derive_endpoint_slices(
        &service("foo"),
        &refs,
        &NodeIndex::new(&nodes),
        &TopologyCache::from_nodes(&nodes),
        &at(35),
    );
    assert_eq!(endpoints(&d), 6);
}
