//! The rules, grouped by what they look at:
//! - [`local`]: Local policies and reachability (LOC001–LOC004, LOC013, LOC015–LOC017,
//!   LOC019, LOC020);
//! - [`topology`]: traffic preferences and hints (LOC005–LOC011);
//! - [`config`]: versions and settings without effect (LOC012, LOC018);
//! - [`slices`]: observed vs derived EndpointSlices (LOC014);
//! - [`dataplane`]: known divergences of the detected data plane (LOC021).

mod config;
mod dataplane;
mod local;
mod slices;
mod topology;

use std::collections::HashMap;
use std::ops::Range;

use locality_model::objects::{Service, TrafficPolicy, WorkloadKind};

use crate::context::{Ctx, LocalSets};
use crate::report::SkippedRule;
use crate::rule::RuleId;

/// What a Service's rules get: its port entries (a range of `Matrix::ports`) and their local
/// endpoint sets.
pub(crate) struct SvcView<'v, 's> {
    pub svc: &'s Service,
    pub ports: Range<usize>,
    pub locals: &'v [LocalSets],
}

impl SvcView<'_, '_> {
    /// Port indices with their local sets.
    pub(crate) fn each(&self) -> impl Iterator<Item = (usize, &LocalSets)> {
        self.ports.clone().zip(self.locals.iter())
    }
}

/// Rules that cannot run on this input, and notes about the input.
pub(crate) fn availability(ctx: &Ctx<'_, '_>) -> (Vec<SkippedRule>, Vec<String>) {
    let s = ctx.state;
    let nodes = !s.nodes.is_empty();
    let pods = !s.pods.is_empty();
    let slices = !s.endpoint_slices.is_empty();
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    let mut skip = |rules: &[RuleId], reason: &str| {
        for &rule in rules {
            skipped.push(SkippedRule {
                rule,
                reason: reason.to_string(),
            });
        }
    };
    if !nodes {
        skip(
            &[
                RuleId::Loc001,
                RuleId::Loc002,
                RuleId::Loc008,
                RuleId::Loc009,
                RuleId::Loc011,
                RuleId::Loc015,
                RuleId::Loc016,
            ],
            "the input has no Nodes: which nodes run clients and endpoints is unknown (give --nodes N and --zones a,b,c to assume a cluster shape)",
        );
    }
    if ctx.assumed {
        skip(
            &[RuleId::Loc003],
            "the nodes are assumed (--nodes/--zones): their labels and taints are unknown",
        );
        skip(
            &[RuleId::Loc014],
            "the nodes are assumed (--nodes/--zones): there are no observed EndpointSlices to compare",
        );
    } else {
        if !nodes {
            skip(
                &[RuleId::Loc003],
                "the input has no Nodes: node labels and taints are unknown",
            );
        }
        if !slices || !pods || !nodes {
            skip(
                &[RuleId::Loc014],
                "LOC014 needs observed EndpointSlices, Pods and Nodes together (the input lacks some)",
            );
        }
    }
    let derivable = pods && nodes;
    if !slices && !derivable {
        skip(
            &[RuleId::Loc007, RuleId::Loc013],
            "the input has no EndpointSlices, and no Pods and Nodes to derive them from: endpoints are unknown",
        );
    }
    if !slices {
        skip(
            &[RuleId::Loc020],
            "the input has no EndpointSlices: a selector-less Service's endpoints are unknown",
        );
    }
    // A kind the pods name as their controller but the input lacks: the rules that read it
    // cannot run (a dump without DaemonSets is not a cluster without them).
    let has = |kinds: &[WorkloadKind]| s.workloads.iter().any(|w| kinds.contains(&w.kind));
    for missing in crate::owners::missing_kinds(s) {
        let rules: &[RuleId] = match missing.kind {
            WorkloadKind::DaemonSet => &[RuleId::Loc003, RuleId::Loc004],
            // LOC002 counts replicas: of the Deployment (through its ReplicaSets), the
            // ReplicaSet or the StatefulSet; with none of them it has nothing to count.
            WorkloadKind::ReplicaSet | WorkloadKind::StatefulSet
                if !has(&[
                    WorkloadKind::Deployment,
                    WorkloadKind::ReplicaSet,
                    WorkloadKind::StatefulSet,
                ]) =>
            {
                &[RuleId::Loc002]
            }
            _ => &[],
        };
        for &rule in rules {
            if !skipped.iter().any(|k: &SkippedRule| k.rule == rule) {
                skipped.push(SkippedRule {
                    rule,
                    reason: missing.reason(),
                });
            }
        }
    }
    skipped.sort_by_key(|k| k.rule);
    if nodes && !pods && !ctx.assumed {
        notes.push("the input has no Pods: every node counts as a client node, with 0 pods".to_string());
    }
    (skipped, notes)
}

/// Runs the selected rules that can run (`rules`) over every Service.
pub(crate) fn run(ctx: &mut Ctx<'_, '_>, rules: &[RuleId]) {
    let enabled = |r: RuleId| rules.contains(&r);
    let m = ctx.m;
    let state = ctx.state;
    let mut ranges: HashMap<usize, Range<usize>> = HashMap::new();
    for (i, e) in m.ports.iter().enumerate() {
        let key = e.service as *const Service as usize;
        ranges.entry(key).or_insert(i..i).end = i + 1;
    }
    let mut services: Vec<&Service> = state.services.iter().collect();
    services.sort_by(|a, b| (&a.meta.namespace, &a.meta.name).cmp(&(&b.meta.namespace, &b.meta.name)));
    for svc in services {
        let ports = ranges
            .get(&(svc as *const Service as usize))
            .cloned()
            .unwrap_or(0..0);
        let locals: Vec<LocalSets> = ports.clone().map(|p| ctx.local_sets(&m.ports[p])).collect();
        let view = SvcView {
            svc,
            ports,
            locals: &locals,
        };
        let local_policy = svc.itp() == TrafficPolicy::Local || svc.etp() == TrafficPolicy::Local;
        let backing = if local_policy || svc.publish_not_ready_addresses {
            ctx.backing(svc)
        } else {
            Vec::new()
        };
        local::check(ctx, &view, &backing, &enabled);
        topology::check(ctx, &view, &enabled);
        config::check(ctx, &view, &enabled);
        if enabled(RuleId::Loc014) {
            slices::check(ctx, svc);
        }
        if enabled(RuleId::Loc021) {
            dataplane::check(ctx, svc);
        }
    }
}
