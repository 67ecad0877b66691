//! `P`, `Pt` and `Pn`: a client on each sampled node, each judged against its own node (only
//! the node's own backend may answer, a terminating one for `Pt`; nothing may answer for
//! `Pn`), and `Pt`'s closing of its serving-terminating window.

use std::collections::BTreeMap;

use futures_util::StreamExt;

use locality_model::matrix::MatrixConfig;
use locality_model::objects::ClusterState;
use locality_model::proxy::{Destination, Source};

use crate::cases::Case;
use crate::env::Env;
use crate::error::VerifyError;
use crate::expect::{Expected, Query, for_route};
use crate::fixture::{self, HTTP_PORT, SERVICE_PORT};
use crate::judge::Status;
use crate::probe::Probe;
use crate::probing::{cluster_ip, declared_expectation_in, node_config, node_judgement, single_mode};
use crate::record::NodeJudgement;
use crate::record::{CaseRecord, LagOverLimit, describe, record};
use crate::setup::GroupState;

/// How many sampled nodes `P`, `Pt` and `Pn` probe at once.
const PROBES_AT_ONCE: usize = 8;

/// `OwnNode` for a client on `node`: delivered by the Ready pods of the group's workload on
/// that node, as read back; with `terminating` (`Pt`), by those being deleted (still Ready:
/// serving their shutdown delay).
pub(crate) fn own_node_expectation(
    state: &ClusterState,
    ns: &str,
    group: &str,
    node: &str,
    terminating: bool,
) -> Expected {
    let mut pods: Vec<String> = state
        .pods
        .iter()
        .filter(|p| {
            p.meta.namespace == ns
                && p.spec.node_name == node
                && p.ready
                && p.meta.deletion_timestamp.is_some() == terminating
                && p.meta.labels.get("app").map(String::as_str) == Some(group)
        })
        .map(|p| p.meta.name.clone())
        .collect();
    pods.sort();
    if pods.is_empty() {
        return Expected::Unknown {
            why: format!(
                "no {}Ready pod of {group} on {node} in the state read back",
                if terminating { "terminating, " } else { "" }
            ),
        };
    }
    Expected::Deliver { pods }
}

/// `P`, `Pn`: a client on each sampled node, each judged against its own node (`P`: only the
/// backend on its own node answers; `Pn`: nothing answers).
pub(crate) async fn each_node_case(
    env: &Env<'_>,
    c: &Case,
    snap: &ClusterState,
    config: &MatrixConfig,
    state: &GroupState,
    lags: &BTreeMap<String, crate::lag::Measured>,
) -> Result<CaseRecord, VerifyError> {
    use crate::lag::Measured;
    let ns = env.ns;
    let group = c.setup.group;
    let svc_ip = cluster_ip(snap, ns, group);
    let mut r = record(c, None);
    let mut expectations = BTreeMap::new();
    let mut reasons = Vec::new();
    let mut problems = Vec::new();
    let mut measured = Vec::new();
    let mut status = Status::Pass;
    let limit_ms = env.opts.max_proxy_lag.as_millis() as u64;
    let mut planned = Vec::new();
    for (node, client) in &state.node_clients {
        // kube-proxy's lag on the node: reported under the limit, never judged over it.
        match lags.get(node) {
            Some(m) if m.proven_ms() > limit_ms => {
                let ms = m.proven_ms();
                status = status.max(Status::Incomplete);
                problems.push(format!(
                    "{node}: kube-proxy had still not synced {ms} ms after the change (limit {limit_ms} ms): not judged"
                ));
                r.nodes.push(NodeJudgement {
                    node: node.clone(),
                    status: Status::Incomplete,
                    hypotheses: Vec::new(),
                    lag_over_limit: Some(LagOverLimit {
                        measured_ms: match m {
                            Measured::Synced { lag_ms, .. } => (*lag_ms).max(ms),
                            _ => ms,
                        },
                        limit_ms,
                    }),
                });
                continue;
            }
            Some(Measured::Synced { lag_ms, .. }) => measured.push(format!("{node} ≤ {lag_ms} ms")),
            Some(Measured::NotSynced { .. }) => {
                status = status.max(Status::Incomplete);
                problems.push(format!(
                    "{node}: kube-proxy had not synced past the change within {:?}: not judged",
                    env.opts.proxy_lag_timeout
                ));
                r.nodes.push(NodeJudgement {
                    node: node.clone(),
                    status: Status::Incomplete,
                    hypotheses: Vec::new(),
                    lag_over_limit: None,
                });
                continue;
            }
            Some(Measured::Unreadable(why)) => measured.push(format!("{node} not measured ({why})")),
            None => {}
        }
        let config = node_config(config, env.planes, node);
        let q = Query {
            namespace: ns,
            service: group,
            port: fixture::service_port_name(&c.setup),
            node,
            source: Source::Pod,
            destination: Destination::ClusterIp,
        };
        let (expected, reason) = for_route(snap, config.clone(), q);
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
        let declared = if c.setup.daemonset {
            own_node_expectation(snap, ns, group, node, c.setup.terminating)
        } else {
            declared_expectation_in(c, env.roles, single_mode(&config))
        };
        expectations.insert(node.clone(), expected.clone());
        if expected != declared {
            status = status.max(Status::Incomplete);
            r.nodes.push(NodeJudgement {
                node: node.clone(),
                status: Status::Incomplete,
                hypotheses: Vec::new(),
                lag_over_limit: None,
            });
            problems.push(format!(
                "{node}: the model expects {} but the catalogue declares {}: the state read back is not the case's setup",
                describe(&expected),
                describe(&declared)
            ));
            continue;
        }
        let probe = Probe {
            client: client.clone(),
            client_port: HTTP_PORT,
            host: svc_ip.clone(),
            port: SERVICE_PORT,
            udp: c.setup.udp,
            request: "hostname",
        };
        planned.push((node.as_str(), client.as_str(), config, expected, probe));
    }
    // The nodes' probes at once (a few at a time: each is a client's rounds of dials through
    // the API server), judged in the nodes' order.
    let probed = futures_util::stream::iter(
        planned
            .iter()
            .map(|(_, _, _, expected, probe)| env.probe(expected, probe)),
    )
    .buffered(PROBES_AT_ONCE)
    .collect::<Vec<_>>()
    .await;
    for ((node, client, config, _, _), result) in planned.iter().zip(probed) {
        let (s, w, rounds, tries) = result?;
        let q = Query {
            namespace: ns,
            service: group,
            port: fixture::service_port_name(&c.setup),
            node,
            source: Source::Pod,
            destination: Destination::ClusterIp,
        };
        r.nodes.push(node_judgement(env, snap, config, q, s, &tries));
        r.rounds += rounds;
        r.tries.extend(tries);
        if s != Status::Pass {
            status = status.max(s);
            problems.push(format!("{client} on {node}: {w}"));
        }
    }
    let tries_per_node = r.tries.len() / state.node_clients.len().max(1);
    r.expected = Some(Expected::PerNode { nodes: expectations });
    r.reason = reasons.join(",");
    r.status = if state.node_clients.is_empty() {
        Status::Incomplete
    } else {
        status
    };
    let lag_note = if measured.is_empty() {
        String::new()
    } else {
        format!("; kube-proxy lag after the change: {}", measured.join(", "))
    };
    r.why = if state.node_clients.is_empty() {
        "no sampled node to probe from".into()
    } else if problems.is_empty() {
        format!(
            "each of {} sampled nodes ({}) {} (~{tries_per_node} tries per node, {} in all)",
            state.node_clients.len(),
            state
                .node_clients
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if c.setup.daemonset {
                "was served only by the backend on its own node"
            } else {
                "got no answer without a local endpoint"
            },
            r.tries.len()
        )
    } else {
        problems.join("; ")
    } + &lag_note;
    Ok(r)
}

/// `Pt`, once probed: the tries only count if every endpoint was still serving-terminating
/// after them (else the shutdown window closed during the probes: INCOMPLETE); then the pods
/// are force-deleted (grace 0) so the namespace goes without waiting for their delay.
pub(crate) async fn close_terminating_window(
    env: &Env<'_>,
    setup: &crate::cases::Setup,
    state: &GroupState,
    r: &mut CaseRecord,
) -> Result<(), VerifyError> {
    let (cluster, ns, group) = (env.cluster, env.ns, setup.group);
    let list = crate::env::slices(cluster, ns, group).await?;
    if !crate::setup::all_serving_terminating(&list, state.terminating.len()) {
        r.status = Status::Incomplete;
        r.why = format!(
            "the backends' shutdown window closed during the probes (not every endpoint was still serving-terminating after them), not judged: {}",
            r.why
        );
    }
    for name in &state.terminating {
        cluster
            .delete(&format!(
                "{}/{name}?gracePeriodSeconds=0",
                crate::env::pods_path(ns)
            ))
            .await?;
    }
    Ok(())
}
