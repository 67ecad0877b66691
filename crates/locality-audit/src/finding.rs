//! What a finding is: the rule, the Service and port, the nodes and objects concerned, the
//! text, and its [`Suppression`] when a team accepted it. Built by the rules
//! (`builder.rs`), filtered by suppressions and `.locality.yaml`, reported in
//! [`crate::report::AuditReport`].

use locality_model::objects::{IpFamily, Origin, Protocol};
use locality_model::proxy::{Confidence, MissingFacts};
use serde::Serialize;

use crate::rule::{RuleId, Severity};

/// A Service, by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ServiceRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// A service port (keyed as in the `RoutingMatrix`: name, protocol, number).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PortRef {
    /// Port name (`""` when unnamed).
    pub name: String,
    /// Protocol.
    pub protocol: Protocol,
    /// Port number.
    pub port: u16,
}

/// A node concerned by a finding and the number of client pods running on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodePods {
    /// Node name.
    pub node: String,
    /// Non-terminal pods scheduled on it (hostNetwork or not).
    pub pods: usize,
}

/// Location of an object in the input, for SARIF physical locations.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceLocation {
    /// File path (`-` for stdin).
    pub file: String,
    /// 0-based YAML document (or JSON value) index.
    pub document: u32,
    /// 0-based index in a `List`'s `items`, if the object was in one.
    pub item: Option<u32>,
    /// 1-based line of the object's start, 0 when unknown.
    pub line: u32,
    /// 1-based column of the object's start, 0 when unknown.
    pub column: u32,
}

impl SourceLocation {
    /// The location of an object read from a file; `None` for live, simulated or assumed
    /// objects (their [`Origin`] has no file).
    pub fn from_origin(origin: &Origin) -> Option<Self> {
        (!origin.file.is_empty()).then(|| SourceLocation {
            file: origin.file.clone(),
            document: origin.document,
            item: origin.item,
            line: origin.line,
            column: origin.column,
        })
    }
}

/// An object involved in a finding: the Service, its backing workloads, its EndpointSlices,
/// its Pods.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectRef {
    /// Kind (`Service`, `DaemonSet`, `Deployment`, `StatefulSet`, `ReplicaSet`,
    /// `EndpointSlice`, `Pod`, `Node`).
    pub kind: String,
    /// Namespace (`""` for Nodes).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Where it was read from; `null` for live objects.
    pub origin: Option<SourceLocation>,
}

/// One finding of one rule on one Service (and port and IP family, when the rule is per port).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Rule.
    pub rule: RuleId,
    /// Severity (usually the rule's default).
    pub severity: Severity,
    /// The rule's title.
    pub title: &'static str,
    /// The Service.
    pub service: ServiceRef,
    /// The service port, for per-port rules.
    pub port: Option<PortRef>,
    /// The IP family, for per-port rules.
    pub ip_family: Option<IpFamily>,
    /// Nodes concerned (e.g. blind nodes), the most loaded first (pods descending, then
    /// name), at most `AuditOptions::node_limit`.
    pub nodes: Vec<NodePods>,
    /// Total number of nodes concerned (`nodes` may be truncated).
    pub node_count: usize,
    /// Total client pods on the nodes concerned.
    pub pod_count: usize,
    /// Objects involved: the Service first, then backing workloads, EndpointSlices, others.
    pub objects: Vec<ObjectRef>,
    /// What is wrong, with the data that shows it.
    pub message: String,
    /// One-line fix.
    pub fix: String,
    /// The kubernetes.io page that states the guarantee.
    pub docs_url: &'static str,
    /// Set when the finding is accepted on purpose (`locality.dev/ignore`): counted apart,
    /// never failing `--fail-on`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppression: Option<Suppression>,
    /// How sure the finding is: the least sure of the routes of the service port(s) it
    /// concerns (`upstream-test`, `source-read`, `inferred`); absent when no route backs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// What those routes depend on that the input does not give (`kube-proxy-version`,
    /// `kube-version`, `proxy-mode`); the confidence is then `inferred`. Absent when nothing.
    #[serde(skip_serializing_if = "MissingFacts::is_empty")]
    pub missing_facts: MissingFacts,
    /// The root cause in a few words (`DaemonSet ns/name nodeSelector k=v does not match
    /// them`), for the human output's one line per Service and cause
    /// ([`crate::causes::group`]); not part of the documents.
    #[serde(skip)]
    pub cause: Option<String>,
    /// The client pods on the nodes concerned, by owner (`Deployment edge/gateway`, pods),
    /// the most pods first; LOC001 only, not part of the documents.
    #[serde(skip)]
    pub clients: Vec<(String, usize)>,
}

/// Where a suppression comes from (SARIF's `suppression.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SuppressionKind {
    /// An annotation on the object itself (or its Namespace).
    InSource,
    /// An exemption of the configuration file (`.locality.yaml`).
    External,
}

/// Why a finding is suppressed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Suppression {
    /// Where it comes from.
    pub kind: SuppressionKind,
    /// What says so: `Service default/web annotation locality.dev/ignore`.
    pub source: String,
    /// The reason given, if any.
    pub justification: Option<String>,
}
