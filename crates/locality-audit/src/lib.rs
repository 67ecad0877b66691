//! `locality-audit`: the audit rules `LOC001`–`LOC021` (docs/design.md §7) over a cluster state and its
//! routing [`Matrix`].
//!
//! Pure: no I/O, no async. [`audit`] returns an [`AuditReport`] (serialized as the stable
//! `apiVersion: locality/v1`, `kind: AuditReport` document, see the crate README); the CLI
//! renders it (table, JSON, YAML, Markdown, SARIF, HTML).
//!
//! The oracle is `locality-model`: endpoints per port come from the matrix (observed
//! EndpointSlices, else derived by the EndpointSlice controller model), the per-port node
//! counts from [`Matrix::summary`], the local endpoint sets mirror kube-proxy's
//! `CategorizeEndpoints`, hints and safeguards come from the controller model
//! (`endpointslice::{derive_endpoint_slices, recompute_hints, hint_counts_by_zone}`).
//!
//! **Client nodes** are nodes that run client pods ([`clients`]: bound, not finished, not
//! kube-proxy's own pods; hostNetwork pods count), weighted by their client pod count;
//! cordoned nodes still run clients. Where a finding names one Service's nodes (LOC004),
//! the Service's own backends are not counted as its clients. When the input has no pods,
//! or the shape is assumed (`--nodes`/`--zones`), every node counts as a client node.
//!
//! **Cost.** Indexes are built once, linear in the input. Per service port the work is
//! proportional to its endpoints plus the nodes a finding lists (at most
//! [`AuditOptions::node_limit`]); the summary uses [`Matrix::summary`], whose cost is
//! endpoints + ports × zones. Nothing iterates nodes × ports.

pub mod baseline;
mod builder;
pub mod causes;
pub mod clients;
pub mod config;
mod context;
pub mod finding;
mod owners;
pub mod report;
pub mod rule;
mod rules;
pub mod schedule;
mod shape;
pub mod suppress;

use std::collections::HashMap;

use locality_model::matrix::{DataPlane, Matrix, VerdictCounts};
use locality_model::objects::{ClusterState, Service};
use locality_model::proxy::{Destination, Source};

pub use baseline::Baseline;
pub use finding::{
    Finding, NodePods, ObjectRef, PortRef, ServiceRef, SourceLocation, Suppression, SuppressionKind,
};
pub use report::{
    AssumedShape, AuditOptions, AuditReport, DataPlaneInfo, InputKind, RouteCounts, ServiceSummary,
    SkippedRule, Totals,
};
pub use rule::{ParseError, RuleId, Severity};

use context::Ctx;

/// Audits `state` with its routing `matrix` (built by the caller with `Matrix::new(state, ..)`;
/// its configuration gives the Kubernetes and kube-proxy versions and the data plane).
///
/// When the input has no Nodes and `options` give `assumed_nodes` or `assumed_zones`, the
/// audit runs on a synthesized cluster of that shape instead (workloads' pods spread over the
/// assumed nodes; see the README), and `matrix` is rebuilt internally with the same
/// configuration. Rules that need cluster state the input lacks are listed in
/// [`AuditReport::skipped_rules`] with the reason.
///
/// Never panics; the result does not depend on the order of objects in `state`.
pub fn audit(state: &ClusterState, matrix: &Matrix<'_>, options: &AuditOptions) -> AuditReport {
    let wants_shape = options.assumed_nodes.is_some_and(|n| n > 0) || !options.assumed_zones.is_empty();
    if state.nodes.is_empty() && wants_shape {
        let (synth, shape) = shape::synthesize(state, options.assumed_nodes, &options.assumed_zones);
        let m = Matrix::new(&synth, matrix.config.clone()).assuming(matrix.assumed);
        let mut report = run(&synth, &m, options, true);
        report.assumed_shape = Some(shape);
        return report;
    }
    let mut report = run(state, matrix, options, false);
    if wants_shape {
        report
            .notes
            .push("--nodes/--zones ignored: the input has Nodes, the audit uses them".to_string());
    }
    report
}

/// Gives each finding the least sure assessment of the routes of the service ports it
/// concerns (its port and family when it names them, else every port of its Service).
fn assess(m: &Matrix<'_>, summaries: &[locality_model::matrix::PortSummary], findings: &mut [Finding]) {
    let mut by_service: HashMap<(&str, &str), Vec<&locality_model::matrix::PortSummary>> = HashMap::new();
    for s in summaries {
        let svc = &m.ports[s.port].service.meta;
        by_service
            .entry((svc.namespace.as_str(), svc.name.as_str()))
            .or_default()
            .push(s);
    }
    for f in findings {
        let mut acc: Option<locality_model::proxy::Assessment> = None;
        let key = (f.service.namespace.as_str(), f.service.name.as_str());
        for s in by_service.get(&key).into_iter().flatten() {
            let entry = &m.ports[s.port];
            let port = &entry.info.port;
            let same_port = f
                .port
                .as_ref()
                .is_none_or(|p| p.name == port.name && p.protocol == port.protocol && p.port == port.port);
            let same_family = f.ip_family.is_none_or(|fam| fam == entry.info.family);
            if same_port
                && same_family
                && let Some(a) = s.assessment
            {
                acc = Some(acc.map_or(a, |b| b.meet(a)));
            }
        }
        if let Some(a) = acc {
            f.confidence = Some(a.level);
            f.missing_facts = a.missing;
        }
    }
}

fn run(state: &ClusterState, m: &Matrix<'_>, options: &AuditOptions, assumed: bool) -> AuditReport {
    let mut ctx = Ctx::new(state, m, options, assumed);
    let (skipped, notes) = rules::availability(&ctx);
    let skipped_ids: Vec<_> = skipped.iter().map(|s| s.rule).collect();
    let rules_run: Vec<RuleId> = RuleId::ALL
        .into_iter()
        .filter(|r| options.selects(*r) && !skipped_ids.contains(r))
        .collect();
    // The per-port verdict counts only read the matrix: compute them on a second core while
    // the rules run (the audit must stay within 1.3x of `matrix -o summary`).
    let port_summaries = std::thread::scope(|scope| {
        let counts = scope.spawn(|| (0..m.ports.len()).map(|i| m.summary(i, 0)).collect::<Vec<_>>());
        rules::run(&mut ctx, &rules_run);
        counts
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });

    let mut findings = std::mem::take(&mut ctx.out);
    assess(m, &port_summaries, &mut findings);
    // Annotations first (they win), then the configuration's severities and exemptions.
    let mut suppress_notes = suppress::apply(state, &mut findings);
    let today = options.today.unwrap_or(jiff::civil::Date::MAX);
    suppress_notes.extend(config::apply(&options.config, today, state, &mut findings));
    findings.sort_by(|a, b| {
        (a.severity, a.rule, &a.service, &a.port, a.ip_family, &a.message).cmp(&(
            b.severity,
            b.rule,
            &b.service,
            &b.port,
            b.ip_family,
            &b.message,
        ))
    });
    findings.dedup();
    causes::name_clients(state, &mut findings);
    let mut per_service: HashMap<(&str, &str), usize> = HashMap::new();
    for f in findings.iter().filter(|f| f.suppression.is_none()) {
        *per_service
            .entry((f.service.namespace.as_str(), f.service.name.as_str()))
            .or_default() += 1;
    }
    let services = summaries(m, port_summaries, &per_service);
    let (kind, mode, name) = match &m.config.data_plane {
        DataPlane::KubeProxy(mode) => ("kube-proxy", *mode, None),
        DataPlane::Other(n) => ("other", None, Some(n.clone())),
        DataPlane::Unknown => ("unknown", None, None),
    };
    let mut all_notes = notes;
    if ctx
        .detection
        .plane
        .is_some_and(|p| p != locality_model::dataplane::Plane::KubeProxy)
    {
        all_notes.push(format!(
            "data plane detected: {} ({}); its known divergences from kube-proxy (docs/dataplanes.md): {}",
            ctx.detection.describe(),
            ctx.detection.source,
            if ctx.divergences.is_empty() {
                "none at this version".to_string()
            } else {
                ctx.divergences
                    .iter()
                    .map(|e| e.id)
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    all_notes.extend(suppress_notes);
    if assumed {
        all_notes.push(format!(
            "the input has no Nodes: audited on an assumed cluster of {} {}; workloads' pods are spread one per node, zones interleaved",
            m.nodes.len(),
            if m.nodes.len() == 1 { "node" } else { "nodes" }
        ));
    }
    let mut report = AuditReport {
        api_version: AuditReport::API_VERSION,
        kind: AuditReport::KIND,
        kubernetes_version: m.config.kube_version.to_string(),
        kube_proxy_version: m.config.kube_proxy_version.to_string(),
        data_plane: DataPlaneInfo {
            kind,
            mode,
            name: name.filter(|_| kind == "other"),
        },
        input: options.input,
        assumed_shape: None,
        node_count: m.nodes.len(),
        client_node_count: ctx.clients_sorted.len(),
        rules: rules_run,
        skipped_rules: skipped.into_iter().filter(|s| options.selects(s.rule)).collect(),
        totals: Totals::default(),
        findings,
        services,
        notes: all_notes,
    };
    report.recount();
    report
}

fn summaries(
    m: &Matrix<'_>,
    port_summaries: Vec<locality_model::matrix::PortSummary>,
    per_service: &HashMap<(&str, &str), usize>,
) -> Vec<ServiceSummary> {
    let mut out = Vec::with_capacity(m.ports.len());
    for s in port_summaries {
        let e = &m.ports[s.port];
        let svc: &Service = e.service;
        let mut pod = VerdictCounts::default();
        let mut external = Vec::new();
        for (source, dest, c) in s.counts {
            if source == Source::Pod && dest == Destination::ClusterIp {
                pod = c;
            } else if source == Source::External && dest != Destination::ClusterIp {
                external.push(RouteCounts {
                    source,
                    destination: dest,
                    delivered: c.deliver,
                    dropped: c.drop,
                    rejected: c.reject,
                    not_proxied: c.not_proxied,
                    mode_dependent: c.mode_dependent,
                });
            }
        }
        let policy = |local: bool| if local { "Local" } else { "Cluster" };
        out.push(ServiceSummary {
            service: ServiceRef {
                namespace: svc.meta.namespace.clone(),
                name: svc.meta.name.clone(),
            },
            port: builder::port_ref(e),
            ip_family: e.info.family,
            internal_traffic_policy: policy(e.info.internal_policy_local),
            external_traffic_policy: e
                .info
                .externally_accessible()
                .then(|| policy(e.info.external_policy_local)),
            traffic_distribution: svc.traffic_distribution.clone(),
            topology_mode: e.info.hints_annotation.clone(),
            endpoint_source: match e.endpoint_source {
                locality_model::matrix::EndpointSource::EndpointSlices => "EndpointSlices",
                locality_model::matrix::EndpointSource::Derived => "derived",
                locality_model::matrix::EndpointSource::Mirrored => "mirrored",
            },
            nodes: m.nodes.len(),
            delivered: pod.deliver,
            dropped: pod.drop,
            rejected: pod.reject,
            not_proxied: pod.not_proxied,
            mode_dependent: pod.mode_dependent,
            external,
            findings: per_service
                .get(&(svc.meta.namespace.as_str(), svc.meta.name.as_str()))
                .copied()
                .unwrap_or(0),
        });
    }
    out
}
