//! The audit's inputs besides the cluster state ([`AuditOptions`]) and its result
//! ([`AuditReport`]), serialized as the stable `locality/v1` `AuditReport` document
//! (camelCase JSON, documented in the crate README).

use std::collections::BTreeSet;

use locality_model::objects::IpFamily;
use locality_model::proxy::{Destination, ProxyMode, Source};
use serde::Serialize;

use crate::finding::{Finding, PortRef, ServiceRef};
use crate::rule::{RuleId, Severity};

/// Where the cluster state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// Files or stdin (`-f`): objects carry file locations.
    #[default]
    Files,
    /// A live cluster read through the API (get/list only).
    Live,
    /// The embedded simulated cluster.
    Simulated,
}

/// Options of one audit run. The Kubernetes and kube-proxy versions and the data plane are
/// taken from the [`Matrix`](locality_model::matrix::Matrix)'s configuration.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// Run only these rules (`--rule`); empty runs every rule.
    pub only: BTreeSet<RuleId>,
    /// Never run these rules (`--skip-rule`); applied after `only`.
    pub skip: BTreeSet<RuleId>,
    /// Where the state came from.
    pub input: InputKind,
    /// `--nodes N`: when the input has no Nodes (a rendered chart), assume a cluster of this
    /// many nodes (default: one per assumed zone).
    pub assumed_nodes: Option<usize>,
    /// `--zones a,b,c`: zones of the assumed nodes, dealt round-robin.
    pub assumed_zones: Vec<String>,
    /// At most this many nodes are listed per finding (the most loaded first); the totals are
    /// always complete. `usize::MAX` lists every node.
    pub node_limit: usize,
    /// LOC011 fires when an endpoint's predicted share of requests is at least this many times
    /// the even share.
    pub concentration_factor: f64,
    /// The team's configuration (`.locality.yaml`): severities, disabled rules, exemptions.
    pub config: crate::config::AuditConfig,
    /// Today, for exemptions' expiry (the caller's clock). `None`: exemptions with an
    /// expiry date do not apply.
    pub today: Option<jiff::civil::Date>,
    /// The data plane detected by the caller (live: from `kube-system` with its ConfigMaps);
    /// `None`: detected from the input's DaemonSets.
    pub data_plane: Option<locality_model::dataplane::Detection>,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            only: BTreeSet::new(),
            skip: BTreeSet::new(),
            input: InputKind::Files,
            assumed_nodes: None,
            assumed_zones: Vec::new(),
            node_limit: 100,
            concentration_factor: 2.0,
            config: crate::config::AuditConfig::default(),
            today: None,
            data_plane: None,
        }
    }
}

impl AuditOptions {
    /// True when the options select `rule` (`--rule`, `--skip-rule`, and the configuration's
    /// `enabled: false`).
    pub fn selects(&self, rule: RuleId) -> bool {
        (self.only.is_empty() || self.only.contains(&rule))
            && !self.skip.contains(&rule)
            && !self.config.disabled().any(|r| r == rule)
    }
}

/// A rule that did not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedRule {
    /// Rule.
    pub rule: RuleId,
    /// Why it did not run (which input is missing).
    pub reason: String,
}

/// Node counts per verdict for one route (source → destination) of a service port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteCounts {
    /// Traffic source.
    pub source: Source,
    /// Destination.
    pub destination: Destination,
    /// Nodes that deliver.
    pub delivered: usize,
    /// Nodes that drop (timeout).
    pub dropped: usize,
    /// Nodes that reject (connection refused).
    pub rejected: usize,
    /// Nodes that do not proxy (headless, ExternalName, Windows).
    pub not_proxied: usize,
    /// Nodes whose verdict depends on the unknown proxy mode.
    pub mode_dependent: usize,
}

/// The per-Service summary: one entry per (service port, IP family), from
/// [`Matrix::summary`](locality_model::matrix::Matrix::summary).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSummary {
    /// The Service.
    pub service: ServiceRef,
    /// The port.
    pub port: PortRef,
    /// The IP family.
    pub ip_family: IpFamily,
    /// `Local` or `Cluster`, as kube-proxy applies it.
    pub internal_traffic_policy: &'static str,
    /// `Local` or `Cluster` when externally accessible, else `null`.
    pub external_traffic_policy: Option<&'static str>,
    /// `spec.trafficDistribution` verbatim.
    pub traffic_distribution: Option<String>,
    /// The topology annotation value (deprecated key first), if set.
    pub topology_mode: Option<String>,
    /// `EndpointSlices`, `derived` or `mirrored`.
    pub endpoint_source: &'static str,
    /// Number of nodes.
    pub nodes: usize,
    /// Pods → clusterIP: nodes that deliver.
    pub delivered: usize,
    /// Pods → clusterIP: nodes that drop (blind nodes).
    pub dropped: usize,
    /// Pods → clusterIP: nodes that reject.
    pub rejected: usize,
    /// Pods → clusterIP: nodes that do not proxy.
    pub not_proxied: usize,
    /// Pods → clusterIP: nodes whose verdict depends on the unknown proxy mode.
    pub mode_dependent: usize,
    /// External traffic per external destination (nodePort, loadBalancer, externalIP).
    pub external: Vec<RouteCounts>,
    /// Number of findings on this Service (any port).
    pub findings: usize,
}

/// The data plane the audit assumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataPlaneInfo {
    /// `kube-proxy`, `other` or `unknown`.
    pub kind: &'static str,
    /// kube-proxy's mode when known.
    pub mode: Option<ProxyMode>,
    /// The name of another data plane.
    pub name: Option<String>,
}

/// The cluster shape assumed for manifest-only inputs (`--nodes`, `--zones`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssumedShape {
    /// Number of assumed nodes.
    pub nodes: usize,
    /// Their zones (dealt round-robin); empty when none was given.
    pub zones: Vec<String>,
}

/// Counts of findings per severity; suppressed findings are counted apart, in `suppressed`
/// only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Number of findings not suppressed.
    pub findings: usize,
    /// Number of suppressed findings.
    pub suppressed: usize,
    /// Findings of severity error.
    pub error: usize,
    /// Findings of severity warning.
    pub warning: usize,
    /// Findings of severity info.
    pub info: usize,
    /// Findings left out because `--baseline` already had them (absent when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub in_baseline: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The result of [`audit`](crate::audit): serialized as `apiVersion: locality/v1`,
/// `kind: AuditReport`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    /// Always `locality/v1`.
    pub api_version: &'static str,
    /// Always `AuditReport`.
    pub kind: &'static str,
    /// API server / controller manager version used (`1.35`).
    pub kubernetes_version: String,
    /// Default kube-proxy version used.
    pub kube_proxy_version: String,
    /// The data plane.
    pub data_plane: DataPlaneInfo,
    /// Where the state came from.
    pub input: InputKind,
    /// The assumed cluster shape, when `--nodes`/`--zones` replaced missing Nodes.
    pub assumed_shape: Option<AssumedShape>,
    /// Number of Nodes audited (assumed ones included).
    pub node_count: usize,
    /// Number of client nodes (nodes that run pods).
    pub client_node_count: usize,
    /// Rules that ran, in ID order.
    pub rules: Vec<RuleId>,
    /// Rules that were selected but could not run on this input.
    pub skipped_rules: Vec<SkippedRule>,
    /// Finding counts.
    pub totals: Totals,
    /// Findings: severity (error first), rule, namespace, name, port, family.
    pub findings: Vec<Finding>,
    /// Per (service port, IP family) node counts, in `RoutingMatrix` order.
    pub services: Vec<ServiceSummary>,
    /// Notes about the run (assumptions made, inputs missing).
    pub notes: Vec<String>,
}

impl AuditReport {
    /// `apiVersion` of the document.
    pub const API_VERSION: &'static str = "locality/v1";
    /// `kind` of the document.
    pub const KIND: &'static str = "AuditReport";

    /// Recounts [`AuditReport::totals`] from the findings (after a caller filtered them).
    pub fn recount(&mut self) {
        let mut totals = Totals {
            in_baseline: self.totals.in_baseline,
            ..Totals::default()
        };
        for f in &self.findings {
            if f.suppression.is_some() {
                totals.suppressed += 1;
                continue;
            }
            totals.findings += 1;
            match f.severity {
                Severity::Error => totals.error += 1,
                Severity::Warning => totals.warning += 1,
                Severity::Info => totals.info += 1,
            }
        }
        self.totals = totals;
    }

    /// The findings suppressed on purpose.
    pub fn suppressed(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.suppression.is_some())
    }

    /// The findings not suppressed.
    pub fn active(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.suppression.is_none())
    }

    /// The most severe unsuppressed finding's severity, `None` without one.
    pub fn max_severity(&self) -> Option<Severity> {
        self.active().map(|f| f.severity).min()
    }

    /// True when an unsuppressed finding at or above `threshold` exists (`--fail-on`: exit
    /// code 3).
    pub fn fails_on(&self, threshold: Severity) -> bool {
        self.active().any(|f| f.severity.at_least(threshold))
    }
}
