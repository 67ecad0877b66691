//! Hints for `spec.trafficDistribution` (PreferClose, PreferSameZone, PreferSameNode).
//!
//! Mirrors `k8s.io/endpointslice` `trafficdist/trafficdist.go`. Whether the value is allowed
//! at all (feature gates) is decided by the caller with
//! [`valid_traffic_distribution`](super::valid_traffic_distribution), as upstream's
//! `Reconciler.validTrafficDistribution` does; this module accepts the three values as is.

use crate::features::ControlPlaneFeatures;
use crate::objects::{EndpointHints, EndpointSlice};

use super::sliceinfo::{SliceInfo, endpoint_ready};

/// `trafficDistribution: PreferClose` (deprecated alias of PreferSameZone since 1.33).
pub const PREFER_CLOSE: &str = "PreferClose";
/// `trafficDistribution: PreferSameZone`.
pub const PREFER_SAME_ZONE: &str = "PreferSameZone";
/// `trafficDistribution: PreferSameNode`.
pub const PREFER_SAME_NODE: &str = "PreferSameNode";

/// Which hint heuristic a `trafficDistribution` value selects.
///
/// Mirrors `trafficdist.go` `defaultHeuristic` / `preferCloseHeuristic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heuristic {
    /// Unset or unknown value: remove every hint (`defaultHeuristic`).
    Default,
    /// PreferClose / PreferSameZone / PreferSameNode (`preferCloseHeuristic`).
    PreferClose {
        /// Also write `forNodes: [own node]` (PreferSameNode only).
        node_hints: bool,
        /// Write `forZones: [{name: ""}]` for endpoints without zone (controllers before 1.33,
        /// endpointslice commit ae45d1cc; i.e. `!features.no_empty_zone_hints`).
        empty_zone_hints: bool,
    },
}

impl Heuristic {
    /// The heuristic for a `trafficDistribution` value (the gate check is not done here).
    ///
    /// Mirrors the heuristic choice at the top of `trafficdist.go` `ReconcileHints`.
    pub fn for_value(traffic_distribution: Option<&str>, features: &ControlPlaneFeatures) -> Self {
        match traffic_distribution {
            Some(PREFER_CLOSE | PREFER_SAME_ZONE | PREFER_SAME_NODE) => Heuristic::PreferClose {
                node_hints: traffic_distribution == Some(PREFER_SAME_NODE),
                empty_zone_hints: !features.no_empty_zone_hints,
            },
            _ => Heuristic::Default,
        }
    }

    /// True when a slice's ready endpoints do not carry exactly the hints this heuristic
    /// writes (not-ready endpoints are ignored: they neither get nor lose hints).
    ///
    /// Mirrors `trafficdist.go` `defaultHeuristic.needsUpdate` / `preferCloseHeuristic.needsUpdate`.
    pub fn needs_update(self, slice: &EndpointSlice) -> bool {
        match self {
            Heuristic::Default => slice.endpoints.iter().any(|e| e.hints.is_some()),
            Heuristic::PreferClose {
                node_hints,
                empty_zone_hints,
            } => slice.endpoints.iter().filter(|e| endpoint_ready(e)).any(|ep| {
                let hints = ep.hints.as_ref();
                let zones = hints.map_or(&[][..], |h| &h.for_zones[..]);
                let nodes = hints.map_or(&[][..], |h| &h.for_nodes[..]);
                let want_zone = wanted_zone(ep.zone.as_deref(), empty_zone_hints);
                let zone_wrong = match want_zone {
                    Some(z) => hints.is_none() || zones.len() != 1 || zones[0] != z,
                    None => !zones.is_empty(),
                };
                let want_node = ep.node_name.as_deref().filter(|_| node_hints);
                let node_wrong = match want_node {
                    Some(n) => hints.is_none() || nodes.len() != 1 || nodes[0] != n,
                    None => !nodes.is_empty(),
                };
                zone_wrong || node_wrong
            }),
        }
    }

    /// Rewrites the hints of a slice the controller is writing anyway.
    ///
    /// `Default` clears the hints of every endpoint; `PreferClose` sets, on every ready
    /// endpoint, `forZones: [own zone]` (when it has one) and, for PreferSameNode,
    /// `forNodes: [own node]`, and no hints when it has neither; not-ready endpoints are left
    /// untouched. Mirrors `trafficdist.go` `defaultHeuristic.update` /
    /// `preferCloseHeuristic.update`.
    pub fn update(self, slice: &mut EndpointSlice) {
        match self {
            Heuristic::Default => slice.endpoints.iter_mut().for_each(|e| e.hints = None),
            Heuristic::PreferClose {
                node_hints,
                empty_zone_hints,
            } => {
                for ep in slice.endpoints.iter_mut().filter(|e| endpoint_ready(e)) {
                    let for_zones: Vec<String> = wanted_zone(ep.zone.as_deref(), empty_zone_hints)
                        .map(str::to_string)
                        .into_iter()
                        .collect();
                    let for_nodes: Vec<String> =
                        ep.node_name.iter().filter(|_| node_hints).cloned().collect();
                    ep.hints = if for_zones.is_empty() && for_nodes.is_empty() {
                        None
                    } else {
                        Some(EndpointHints { for_zones, for_nodes })
                    };
                }
            }
        }
    }
}

/// The zone hint an endpoint should carry: its zone, or `""` for zone-less endpoints on
/// controllers that still wrote dummy hints.
fn wanted_zone(zone: Option<&str>, empty_zone_hints: bool) -> Option<&str> {
    match zone {
        Some(z) => Some(z),
        None if empty_zone_hints => Some(""),
        None => None,
    }
}

/// Reconciles hints for `trafficDistribution` on the slices of one Service and address type.
///
/// Unchanged slices whose hints are wrong ([`Heuristic::needs_update`]) move to `to_update`;
/// then every slice to create or update gets [`Heuristic::update`]. Unchanged slices are never
/// modified in place. Mirrors `trafficdist/trafficdist.go` `ReconcileHints`.
pub fn reconcile_hints(
    traffic_distribution: Option<&str>,
    info: &mut SliceInfo,
    features: &ControlPlaneFeatures,
) {
    let h = Heuristic::for_value(traffic_distribution, features);
    let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut info.unchanged)
        .into_iter()
        .partition(|s| h.needs_update(s));
    info.unchanged = kept;
    info.to_update.extend(moved);
    for slice in info.to_create.iter_mut().chain(info.to_update.iter_mut()) {
        h.update(slice);
    }
}
