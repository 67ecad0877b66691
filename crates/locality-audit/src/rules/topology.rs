//! Traffic preferences and hints: LOC005–LOC011.

use std::collections::{BTreeMap, BTreeSet};

use locality_model::endpointslice::topologycache::REASON_HINTS_DISABLED;
use locality_model::endpointslice::trafficdist::{PREFER_CLOSE, PREFER_SAME_NODE, PREFER_SAME_ZONE};
use locality_model::endpointslice::{EventType, hints_enabled, recompute_hints};
use locality_model::matrix::{EndpointSource, PortEntry};
use locality_model::objects::{EndpointSlice, Service, ServiceType, TrafficPolicy};
use locality_model::proxy::{CategorizeIndex, ProxyEndpoint, ProxyNode};

use super::SvcView;
use crate::builder::{name_list, plural, port_text, svc_name};
use crate::context::Ctx;
use crate::rule::{RuleId, Severity};

/// The known `trafficDistribution` values.
pub(crate) fn known_td(td: Option<&str>) -> bool {
    matches!(td, Some(PREFER_CLOSE | PREFER_SAME_ZONE | PREFER_SAME_NODE))
}

/// Runs the rules of this module on one Service.
pub(crate) fn check(ctx: &mut Ctx<'_, '_>, v: &SvcView<'_, '_>, enabled: &dyn Fn(RuleId) -> bool) {
    let svc = v.svc;
    let proxied = svc.type_ != ServiceType::ExternalName && !svc.headless;
    let td = svc.traffic_distribution.as_deref();
    let auto = hints_enabled(&svc.meta.annotations);
    if enabled(RuleId::Loc005) && td == Some(PREFER_CLOSE) && ctx.cp.prefer_same_traffic_distribution {
        let b = ctx
            .finding(RuleId::Loc005, svc)
            .message(format!(
                "{} uses trafficDistribution: PreferClose, the deprecated name of PreferSameZone (Kubernetes {} has both; they behave the same)",
                svc_name(svc),
                ctx.cp.version
            ))
            .fix("write trafficDistribution: PreferSameZone");
        ctx.push(b);
    }
    if !proxied {
        return; // LOC018 covers preferences on headless and ExternalName Services.
    }
    if enabled(RuleId::Loc006) && svc.itp() == TrafficPolicy::Local && (known_td(td) || auto) {
        loc006(ctx, v, td, auto);
    }
    if enabled(RuleId::Loc010) && auto && td.is_some() {
        let b = ctx
            .finding(RuleId::Loc010, svc)
            .message(format!(
                "{} sets both the topology-mode: Auto annotation and trafficDistribution: {}: the EndpointSlice controller runs the Auto allocator and ignores the field",
                svc_name(svc),
                td.unwrap_or_default()
            ))
            .fix("remove one of them: keep trafficDistribution (predictable, no safeguards) or the annotation (CPU-proportional)");
        ctx.push(b);
    }
    for (p, _) in v.each() {
        let entry = &ctx.m.ports[p];
        if entry.info.not_proxied.is_some() || !entry.info.uses_cluster_endpoints() {
            continue;
        }
        if enabled(RuleId::Loc007) {
            loc007(ctx, svc, entry);
        }
        if enabled(RuleId::Loc011) {
            loc011(ctx, svc, entry);
        }
    }
    let zone_preference = auto || (known_td(td) && ctx.cp.service_traffic_distribution);
    if enabled(RuleId::Loc008) && zone_preference {
        loc008(ctx, v, auto);
    }
    if enabled(RuleId::Loc009) && auto {
        loc009(ctx, v);
    }
}

fn loc006(ctx: &mut Ctx<'_, '_>, v: &SvcView<'_, '_>, td: Option<&str>, auto: bool) {
    let svc = v.svc;
    let what = if auto {
        "the topology-mode: Auto annotation".to_string()
    } else {
        format!("trafficDistribution: {}", td.unwrap_or_default())
    };
    let external = v
        .ports
        .clone()
        .any(|p| ctx.m.ports[p].info.externally_accessible());
    let (severity, msg) = if external && svc.etp() == TrafficPolicy::Cluster {
        (
            Severity::Info,
            format!(
                "{} has internalTrafficPolicy: Local and {what}: ClusterIP traffic stays node-local whatever the hints say; the preference only filters external traffic (NodePort, load balancer, external IPs, externalTrafficPolicy: Cluster)",
                svc_name(svc)
            ),
        )
    } else {
        (
            Severity::Warning,
            format!(
                "{} has internalTrafficPolicy: Local and {what}: kube-proxy uses only local endpoints for ClusterIP traffic and never looks at hints, so the preference has no effect",
                svc_name(svc)
            ),
        )
    };
    let b = ctx
        .finding(RuleId::Loc006, svc)
        .severity(severity)
        .message(msg)
        .fix("drop the preference, or use internalTrafficPolicy: Cluster with trafficDistribution: PreferSameNode to prefer the local endpoint without dropping");
    ctx.push(b);
}

fn endpoint_text(ep: &ProxyEndpoint) -> String {
    let mut s = ep.to_string();
    if let Some(t) = &ep.target {
        s.push_str(&format!(" (pod {t}"));
        if let Some(n) = &ep.node_name {
            s.push_str(&format!(" on {n}"));
        }
        s.push(')');
    } else if let Some(n) = &ep.node_name {
        s.push_str(&format!(" (on {n})"));
    }
    s
}

/// Observed slices of the Service that hold an endpoint with this address.
fn slices_with<'s>(slices: &[&'s EndpointSlice], ep: &ProxyEndpoint) -> Vec<&'s EndpointSlice> {
    slices
        .iter()
        .copied()
        .filter(|s| s.endpoints.iter().any(|e| e.addresses.first() == Some(&ep.ip)))
        .collect()
}

fn loc007(ctx: &mut Ctx<'_, '_>, svc: &Service, entry: &PortEntry<'_>) {
    let ready: Vec<&ProxyEndpoint> = entry.endpoints.iter().filter(|e| e.ready).collect();
    for (kind, hinted) in [
        (
            "zone",
            &(|e: &ProxyEndpoint| !e.zone_hints.is_empty()) as &dyn Fn(&ProxyEndpoint) -> bool,
        ),
        ("node", &|e: &ProxyEndpoint| !e.node_hints.is_empty()),
    ] {
        if kind == "node" && !ctx.proxy.node_hints {
            continue;
        }
        let with = ready.iter().filter(|e| hinted(e)).count();
        if with == 0 || with == ready.len() {
            continue;
        }
        let unhinted: Vec<&ProxyEndpoint> = ready.iter().copied().filter(|e| !hinted(e)).collect();
        let first = unhinted[0];
        let effect = if kind == "zone" {
            "kube-proxy applies no zone preference on any node (hints are all-or-nothing)"
        } else {
            "kube-proxy applies no node preference on any node and falls back to zone hints, if complete"
        };
        let msg = format!(
            "{} {}: {} of {} ready endpoints carry {kind} hints but {} does not{}: {effect}",
            svc_name(svc),
            port_text(entry),
            with,
            ready.len(),
            endpoint_text(first),
            if unhinted.len() > 1 {
                format!(" (nor {} other)", unhinted.len() - 1)
            } else {
                String::new()
            }
        );
        let fix = match (&first.node_name, entry.endpoint_source) {
            (Some(n), _) if kind == "zone" && ctx
                .m
                .node_position(n)
                .is_some_and(|i| ctx.m.nodes[i].zone.is_empty()) =>
            {
                format!("label node {n} with topology.kubernetes.io/zone")
            }
            (_, EndpointSource::EndpointSlices) => {
                "check who writes these EndpointSlices: a hand-made or mirrored slice must carry the same hints".to_string()
            }
            _ => "give every endpoint's node a topology.kubernetes.io/zone label".to_string(),
        };
        let slices = slices_with(ctx.slices_of(svc), first);
        let nodes: Vec<usize> = unhinted
            .iter()
            .filter_map(|e| e.node_name.as_deref().and_then(|n| ctx.m.node_position(n)))
            .collect();
        let picked = ctx.listed(nodes);
        let b = ctx
            .finding(RuleId::Loc007, svc)
            .port(entry)
            .nodes(picked)
            .slices(&slices)
            .message(msg)
            .fix(fix);
        ctx.push(b);
    }
}

fn loc008(ctx: &mut Ctx<'_, '_>, v: &SvcView<'_, '_>, auto: bool) {
    let svc = v.svc;
    let mut zoneless: BTreeSet<usize> = BTreeSet::new();
    let mut endpoints = 0usize;
    for (p, _) in v.each() {
        for ep in ctx.m.ports[p].endpoints.iter().filter(|e| e.ready) {
            if let Some(i) = ep.node_name.as_deref().and_then(|n| ctx.m.node_position(n))
                && ctx.m.nodes[i].zone.is_empty()
            {
                zoneless.insert(i);
                endpoints += 1;
            }
        }
    }
    if zoneless.is_empty() {
        return;
    }
    let picked = ctx.listed(zoneless);
    let effect = if auto {
        "topology-mode: Auto gives up for the whole Service (\"One or more endpoints do not have a zone specified\")"
    } else {
        "the controller writes no zone hint for them, so kube-proxy applies no zone preference anywhere (LOC007)"
    };
    let msg = format!(
        "{}: {} run on {} without a topology.kubernetes.io/zone label ({}): {effect}",
        svc_name(svc),
        plural(endpoints, "ready endpoint", "ready endpoints"),
        plural(picked.count, "node", "nodes"),
        name_list(&picked)
    );
    let b = ctx
        .finding(RuleId::Loc008, svc)
        .nodes(picked)
        .message(msg)
        .fix("label every node with topology.kubernetes.io/zone (cloud providers do it; kind and bare metal need it by hand)");
    ctx.push(b);
}

fn loc009(ctx: &mut Ctx<'_, '_>, v: &SvcView<'_, '_>) {
    let svc = v.svc;
    let hinted = v.ports.clone().any(|p| {
        ctx.m.ports[p]
            .endpoints
            .iter()
            .any(|e| e.ready && !e.zone_hints.is_empty())
    });
    if hinted {
        return;
    }
    let name = svc_name(svc);
    let derived = v
        .ports
        .clone()
        .next()
        .is_some_and(|p| ctx.m.ports[p].endpoint_source == EndpointSource::Derived);
    let mirrored = v
        .ports
        .clone()
        .next()
        .is_some_and(|p| ctx.m.ports[p].endpoint_source == EndpointSource::Mirrored);
    let reason: Option<String> = if mirrored {
        Some(
            "its EndpointSlices are mirrored from an Endpoints object (a selector-less Service), and the mirroring controller writes no hints"
                .to_string(),
        )
    } else if !ctx.cp.topology_aware_hints {
        Some(format!(
            "the control plane ({}) does not enable TopologyAwareHints by default (1.24+)",
            ctx.cp.version
        ))
    } else {
        let events: Vec<_> = if derived {
            ctx.m
                .notes
                .controller_events
                .iter()
                .filter(|(s, _)| *s == name)
                .map(|(_, e)| e.clone())
                .collect()
        } else {
            let observed: Vec<EndpointSlice> = ctx.slices_of(svc).iter().map(|s| (*s).clone()).collect();
            recompute_hints(svc, &observed, ctx.topology(), &ctx.cp).1
        };
        let warnings: Vec<String> = events
            .into_iter()
            .filter(|e| e.event_type == EventType::Warning && e.reason == REASON_HINTS_DISABLED)
            .map(|e| e.message)
            .collect();
        (!warnings.is_empty()).then(|| format!("the safeguard that disabled them: {}", warnings.join("; ")))
    };
    let (reason, fix) = match reason {
        Some(r) => {
            let fix = if mirrored {
                "give the Service a selector (so the EndpointSlice controller writes hinted slices), or write the hints yourself in EndpointSlices you manage"
            } else if r.contains("Insufficient number of endpoints") || r.contains("overload threshold") {
                "run more endpoints (at least one per zone, in proportion to the zones' CPU), or use trafficDistribution: PreferSameZone (no safeguards)"
            } else if r.contains("zone") || r.contains("Node information") {
                "give every node a topology.kubernetes.io/zone label and allocatable CPU"
            } else {
                "use trafficDistribution: PreferSameZone, which has no safeguards"
            };
            (r, fix)
        }
        None => (
            "the controller's current computation would add hints: the observed EndpointSlices are stale or not written by the EndpointSlice controller".to_string(),
            "check that the EndpointSlice controller manages these slices and runs with TopologyAwareHints",
        ),
    };
    let msg = format!(
        "{name} asks for topology-mode: Auto but no ready endpoint has a zone hint, so every node routes cluster-wide; {reason}"
    );
    let slices = ctx.slices_of(svc).to_vec();
    let b = ctx
        .finding(RuleId::Loc009, svc)
        .slices(&slices)
        .message(msg)
        .fix(fix);
    ctx.push(b);
}

fn loc011(ctx: &mut Ctx<'_, '_>, svc: &Service, entry: &PortEntry<'_>) {
    let ready = entry.endpoints.iter().filter(|e| e.ready).count();
    let hinted = entry
        .endpoints
        .iter()
        .any(|e| e.ready && (!e.zone_hints.is_empty() || !e.node_hints.is_empty()));
    if ready < 2 || !hinted || ctx.client_pods == 0 {
        return;
    }
    let idx = CategorizeIndex::new(&entry.endpoints, &entry.info, &ctx.proxy);
    // Nodes that categorize on their own (endpoint hosts, node-hint targets), then the rest of
    // each zone as one anonymous node.
    let mut zone_rest: BTreeMap<&str, usize> = ctx.zone_client_pods().clone();
    let mut share = vec![0f64; entry.endpoints.len()];
    let mut add = |set: Option<&[usize]>, weight: usize| {
        if let Some(set) = set.filter(|s| !s.is_empty()) {
            let w = weight as f64 / set.len() as f64;
            for &e in set.iter() {
                share[e] += w;
            }
        }
    };
    let mut specials: Vec<usize> = idx
        .special_nodes()
        .filter_map(|n| ctx.m.node_position(n))
        .filter(|&i| ctx.is_client[i] && !ctx.windows[i])
        .collect();
    specials.sort_unstable();
    specials.dedup();
    for i in specials {
        let n = &ctx.m.nodes[i];
        let w = ctx.pods_on[i];
        if let Some(r) = zone_rest.get_mut(n.zone) {
            *r = r.saturating_sub(w);
        }
        let cat = idx.categorize(ProxyNode {
            name: n.name(),
            zone: n.zone,
        });
        add(cat.cluster.as_deref(), w);
    }
    for (zone, w) in &zone_rest {
        if *w == 0 {
            continue;
        }
        let cat = idx.categorize(ProxyNode { name: "", zone });
        add(cat.cluster.as_deref(), *w);
    }
    let total: f64 = share.iter().sum();
    if total <= 0.0 {
        return;
    }
    let Some((hot, &hot_share)) = share
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1).then_with(|| b.0.cmp(&a.0)))
    else {
        return;
    };
    let usable = entry.endpoints.iter().filter(|e| e.ready).count();
    let predicted = hot_share / total;
    let even = 1.0 / usable as f64;
    let factor = predicted / even;
    if factor < ctx.opts.concentration_factor {
        return;
    }
    let ep = &entry.endpoints[hot];
    let msg = format!(
        "{} {}: with its hints, endpoint {} is predicted to receive {:.0}% of the requests of the cluster's client pods, {:.1}× the even share of {:.0}% over {} ready endpoints",
        svc_name(svc),
        port_text(entry),
        endpoint_text(ep),
        predicted * 100.0,
        factor,
        even * 100.0,
        usable
    );
    let nodes: Vec<usize> = ep
        .node_name
        .as_deref()
        .and_then(|n| ctx.m.node_position(n))
        .into_iter()
        .collect();
    let picked = ctx.listed(nodes);
    let slices = slices_with(ctx.slices_of(svc), ep);
    let b = ctx
        .finding(RuleId::Loc011, svc)
        .port(entry)
        .nodes(picked)
        .slices(&slices)
        .message(msg)
        .fix("spread endpoints in proportion to where the clients run (topology spread constraints), or drop the preference for this Service");
    ctx.push(b);
}
