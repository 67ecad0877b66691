//! One root cause, one line: the human output's grouping of the findings that tell one story
//! (a DaemonSet agent behind `internalTrafficPolicy: Local` whose nodeSelector misses two
//! nodes is LOC001 on each port plus LOC003) into one line per Service and cause, with the
//! blind node count, the cause, the fix and the clients on those nodes named by owner.
//!
//! The documents (JSON, YAML, SARIF, JUnit) keep one finding per rule and port; this is
//! their summary for a reader, computed from the findings alone.

use std::collections::BTreeMap;

use locality_model::objects::ClusterState;
use locality_model::proxy::{Confidence, MissingFacts};

use crate::finding::{Finding, ServiceRef};
use crate::report::AuditReport;
use crate::rule::RuleId;

/// A Service blind on some of its client nodes, and why: one line of the human output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlindService {
    /// The Service.
    pub service: ServiceRef,
    /// The blind client nodes, the most loaded first (at most the findings' node limit).
    pub nodes: Vec<String>,
    /// How many client nodes are blind (over every port).
    pub blind: usize,
    /// How many client nodes the cluster has.
    pub client_nodes: usize,
    /// The root cause, from the most specific finding (LOC003, then LOC002, then LOC001).
    pub cause: String,
    /// That finding's fix.
    pub fix: String,
    /// Client pods on the blind nodes by owner, the most pods first.
    pub clients: Vec<(String, usize)>,
    /// The findings the line stands for: rule and how many (one per port for LOC001).
    pub findings: Vec<(RuleId, usize)>,
    /// The lowest confidence of its LOC001 findings.
    pub confidence: Option<Confidence>,
    /// The facts those findings assumed (their union).
    pub missing_facts: MissingFacts,
}

/// The rules whose cause explains a blind node, the most specific first: the DaemonSet that
/// cannot run there (LOC003), too few replicas (LOC002), no ready pod there (LOC001).
const LEAD: [RuleId; 3] = [RuleId::Loc003, RuleId::Loc002, RuleId::Loc001];

/// Why one node is blind for a Service, as the audit found it ([`on_node`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCause {
    /// The finding's rule.
    pub rule: RuleId,
    /// Its cause ([`Finding::cause`]).
    pub cause: String,
    /// Its fix.
    pub fix: String,
    /// How many nodes share the cause (this one included).
    pub nodes: usize,
}

/// The cause the audit found for `node` being blind for Service `namespace/name`: the most
/// specific of its findings (see [`LEAD`]) whose nodes hold `node` (LOC002 is about the
/// Service as a whole: it counts when a LOC001 finding holds `node`). `None` when no
/// finding names the node (the node is not blind, or `report` lists fewer nodes than it
/// counts: audit with `node_limit: usize::MAX` to ask).
pub fn on_node(report: &AuditReport, namespace: &str, name: &str, node: &str) -> Option<NodeCause> {
    let of_service: Vec<&Finding> = report
        .active()
        .filter(|f| f.service.namespace == namespace && f.service.name == name && f.cause.is_some())
        .collect();
    let names = |f: &Finding| f.nodes.iter().any(|n| n.node == node);
    let blind = of_service
        .iter()
        .filter(|f| f.rule == RuleId::Loc001 && names(f))
        .max_by_key(|f| f.node_count)?;
    LEAD.iter().find_map(|rule| {
        let f = of_service
            .iter()
            .find(|f| f.rule == *rule && (f.rule == RuleId::Loc002 || names(f)))?;
        Some(NodeCause {
            rule: f.rule,
            cause: f.cause.clone().unwrap_or_default(),
            fix: f.fix.clone(),
            nodes: if f.rule == RuleId::Loc003 {
                f.node_count
            } else {
                blind.node_count
            },
        })
    })
}

/// The blind Services of `report`, one per Service and cause, in the order of the Services'
/// first LOC001 finding (errors first). Suppressed findings are left out.
pub fn group(report: &AuditReport) -> Vec<BlindService> {
    let mut order: Vec<&ServiceRef> = Vec::new();
    let mut by_service: BTreeMap<&ServiceRef, Vec<&Finding>> = BTreeMap::new();
    for f in report.active() {
        if f.rule == RuleId::Loc001 && !by_service.contains_key(&f.service) {
            order.push(&f.service);
        }
        by_service.entry(&f.service).or_default().push(f);
    }
    let mut out = Vec::new();
    for svc in order {
        let findings = &by_service[svc];
        let blind: Vec<&Finding> = findings
            .iter()
            .copied()
            .filter(|f| f.rule == RuleId::Loc001)
            .collect();
        let lead = LEAD
            .iter()
            .find_map(|r| findings.iter().find(|f| f.rule == *r && f.cause.is_some()))
            .copied()
            .unwrap_or(blind[0]);
        let widest = blind
            .iter()
            .max_by_key(|f| f.node_count)
            .copied()
            .unwrap_or(blind[0]);
        let mut clients: BTreeMap<&str, usize> = BTreeMap::new();
        for (owner, pods) in &widest.clients {
            *clients.entry(owner).or_default() += pods;
        }
        let mut clients: Vec<(String, usize)> =
            clients.into_iter().map(|(o, n)| (o.to_string(), n)).collect();
        clients.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut counts: BTreeMap<RuleId, usize> = BTreeMap::new();
        let grouped = |f: &&&Finding| {
            f.rule == RuleId::Loc001
                || (matches!(f.rule, RuleId::Loc002 | RuleId::Loc003) && f.cause.is_some())
        };
        for f in findings.iter().filter(grouped) {
            *counts.entry(f.rule).or_default() += 1;
        }
        out.push(BlindService {
            service: svc.clone(),
            nodes: widest.nodes.iter().map(|n| n.node.clone()).collect(),
            blind: widest.node_count,
            client_nodes: report.client_node_count,
            cause: lead.cause.clone().unwrap_or_default(),
            fix: lead.fix.clone(),
            clients,
            findings: counts.into_iter().collect(),
            confidence: blind.iter().filter_map(|f| f.confidence).min(),
            missing_facts: blind
                .iter()
                .fold(MissingFacts::NONE, |m, f| m.union(f.missing_facts)),
        });
    }
    out
}

/// The owner a pod's clients are named by: its controller (a ReplicaSet stands for its
/// Deployment when the input has it), else the pod itself.
fn owner_of(state: &ClusterState, rs_parent: &BTreeMap<(&str, &str), &str>, pod: usize) -> String {
    let pod = &state.pods[pod];
    let ns = pod.meta.namespace.as_str();
    match pod.meta.owner_references.iter().find(|o| o.controller) {
        Some(o) if o.kind == "ReplicaSet" => match rs_parent.get(&(ns, o.name.as_str())) {
            Some(d) => format!("Deployment {ns}/{d}"),
            None => format!("ReplicaSet {ns}/{}", o.name),
        },
        Some(o) => format!("{} {ns}/{}", o.kind, o.name),
        None => format!("Pod {ns}/{}", pod.meta.name),
    }
}

/// Names the client pods of each LOC001 finding's nodes by owner ([`Finding::clients`]).
pub(crate) fn name_clients(state: &ClusterState, findings: &mut [Finding]) {
    if !findings.iter().any(|f| f.rule == RuleId::Loc001) {
        return;
    }
    let mut rs_parent: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for w in state
        .workloads
        .iter()
        .filter(|w| w.kind == locality_model::objects::WorkloadKind::ReplicaSet)
    {
        if let Some(d) = w
            .meta
            .owner_references
            .iter()
            .find(|o| o.controller && o.kind == "Deployment")
        {
            rs_parent.insert((w.meta.namespace.as_str(), w.meta.name.as_str()), d.name.as_str());
        }
    }
    let mut on_node: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, p) in state.pods.iter().enumerate() {
        if crate::clients::is_client_pod(p) {
            on_node.entry(p.spec.node_name.as_str()).or_default().push(i);
        }
    }
    let services: BTreeMap<(&str, &str), &locality_model::objects::Service> = state
        .services
        .iter()
        .map(|s| ((s.meta.namespace.as_str(), s.meta.name.as_str()), s))
        .collect();
    for f in findings.iter_mut().filter(|f| f.rule == RuleId::Loc001) {
        let Some(svc) = services.get(&(f.service.namespace.as_str(), f.service.name.as_str())) else {
            continue;
        };
        let mut owners: BTreeMap<String, usize> = BTreeMap::new();
        for n in &f.nodes {
            for &p in on_node.get(n.node.as_str()).map_or(&[][..], Vec::as_slice) {
                if crate::clients::is_client_of(&state.pods[p], svc) {
                    *owners.entry(owner_of(state, &rs_parent, p)).or_default() += 1;
                }
            }
        }
        let mut owners: Vec<(String, usize)> = owners.into_iter().collect();
        owners.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        f.clients = owners;
    }
}
