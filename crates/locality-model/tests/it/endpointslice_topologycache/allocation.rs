//! The allocation arithmetic: giving and receiving zones, hints by zone, redistribution, the
//! overload check.

use super::one;
use crate::endpointslice_common;
use endpointslice_common::*;
use locality_model::endpointslice::TopologyCache;
use locality_model::endpointslice::topologycache::{
    Allocation, get_giving_and_receiving_zones, get_hints_by_zone, redistribute_hints, service_overloaded,
};
use std::collections::BTreeMap;

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
