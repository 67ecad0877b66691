//! The rollout cases `E-a`, `E-b` and `H3` (docs/design.md §5.4): N1's backend is replaced while a
//! probe-loop client on N1 tries the Service continuously (the `logs` channel, ≥ 10 tries per
//! second); each try is judged against the phase of N1's endpoints it falls in.
//!
//! The old backend runs agnhost netexec with `--delay-shutdown=D` and a grace period > D: after
//! SIGTERM it keeps serving D seconds. With tcpSocket readiness (`E-a`, `H3`) it stays Ready
//! until its process exits, so its endpoint is serving-terminating; with readiness httpGet
//! `/readyz` (`E-b`), netexec fails the probe from SIGTERM on. Once the old pod is gone a new
//! backend is created on N1.
//!
//! Phases come from the EndpointSlices, polled throughout; each observation is stamped with
//! the cluster's clock (the newest line of the probe loop's log, read with
//! `timestamps=true&tailLines=1`), so they compare with the tries' own timestamps whatever the
//! clock of the machine running the tool. A try may show what any phase overlapping
//! `[start − lag, start + lag]` allows (`lag` = `--max-proxy-lag`; the early side absorbs the
//! polling delay): kube-proxy programs changes
//! late. The measured lag (a phase's first try showing its own outcome) above the band makes
//! the case INCOMPLETE, never FAIL.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cases::{Case, Role};
use crate::env::{Env, pods_path, settle, slices, wait_pods};
use crate::error::VerifyError;
use crate::fixture::{self, HTTP_PORT, SERVICE_PORT};
use crate::judge::Status;
use crate::ledger::Evidence;
use crate::logs::{ProbeLoop, rate};
use crate::probe::{Seen, Try};
use crate::record::{CaseRecord, record};

/// agnhost's `--delay-shutdown` of the old backend (s): an upper bound. The phase it makes
/// (serving-terminating with tcpSocket readiness, no serving endpoint with `/readyz`) lasts
/// until the tool has seen it settled for `2 × band` plus [`SETTLED_MARGIN_MS`] (then it
/// deletes the old pod with grace 0), so what a data plane does in it is judged strictly,
/// never excused as lag, however slowly the EndpointSlices can be polled: a data plane
/// without the serving-terminating fallback cannot pass `E-a`.
pub const DELAY_SHUTDOWN_S: u64 = 3600;

/// The backends' grace period (s): 10 s above [`DELAY_SHUTDOWN_S`].
pub const GRACE_S: u64 = DELAY_SHUTDOWN_S + 10;

/// How long past both bands the phase under test is held once seen (ms of the cluster's
/// clock): at ≥ 10 tries per second, 15 tries judged strictly.
const SETTLED_MARGIN_MS: u128 = 1_500;

/// The fewest tries a case's phase under test must hold once settled (at 10 tries per
/// second: one second).
const MIN_SETTLED_TRIES: usize = 10;

/// N1's endpoints as a slice shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// The old backend is ready.
    OldReady,
    /// The old backend is terminating and still serving.
    OldServingTerminating,
    /// N1 has no serving endpoint.
    NoLocal,
    /// The new backend is ready.
    NewReady,
}

/// The rollout's traffic policy, the client node's proxy mode and the phase the case tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Policy {
    /// `internalTrafficPolicy: Local` (else PreferSameNode).
    pub(crate) itp_local: bool,
    /// The client node's kube-proxy is in ipvs mode.
    pub(crate) ipvs: bool,
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
        (_, Phase::OldReady) => &[Old],
        // On ipvs a Local policy without a local endpoint refuses (the virtual server has no
        // real server) where iptables and nftables drop.
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
fn phase_of(list: &Value, old: &str, new: &str) -> Phase {
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

/// N1's phases as the polls of its EndpointSlices saw them, on the cluster's clock.
///
/// Each poll lists the slices between two stamps: the previous poll's (taken before the list
/// was sent) and its own (taken after the answer). A transition is therefore placed no later
/// than the stamp after the first poll that shows the new phase, and no earlier than the
/// stamp before the last poll that showed the previous one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Timeline {
    /// Per phase seen: the stamp after the first poll that showed it, and the phase.
    pub(crate) transitions: Vec<(u128, Phase)>,
    /// Per transition: the stamp before the last poll that showed the previous phase.
    pub(crate) seen_before: Vec<u128>,
    /// The newest stamp: taken before the next poll's list.
    stamp: u128,
    /// The stamp before the latest poll showing the current phase.
    current_from: u128,
}

impl Timeline {
    /// A timeline whose first poll follows the cluster time `start` (`None`: unknown, 0).
    pub(crate) fn new(start: Option<u128>) -> Self {
        let stamp = start.unwrap_or(0);
        Timeline {
            stamp,
            current_from: stamp,
            ..Timeline::default()
        }
    }

    /// How long `phase`, the current one, has surely held (ms): from the stamp after its
    /// first sighting to the stamp before its latest. 0 when it is not the current phase.
    pub(crate) fn held_ms(&self, phase: Phase) -> u128 {
        match self.transitions.last() {
            Some((at, p)) if *p == phase => self.current_from.saturating_sub(*at),
            _ => 0,
        }
    }

    /// One poll that showed `phase`, stamped `after` it (`None`: the stamp could not be
    /// read; the poll is not placed on the clock).
    pub(crate) fn observe(&mut self, phase: Phase, after: Option<u128>) {
        let Some(after) = after else { return };
        let before = self.stamp;
        if self.transitions.last().is_none_or(|(_, last)| *last != phase) {
            self.transitions.push((after, phase));
            self.seen_before.push(self.current_from);
        }
        self.current_from = before;
        self.stamp = self.stamp.max(after);
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
fn rollout_judgement(
    itp_local: bool,
    node: Option<&str>,
    tries: &[Try],
    old: &str,
    new: &str,
) -> crate::diagnose::NodeJudgement {
    let answered = tries.iter().any(|t| matches!(t.seen, Seen::Answer { .. }));
    let remote = tries
        .iter()
        .any(|t| kind_of(&t.seen, old, new) == Some(Allowed::Remote));
    let consistent = if itp_local { !answered } else { remote };
    crate::diagnose::NodeJudgement {
        node: node.unwrap_or_default().to_string(),
        status: Status::Fail,
        hypotheses: vec![crate::diagnose::Hypothesis {
            kind: crate::decision::RepairKind::HostnameOverride,
            expected: crate::expect::Expected::Unknown {
                why: "per rollout phase: never a local answer (Local), remote answers while local is ready (PreferSameNode)".into(),
            },
            consistent,
        }],
        lag_over_limit: None,
    }
}

fn rollout_backend(env: &Env<'_>, c: &Case, role: Role, name: &str) -> Value {
    let node = env.roles.node(role).unwrap_or_default();
    let mut m = fixture::backend(env.ns, &env.opts.run_id, &c.setup, role, node, true);
    m["metadata"]["name"] = json!(name);
    m["spec"]["terminationGracePeriodSeconds"] = json!(GRACE_S);
    let ctr = &mut m["spec"]["containers"][0];
    // The probe loop asks /hostname; /readyz must stay netexec's own (no --http-override).
    ctr["args"] = json!([
        "netexec",
        format!("--http-port={HTTP_PORT}"),
        "--udp-port=-1",
        format!("--delay-shutdown={DELAY_SHUTDOWN_S}")
    ]);
    ctr["readinessProbe"] = if c.setup.readyz {
        json!({"httpGet": {"path": "/readyz", "port": HTTP_PORT}, "periodSeconds": 1, "failureThreshold": 1})
    } else {
        json!({"tcpSocket": {"port": HTTP_PORT}, "periodSeconds": 1, "failureThreshold": 1})
    };
    m
}

/// Runs one rollout case with its own Service and backends.
pub(crate) async fn rollout_case(
    env: &Env<'_>,
    c: &Case,
    evidence: &mut Evidence,
) -> Result<CaseRecord, VerifyError> {
    let Env {
        opts,
        cluster,
        ns,
        roles,
        ..
    } = *env;
    let group = c.setup.group;
    // How often the slices are polled: the phases' resolution (the simulated cluster runs
    // faster than real time).
    let poll = Duration::from_millis(if opts.simulated { 5 } else { 100 });
    let n1 = roles.node(Role::N1).unwrap_or_default().to_string();
    let mut r = record(c, Some(&n1));
    r.reason = "rollout".into();
    let old = fixture::backend_name(group, Role::N1, true);
    let new = format!("{old}-new");
    let mut pods = Vec::new();
    for (role, name) in [
        (Role::N1, old.clone()),
        (Role::N2, fixture::backend_name(group, Role::N2, true)),
    ] {
        let m = rollout_backend(env, c, role, &name);
        let m = evidence.manifest(&m)?;
        cluster.create(&pods_path(ns), &m).await?;
        pods.push((name, true));
    }
    let m = fixture::service(ns, &opts.run_id, &c.setup);
    let m = evidence.manifest(&m)?;
    let svc = cluster
        .create(&format!("/api/v1/namespaces/{ns}/services"), &m)
        .await?;
    let ip = svc["spec"]["clusterIP"].as_str().unwrap_or_default().to_string();
    if wait_pods(cluster, ns, &pods, opts.pod_ready_timeout)
        .await?
        .is_none()
        || ip.is_empty()
    {
        r.status = Status::Incomplete;
        r.why = format!(
            "the backends or the Service were not ready within {:?}",
            opts.pod_ready_timeout
        );
        return Ok(r);
    }
    // N1's kube-proxy must have programmed the Service before the first phase is judged:
    // a lag over the limit is never judged.
    if let Some(u) = crate::lag::gate(env, &n1, group, group, &format!("{group}-lag"), evidence).await? {
        r.status = Status::Incomplete;
        r.why = u.why;
        r.lag_over_limit = u.over;
        return Ok(r);
    }
    settle(cluster, ns, group, opts.settle).await?;
    let probe = ProbeLoop::new(&format!("{group}-loop-n1"), &n1, &format!("{ip}:{SERVICE_PORT}"));
    let m = probe.manifest(ns, &opts.run_id);
    let m = evidence.manifest(&m)?;
    cluster.create(&pods_path(ns), &m).await?;
    if wait_pods(
        cluster,
        ns,
        &[(probe.client.clone(), false)],
        opts.pod_ready_timeout,
    )
    .await?
    .is_none()
    {
        r.status = Status::Incomplete;
        r.why = format!("the probe loop {} did not start", probe.client);
        return Ok(r);
    }
    // The cluster's "now": the newest log line's kubelet timestamp.
    let tail = format!(
        "{}/{}/log?timestamps=true&tailLines=1",
        pods_path(ns),
        probe.client
    );
    let cluster_now = || async {
        let (code, body) = cluster.call(http::Method::GET, &tail, None).await?;
        Ok::<_, VerifyError>(if (200..300).contains(&code) {
            String::from_utf8_lossy(&body)
                .split_whitespace()
                .next()
                .and_then(crate::logs::unix_ms)
        } else {
            None
        })
    };
    // Each poll is bracketed by the cluster's time before its list (the previous poll's
    // stamp) and after it: a stall between the list and its stamp can never make a phase
    // look longer than it was.
    let mut timeline = Timeline::new(cluster_now().await?);
    let observe = async |timeline: &mut Timeline| -> Result<Phase, VerifyError> {
        let list = slices(cluster, ns, group).await?;
        let p = phase_of(&list, &old, &new);
        timeline.observe(p, cluster_now().await?);
        Ok(p)
    };
    // A baseline of tries before the rollout.
    let until = tokio::time::Instant::now() + opts.settle;
    while tokio::time::Instant::now() < until || timeline.transitions.is_empty() {
        observe(&mut timeline).await?;
        tokio::time::sleep(poll).await;
        if tokio::time::Instant::now() > until + opts.pod_ready_timeout {
            break;
        }
    }
    let tested = if !c.setup.itp_local || !c.setup.readyz {
        Phase::OldServingTerminating
    } else {
        Phase::NoLocal
    };
    let lag_ms = opts.max_proxy_lag.as_millis();
    cluster.delete(&format!("{}/{old}", pods_path(ns))).await?;
    // The old pod serves its shutdown delay until the phase under test has been seen settled
    // long enough; then it is deleted at once (grace 0).
    // Bounded: past `pod_ready_timeout` plus twice the band (wall clock) it is ended anyway
    // (a phase never seen settled is then INCOMPLETE).
    let mut ended = false;
    let hold_until = tokio::time::Instant::now() + opts.pod_ready_timeout + 2 * opts.max_proxy_lag;
    let deadline = hold_until + opts.pod_ready_timeout;
    // Until the old pod is gone.
    loop {
        observe(&mut timeline).await?;
        if !ended
            && (timeline.held_ms(tested) >= 2 * lag_ms + SETTLED_MARGIN_MS
                || tokio::time::Instant::now() > hold_until)
        {
            cluster
                .delete(&format!("{}/{old}?gracePeriodSeconds=0", pods_path(ns)))
                .await?;
            ended = true;
        }
        if cluster.get(&format!("{}/{old}", pods_path(ns))).await?.is_none() {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            r.status = Status::Incomplete;
            r.why = format!(
                "the old backend {old} did not go within {:?} of its deletion with grace 0",
                opts.pod_ready_timeout
            );
            return Ok(r);
        }
        tokio::time::sleep(poll).await;
    }
    let m = rollout_backend(env, c, Role::N1, &new);
    let m = evidence.manifest(&m)?;
    cluster.create(&pods_path(ns), &m).await?;
    let deadline = tokio::time::Instant::now() + opts.pod_ready_timeout;
    let mut after: Option<tokio::time::Instant> = None;
    loop {
        let p = observe(&mut timeline).await?;
        if p == Phase::NewReady && after.is_none() {
            after = Some(tokio::time::Instant::now() + opts.settle);
        }
        if after.is_some_and(|a| tokio::time::Instant::now() >= a) {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            r.status = Status::Incomplete;
            r.why = format!(
                "the new backend {new} was not ready within {:?}",
                opts.pod_ready_timeout
            );
            return Ok(r);
        }
        tokio::time::sleep(poll).await;
    }
    let tries = probe.tries(cluster, ns).await?;
    let _ = cluster
        .delete(&format!("{}/{}", pods_path(ns), probe.client))
        .await;
    // The client node's mode, as its kube-proxy reported it.
    let ipvs = env
        .planes
        .get(&n1)
        .and_then(crate::diagnose::NodeDataPlane::model_mode)
        == Some(locality_model::proxy::ProxyMode::Ipvs);
    let policy = Policy {
        itp_local: c.setup.itp_local,
        ipvs,
        tested: Some(tested),
    };
    let (status, why, measured) = judge_timeline(policy, &timeline, &tries, &old, &new, lag_ms);
    if status == Status::Incomplete && measured > lag_ms {
        r.lag_over_limit = Some(crate::record::LagOverLimit {
            measured_ms: measured as u64,
            limit_ms: lag_ms as u64,
        });
    }
    if status == Status::Fail {
        r.nodes.push(rollout_judgement(
            c.setup.itp_local,
            r.client_node.as_deref(),
            &tries,
            &old,
            &new,
        ));
    }
    let phases: Vec<Value> = timeline
        .transitions
        .iter()
        .map(|(at, p)| json!({"atUnixMs": at.to_string(), "phase": p}))
        .collect();
    r.transitions = timeline
        .transitions
        .iter()
        .map(|(at, p)| crate::record::Transition {
            at_ms: *at,
            phase: format!("{p:?}"),
        })
        .collect();
    evidence.case_file(
        c.id,
        "timeline.json",
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({"transitions": phases})).unwrap_or_default()
        ),
    )?;
    r.status = status;
    r.why = why;
    r.rounds = 1;
    r.tries = tries;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: Policy = Policy {
        itp_local: true,
        ipvs: false,
        tested: None,
    };

    fn t(ms: u128, seen: Seen) -> Try {
        Try {
            channel: "logs",
            client: "loop".into(),
            target: "10.96.0.1:80".into(),
            protocol: "http",
            sent_ms: ms,
            received_ms: ms,
            seen,
            raw: format!("{ms}"),
        }
    }

    fn tl(transitions: &[(u128, Phase)], seen_before: &[u128]) -> Timeline {
        Timeline {
            transitions: transitions.to_vec(),
            seen_before: seen_before.to_vec(),
            ..Timeline::default()
        }
    }

    fn answer(who: &str) -> Seen {
        Seen::Answer {
            responder: who.into(),
        }
    }

    /// E-a: the old backend answers until 6 s, drops until 9 s, the new one after.
    fn correct_e_a() -> Vec<Try> {
        (0..120u128)
            .map(|i| {
                let ms = i * 100;
                let seen = match ms {
                    0..6_000 => answer("old"),
                    6_000..9_000 => Seen::Timeout,
                    _ => answer("new"),
                };
                t(ms, seen)
            })
            .collect()
    }

    #[test]
    fn a_phase_between_two_polls_is_not_judged_a_violation() {
        // The polls saw OldReady until 5 s, then NewReady at 10 s: NoLocal went unseen.
        let transitions = [(0, Phase::OldReady), (10_000, Phase::NewReady)];
        let (s, why, _) = judge_timeline(
            LOCAL,
            &tl(&transitions, &[0, 5_000]),
            &correct_e_a(),
            "old",
            "new",
            1_000,
        );
        assert_eq!(s, Status::Pass, "{why}");
        // Had the polls seen OldReady until 10 s, the drops would be a violation.
        let (s, _, _) = judge_timeline(
            LOCAL,
            &tl(&transitions, &[0, 10_000]),
            &correct_e_a(),
            "old",
            "new",
            1_000,
        );
        assert_eq!(s, Status::Fail);
    }

    #[test]
    fn a_node_that_never_sees_its_endpoint_fails_in_the_settled_phase() {
        let transitions = [
            (0, Phase::OldReady),
            (6_000, Phase::NoLocal),
            (9_000, Phase::NewReady),
        ];
        let tries: Vec<Try> = (0..120u128).map(|i| t(i * 100, Seen::Timeout)).collect();
        let (s, why, _) = judge_timeline(
            LOCAL,
            &tl(&transitions, &[0, 5_900, 8_900]),
            &tries,
            "old",
            "new",
            1_000,
        );
        assert_eq!(s, Status::Fail, "{why}");
    }

    #[test]
    fn a_late_kube_proxy_is_incomplete_with_its_lag() {
        // Every phase shows 4 s late; the band is 1 s.
        let transitions = [
            (0, Phase::OldReady),
            (6_000, Phase::NoLocal),
            (9_000, Phase::NewReady),
        ];
        let tries: Vec<Try> = (0..200u128)
            .map(|i| {
                let ms = i * 100;
                let seen = match ms {
                    0..10_000 => answer("old"),
                    10_000..13_000 => Seen::Timeout,
                    _ => answer("new"),
                };
                t(ms, seen)
            })
            .collect();
        let (s, why, measured) = judge_timeline(
            LOCAL,
            &tl(&transitions, &[0, 5_900, 8_900]),
            &tries,
            "old",
            "new",
            1_000,
        );
        assert_eq!(s, Status::Incomplete, "{why}");
        assert!(measured >= 4_000, "{measured}");
        // A remote answer under a Local policy is a violation whatever the lag.
        let mut remote = tries.clone();
        remote[150].seen = answer("remote");
        let (s, _, _) = judge_timeline(
            LOCAL,
            &tl(&transitions, &[0, 5_900, 8_900]),
            &remote,
            "old",
            "new",
            1_000,
        );
        assert_eq!(s, Status::Fail);
    }

    #[test]
    fn ipvs_refuses_where_iptables_drops_in_the_no_local_phase() {
        let transitions = [
            (0, Phase::OldReady),
            (6_000, Phase::NoLocal),
            (9_000, Phase::NewReady),
        ];
        let mut tries = correct_e_a();
        for t in tries.iter_mut().filter(|t| t.seen == Seen::Timeout) {
            t.seen = Seen::Refused;
        }
        let ipvs = Policy {
            itp_local: true,
            ipvs: true,
            tested: None,
        };
        let (s, why, _) = judge_timeline(
            ipvs,
            &tl(&transitions, &[0, 5_900, 8_900]),
            &tries,
            "old",
            "new",
            1_000,
        );
        assert_eq!(s, Status::Pass, "{why}");
        let (s, _, _) = judge_timeline(
            LOCAL,
            &tl(&transitions, &[0, 5_900, 8_900]),
            &tries,
            "old",
            "new",
            1_000,
        );
        assert_eq!(s, Status::Fail);
    }

    #[test]
    fn a_stall_between_a_list_and_its_stamp_does_not_stretch_the_phase_it_showed() {
        // The old backend answers until 6 s, N1 has no endpoint until 10 s, the new backend
        // answers from 10 s. The fourth poll lists the slices at 9.5 s (NoLocal) but its stamp
        // is read only at 20 s (the tool stalled in between); the fifth shows NewReady.
        let mut timeline = Timeline::new(Some(0));
        for (phase, after) in [
            (Phase::OldReady, 1_000),
            (Phase::OldReady, 5_000),
            (Phase::NoLocal, 7_000),
            (Phase::NoLocal, 20_000),
            (Phase::NewReady, 21_000),
        ] {
            timeline.observe(phase, Some(after));
        }
        // NewReady began after the list that came after the 7 s stamp.
        assert_eq!(timeline.seen_before.last(), Some(&7_000));
        let tries: Vec<Try> = (0..250u128)
            .map(|i| {
                let ms = i * 100;
                let seen = match ms {
                    0..6_000 => answer("old"),
                    6_000..10_000 => Seen::Timeout,
                    _ => answer("new"),
                };
                t(ms, seen)
            })
            .collect();
        let (s, why, _) = judge_timeline(LOCAL, &timeline, &tries, "old", "new", 1_000);
        assert_ne!(s, Status::Fail, "{why}");
        // A poll whose stamp could not be read is not placed on the clock.
        let mut unstamped = Timeline::new(Some(0));
        unstamped.observe(Phase::OldReady, Some(1_000));
        unstamped.observe(Phase::NoLocal, None);
        assert_eq!(unstamped.transitions, vec![(1_000, Phase::OldReady)]);
    }

    #[test]
    fn the_phase_under_test_must_be_seen_settled() {
        // E-a: old answers until 5 s, serving-terminating until 25 s (old still answers),
        // no local endpoint until 28 s, the new backend after. Polls every 500 ms.
        let e_a = Policy {
            tested: Some(Phase::OldServingTerminating),
            ..LOCAL
        };
        let phase = |ms: u128| match ms {
            0..5_000 => Phase::OldReady,
            5_000..25_000 => Phase::OldServingTerminating,
            25_000..28_000 => Phase::NoLocal,
            _ => Phase::NewReady,
        };
        let timeline = |poll: u128| {
            let mut tl = Timeline::new(Some(0));
            for k in 1..(40_000 / poll) {
                tl.observe(phase(k * poll - poll / 2), Some(k * poll));
            }
            tl
        };
        let tries = |fallback: bool| -> Vec<Try> {
            (0..400u128)
                .map(|i| {
                    let ms = i * 100;
                    let seen = match phase(ms) {
                        Phase::OldReady => answer("old"),
                        Phase::OldServingTerminating if fallback => answer("old"),
                        Phase::OldServingTerminating | Phase::NoLocal => Seen::Timeout,
                        Phase::NewReady => answer("new"),
                    };
                    t(ms, seen)
                })
                .collect()
        };
        let (s, why, _) = judge_timeline(e_a, &timeline(500), &tries(true), "old", "new", 5_000);
        assert_eq!(s, Status::Pass, "{why}");
        // A data plane without the fallback drops while the old pod still serves.
        let (s, why, _) = judge_timeline(e_a, &timeline(500), &tries(false), "old", "new", 5_000);
        assert_eq!(s, Status::Fail, "{why}");
        // Polls too slow to see the phase settled: not judged, never a PASS.
        let (s, why, _) = judge_timeline(e_a, &timeline(8_000), &tries(true), "old", "new", 5_000);
        assert_eq!(s, Status::Incomplete, "{why}");
        assert!(why.contains("OldServingTerminating"), "{why}");
    }

    #[test]
    fn the_old_pod_going_before_its_slice_says_so_is_not_a_violation() {
        // ipvs, E-a: the tool deletes the old pod with grace 0 at 20 s; ipvs still points at
        // its address until the slices show NoLocal at 20.6 s: a few timeouts, then refusals.
        let ipvs = Policy {
            itp_local: true,
            ipvs: true,
            tested: Some(Phase::OldServingTerminating),
        };
        let mut tl = Timeline::new(Some(0));
        for k in 1..60u128 {
            let at = k * 500;
            let phase = match at - 250 {
                0..5_000 => Phase::OldReady,
                5_000..20_600 => Phase::OldServingTerminating,
                20_600..25_000 => Phase::NoLocal,
                _ => Phase::NewReady,
            };
            tl.observe(phase, Some(at));
        }
        let tries: Vec<Try> = (0..290u128)
            .map(|i| {
                let ms = i * 100;
                let seen = match ms {
                    0..20_000 => answer("old"),
                    20_000..20_500 => Seen::Timeout,
                    20_500..25_000 => Seen::Refused,
                    _ => answer("new"),
                };
                t(ms, seen)
            })
            .collect();
        let (s, why, _) = judge_timeline(ipvs, &tl, &tries, "old", "new", 1_000);
        assert_eq!(s, Status::Pass, "{why}");
        // Timeouts well inside the serving-terminating phase stay violations.
        let mut early = tries.clone();
        for t in early.iter_mut().filter(|t| (10_000..12_000).contains(&t.sent_ms)) {
            t.seen = Seen::Timeout;
        }
        let (s, why, _) = judge_timeline(ipvs, &tl, &early, "old", "new", 1_000);
        assert_eq!(s, Status::Fail, "{why}");
    }
}
