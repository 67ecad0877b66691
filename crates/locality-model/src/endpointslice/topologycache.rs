//! `service.kubernetes.io/topology-mode: Auto`: the CPU-proportional zone hint allocator.
//!
//! Mirrors `k8s.io/endpointslice` `topologycache/topologycache.go`, `topologycache/utils.go`
//! and `topologycache/event.go`.
//!
//! **Deterministic ties.** Upstream iterates Go maps where several zones tie (`getMost`, the
//! choice of receiving zone in `redistributeHints`), so its choice among equals is random.
//! Here zones are kept in `BTreeMap`s and ties are broken by **zone name ascending**: `getMost`
//! keeps the first zone (by name) with the strictly greatest value, and a donating endpoint is
//! hinted for the first receiving zone (by name) that still needs endpoints. Which endpoint
//! donates is the first ready endpoint of a giving zone in slice order, then endpoint order.
//! Per-zone hint counts (what upstream tests assert) do not depend on these choices.

use std::collections::BTreeMap;

use crate::objects::{AddressType, EndpointHints, EndpointSlice, Node};

use super::sliceinfo::{SliceInfo, endpoint_ready};
use super::{ControllerEvent, EventType};

/// Maximum overload any endpoint should be exposed to (`topologycache.go` `overloadThreshold`).
pub const OVERLOAD_THRESHOLD: f64 = 0.2;

/// Event reason when Auto hints are removed or not added.
pub const REASON_HINTS_DISABLED: &str = "TopologyAwareHintsDisabled";
/// Event reason when Auto hints are first added.
pub const REASON_HINTS_ENABLED: &str = "TopologyAwareHintsEnabled";

/// `event.go` `NoZoneSpecified`.
pub const NO_ZONE_SPECIFIED: &str = "One or more endpoints do not have a zone specified";
/// `event.go` `NoAllocatedHintsForZones`.
pub const NO_ALLOCATED_HINTS_FOR_ZONES: &str = "No hints allocated for zones";
/// `event.go` `TopologyAwareHintsEnabled`.
pub const TOPOLOGY_AWARE_HINTS_ENABLED: &str = "Topology Aware Hints has been enabled";
/// `event.go` `TopologyAwareHintsDisabled` (emitted when the annotation is removed from a
/// Service whose hints the running controller had populated; a fresh derivation never does).
pub const TOPOLOGY_AWARE_HINTS_DISABLED: &str = "Topology Aware Hints has been disabled";
/// `event.go` `InsufficientNodeInfo`.
pub const INSUFFICIENT_NODE_INFO: &str =
    "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes";
/// `event.go` `NodesReadyInOneZoneOnly`.
pub const NODES_READY_IN_ONE_ZONE_ONLY: &str = "Nodes only ready in one zone";
/// `event.go` `InsufficientNumberOfEndpoints` (followed by ` (N endpoints, Z zones)`).
pub const INSUFFICIENT_NUMBER_OF_ENDPOINTS: &str = "Insufficient number of endpoints";
/// `event.go` `MinAllocationExceedsOverloadThreshold` (followed by ` (N endpoints, Z zones)`).
pub const MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD: &str =
    "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold";

/// Kubernetes spelling of an address type (`IPv4`, `IPv6`, `FQDN`).
pub fn address_type_str(address_type: AddressType) -> &'static str {
    match address_type {
        AddressType::IPv4 => "IPv4",
        AddressType::IPv6 => "IPv6",
        AddressType::Fqdn => "FQDN",
    }
}

/// `"<message>, addressType: <type>"`. Mirrors `topologycache/utils.go` `FormatWithAddressType`.
pub fn format_with_address_type(message: &str, address_type: AddressType) -> String {
    format!("{message}, addressType: {}", address_type_str(address_type))
}

fn disabled_event(message: String) -> ControllerEvent {
    ControllerEvent {
        event_type: EventType::Warning,
        reason: REASON_HINTS_DISABLED.to_string(),
        message,
    }
}

/// How many endpoints a zone should be hinted for (`topologycache.go` `allocation`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allocation {
    /// `ceil(desired / (1 + OVERLOAD_THRESHOLD))`.
    pub minimum: i64,
    /// `minimum + N - sum(minimum)`.
    pub maximum: i64,
    /// `max(ratio * N, minimum)`.
    pub desired: f64,
}

/// Zone capacity of the cluster, as the controller's `TopologyCache` keeps it.
///
/// Build it once per cluster with [`TopologyCache::from_nodes`] and share it between Services.
/// It holds only the node-derived part of upstream's cache; the per-Service part
/// (`endpointsByService`, `hintsPopulatedByService`) is not kept: the model derives every
/// Service as a freshly started controller would on its first sync.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopologyCache {
    cpu_by_zone: Option<BTreeMap<String, u64>>,
    cpu_ratios_by_zone: Option<BTreeMap<String, f64>>,
}

impl TopologyCache {
    /// Zone capacity from the cluster's nodes.
    ///
    /// Mirrors `topologycache.go` `SetNodes`: nodes labelled
    /// `node-role.kubernetes.io/control-plane` or `.../master` and nodes whose Ready
    /// condition is not `True` (or absent) are skipped; one remaining node without a zone or
    /// with zero/absent allocatable CPU makes the node information insufficient for the whole
    /// cluster; fewer than two zones (or no CPU) likewise. Ratios are
    /// `cpu_milli(zone) / cpu_milli(total)`.
    pub fn from_nodes<'a>(nodes: impl IntoIterator<Item = &'a Node>) -> Self {
        let mut cpu_by_zone: BTreeMap<String, u64> = BTreeMap::new();
        let mut total: u64 = 0;
        for node in nodes {
            if node.is_control_plane() || node.ready != Some(true) {
                continue;
            }
            let (Some(zone), Some(cpu)) = (node.zone(), node.allocatable_cpu_millis.filter(|c| *c > 0))
            else {
                return TopologyCache::default();
            };
            total = total.saturating_add(cpu);
            let slot = cpu_by_zone.entry(zone.to_string()).or_insert(0);
            *slot = slot.saturating_add(cpu);
        }
        if total == 0 || cpu_by_zone.len() < 2 {
            return TopologyCache::default();
        }
        let ratios = cpu_by_zone
            .iter()
            .map(|(z, c)| (z.clone(), *c as f64 / total as f64))
            .collect();
        TopologyCache {
            cpu_by_zone: Some(cpu_by_zone),
            cpu_ratios_by_zone: Some(ratios),
        }
    }

    /// A cache with the given CPU ratios and no CPU totals (as upstream tests set
    /// `cpuRatiosByZone` directly); `None` means insufficient node information.
    pub fn with_ratios(ratios: Option<BTreeMap<String, f64>>) -> Self {
        TopologyCache {
            cpu_by_zone: None,
            cpu_ratios_by_zone: ratios,
        }
    }

    /// `sufficientNodeInfo`: true when Auto can allocate at all.
    pub fn sufficient_node_info(&self) -> bool {
        self.cpu_ratios_by_zone.is_some()
    }

    /// Allocatable CPU (millicores) per zone of eligible nodes, `None` when insufficient.
    pub fn cpu_by_zone(&self) -> Option<&BTreeMap<String, u64>> {
        self.cpu_by_zone.as_ref()
    }

    /// Share of the cluster's eligible CPU per zone, `None` when insufficient.
    pub fn cpu_ratios_by_zone(&self) -> Option<&BTreeMap<String, f64>> {
        self.cpu_ratios_by_zone.as_ref()
    }

    /// Per-zone allocations for `num_endpoints` ready endpoints, or the Warning event
    /// explaining why Auto gives up (message without the address-type suffix).
    ///
    /// Mirrors `topologycache.go` `getAllocations`.
    pub fn get_allocations(
        &self,
        num_endpoints: usize,
    ) -> Result<BTreeMap<String, Allocation>, ControllerEvent> {
        let Some(ratios) = &self.cpu_ratios_by_zone else {
            return Err(disabled_event(INSUFFICIENT_NODE_INFO.to_string()));
        };
        if ratios.len() < 2 {
            return Err(disabled_event(NODES_READY_IN_ONE_ZONE_ONLY.to_string()));
        }
        let n = num_endpoints as i64;
        let zones = ratios.len();
        if zones > num_endpoints {
            return Err(disabled_event(format!(
                "{INSUFFICIENT_NUMBER_OF_ENDPOINTS} ({num_endpoints} endpoints, {zones} zones)"
            )));
        }
        let mut remaining = n;
        let mut min_total = 0i64;
        let mut allocations = BTreeMap::new();
        for (zone, ratio) in ratios {
            let desired = ratio * num_endpoints as f64;
            let minimum = (desired * (1.0 / (1.0 + OVERLOAD_THRESHOLD))).ceil() as i64;
            allocations.insert(
                zone.clone(),
                Allocation {
                    minimum,
                    maximum: 0,
                    desired: desired.max(minimum as f64),
                },
            );
            min_total += minimum;
            remaining -= minimum;
            if remaining < 0 {
                return Err(disabled_event(format!(
                    "{MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD} ({num_endpoints} endpoints, {zones} zones)"
                )));
            }
        }
        for a in allocations.values_mut() {
            a.maximum = a.minimum + n - min_total;
        }
        Ok(allocations)
    }

    /// Adds Auto zone hints to the slices of one Service and address type.
    ///
    /// Mirrors `topologycache.go` `AddHints`: on any allocation failure, a ready endpoint
    /// without zone, or nothing allocated, a Warning `TopologyAwareHintsDisabled` event
    /// (message with `, addressType: T`) is returned and all hints are removed
    /// ([`remove_hints_from_slices`]); otherwise unchanged slices keep their hints when valid
    /// ([`get_hints_by_zone`]), every ready endpoint of the slices to create/update is hinted
    /// for its own zone, then endpoints are donated from giving to receiving zones
    /// ([`get_giving_and_receiving_zones`], [`redistribute_hints`]), and a Normal
    /// `TopologyAwareHintsEnabled` event is returned (always: the model is a fresh controller).
    ///
    /// Upstream quirk kept: not-ready endpoints in slices to create/update keep whatever hints
    /// they had (upstream clears a loop copy).
    pub fn add_hints(&self, info: &mut SliceInfo, address_type: AddressType) -> AddHintsOutcome {
        let total = info.total_ready_endpoints();
        let allocations = match self.get_allocations(total) {
            Ok(a) => a,
            Err(mut event) => {
                event.message = format_with_address_type(&event.message, address_type);
                remove_hints_from_slices(info);
                return AddHintsOutcome {
                    events: vec![event],
                    hints_by_zone: None,
                };
            }
        };

        let mut allocated = get_allocated_hints_by_zone(info, &allocations);

        // Step 1: every ready endpoint hinted for its own zone.
        let mut missing_zone = false;
        'outer: for slice in info.to_create.iter_mut().chain(info.to_update.iter_mut()) {
            for ep in slice.endpoints.iter_mut().filter(|e| endpoint_ready(e)) {
                let Some(zone) = ep.zone.as_deref().filter(|z| !z.is_empty()) else {
                    missing_zone = true;
                    break 'outer;
                };
                *allocated.entry(zone.to_string()).or_insert(0) += 1;
                ep.hints = Some(EndpointHints {
                    for_zones: vec![zone.to_string()],
                    for_nodes: vec![],
                });
            }
        }
        if missing_zone {
            remove_hints_from_slices(info);
            let event = disabled_event(format_with_address_type(NO_ZONE_SPECIFIED, address_type));
            return AddHintsOutcome {
                events: vec![event],
                hints_by_zone: None,
            };
        }

        // Steps 2 and 3: move hints from zones with too many to zones with too few.
        let (mut giving, mut receiving) = get_giving_and_receiving_zones(&allocations, &allocated);
        let moves = redistribute_hints(
            info.to_create.iter_mut().chain(info.to_update.iter_mut()),
            &mut giving,
            &mut receiving,
        );
        for (zone, diff) in moves {
            *allocated.entry(zone).or_insert(0) += diff;
        }

        if allocated.is_empty() {
            remove_hints_from_slices(info);
            let event = disabled_event(format_with_address_type(
                NO_ALLOCATED_HINTS_FOR_ZONES,
                address_type,
            ));
            return AddHintsOutcome {
                events: vec![event],
                hints_by_zone: None,
            };
        }
        let event = ControllerEvent {
            event_type: EventType::Normal,
            reason: REASON_HINTS_ENABLED.to_string(),
            message: format_with_address_type(TOPOLOGY_AWARE_HINTS_ENABLED, address_type),
        };
        AddHintsOutcome {
            events: vec![event],
            hints_by_zone: Some(allocated),
        }
    }

    /// True when a Service's hinted endpoints per zone fall below what the current CPU ratios
    /// require, so the controller would re-sync it (and possibly give up).
    ///
    /// Mirrors `topologycache.go` `GetOverloadedServices` / `utils.go` `serviceOverloaded`.
    pub fn service_overloaded(&self, hints_by_zone: &BTreeMap<String, i64>) -> bool {
        service_overloaded(hints_by_zone, self.cpu_ratios_by_zone.as_ref())
    }
}

/// What [`TopologyCache::add_hints`] produced besides the hints written into the slices.
#[derive(Debug, Clone, PartialEq)]
pub struct AddHintsOutcome {
    /// Events to record on the Service.
    pub events: Vec<ControllerEvent>,
    /// Hinted endpoints per zone (what upstream stores in `endpointsByService`), `None` when
    /// hints were removed.
    pub hints_by_zone: Option<BTreeMap<String, i64>>,
}

/// Removes hints from every slice to create or update, and moves unchanged slices that had
/// any hint to `to_update` without them.
///
/// Mirrors `topologycache/utils.go` `RemoveHintsFromSlices`.
pub fn remove_hints_from_slices(info: &mut SliceInfo) {
    for slice in info.to_create.iter_mut().chain(info.to_update.iter_mut()) {
        slice.endpoints.iter_mut().for_each(|e| e.hints = None);
    }
    let (mut moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut info.unchanged)
        .into_iter()
        .partition(|s| s.endpoints.iter().any(|e| e.hints.is_some()));
    for slice in &mut moved {
        slice.endpoints.iter_mut().for_each(|e| e.hints = None);
    }
    info.unchanged = kept;
    info.to_update.extend(moved);
}

/// Counts the hints of unchanged slices that can stay, moving the others to `to_update`.
///
/// Mirrors `sliceinfo.go` `getAllocatedHintsByZone`.
fn get_allocated_hints_by_zone(
    info: &mut SliceInfo,
    allocations: &BTreeMap<String, Allocation>,
) -> BTreeMap<String, i64> {
    let mut allocated: BTreeMap<String, i64> = BTreeMap::new();
    let mut kept = Vec::with_capacity(info.unchanged.len());
    for slice in std::mem::take(&mut info.unchanged) {
        match get_hints_by_zone(&slice, &allocated, allocations) {
            None => info.to_update.push(slice),
            Some(by_zone) => {
                for (zone, n) in by_zone {
                    *allocated.entry(zone).or_insert(0) += n;
                }
                kept.push(slice);
            }
        }
    }
    info.unchanged = kept;
    allocated
}

/// Hints per zone carried by the ready endpoints of a slice, or `None` when the slice must be
/// rewritten: a ready endpoint without zone hints, a hint for a zone not in `allocations`, or
/// a zone whose count would exceed its maximum together with `allocated`.
///
/// Mirrors `topologycache/utils.go` `getHintsByZone`.
pub fn get_hints_by_zone(
    slice: &EndpointSlice,
    allocated: &BTreeMap<String, i64>,
    allocations: &BTreeMap<String, Allocation>,
) -> Option<BTreeMap<String, i64>> {
    let mut by_zone: BTreeMap<String, i64> = BTreeMap::new();
    for ep in slice.endpoints.iter().filter(|e| endpoint_ready(e)) {
        let zones = ep.hints.as_ref().map(|h| &h.for_zones[..]).unwrap_or_default();
        if zones.is_empty() {
            return None;
        }
        for zone in zones {
            if !allocations.contains_key(zone) {
                return None;
            }
            *by_zone.entry(zone.clone()).or_insert(0) += 1;
        }
    }
    for (zone, n) in &by_zone {
        let already = allocated.get(zone).copied().unwrap_or(0);
        match allocations.get(zone) {
            Some(a) if n + already <= a.maximum => {}
            _ => return None,
        }
    }
    Some(by_zone)
}

/// The zone with the strictly greatest positive value; ties go to the smallest zone name.
///
/// Mirrors `topologycache/utils.go` `getMost` (deterministic instead of map order).
fn get_most(zones: &BTreeMap<String, f64>) -> Option<(&str, f64)> {
    let mut best: Option<(&str, f64)> = None;
    for (z, &n) in zones {
        if n > best.map_or(0.0, |(_, b)| b) {
            best = Some((z.as_str(), n));
        }
    }
    best
}

/// How many endpoints each zone gives away and receives, from the desired allocations and the
/// current hint counts.
///
/// Mirrors `topologycache/utils.go` `getGivingAndReceivingZones`: repeatedly pair the zone
/// with the most surplus with the zone with the most deficit, stopping when either is missing,
/// both are below 1, or either is below 0.5.
pub fn get_giving_and_receiving_zones(
    allocations: &BTreeMap<String, Allocation>,
    allocated: &BTreeMap<String, i64>,
) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
    let mut giving_desired: BTreeMap<String, f64> = BTreeMap::new();
    let mut receiving_desired: BTreeMap<String, f64> = BTreeMap::new();
    for (zone, a) in allocations {
        let have = allocated.get(zone).copied().unwrap_or(0) as f64;
        if have > a.desired {
            giving_desired.insert(zone.clone(), have - a.desired);
        } else if have < a.desired {
            receiving_desired.insert(zone.clone(), a.desired - have);
        }
    }
    let mut giving: BTreeMap<String, i64> = BTreeMap::new();
    let mut receiving: BTreeMap<String, i64> = BTreeMap::new();
    while let (Some((g, give)), Some((r, recv))) = (get_most(&giving_desired), get_most(&receiving_desired)) {
        if (give < 1.0 && recv < 1.0) || give < 0.5 || recv < 0.5 {
            break;
        }
        let (g, r) = (g.to_string(), r.to_string());
        *giving.entry(g.clone()).or_insert(0) += 1;
        *receiving.entry(r.clone()).or_insert(0) += 1;
        if let Some(v) = giving_desired.get_mut(&g) {
            *v -= 1.0;
        }
        if let Some(v) = receiving_desired.get_mut(&r) {
            *v -= 1.0;
        }
    }
    (giving, receiving)
}

/// Re-hints ready endpoints of giving zones for receiving zones, consuming both maps; returns
/// the change of hint count per zone.
///
/// Mirrors `topologycache/utils.go` `redistributeHints`. The receiving zone is the first (by
/// name) that still needs endpoints (upstream: Go map order).
pub fn redistribute_hints<'a>(
    slices: impl IntoIterator<Item = &'a mut EndpointSlice>,
    giving: &mut BTreeMap<String, i64>,
    receiving: &mut BTreeMap<String, i64>,
) -> BTreeMap<String, i64> {
    let mut moves: BTreeMap<String, i64> = BTreeMap::new();
    for slice in slices {
        for ep in slice.endpoints.iter_mut() {
            if !endpoint_ready(ep) {
                continue;
            }
            if giving.is_empty() || receiving.is_empty() {
                return moves;
            }
            let Some(zone) = ep.zone.as_deref().filter(|z| !z.is_empty()) else {
                continue;
            };
            if giving.get(zone).is_none_or(|n| *n <= 0) {
                continue;
            }
            let Some(to) = receiving.iter().find(|(_, n)| **n > 0).map(|(z, _)| z.clone()) else {
                continue;
            };
            ep.hints = Some(EndpointHints {
                for_zones: vec![to.clone()],
                for_nodes: vec![],
            });
            decrement_or_remove(giving, zone);
            decrement_or_remove(receiving, &to);
            *moves.entry(to).or_insert(0) += 1;
            *moves.entry(zone.to_string()).or_insert(0) -= 1;
        }
    }
    moves
}

fn decrement_or_remove(map: &mut BTreeMap<String, i64>, zone: &str) {
    match map.get_mut(zone) {
        Some(n) if *n > 1 => *n -= 1,
        _ => {
            map.remove(zone);
        }
    }
}

/// True when some zone of `ratios` has fewer hinted endpoints than
/// `ceil(total * ratio / (1 + OVERLOAD_THRESHOLD))` (or none at all); false for a Service
/// without hints; true when hints exist but node information became insufficient.
///
/// Mirrors `topologycache/utils.go` `serviceOverloaded`.
pub fn service_overloaded(
    hints_by_zone: &BTreeMap<String, i64>,
    ratios: Option<&BTreeMap<String, f64>>,
) -> bool {
    if hints_by_zone.is_empty() {
        return false;
    }
    let Some(ratios) = ratios.filter(|r| !r.is_empty()) else {
        return true;
    };
    let total: f64 = hints_by_zone.values().map(|n| *n as f64).sum();
    ratios.iter().any(|(zone, ratio)| match hints_by_zone.get(zone) {
        None => true,
        Some(n) => {
            let min = (total * ratio * (1.0 / (1.0 + OVERLOAD_THRESHOLD))).ceil();
            (*n as f64) < min
        }
    })
}
