//! `derive_endpoint_slices`: slices, names, labels, port mappings, and hints end to end.
//!
//! Naming: one module per upstream test function (snake_case), one test per table case.
//! Sources: kubernetes/endpointslice `reconciler_test.go` `TestReconcile_TrafficDistribution`
//! (upstream test table D2, docs/upstream.md §6), `TestReconcileTopology` and `TestReconcilerPodMissingNode` (both
//! adapted to a fresh sync: the model has no existing slices), and docs/upstream.md §3.3.

use crate::endpointslice_common;

use std::collections::BTreeMap;

use endpointslice_common::*;
use locality_model::endpointslice::{
    ControllerEvent, Derivation, EventType, MAX_ENDPOINTS_PER_SLICE, NodeIndex, SkipReason, SkippedPod,
    TopologyCache, cross_zone_hints, derive_endpoint_slices, hint_counts_by_node, hint_counts_by_zone,
    recompute_hints,
};
use locality_model::features::ControlPlaneFeatures;
use locality_model::objects::{
    AddressType, ContainerPort, IpFamily, Node, Pod, Protocol, Service, ServicePort, ServiceType, TargetPort,
};

const H: &str = "service.kubernetes.io/topology-aware-hints";

/// D2 topology: node-0 (zone-a) {pod-0}; node-1 (zone-b) {pod-1, pod-2, pod-3};
/// node-2 (zone-c) {pod-4, pod-5}; every node Ready with 100m CPU.
fn d2_cluster() -> (Vec<Node>, Vec<Pod>) {
    let nodes: Vec<Node> = (0..3)
        .map(|i| {
            let zone = format!("zone-{}", (b'a' + i) as char);
            node(&format!("node-{i}"), Some(&zone), Some(100), Some(true))
        })
        .collect();
    let on = [0, 1, 1, 1, 2, 2];
    let pods = on
        .iter()
        .enumerate()
        .map(|(i, n)| {
            pod(
                &format!("pod-{i}"),
                &format!("10.0.0.{}", i + 1),
                &format!("node-{n}"),
                true,
            )
        })
        .collect();
    (nodes, pods)
}

fn derive(svc: &Service, pods: &[Pod], nodes: &[Node], f: &ControlPlaneFeatures) -> Derivation {
    let refs: Vec<&Pod> = pods.iter().collect();
    derive_endpoint_slices(
        svc,
        &refs,
        &NodeIndex::new(nodes),
        &TopologyCache::from_nodes(nodes),
        f,
    )
}

fn d2(td: Option<&str>, annotation: &str, f: &ControlPlaneFeatures) -> Derivation {
    let (nodes, pods) = d2_cluster();
    let mut svc = service("foo");
    svc.traffic_distribution = td.map(str::to_string);
    svc.meta.annotations.insert(H.to_string(), annotation.to_string());
    derive(&svc, &pods, &nodes, f)
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    map(pairs)
}

fn endpoints(d: &Derivation) -> usize {
    d.slices.iter().map(|s| s.endpoints.len()).sum()
}

fn unhinted(d: &Derivation) -> bool {
    d.slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .all(|e| e.hints.is_none())
}

/// `features` with the PreferSame gate as the upstream case sets it (everything else on).
fn gate(prefer_same: bool) -> ControlPlaneFeatures {
    if prefer_same { at(34) } else { at(33) }
}

mod test_reconcile_traffic_distribution {
    use super::*;

    /// `TestReconcile_TrafficDistribution` "trafficDistribution=PreferClose, topologyAnnotation=Disabled".
    #[test]
    fn traffic_distribution_prefer_close_topology_annotation_disabled() {
        let d = d2(Some("PreferClose"), "Disabled", &gate(false));
        assert_eq!(d.slices.len(), 1);
        assert_eq!(endpoints(&d), 6);
        assert_eq!(
            hint_counts_by_zone(&d.slices),
            counts(&[("zone-a", 1), ("zone-b", 3), ("zone-c", 2)])
        );
        assert_eq!(cross_zone_hints(&d.slices), 0);
        assert!(hint_counts_by_node(&d.slices).is_empty());
        assert!(d.events.is_empty());
    }

    /// `TestReconcile_TrafficDistribution` "trafficDistribution=PreferClose, topologyAnnotation=Auto":
    /// the annotation wins over the field.
    #[test]
    fn traffic_distribution_prefer_close_topology_annotation_auto() {
        let d = d2(Some("PreferClose"), "Auto", &gate(false));
        assert_eq!(
            hint_counts_by_zone(&d.slices),
            counts(&[("zone-a", 2), ("zone-b", 2), ("zone-c", 2)])
        );
        assert_eq!(cross_zone_hints(&d.slices), 1);
        assert_eq!(
            d.events,
            vec![ControllerEvent {
                event_type: EventType::Normal,
                reason: "TopologyAwareHintsEnabled".into(),
                message: "Topology Aware Hints has been enabled, addressType: IPv4".into(),
            }]
        );
    }

    /// `TestReconcile_TrafficDistribution` "trafficDistribution=nil, topologyAnnotation=<empty>".
    #[test]
    fn traffic_distribution_nil_topology_annotation_empty() {
        let d = d2(None, "", &gate(false));
        assert_eq!(endpoints(&d), 6);
        assert!(unhinted(&d));
        assert!(d.events.is_empty());
    }

    /// `TestReconcile_TrafficDistribution` "trafficDistribution=PreferSameNode, PSTD enabled".
    #[test]
    fn traffic_distribution_prefer_same_node_pstd_enabled() {
        let d = d2(Some("PreferSameNode"), "Disabled", &gate(true));
        assert_eq!(
            hint_counts_by_zone(&d.slices),
            counts(&[("zone-a", 1), ("zone-b", 3), ("zone-c", 2)])
        );
        assert_eq!(
            hint_counts_by_node(&d.slices),
            counts(&[("node-0", 1), ("node-1", 3), ("node-2", 2)])
        );
        assert_eq!(cross_zone_hints(&d.slices), 0);
    }

    /// `TestReconcile_TrafficDistribution` "trafficDistribution=PreferSameZone, PSTD disabled".
    #[test]
    fn traffic_distribution_prefer_same_zone_pstd_disabled() {
        let d = d2(Some("PreferSameZone"), "Disabled", &gate(false));
        assert_eq!(endpoints(&d), 6);
        assert!(unhinted(&d));
    }
}

/// docs/upstream.md §3.3 worked example: 3 zones × 100m, 6 ready endpoints placed 1/3/2 →
/// desired 2 each, min = max = 2 → 2/2/2 with exactly one cross-zone hint, from zone-b to
/// zone-a. Deterministic rule: the donor is the first ready zone-b endpoint in address order.
#[test]
fn worked_example_auto_1_3_2_becomes_2_2_2() {
    let d = d2(None, "Auto", &at(35));
    assert_eq!(
        hint_counts_by_zone(&d.slices),
        counts(&[("zone-a", 2), ("zone-b", 2), ("zone-c", 2)])
    );
    let cross: Vec<_> = d.slices[0]
        .endpoints
        .iter()
        .filter(|e| {
            e.hints
                .as_ref()
                .is_some_and(|h| h.for_zones != vec![e.zone.clone().unwrap_or_default()])
        })
        .collect();
    assert_eq!(cross.len(), 1);
    assert_eq!(cross[0].zone.as_deref(), Some("zone-b"));
    assert_eq!(cross[0].addresses, vec![ip("10.0.0.2")]);
    assert_eq!(
        cross[0].hints.as_ref().map(|h| h.for_zones.clone()),
        Some(vec!["zone-a".to_string()])
    );
    assert!(
        d.slices[0]
            .endpoints
            .iter()
            .all(|e| e.hints.as_ref().is_some_and(|h| h.for_zones.len() == 1))
    );
}

/// Upstream quirk pinned: `AddHints` does not enforce the minimum it computes. 4 zones with
/// CPU 271/179/257/293 and 14 ready endpoints placed 4/2/4/4 give desired 4/3/3.598/4.102 and
/// minimum = maximum = 4/3/3/4; zone-c's surplus (0.402) is below the 0.5 needed to donate, so
/// zone-b keeps 2 hints (< its minimum 3) and zone-c 4 (> its maximum 3). The overload
/// re-check flags the Service, and a re-sync computes the same hints.
#[test]
fn auto_can_leave_a_zone_below_its_minimum() {
    let zones = [("zone-a", 271), ("zone-b", 179), ("zone-c", 257), ("zone-d", 293)];
    let nodes: Vec<Node> = zones
        .iter()
        .map(|(z, cpu)| node(&format!("node-{z}"), Some(z), Some(*cpu), Some(true)))
        .collect();
    let placement = [("zone-a", 4), ("zone-b", 2), ("zone-c", 4), ("zone-d", 4)];
    let mut pods = Vec::new();
    for (z, k) in placement {
        for _ in 0..k {
            let i = pods.len();
            pods.push(pod(
                &format!("pod-{i:02}"),
                &format!("10.0.0.{}", i + 1),
                &format!("node-{z}"),
                true,
            ));
        }
    }
    let mut svc = service("foo");
    svc.meta.annotations.insert(H.into(), "Auto".into());
    let d = derive(&svc, &pods, &nodes, &at(35));
    let got = hint_counts_by_zone(&d.slices);
    assert_eq!(
        got,
        counts(&[("zone-a", 4), ("zone-b", 2), ("zone-c", 4), ("zone-d", 4)])
    );
    assert_eq!(d.events[0].event_type, EventType::Normal);
    let topo = TopologyCache::from_nodes(&nodes);
    let a = topo.get_allocations(14).expect("allocations");
    assert_eq!((a["zone-b"].minimum, a["zone-c"].maximum), (3, 3));
    let as_i64: BTreeMap<String, i64> = got.iter().map(|(z, n)| (z.clone(), *n as i64)).collect();
    assert!(topo.service_overloaded(&as_i64));
}

/// `TestReconcileTopology` fixture: 3 zones × 10 nodes (100m each), pod `i*100+j` on node
/// `node-<zone>-<j>`; returns (nodes, pods by upstream index).
fn topology_cluster() -> (Vec<Node>, BTreeMap<usize, Pod>) {
    let mut nodes = Vec::new();
    let mut pods = BTreeMap::new();
    for (i, zone) in ["zone-a", "zone-b", "zone-c"].iter().enumerate() {
        for j in 0..10 {
            let name = format!("node-{zone}-{j}");
            nodes.push(node(&name, Some(zone), Some(100), Some(true)));
            let idx = i * 100 + j;
            pods.insert(
                i * 10 + j,
                pod(&format!("pod{idx}"), &format!("10.{i}.0.{j}"), &name, true),
            );
        }
    }
    (nodes, pods)
}

fn topology_case(pod_indexes: &[usize], annotation: &str, f: &ControlPlaneFeatures) -> Derivation {
    let (nodes, all) = topology_cluster();
    let pods: Vec<Pod> = pod_indexes.iter().map(|i| all[i].clone()).collect();
    let mut svc = service("foo");
    svc.meta.annotations.insert(H.to_string(), annotation.to_string());
    derive(&svc, &pods, &nodes, f)
}

const ZONE_C: [usize; 3] = [27, 28, 29];
const ZONE_A_C: [usize; 4] = [5, 6, 25, 26];
const ZONE_A_B: [usize; 5] = [7, 8, 16, 17, 18];

mod test_reconcile_topology {
    use super::*;

    /// "no change, topologyCache disabled, annotation == auto" (TopologyAwareHints off: 1.23).
    #[test]
    fn no_change_topology_cache_disabled_annotation_auto() {
        let d = topology_case(&ZONE_C, "auto", &at(23));
        assert_eq!(endpoints(&d), 3);
        assert!(unhinted(&d));
        assert!(d.events.is_empty());
    }

    /// "enabling topologyCache, hintsAnnotation == auto".
    #[test]
    fn enabling_topology_cache_hints_annotation_auto() {
        let d = topology_case(&ZONE_C, "auto", &at(35));
        assert_eq!(
            hint_counts_by_zone(&d.slices),
            counts(&[("zone-a", 1), ("zone-b", 1), ("zone-c", 1)])
        );
        assert_eq!(cross_zone_hints(&d.slices), 2);
    }

    /// "topology enabled,  hintsAnnotation==auto, ratio beyond threshold".
    #[test]
    fn topology_enabled_hints_annotation_auto_ratio_beyond_threshold() {
        let d = topology_case(&ZONE_A_C, "auto", &at(35));
        assert!(unhinted(&d));
        assert_eq!(
            d.events,
            vec![ControllerEvent {
                event_type: EventType::Warning,
                reason: "TopologyAwareHintsDisabled".into(),
                message: "Unable to allocate minimum required endpoints to each zone without exceeding \
                          overload threshold (4 endpoints, 3 zones), addressType: IPv4"
                    .into(),
            }]
        );
    }

    /// "topology enabled, hintsAnnotation==Auto, more slices and endpoints".
    #[test]
    fn topology_enabled_hints_annotation_auto_more_slices_and_endpoints() {
        let idx: Vec<usize> = ZONE_A_C.iter().chain(&ZONE_A_B).copied().collect();
        let d = topology_case(&idx, "Auto", &at(35));
        assert_eq!(
            hint_counts_by_zone(&d.slices),
            counts(&[("zone-a", 3), ("zone-b", 3), ("zone-c", 3)])
        );
        assert_eq!(cross_zone_hints(&d.slices), 1);
    }

    /// "topology enabled, hintsAnnotation==disabled, more slices and endpoints".
    #[test]
    fn topology_enabled_hints_annotation_disabled_more_slices_and_endpoints() {
        let idx: Vec<usize> = ZONE_A_C.iter().chain(&ZONE_A_B).copied().collect();
        let d = topology_case(&idx, "disabled", &at(35));
        assert_eq!(endpoints(&d), 9);
        assert!(unhinted(&d));
        assert!(d.events.is_empty());
    }
}

/// `TestReconcilerPodMissingNode` fixture: nodes node-0/node-1 (no zone), pod-0 on node-0,
/// pod-1 on node-1; only `existing` nodes are known.
fn missing_node_case(publish_not_ready: bool, existing: &[&str]) -> Derivation {
    let nodes: Vec<Node> = existing.iter().map(|n| node(n, None, None, Some(true))).collect();
    let pods = vec![
        pod("pod-0", "10.0.0.1", "node-0", true),
        pod("pod-1", "10.0.0.2", "node-1", true),
    ];
    let mut svc = service("foo");
    svc.publish_not_ready_addresses = publish_not_ready;
    derive(&svc, &pods, &nodes, &at(35))
}

fn not_found(pod: &str, node: &str) -> SkippedPod {
    SkippedPod {
        pod: pod.into(),
        reason: SkipReason::NodeNotFound { node: node.into() },
    }
}

mod test_reconciler_pod_missing_node {
    use super::*;

    /// "Create and publishNotReady false": the pod on the missing node is skipped.
    #[test]
    fn create_and_publish_not_ready_false() {
        let d = missing_node_case(false, &["node-0"]);
        assert_eq!(d.slices.len(), 1);
        assert_eq!(endpoints(&d), 1);
        assert_eq!(d.skipped, vec![not_found("pod-1", "node-1")]);
    }

    /// "Create and publishNotReady true": both pods, the second without zone.
    #[test]
    fn create_and_publish_not_ready_true() {
        let d = missing_node_case(true, &["node-0"]);
        assert_eq!(endpoints(&d), 2);
        assert!(d.skipped.is_empty());
        assert!(d.slices[0].endpoints.iter().all(|e| e.zone.is_none()));
    }

    /// "Update and publishNotReady true and all nodes missing".
    #[test]
    fn update_and_publish_not_ready_true_and_all_nodes_missing() {
        let d = missing_node_case(true, &[]);
        assert_eq!(endpoints(&d), 2);
        assert_eq!(d.slices[0].endpoints[1].node_name.as_deref(), Some("node-1"));
    }

    /// "Update if publishNotReady false and no nodes are present": no endpoints, one
    /// (placeholder) slice.
    #[test]
    fn update_if_publish_not_ready_false_and_no_nodes_are_present() {
        let d = missing_node_case(false, &[]);
        assert_eq!(d.slices.len(), 1);
        assert_eq!(endpoints(&d), 0);
        assert!(d.slices[0].ports.is_empty());
        assert_eq!(
            d.skipped,
            vec![not_found("pod-0", "node-0"), not_found("pod-1", "node-1")]
        );
    }
}

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
