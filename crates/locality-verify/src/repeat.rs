//! `R`: the manifests of the cases in [`REPEATED`] (their Service and backends) are applied
//! again unchanged with server-side apply, as `kubectl apply --server-side` would, and those
//! cases rerun. Applying the same objects twice must change nothing: a data plane that loses
//! or duplicates state on a no-op update (a resync, a re-programmed Service) shows here.

use locality_live::LiveOptions;

use crate::cases::{Case, REPEATED, Setup, case};
use crate::env::{Env, pods_path, settle};
use crate::error::VerifyError;
use crate::expect::Expected;
use crate::fixture;
use crate::judge::Status;
use crate::ledger::Evidence;
use crate::probing::{matrix_config, one_client_case};
use crate::record::{CaseRecord, describe, record};

/// What one repeated case gave, the first time and again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Its status.
    pub status: Status,
    /// What the model expected of it.
    pub expected: Option<Expected>,
}

impl Outcome {
    fn of(r: &CaseRecord) -> Outcome {
        Outcome {
            status: r.status,
            expected: r.expected.clone(),
        }
    }
}

/// `R`'s judgement from each repeated case's first and second outcome (`None`: it did not
/// run the first time). The same results are a PASS; a case that passed and now fails (its
/// failure already reproduced on its own retry) is a FAIL; any other difference, or a first
/// run that did not conclude, is INCOMPLETE; a first run that failed or did not run leaves
/// nothing to compare: NOT_EXECUTED (a rerun cannot change that).
pub fn judge_repeat(pairs: &[(&str, Option<Outcome>, Outcome)]) -> (Status, String) {
    let mut lines = Vec::new();
    let mut status = Status::Pass;
    for (id, first, again) in pairs {
        let Some(first) = first else {
            return (
                Status::NotExecuted,
                format!("{id} did not run before: nothing to compare"),
            );
        };
        // A first run that failed (a verdict already) or could not run leaves nothing a rerun
        // could compare: not executed. One that did not conclude may conclude next time.
        if first.status != Status::Pass {
            let status = match first.status {
                Status::Incomplete => Status::Incomplete,
                _ => Status::NotExecuted,
            };
            return (
                status,
                format!(
                    "{id} was {} the first time: nothing to compare",
                    first.status.as_str()
                ),
            );
        }
        if again.status == Status::Fail {
            status = Status::Fail;
            lines.push(format!(
                "{id} passed, and fails after the same objects were applied again"
            ));
        } else if again != first {
            if status == Status::Pass {
                status = Status::Incomplete;
            }
            lines.push(format!(
                "{id} is {} again (expected {}), was {} (expected {})",
                again.status.as_str(),
                again.expected.as_ref().map_or("nothing".into(), describe),
                first.status.as_str(),
                first.expected.as_ref().map_or("nothing".into(), describe),
            ));
        } else {
            lines.push(format!("{id} {} again, as the first time", again.status.as_str()));
        }
    }
    (status, lines.join("; "))
}

/// Runs `R`: applies its group's manifests again, waits for the slices to settle, reruns the
/// cases of [`REPEATED`] and compares with `before` (the records of this run so far).
pub(crate) async fn repeat_case(
    env: &Env<'_>,
    c: &Case,
    setup: &Setup,
    read: &dyn Fn(&str) -> LiveOptions,
    before: &[CaseRecord],
    evidence: &mut Evidence,
) -> Result<CaseRecord, VerifyError> {
    let Env {
        opts,
        cluster,
        ns,
        roles,
        ..
    } = *env;
    let mut r = record(c, None);
    let group = setup.group;
    let service = fixture::service(ns, &opts.run_id, setup);
    cluster
        .apply(&format!("/api/v1/namespaces/{ns}/services/{group}"), &service)
        .await?;
    for b in crate::plan::backends(ns, &opts.run_id, setup, roles) {
        cluster
            .apply(
                &format!("{}/{}", pods_path(ns), b.name),
                &fixture::with_images(&b.manifest, &opts.images),
            )
            .await?;
    }
    settle(cluster, ns, group, opts.settle).await?;
    let snap = locality_live::snapshot(&read(ns), None).await?;
    let config = matrix_config(&snap, opts.proxy_mode);
    let mut pairs = Vec::new();
    for id in REPEATED {
        let Some(repeated) = case(id) else { continue };
        let again = one_client_case(env, repeated, roles, &snap.state, &config, evidence).await?;
        let first = before.iter().find(|b| b.id == *id).map(Outcome::of);
        r.rounds += again.rounds;
        r.tries.extend(again.tries.iter().cloned());
        r.nodes.extend(again.nodes.iter().cloned());
        pairs.push((*id, first, Outcome::of(&again)));
    }
    (r.status, r.why) = judge_repeat(&pairs);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(status: Status, expected: Expected) -> Outcome {
        Outcome {
            status,
            expected: Some(expected),
        }
    }

    #[test]
    fn the_same_results_pass_and_a_new_failure_fails() {
        let b1 = out(
            Status::Pass,
            Expected::Deliver {
                pods: vec!["b-be-n1".into()],
            },
        );
        let c = out(Status::Pass, Expected::Drop);
        let same = [
            ("B1", Some(b1.clone()), b1.clone()),
            ("C", Some(c.clone()), c.clone()),
        ];
        assert_eq!(judge_repeat(&same).0, Status::Pass);

        let broken = [
            ("B1", Some(b1.clone()), b1.clone()),
            ("C", Some(c.clone()), out(Status::Fail, Expected::Drop)),
        ];
        let (s, why) = judge_repeat(&broken);
        assert_eq!(s, Status::Fail);
        assert!(why.contains("C passed, and fails"), "{why}");

        // The state read back differs: not comparable, not a violation.
        let moved = [("C", Some(c.clone()), out(Status::Pass, Expected::Reject))];
        assert_eq!(judge_repeat(&moved).0, Status::Incomplete);
        // Nothing to compare with.
        // Nothing a rerun could compare: not executed, never a RERUN.
        assert_eq!(judge_repeat(&[("B1", None, b1.clone())]).0, Status::NotExecuted);
        let failed_first = [("C", Some(out(Status::Fail, Expected::Drop)), c)];
        assert_eq!(judge_repeat(&failed_first).0, Status::NotExecuted);
    }
}
