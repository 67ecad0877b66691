//! Running a case once its setup exists: the model's expectation for each client node (with
//! that node's proxy mode), the probes until the judgement is stable, and each failing node's
//! repair hypotheses.

use std::collections::BTreeMap;
use std::time::Duration;

use locality_model::matrix::{DataPlane, MatrixConfig};
use locality_model::objects::ClusterState;
use locality_model::proxy::{Destination, ProxyMode, Source};
use locality_model::version::KubeVersion;

use crate::cases::{Case, Client, Declared, Dial};
use crate::decision::RepairKind;
use crate::env::Env;
use crate::error::VerifyError;
use crate::expect::{Expected, Query, for_route};
use crate::fixture::{self, HOST_HTTP_PORT, HTTP_PORT, SERVICE_PORT};
use crate::judge::{Status, judge, tries_for};
use crate::ledger::Evidence;
use crate::probe::{Probe, Try, dial};
use crate::record::{CaseRecord, describe, record};
use crate::record::{Hypothesis, NodeDataPlane, NodeJudgement};
use crate::roles::Roles;
use crate::setup::{Clients, GroupState};

/// The declared outcome as an expectation. A declared timeout of a cluster IP (kube-proxy's
/// DROP for a Local policy without a local endpoint) is a refusal on IPVS, where the virtual
/// server has no real server and the kernel answers port unreachable (docs/upstream.md §2.3).
/// External traffic to a nodePort under `externalTrafficPolicy: Local` without a local
/// endpoint times out on IPVS too: it is forwarded unmasqueraded and the reply is lost.
///
/// nftables checks `no-endpoint-services` in `filter-output` before its DNAT, so a hostNetwork
/// client's connection to the load-balancer IP of an `externalTrafficPolicy: Local` Service
/// with no endpoint on its node is dropped there (`X4h`; the model infers it from the rule
/// layout). ipvs' lost reply in that case is a known divergence (docs/dataplanes.md), not
/// part of the expectation.
pub(crate) fn declared_expectation_in(case: &Case, roles: &Roles, mode: Option<ProxyMode>) -> Expected {
    let host_to_local_lb_without_endpoint = match case.client {
        Client::Host(r) => {
            case.dial == Dial::LoadBalancer && case.setup.etp_local && !case.setup.backends.contains(&r)
        }
        _ => false,
    };
    match (declared_expectation(case, roles), mode) {
        (Expected::Drop, Some(ProxyMode::Ipvs)) if case.dial == Dial::ClusterIp => Expected::Reject,
        (Expected::Deliver { .. }, Some(ProxyMode::Nftables)) if host_to_local_lb_without_endpoint => {
            Expected::Drop
        }
        (e, _) => e,
    }
}

/// The mode of a node's kube-proxy when the configuration names exactly one.
pub(crate) fn single_mode(config: &MatrixConfig) -> Option<ProxyMode> {
    match config.data_plane.modes()[..] {
        [m] => Some(m),
        _ => None,
    }
}

/// The declared outcome in pods; on a cluster without `N2` (two usable nodes) the backends
/// the case would have there are left out.
pub(crate) fn declared_expectation(case: &Case, present: &Roles) -> Expected {
    match case.declared {
        Declared::AnsweredBy(roles) | Declared::RefusedByEndpoint(roles) => {
            let mut pods: Vec<String> = roles
                .iter()
                .filter(|r| present.node(**r).is_some())
                .map(|r| fixture::backend_name(case.setup.group, *r, true))
                .collect();
            pods.sort();
            Expected::Deliver { pods }
        }
        Declared::Timeout => Expected::Drop,
        Declared::Refused => Expected::Reject,
        Declared::OwnNode => Expected::Unknown {
            why: "declared per client node (see the case's per-node expectations)".into(),
        },
        Declared::Rollout => Expected::Unknown {
            why: "judged per phase of the rollout (see timeline.json)".into(),
        },
        Declared::NoLocalEndpointsCounted => Expected::Unknown {
            why: "not probed: N3's kube-proxy metrics are read".into(),
        },
        Declared::SameAsBefore => Expected::Unknown {
            why: "not probed on its own: the cases it reruns are".into(),
        },
    }
}

/// Passing rounds a positive expectation needs after its first pass (docs/design.md §5.3).
pub const CONFIRM_ROUNDS: usize = 2;

impl Env<'_> {
    /// One round: `n` tries, each its own dial, sent together (the API layer bounds how many
    /// requests are in flight).
    pub(crate) async fn round(&self, probe: &Probe, n: usize) -> Result<Vec<Try>, VerifyError> {
        futures_util::future::join_all((0..n).map(|_| dial(self.cluster, self.ns, probe)))
            .await
            .into_iter()
            .collect()
    }

    /// Probes until the judgement is stable: positive expectations are re-probed until they
    /// pass (kube-proxy lag) and must then pass [`CONFIRM_ROUNDS`] more rounds in a row (docs/design.md
    /// §5.3: a data plane that spreads over the wrong endpoints passes one round of a
    /// single-responder expectation with probability 2^-6, not three in a row); a failure
    /// must reproduce once, else it is INCOMPLETE.
    pub(crate) async fn probe(
        &self,
        expected: &Expected,
        probe: &Probe,
    ) -> Result<(Status, String, usize, Vec<Try>), VerifyError> {
        let n = tries_for(expected);
        let mut all = Vec::new();
        let mut rounds = 0;
        let deadline = self.cluster.deadline(self.opts.proxy_lag_timeout);
        let positive = matches!(expected, Expected::Deliver { .. });
        // The tries of the current run of consecutive passing rounds.
        let mut passing: Vec<Try> = Vec::new();
        let mut passes = 0;
        loop {
            let tries = self.round(probe, n).await?;
            rounds += 1;
            let (status, why) = judge(expected, &tries);
            all.extend(tries.iter().cloned());
            match status {
                Status::Pass if !positive => return Ok((status, why, rounds, all)),
                Status::Pass => {
                    passes += 1;
                    passing.extend(tries);
                    if passes > CONFIRM_ROUNDS {
                        let (_, why) = judge(expected, &passing);
                        return Ok((
                            Status::Pass,
                            format!("{why} ({passes} consecutive rounds)"),
                            rounds,
                            all,
                        ));
                    }
                }
                // A round without a wrong responder is kube-proxy's lag (nothing programmed
                // yet for the case's new Service): re-probed. An answer from a pod the case
                // does not allow is never lag (each case has its own Service): it goes to
                // the retry that confirms it.
                _ if positive
                    && !crate::judge::wrong_responder(expected, &tries)
                    && !self.cluster.clock().maybe_passed(&deadline) =>
                {
                    passes = 0;
                    passing.clear();
                    self.cluster.sleep(Duration::from_millis(500)).await;
                }
                Status::Fail => {
                    // The automatic retry.
                    self.cluster.sleep(self.opts.settle).await;
                    let again = self.round(probe, n).await?;
                    rounds += 1;
                    let (s2, why2) = judge(expected, &again);
                    all.extend(again);
                    return Ok(match s2 {
                        Status::Fail => (Status::Fail, format!("{why}; reproduced: {why2}"), rounds, all),
                        _ => (
                            Status::Incomplete,
                            format!("a violation that did not reproduce: {why}; retry: {why2}"),
                            rounds,
                            all,
                        ),
                    });
                }
                _ => return Ok((status, why, rounds, all)),
            }
        }
    }
}

/// `N0`: every pod client dials each backend by pod IP.
pub(crate) async fn pod_ip_case(
    env: &Env<'_>,
    c: &Case,
    clients: &Clients,
    state: &GroupState,
) -> Result<CaseRecord, VerifyError> {
    let mut r = record(c, None);
    let mut why = Vec::new();
    let mut status = Status::Pass;
    for (_, client) in &clients.pods {
        for (pod, _) in &state.pods {
            let expected = Expected::Deliver {
                pods: vec![pod.clone()],
            };
            let probe = Probe {
                client: client.clone(),
                client_port: HTTP_PORT,
                host: state.ips.get(pod).cloned().unwrap_or_default(),
                port: HTTP_PORT,
                udp: false,
                request: "hostname",
            };
            let (s, w, rounds, tries) = env.probe(&expected, &probe).await?;
            r.rounds += rounds;
            r.tries.extend(tries);
            if s != Status::Pass {
                status = status.max(s);
                why.push(format!("{client} → {pod}: {w}"));
            }
        }
    }
    r.expected = Some(declared_expectation(c, env.roles));
    r.reason = "pod-ip".into();
    r.status = status;
    r.why = if why.is_empty() {
        format!(
            "{} clients reached {} backends by pod IP",
            clients.pods.len(),
            state.pods.len()
        )
    } else {
        why.join("; ")
    };
    Ok(r)
}

/// The model's configuration for a query handled by `node`'s kube-proxy: its own mode when it
/// reported one (`/proxyMode`).
pub(crate) fn node_config(
    base: &MatrixConfig,
    planes: &BTreeMap<String, NodeDataPlane>,
    node: &str,
) -> MatrixConfig {
    let mut config = base.clone();
    let mode = planes.get(node).and_then(NodeDataPlane::model_mode);
    if let Some(m) = mode
        && matches!(config.data_plane, DataPlane::KubeProxy(_) | DataPlane::Unknown)
    {
        config.data_plane = DataPlane::KubeProxy(Some(m));
    }
    config
}

/// A node's judgement, with the repair hypotheses checked against its tries when it failed.
pub(crate) fn node_judgement(
    env: &Env<'_>,
    snap: &ClusterState,
    config: &MatrixConfig,
    q: Query<'_>,
    status: Status,
    tries: &[Try],
) -> NodeJudgement {
    let mut hypotheses = Vec::new();
    if status == Status::Fail {
        let mut check = |kind: RepairKind, entry: Option<&str>, expected: Expected| {
            let consistent = judge(&expected, tries).0 == Status::Pass;
            hypotheses.push(Hypothesis {
                kind,
                entry: entry.map(str::to_string),
                expected,
                consistent,
            });
        };
        let plane = env.planes.get(q.node);
        // kube-proxy's own faults only where kube-proxy serves the node.
        if !plane.is_some_and(|p| p.replaces_kube_proxy) {
            check(
                RepairKind::HostnameOverride,
                None,
                crate::expect::for_route_as_unnamed_node(snap, config.clone(), q),
            );
            if let Some(v) = plane
                .and_then(|p| p.version.as_deref())
                .and_then(KubeVersion::parse_loose)
            {
                check(
                    RepairKind::UpgradeKubeProxy,
                    None,
                    crate::expect::for_route_at_version(snap, config.clone(), q, v),
                );
            }
        }
        // Each catalogue entry of the node's data plane, by what its divergence predicts.
        for id in plane.map(|p| p.divergences.as_slice()).unwrap_or_default() {
            let Some(e) = locality_model::dataplane::catalogue::entry(id) else {
                continue;
            };
            if let Some(expected) = crate::divergence::for_route_with(snap, config.clone(), q, e.effect) {
                check(RepairKind::DataPlane, Some(e.id), expected);
            }
        }
    }
    NodeJudgement {
        node: q.node.to_string(),
        status,
        hypotheses,
        lag_over_limit: None,
    }
}

/// A case with one client (a pod or a hostNetwork pod) dialling a cluster IP or a nodePort.
pub(crate) async fn one_client_case(
    env: &Env<'_>,
    c: &Case,
    roles: &Roles,
    snap: &ClusterState,
    config: &MatrixConfig,
    evidence: &mut Evidence,
) -> Result<CaseRecord, VerifyError> {
    let ns = env.ns;
    let group = c.setup.group;
    let (client, client_port, source, role) = match c.client {
        Client::Pod(role) => (fixture::client_name(role), HTTP_PORT, Source::Pod, role),
        Client::Host(role) => (
            fixture::host_client_name(role),
            HOST_HTTP_PORT,
            Source::Host,
            role,
        ),
        Client::EachNode => {
            let mut r = record(c, None);
            r.status = Status::Incomplete;
            r.why = "a client on each node is not one client".into();
            return Ok(r);
        }
    };
    let client_node = roles.node(role).unwrap_or_default().to_string();
    let mut r = record(c, Some(&client_node));
    // The node whose kube-proxy handles the connection first, and the source as it sees it.
    let (host, port, model_node, source, destination) = match c.dial {
        Dial::ClusterIp => (
            cluster_ip(snap, ns, group),
            SERVICE_PORT,
            client_node.clone(),
            source,
            Destination::ClusterIp,
        ),
        // In-cluster traffic to a load-balancer IP: the client's node handles it.
        Dial::LoadBalancer => (
            load_balancer_ip(snap, ns, group),
            SERVICE_PORT,
            client_node.clone(),
            source,
            Destination::LoadBalancer,
        ),
        Dial::NodePort(target) => {
            let node = roles.node(target).unwrap_or_default().to_string();
            let source = if node == client_node {
                source
            } else {
                Source::External
            };
            (
                crate::env::node_ip(snap, &node),
                node_port(snap, ns, group),
                node,
                source,
                Destination::NodePort,
            )
        }
    };
    let config = node_config(config, env.planes, &model_node);
    let q = Query {
        namespace: ns,
        service: group,
        port: fixture::service_port_name(&c.setup),
        node: &model_node,
        source,
        destination,
    };
    let (expected, reason) = for_route(snap, config.clone(), q);
    r.reason = reason;
    let declared = declared_expectation_in(c, roles, single_mode(&config));
    // A known divergence of the node's data plane (docs/dataplanes.md) that lists this case:
    // the model follows the data plane, the case its contract. Probed against the contract,
    // so the violation is confirmed and explained by the catalogue entry.
    let known_divergence = env.planes.get(&model_node).is_some_and(|p| {
        p.divergences
            .iter()
            .filter_map(|id| locality_model::dataplane::catalogue::entry(id))
            .any(|e| {
                snap.services
                    .iter()
                    .any(|s| s.meta.name == group && s.meta.namespace == ns && e.effect.applies_to(s))
            })
    });
    let divergence_note = (known_divergence && expected != declared).then(|| {
        format!(
            "; the model expects {} on this data plane, a known divergence from the contract",
            describe(&expected)
        )
    });
    let expected = if divergence_note.is_some() {
        declared.clone()
    } else {
        expected
    };
    if expected != declared {
        r.status = Status::Incomplete;
        r.why = format!(
            "the model expects {} but the catalogue declares {}: the state read back is not the case's setup",
            describe(&expected),
            describe(&declared)
        );
    } else if host.is_empty() || port == 0 {
        r.status = Status::Incomplete;
        r.why = format!("no address to dial for {:?} in the state read back", c.dial);
    } else {
        let probe = Probe {
            client,
            client_port,
            host,
            port,
            udp: c.setup.udp,
            request: "hostname",
        };
        // `G2`: kube-proxy delivers, and the endpoint refuses.
        let observed = match c.declared {
            Declared::RefusedByEndpoint(_) => Expected::Reject,
            _ => expected.clone(),
        };
        let prefix = format!("{group}-{}-lag", c.id.to_ascii_lowercase());
        // A case expecting no answer is probed only once the node's kube-proxy has
        // programmed the case's Service: before, a missing rule can pass for a drop.
        let negative = !matches!(observed, Expected::Deliver { .. });
        let early = if negative {
            crate::lag::gate(env, &model_node, group, group, &format!("{prefix}0"), evidence).await?
        } else {
            None
        };
        let (mut s, mut w, rounds, tries) = match &early {
            Some(u) => (Status::Fail, u.why.clone(), 0, Vec::new()),
            None => env.probe(&observed, &probe).await?,
        };
        r.rounds = rounds;
        r.tries = tries;
        // A failure without a wrong responder on a kube-proxy that synced later than the
        // limit after the change may predate the programming of the change: probed once
        // more; if that passes, the failure was the node's lag (over the limit).
        let mut late: Option<crate::record::LagOverLimit> = None;
        if early.is_none()
            && s == Status::Fail
            && !crate::judge::wrong_responder(&observed, &r.tries)
            && let Some(found) =
                crate::lag::synced_late(env, &model_node, group, group, &format!("{prefix}1"), evidence)
                    .await?
        {
            let (lag_ms, s2, w2) = match found {
                crate::lag::Late::Synced(lag_ms) => {
                    let again = env.round(&probe, crate::judge::tries_for(&observed)).await?;
                    let (s2, w2) = crate::judge::judge(&observed, &again);
                    r.tries.extend(again);
                    (lag_ms, s2, w2)
                }
                // Still not programmed: the failure is its lag whatever a probe says.
                crate::lag::Late::NotSynced(ms) => (ms, Status::Pass, String::new()),
            };
            if s2 == Status::Pass {
                late = Some(crate::record::LagOverLimit {
                    measured_ms: lag_ms,
                    limit_ms: env.opts.max_proxy_lag.as_millis() as u64,
                });
                w = format!(
                    "kube-proxy on {model_node} had not programmed the change {lag_ms} ms after it (limit {} ms): its lag, not judged; the failure before: {w}",
                    env.opts.max_proxy_lag.as_millis()
                );
                s = Status::Incomplete;
            } else {
                w = format!("{w}; reproduced after {model_node}'s kube-proxy synced: {w2}");
            }
        }
        // A violation on a kube-proxy that has not programmed the case's Service yet is its
        // lag, never judged (docs/design.md §5.3).
        // The node's kube-proxy lag, not judged: INCOMPLETE, the node named when over the limit.
        let lagged = |r: &mut CaseRecord, why: String, over: Option<crate::record::LagOverLimit>| {
            r.status = Status::Incomplete;
            r.why = why;
            if let Some(over) = over {
                r.nodes.push(NodeJudgement {
                    node: model_node.clone(),
                    status: Status::Incomplete,
                    hypotheses: Vec::new(),
                    lag_over_limit: Some(over),
                });
            }
        };
        if let Some(over) = late {
            lagged(&mut r, w, Some(over));
        } else if let Some(u) = early {
            lagged(&mut r, u.why, u.over);
        } else if s == Status::Fail
            && let Some(u) = crate::lag::gate(env, &model_node, group, group, &prefix, evidence).await?
        {
            lagged(&mut r, format!("{}; {w}", u.why), u.over);
        } else {
            r.nodes.push(node_judgement(env, snap, &config, q, s, &r.tries));
            r.status = s;
            r.why = w + divergence_note.as_deref().unwrap_or_default();
            // `X2s`: external traffic to a nodePort under `externalTrafficPolicy: Local` keeps
            // its source (`X3` dials the cluster IP, which the policy does not govern).
            if s == Status::Pass
                && c.setup.etp_local
                && matches!(c.dial, Dial::NodePort(_))
                && matches!(expected, Expected::Deliver { .. })
            {
                crate::source_ip::check_preserved(env, snap, &client_node, &probe, &mut r).await?;
            }
        }
        if let (Declared::RefusedByEndpoint(_), Expected::Deliver { pods }) = (c.declared, &expected) {
            r.why = format!(
                "{}; kube-proxy delivers to {} (the model), whose pod refuses: a misconfiguration of the Service (nothing listens on its targetPort), not a locality violation",
                r.why,
                pods.join(", ")
            );
        }
        r.expected = Some(observed);
        return Ok(r);
    }
    r.expected = Some(expected);
    Ok(r)
}

/// The nodePort allocated to the Service's first port, as read back (0: none).
pub(crate) fn node_port(state: &ClusterState, ns: &str, name: &str) -> u16 {
    state
        .services
        .iter()
        .find(|s| s.meta.namespace == ns && s.meta.name == name)
        .and_then(|s| s.ports.first())
        .map_or(0, |p| p.node_port)
}

/// The Service's first load-balancer ingress IP (ipMode VIP), as read back (`""`: none).
pub(crate) fn load_balancer_ip(state: &ClusterState, ns: &str, name: &str) -> String {
    state
        .services
        .iter()
        .find(|s| s.meta.namespace == ns && s.meta.name == name)
        .and_then(|s| {
            s.load_balancer_ingress
                .iter()
                .filter(|i| i.ip_mode.as_deref().is_none_or(|m| m == "VIP"))
                .find_map(|i| i.ip)
        })
        .map(|ip| ip.to_string())
        .unwrap_or_default()
}

pub(crate) fn cluster_ip(state: &ClusterState, ns: &str, name: &str) -> String {
    state
        .services
        .iter()
        .find(|s| s.meta.namespace == ns && s.meta.name == name)
        .and_then(|s| s.cluster_ips.first())
        .map(|ip| ip.to_string())
        .unwrap_or_default()
}

pub(crate) fn matrix_config(snap: &locality_live::LiveSnapshot, mode: Option<ProxyMode>) -> MatrixConfig {
    let kube = snap.server_version.map_or(KubeVersion::NEWEST, |v| {
        v.clamp(KubeVersion::OLDEST, KubeVersion::NEWEST)
    });
    let data_plane = match mode {
        Some(m) => DataPlane::KubeProxy(Some(m)),
        None => snap.data_plane.clone(),
    };
    MatrixConfig {
        kube_version: kube,
        kube_proxy_version: snap.kube_proxy_version.unwrap_or(kube),
        node_proxy_versions: Default::default(),
        data_plane,
        derive: false,
        feature_gates: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::case;
    use crate::roles::four_nodes;

    #[test]
    fn declared_outcomes_in_pods() {
        assert_eq!(
            declared_expectation(case("X1").unwrap(), &four_nodes(true)),
            Expected::Deliver {
                pods: vec!["x1-be-n1".into(), "x1-be-n2".into()]
            }
        );
        assert_eq!(
            declared_expectation(case("U2").unwrap(), &four_nodes(true)),
            Expected::Drop
        );
        assert_eq!(
            declared_expectation(case("H4").unwrap(), &four_nodes(true)),
            Expected::Deliver {
                pods: vec!["h4-be-n1".into()]
            }
        );
    }

    #[test]
    fn ipvs_refuses_a_local_cluster_ip_but_loses_external_traffic_without_a_local_endpoint() {
        let roles = four_nodes(true);
        assert_eq!(
            declared_expectation_in(case("C").unwrap(), &roles, Some(ProxyMode::Ipvs)),
            Expected::Reject
        );
        assert_eq!(
            declared_expectation_in(case("C").unwrap(), &roles, Some(ProxyMode::Iptables)),
            Expected::Drop
        );
        assert_eq!(
            declared_expectation_in(case("X2").unwrap(), &roles, Some(ProxyMode::Ipvs)),
            Expected::Drop
        );
    }

    #[test]
    fn a_host_client_to_a_local_load_balancer_ip_is_dropped_by_nftables_only() {
        let roles = four_nodes(true);
        let x4h = case("X4h").unwrap();
        assert_eq!(
            declared_expectation_in(x4h, &roles, Some(ProxyMode::Nftables)),
            Expected::Drop
        );
        for mode in [Some(ProxyMode::Iptables), Some(ProxyMode::Ipvs), None] {
            assert_eq!(
                declared_expectation_in(x4h, &roles, mode),
                Expected::Deliver {
                    pods: vec!["x4-be-n1".into()]
                },
                "{mode:?}"
            );
        }
        // A pod client is short-circuited by nftables too.
        assert!(matches!(
            declared_expectation_in(case("X4").unwrap(), &roles, Some(ProxyMode::Nftables)),
            Expected::Deliver { .. }
        ));
    }
}
