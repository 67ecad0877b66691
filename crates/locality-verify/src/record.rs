//! What a run records: one record per case, and the outcome of the run.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cases::{Case, Declared, Role};
use crate::decision::Decision;
use crate::decision::RepairKind;
use crate::expect::Expected;
use crate::judge::Status;
use crate::probe::Try;
use crate::roles::Roles;

/// One case's record in the ledger.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRecord {
    /// ID.
    pub id: String,
    /// A control.
    pub control: bool,
    /// Description.
    pub description: String,
    /// The guarantee checked.
    pub guarantee: String,
    /// Its documentation.
    pub docs: String,
    /// The client's node (`N0`: every client).
    pub client_node: Option<String>,
    /// The catalogue's declared outcome.
    pub declared: Declared,
    /// The model's expectation from the state read back.
    pub expected: Option<Expected>,
    /// The model's reason code.
    pub reason: String,
    /// Status.
    pub status: Status,
    /// Why (the judgement, or why not executed).
    pub why: String,
    /// Rounds of tries (more than one when re-probed).
    pub rounds: usize,
    /// Every try.
    pub tries: Vec<Try>,
    /// Per client node: its status and, for a failure, the repair hypotheses checked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeJudgement>,
    /// kube-proxy on the client node was slower than `--max-proxy-lag`, twice: the case is
    /// INCOMPLETE, never FAIL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag_over_limit: Option<LagOverLimit>,
    /// Rollout cases: the phases of N1's endpoints as the EndpointSlices showed them, on the
    /// same clock as the tries (the report draws them on the timeline).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transitions: Vec<Transition>,
}

/// A rollout phase first seen in the EndpointSlices.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transition {
    /// When (Unix ms, the clock of the tries).
    pub at_ms: u128,
    /// The phase (`OldReady`, `OldServingTerminating`, `NoLocal`, …).
    pub phase: String,
}

/// A measured kube-proxy lag over the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LagOverLimit {
    /// Measured, in ms (cluster clock).
    pub measured_ms: u64,
    /// `--max-proxy-lag`, in ms.
    pub limit_ms: u64,
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct VerifyOutcome {
    /// The decision.
    pub decision: Decision,
    /// Per case.
    pub cases: Vec<CaseRecord>,
    /// Advice printed with the decision.
    pub advice: Vec<String>,
    /// Cases to rerun.
    pub rerun: Vec<String>,
    /// Where the evidence is.
    pub evidence: PathBuf,
    /// The roles chosen.
    pub roles: Roles,
    /// The namespace used (kept with `keep`).
    pub namespace: String,
    /// The run was interrupted (Ctrl-C): the cases it did not finish are NOT_EXECUTED
    /// (`interrupted`), the namespace was deleted all the same (unless `keep`).
    pub interrupted: bool,
    /// `--only`: the cases the run selected (the controls included); the decision is partial.
    pub partial: Option<Vec<String>>,
    /// `--max-nodes`: how many usable nodes `P` and `Pn` probed; the decision is partial.
    pub sampled: Option<crate::decision::Sampled>,
    /// Cases not executed that no verdict needs (the cluster's shape could not host them);
    /// the decision is partial.
    pub uncovered: Vec<String>,
    /// Nodes no case could probe (`node: why`); the decision is partial.
    pub unprobed_nodes: Vec<String>,
    /// The repairs the evidence supports (REPAIR).
    pub repairs: Vec<crate::decision::Repair>,
    /// Nodes whose kube-proxy lagged beyond the limit.
    pub lagging: Vec<crate::decision::Lag>,
    /// What each node's kube-proxy reported (mode, version).
    pub planes: BTreeMap<String, NodeDataPlane>,
    /// The target is a simulated cluster (asked for, or detected from its version).
    pub simulated: bool,
}

impl VerifyOutcome {
    /// Whether the decision is partial: `--only`, `--max-nodes`, cases the cluster's shape
    /// could not host, or nodes no case could probe.
    pub fn is_partial(&self) -> bool {
        self.partial.is_some()
            || self.sampled.is_some()
            || !self.uncovered.is_empty()
            || !self.unprobed_nodes.is_empty()
    }

    /// The decision line: `PARTIAL` for an `--only` run, with the simulated-cluster caveat
    /// when it applies.
    pub fn decision_line(&self, simulated: bool) -> String {
        crate::decision::decision_line(
            self.decision,
            crate::decision::Scope {
                only: self.partial.as_deref(),
                sampled: self.sampled.as_ref(),
                uncovered: &self.uncovered,
                unprobed_nodes: &self.unprobed_nodes,
            },
            simulated,
        )
    }

    /// How many cases ended in each status: `28 cases: 27 PASS, 1 FAIL, 0 INCOMPLETE, 0
    /// NOT_EXECUTED`.
    pub fn counts(&self) -> String {
        use crate::judge::Status;
        let n = |s: Status| self.cases.iter().filter(|c| c.status == s).count();
        format!(
            "{} {}: {} PASS, {} FAIL, {} INCOMPLETE, {} NOT_EXECUTED",
            self.cases.len(),
            if self.cases.len() == 1 { "case" } else { "cases" },
            n(Status::Pass),
            n(Status::Fail),
            n(Status::Incomplete),
            n(Status::NotExecuted)
        )
    }
}

pub(crate) fn record(case: &Case, client_node: Option<&str>) -> CaseRecord {
    CaseRecord {
        id: case.id.to_string(),
        control: case.control,
        description: case.description.to_string(),
        guarantee: case.guarantee.to_string(),
        docs: case.docs.to_string(),
        client_node: client_node.map(str::to_string),
        declared: case.declared,
        expected: None,
        reason: String::new(),
        status: Status::NotExecuted,
        why: String::new(),
        rounds: 0,
        tries: Vec::new(),
        nodes: Vec::new(),
        lag_over_limit: None,
        transitions: Vec::new(),
    }
}

/// Why a case the API cut short is NOT_EXECUTED (followed by the error).
pub const CUT_SHORT: &str = "cut short: the run could not go on";

/// Why a case the run did not finish is NOT_EXECUTED.
pub const INTERRUPTED: &str =
    "interrupted: the run was stopped (Ctrl-C or SIGTERM) before this case finished";

/// A short description of an expectation.
pub fn describe(e: &Expected) -> String {
    match e {
        Expected::Deliver { pods } => format!("delivered by {}", pods.join(", ")),
        Expected::Drop => "dropped (timeout)".into(),
        Expected::Reject => "rejected (refused)".into(),
        Expected::Unknown { why } => format!("unknown ({why})"),
        Expected::PerNode { nodes } => {
            let each: Vec<String> = nodes
                .iter()
                .map(|(node, e)| format!("{node}: {}", describe(e)))
                .collect();
            format!("per client node: {}", each.join("; "))
        }
    }
}

/// What the model predicts for one client node under a repair's hypothesis, and whether the
/// tries from that node match it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hypothesis {
    /// The repair whose fault is assumed.
    pub kind: RepairKind,
    /// For a data-plane repair: the catalogue entry whose divergence is assumed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// What the model predicts under it.
    pub expected: crate::expect::Expected,
    /// The node's tries match the prediction.
    pub consistent: bool,
}

/// One client node's judgement within a case.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeJudgement {
    /// The node whose kube-proxy handled the tries.
    pub node: String,
    /// Status for this node.
    pub status: Status,
    /// The repair hypotheses evaluated for a failure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hypotheses: Vec<Hypothesis>,
    /// kube-proxy on the node synced later than the limit: not judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag_over_limit: Option<LagOverLimit>,
}

/// What the run read of each node's data plane (kube-proxy's own answers).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDataPlane {
    /// `/proxyMode` (`iptables`, `nftables`, `ipvs`), `None` when unreadable.
    pub mode: Option<String>,
    /// kube-proxy's version: `kubernetes_build_info` `git_version`, else the tag of the
    /// image its pod in `kube-system` runs; `None` when neither could be read.
    pub version: Option<String>,
    /// Where [`Self::version`] comes from: `metrics` (`kubernetes_build_info`) or
    /// `image NAME` (the pod's image tag, when the metrics could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_from: Option<String>,
    /// Why nothing could be read, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// The known data plane that serves the node, with its version (`cilium 1.18.0`), when
    /// one was detected (`known_planes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known: Option<String>,
    /// The object it was detected from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_from: Option<String>,
    /// The IDs of the catalogue entries (docs/dataplanes.md) that apply to it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub divergences: Vec<String>,
    /// A known data plane other than kube-proxy serves the node's Services (its kube-proxy,
    /// if one runs there, is not the one that decides).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replaces_kube_proxy: bool,
}

impl NodeDataPlane {
    /// The reported mode as the model's, when it is one the model routes.
    pub fn model_mode(&self) -> Option<locality_model::proxy::ProxyMode> {
        self.mode.as_deref().and_then(model_mode)
    }
}

/// A kube-proxy mode name (`/proxyMode`) as the model's mode; `None` for a mode the model
/// does not route (`kernelspace`) or any other text.
pub fn model_mode(name: &str) -> Option<locality_model::proxy::ProxyMode> {
    locality_model::proxy::ProxyMode::ALL
        .into_iter()
        .find(|m| m.as_str() == name.trim())
}

/// The catalogue's declared outcome of a case, in words.
pub fn declared_text(c: &CaseRecord) -> String {
    let roles = |roles: &[Role]| roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
    match c.declared {
        crate::cases::Declared::AnsweredBy(r) => format!("answered by {}", roles(r)),
        crate::cases::Declared::RefusedByEndpoint(r) => format!(
            "delivered to {}'s backend, which refuses (nothing listens on the targetPort)",
            roles(r)
        ),
        crate::cases::Declared::SameAsBefore => format!(
            "{} give the same results after their manifests are applied again",
            crate::cases::REPEATED.join(" and ")
        ),
        crate::cases::Declared::Timeout => "timeout (DROP)".into(),
        crate::cases::Declared::Refused => "refused (REJECT)".into(),
        crate::cases::Declared::Rollout => "per rollout phase (never remote under ITP Local; no drop window under PreferSameNode)".into(),
        crate::cases::Declared::NoLocalEndpointsCounted => {
            "N3 counted in kubeproxy_sync_proxy_rules_no_local_endpoints_total without a local endpoint, not with one".into()
        }
        crate::cases::Declared::OwnNode => "answered by the client's own node's backend".into(),
    }
}
