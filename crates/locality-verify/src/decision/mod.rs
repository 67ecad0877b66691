//! The run's decision: ACCEPT / REPAIR / RERUN / HOLD, from the [`Findings`] of a run by the
//! first matching row of one table ([`TABLE`]). Pure: no I/O, no probing; what the findings
//! say is worked out by [`crate::diagnose`].
//!
//! The rules a reviewer signs:
//! - ACCEPT needs both controls PASS and every core case ([`CORE`]) executed and PASS; a run
//!   restricted with `--only` is *partial* and says so wherever its decision is printed.
//! - A FAIL is a REPAIR only when every failure is explained by one entry of the repair
//!   catalogue ([`RepairKind`]); any other confirmed violation is a HOLD.
//! - A kube-proxy slower than `--max-proxy-lag` is never judged: its cases are INCOMPLETE, and
//!   when the lag is confirmed the run is a HOLD naming the node and the measured lag.
//! - What could not be observed is never a PASS: INCOMPLETE cases, an interrupted run and a
//!   run the API cut short are RERUN.

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    /// The controls and every core case passed, and nothing failed.
    Accept,
    /// Every confirmed violation is explained by a bounded repair the evidence supports.
    Repair,
    /// Evidence is missing (INCOMPLETE, interrupted, cut short): rerun the cases named.
    Rerun,
    /// No verdict can be signed: a control failed, a violation has no known bounded repair,
    /// kube-proxy cannot keep up, or the cluster lacks what the contract needs.
    Hold,
}

impl Decision {
    /// Upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "ACCEPT",
            Decision::Repair => "REPAIR",
            Decision::Rerun => "RERUN",
            Decision::Hold => "HOLD",
        }
    }
    /// The exit code: 0 ACCEPT, 3 REPAIR, 4 RERUN, 5 HOLD.
    pub fn exit_code(self) -> i32 {
        match self {
            Decision::Accept => 0,
            Decision::Repair => 3,
            Decision::Rerun => 4,
            Decision::Hold => 5,
        }
    }
}

/// The cases an ACCEPT needs executed and PASS besides the controls: per node with and
/// without a local endpoint (`P`, `Pn`, `C1`), the Local policy's own guarantees (`B1`, `C`,
/// `D1`, `D2`) and a Service without endpoints (`F`).
pub const CORE: &[&str] = &["P", "Pt", "Pn", "C1", "B1", "C", "D1", "D2", "F"];

/// A bounded repair the evidence supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RepairKind {
    /// kube-proxy's node name is not the Node's name: set `--hostname-override`.
    HostnameOverride,
    /// A node's kube-proxy predates a feature the cluster's Services use: upgrade it.
    UpgradeKubeProxy,
    /// A feature gate is off where the version has the feature: turn it on.
    FeatureGate,
    /// The node's detected data plane has a known divergence (docs/dataplanes.md) that
    /// explains the violation: upgrade to the fixed version, or set the setting.
    DataPlane,
}

/// A confirmed violation explained by an open upstream bug of the node's detected data plane
/// (docs/dataplanes.md): a HOLD naming the issue and the mitigation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownBug {
    /// The catalogue entry.
    pub entry: String,
    /// The node.
    pub node: String,
    /// The issue and the mitigation, in one sentence.
    pub advice: String,
    /// What showed it.
    pub evidence: Vec<String>,
    /// The cases it explains.
    pub cases: Vec<String>,
}

/// One repair: what to do, where, why, and what to rerun afterwards.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Repair {
    /// Which entry of the catalogue.
    pub kind: RepairKind,
    /// The node to repair.
    pub node: String,
    /// What to do, in one sentence.
    pub action: String,
    /// The evidence that supports it.
    pub evidence: Vec<String>,
    /// The cases to rerun once repaired.
    pub cases: Vec<String>,
}

/// A node whose kube-proxy programmed a change later than `--max-proxy-lag`, confirmed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lag {
    /// The node.
    pub node: String,
    /// The lag measured, in ms.
    pub measured_ms: u64,
    /// The limit, in ms.
    pub limit_ms: u64,
    /// The cases it made INCOMPLETE.
    pub cases: Vec<String>,
}

/// What the decision reads: the run, worked out by [`crate::diagnose`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Controls that FAILed.
    pub controls_failed: Vec<String>,
    /// Confirmed violations no repair explains.
    pub unexplained: Vec<String>,
    /// The nodes whose data plane showed them (the failing nodes, else the client's node).
    pub unexplained_nodes: Vec<String>,
    /// Confirmed violations explained by an open bug of the node's data plane.
    pub known_bugs: Vec<KnownBug>,
    /// Nodes whose kube-proxy is slower than the limit, confirmed.
    pub lagging: Vec<Lag>,
    /// Controls or core cases the cluster could not host: (case, why).
    pub gaps: Vec<(String, String)>,
    /// Controls that ran but did not conclude (INCOMPLETE).
    pub controls_incomplete: Vec<String>,
    /// Repairs that explain every confirmed violation (and version gaps found by reading).
    pub repairs: Vec<Repair>,
    /// Cases the run did not finish (interrupted, or cut short by the API): (case, why).
    pub unfinished: Vec<(String, String)>,
    /// INCOMPLETE cases.
    pub incomplete: Vec<String>,
    /// `--only`: the cases selected (the run is partial).
    pub partial: Option<Vec<String>>,
    /// `--max-nodes` left usable nodes unprobed (the run is partial).
    pub sampled: Option<Sampled>,
    /// Cases not executed that no verdict needs (the cluster's shape could not host them, or
    /// a client could not run): (case, why). The run is partial.
    pub uncovered: Vec<(String, String)>,
    /// Nodes no case could probe (not Ready, tainted, cordoned, not Linux): `node: why`. The
    /// run is partial.
    pub unprobed_nodes: Vec<String>,
    /// The flags naming the run's target, repeated in every rerun command.
    pub target: Vec<String>,
    /// Notes added to the advice whatever the decision (a kube-proxy outside the version skew).
    pub notes: Vec<String>,
}

/// `P` and `Pn` probed only some of the usable nodes (`--max-nodes`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampled {
    /// Nodes probed.
    pub probed: usize,
    /// Usable nodes (Ready, untainted, schedulable, Linux).
    pub usable: usize,
    /// The nodes probed, by name (every zone and every distinct kube-proxy among them).
    pub nodes: Vec<String>,
}

/// A row's condition over [`Findings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// A control FAILed.
    ControlFailed,
    /// A confirmed violation with no known bounded repair.
    UnexplainedViolation,
    /// A confirmed violation explained by an open bug of the node's data plane.
    KnownOpenBug,
    /// A node's kube-proxy lags beyond the limit.
    LagOverLimit,
    /// The cluster lacks what a control or a core case needs.
    EnvironmentGap,
    /// A control did not conclude.
    ControlIncomplete,
    /// Every violation has a bounded repair (or a version gap was read).
    Repairable,
    /// The run did not finish every case.
    Unfinished,
    /// Some case is INCOMPLETE.
    Incomplete,
    /// Nothing above.
    Otherwise,
}

impl Condition {
    /// Whether the condition holds.
    pub fn holds(self, f: &Findings) -> bool {
        match self {
            Condition::ControlFailed => !f.controls_failed.is_empty(),
            Condition::UnexplainedViolation => !f.unexplained.is_empty(),
            Condition::KnownOpenBug => !f.known_bugs.is_empty(),
            Condition::LagOverLimit => !f.lagging.is_empty(),
            Condition::EnvironmentGap => !f.gaps.is_empty(),
            Condition::ControlIncomplete => !f.controls_incomplete.is_empty(),
            Condition::Repairable => !f.repairs.is_empty(),
            Condition::Unfinished => !f.unfinished.is_empty(),
            Condition::Incomplete => !f.incomplete.is_empty(),
            Condition::Otherwise => true,
        }
    }
}

/// One row of the decision table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// When it applies.
    pub when: Condition,
    /// The decision.
    pub decision: Decision,
}

/// The decision table, by precedence: the first row whose condition holds decides.
pub const TABLE: &[Row] = &[
    // a control failed: the pod network or Service basics are broken, no verdict on locality is possible
    Row {
        when: Condition::ControlFailed,
        decision: Decision::Hold,
    },
    // a confirmed violation with no known bounded repair
    Row {
        when: Condition::UnexplainedViolation,
        decision: Decision::Hold,
    },
    // a confirmed violation explained by an open upstream bug of the node's data plane (docs/dataplanes.md)
    Row {
        when: Condition::KnownOpenBug,
        decision: Decision::Hold,
    },
    // kube-proxy programs changes later than --max-proxy-lag on a node: no verdict until it keeps up
    Row {
        when: Condition::LagOverLimit,
        decision: Decision::Hold,
    },
    // the cluster cannot host a control or a core case
    Row {
        when: Condition::EnvironmentGap,
        decision: Decision::Hold,
    },
    // a control did not conclude
    Row {
        when: Condition::ControlIncomplete,
        decision: Decision::Rerun,
    },
    // every violation is explained by a bounded repair
    Row {
        when: Condition::Repairable,
        decision: Decision::Repair,
    },
    // the run did not finish every case
    Row {
        when: Condition::Unfinished,
        decision: Decision::Rerun,
    },
    // some evidence is missing
    Row {
        when: Condition::Incomplete,
        decision: Decision::Rerun,
    },
    // the controls and every core case passed, nothing failed
    Row {
        when: Condition::Otherwise,
        decision: Decision::Accept,
    },
];

/// A decision with the cases to rerun and the advice printed with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// The decision.
    pub decision: Decision,
    /// The row that decided.
    pub condition: Condition,
    /// The cases to rerun.
    pub rerun: Vec<String>,
    /// One line per piece of advice.
    pub advice: Vec<String>,
    /// The run was partial (`--only`): the cases it ran.
    pub partial: Option<Vec<String>>,
    /// The run was partial (`--max-nodes`): how many usable nodes it probed.
    pub sampled: Option<Sampled>,
    /// The run was partial: the cases not executed that no verdict needs.
    pub uncovered: Vec<String>,
    /// The run was partial: the nodes no case could probe (`node: why`).
    pub unprobed_nodes: Vec<String>,
}

/// The command that reruns `ids` against the run's target (`target`: its flags).
fn rerun_cmd(target: &[String], ids: &[String]) -> String {
    let mut words = vec!["locality".to_string(), "verify".to_string()];
    words.extend(target.iter().map(|w| crate::cluster::shell_quote(w)));
    words.push("--only".into());
    words.push(ids.join(","));
    words.join(" ")
}

/// `(case, why)` pairs grouped by reason, in first-seen order: (`A, B`, why).
fn by_reason(pairs: &[(String, String)]) -> Vec<(String, &str)> {
    let mut out: Vec<(Vec<&str>, &str)> = Vec::new();
    for (id, why) in pairs {
        match out.iter_mut().find(|(_, w)| *w == why.as_str()) {
            Some((ids, _)) => ids.push(id),
            None => out.push((vec![id.as_str()], why.as_str())),
        }
    }
    out.into_iter().map(|(ids, why)| (ids.join(", "), why)).collect()
}

/// Decides by [`TABLE`].
pub fn decide(f: &Findings) -> Decided {
    let row = TABLE
        .iter()
        .find(|r| r.when.holds(f))
        .unwrap_or(&TABLE[TABLE.len() - 1]);
    let mut rerun: Vec<String> = Vec::new();
    let mut advice: Vec<String> = Vec::new();
    match row.when {
        Condition::ControlFailed => advice.push(format!(
            "control {} failed: the environment cannot support a verdict (pod network or Service basics are broken); fix that first",
            f.controls_failed.join(", ")
        )),
        Condition::UnexplainedViolation => advice.push(format!(
            "confirmed violation in {}{}: no known bounded repair. Mitigation: run the backend on every node where clients run (a DaemonSet that tolerates and selects them); never use a preference for traffic that must stay on its node",
            f.unexplained.join(", "),
            if f.unexplained_nodes.is_empty() {
                String::new()
            } else {
                format!(" (the data plane of {})", f.unexplained_nodes.join(", "))
            }
        )),
        Condition::KnownOpenBug => {
            for b in &f.known_bugs {
                advice.push(format!(
                    "confirmed violation in {} explained by {} (evidence: {})",
                    b.cases.join(", "),
                    b.advice,
                    b.evidence.join("; ")
                ));
            }
        }
        Condition::LagOverLimit => {
            for l in &f.lagging {
                advice.push(format!(
                    "kube-proxy on {} programmed changes {} ms late (limit {} ms): {} could not be judged. Find why it lags (CPU, sync period, rule count), or raise --max-proxy-lag if that lag is acceptable, then rerun",
                    l.node,
                    l.measured_ms,
                    l.limit_ms,
                    l.cases.join(", ")
                ));
                rerun.extend(l.cases.iter().cloned());
            }
        }
        Condition::EnvironmentGap => {
            for (ids, why) in by_reason(&f.gaps) {
                advice.push(format!("{ids} cannot run on this cluster: {why}"));
            }
        }
        Condition::ControlIncomplete => {
            rerun.extend(f.controls_incomplete.iter().cloned());
            advice.push(format!(
                "control {} did not conclude; rerun: {}",
                f.controls_incomplete.join(", "),
                rerun_cmd(&f.target, &f.controls_incomplete)
            ));
        }
        Condition::Repairable => {
            for r in &f.repairs {
                advice.push(format!(
                    "{} (evidence: {}); then rerun: {}",
                    r.action,
                    r.evidence.join("; "),
                    rerun_cmd(&f.target, &r.cases)
                ));
                for c in &r.cases {
                    if !rerun.contains(c) {
                        rerun.push(c.clone());
                    }
                }
            }
        }
        Condition::Unfinished | Condition::Incomplete => {
            let mut ids: Vec<String> = f.unfinished.iter().map(|(id, _)| id.clone()).collect();
            for id in &f.incomplete {
                if !ids.contains(id) {
                    ids.push(id.clone());
                }
            }
            for (id, why) in &f.unfinished {
                advice.push(format!("{id} not finished: {why}"));
            }
            advice.push(format!("rerun: {}", rerun_cmd(&f.target, &ids)));
            rerun = ids;
        }
        Condition::Otherwise => {}
    }
    // What a deciding row above did not say: repairs behind a HOLD, INCOMPLETE cases behind a
    // HOLD or a REPAIR.
    if row.decision == Decision::Hold && row.when != Condition::Repairable {
        for r in &f.repairs {
            advice.push(format!(
                "also repairable: {} (evidence: {}); then rerun: {}",
                r.action,
                r.evidence.join("; "),
                rerun_cmd(&f.target, &r.cases)
            ));
        }
    }
    let shown_incomplete = matches!(row.when, Condition::Unfinished | Condition::Incomplete);
    if matches!(row.decision, Decision::Hold | Decision::Repair)
        && !shown_incomplete
        && !f.incomplete.is_empty()
    {
        advice.push(format!(
            "also INCOMPLETE (not judged): {}; rerun: {}",
            f.incomplete.join(", "),
            rerun_cmd(&f.target, &f.incomplete)
        ));
    }
    if let Some(only) = &f.partial {
        advice.push(format!(
            "partial run (--only): {} ran; this is not a verdict on the cluster, which needs every core case ({})",
            only.join(", "),
            CORE.join(", ")
        ));
    }
    advice.extend(f.notes.iter().cloned());
    for (ids, why) in by_reason(&f.uncovered) {
        advice.push(format!("not checked on this cluster: {ids} ({why})"));
    }
    if !f.unprobed_nodes.is_empty() {
        advice.push(format!(
            "not probed: {}; a fault of those nodes' data plane would not be seen",
            f.unprobed_nodes.join("; ")
        ));
    }
    if let Some(s) = &f.sampled {
        advice.push(format!(
            "partial run (--max-nodes): P and Pn probed {} of {} usable nodes; a fault on another node would not be seen: this is not a verdict on the cluster (drop --max-nodes for one)",
            s.probed, s.usable
        ));
    }
    Decided {
        decision: row.decision,
        condition: row.when,
        rerun,
        advice,
        partial: f.partial.clone(),
        sampled: f.sampled.clone(),
        uncovered: f.uncovered.iter().map(|(id, _)| id.clone()).collect(),
        unprobed_nodes: f.unprobed_nodes.clone(),
    }
}

/// What a partial run left out, for its decision line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    /// `--only`: the cases the run selected.
    pub only: Option<&'a [String]>,
    /// `--max-nodes`: the nodes probed.
    pub sampled: Option<&'a Sampled>,
    /// The cases not executed that no verdict needs.
    pub uncovered: &'a [String],
    /// The nodes no case could probe (`node: why`).
    pub unprobed_nodes: &'a [String],
}

/// How a decision is printed: `ACCEPT`, `PARTIAL ACCEPT (…)` for a run restricted to some
/// cases or some nodes, with the simulated caveat.
pub fn decision_line(decision: Decision, left_out: Scope<'_>, simulated: bool) -> String {
    let mut s = decision.as_str().to_string();
    let mut scope = Vec::new();
    if let Some(only) = left_out.only {
        scope.push(format!("only {} ran", only.join(", ")));
    }
    if let Some(n) = left_out.sampled {
        scope.push(format!("{} of {} usable nodes probed", n.probed, n.usable));
    }
    if !left_out.uncovered.is_empty() {
        scope.push(format!(
            "not checked on this cluster: {}",
            left_out.uncovered.join(", ")
        ));
    }
    if !left_out.unprobed_nodes.is_empty() {
        let names: Vec<&str> = left_out
            .unprobed_nodes
            .iter()
            .map(|n| n.split(':').next().unwrap_or(n))
            .collect();
        scope.push(format!("not probed: {}", names.join(", ")));
    }
    if !scope.is_empty() {
        s = format!("PARTIAL {s} ({}: not a verdict on the cluster)", scope.join("; "));
    }
    if simulated {
        s.push_str(" (simulated cluster: a self-test of locality, not evidence about any real data plane)");
    }
    s
}

/// The findings a status list alone gives (no diagnosis: every FAIL unexplained).
#[cfg(test)]
pub fn findings_of(statuses: &[(&str, bool, crate::judge::Status)]) -> Findings {
    use crate::judge::Status;
    let mut f = Findings::default();
    for (id, control, s) in statuses {
        match (s, control) {
            (Status::Fail, true) => f.controls_failed.push(id.to_string()),
            (Status::Fail, false) => f.unexplained.push(id.to_string()),
            (Status::Incomplete, true) => f.controls_incomplete.push(id.to_string()),
            (Status::Incomplete, false) => f.incomplete.push(id.to_string()),
            _ => {}
        }
    }
    f
}

#[cfg(test)]
mod tests;
