//! Judging a case's tries against its expectation (docs/design.md §5.4–§5.5).

use std::collections::BTreeSet;

use crate::expect::Expected;
use crate::probe::{Seen, Try};

/// A case's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Every try matched the expectation.
    Pass,
    /// A contract violation, reproduced on one automatic retry.
    Fail,
    /// Evidence missing or contradicted by the observed state.
    Incomplete,
    /// Not run (with the reason).
    NotExecuted,
}

impl Status {
    /// Upper-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Incomplete => "INCOMPLETE",
            Status::NotExecuted => "NOT_EXECUTED",
        }
    }
}

/// Tries per probe round: enough that a correct data plane spreading over `k ≥ 2` backends
/// shows two distinct responders with probability above 1 − 1e-3 (k · (1/k)^n < 1e-3).
///
/// A single allowed responder gets [`SINGLE_RESPONDER_TRIES`] per round, and a positive case
/// passes only after `1 +` [`crate::probing::CONFIRM_ROUNDS`] passing rounds in a row with no
/// wrong responder in between (a wrong responder is confirmed, never re-probed away). The
/// fault model: a faulty node picks uniformly among all ready endpoints, at least two; it
/// passes with probability at most (1/2)^21 < 1e-6.
pub fn tries_for(expected: &Expected) -> usize {
    match expected {
        Expected::Deliver { pods } if pods.len() >= 2 => {
            let k = pods.len() as f64;
            let mut n = 2usize;
            while k * (1.0 / k).powi(n as i32) >= 1e-3 {
                n += 1;
            }
            n
        }
        Expected::Deliver { .. } => SINGLE_RESPONDER_TRIES,
        _ => 4,
    }
}

/// Tries per round when one pod may answer (see [`tries_for`]).
pub const SINGLE_RESPONDER_TRIES: usize = 7;

/// Whether a try was answered by a pod the expectation does not allow (for a delivery).
pub fn wrong_responder(expected: &Expected, tries: &[Try]) -> bool {
    let Expected::Deliver { pods } = expected else {
        return false;
    };
    tries.iter().any(|t| match &t.seen {
        Seen::Answer { responder } => !pods.iter().any(|p| p == responder),
        _ => false,
    })
}

/// The status of one round of tries, and why.
pub fn judge(expected: &Expected, tries: &[Try]) -> (Status, String) {
    if tries.is_empty() {
        return (Status::Incomplete, "no try was made".into());
    }
    if let Some(t) = tries.iter().find(|t| t.seen == Seen::Incomplete) {
        return (Status::Incomplete, format!("the probe channel failed: {}", t.raw));
    }
    let answers: Vec<&str> = tries
        .iter()
        .filter_map(|t| match &t.seen {
            Seen::Answer { responder } => Some(responder.as_str()),
            _ => None,
        })
        .collect();
    let count = |s: &Seen| tries.iter().filter(|t| t.seen == *s).count();
    let n = tries.len();
    match expected {
        Expected::Unknown { why } => (Status::Incomplete, format!("no expectation: {why}")),
        Expected::PerNode { .. } => (
            Status::Incomplete,
            "no single expectation: each client node is judged against its own".into(),
        ),
        Expected::Deliver { pods } => {
            let allowed: BTreeSet<&str> = pods.iter().map(String::as_str).collect();
            if let Some(bad) = answers.iter().find(|a| !allowed.contains(**a)) {
                return (
                    Status::Fail,
                    format!(
                        "answered by {bad}, which is not allowed (allowed: {})",
                        pods.join(", ")
                    ),
                );
            }
            if answers.len() < n {
                return (
                    Status::Fail,
                    format!(
                        "{} of {n} tries got no answer ({} timeout, {} refused, {} other)",
                        n - answers.len(),
                        count(&Seen::Timeout),
                        count(&Seen::Refused),
                        count(&Seen::Other)
                    ),
                );
            }
            let distinct: BTreeSet<&str> = answers.iter().copied().collect();
            if pods.len() >= 2 && distinct.len() < 2 {
                return (
                    Status::Fail,
                    format!(
                        "only {} answered in {n} tries; any of {} should",
                        answers[0],
                        pods.join(", ")
                    ),
                );
            }
            (
                Status::Pass,
                format!(
                    "{n} of {n} answered, by {}",
                    distinct.into_iter().collect::<Vec<_>>().join(", ")
                ),
            )
        }
        Expected::Drop => {
            if !answers.is_empty() {
                return (
                    Status::Fail,
                    format!(
                        "{} of {n} tries answered (by {}) where traffic must be dropped",
                        answers.len(),
                        answers[0]
                    ),
                );
            }
            if count(&Seen::Timeout) == n {
                (Status::Pass, format!("{n} of {n} timed out"))
            } else {
                (
                    Status::Incomplete,
                    format!(
                        "no answer, but {} refused and {} other where a drop (timeout) was expected: the failure signature contradicts the slices",
                        count(&Seen::Refused),
                        count(&Seen::Other)
                    ),
                )
            }
        }
        Expected::Reject => {
            if !answers.is_empty() {
                return (
                    Status::Fail,
                    format!(
                        "{} of {n} tries answered (by {}) where the Service has no endpoint",
                        answers.len(),
                        answers[0]
                    ),
                );
            }
            if count(&Seen::Refused) == n {
                (Status::Pass, format!("{n} of {n} refused"))
            } else {
                (
                    Status::Incomplete,
                    format!(
                        "no answer, but {} timed out and {} other where a rejection (refused) was expected",
                        count(&Seen::Timeout),
                        count(&Seen::Other)
                    ),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_node_picking_uniformly_among_two_passes_a_single_responder_case_below_1e_6() {
        let tries = SINGLE_RESPONDER_TRIES * (crate::probing::CONFIRM_ROUNDS + 1);
        assert!(0.5f64.powi(tries as i32) < 1e-6, "{tries} tries");
    }

    use super::*;

    fn t(seen: Seen) -> Try {
        Try {
            channel: "proxy",
            client: "c".into(),
            target: "10.96.0.10:80".into(),
            protocol: "http",
            sent_ms: 0,
            received_ms: 1,
            seen,
            raw: String::new(),
        }
    }
    fn ans(p: &str) -> Try {
        t(Seen::Answer { responder: p.into() })
    }

    #[test]
    fn tries_bound_the_false_failure_rate() {
        let two = Expected::Deliver {
            pods: vec!["a".into(), "b".into()],
        };
        let n = tries_for(&two);
        assert!(
            2.0 * 0.5f64.powi(n as i32) < 1e-3 && 2.0 * 0.5f64.powi(n as i32 - 1) >= 1e-3,
            "{n}"
        );
    }

    #[test]
    fn verdicts() {
        let local = Expected::Deliver {
            pods: vec!["a".into()],
        };
        assert_eq!(judge(&local, &[ans("a"), ans("a")]).0, Status::Pass);
        assert_eq!(judge(&local, &[ans("a"), ans("b")]).0, Status::Fail);
        assert_eq!(judge(&local, &[ans("a"), t(Seen::Timeout)]).0, Status::Fail);
        let any = Expected::Deliver {
            pods: vec!["a".into(), "b".into()],
        };
        assert_eq!(judge(&any, &[ans("a"), ans("a")]).0, Status::Fail);
        assert_eq!(judge(&any, &[ans("a"), ans("b")]).0, Status::Pass);
        assert_eq!(judge(&Expected::Drop, &[t(Seen::Timeout)]).0, Status::Pass);
        assert_eq!(
            judge(&Expected::Drop, &[t(Seen::Timeout), ans("a")]).0,
            Status::Fail
        );
        assert_eq!(judge(&Expected::Drop, &[t(Seen::Refused)]).0, Status::Incomplete);
        assert_eq!(judge(&Expected::Reject, &[t(Seen::Refused)]).0, Status::Pass);
        assert_eq!(
            judge(&Expected::Reject, &[t(Seen::Timeout)]).0,
            Status::Incomplete
        );
        assert_eq!(
            judge(&Expected::Reject, &[t(Seen::Incomplete)]).0,
            Status::Incomplete
        );
    }
}
