//! Judging a rollout case, pure: the phase of N1's endpoints each slice poll shows, the
//! timeline of phases on the cluster's clock, and each try against the phases it may fall in
//! (with the lag band), the settled window the phase under test must hold, and the failing
//! node's repair hypotheses.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::judge::Status;
use crate::logs::rate;
use crate::probe::{Seen, Try};

use super::timeline::{Phase, Timeline};

/// How long past both bands the phase under test is held once seen (ms of the cluster's
/// clock): at ≥ 10 tries per second, 15 tries judged strictly.
pub(super) const SETTLED_MARGIN_MS: u128 = 1_500;

/// The fewest tries a case's phase under test must hold once settled (at 10 tries per
/// second: one second).
const MIN_SETTLED_TRIES: usize = 10;

/// The rollout's traffic policy, the client node's proxy mode and the phase the case tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Policy {
    /// `internalTrafficPolicy: Local` (else PreferSameNode).
    pub(crate) itp_local: bool,
    /// The client node's kube-proxy is in ipvs mode.
    pub(crate) ipvs: bool,
    /// The client node's kube-proxy falls back to serving-terminating endpoints (KEP-1669;
    /// `ProxyFeatures::terminating_fallback`): false only for a hypothesis of an older one.
    pub(crate) terminating_fallback: bool,
    /// The client node's kube-proxy keeps PreferSameNode on its node
    /// (`ProxyFeatures::node_hints`): false only for a hypothesis of an older one, which
    /// spreads over every ready endpoint.
    pub(crate) node_hints: bool,
    /// The client node's data plane serves a Local Service from other nodes when none is
    /// local (the catalogue's `ItpLocalIgnored`): false but for that hypothesis.
    pub(crate) local_ignored: bool,
    /// The phase the case exists for (`E-a`, `H3`: serving-terminating; `E-b`: no serving
    /// endpoint): a PASS needs [`MIN_SETTLED_TRIES`] in it once settled (past the band after
    /// its first sighting, before the band ahead of its end). `None`: none required.
    pub(crate) tested: Option<Phase>,
}

/// The tries sent while `phase` surely held and kube-proxy had had the band to program it:
/// from the stamp after its first sighting plus the band to the stamp before its last
/// sighting minus the band.
fn settled_tries(timeline: &Timeline, phase: Phase, tries: &[Try], lag_ms: u128) -> (usize, u128) {
    let Some(i) = timeline.transitions.iter().position(|(_, p)| *p == phase) else {
        return (0, 0);
    };
    let from = timeline.transitions[i].0;
    let to = match timeline.seen_before.get(i + 1) {
        Some(b) => *b,
        // Never left: until the last try.
        None => tries.last().map_or(from, |t| t.sent_ms),
    };
    let certain = to.saturating_sub(from);
    let (lo, hi) = (from + lag_ms, to.saturating_sub(lag_ms));
    let n = tries
        .iter()
        .filter(|t| lo <= t.sent_ms && t.sent_ms <= hi)
        .count();
    (n, certain)
}

/// What a try may show in a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Allowed {
    Old,
    New,
    Remote,
    Timeout,
    Refused,
}

/// The case's kind, from its setup: ITP Local with tcpSocket readiness (`E-a`), ITP Local
/// with `/readyz` (`E-b`), PreferSameNode (`H3`).
fn allowed(policy: Policy, phase: Phase) -> &'static [Allowed] {
    use Allowed::*;
    match (policy.itp_local, phase) {
        // A kube-proxy that ignores PreferSameNode: every ready endpoint, the remote one too.
        (false, Phase::OldReady) if !policy.node_hints => &[Old, Remote],
        (false, Phase::NewReady) if !policy.node_hints => &[New, Remote],
        (_, Phase::OldReady) => &[Old],
        // Without the fallback a serving-terminating endpoint is no endpoint: as if none
        // were local (ipvs refuses, iptables and nftables drop; PreferSameNode goes remote).
        (true, Phase::OldServingTerminating) if !policy.terminating_fallback && policy.ipvs => &[Refused],
        (true, Phase::OldServingTerminating) if !policy.terminating_fallback => &[Timeout, Refused],
        (false, Phase::OldServingTerminating) if !policy.terminating_fallback => &[Remote, Refused],
        // On ipvs a Local policy without a local endpoint refuses (the virtual server has no
        // real server) where iptables and nftables drop.
        (true, Phase::NoLocal) if policy.local_ignored => &[Remote],
        (true, Phase::NoLocal) if policy.ipvs => &[Refused],
        // Serving-terminating: used as a last resort (KEP-1669); the process may have exited
        // before the readiness probe notices (refused).
        (true, Phase::OldServingTerminating) => &[Old, Refused],
        (true, Phase::NoLocal) => &[Timeout],
        // PreferSameNode without a ready local endpoint falls back to the others.
        (false, Phase::OldServingTerminating) => &[Old, Remote, Refused],
        (false, Phase::NoLocal) => &[Remote],
        (_, Phase::NewReady) => &[New],
    }
}

fn kind_of(seen: &Seen, old: &str, new: &str) -> Option<Allowed> {
    match seen {
        Seen::Answer { responder } if responder == old => Some(Allowed::Old),
        Seen::Answer { responder } if responder == new => Some(Allowed::New),
        Seen::Answer { .. } => Some(Allowed::Remote),
        Seen::Timeout => Some(Allowed::Timeout),
        Seen::Refused => Some(Allowed::Refused),
        _ => None,
    }
}

/// N1's phase in a slice list: by the old and new pods' endpoints.
pub(super) fn phase_of(list: &Value, old: &str, new: &str) -> Phase {
    let mut old_state = None;
    let mut new_ready = false;
    for s in list["items"].as_array().into_iter().flatten() {
        for e in s["endpoints"].as_array().into_iter().flatten() {
            let pod = e["targetRef"]["name"].as_str().unwrap_or_default();
            let c = &e["conditions"];
            let ready = c["ready"] != json!(false);
            let serving = c["serving"].as_bool().unwrap_or(ready);
            let terminating = c["terminating"] == json!(true);
            if pod == new && ready {
                new_ready = true;
            }
            if pod == old {
                old_state = Some((ready, serving, terminating));
            }
        }
    }
    if new_ready {
        return Phase::NewReady;
    }
    match old_state {
        Some((true, _, false)) => Phase::OldReady,
        Some((_, true, _)) => Phase::OldServingTerminating,
        _ => Phase::NoLocal,
    }
}

/// The phases in the order a rollout goes through them.
const ORDER: [Phase; 4] = [
    Phase::OldReady,
    Phase::OldServingTerminating,
    Phase::NoLocal,
    Phase::NewReady,
];

/// Whether a try at `t` showing `k` falls in the window where a transition happened unseen
/// (between the last observation of the previous phase, `seen_before[i]`, and the first of
/// the new one, `transitions[i].0`, widened by the band) and `k` is what the previous phase,
/// the new one or any phase a poll may have skipped between them allows. What could not be
/// observed is never judged a violation.
fn unobserved(
    policy: Policy,
    transitions: &[(u128, Phase)],
    seen_before: &[u128],
    t: u128,
    lag_ms: u128,
    k: Allowed,
) -> bool {
    let pos = |p: Phase| ORDER.iter().position(|o| *o == p).unwrap_or(0);
    transitions.iter().enumerate().skip(1).any(|(i, (at, p))| {
        let before = seen_before.get(i).copied().unwrap_or(*at);
        let (prev, next) = (pos(transitions[i - 1].1), pos(*p));
        let (lo, hi) = (prev.min(next), prev.max(next));
        // As within the band: where the old backend was allowed, rules still pointing at it
        // after it went are refused or time out.
        before.saturating_sub(lag_ms) <= t
            && t <= at + lag_ms
            && ORDER[lo..=hi].iter().any(|ph| {
                let a = allowed(policy, *ph);
                a.contains(&k)
                    || (matches!(k, Allowed::Refused | Allowed::Timeout) && a.contains(&Allowed::Old))
            })
    })
}

/// The judgement over the timeline: (status, why, measured lag in ms).
pub(crate) fn judge_timeline(
    policy: Policy,
    timeline: &Timeline,
    tries: &[Try],
    old: &str,
    new: &str,
    lag_ms: u128,
) -> (Status, String, u128) {
    let (transitions, seen_before) = (&timeline.transitions[..], &timeline.seen_before[..]);
    if transitions.is_empty() || tries.is_empty() {
        return (
            Status::Incomplete,
            "no timeline: no phase or no try observed".into(),
            0,
        );
    }
    let phase_at = |t: u128| {
        transitions
            .iter()
            .rev()
            .find(|(at, _)| *at <= t)
            .map_or(transitions[0].1, |(_, p)| *p)
    };
    // Phase i spans [at_i, at_{i+1}); the first phase also covers the tries before the
    // first observation.
    let spans: Vec<(u128, u128, Phase)> = transitions
        .iter()
        .enumerate()
        .map(|(i, (at, p))| {
            let from = if i == 0 { 0 } else { *at };
            (from, transitions.get(i + 1).map_or(u128::MAX, |n| n.0), *p)
        })
        .collect();
    let mut violations = Vec::new();
    let mut late = 0u128;
    let mut remote = 0;
    for t in tries {
        let Some(k) = kind_of(&t.seen, old, new) else {
            return (
                Status::Incomplete,
                format!("the probe channel failed: {}", t.raw),
                0,
            );
        };
        if k == Allowed::Remote && policy.itp_local {
            remote += 1;
        }
        let lo = t.sent_ms.saturating_sub(lag_ms);
        let hi = t.sent_ms + lag_ms;
        // Within the band, a neighbouring phase's rules may still apply; rules still pointing
        // at the old backend after it exited are refused by its node, or time out once its
        // address is gone: in a later phase, or in the band before a phase allowing the old
        // backend ends (the old pod goes before the slices say so, e.g. deleted with grace 0).
        let ok = spans.iter().any(|(from, to, p)| {
            let own = *from <= t.sent_ms && t.sent_ms < *to;
            let ending = own && t.sent_ms + lag_ms >= *to;
            let a = allowed(policy, *p);
            *from <= hi
                && *to >= lo
                && (a.contains(&k)
                    || ((!own || ending)
                        && matches!(k, Allowed::Refused | Allowed::Timeout)
                        && a.contains(&Allowed::Old)))
        }) || unobserved(policy, transitions, seen_before, t.sent_ms, lag_ms, k);
        if ok {
            continue;
        }
        // What an earlier phase allowed, shown past the band: kube-proxy's lag, not a
        // violation.
        match spans
            .iter()
            .filter(|(from, _, p)| *from <= t.sent_ms && allowed(policy, *p).contains(&k))
            .map(|(_, to, _)| *to)
            .max()
        {
            Some(to) => late = late.max(t.sent_ms.saturating_sub(to)),
            None => violations.push(t),
        }
    }
    // The lag: per transition, the first try after it showing the new phase's own outcome.
    let mut measured = 0;
    for (at, p) in transitions.iter().skip(1) {
        let own = allowed(policy, *p);
        if let Some(first) = tries
            .iter()
            .filter(|t| t.sent_ms >= *at)
            .find(|t| kind_of(&t.seen, old, new).is_some_and(|k| own.contains(&k)))
        {
            measured = measured.max(first.sent_ms - at);
        }
    }
    measured = measured.max(late);
    let phases: Vec<String> = transitions.iter().map(|(_, p)| format!("{p:?}")).collect();
    let counts = {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for t in tries {
            let key = match &t.seen {
                Seen::Answer { responder } => responder.clone(),
                s => format!("{s:?}").to_lowercase(),
            };
            *m.entry(key).or_default() += 1;
        }
        m.iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let summary = format!(
        "{} tries at {:.1}/s over phases {} ({counts}); measured lag {measured} ms (band {lag_ms} ms)",
        tries.len(),
        rate(tries),
        phases.join(" → ")
    );
    // Past the band, what a late kube-proxy shows (old rules: a gone pod, a drop) cannot be
    // told from a violation: never judged, INCOMPLETE (a remote answer under a Local policy
    // is a violation whatever the lag: no stale rule of the node points there).
    // The first phase was settled before the probe loop started: what violates it is never
    // lag.
    let first_end = transitions.get(1).map_or(u128::MAX, |t| t.0);
    let settled_violation = violations.iter().any(|t| t.sent_ms < first_end);
    if measured > lag_ms && !settled_violation && (remote == 0 || !policy.itp_local) {
        return (
            Status::Incomplete,
            format!("kube-proxy's lag exceeded the band, not judged: {summary}"),
            measured,
        );
    }
    if let Some(v) = violations.first() {
        let what = if remote > 0 {
            format!("{remote} tries answered by a remote backend; ")
        } else {
            String::new()
        };
        return (
            Status::Fail,
            format!(
                "{what}{} tries outside what their phase allows, first: {} in phase {:?}; {summary}",
                violations.len(),
                v.raw,
                phase_at(v.sent_ms)
            ),
            measured,
        );
    }
    if measured > lag_ms {
        return (
            Status::Incomplete,
            format!("kube-proxy's lag exceeded the band: {summary}"),
            measured,
        );
    }
    if let Some(phase) = policy.tested {
        let (n, certain) = settled_tries(timeline, phase, tries, lag_ms);
        if n < MIN_SETTLED_TRIES {
            return (
                Status::Incomplete,
                format!(
                    "the phase under test, {phase:?}, was not observed settled: {n} tries in it \
                     past the band (certain for {certain} ms, the band takes {} ms; the \
                     EndpointSlice polls were too slow), not judged: {summary}",
                    2 * lag_ms
                ),
                measured,
            );
        }
    }
    (Status::Pass, summary, measured)
}

/// A failed rollout's node judgement: consistent with a kube-proxy that does not know its
/// node (`--hostname-override`) when, under a Local policy, nothing ever answered (no local
/// endpoint was ever seen), or, under PreferSameNode, a remote backend answered while the
/// local one was ready.
///
/// Where the node's kube-proxy is a release without the serving-terminating fallback
/// (`older`: the policy judged as that release would behave), the timeline judged again as
/// that release: consistent with an upgrade when nothing then violates. A node served by
/// another data plane (`kube_proxy: false`) gets neither kube-proxy hypothesis.
pub(super) fn rollout_judgement(
    judged: Judged<'_>,
    node: Option<&str>,
    kube_proxy: bool,
    older: Option<Policy>,
    divergences: &[(&'static str, Policy)],
) -> crate::record::NodeJudgement {
    let Judged {
        timeline,
        tries,
        old,
        new,
        lag_ms,
        itp_local,
    } = judged;
    let mut hypotheses = Vec::new();
    if kube_proxy {
        let answered = tries.iter().any(|t| matches!(t.seen, Seen::Answer { .. }));
        let remote = tries
            .iter()
            .any(|t| kind_of(&t.seen, old, new) == Some(Allowed::Remote));
        let consistent = if itp_local { !answered } else { remote };
        hypotheses.push(crate::record::Hypothesis {
            kind: crate::decision::RepairKind::HostnameOverride,
            entry: None,
            expected: crate::expect::Expected::Unknown {
                why: "per rollout phase: never a local answer (Local), remote answers while local is ready (PreferSameNode)".into(),
            },
            consistent,
        });
        if let Some(policy) = older {
            let (status, _, _) = judge_timeline(policy, timeline, tries, old, new, lag_ms);
            hypotheses.push(crate::record::Hypothesis {
                kind: crate::decision::RepairKind::UpgradeKubeProxy,
                entry: None,
                expected: crate::expect::Expected::Unknown {
                    why: "per rollout phase, as the node's kube-proxy release behaves (without the serving-terminating fallback, or spreading PreferSameNode over every endpoint)".into(),
                },
                consistent: status != Status::Fail,
            });
        }
    }
    // A catalogue entry of the node's data plane: the timeline judged as it behaves.
    for (entry, policy) in divergences {
        let (status, _, _) = judge_timeline(*policy, timeline, tries, old, new, lag_ms);
        hypotheses.push(crate::record::Hypothesis {
            kind: crate::decision::RepairKind::DataPlane,
            entry: Some(entry.to_string()),
            expected: crate::expect::Expected::Unknown {
                why: format!("per rollout phase, as a data plane with catalogue entry {entry} behaves"),
            },
            consistent: status != Status::Fail,
        });
    }
    crate::record::NodeJudgement {
        node: node.unwrap_or_default().to_string(),
        status: Status::Fail,
        hypotheses,
        lag_over_limit: None,
    }
}

/// What a rollout's judgement was made of.
#[derive(Clone, Copy)]
pub(super) struct Judged<'a> {
    pub(super) timeline: &'a Timeline,
    pub(super) tries: &'a [Try],
    pub(super) old: &'a str,
    pub(super) new: &'a str,
    pub(super) lag_ms: u128,
    pub(super) itp_local: bool,
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
