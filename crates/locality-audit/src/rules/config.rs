//! Versions and settings without effect: LOC012 (the version table of docs/design.md §2 /
//! docs/upstream.md §5, through `locality_model::version`) and LOC018.

use locality_model::endpointslice::hints_enabled;
use locality_model::endpointslice::trafficdist::{PREFER_CLOSE, PREFER_SAME_NODE, PREFER_SAME_ZONE};
use locality_model::objects::{
    ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE, Service, ServiceType, TrafficPolicy,
};

use super::SvcView;
use crate::builder::{Picked, name_list, plural, svc_name};
use crate::context::{Ctx, ProxyFeature};
use crate::rule::RuleId;

/// Runs the rules of this module on one Service.
pub(crate) fn check(ctx: &mut Ctx<'_, '_>, v: &SvcView<'_, '_>, enabled: &dyn Fn(RuleId) -> bool) {
    let svc = v.svc;
    let proxied = svc.type_ != ServiceType::ExternalName && !svc.headless;
    if enabled(RuleId::Loc018) && !proxied {
        loc018(ctx, svc);
    }
    if enabled(RuleId::Loc012) && proxied {
        loc012(ctx, svc);
    }
}

fn push012(ctx: &mut Ctx<'_, '_>, svc: &Service, msg: String, fix: &str, nodes: Option<Picked>) {
    let mut b = ctx.finding(RuleId::Loc012, svc).message(msg).fix(fix);
    if let Some(n) = nodes {
        b = b.nodes(n);
    }
    ctx.push(b);
}

fn loc012(ctx: &mut Ctx<'_, '_>, svc: &Service) {
    let name = svc_name(svc);
    let cp = ctx.cp;
    let td = svc.traffic_distribution.as_deref();
    let auto = hints_enabled(&svc.meta.annotations);
    if svc.itp() == TrafficPolicy::Local {
        let old = ctx.nodes_lacking(ProxyFeature::Itp);
        if old.count > 0 {
            let msg = format!(
                "{name} sets internalTrafficPolicy: Local, which kube-proxy before 1.22 ignores: on {} ({}) it routes cluster-wide",
                plural(old.count, "node", "nodes"),
                name_list(&old)
            );
            push012(
                ctx,
                svc,
                msg,
                "upgrade kube-proxy on those nodes to 1.22 or later",
                Some(old),
            );
        }
    }
    let mut td_effective = false;
    match td {
        None => {}
        Some(PREFER_CLOSE) if !cp.service_traffic_distribution => {
            let msg = format!(
                "{name} sets trafficDistribution: PreferClose, which the control plane ({}) does not enable by default (1.31+): the EndpointSlice controller writes no hints, so there is no preference",
                cp.version
            );
            push012(
                ctx,
                svc,
                msg,
                "upgrade the control plane to 1.31 or later, or enable the ServiceTrafficDistribution feature gate",
                None,
            );
        }
        Some(v @ (PREFER_SAME_ZONE | PREFER_SAME_NODE)) if !cp.prefer_same_traffic_distribution => {
            let msg = format!(
                "{name} sets trafficDistribution: {v}, which the control plane ({}) does not enable by default (1.34+, gate PreferSameTrafficDistribution): the value is treated as unset and no hints are written",
                cp.version
            );
            let fix = if cp.service_traffic_distribution && v == PREFER_SAME_ZONE {
                "use trafficDistribution: PreferClose (same behaviour) until the control plane is 1.34 or later"
            } else {
                "upgrade the control plane (API server and controller manager) to 1.34 or later"
            };
            push012(ctx, svc, msg, fix, None);
        }
        Some(PREFER_CLOSE | PREFER_SAME_ZONE | PREFER_SAME_NODE) => td_effective = !auto,
        Some(other) => {
            let msg = format!(
                "{name} sets trafficDistribution: {other:?}, which no Kubernetes version knows: it is treated as unset"
            );
            push012(
                ctx,
                svc,
                msg,
                "use PreferSameZone or PreferSameNode (or remove the field)",
                None,
            );
        }
    }
    if auto && !cp.topology_aware_hints {
        let msg = format!(
            "{name} sets the topology-mode: Auto annotation, which the control plane ({}) does not act on by default (TopologyAwareHints, 1.24+)",
            cp.version
        );
        push012(ctx, svc, msg, "upgrade the control plane to 1.24 or later", None);
    }
    let hints_written = td_effective || (auto && cp.topology_aware_hints);
    if hints_written {
        let old = ctx.nodes_lacking(ProxyFeature::ZoneHints);
        if old.count > 0 {
            let msg = format!(
                "kube-proxy before 1.24 on {} ({}) does not read the zone hints of {name}: no preference there",
                plural(old.count, "node", "nodes"),
                name_list(&old)
            );
            push012(
                ctx,
                svc,
                msg,
                "upgrade kube-proxy on those nodes to 1.24 or later",
                Some(old),
            );
        }
    }
    let annotation_set = svc
        .meta
        .annotations
        .get(ANNOTATION_TOPOLOGY_AWARE_HINTS)
        .or_else(|| svc.meta.annotations.get(ANNOTATION_TOPOLOGY_MODE))
        .is_some_and(|v| !matches!(v.as_str(), "" | "disabled" | "Disabled"));
    if td_effective && !annotation_set {
        let old = ctx.nodes_lacking(ProxyFeature::HintsWithoutAnnotation);
        if old.count > 0 {
            let msg = format!(
                "kube-proxy before 1.31 on {} ({}) only uses hints when the Service carries the topology annotation: trafficDistribution of {name} has no effect there",
                plural(old.count, "node", "nodes"),
                name_list(&old)
            );
            push012(
                ctx,
                svc,
                msg,
                "upgrade kube-proxy on those nodes to 1.31 or later",
                Some(old),
            );
        }
    }
    if td_effective && td == Some(PREFER_SAME_NODE) {
        let old = ctx.nodes_lacking(ProxyFeature::NodeHints);
        if old.count > 0 {
            let msg = format!(
                "kube-proxy before 1.34 on {} ({}) does not read node hints (gate PreferSameTrafficDistribution): PreferSameNode of {name} acts as PreferSameZone there",
                plural(old.count, "node", "nodes"),
                name_list(&old)
            );
            push012(
                ctx,
                svc,
                msg,
                "upgrade kube-proxy on those nodes to 1.34 or later",
                Some(old),
            );
        }
    }
}

fn loc018(ctx: &mut Ctx<'_, '_>, svc: &Service) {
    let mut set: Vec<String> = Vec::new();
    if svc.internal_traffic_policy == Some(TrafficPolicy::Local) {
        set.push("internalTrafficPolicy: Local".to_string());
    }
    if svc.external_traffic_policy == Some(TrafficPolicy::Local) {
        set.push("externalTrafficPolicy: Local".to_string());
    }
    if let Some(td) = &svc.traffic_distribution {
        set.push(format!("trafficDistribution: {td}"));
    }
    if hints_enabled(&svc.meta.annotations) {
        set.push("topology-mode: Auto".to_string());
    }
    if set.is_empty() {
        return;
    }
    let what = if svc.type_ == ServiceType::ExternalName {
        "an ExternalName Service (a DNS alias: kube-proxy writes no rules)"
    } else {
        "a headless Service (clusterIP: None: clients reach pod IPs from DNS, kube-proxy writes no rules)"
    };
    let msg = format!("{} is {what}, so {} has no effect", svc_name(svc), set.join(", "));
    let b = ctx
        .finding(RuleId::Loc018, svc)
        .message(msg)
        .fix("remove the setting, or give the Service a cluster IP if node-local routing is needed");
    ctx.push(b);
}
