//! `topology-mode: Auto` allocator.
//!
//! Naming: one module per upstream test function (snake_case), one test per table case.
//! Sources: kubernetes/endpointslice `topologycache/topologycache_test.go` (`TestAddHints`,
//! `TestSetNodes`; upstream test tables D3, D4 (docs/upstream.md §6)) and `topologycache/utils_test.go`
//! (`Test_getGivingAndReceivingZones` D5, `Test_getHintsByZone`, `Test_redistributeHints`).

mod allocation;

use crate::endpointslice_common;

use endpointslice_common::*;
use locality_model::endpointslice::{ControllerEvent, EventType, SliceInfo, TopologyCache};
use locality_model::objects::{AddressType, LABEL_CONTROL_PLANE};

fn ratios(pairs: &[(&str, f64)]) -> TopologyCache {
    TopologyCache::with_ratios(Some(map(pairs)))
}

fn r(a: &str, zone: &str) -> locality_model::objects::Endpoint {
    ep(a, Some(zone), None, Some(true))
}

fn warning(message: &str) -> ControllerEvent {
    ControllerEvent {
        event_type: EventType::Warning,
        reason: "TopologyAwareHintsDisabled".to_string(),
        message: message.to_string(),
    }
}

fn enabled() -> ControllerEvent {
    ControllerEvent {
        event_type: EventType::Normal,
        reason: "TopologyAwareHintsEnabled".to_string(),
        message: "Topology Aware Hints has been enabled, addressType: IPv4".to_string(),
    }
}

const INSUFFICIENT: &str = "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4";

fn one(z: &str) -> Option<Vec<String>> {
    Some(vec![z.to_string()])
}

mod test_add_hints {
    use super::*;

    /// `TestAddHints` "empty".
    #[test]
    fn empty() {
        let mut info = SliceInfo::default();
        let out = TopologyCache::with_ratios(None).add_hints(&mut info, AddressType::IPv4);
        assert_eq!(out.events, vec![warning(INSUFFICIENT)]);
        assert_eq!(out.hints_by_zone, None);
        assert_eq!(info, SliceInfo::default());
    }

    /// `TestAddHints` "slice to create, no zone ratios".
    #[test]
    fn slice_to_create_no_zone_ratios() {
        let mut info = SliceInfo {
            to_create: vec![slice(vec![r("10.1.2.3", "zone-a")])],
            ..Default::default()
        };
        let out = TopologyCache::with_ratios(None).add_hints(&mut info, AddressType::IPv4);
        assert_eq!(out.events, vec![warning(INSUFFICIENT)]);
        assert_eq!(zone_hints(&info.to_create[0]), vec![None]);
        assert!(info.to_update.is_empty());
    }

    /// `TestAddHints` "slice to create with 2 endpoints, zone ratios require 3".
    #[test]
    fn slice_to_create_with_2_endpoints_zone_ratios_require_3() {
        let mut info = SliceInfo {
            to_create: vec![slice(vec![r("10.1.2.3", "zone-a"), r("10.1.2.4", "zone-b")])],
            ..Default::default()
        };
        let cache = ratios(&[("zone-a", 0.3), ("zone-b", 0.4), ("zone-c", 0.3)]);
        let out = cache.add_hints(&mut info, AddressType::IPv4);
        assert_eq!(
            out.events,
            vec![warning(
                "Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4"
            )]
        );
        assert_eq!(zone_hints(&info.to_create[0]), vec![None, None]);
        assert_eq!(out.hints_by_zone, None);
    }

    /// `TestAddHints` "slice to create with 2 endpoints, zone ratios only require 2".
    #[test]
    fn slice_to_create_with_2_endpoints_zone_ratios_only_require_2() {
        let mut info = SliceInfo {
            to_create: vec![slice(vec![r("10.1.2.3", "zone-a"), r("10.1.2.4", "zone-b")])],
            ..Default::default()
        };
        let out = ratios(&[("zone-a", 0.45), ("zone-b", 0.55)]).add_hints(&mut info, AddressType::IPv4);
        assert_eq!(zone_hints(&info.to_create[0]), vec![one("zone-a"), one("zone-b")]);
        assert_eq!(out.hints_by_zone, Some(map(&[("zone-a", 1), ("zone-b", 1)])));
        assert_eq!(out.events, vec![enabled()]);
        assert!(info.to_update.is_empty());
    }

    /// `TestAddHints` "slice to create with 2 ready, 1 unready, 1 unknown endpoints, zone
    /// ratios only require 2".
    #[test]
    fn slice_to_create_with_2_ready_1_unready_1_unknown_endpoints_zone_ratios_only_require_2() {
        let mut info = SliceInfo {
            to_create: vec![slice(vec![
                r("10.1.2.3", "zone-a"),
                r("10.1.2.4", "zone-b"),
                ep("10.1.2.5", Some("zone-b"), None, Some(false)),
                ep("10.1.2.6", Some("zone-b"), None, None),
            ])],
            ..Default::default()
        };
        let out = ratios(&[("zone-a", 0.45), ("zone-b", 0.55)]).add_hints(&mut info, AddressType::IPv4);
        assert_eq!(
            zone_hints(&info.to_create[0]),
            vec![one("zone-a"), one("zone-b"), None, None]
        );
        assert_eq!(out.hints_by_zone, Some(map(&[("zone-a", 1), ("zone-b", 1)])));
        assert_eq!(out.events, vec![enabled()]);
    }

    /// `TestAddHints` "slices to create and update within 3 zone threshold".
    #[test]
    fn slices_to_create_and_update_within_3_zone_threshold() {
        let mut info = SliceInfo {
            to_create: vec![
                slice(vec![r("10.1.2.3", "zone-a"), r("10.1.2.4", "zone-b")]),
                slice(vec![
                    r("10.1.3.3", "zone-c"),
                    r("10.1.3.4", "zone-c"),
                    r("10.1.3.4", "zone-a"),
                ]),
            ],
            to_update: vec![
                slice(vec![r("10.2.2.3", "zone-a"), r("10.2.2.4", "zone-a")]),
                slice(vec![
                    r("10.2.3.3", "zone-b"),
                    r("10.2.3.4", "zone-c"),
                    r("10.2.3.4", "zone-a"),
                ]),
            ],
            unchanged: vec![],
        };
        let cache = ratios(&[("zone-a", 0.35), ("zone-b", 0.35), ("zone-c", 0.30)]);
        let out = cache.add_hints(&mut info, AddressType::IPv4);
        assert_eq!(zone_hints(&info.to_create[0]), vec![one("zone-b"), one("zone-b")]);
        assert_eq!(
            zone_hints(&info.to_create[1]),
            vec![one("zone-c"), one("zone-c"), one("zone-a")]
        );
        assert_eq!(zone_hints(&info.to_update[0]), vec![one("zone-a"), one("zone-a")]);
        assert_eq!(
            zone_hints(&info.to_update[1]),
            vec![one("zone-b"), one("zone-c"), one("zone-a")]
        );
        assert_eq!(
            out.hints_by_zone,
            Some(map(&[("zone-a", 4), ("zone-b", 3), ("zone-c", 3)]))
        );
        assert_eq!(out.events, vec![enabled()]);
    }
}

/// Give-up reasons not covered by `TestAddHints`, with the exact upstream messages
/// (`topologycache/event.go`, `topologycache.go` `getAllocations` / `AddHints`).
mod add_hints_give_up {
    use super::*;

    #[test]
    fn endpoint_without_zone_removes_all_hints() {
        let mut info = SliceInfo {
            to_create: vec![slice(vec![
                with_zone_hints(r("10.0.0.1", "zone-a"), &["zone-a"]),
                r("10.0.0.4", "zone-a"),
                ep("10.0.0.2", None, None, Some(true)),
            ])],
            unchanged: vec![slice(vec![with_zone_hints(r("10.0.0.3", "zone-b"), &["zone-b"])])],
            ..Default::default()
        };
        let out = ratios(&[("zone-a", 0.5), ("zone-b", 0.5)]).add_hints(&mut info, AddressType::IPv6);
        assert_eq!(
            out.events,
            vec![warning(
                "One or more endpoints do not have a zone specified, addressType: IPv6"
            )]
        );
        assert!(info.unchanged.is_empty());
        assert_eq!(info.to_update.len(), 1);
        assert!(info.all().flat_map(|s| &s.endpoints).all(|e| e.hints.is_none()));
    }

    #[test]
    fn min_allocation_exceeds_overload_threshold() {
        // 4 endpoints over 3 equal zones: minimum ceil(1.333/1.2) = 2 each, 6 > 4.
        let mut info = SliceInfo {
            to_create: vec![slice(vec![
                r("10.0.0.1", "zone-a"),
                r("10.0.0.2", "zone-a"),
                r("10.0.0.3", "zone-c"),
                r("10.0.0.4", "zone-c"),
            ])],
            ..Default::default()
        };
        let third = 1.0 / 3.0;
        let out = ratios(&[("zone-a", third), ("zone-b", third), ("zone-c", third)])
            .add_hints(&mut info, AddressType::IPv4);
        assert_eq!(
            out.events,
            vec![warning(
                "Unable to allocate minimum required endpoints to each zone without exceeding overload \
                 threshold (4 endpoints, 3 zones), addressType: IPv4"
            )]
        );
    }

    #[test]
    fn nodes_only_ready_in_one_zone() {
        let mut info = SliceInfo {
            to_create: vec![slice(vec![r("10.0.0.1", "zone-a")])],
            ..Default::default()
        };
        let out = ratios(&[("zone-a", 1.0)]).add_hints(&mut info, AddressType::IPv4);
        assert_eq!(
            out.events,
            vec![warning("Nodes only ready in one zone, addressType: IPv4")]
        );
    }

    /// Upstream's last give-up (`len(allocatedHintsByZone) == 0`) cannot be reached with >= 2
    /// zones (every ready endpoint is counted or aborts first); its message is still pinned.
    #[test]
    fn no_hints_allocated_message_is_exact() {
        assert_eq!(
            locality_model::endpointslice::topologycache::NO_ALLOCATED_HINTS_FOR_ZONES,
            "No hints allocated for zones"
        );
        assert_eq!(
            locality_model::endpointslice::topologycache::TOPOLOGY_AWARE_HINTS_DISABLED,
            "Topology Aware Hints has been disabled"
        );
    }
}

/// Unchanged slices keep valid hints; invalid ones are rewritten (`sliceinfo.go`
/// `getAllocatedHintsByZone`).
#[test]
fn add_hints_keeps_valid_unchanged_slices() {
    let kept = slice(vec![with_zone_hints(r("10.0.0.1", "zone-a"), &["zone-a"])]);
    let bad = slice(vec![with_zone_hints(r("10.0.0.2", "zone-b"), &["zone-gone"])]);
    let mut info = SliceInfo {
        unchanged: vec![kept.clone(), bad],
        ..Default::default()
    };
    let out = ratios(&[("zone-a", 0.5), ("zone-b", 0.5)]).add_hints(&mut info, AddressType::IPv4);
    assert_eq!(info.unchanged, vec![kept]);
    assert_eq!(zone_hints(&info.to_update[0]), vec![one("zone-b")]);
    assert_eq!(out.hints_by_zone, Some(map(&[("zone-a", 1), ("zone-b", 1)])));
}

mod test_set_nodes {
    use super::*;

    fn cp(mut n: locality_model::objects::Node) -> locality_model::objects::Node {
        n.meta
            .labels
            .insert(LABEL_CONTROL_PLANE.to_string(), String::new());
        n
    }
    fn up(zone: &str, cpu: u64) -> locality_model::objects::Node {
        node("n", Some(zone), Some(cpu), Some(true))
    }
    fn down(zone: &str, cpu: u64) -> locality_model::objects::Node {
        node("n", Some(zone), Some(cpu), Some(false))
    }

    fn check(nodes: &[locality_model::objects::Node], want: Option<&[(&str, f64)]>) {
        let cache = TopologyCache::from_nodes(nodes);
        assert_eq!(cache.sufficient_node_info(), want.is_some());
        assert_eq!(cache.cpu_ratios_by_zone().cloned(), want.map(map));
        assert_eq!(cache.cpu_by_zone().is_some(), want.is_some());
    }

    /// `TestSetNodes` "empty".
    #[test]
    fn empty() {
        check(&[], None);
    }
    /// `TestSetNodes` "single node".
    #[test]
    fn single_node() {
        check(&[up("zone-a", 1000)], None);
    }
    /// `TestSetNodes` "single zone".
    #[test]
    fn single_zone() {
        check(&[up("zone-a", 1000), up("zone-a", 1000)], None);
    }
    /// `TestSetNodes` "2 zones".
    #[test]
    fn two_zones() {
        check(
            &[up("zone-a", 1000), up("zone-b", 1000)],
            Some(&[("zone-a", 0.5), ("zone-b", 0.5)]),
        );
    }
    /// `TestSetNodes` "2 zones, unready node in 1, ready node in 1".
    #[test]
    fn two_zones_unready_node_in_1_ready_node_in_1() {
        check(&[down("zone-a", 1000), up("zone-b", 1000)], None);
    }
    /// `TestSetNodes` "2 zones, control plane node in 1, ready node in 1".
    #[test]
    fn two_zones_control_plane_node_in_1_ready_node_in_1() {
        check(&[up("zone-a", 1000), cp(up("zone-b", 1000))], None);
    }
    /// `TestSetNodes` "2 zones, unready node in 1, ready node in 2".
    #[test]
    fn two_zones_unready_node_in_1_ready_node_in_2() {
        check(
            &[up("zone-a", 1000), up("zone-b", 1000), down("zone-b", 1000)],
            Some(&[("zone-a", 0.5), ("zone-b", 0.5)]),
        );
    }
    /// `TestSetNodes` "2 zones, control plane node in 1, ready node in 2".
    #[test]
    fn two_zones_control_plane_node_in_1_ready_node_in_2() {
        check(
            &[up("zone-a", 1000), up("zone-b", 1000), cp(up("zone-b", 1000))],
            Some(&[("zone-a", 0.5), ("zone-b", 0.5)]),
        );
    }
    /// `TestSetNodes` "3 zones, 4 nodes in 1, 2 nodes in 1, 1 node in 1".
    #[test]
    fn three_zones_4_nodes_in_1_2_nodes_in_1_1_node_in_1() {
        let nodes = [
            up("zone-a", 1000),
            up("zone-a", 1000),
            up("zone-a", 1000),
            up("zone-a", 2000),
            up("zone-b", 3000),
            up("zone-b", 1500),
            up("zone-c", 500),
        ];
        check(
            &nodes,
            Some(&[("zone-a", 0.5), ("zone-b", 0.45), ("zone-c", 0.05)]),
        );
        let cache = TopologyCache::from_nodes(&nodes);
        assert_eq!(
            cache.cpu_by_zone().cloned(),
            Some(map(&[("zone-a", 5000), ("zone-b", 4500), ("zone-c", 500)]))
        );
    }

    /// docs/upstream.md §3.3: one eligible node without zone, or without/zero allocatable
    /// CPU, disables Auto cluster-wide; a missing Ready condition counts as not ready.
    #[test]
    fn one_bad_node_disables_auto_cluster_wide() {
        let good = [up("zone-a", 1000), up("zone-b", 1000)];
        for bad in [
            node("x", None, Some(1000), Some(true)),
            node("x", Some(""), Some(1000), Some(true)),
            node("x", Some("zone-c"), Some(0), Some(true)),
            node("x", Some("zone-c"), None, Some(true)),
        ] {
            let mut nodes = good.to_vec();
            nodes.insert(1, bad);
            check(&nodes, None);
        }
        let mut nodes = good.to_vec();
        nodes.push(node("x", None, None, None));
        check(&nodes, Some(&[("zone-a", 0.5), ("zone-b", 0.5)]));
        nodes.push(cp(node("y", None, None, Some(true))));
        check(&nodes, Some(&[("zone-a", 0.5), ("zone-b", 0.5)]));
    }
}
