//! The `SimulationReport` of `locality simulate` (docs/simulate.md, schema
//! `docs/schemas/simulation-report.schema.json`): one document with every alternative run,
//! rendered as JSON ([`json`]), text ([`text`]), Markdown ([`markdown`]) and an SVG timeline
//! ([`svg`]).
//!
//! The document is built by the command from the simulation's result; these modules only
//! format it. Numbers are seconds (virtual time since the change) and shares in [0, 1], never
//! negative zero.

pub mod json;
pub mod markdown;
pub mod svg;
pub mod text;

use serde::Serialize;

use crate::header::ReportHeader;

/// `apiVersion` of the document.
pub const API_VERSION: &str = "locality/v1";
/// `kind` of the document.
pub const KIND: &str = "SimulationReport";
/// What every output says first: the what-if is simulated.
pub const NOTICE: &str = "SIMULATED what-if: the change was played on locality's simulated cluster, seeded from the input; drop windows are the model's verdicts on that simulated state, with the assumptions listed, not a measurement";

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulationReport {
    /// [`API_VERSION`].
    pub api_version: &'static str,
    /// [`KIND`].
    pub kind: &'static str,
    /// Always true: a what-if is a simulation, whatever its input.
    pub simulated: bool,
    /// [`NOTICE`].
    pub notice: &'static str,
    /// Source, versions, time, counts.
    pub header: ReportHeader,
    /// The timings used.
    pub settings: Settings,
    /// Every assumption made where the input says nothing.
    pub assumptions: Vec<Assumption>,
    /// The alternatives run: the one given first, then each `--compare` alternative.
    pub alternatives: Vec<Alternative>,
}

/// The timings a run used.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// How late every node's kube-proxy programs a change (`--proxy-sync`).
    pub proxy_sync_seconds: f64,
    /// kube-proxy's minSyncPeriod: at most one sync this often (`--proxy-min-sync`; 0: every
    /// change programmed on its own).
    pub proxy_min_sync_seconds: f64,
    /// Image pull and container start of a new pod (`--pull`).
    pub pull_seconds: f64,
    /// From container start to the application answering its readiness probe (`--ready-after`).
    pub ready_after_seconds: f64,
    /// Virtual time between two checks of the rules (`--step-ms`).
    pub step_seconds: f64,
}

/// Something assumed because the input does not state it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assumption {
    /// What it is about.
    pub subject: String,
    /// The value assumed.
    pub value: String,
    /// Why, and how to change it.
    pub reason: String,
}

/// One change, as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeDoc {
    /// `rollout`, `set`, `drain`, `nodeDown`, `apply`, `delete` or `replace`.
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// What it changes: `DaemonSet monitoring/node-agent`, `Service edge/gateway`, `Node worker-03`.
    pub target: String,
    /// A rollout's effective `maxSurge` (as validated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<String>,
    /// A rollout's effective `maxUnavailable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<String>,
    /// The Service field `set` changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Its new value (empty: removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A `delete` or `replace`: the grace period the pod is deleted with (the one given, or its
    /// `terminationGracePeriodSeconds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<u64>,
    /// The change in words.
    pub description: String,
}

/// What an alternative did, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// No route of any Service port in scope changed, and no node is blind.
    NoChange,
    /// No route changed; some nodes are blind before and after (the change does not help them).
    StillBlind,
    /// Routes changed, no drop window opened.
    ChangedWithoutDrops,
    /// At least one node had a drop window.
    DropWindows,
}

impl Outcome {
    /// camelCase name (as in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::NoChange => "noChange",
            Outcome::StillBlind => "stillBlind",
            Outcome::ChangedWithoutDrops => "changedWithoutDrops",
            Outcome::DropWindows => "dropWindows",
        }
    }
}

/// One alternative's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Alternative {
    /// `as given`, or the `--compare` text.
    pub name: String,
    /// Applied and settled before the measured changes (`--set`/`--apply` next to a rollout
    /// or node event).
    pub prepared: Vec<ChangeDoc>,
    /// The changes measured.
    pub changes: Vec<ChangeDoc>,
    /// In one word.
    pub outcome: Outcome,
    /// In one sentence.
    pub summary: String,
    /// The changes settled before the limit.
    pub settled: bool,
    /// When they did not: what was still pending at the limit (a drain refused by a
    /// PodDisruptionBudget, pods not yet evicted, replacements not Ready…); empty otherwise.
    pub unsettled_reasons: Vec<String>,
    /// Virtual seconds observed after the change.
    pub duration_seconds: f64,
    /// Checks of the rules.
    pub steps: u64,
    /// Over every Service port in scope.
    pub totals: Totals,
    /// Every Service port in scope.
    pub service_ports: Vec<ServicePortDoc>,
    /// For `delete` and `replace`: what happened to the pod and its replacement, in order
    /// (absent for other changes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pod_events: Vec<PodEventDoc>,
}

/// One thing that happened to a deleted pod or its replacement.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodEventDoc {
    /// `namespace/name` of the pod deleted.
    pub pod: String,
    /// `deleted` (SIGTERM), `notReady` (its endpoint stops serving), `gone` (removed),
    /// `created` (the replacement), `ready` (the replacement Ready).
    pub event: &'static str,
    /// Virtual seconds after the change.
    pub at_seconds: f64,
}

/// An alternative's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Σ over Service ports and nodes of the seconds in drop windows.
    pub blind_node_seconds: f64,
    /// Client pods on nodes with a drop window (per Service port, summed).
    pub affected_client_pods: u64,
    /// Nodes with a drop window on some Service port.
    pub nodes_with_drop_windows: u64,
    /// The longest single drop window.
    pub longest_window_seconds: f64,
    /// The node blind longest (summed over Service ports), if any.
    pub worst_node: Option<WorstNode>,
    /// Client-time lost: Σ clients × blind time / (Σ clients × duration), over ports.
    pub lost_client_time_share: f64,
    /// Client-time sent to another node than the client's, over ports.
    pub traffic_left_node_share: f64,
}

/// The node blind longest.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorstNode {
    /// Node name.
    pub name: String,
    /// Seconds in drop windows.
    pub blind_seconds: f64,
}

/// One Service port over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePortDoc {
    /// `namespace/name`.
    pub service: String,
    /// `name:port/PROTOCOL`.
    pub port: String,
    /// `IPv4` or `IPv6`.
    pub family: String,
    /// Some node's route differed from before at some step.
    pub changed: bool,
    /// Blind nodes before the change.
    pub blind_before: Vec<String>,
    /// Blind nodes at the end.
    pub blind_after: Vec<String>,
    /// Nodes blind from before the change to the end (not the change's doing).
    pub blind_throughout: Vec<String>,
    /// Client-time this port lost.
    pub lost_client_time_share: f64,
    /// Client-time this port sent off the client's node.
    pub traffic_left_node_share: f64,
    /// Nodes with a drop window, by name.
    pub nodes: Vec<NodeDoc>,
}

/// A node with drop windows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDoc {
    /// Node name.
    pub name: String,
    /// Client pods of the Service on it.
    pub clients: u64,
    /// Seconds in drop windows.
    pub blind_seconds: f64,
    /// The windows.
    pub windows: Vec<WindowDoc>,
}

/// A drop window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowDoc {
    /// Start, seconds after the change.
    pub start_seconds: f64,
    /// End, seconds after the change.
    pub end_seconds: f64,
    /// `noEndpoint` (the rules had no endpoint for the node) or `endpointGone` (the rules
    /// still sent to endpoints whose process had exited).
    pub cause: &'static str,
}

/// Milliseconds as seconds (ms precision).
pub fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// A share in [0, 1] rounded to 4 decimals, never negative zero (`-0.0` would print `-0.0%`).
pub fn share(x: f64) -> f64 {
    if !x.is_finite() || x <= 0.0 {
        return 0.0;
    }
    ((x * 10_000.0).round() / 10_000.0).min(1.0)
}

/// A share as a percentage with one decimal (`12.5%`; `0.0%`, never `-0.0%`).
pub fn percent(x: f64) -> String {
    format!("{:.1}%", share(x) * 100.0 + 0.0)
}

/// Seconds with one decimal (`3.0`).
pub fn secs(s: f64) -> String {
    format!("{:.1}", s + 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_never_print_negative_zero() {
        assert_eq!(percent(-0.0), "0.0%");
        assert_eq!(percent(-1e-12), "0.0%");
        assert_eq!(percent(f64::NAN), "0.0%");
        assert_eq!(percent(0.12345), "12.3%");
        assert_eq!(share(-0.0).to_string(), "0");
        assert_eq!(secs(-0.0), "0.0");
    }
}
