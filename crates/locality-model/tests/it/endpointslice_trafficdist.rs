//! `trafficDistribution` hints and the switches that pick a heuristic.
//!
//! Naming: one module per upstream test function (snake_case), one test per table case.
//! Sources: kubernetes/endpointslice `trafficdist/trafficdist_test.go` `TestReconcileHints`
//! (upstream test table D1, docs/upstream.md §6) and `utils_test.go` `Test_hintsEnabled` (D6).

use crate::endpointslice_common;

use endpointslice_common::*;
use locality_model::endpointslice::trafficdist::reconcile_hints;
use locality_model::endpointslice::{SliceInfo, hints_enabled, valid_traffic_distribution};
use locality_model::objects::{EndpointSlice, Labels};

/// The create/update lists shared by D1 cases 1–3, 5 and 6 (`zoned` = endpoints carry zones).
fn d1_input(zoned: bool) -> SliceInfo {
    let z = |zone: &'static str| zoned.then_some(zone);
    let e = |i: u8, zone: &'static str| {
        ep(
            &format!("10.0.0.{i}"),
            z(zone),
            Some(&format!("node-{i}")),
            Some(true),
        )
    };
    SliceInfo {
        to_create: vec![
            slice(vec![e(1, "zone-a"), e(2, "zone-b")]),
            slice(vec![e(3, "zone-a"), e(4, "zone-b")]),
        ],
        to_update: vec![
            slice(vec![e(5, "zone-a"), e(6, "zone-a")]),
            slice(vec![e(7, "zone-b"), e(8, "zone-c")]),
        ],
        unchanged: vec![],
    }
}

const D1_ZONES: [&str; 8] = [
    "zone-a", "zone-b", "zone-a", "zone-b", "zone-a", "zone-a", "zone-b", "zone-c",
];

/// Every endpoint of create ++ update, with (zone hints, node hints).
fn hints_of(info: &SliceInfo) -> Vec<(Vec<String>, Vec<String>)> {
    info.to_create
        .iter()
        .chain(&info.to_update)
        .flat_map(|s: &EndpointSlice| &s.endpoints)
        .map(|e| {
            e.hints
                .as_ref()
                .map(|h| (h.for_zones.clone(), h.for_nodes.clone()))
                .unwrap_or_default()
        })
        .collect()
}

fn own_zone_hints() -> Vec<(Vec<String>, Vec<String>)> {
    D1_ZONES.iter().map(|z| (vec![z.to_string()], vec![])).collect()
}

mod test_reconcile_hints {
    use super::*;

    /// `TestReconcileHints` "should set zone hints with PreferClose".
    #[test]
    fn should_set_zone_hints_with_prefer_close() {
        let mut info = d1_input(true);
        reconcile_hints(Some("PreferClose"), &mut info, &at(35));
        assert_eq!(hints_of(&info), own_zone_hints());
        assert_eq!(
            (info.to_create.len(), info.to_update.len(), info.unchanged.len()),
            (2, 2, 0)
        );
    }

    /// `TestReconcileHints` "should set zone hints with PreferSameZone".
    #[test]
    fn should_set_zone_hints_with_prefer_same_zone() {
        let mut info = d1_input(true);
        reconcile_hints(Some("PreferSameZone"), &mut info, &at(35));
        assert_eq!(hints_of(&info), own_zone_hints());
    }

    /// `TestReconcileHints` "should set zone and node hints with PreferSameNode".
    #[test]
    fn should_set_zone_and_node_hints_with_prefer_same_node() {
        let mut info = d1_input(true);
        reconcile_hints(Some("PreferSameNode"), &mut info, &at(35));
        let want: Vec<_> = D1_ZONES
            .iter()
            .enumerate()
            .map(|(i, z)| (vec![z.to_string()], vec![format!("node-{}", i + 1)]))
            .collect();
        assert_eq!(hints_of(&info), want);
        assert_eq!(
            hints_of(&info)[7],
            (vec!["zone-c".to_string()], vec!["node-8".to_string()])
        );
    }

    /// `TestReconcileHints` "should correct incorrect hints with PreferClose".
    #[test]
    fn should_correct_incorrect_hints_with_prefer_close() {
        let mut info = SliceInfo {
            to_create: vec![],
            to_update: vec![slice(vec![with_zone_hints(
                ep("10.0.0.1", Some("zone-a"), Some("node-1"), Some(true)),
                &["zone-b"],
            )])],
            unchanged: vec![
                slice(vec![with_zone_hints(
                    ep("10.0.0.2", Some("zone-b"), Some("node-2"), Some(true)),
                    &["zone-c"],
                )]),
                slice(vec![ep("10.0.0.3", Some("zone-c"), Some("node-3"), Some(true))]),
            ],
        };
        reconcile_hints(Some("PreferClose"), &mut info, &at(35));
        assert!(info.to_create.is_empty());
        assert!(info.unchanged.is_empty());
        let got: Vec<_> = info.to_update.iter().map(zone_hints).collect();
        assert_eq!(
            got,
            vec![
                vec![Some(vec!["zone-a".to_string()])],
                vec![Some(vec!["zone-b".to_string()])],
                vec![Some(vec!["zone-c".to_string()])],
            ]
        );
    }

    /// `TestReconcileHints` "should not create hints with PreferClose if there are no zones".
    #[test]
    fn should_not_create_hints_with_prefer_close_if_there_are_no_zones() {
        let mut info = d1_input(false);
        reconcile_hints(Some("PreferClose"), &mut info, &at(35));
        assert!(
            info.to_create
                .iter()
                .chain(&info.to_update)
                .flat_map(|s| &s.endpoints)
                .all(|e| e.hints.is_none())
        );
    }

    /// `TestReconcileHints` "should create only node hints with PreferSameNode if there are no zones".
    #[test]
    fn should_create_only_node_hints_with_prefer_same_node_if_there_are_no_zones() {
        let mut info = d1_input(false);
        reconcile_hints(Some("PreferSameNode"), &mut info, &at(35));
        let want: Vec<_> = (1..=8).map(|i| (vec![], vec![format!("node-{i}")])).collect();
        assert_eq!(hints_of(&info), want);
    }

    /// `TestReconcileHints` "unready endpoints should not trigger updates".
    #[test]
    fn unready_endpoints_should_not_trigger_updates() {
        let unready = slice(vec![ep("10.0.0.2", Some("zone-b"), Some("node-2"), Some(false))]);
        let mut info = SliceInfo {
            unchanged: vec![unready.clone()],
            ..SliceInfo::default()
        };
        reconcile_hints(Some("PreferClose"), &mut info, &at(35));
        assert!(info.to_update.is_empty() && info.to_create.is_empty());
        assert_eq!(info.unchanged, vec![unready]);
    }

    /// `TestReconcileHints` "should remove hints when trafficDistribution is unrecognized".
    #[test]
    fn should_remove_hints_when_traffic_distribution_is_unrecognized() {
        let h =
            |a: &str, z: &'static str, n: &str| with_zone_hints(ep(a, Some(z), Some(n), Some(true)), &[z]);
        let mut info = SliceInfo {
            to_create: vec![
                slice(vec![
                    h("10.0.0.1", "zone-a", "node-1"),
                    h("10.0.0.2", "zone-b", "node-2"),
                ]),
                slice(vec![h("10.0.0.3", "zone-a", "node-3")]),
            ],
            to_update: vec![slice(vec![h("10.0.0.5", "zone-a", "node-5")])],
            unchanged: vec![],
        };
        reconcile_hints(Some("Unknown"), &mut info, &at(35));
        assert_eq!(hints_of(&info).len(), 4);
        assert!(
            info.to_create
                .iter()
                .chain(&info.to_update)
                .flat_map(|s| &s.endpoints)
                .all(|e| e.hints.is_none())
        );
    }

    /// `TestReconcileHints` "should remove hints when trafficDistribution is unset".
    #[test]
    fn should_remove_hints_when_traffic_distribution_is_unset() {
        let mut info = SliceInfo {
            to_create: vec![],
            to_update: vec![slice(vec![with_zone_hints(
                ep("10.0.0.5", Some("zone-a"), Some("node-5"), Some(true)),
                &["zone-a"],
            )])],
            unchanged: vec![slice(vec![with_zone_hints(
                ep("10.0.0.6", Some("zone-b"), Some("node-6"), Some(true)),
                &["zone-b"],
            )])],
        };
        reconcile_hints(None, &mut info, &at(35));
        assert!(info.unchanged.is_empty());
        assert_eq!(info.to_update.len(), 2);
        assert_eq!(info.to_update[1].endpoints[0].addresses[0], ip("10.0.0.6"));
        assert!(
            info.to_update
                .iter()
                .flat_map(|s| &s.endpoints)
                .all(|e| e.hints.is_none())
        );
    }
}

/// Controllers before 1.33 wrote `forZones: [{name: ""}]` for zone-less ready endpoints
/// (endpointslice commit ae45d1cc, "Don't write out dummy zone hints in clusters with no zones").
#[test]
fn pre_1_33_prefer_close_writes_dummy_empty_zone_hints() {
    let mut info = d1_input(false);
    reconcile_hints(Some("PreferClose"), &mut info, &at(32));
    assert!(
        hints_of(&info)
            .iter()
            .all(|h| h == &(vec![String::new()], vec![]))
    );
    // A zone-less endpoint with the dummy hint is up to date for an old controller...
    let dummy = slice(vec![with_zone_hints(
        ep("10.0.0.9", None, Some("node-9"), Some(true)),
        &[""],
    )]);
    let mut old = SliceInfo {
        unchanged: vec![dummy.clone()],
        ..SliceInfo::default()
    };
    reconcile_hints(Some("PreferClose"), &mut old, &at(32));
    assert_eq!(old.unchanged, vec![dummy.clone()]);
    // ...and stale for a current one, which removes it.
    let mut new = SliceInfo {
        unchanged: vec![dummy],
        ..SliceInfo::default()
    };
    reconcile_hints(Some("PreferClose"), &mut new, &at(33));
    assert!(new.unchanged.is_empty());
    assert_eq!(new.to_update[0].endpoints[0].hints, None);
}

/// `preferCloseHeuristic.update` leaves not-ready endpoints alone (stale hints stay).
#[test]
fn prefer_close_leaves_not_ready_endpoint_hints_alone() {
    let stale = with_zone_hints(
        ep("10.0.0.1", Some("zone-a"), Some("node-1"), Some(false)),
        &["zone-q"],
    );
    let fresh = ep("10.0.0.2", Some("zone-b"), Some("node-2"), None);
    let mut info = SliceInfo {
        to_create: vec![slice(vec![stale, fresh])],
        ..SliceInfo::default()
    };
    reconcile_hints(Some("PreferClose"), &mut info, &at(35));
    assert_eq!(
        zone_hints(&info.to_create[0]),
        vec![Some(vec!["zone-q".to_string()]), None]
    );
}

mod test_valid_traffic_distribution {
    use super::*;

    /// `reconciler.go` `validTrafficDistribution` across releases (gate defaults from
    /// docs/upstream.md §5).
    #[test]
    fn values_by_release() {
        for (minor, close, same) in [
            (30, false, false),
            (31, true, false),
            (33, true, false),
            (34, true, true),
        ] {
            let f = at(minor);
            assert_eq!(
                valid_traffic_distribution(Some("PreferClose"), &f),
                close,
                "1.{minor}"
            );
            assert_eq!(
                valid_traffic_distribution(Some("PreferSameZone"), &f),
                same,
                "1.{minor}"
            );
            assert_eq!(
                valid_traffic_distribution(Some("PreferSameNode"), &f),
                same,
                "1.{minor}"
            );
            assert!(!valid_traffic_distribution(None, &f));
            assert!(!valid_traffic_distribution(Some("Unknown"), &f));
            assert!(!valid_traffic_distribution(Some("preferclose"), &f));
        }
    }
}

const H: &str = "service.kubernetes.io/topology-aware-hints";
const M: &str = "service.kubernetes.io/topology-mode";

fn ann(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `utils_test.go` `Test_hintsEnabled` (19 cases; upstream lists the five `mode annotation`
/// cases twice, the second copies are suffixed `_2`).
mod test_hints_enabled {
    use super::*;

    macro_rules! case {
        ($name:ident, [$($k:expr => $v:expr),*], $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(hints_enabled(&ann(&[$(($k, $v)),*])), $want);
            }
        };
    }

    case!(empty_annotations, [], false);
    case!(different_annotations, ["topology-hints" => "enabled"], false);
    case!(hints_annotation_enabled, [H => "enabled"], false);
    case!(hints_annotation_a_uto, [H => "aUto"], false);
    case!(hints_annotation_auto_lower, [H => "auto"], true);
    case!(hints_annotation_auto, [H => "Auto"], true);
    case!(hints_annotation_disabled, [H => "disabled"], false);
    case!(mode_annotation_enabled, [M => "enabled"], false);
    case!(mode_annotation_a_uto, [M => "aUto"], false);
    case!(mode_annotation_auto_lower, [M => "auto"], true);
    case!(mode_annotation_auto, [M => "Auto"], true);
    case!(mode_annotation_disabled, [M => "disabled"], false);
    case!(mode_annotation_enabled_2, [M => "enabled"], false);
    case!(mode_annotation_a_uto_2, [M => "aUto"], false);
    case!(mode_annotation_auto_lower_2, [M => "auto"], true);
    case!(mode_annotation_auto_2, [M => "Auto"], true);
    case!(mode_annotation_disabled_2, [M => "disabled"], false);
    case!(mode_annotation_disabled_hints_annotation_auto, [M => "disabled", H => "auto"], true);
    case!(mode_annotation_auto_hints_annotation_disabled, [M => "auto", H => "disabled"], false);

    /// Not upstream: an empty deprecated key still wins over `topology-mode: Auto`.
    #[test]
    fn empty_deprecated_key_wins() {
        assert!(!hints_enabled(&ann(&[(H, ""), (M, "Auto")])));
    }
}
