//! kube-proxy's lag per node, from its own metrics: after a change the run made (a setup
//! group's Service and backends), each node's kube-proxy must show a sync that began after
//! the change and has ended: `kubeproxy_sync_proxy_rules_last_timestamp_seconds` past the
//! change with `kubeproxy_sync_proxy_rules_endpoint_changes_pending` at 0, or, while other
//! changes keep something pending, a last sync whose end minus the
//! `kubeproxy_sync_proxy_rules_duration_seconds` added since the previous sample is past it.
//! The lag is that sync time minus the change time, both in the cluster's clock (the change
//! time is the latest of the Service's creation and its backends' Ready transitions, so the
//! EndpointSlice controller's own delay is included).
//!
//! A lag under `--max-proxy-lag` is reported, never judged; over it, the node's cases of the
//! group are INCOMPLETE (measured again once; twice over the limit, the decision is a HOLD
//! naming the node). A node without readable kube-proxy metrics is not measured.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::env::{Env, pods_path};
use crate::error::VerifyError;
use crate::ledger::Evidence;
use crate::logs::ProbeLoop;
use crate::logs::unix_ms;
use crate::scrape::Reader;

/// The last successful sync and the pending endpoint changes, from a metrics text.
pub fn sync_state(text: &str) -> Option<(u128, f64)> {
    let value = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
    };
    let last = value("kubeproxy_sync_proxy_rules_last_timestamp_seconds")?;
    let pending = value("kubeproxy_sync_proxy_rules_endpoint_changes_pending").unwrap_or(0.0);
    Some(((last * 1000.0).round() as u128, pending))
}

/// When a change happened, in the cluster's clock: the latest of `service`'s creation and the
/// Ready transitions of the group's pods (ms since the epoch).
pub(crate) async fn change_time(
    env: &Env<'_>,
    service: &str,
    group: &str,
) -> Result<Option<u128>, VerifyError> {
    let Env { cluster, ns, .. } = *env;
    let svc = cluster
        .get(&format!("/api/v1/namespaces/{ns}/services/{service}"))
        .await?
        .unwrap_or(Value::Null);
    let pods = cluster
        .get(&format!("{}?labelSelector=app%3D{group}", pods_path(ns)))
        .await?
        .unwrap_or(Value::Null);
    let mut times: Vec<u128> = svc["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(unix_ms)
        .into_iter()
        .collect();
    for p in pods["items"].as_array().into_iter().flatten() {
        // A deletion: `deletionTimestamp` is the request's time plus the grace period, in
        // whole seconds (the request came at most 1 s after that minus the grace).
        if let Some(at) = p["metadata"]["deletionTimestamp"].as_str().and_then(unix_ms) {
            let grace = p["metadata"]["deletionGracePeriodSeconds"].as_u64().unwrap_or(0);
            times.push((at + 1000).saturating_sub(u128::from(grace) * 1000));
        }
        for c in p["status"]["conditions"].as_array().into_iter().flatten() {
            if c["type"] == "Ready"
                && let Some(t) = c["lastTransitionTime"].as_str().and_then(unix_ms)
            {
                times.push(t);
            }
        }
    }
    Ok(times.into_iter().max())
}

/// What a node's kube-proxy showed after a change.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// Synced past the change. `lag_ms`: its last sync minus the change (an upper bound: a
    /// later sync may have moved the timestamp); `unsynced_ms`: the longest the run saw it
    /// not yet synced after the change (a lower bound of the lag, the one judged).
    Synced {
        /// Last sync minus the change.
        lag_ms: u64,
        /// Seen not synced this long after the change (0: synced at the first read).
        unsynced_ms: u64,
    },
    /// Not synced past the change within the measurement's time; seen unsynced this long.
    NotSynced {
        /// Seen not synced this long after the change.
        unsynced_ms: u64,
    },
    /// No metrics to read (why).
    Unreadable(String),
}

impl Measured {
    /// The lag that counts against `--max-proxy-lag`: how long the node was *seen* not synced
    /// after the change (never a later, unrelated sync).
    pub fn proven_ms(&self) -> u64 {
        match self {
            Measured::Synced { unsynced_ms, .. } | Measured::NotSynced { unsynced_ms } => *unsynced_ms,
            Measured::Unreadable(_) => 0,
        }
    }
}

/// The series a lag reader keeps: the last sync's end, the changes pending, and the
/// sync-duration histogram's sum and count (how long the syncs since the previous sample
/// took, hence when the last one began at the latest).
const SYNC_METRICS: [&str; 4] = [
    "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
    "kubeproxy_sync_proxy_rules_endpoint_changes_pending",
    "kubeproxy_sync_proxy_rules_duration_seconds_sum",
    "kubeproxy_sync_proxy_rules_duration_seconds_count",
];

/// A change's time comes from timestamps in whole seconds (`creationTimestamp`, a
/// condition's `lastTransitionTime`), rounded down: the change may be up to this much later.
/// A reader's sample proves a sync after the change only from this much after it on.
const CHANGE_RESOLUTION_MS: u128 = 1_000;

/// How often a lag reader samples its node's kube-proxy (ms of the cluster's clock): the
/// resolution of a measured lag, well under any `--max-proxy-lag`.
pub(crate) const SAMPLE_MS: u64 = 500;

/// One sample of a node's kube-proxy sync state, in ms of the cluster's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// When the reader took it.
    pub at: u128,
    /// When the last successful sync ended (`..._last_timestamp_seconds`).
    pub last: u128,
    /// The EndpointSlice changes received and not yet applied.
    pub pending: f64,
    /// The sync-duration histogram's sum (ms) and count, when the metrics have it.
    pub durations: Option<(u128, u64)>,
}

/// Starts one lag reader per node of `nodes` whose kube-proxy metrics the survey read: a
/// hostNetwork probe loop sampling its `/metrics` every [`SAMPLE_MS`], which writes each
/// sample with the instant the pod took it, so a lag is measured in the cluster's clock at
/// that resolution however long the API takes to read it back. A reader that is not running
/// within `--pod-ready-timeout` is dropped (that node is read by one-shot pods instead).
pub(crate) async fn start_readers(
    env: &Env<'_>,
    nodes: &[String],
    evidence: &mut Evidence,
) -> Result<BTreeMap<String, ProbeLoop>, VerifyError> {
    let mut readers = BTreeMap::new();
    for (i, node) in nodes.iter().enumerate() {
        let readable = env
            .planes
            .get(node)
            .is_some_and(|p| p.unreadable.is_none() && p.version_from.as_deref() == Some("metrics"));
        if !readable {
            continue;
        }
        let l = ProbeLoop::metrics(&format!("lag-reader-{i}"), node, SAMPLE_MS, &SYNC_METRICS);
        let m = evidence.manifest(&l.manifest(env.ns, &env.opts.run_id))?;
        if env.cluster.create(&pods_path(env.ns), &m).await.is_ok() {
            readers.insert(node.clone(), l);
        }
    }
    let mut running = BTreeMap::new();
    let deadline = env.cluster.deadline(env.opts.pod_ready_timeout);
    while !readers.is_empty() {
        let mut pending = BTreeMap::new();
        for (node, l) in std::mem::take(&mut readers) {
            match crate::env::pod_condition(env.cluster, env.ns, &l.client).await? {
                (true, _, _) => {
                    running.insert(node, l);
                }
                _ => {
                    pending.insert(node, l);
                }
            }
        }
        readers = pending;
        if readers.is_empty() || env.cluster.passed(&deadline).await {
            break;
        }
        env.cluster.sleep(Duration::from_millis(300)).await;
    }
    for l in readers.values() {
        let _ = env
            .cluster
            .delete(&format!("{}/{}", pods_path(env.ns), l.client))
            .await;
    }
    Ok(running)
}

/// The sync states a lag reader's log holds, by sample instant, in order; a sample missing
/// the last sync or the pending changes is left out.
pub fn samples(tries: &[crate::probe::Try]) -> Vec<Sample> {
    #[derive(Default)]
    struct Parts {
        last: Option<u128>,
        pending: Option<f64>,
        sum: Option<u128>,
        count: Option<u64>,
    }
    let mut by_ts: BTreeMap<u128, Parts> = BTreeMap::new();
    for t in tries {
        let crate::probe::Seen::Answer { responder } = &t.seen else {
            continue;
        };
        let Some((name, value)) = responder.split_once(' ') else {
            continue;
        };
        let Ok(v) = value.trim().parse::<f64>() else {
            continue;
        };
        if !v.is_finite() || v < 0.0 {
            continue;
        }
        let e = by_ts.entry(t.sent_ms).or_default();
        let ms = (v * 1000.0).round() as u128;
        match name {
            "kubeproxy_sync_proxy_rules_last_timestamp_seconds" => e.last = Some(ms),
            "kubeproxy_sync_proxy_rules_endpoint_changes_pending" => e.pending = Some(v),
            "kubeproxy_sync_proxy_rules_duration_seconds_sum" => e.sum = Some(ms),
            "kubeproxy_sync_proxy_rules_duration_seconds_count" => e.count = Some(v as u64),
            _ => {}
        }
    }
    by_ts
        .into_iter()
        .filter_map(|(at, p)| {
            Some(Sample {
                at,
                last: p.last?,
                pending: p.pending?,
                durations: p.sum.zip(p.count),
            })
        })
        .collect()
}

/// Whether `cur` proves the change programmed, with `floor` the latest the change can have
/// been made (its timestamps' resolution): either nothing is pending and the last sync ended
/// after `floor` (an idle kube-proxy), or the last sync began after `floor` (it ended at
/// `last` and took at most the durations added since the sample before it; a sync applies
/// what was pending when it began), which holds under other changes' churn, when something
/// is always pending. A failed sync adds its duration without moving `last`: it only makes
/// the bound earlier. Both assume kube-proxy's informer had the EndpointSlice change when
/// the sync began: the EndpointSlice controller's and the watch's delay are not seen.
fn programmed(prev: Option<&Sample>, cur: &Sample, floor: u128) -> bool {
    if cur.last < floor {
        return false;
    }
    if cur.pending == 0.0 {
        return true;
    }
    let (Some(p), Some((sum, count))) = (prev, cur.durations) else {
        return false;
    };
    let Some((psum, pcount)) = p.durations else {
        return false;
    };
    count > pcount && cur.last > p.last && sum >= psum && cur.last.saturating_sub(sum - psum) >= floor
}

/// What the samples show of a change at `since` (rounded down; made by `floor` at the
/// latest): synced (the first sample from `floor` on that proves the change programmed, see
/// [`programmed`]; its lag counted from `since`, an upper bound), with the longest the node
/// was seen unsynced after `floor` (a lower bound of the lag, the one judged); `None` while
/// no sample shows it synced.
pub fn judge_samples(samples: &[Sample], since: u128, floor: u128) -> (Option<Measured>, u64) {
    let mut unsynced = 0u64;
    for (i, cur) in samples.iter().enumerate() {
        if cur.at < floor.max(since) {
            continue;
        }
        let prev = i.checked_sub(1).map(|j| &samples[j]);
        if programmed(prev, cur, floor) {
            return (
                Some(Measured::Synced {
                    lag_ms: (cur.last - since) as u64,
                    unsynced_ms: unsynced,
                }),
                unsynced,
            );
        }
        // Seen unsynced this long at least: the change was made by `floor`.
        unsynced = unsynced.max((cur.at - floor) as u64);
    }
    (None, unsynced)
}

/// Reads the kube-proxy of every node of `nodes` until it has synced past `since` with
/// nothing pending, for at most `timeout`: from the node's lag reader when it has one
/// ([`start_readers`]), else with one curl pod per node and round, the pods of a round
/// created together so that each node is read as soon after the change as pods start.
pub(crate) async fn measure(
    env: &Env<'_>,
    nodes: &[String],
    prefix: &str,
    since: u128,
    timeout: Duration,
    evidence: &mut Evidence,
) -> Result<BTreeMap<String, Measured>, VerifyError> {
    let mut readers: Vec<Reader<'_, '_>> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| Reader {
            env,
            node: node.clone(),
            prefix: format!("{prefix}-{i}"),
            seq: 0,
            read_at: None,
        })
        .collect();
    let mut done: BTreeMap<String, Measured> = BTreeMap::new();
    let mut unsynced: BTreeMap<String, u128> = BTreeMap::new();
    let deadline = env.cluster.deadline(timeout);
    loop {
        // Whether the deadline had passed before this round's reads: only a round read after
        // it can say a node did not sync in time (a slow round must not decide from reads
        // sent before the deadline).
        let past = env.cluster.passed(&deadline).await;
        // The lag readers' samples of every node left, read at once.
        let reads = futures_util::future::join_all(
            readers
                .iter()
                .filter(|r| !done.contains_key(&r.node))
                .filter_map(|r| Some((r.node.clone(), env.lag_readers.get(&r.node)?)))
                .map(|(node, l)| async move {
                    let read = l
                        .tries_since(env.cluster, env.ns, Some(since.saturating_sub(5_000)))
                        .await;
                    (node, read)
                }),
        )
        .await;
        let mut read: BTreeMap<String, Vec<crate::probe::Try>> = reads
            .into_iter()
            .filter_map(|(node, r)| Some((node, r.ok()?)))
            .collect();
        let mut started = Vec::new();
        for r in readers.iter_mut() {
            if done.contains_key(&r.node) {
                continue;
            }
            if let Some(l) = env.lag_readers.get(&r.node) {
                // The reader's samples: only a failing read falls back to one-shot pods.
                if let Some(tries) = read.remove(&r.node) {
                    let samples = samples(&tries);
                    let (m, seen) = judge_samples(&samples, since, since + CHANGE_RESOLUTION_MS);
                    let seen_entry = unsynced.entry(r.node.clone()).or_default();
                    *seen_entry = (*seen_entry).max(u128::from(seen));
                    if let Some(m) = m {
                        let lines: Vec<String> = samples
                            .iter()
                            .filter(|x| x.at + 5_000 >= since)
                            .map(|x| match x.durations {
                                Some((sum, count)) => {
                                    format!("{} {} {} {sum} {count}", x.at, x.last, x.pending)
                                }
                                None => format!("{} {} {} - -", x.at, x.last, x.pending),
                            })
                            .collect();
                        evidence.write(
                            &format!("lag/{}-{}.txt", r.prefix, r.node),
                            &format!(
                                "# change at {since} ms (cluster clock); samples of {}: sampled-at-ms last-sync-ms pending sync-duration-sum-ms sync-count\n{}\n",
                                l.client,
                                lines.join("\n")
                            ),
                        )?;
                        done.insert(r.node.clone(), m);
                    }
                    continue;
                }
            }
            match r.start("/metrics", evidence).await? {
                Ok(name) => started.push((r.node.clone(), name)),
                Err(why) => {
                    done.insert(r.node.clone(), Measured::Unreadable(why));
                }
            }
        }
        for (node, name) in started {
            let Some(r) = readers.iter_mut().find(|r| r.node == node) else {
                continue;
            };
            let text = match r.finish(&name, "/metrics").await? {
                Ok(t) => t,
                Err(why) => {
                    done.insert(node, Measured::Unreadable(why));
                    continue;
                }
            };
            evidence.write(
                &format!("lag/{name}-{node}.txt"),
                &format!(
                    "# change at {since} ms, read at {} ms (cluster clock)\n{text}",
                    r.read_at.map_or_else(|| "?".to_string(), |t| t.to_string())
                ),
            )?;
            let Some((last, pending)) = sync_state(&text) else {
                done.insert(
                    node,
                    Measured::Unreadable(
                        "no kubeproxy_sync_proxy_rules_last_timestamp_seconds in the metrics".into(),
                    ),
                );
                continue;
            };
            let seen = unsynced.entry(node.clone()).or_default();
            if last >= since && pending == 0.0 {
                let m = Measured::Synced {
                    lag_ms: (last - since) as u64,
                    unsynced_ms: *seen as u64,
                };
                done.insert(node, m);
            } else if let Some(at) = r.read_at {
                *seen = (*seen).max(at.saturating_sub(since));
            }
        }
        if done.len() == readers.len() {
            return Ok(done);
        }
        if past {
            for r in &readers {
                if !done.contains_key(&r.node) {
                    let unsynced_ms = unsynced.get(&r.node).copied().unwrap_or(0) as u64;
                    done.insert(r.node.clone(), Measured::NotSynced { unsynced_ms });
                }
            }
            return Ok(done);
        }
        // Readers sample every SAMPLE_MS: when every node left has one, look again that soon.
        let only_readers = readers
            .iter()
            .all(|r| done.contains_key(&r.node) || env.lag_readers.contains_key(&r.node));
        let pause = if only_readers { SAMPLE_MS } else { 300 };
        env.cluster.sleep(Duration::from_millis(pause)).await;
    }
}

/// Why a case on `node` cannot be judged yet: its kube-proxy had not programmed the change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unsynced {
    /// For the case's `why`.
    pub(crate) why: String,
    /// Set when the lag proven is over `--max-proxy-lag` (a HOLD naming the node).
    pub(crate) over: Option<crate::record::LagOverLimit>,
}

/// The gate before judging a case on `node` after a change of `service` (setup group
/// `group`): `None` when its kube-proxy synced past the change within `--max-proxy-lag` (or
/// has no readable metrics: then the case is judged once `--max-proxy-lag` has passed),
/// otherwise why not.
pub(crate) async fn gate(
    env: &Env<'_>,
    node: &str,
    service: &str,
    group: &str,
    prefix: &str,
    evidence: &mut Evidence,
) -> Result<Option<Unsynced>, VerifyError> {
    let Some(since) = change_time(env, service, group).await? else {
        return Ok(None);
    };
    gate_at(env, node, since, true, prefix, evidence).await
}

/// After a failure: when `node`'s kube-proxy has synced past the change of `service` (group
/// `group`) with nothing pending, but its last sync came more than `--max-proxy-lag` after
/// the change, that lag: the failing tries may predate the programming of the change; or
/// that it has still not synced past it.
pub(crate) async fn synced_late(
    env: &Env<'_>,
    node: &str,
    service: &str,
    group: &str,
    prefix: &str,
    evidence: &mut Evidence,
) -> Result<Option<Late>, VerifyError> {
    let Some(since) = change_time(env, service, group).await? else {
        return Ok(None);
    };
    let m = measure(
        env,
        &[node.to_string()],
        prefix,
        since,
        env.opts.proxy_lag_timeout,
        evidence,
    )
    .await?;
    let limit_ms = env.opts.max_proxy_lag.as_millis() as u64;
    Ok(match m.get(node) {
        Some(Measured::Synced { lag_ms, .. }) if *lag_ms > limit_ms => Some(Late::Synced(*lag_ms)),
        Some(Measured::NotSynced { unsynced_ms }) => Some(Late::NotSynced(
            (*unsynced_ms).max(env.opts.proxy_lag_timeout.as_millis() as u64),
        )),
        _ => None,
    })
}

/// What [`synced_late`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Late {
    /// Synced past the change, its last sync this long (ms) after it.
    Synced(u64),
    /// Still not synced past the change after the measurement's time (ms since the change).
    NotSynced(u64),
}

/// [`gate`] for a change made at some time after `since` (cluster clock, ms), e.g. a
/// deletion, which leaves no timestamp behind: the node must have synced after `since` with
/// nothing pending. `since` is only a bound of the change, so no lag is proven from it.
pub(crate) async fn gate_since(
    env: &Env<'_>,
    node: &str,
    since: u128,
    prefix: &str,
    evidence: &mut Evidence,
) -> Result<Option<Unsynced>, VerifyError> {
    gate_at(env, node, since, false, prefix, evidence).await
}

/// The gate after a change at `since`: `exact` when `since` is the change's own time (a lag
/// over the limit is then proven), a lower bound of it otherwise.
async fn gate_at(
    env: &Env<'_>,
    node: &str,
    since: u128,
    exact: bool,
    prefix: &str,
    evidence: &mut Evidence,
) -> Result<Option<Unsynced>, VerifyError> {
    let opts = env.opts;
    let m = measure(
        env,
        &[node.to_string()],
        prefix,
        since,
        opts.proxy_lag_timeout,
        evidence,
    )
    .await?;
    let limit_ms = opts.max_proxy_lag.as_millis() as u64;
    Ok(match m.get(node) {
        Some(m @ (Measured::Synced { .. } | Measured::NotSynced { .. }))
            if exact && m.proven_ms() > limit_ms =>
        {
            Some(Unsynced {
                why: format!(
                    "kube-proxy's lag over the limit: on {node} it had still not programmed the change {} ms after it (limit {limit_ms} ms): not judged",
                    m.proven_ms()
                ),
                over: Some(crate::record::LagOverLimit {
                    measured_ms: m.proven_ms(),
                    limit_ms,
                }),
            })
        }
        Some(Measured::NotSynced { .. }) => Some(Unsynced {
            why: format!(
                "kube-proxy on {node} had not programmed the change within {:?}: not judged",
                opts.proxy_lag_timeout
            ),
            over: None,
        }),
        Some(Measured::Unreadable(_)) => {
            // Nothing tells when this node's data plane programmed the change (a kube-proxy
            // replacement has no kube-proxy metrics): the case waits the bound the contract
            // gives a data plane, so what it then sees is not a rule still missing.
            env.cluster.sleep(opts.max_proxy_lag).await;
            None
        }
        Some(Measured::Synced { .. }) | None => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(at: u128, line: &str) -> crate::probe::Try {
        crate::probe::Try {
            channel: "log",
            client: "lag-reader-0".into(),
            target: "node:10249".into(),
            protocol: "http",
            sent_ms: at,
            received_ms: at,
            seen: crate::probe::Seen::Answer {
                responder: line.into(),
            },
            raw: line.into(),
        }
    }

    fn sample(at: u128, last: u128, pending: f64, durations: Option<(u128, u64)>) -> Sample {
        Sample {
            at,
            last,
            pending,
            durations,
        }
    }

    #[test]
    fn a_readers_samples_pair_the_series_by_instant() {
        let tries = vec![
            answer(1_000, "kubeproxy_sync_proxy_rules_last_timestamp_seconds 0.5"),
            answer(1_000, "kubeproxy_sync_proxy_rules_endpoint_changes_pending 1"),
            answer(1_200, "kubeproxy_sync_proxy_rules_last_timestamp_seconds 1.1"),
            answer(1_200, "kubeproxy_sync_proxy_rules_endpoint_changes_pending 0"),
            answer(1_200, "kubeproxy_sync_proxy_rules_duration_seconds_sum 0.25"),
            answer(1_200, "kubeproxy_sync_proxy_rules_duration_seconds_count 3"),
            // Half a sample, and lines that are no sample.
            answer(1_400, "kubeproxy_sync_proxy_rules_endpoint_changes_pending 0"),
            answer(1_400, "kubeproxy_sync_proxy_rules_last_timestamp_seconds x"),
            answer(1_600, "kubeproxy_sync_proxy_rules_last_timestamp_seconds NaN"),
            answer(1_600, "kubeproxy_sync_proxy_rules_endpoint_changes_pending -1"),
        ];
        assert_eq!(
            samples(&tries),
            vec![
                sample(1_000, 500, 1.0, None),
                sample(1_200, 1_100, 0.0, Some((250, 3)))
            ]
        );
    }

    #[test]
    fn a_change_is_synced_by_the_first_sample_past_it_with_nothing_pending() {
        // Change at 1000; still pending at 1200 and 3000; synced at 3200 by a sync at 3100.
        let s = [
            sample(800, 700, 0.0, None),
            sample(1_200, 700, 1.0, None),
            sample(3_000, 2_900, 1.0, None),
            sample(3_200, 3_100, 0.0, None),
            sample(3_400, 3_300, 0.0, None),
        ];
        let (m, unsynced) = judge_samples(&s, 1_000, 1_000);
        assert_eq!(unsynced, 2_000);
        match m {
            Some(Measured::Synced { lag_ms, unsynced_ms }) => {
                assert_eq!((lag_ms, unsynced_ms), (2_100, 2_000));
            }
            other => panic!("{other:?}"),
        }
        // A sync before the change says nothing of it.
        assert!(judge_samples(&s[..2], 1_000, 1_000).0.is_none());
    }

    #[test]
    fn under_churn_a_sync_that_began_after_the_change_proves_it_programmed() {
        // Change at 1000; other changes keep one pending in every sample. The sync ending at
        // 1150 took 300 ms (began at 850, before the change): not proof. The one ending at
        // 1350 took 100 ms (began at 1250): proof, lag 350.
        let s = [
            sample(900, 700, 1.0, Some((1_000, 10))),
            sample(1_200, 1_150, 1.0, Some((1_300, 11))),
            sample(1_400, 1_350, 1.0, Some((1_400, 12))),
        ];
        match judge_samples(&s, 1_000, 1_000).0 {
            Some(Measured::Synced { lag_ms, .. }) => assert_eq!(lag_ms, 350),
            other => panic!("{other:?}"),
        }
        assert!(judge_samples(&s[..2], 1_000, 1_000).0.is_none());
        // Two syncs between samples: the bound takes both durations (the last began at the
        // latest at 1550 - 250 = 1300).
        let two = [
            sample(900, 700, 1.0, Some((1_000, 10))),
            sample(1_100, 700, 1.0, Some((1_000, 10))),
            sample(1_600, 1_550, 1.0, Some((1_250, 12))),
        ];
        assert!(judge_samples(&two, 1_000, 1_000).0.is_some());
        assert!(judge_samples(&two, 1_301, 1_301).0.is_none());
        // No sync between the samples (the count did not move), or a failed one (the count
        // moved, the last sync did not): no proof.
        let idle = [
            sample(900, 1_100, 1.0, Some((1_000, 10))),
            sample(1_200, 1_100, 1.0, Some((1_000, 10))),
            sample(1_400, 1_100, 1.0, Some((1_050, 11))),
        ];
        assert!(judge_samples(&idle, 1_000, 1_000).0.is_none());
        // A change stamped 1000 may have been made as late as 1999 (whole seconds): an idle
        // reading of a sync at 1150 proves nothing when the change's floor is 1200.
        let early = [sample(1_200, 1_150, 0.0, None), sample(1_400, 1_150, 1.0, None)];
        assert!(judge_samples(&early, 1_000, 1_000).0.is_some());
        assert!(judge_samples(&early, 1_000, 1_200).0.is_none());
        // Without the histogram only the idle reading counts.
        let bare = [sample(900, 700, 1.0, None), sample(1_400, 1_350, 1.0, None)];
        assert!(judge_samples(&bare, 1_000, 1_000).0.is_none());
    }

    #[test]
    fn the_sync_state_is_read() {
        let text = "# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds x\n\
            kubeproxy_sync_proxy_rules_endpoint_changes_pending 2\n\
            kubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7355e+09\n";
        assert_eq!(sync_state(text), Some((1_735_500_000_000, 2.0)));
        assert_eq!(sync_state("kubeproxy_x 1\n"), None);
        let synced = "kubeproxy_sync_proxy_rules_last_timestamp_seconds 12.5\n";
        assert_eq!(sync_state(synced), Some((12_500, 0.0)));
    }
}
