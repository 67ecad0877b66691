//! LOC014: controller-managed EndpointSlices compared, as sets, with what the EndpointSlice
//! controller model derives from the selected pods (`endpointslice::derive_endpoint_slices`).
//!
//! Per address type and per endpoint (keyed by its first address) the compared fields are the
//! conditions as kube-proxy reads them (unset `ready`/`serving` are true, unset `terminating`
//! false), `nodeName`, `zone`, the slice's ports (as a set), and the hints: exactly for
//! `trafficDistribution` (and for no preference, where none is expected), as per-zone counts
//! (`hint_counts_by_zone`) for `topology-mode: Auto`. Endpoints of pods created after the
//! newest observed slice of that address type are ignored: a dump lists pods and slices at
//! different times (for Auto the per-zone counts are then not compared: one more endpoint can
//! change the whole allocation). Without Auto the expected endpoint is built field by field
//! (as `podToEndpoint` and the `trafficDistribution` heuristic write it) instead of deriving
//! whole slices: the property tests check both agree with `derive_endpoint_slices`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;

use locality_model::endpointslice::trafficdist::Heuristic;
use locality_model::endpointslice::{
    address_type_for, derive_endpoint_slices, endpoint_ports, hint_counts_by_zone, hints_enabled,
    node_for_pod, should_pod_be_in_endpoints, valid_traffic_distribution,
};
use locality_model::objects::{
    AddressType, Endpoint, EndpointPort, EndpointSlice, IpFamily, Pod, Protocol, Service, ServiceType,
    TargetPort,
};

use crate::builder::{plural, svc_name};
use crate::context::Ctx;
use crate::rule::RuleId;

/// What is compared per endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    ready: bool,
    serving: bool,
    terminating: bool,
    node: Option<String>,
    zone: Option<String>,
    ports: Vec<(Option<String>, Option<u16>, Protocol)>,
}

fn key(ep: &Endpoint, ports: &[EndpointPort]) -> Key {
    Key {
        ready: ep.conditions.ready.unwrap_or(true),
        serving: ep.conditions.serving.unwrap_or(true),
        terminating: ep.conditions.terminating.unwrap_or(false),
        node: ep.node_name.clone().filter(|n| !n.is_empty()),
        zone: ep.zone.clone().filter(|z| !z.is_empty()),
        ports: port_set(ports),
    }
}

fn describe(k: &Key) -> String {
    format!(
        "ready={} serving={} terminating={} node={} zone={}",
        k.ready,
        k.serving,
        k.terminating,
        k.node.as_deref().unwrap_or("-"),
        k.zone.as_deref().unwrap_or("-")
    )
}

/// Runs LOC014 on one Service.
pub(crate) fn check(ctx: &mut Ctx<'_, '_>, svc: &Service) {
    if svc.type_ == ServiceType::ExternalName
        || svc.selector.as_ref().is_none_or(|s| s.is_empty())
        || svc.meta.deletion_timestamp.is_some()
    {
        return;
    }
    let observed: Vec<&EndpointSlice> = ctx
        .slices_of(svc)
        .iter()
        .copied()
        .filter(|s| s.is_controller_managed() && s.address_type != AddressType::Fqdn)
        .collect();
    if observed.is_empty() {
        return;
    }
    let pods: Vec<&Pod> = ctx
        .selected_pods(svc)
        .into_iter()
        .map(|i| &ctx.state.pods[i])
        .collect();
    let auto = ctx.cp.topology_aware_hints && hints_enabled(&svc.meta.annotations);
    let problems = if auto {
        compare_derived(ctx, svc, &observed, &pods)
    } else {
        compare_direct(ctx, svc, &observed, &pods)
    };
    if problems.is_empty() {
        return;
    }
    let msg = format!(
        "the EndpointSlices of {} managed by endpointslice-controller.k8s.io differ from what the controller would write from the selected pods: {}",
        svc_name(svc),
        problems.join("; ")
    );
    let b = ctx
        .finding(RuleId::Loc014, svc)
        .slices(&observed)
        .message(msg)
        .fix("check the EndpointSlice controller (kube-controller-manager logs) or whether the dump mixes moments; re-list to confirm");
    ctx.push(b);
}

/// Newest `creationTimestamp` of the observed slices per address type.
fn newest_by_type<'s>(observed: &[&'s EndpointSlice]) -> BTreeMap<AddressType, &'s str> {
    let mut out: BTreeMap<AddressType, &str> = BTreeMap::new();
    for s in observed {
        if let Some(c) = s.meta.creation_timestamp.as_deref() {
            let e = out.entry(s.address_type).or_insert(c);
            if c > *e {
                *e = c;
            }
        }
    }
    out
}

/// Differences found, grouped per address type.
#[derive(Default)]
struct Diffs {
    missing: BTreeMap<AddressType, Vec<String>>,
    extra: BTreeMap<AddressType, Vec<String>>,
    differ: BTreeMap<AddressType, Vec<String>>,
}

impl Diffs {
    fn into_problems(self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut types: Vec<AddressType> = self
            .missing
            .keys()
            .chain(self.extra.keys())
            .chain(self.differ.keys())
            .copied()
            .collect();
        types.sort();
        types.dedup();
        for at in types {
            let at_s = at.as_str();
            if let Some(m) = self.missing.get(&at) {
                problems.push(format!(
                    "{at_s}: {} missing ({})",
                    plural(m.len(), "endpoint", "endpoints"),
                    first_few(m)
                ));
            }
            if let Some(e) = self.extra.get(&at) {
                problems.push(format!(
                    "{at_s}: {} no selected running pod explains ({})",
                    plural(e.len(), "endpoint", "endpoints"),
                    first_few(e)
                ));
            }
            if let Some(d) = self.differ.get(&at) {
                problems.push(format!(
                    "{at_s}: {} with different fields ({})",
                    plural(d.len(), "endpoint", "endpoints"),
                    first_few(d)
                ));
            }
        }
        problems
    }
}

/// Sorted `(name, port, protocol)` of a slice's ports.
fn port_set(ports: &[EndpointPort]) -> Vec<(Option<String>, Option<u16>, Protocol)> {
    let mut v: Vec<_> = ports
        .iter()
        .map(|p| (p.name.clone(), p.port, p.protocol.unwrap_or_default()))
        .collect();
    v.sort();
    v
}

/// Without `topology-mode: Auto`: each selected pod's expected endpoint is compared with the
/// observed one of the same address, field by field, as `podToEndpoint` and the
/// `trafficDistribution` heuristic (or the removal of all hints) would write it. The property
/// tests check this agrees with `derive_endpoint_slices`.
fn compare_direct(
    ctx: &Ctx<'_, '_>,
    svc: &Service,
    observed: &[&EndpointSlice],
    pods: &[&Pod],
) -> Vec<String> {
    let td = svc.traffic_distribution.as_deref();
    let heuristic = valid_traffic_distribution(td, &ctx.cp).then(|| Heuristic::for_value(td, &ctx.cp));
    let newest = newest_by_type(observed);
    let slice_ports: Vec<_> = observed.iter().map(|s| port_set(&s.ports)).collect();
    let mut have: HashMap<(AddressType, IpAddr), (usize, &Endpoint)> = HashMap::new();
    for (si, s) in observed.iter().enumerate() {
        for ep in &s.endpoints {
            if let Some(ip) = ep.addresses.first() {
                have.entry((s.address_type, *ip)).or_insert((si, ep));
            }
        }
    }
    let numeric = svc
        .ports
        .iter()
        .all(|p| matches!(p.target_port, TargetPort::Number(_)));
    let shared_ports = numeric.then(|| port_set(&endpoint_ports(svc, &Pod::default())));
    let families = svc.families();
    let mut diffs = Diffs::default();
    let mut seen: HashSet<(AddressType, IpAddr)> = HashSet::new();
    for pod in pods {
        if !should_pod_be_in_endpoints(pod) {
            continue;
        }
        let Ok(node) = node_for_pod(pod, svc, ctx.node_lookup()) else {
            continue;
        };
        let own_ports;
        let want_ports = match &shared_ports {
            Some(p) => p,
            None => {
                own_ports = port_set(&endpoint_ports(svc, pod));
                &own_ports
            }
        };
        let serving = pod.ready;
        let terminating = pod.meta.deletion_timestamp.is_some();
        let ready = svc.publish_not_ready_addresses || (serving && !terminating);
        let node_name = Some(pod.spec.node_name.as_str()).filter(|n| !n.is_empty());
        let zone = node.and_then(|n| n.zone());
        for &family in &families {
            let Some(ip) = pod.pod_ips.iter().copied().find(|ip| IpFamily::of(ip) == family) else {
                continue;
            };
            let at = address_type_for(family);
            let key = (at, ip);
            let newer = newest
                .get(&at)
                .is_some_and(|n| pod.meta.creation_timestamp.as_deref().is_some_and(|c| c > *n));
            if newer {
                seen.insert(key); // Neither missing nor extra: the slice may predate the pod.
                continue;
            }
            let Some(&(si, ep)) = have.get(&key) else {
                diffs
                    .missing
                    .entry(at)
                    .or_default()
                    .push(format!("{ip} (pod {})", pod.meta.name));
                continue;
            };
            seen.insert(key);
            let mut wrong: Vec<String> = Vec::new();
            let c = &ep.conditions;
            let got = (
                c.ready.unwrap_or(true),
                c.serving.unwrap_or(true),
                c.terminating.unwrap_or(false),
            );
            if got != (ready, serving, terminating) {
                wrong.push(format!(
                    "ready/serving/terminating {}/{}/{} instead of {ready}/{serving}/{terminating}",
                    got.0, got.1, got.2
                ));
            }
            if ep.node_name.as_deref().filter(|n| !n.is_empty()) != node_name {
                wrong.push(format!("nodeName {:?} instead of {node_name:?}", ep.node_name));
            }
            if ep.zone.as_deref().filter(|z| !z.is_empty()) != zone {
                wrong.push(format!("zone {:?} instead of {zone:?}", ep.zone));
            }
            if slice_ports[si] != *want_ports {
                wrong.push("in a slice with other ports".to_string());
            }
            let (got_z, got_n) = ep
                .hints
                .as_ref()
                .map_or((&[][..], &[][..]), |h| (&h.for_zones[..], &h.for_nodes[..]));
            match heuristic {
                None if !got_z.is_empty() || !got_n.is_empty() => {
                    wrong.push("hints where none are expected".to_string());
                }
                Some(Heuristic::PreferClose {
                    node_hints,
                    empty_zone_hints,
                }) if ready => {
                    let want_z: Option<&str> = match zone {
                        Some(z) => Some(z),
                        None if empty_zone_hints => Some(""),
                        None => None,
                    };
                    let want_n = node_name.filter(|_| node_hints);
                    let zones_ok = got_z.iter().map(String::as_str).eq(want_z);
                    let nodes_ok = got_n.iter().map(String::as_str).eq(want_n);
                    if !zones_ok || !nodes_ok {
                        wrong.push(format!(
                            "hints zones={got_z:?} nodes={got_n:?} instead of zones={:?} nodes={:?}",
                            want_z.into_iter().collect::<Vec<_>>(),
                            want_n.into_iter().collect::<Vec<_>>()
                        ));
                    }
                }
                _ => {}
            }
            if !wrong.is_empty() {
                diffs
                    .differ
                    .entry(at)
                    .or_default()
                    .push(format!("{ip}: {}", wrong.join(", ")));
            }
        }
    }
    let mut extra: Vec<(AddressType, IpAddr)> = have.keys().filter(|k| !seen.contains(k)).copied().collect();
    extra.sort();
    for (at, ip) in extra {
        diffs.extra.entry(at).or_default().push(ip.to_string());
    }
    diffs.into_problems()
}

/// With `topology-mode: Auto`: derive the slices with the controller model and compare the
/// endpoints (without hints) and the per-zone hint counts.
fn compare_derived(
    ctx: &Ctx<'_, '_>,
    svc: &Service,
    observed: &[&EndpointSlice],
    pods: &[&Pod],
) -> Vec<String> {
    let derived = derive_endpoint_slices(svc, pods, ctx.node_lookup(), ctx.topology(), &ctx.cp);
    let created: HashMap<&str, Option<&str>> = pods
        .iter()
        .map(|p| (p.meta.name.as_str(), p.meta.creation_timestamp.as_deref()))
        .collect();
    let newest_all = newest_by_type(observed);
    let mut problems: Vec<String> = Vec::new();
    let mut types: Vec<AddressType> = observed.iter().map(|s| s.address_type).collect();
    types.extend(derived.slices.iter().map(|s| s.address_type));
    types.sort();
    types.dedup();
    let mut diffs = Diffs::default();
    for at in types {
        let obs: Vec<&EndpointSlice> = observed
            .iter()
            .copied()
            .filter(|s| s.address_type == at)
            .collect();
        let der: Vec<&EndpointSlice> = derived.slices.iter().filter(|s| s.address_type == at).collect();
        let newest = newest_all.get(&at).copied();
        let newer_than_slices = |ep: &Endpoint| -> bool {
            let (Some(newest), Some((_, _, pod))) = (newest, ep.target_ref.as_ref()) else {
                return false;
            };
            created
                .get(pod.as_str())
                .copied()
                .flatten()
                .is_some_and(|c| c > newest)
        };
        let mut want: BTreeMap<IpAddr, (Key, &Endpoint)> = BTreeMap::new();
        for s in &der {
            for ep in &s.endpoints {
                if let Some(ip) = ep.addresses.first() {
                    want.insert(*ip, (key(ep, &s.ports), ep));
                }
            }
        }
        let mut have: BTreeMap<IpAddr, Key> = BTreeMap::new();
        for s in &obs {
            for ep in &s.endpoints {
                if let Some(ip) = ep.addresses.first() {
                    have.entry(*ip).or_insert_with(|| key(ep, &s.ports));
                }
            }
        }
        let mut ignored: HashSet<IpAddr> = HashSet::new();
        for (ip, (k, ep)) in &want {
            if newer_than_slices(ep) {
                ignored.insert(*ip);
                continue;
            }
            match have.get(ip) {
                None => diffs.missing.entry(at).or_default().push(format!(
                    "{ip} (pod {})",
                    ep.target_ref.as_ref().map_or("?", |t| t.2.as_str())
                )),
                Some(h) if h != k => diffs.differ.entry(at).or_default().push(format!(
                    "{ip}: observed {} / expected {}",
                    describe(h),
                    describe(k)
                )),
                Some(_) => {}
            }
        }
        for ip in have.keys() {
            if !want.contains_key(ip) {
                diffs.extra.entry(at).or_default().push(ip.to_string());
            }
        }
        let o: Vec<EndpointSlice> = obs.iter().map(|s| (*s).clone()).collect();
        let d: Vec<EndpointSlice> = der.iter().map(|s| (*s).clone()).collect();
        let (ho, hd) = (hint_counts_by_zone(&o), hint_counts_by_zone(&d));
        if ho != hd && ignored.is_empty() {
            problems.push(format!(
                "{}: zone hints per zone observed {ho:?}, expected {hd:?}",
                at.as_str()
            ));
        }
    }
    let mut all = diffs.into_problems();
    all.extend(problems);
    all
}

fn first_few(items: &[String]) -> String {
    let mut s = items.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > 3 {
        s.push_str(&format!(", and {} more", items.len() - 3));
    }
    s
}
