//! Local policies and reachability: LOC001–LOC004, LOC013, LOC015–LOC017, LOC019, LOC020.

use std::collections::{BTreeMap, HashSet};

use locality_model::matrix::{EndpointSource, PortEntry};
use locality_model::objects::{PodPhase, Service, ServiceType, TrafficPolicy, Workload, WorkloadKind};
use locality_model::proxy::ProxyMode;

use super::SvcView;
use crate::builder::{name_list, plural, port_text, svc_name};
use crate::context::{Ctx, LocalSets, Mode};
use crate::rule::{RuleId, Severity};
use crate::schedule::daemon_unfit;

/// Runs the rules of this module on one Service.
pub(crate) fn check(
    ctx: &mut Ctx<'_, '_>,
    v: &SvcView<'_, '_>,
    backing: &[&Workload],
    enabled: &dyn Fn(RuleId) -> bool,
) {
    let svc = v.svc;
    let proxied = svc.type_ != ServiceType::ExternalName && !svc.headless;
    let selectorless = svc.selector.as_ref().is_none_or(|s| s.is_empty());
    for (p, ls) in v.each() {
        let entry = &ctx.m.ports[p];
        if !proxied || entry.info.not_proxied.is_some() {
            continue;
        }
        let has_any = ls.any_ready || (ls.any_serving_terminating && ctx.proxy.terminating_fallback);
        if enabled(RuleId::Loc001) && has_any {
            loc001(ctx, svc, entry, ls, backing, selectorless);
        }
        if enabled(RuleId::Loc013) && !has_any && !selectorless {
            loc013(ctx, svc, entry);
        }
        if enabled(RuleId::Loc015) && has_any {
            loc015(ctx, svc, entry, ls);
        }
        if enabled(RuleId::Loc016) && has_any {
            loc016(ctx, svc, entry, ls);
        }
        if enabled(RuleId::Loc017) {
            loc017(ctx, svc, entry, ls, backing);
        }
        if enabled(RuleId::Loc020) && selectorless {
            loc020(ctx, svc, entry, ls);
        }
    }
    if !proxied || svc.itp() != TrafficPolicy::Local {
        return;
    }
    let first_local = v.each().next().map(|(_, ls)| ls);
    if enabled(RuleId::Loc002) {
        loc002(ctx, svc, backing, first_local);
    }
    if enabled(RuleId::Loc003) {
        loc003(ctx, svc, backing, first_local);
    }
    if enabled(RuleId::Loc004) {
        loc004(ctx, svc, backing, first_local);
    }
    if enabled(RuleId::Loc019) {
        loc019(ctx, v, backing);
    }
}

/// What a pod sees when its node has no local endpoint under ITP Local.
fn itp_symptom(mode: Mode, externally_accessible: bool) -> &'static str {
    match mode {
        Mode::Known(ProxyMode::Iptables | ProxyMode::Nftables) => {
            "time out (kube-proxy writes a DROP rule: \"has no local endpoints\")"
        }
        Mode::Known(ProxyMode::Ipvs) => {
            "get connection refused (an IPVS virtual server without real servers)"
        }
        Mode::Unknown if externally_accessible => {
            "time out on kube-proxy iptables/nftables (on IPVS they would reach remote endpoints instead: ITP is not enforced there)"
        }
        Mode::Unknown => "time out on kube-proxy iptables/nftables (connection refused on IPVS)",
    }
}

/// An [`itp_symptom`] for one pod: its first verb in the third person singular.
fn singular(symptom: &str) -> String {
    match symptom.split_once(' ') {
        Some((verb, rest)) => format!("{verb}s {rest}"),
        None => symptom.to_string(),
    }
}

fn loc001(
    ctx: &mut Ctx<'_, '_>,
    svc: &Service,
    entry: &PortEntry<'_>,
    ls: &LocalSets,
    backing: &[&Workload],
    selectorless: bool,
) {
    if !entry.info.internal_policy_local {
        return;
    }
    let ext = entry.info.externally_accessible();
    if ctx.mode.is_ipvs() && ext {
        return; // IPVS routes remotely: LOC017.
    }
    if selectorless && ls.with_local.is_empty() && ls.without_node > 0 {
        return; // LOC020 explains it.
    }
    let blind = ctx.blind_clients(ls);
    if blind.count == 0 {
        return;
    }
    let served = ctx.clients_sorted.len().saturating_sub(blind.count);
    let symptom = itp_symptom(ctx.mode, ext);
    let msg = format!(
        "{} of {} client nodes ({}) {} no usable local endpoint for {} {}: endpoints run on {}; the {} there calling the Service {}",
        blind.count,
        ctx.clients_sorted.len(),
        name_list(&blind),
        if blind.count == 1 { "has" } else { "have" },
        svc_name(svc),
        port_text(entry),
        plural(served, "client node", "client nodes"),
        plural(blind.pods, "pod", "pods"),
        if blind.pods == 1 {
            singular(symptom)
        } else {
            symptom.to_string()
        },
    );
    let daemonset = backing.iter().find(|w| w.kind == WorkloadKind::DaemonSet);
    let absent = daemonset
        .is_none()
        .then(|| crate::owners::absent_daemonset(ctx.state, &ctx.selected_pods(svc)))
        .flatten();
    let cause = match (daemonset, absent) {
        (Some(ds), _) => format!(
            "DaemonSet {}/{} has no ready pod there",
            ds.meta.namespace, ds.meta.name
        ),
        (None, Some(ds)) => format!(
            "DaemonSet {}/{ds} has no ready pod there (its spec is not in the input)",
            svc.meta.namespace
        ),
        (None, None) => "no ready endpoint there".to_string(),
    };
    let fix = match (daemonset, absent) {
        (Some(ds), _) => format!(
            "let DaemonSet {} run on every client node (nodeSelector, affinity, tolerations: see LOC003), or use internalTrafficPolicy: Cluster with trafficDistribution: PreferSameNode",
            ds.meta.name
        ),
        // The pods belong to a DaemonSet the input lacks: it runs as one already.
        (None, Some(ds)) => format!(
            "let DaemonSet {ds} run on every client node (its nodeSelector, affinity and tolerations are not in the input: add daemonsets to the dump and LOC003 says which nodes it misses), or use internalTrafficPolicy: Cluster with trafficDistribution: PreferSameNode"
        ),
        (None, None) => "run the backend as a DaemonSet on every client node, or use internalTrafficPolicy: Cluster with trafficDistribution: PreferSameNode (prefers the local endpoint, never drops)".to_string(),
    };
    let slices = ctx.slices_of(svc).to_vec();
    let b = ctx
        .finding(RuleId::Loc001, svc)
        .port(entry)
        .nodes(blind)
        .workloads(backing)
        .slices(&slices)
        .message(msg)
        .fix(fix)
        .cause(cause);
    ctx.push(b);
}

fn replicas(w: &Workload) -> u32 {
    w.replicas.unwrap_or(1)
}

fn loc002(ctx: &mut Ctx<'_, '_>, svc: &Service, backing: &[&Workload], ls: Option<&LocalSets>) {
    if backing.is_empty() || backing.iter().any(|w| w.kind == WorkloadKind::DaemonSet) {
        return;
    }
    let total: u64 = backing.iter().map(|w| u64::from(replicas(w))).sum();
    let clients = ctx.clients_sorted.len();
    if total >= clients as u64 {
        return;
    }
    let names: Vec<String> = backing
        .iter()
        .map(|w| format!("{} {} ({} replicas)", w.kind.as_str(), w.meta.name, replicas(w)))
        .collect();
    let msg = format!(
        "{} (internalTrafficPolicy: Local) is backed by {}: {} for {} client nodes, so at least {} client nodes never have a local endpoint",
        svc_name(svc),
        names.join(", "),
        plural(total as usize, "replica", "replicas"),
        clients,
        clients as u64 - total
    );
    let owners: Vec<String> = backing
        .iter()
        .map(|w| {
            format!(
                "{} {}/{} ({})",
                w.kind.as_str(),
                w.meta.namespace,
                w.meta.name,
                plural(replicas(w) as usize, "replica", "replicas")
            )
        })
        .collect();
    let cause = format!("{} for {clients} client nodes", owners.join(", "));
    let mut b = ctx
        .finding(RuleId::Loc002, svc)
        .workloads(backing)
        .cause(cause)
        .message(msg)
        .fix("run the backend as a DaemonSet on every client node, or use internalTrafficPolicy: Cluster with trafficDistribution: PreferSameNode");
    if let Some(ls) = ls {
        b = b.nodes(ctx.blind_clients(ls));
    }
    ctx.push(b);
}

fn loc003(ctx: &mut Ctx<'_, '_>, svc: &Service, backing: &[&Workload], ls: Option<&LocalSets>) {
    for ds in backing.iter().filter(|w| w.kind == WorkloadKind::DaemonSet) {
        let mut unfit: Vec<usize> = Vec::new();
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for &i in &ctx.clients_sorted {
            if let Some(why) = daemon_unfit(&ds.template, ctx.m.nodes[i].node) {
                unfit.push(i);
                *reasons.entry(why.describe()).or_default() += 1;
            }
        }
        if unfit.is_empty() {
            continue;
        }
        let still = ls.map_or(0, |ls| unfit.iter().filter(|i| ls.with_local.contains(i)).count());
        let picked = ctx.listed(unfit);
        let why: Vec<String> = reasons
            .iter()
            .take(4)
            .map(|(r, n)| format!("{r} ({})", plural(*n, "node", "nodes")))
            .collect();
        let mut msg = format!(
            "DaemonSet {}/{} behind {} (internalTrafficPolicy: Local) cannot run on {} of {} client nodes ({}), counting the tolerations the DaemonSet controller adds itself: {}",
            ds.meta.namespace,
            ds.meta.name,
            svc_name(svc),
            picked.count,
            ctx.clients_sorted.len(),
            name_list(&picked),
            why.join("; ")
        );
        if still > 0 {
            msg.push_str(&format!(
                "; {still} of them still run an endpoint scheduled earlier, which will not be replaced"
            ));
        }
        let fix = if reasons.keys().any(|r| r.starts_with("untolerated")) {
            "add tolerations for those taints to the DaemonSet's pod template (or keep clients off those nodes)"
        } else {
            "widen the DaemonSet's nodeSelector/affinity to every node that runs clients (or keep clients off those nodes)"
        };
        let cause = format!(
            "DaemonSet {}/{} {}",
            ds.meta.namespace,
            ds.meta.name,
            if let [(only, _)] = reasons.iter().collect::<Vec<_>>().as_slice() {
                // "nodeSelector k=v does not match them", "does not tolerate their taint t".
                match only.strip_prefix("untolerated taint ") {
                    Some(taint) => format!("does not tolerate their taint {taint}"),
                    None => format!("{only} them"),
                }
            } else {
                why.join("; ")
            }
        );
        let b = ctx
            .finding(RuleId::Loc003, svc)
            .nodes(picked)
            .workloads(&[*ds])
            .message(msg)
            .fix(fix)
            .cause(cause);
        ctx.push(b);
    }
}

/// True when a rolling update `maxSurge` is zero (unset defaults to 0 for DaemonSets).
fn surge_is_zero(max_surge: Option<&str>) -> bool {
    let Some(s) = max_surge.map(str::trim) else {
        return true;
    };
    let digits = s.strip_suffix('%').unwrap_or(s);
    digits.parse::<u64>().is_ok_and(|n| n == 0)
}

fn loc004(ctx: &mut Ctx<'_, '_>, svc: &Service, backing: &[&Workload], ls: Option<&LocalSets>) {
    for ds in backing.iter().filter(|w| w.kind == WorkloadKind::DaemonSet) {
        let strategy = ds.update_strategy.as_deref().unwrap_or("RollingUpdate");
        if strategy != "RollingUpdate" || !surge_is_zero(ds.max_surge.as_deref()) {
            continue;
        }
        let host_port = ds
            .template
            .ports
            .iter()
            .find_map(|p| p.host_port.filter(|h| *h != 0))
            .or_else(|| {
                ds.template
                    .ports
                    .first()
                    .filter(|_| ds.template.host_network)
                    .map(|p| p.container_port)
            });
        let unavailable = ds.max_unavailable.as_deref().unwrap_or("1");
        let mut msg = format!(
            "DaemonSet {}/{} behind {} (internalTrafficPolicy: Local) rolls out with maxSurge 0 (maxUnavailable {unavailable}): each node's old pod stops before the new one is ready, and pods there calling the Service {} for that gap",
            ds.meta.namespace,
            ds.meta.name,
            svc_name(svc),
            itp_symptom(ctx.mode, false)
        );
        let fix = match host_port {
            Some(hp) => {
                msg.push_str(&format!(
                    "; the pod uses hostPort {hp}, so a surge pod could not start beside the old one"
                ));
                "buffer and retry in the clients across the gap, or use trafficDistribution: PreferSameNode with internalTrafficPolicy: Cluster when the data may leave the node".to_string()
            }
            None => "set spec.updateStrategy.rollingUpdate.maxSurge: 1 and maxUnavailable: 0 (the new pod is ready before the old one stops)".to_string(),
        };
        let mut b = ctx
            .finding(RuleId::Loc004, svc)
            .workloads(&[*ds])
            .message(msg)
            .fix(fix);
        if let Some(ls) = ls {
            let nodes: Vec<usize> = ls
                .with_local
                .iter()
                .copied()
                .filter(|&i| ctx.is_client[i])
                .collect();
            b = b.nodes(ctx.listed_clients_of(svc, nodes));
        }
        ctx.push(b);
    }
}

fn loc013(ctx: &mut Ctx<'_, '_>, svc: &Service, entry: &PortEntry<'_>) {
    if entry.endpoint_source == EndpointSource::Derived && ctx.state.nodes.is_empty() {
        return; // Derivation needs the Nodes; the rule is skipped for this input.
    }
    let selected = ctx.selected_pods(svc);
    let live: Vec<usize> = selected
        .into_iter()
        .filter(|&i| !matches!(ctx.state.pods[i].phase, PodPhase::Succeeded | PodPhase::Failed))
        .collect();
    let ready = live.iter().filter(|&&i| ctx.state.pods[i].ready).count();
    let why = if !ctx.state.pods.is_empty() && live.is_empty() {
        "its selector matches no running pod".to_string()
    } else if !ctx.state.pods.is_empty() && ready == 0 {
        format!(
            "it selects {} and none is ready",
            plural(live.len(), "pod", "pods")
        )
    } else if entry.endpoints.is_empty() {
        "no endpoint serves this port (check targetPort against the pods' container ports)".to_string()
    } else {
        format!(
            "its {} are neither ready nor serving-terminating",
            plural(entry.endpoints.len(), "endpoint", "endpoints")
        )
    };
    let msg = format!(
        "{} {} has no usable endpoint anywhere: {why}; every node rejects connections (connection refused, ICMP port unreachable for UDP)",
        svc_name(svc),
        port_text(entry)
    );
    let fix = if live.is_empty() {
        "fix the selector so it matches the workload's pod template labels, or scale the workload up"
    } else {
        "make the pods ready (readiness probe, image, crash loop), and check targetPort against the containers' ports"
    };
    let backing = ctx.backing(svc);
    let slices = ctx.slices_of(svc).to_vec();
    let b = ctx
        .finding(RuleId::Loc013, svc)
        .port(entry)
        .workloads(&backing)
        .slices(&slices)
        .message(msg)
        .fix(fix);
    ctx.push(b);
}

fn loc015(ctx: &mut Ctx<'_, '_>, svc: &Service, entry: &PortEntry<'_>, ls: &LocalSets) {
    if !(entry.info.external_policy_local && entry.info.externally_accessible()) {
        return;
    }
    let dropping = ctx.nodes_without_local(ls);
    if dropping.count == 0 {
        return;
    }
    let behind_lb = svc.type_ == ServiceType::LoadBalancer;
    let mut msg = format!(
        "{} {} has externalTrafficPolicy: Local and {} of {} ({}) {} no local endpoint: external traffic arriving there is dropped (timeout)",
        svc_name(svc),
        port_text(entry),
        dropping.count,
        plural(ctx.linux_sorted.len(), "node", "nodes"),
        name_list(&dropping),
        if dropping.count == 1 { "has" } else { "have" }
    );
    let (severity, fix) = if behind_lb {
        msg.push_str(
            "; the load balancer's health checks (healthCheckNodePort) steer away from them, but clients reaching a NodePort directly still time out",
        );
        (
            Severity::Info,
            "make sure the load balancer health-checks healthCheckNodePort, or run an endpoint on every node that receives traffic",
        )
    } else {
        (
            Severity::Error,
            "send external traffic only to nodes that run an endpoint, run the backend on every node, or use externalTrafficPolicy: Cluster if the client source IP is not needed",
        )
    };
    let slices = ctx.slices_of(svc).to_vec();
    let b = ctx
        .finding(RuleId::Loc015, svc)
        .port(entry)
        .severity(severity)
        .nodes(dropping)
        .slices(&slices)
        .message(msg)
        .fix(fix);
    ctx.push(b);
}

fn loc016(ctx: &mut Ctx<'_, '_>, svc: &Service, entry: &PortEntry<'_>, ls: &LocalSets) {
    let info = &entry.info;
    let cluster_wide = !ls.any_ready && ls.any_serving_terminating && info.uses_cluster_endpoints();
    let (picked, msg) = if cluster_wide {
        let all = ctx.pick(&ctx.clients_sorted, ctx.client_pods, &HashSet::new(), |_| true);
        let msg = format!(
            "{} {} has no ready endpoint anywhere: every node uses serving-terminating endpoints (kube-proxy's fallback), which will all be gone within their grace period",
            svc_name(svc),
            port_text(entry)
        );
        (all, msg)
    } else {
        let nodes: Vec<usize> = ls
            .only_terminating
            .iter()
            .copied()
            .filter(|&i| {
                (info.internal_policy_local && ctx.is_client[i])
                    || (info.external_policy_local && info.externally_accessible())
            })
            .collect();
        if nodes.is_empty() || !(info.internal_policy_local || info.external_policy_local) {
            return;
        }
        let picked = ctx.listed(nodes);
        let msg = format!(
            "{} {}: on {} ({}) the only local endpoints are terminating; the node keeps serving through them, then drops when they exit",
            svc_name(svc),
            port_text(entry),
            plural(picked.count, "node", "nodes"),
            name_list(&picked)
        );
        (picked, msg)
    };
    if picked.count == 0 {
        return;
    }
    let slices = ctx.slices_of(svc).to_vec();
    let b = ctx
        .finding(RuleId::Loc016, svc)
        .port(entry)
        .nodes(picked)
        .slices(&slices)
        .message(msg)
        .fix("start replacement pods before the old ones terminate (maxSurge ≥ 1, PodDisruptionBudget), or find why no ready endpoint exists");
    ctx.push(b);
}

fn loc017(
    ctx: &mut Ctx<'_, '_>,
    svc: &Service,
    entry: &PortEntry<'_>,
    ls: &LocalSets,
    backing: &[&Workload],
) {
    if !(ctx.mode.is_ipvs() && entry.info.internal_policy_local && entry.info.externally_accessible()) {
        return;
    }
    let remote = ctx.blind_clients(ls);
    let msg = format!(
        "{} {} has internalTrafficPolicy: Local and is externally reachable: kube-proxy in IPVS mode programs the cluster endpoints on nodes without a local one, so ClusterIP traffic from {} leaves the node (the policy is not enforced)",
        svc_name(svc),
        port_text(entry),
        if remote.count == 0 {
            "such nodes (none today)".to_string()
        } else {
            format!(
                "{} ({})",
                plural(remote.count, "node", "nodes"),
                name_list(&remote)
            )
        }
    );
    let b = ctx
        .finding(RuleId::Loc017, svc)
        .port(entry)
        .nodes(remote)
        .workloads(backing)
        .message(msg)
        .fix("do not rely on node-local delivery under IPVS (deprecated since 1.35): use iptables or nftables mode, or split the external exposure into another Service");
    ctx.push(b);
}

fn loc019(ctx: &mut Ctx<'_, '_>, v: &SvcView<'_, '_>, backing: &[&Workload]) {
    let svc = v.svc;
    if !svc.publish_not_ready_addresses {
        return;
    }
    let mut nodes: Vec<usize> = Vec::new();
    for (_, ls) in v.each() {
        nodes.extend(ls.only_not_serving.iter().copied().filter(|&i| ctx.is_client[i]));
    }
    let picked = ctx.listed(nodes);
    let now = if picked.count == 0 {
        String::new()
    } else {
        format!(
            "; today on {} ({}) the only local endpoint is not ready",
            plural(picked.count, "node", "nodes"),
            name_list(&picked)
        )
    };
    let msg = format!(
        "{} sets publishNotReadyAddresses with internalTrafficPolicy: Local: every endpoint is marked ready, so pods send their node-local traffic to a local pod even before it is ready (and never to another node){now}",
        svc_name(svc)
    );
    let b = ctx
        .finding(RuleId::Loc019, svc)
        .nodes(picked)
        .workloads(backing)
        .message(msg)
        .fix("drop publishNotReadyAddresses (use a separate headless Service for peer discovery), or make the clients tolerate a not-ready local endpoint");
    ctx.push(b);
}

fn loc020(ctx: &mut Ctx<'_, '_>, svc: &Service, entry: &PortEntry<'_>, ls: &LocalSets) {
    let info = &entry.info;
    let itp = info.internal_policy_local;
    let etp = info.external_policy_local && info.externally_accessible();
    if !(itp || etp) || ls.without_node == 0 {
        return;
    }
    let all = ls.with_local.is_empty();
    let picked = if itp {
        ctx.blind_clients(ls)
    } else {
        ctx.nodes_without_local(ls)
    };
    let policy = if itp {
        "internalTrafficPolicy: Local"
    } else {
        "externalTrafficPolicy: Local"
    };
    let msg = if all {
        format!(
            "{} has no selector and {policy}; none of its {} on {} has a nodeName, so no node sees a local endpoint: every node drops",
            svc_name(svc),
            plural(ls.usable, "usable endpoint", "usable endpoints"),
            port_text(entry)
        )
    } else {
        format!(
            "{} has no selector and {policy}; {} of its {} on {} lack nodeName and are never local to any node",
            svc_name(svc),
            ls.without_node,
            plural(ls.usable, "usable endpoint", "usable endpoints"),
            port_text(entry)
        )
    };
    let slices = ctx.slices_of(svc).to_vec();
    let b = ctx
        .finding(RuleId::Loc020, svc)
        .port(entry)
        .severity(if all { Severity::Error } else { Severity::Warning })
        .nodes(picked)
        .slices(&slices)
        .message(msg)
        .fix(if entry.endpoint_source == EndpointSource::Mirrored {
            "set subsets[].addresses[].nodeName in the Endpoints object (its slices are mirrored from it), or use the Cluster policy for this Service"
        } else {
            "set endpoints[].nodeName in the hand-made EndpointSlices, or use the Cluster policy for this Service"
        });
    ctx.push(b);
}
