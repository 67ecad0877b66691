//! The run's decision (SPEC §5.5), by precedence: HOLD, REPAIR, RERUN, ACCEPT.

use crate::judge::Status;

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    /// Every executed case passed.
    Accept,
    /// A confirmed violation with a bounded repair the evidence supports.
    Repair,
    /// Some case is INCOMPLETE: rerun it.
    Rerun,
    /// A control failed, or a confirmed violation has no known bounded repair.
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
    /// The exit code (SPEC §4): 0 ACCEPT, 3 REPAIR, 4 RERUN, 5 HOLD.
    pub fn exit_code(self) -> i32 {
        match self {
            Decision::Accept => 0,
            Decision::Repair => 3,
            Decision::Rerun => 4,
            Decision::Hold => 5,
        }
    }
}

/// One case's result as the decision sees it.
#[derive(Debug, Clone)]
pub struct CaseResult<'a> {
    /// ID.
    pub id: &'a str,
    /// A control case.
    pub control: bool,
    /// Status.
    pub status: Status,
    /// Evidence that kube-proxy's node name differs from the Node's (a local Ready endpoint
    /// and a drop on that node).
    pub hostname_mismatch: bool,
}

/// The decision, the cases to rerun (RERUN/REPAIR) and the advice printed with it.
pub fn decide(results: &[CaseResult<'_>]) -> (Decision, Vec<String>, Vec<String>) {
    let failed: Vec<&CaseResult<'_>> = results.iter().filter(|r| r.status == Status::Fail).collect();
    let incomplete: Vec<String> = results
        .iter()
        .filter(|r| r.status == Status::Incomplete)
        .map(|r| r.id.to_string())
        .collect();
    if let Some(c) = failed.iter().find(|r| r.control) {
        return (
            Decision::Hold,
            Vec::new(),
            vec![format!(
                "control {} failed: the environment cannot support a verdict (pod network or Service basics are broken); fix that first",
                c.id
            )],
        );
    }
    if !failed.is_empty() {
        let ids: Vec<String> = failed.iter().map(|r| r.id.to_string()).collect();
        if failed.iter().all(|r| r.hostname_mismatch) {
            return (
                Decision::Repair,
                ids.clone(),
                vec![format!(
                    "kube-proxy's node name differs from the Node name: set kube-proxy's --hostname-override to the Node name, then rerun {}",
                    ids.join(", ")
                )],
            );
        }
        return (
            Decision::Hold,
            Vec::new(),
            vec![format!(
                "confirmed violation in {}: no known bounded repair. Mitigation: run the backend on every node where clients run (a DaemonSet that tolerates and selects them); never use a preference for traffic that must stay on its node",
                ids.join(", ")
            )],
        );
    }
    if !incomplete.is_empty() {
        return (
            Decision::Rerun,
            incomplete.clone(),
            vec![format!("rerun: locality verify --only {}", incomplete.join(","))],
        );
    }
    (Decision::Accept, Vec::new(), Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(id: &str, control: bool, status: Status) -> CaseResult<'_> {
        CaseResult {
            id,
            control,
            status,
            hostname_mismatch: false,
        }
    }

    #[test]
    fn precedence() {
        assert_eq!(
            decide(&[r("A", true, Status::Pass), r("C", false, Status::Pass)]).0,
            Decision::Accept
        );
        assert_eq!(
            decide(&[r("A", true, Status::Pass), r("C", false, Status::Incomplete)]).0,
            Decision::Rerun
        );
        assert_eq!(
            decide(&[r("C", false, Status::Fail), r("B1", false, Status::Incomplete)]).0,
            Decision::Hold
        );
        assert_eq!(
            decide(&[r("A", true, Status::Fail), r("C", false, Status::Pass)]).0,
            Decision::Hold
        );
        let mut m = r("C", false, Status::Fail);
        m.hostname_mismatch = true;
        let (d, rerun, _) = decide(&[m, r("A", true, Status::Pass)]);
        assert_eq!((d, rerun), (Decision::Repair, vec!["C".to_string()]));
        assert_eq!(
            decide(&[r("A", true, Status::Pass), r("X", false, Status::NotExecuted)]).0,
            Decision::Accept
        );
    }
}
