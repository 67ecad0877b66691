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
//! Phases come from a watch of the EndpointSlices ([`watch`]: every change, in order) placed on
//! the cluster's clock by lists of them taken throughout ([`timeline`]); each list is stamped
//! with the cluster's clock (the newest line of the probe loop's log, read with
//! `timestamps=true&tailLines=1`), so they compare with the tries' own timestamps whatever the
//! clock of the machine running the tool. A try may show what any phase overlapping
//! `[start − lag, start + lag]` allows (`lag` = `--max-proxy-lag`; the early side absorbs the
//! polling delay): kube-proxy programs changes
//! late. The measured lag (a phase's first try showing its own outcome) above the band makes
//! the case INCOMPLETE, never FAIL.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cases::{Case, Role};
use crate::env::{Env, pods_path, settle, slices, wait_pods};
use crate::error::VerifyError;
use crate::fixture::{self, HTTP_PORT, SERVICE_PORT};
use crate::judge::Status;
use crate::ledger::Evidence;
use crate::logs::ProbeLoop;
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

mod judge;
mod timeline;
mod watch;

use judge::{Judged, SETTLED_MARGIN_MS, phase_of, rollout_judgement};
pub(crate) use judge::{Policy, judge_timeline};
pub(crate) use timeline::Phase;
pub(crate) use timeline::Timeline;
use timeline::Watched;

/// What a rollout case has seen of N1's endpoints: the polls' timeline, the watch's phases
/// and the watched slices they come from.
struct Observations {
    timeline: Timeline,
    watched: Watched,
    slices: watch::Slices,
    events: tokio::sync::mpsc::UnboundedReceiver<watch::SliceEvent>,
    /// Ends the watch when the case ends, however it ends.
    _watch: watch::Watch,
}

/// A bound on a rollout's wait: passed once `d` has gone by both in the cluster's clock and in
/// the tool's own, so a simulated cluster that runs faster than its API answers still gets as
/// many observations before the case gives up as a real cluster would.
struct GiveUp {
    cluster: crate::clock::Deadline,
    wall: tokio::time::Instant,
}

impl GiveUp {
    fn new(cluster: &crate::cluster::Cluster, d: Duration) -> Self {
        GiveUp {
            cluster: cluster.deadline(d),
            wall: tokio::time::Instant::now() + d,
        }
    }

    async fn passed(&self, cluster: &crate::cluster::Cluster) -> bool {
        tokio::time::Instant::now() >= self.wall && cluster.passed(&self.cluster).await
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
    // How often the slices are listed: the resolution of the clock the watched phases are
    // placed on (the watch itself misses no phase; the simulated cluster runs faster than
    // real time).
    let poll = Duration::from_millis(if opts.simulated { 20 } else { 250 });
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
    // look longer than it was. The watch, started from a list taken before the first stamp,
    // delivers every change in between; each poll's stamp bounds what was delivered before it.
    let first = slices(cluster, ns, group).await?;
    let (events, watch) = watch::spawn(
        cluster.clone(),
        crate::env::slices_path(ns, group),
        first["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    );
    let start = cluster_now().await?;
    let mut seen = Observations {
        watched: Watched::new(phase_of(&first, &old, &new), start),
        slices: watch::Slices::of_list(&first),
        events,
        _watch: watch,
        timeline: Timeline::new(start),
    };
    let observe = async |seen: &mut Observations| -> Result<Phase, VerifyError> {
        while let Ok(event) = seen.events.try_recv() {
            match seen.slices.apply(event) {
                Ok(()) => seen
                    .watched
                    .delivered(phase_of(&seen.slices.as_list(), &old, &new)),
                Err(why) => {
                    seen.watched.gap.get_or_insert(why);
                }
            }
        }
        let list = slices(cluster, ns, group).await?;
        let p = phase_of(&list, &old, &new);
        let after = cluster_now().await?;
        seen.timeline.observe(p, after);
        seen.watched.polled(p, after);
        Ok(p)
    };
    // A baseline of tries before the rollout, held (as the phase under test is below) until
    // it has been seen settled past both bands, so some of its tries are judged strictly.
    // Every wait of the rollout is in the cluster's clock; only the pace of the polls is the
    // API's (wall time).
    let lag_ms = opts.max_proxy_lag.as_millis();
    let settled = 2 * lag_ms + SETTLED_MARGIN_MS;
    let until = cluster.deadline(opts.settle);
    let give_up = GiveUp::new(cluster, opts.settle + opts.pod_ready_timeout);
    while !cluster.passed(&until).await || seen.timeline.held_ms(Phase::OldReady) < settled {
        observe(&mut seen).await?;
        tokio::time::sleep(poll).await;
        if give_up.passed(cluster).await {
            break;
        }
    }
    let tested = if !c.setup.itp_local || !c.setup.readyz {
        Phase::OldServingTerminating
    } else {
        Phase::NoLocal
    };
    cluster.delete(&format!("{}/{old}", pods_path(ns))).await?;
    // The old pod serves its shutdown delay until the phase under test has been seen settled
    // long enough; then it is deleted at once (grace 0).
    // Bounded: past `pod_ready_timeout` plus twice the band (cluster clock) it is ended anyway
    // (a phase never seen settled is then INCOMPLETE).
    let mut ended = false;
    let hold = opts.pod_ready_timeout + 2 * opts.max_proxy_lag;
    let hold_until = GiveUp::new(cluster, hold);
    let deadline = GiveUp::new(cluster, hold + opts.pod_ready_timeout);
    // Until the old pod is gone.
    loop {
        observe(&mut seen).await?;
        if !ended && (seen.timeline.held_ms(tested) >= settled || hold_until.passed(cluster).await) {
            cluster
                .delete(&format!("{}/{old}?gracePeriodSeconds=0", pods_path(ns)))
                .await?;
            ended = true;
        }
        if cluster.get(&format!("{}/{old}", pods_path(ns))).await?.is_none() {
            break;
        }
        if deadline.passed(cluster).await {
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
    let deadline = GiveUp::new(cluster, opts.pod_ready_timeout);
    let mut after = None;
    loop {
        let p = observe(&mut seen).await?;
        if p == Phase::NewReady && after.is_none() {
            after = Some(cluster.deadline(opts.settle));
        }
        if let Some(a) = &after
            && cluster.passed(a).await
        {
            break;
        }
        if deadline.passed(cluster).await {
            r.status = Status::Incomplete;
            r.why = format!(
                "the new backend {new} was not ready within {:?}",
                opts.pod_ready_timeout
            );
            return Ok(r);
        }
        tokio::time::sleep(poll).await;
    }
    // The watch's phases on the polls' clock; the polls alone when the two disagree or the
    // watch has a gap.
    let (timeline, source) = match timeline::merge(&seen.watched) {
        Some(t) => (t, json!({"source": "watch"})),
        None => (
            seen.timeline,
            json!({"source": "polls", "watchGap": seen.watched.gap}),
        ),
    };
    let tries = probe.tries(cluster, ns).await?;
    // The loop pod's restarts, read before it is deleted: once it is gone the run's own
    // after-case read cannot see them.
    let restarts = crate::env::pod_restarts(cluster, ns).await?;
    let _ = cluster
        .delete(&format!("{}/{}", pods_path(ns), probe.client))
        .await;
    // The client node's mode, as its kube-proxy reported it.
    let ipvs = env
        .planes
        .get(&n1)
        .and_then(crate::record::NodeDataPlane::model_mode)
        == Some(locality_model::proxy::ProxyMode::Ipvs);
    let policy = Policy {
        itp_local: c.setup.itp_local,
        ipvs,
        terminating_fallback: true,
        node_hints: true,
        local_ignored: false,
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
        let plane = env.planes.get(&n1);
        let older = plane
            .and_then(|p| p.version.as_deref())
            .and_then(locality_model::version::KubeVersion::parse_loose)
            .map(locality_model::features::ProxyFeatures::at)
            .filter(|f| !f.terminating_fallback || !f.node_hints)
            .map(|f| Policy {
                terminating_fallback: f.terminating_fallback,
                node_hints: f.node_hints,
                ..policy
            });
        let judged = Judged {
            timeline: &timeline,
            tries: &tries,
            old: &old,
            new: &new,
            lag_ms,
            itp_local: c.setup.itp_local,
        };
        // The catalogue entries of the node's data plane a rollout can show, as the policy
        // they judge by.
        use locality_model::dataplane::catalogue::{self, Effect};
        let divergences: Vec<(&'static str, Policy)> = plane
            .map(|p| p.divergences.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|id| catalogue::entry(id))
            .filter_map(|e| match e.effect {
                Effect::ItpLocalIgnored if policy.itp_local => Some((
                    e.id,
                    Policy {
                        local_ignored: true,
                        ..policy
                    },
                )),
                Effect::TopologyIgnoredWithoutSetting if !policy.itp_local => Some((
                    e.id,
                    Policy {
                        node_hints: false,
                        ..policy
                    },
                )),
                _ => None,
            })
            .collect();
        r.nodes.push(rollout_judgement(
            judged,
            r.client_node.as_deref(),
            !plane.is_some_and(|p| p.replaces_kube_proxy),
            older,
            &divergences,
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
            locality_report::encode::json_pretty_string(
                &json!({"transitions": phases, "phasesFrom": source})
            )
            .unwrap_or_default()
        ),
    )?;
    r.status = status;
    r.why = why;
    r.rounds = 1;
    r.tries = tries;
    crate::restarts::judge_restarts(&std::collections::BTreeMap::new(), &restarts, &mut r);
    Ok(r)
}
