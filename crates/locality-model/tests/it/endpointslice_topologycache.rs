//! `topology-mode: Auto` allocator.
//!
//! Naming: one module per upstream test function (snake_case), one test per table case.
//! Sources: kubernetes/endpointslice `topologycache/topologycache_test.go` (`TestAddHints`,
//! `TestSetNodes`; upstream test tables D3, D4 (docs/upstream.md §6)) and `topologycache/utils_test.go`
//! (`Test_getGivingAndReceivingZones` D5, `Test_getHintsByZone`, `Test_redistributeHints`).

use crate::endpointslice_common;

use std::collections::BTreeMap;

use endpointslice_common::*;
use locality_model::endpointslice::topologycache::{
    Allocation, get_giving_and_receiving_zones, get_hints_by_zone, redistribute_hints, service_overloaded,
};
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

fn alloc(desired: f64) -> Allocation {
    Allocation {
        minimum: 0,
        maximum: 0,
        desired,
    }
}

mod test_get_giving_and_receiving_zones {
    use super::*;

    fn check(
        desired: &[(&str, f64)],
        allocated: &[(&str, i64)],
        giving: &[(&str, i64)],
        receiving: &[(&str, i64)],
    ) {
        let allocations: BTreeMap<String, Allocation> =
            desired.iter().map(|(z, d)| (z.to_string(), alloc(*d))).collect();
        let (g, r) = get_giving_and_receiving_zones(&allocations, &map(allocated));
        assert_eq!(g, map(giving), "giving");
        assert_eq!(r, map(receiving), "receiving");
    }

    /// `Test_getGivingAndReceivingZones` "empty".
    #[test]
    fn empty() {
        check(&[], &[], &[], &[]);
    }
    /// "simple allocation with no need for rebalancing".
    #[test]
    fn simple_allocation_with_no_need_for_rebalancing() {
        check(
            &[("zone-a", 1.2), ("zone-b", 1.1), ("zone-c", 1.0)],
            &[("zone-a", 1), ("zone-b", 1), ("zone-c", 1)],
            &[],
            &[],
        );
    }
    /// "preference for same zone even when giving an extra endpoint would result in slightly
    /// better distribution".
    #[test]
    fn preference_for_same_zone_even_when_giving_an_extra_endpoint_would_result_in_slightly_better_distribution()
     {
        check(
            &[("zone-a", 5.1), ("zone-b", 5.1), ("zone-c", 5.8)],
            &[("zone-a", 16)],
            &[("zone-a", 10)],
            &[("zone-b", 5), ("zone-c", 5)],
        );
    }
    /// "when 2 zones need < 1 endpoint, give to zone that needs endpoint most".
    #[test]
    fn when_2_zones_need_less_than_1_endpoint_give_to_zone_that_needs_endpoint_most() {
        check(
            &[("zone-a", 5.0), ("zone-b", 5.6), ("zone-c", 5.4)],
            &[("zone-a", 16)],
            &[("zone-a", 11)],
            &[("zone-b", 6), ("zone-c", 5)],
        );
    }
    /// "when 2 zones have extra endpoints, give from zone with most extra".
    #[test]
    fn when_2_zones_have_extra_endpoints_give_from_zone_with_most_extra() {
        check(
            &[("zone-a", 5.0), ("zone-b", 5.6), ("zone-c", 5.4)],
            &[("zone-b", 8), ("zone-c", 8)],
            &[("zone-b", 2), ("zone-c", 3)],
            &[("zone-a", 5)],
        );
    }
    /// "ensure function can handle unexpected data (more allocated than allocations)".
    #[test]
    fn ensure_function_can_handle_unexpected_data_more_allocated_than_allocations() {
        check(
            &[("zone-a", 5.0), ("zone-b", 5.0), ("zone-c", 5.0)],
            &[("zone-a", 6), ("zone-b", 6), ("zone-c", 6)],
            &[],
            &[],
        );
    }
    /// "ensure function can handle unexpected data (negative allocations)".
    #[test]
    fn ensure_function_can_handle_unexpected_data_negative_allocations() {
        check(
            &[("zone-a", -5.0), ("zone-b", -5.0), ("zone-c", -5.0)],
            &[("zone-a", 6), ("zone-b", 6), ("zone-c", 6)],
            &[],
            &[],
        );
    }
    /// "ensure function can handle unexpected data (negative allocated)".
    #[test]
    fn ensure_function_can_handle_unexpected_data_negative_allocated() {
        check(
            &[("zone-a", 5.0), ("zone-b", 5.0), ("zone-c", 5.0)],
            &[("zone-a", -4), ("zone-b", -3), ("zone-c", -2)],
            &[],
            &[],
        );
    }
    /// "ensure function can handle unexpected data (negative for 1 zone)".
    #[test]
    fn ensure_function_can_handle_unexpected_data_negative_for_1_zone() {
        check(
            &[("zone-a", 5.0), ("zone-b", 5.0), ("zone-c", 5.0)],
            &[("zone-a", -40), ("zone-b", 20), ("zone-c", 20)],
            &[("zone-b", 15), ("zone-c", 15)],
            &[("zone-a", 30)],
        );
    }
}

mod test_get_hints_by_zone {
    use super::*;

    fn max(pairs: &[(&str, i64)]) -> BTreeMap<String, Allocation> {
        pairs
            .iter()
            .map(|(z, m)| {
                (
                    z.to_string(),
                    Allocation {
                        minimum: 0,
                        maximum: *m,
                        desired: 0.0,
                    },
                )
            })
            .collect()
    }
    fn h(zone: &str, hint: &str, ready: Option<bool>) -> locality_model::objects::Endpoint {
        with_zone_hints(ep("10.0.0.1", Some(zone), None, ready), &[hint])
    }

    /// `Test_getHintsByZone` "empty".
    #[test]
    fn empty() {
        assert_eq!(
            get_hints_by_zone(&slice(vec![]), &map(&[]), &max(&[])),
            Some(BTreeMap::new())
        );
    }
    /// "single zone hint".
    #[test]
    fn single_zone_hint() {
        let s = slice(vec![h("zone-a", "zone-a", Some(true))]);
        assert_eq!(
            get_hints_by_zone(&s, &map(&[("zone-a", 1)]), &max(&[("zone-a", 3)])),
            Some(map(&[("zone-a", 1)]))
        );
    }
    /// "single zone hint with 1 unready endpoint and 1 unknown endpoint".
    #[test]
    fn single_zone_hint_with_1_unready_endpoint_and_1_unknown_endpoint() {
        let s = slice(vec![
            h("zone-a", "zone-a", Some(true)),
            h("zone-a", "zone-a", Some(false)),
            h("zone-a", "zone-a", None),
        ]);
        assert_eq!(
            get_hints_by_zone(&s, &map(&[("zone-a", 1)]), &max(&[("zone-a", 3)])),
            Some(map(&[("zone-a", 1)]))
        );
    }
    /// "multiple zone hints".
    #[test]
    fn multiple_zone_hints() {
        let s = slice(vec![
            h("zone-a", "zone-a", Some(true)),
            h("zone-a", "zone-b", Some(true)),
            h("zone-b", "zone-b", Some(true)),
        ]);
        let allocated = map(&[("zone-a", 1), ("zone-b", 1), ("zone-c", 1)]);
        let allocations = max(&[("zone-a", 3), ("zone-b", 3), ("zone-c", 3)]);
        assert_eq!(
            get_hints_by_zone(&s, &allocated, &allocations),
            Some(map(&[("zone-a", 1), ("zone-b", 2)]))
        );
    }
    /// "invalid by zones that no longer requires any allocations".
    #[test]
    fn invalid_by_zones_that_no_longer_requires_any_allocations() {
        let s = slice(vec![h("zone-a", "zone-non-existent", Some(true))]);
        let allocated = map(&[("zone-a", 1), ("zone-b", 1), ("zone-c", 1)]);
        assert_eq!(get_hints_by_zone(&s, &allocated, &max(&[("zone-a", 3)])), None);
    }
    /// "invalid by endpoints with nil hints".
    #[test]
    fn invalid_by_endpoints_with_nil_hints() {
        let s = slice(vec![ep("10.0.0.1", Some("zone-a"), None, Some(true))]);
        assert_eq!(get_hints_by_zone(&s, &map(&[]), &max(&[("zone-a", 3)])), None);
    }
    /// "invalid by endpoint with no hints".
    #[test]
    fn invalid_by_endpoint_with_no_hints() {
        let s = slice(vec![with_zone_hints(
            ep("10.0.0.1", Some("zone-a"), None, Some(true)),
            &[],
        )]);
        assert_eq!(get_hints_by_zone(&s, &map(&[]), &max(&[("zone-a", 3)])), None);
    }
    /// "invalid by hints that would make minimum allocations impossible".
    #[test]
    fn invalid_by_hints_that_would_make_minimum_allocations_impossible() {
        let s = slice(vec![
            h("zone-a", "zone-a", Some(true)),
            h("zone-a", "zone-a", Some(true)),
        ]);
        assert_eq!(
            get_hints_by_zone(&s, &map(&[("zone-a", 1)]), &max(&[("zone-a", 2)])),
            None
        );
    }
}

mod test_redistribute_hints {
    use super::*;

    fn hinted(zone: &str) -> locality_model::objects::Endpoint {
        with_zone_hints(ep("10.0.0.1", Some(zone), None, Some(true)), &[zone])
    }

    /// `Test_redistributeHints` "empty".
    #[test]
    fn empty() {
        let mut slices: Vec<locality_model::objects::EndpointSlice> = vec![];
        let moves = redistribute_hints(&mut slices, &mut map(&[]), &mut map(&[]));
        assert!(moves.is_empty());
    }
    /// "single endpoint".
    #[test]
    fn single_endpoint() {
        let mut slices = vec![slice(vec![hinted("zone-a")])];
        let moves = redistribute_hints(
            &mut slices,
            &mut map(&[("zone-a", 1)]),
            &mut map(&[("zone-b", 1)]),
        );
        assert_eq!(moves, map(&[("zone-a", -1), ("zone-b", 1)]));
        assert_eq!(zone_hints(&slices[0]), vec![one("zone-b")]);
    }
    /// "endpoints from 1 zone redistributed to 2 other zones".
    #[test]
    fn endpoints_from_1_zone_redistributed_to_2_other_zones() {
        let mut slices = vec![slice(vec![hinted("zone-a"), hinted("zone-a"), hinted("zone-a")])];
        let mut giving = map(&[("zone-a", 2)]);
        let mut receiving = map(&[("zone-b", 1), ("zone-c", 1)]);
        let moves = redistribute_hints(&mut slices, &mut giving, &mut receiving);
        assert_eq!(moves, map(&[("zone-a", -2), ("zone-b", 1), ("zone-c", 1)]));
        // Deterministic tie rule: receiving zones are served in name order.
        assert_eq!(
            zone_hints(&slices[0]),
            vec![one("zone-b"), one("zone-c"), one("zone-a")]
        );
        assert!(giving.is_empty() && receiving.is_empty());
    }
}

/// `utils.go` `serviceOverloaded`.
mod service_overloaded_check {
    use super::*;

    #[test]
    fn cases() {
        let third = map(&[
            ("zone-a", 1.0 / 3.0),
            ("zone-b", 1.0 / 3.0),
            ("zone-c", 1.0 / 3.0),
        ]);
        // No hints: never overloaded.
        assert!(!service_overloaded(&map(&[]), Some(&third)));
        // Hints but node info gone.
        assert!(service_overloaded(&map(&[("zone-a", 1)]), None));
        // 2/2/2 is fine; 1/3/2 has zone-a below ceil(6/3/1.2) = 2; a zone without hints.
        assert!(!service_overloaded(
            &map(&[("zone-a", 2), ("zone-b", 2), ("zone-c", 2)]),
            Some(&third)
        ));
        assert!(service_overloaded(
            &map(&[("zone-a", 1), ("zone-b", 3), ("zone-c", 2)]),
            Some(&third)
        ));
        assert!(service_overloaded(
            &map(&[("zone-a", 3), ("zone-b", 3)]),
            Some(&third)
        ));
        let cache = TopologyCache::with_ratios(Some(third));
        assert!(cache.service_overloaded(&map(&[("zone-a", 1), ("zone-b", 3), ("zone-c", 2)])));
    }
}

/// `getAllocations` numbers for the §3.3 worked example: 6 endpoints, 3 equal zones.
#[test]
fn get_allocations_three_equal_zones_six_endpoints() {
    let nodes = [
        node("node-0", Some("zone-a"), Some(100), Some(true)),
        node("node-1", Some("zone-b"), Some(100), Some(true)),
        node("node-2", Some("zone-c"), Some(100), Some(true)),
    ];
    let a = TopologyCache::from_nodes(&nodes)
        .get_allocations(6)
        .expect("allocations");
    for z in ["zone-a", "zone-b", "zone-c"] {
        let x = a[z];
        assert_eq!((x.minimum, x.maximum), (2, 2), "{z}");
        assert!((x.desired - 2.0).abs() < 1e-9, "{z}");
    }
    let a = TopologyCache::from_nodes(&nodes)
        .get_allocations(10)
        .expect("allocations");
    // desired 3.33, minimum ceil(2.78) = 3, maximum 3 + 10 - 9 = 4.
    assert_eq!((a["zone-a"].minimum, a["zone-a"].maximum), (3, 4));
}
