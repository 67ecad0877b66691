//! `M` (docs/design.md §5.4): kube-proxy's own account of a Local policy without a local endpoint,
//! `kubeproxy_sync_proxy_rules_no_local_endpoints_total`, read on `N3` through one-shot
//! hostNetwork curl pods whose output is read through `pods/log` (docs/design.md §5.2; kube-proxy's
//! metrics listen on `127.0.0.1:10249` by default, reachable only from the node itself).
//!
//! Three readings, each one curl pod per read (re-read until the expected value or
//! `--proxy-lag-timeout`, kube-proxy programs changes late, docs/design.md §5.3):
//! 1. before the case's Service exists: the baseline;
//! 2. with the `internalTrafficPolicy: Local` Service and Ready backends on `N1` and `N2`
//!    only: baseline + 1 per service port and IP family (iptables, nftables: upstream counts
//!    service ports) or + 1 per IP family (ipvs: it counts Services), summed over `ip_family`;
//! 3. once a Ready backend was added on `N3`: the baseline again.
//!
//! A node whose data plane exposes no kube-proxy metrics (a replacement, or the port closed)
//! makes `M` NOT_EXECUTED with the finding "no kube-proxy metrics", not a failure. A value
//! that stays wrong past the lag timeout and on one automatic re-read is a FAIL.

use locality_model::proxy::{Destination, ProxyMode, Source};

use crate::cases::{Case, Role};
use crate::env::{Env, pods_path, settle, wait_pods};
use crate::error::VerifyError;
use crate::expect::{Expected, Query, for_route};
use crate::fixture;
use crate::judge::Status;
use crate::lag::Unsynced;
use crate::ledger::Evidence;
use crate::probing::matrix_config;
use crate::record::{CaseRecord, describe, record};
use crate::scrape::Reader;
pub use crate::scrape::{NO_LOCAL_ENDPOINTS, NO_METRICS, no_local_internal};

/// In a failed `M`'s `why` when N3's kube-proxy still counts the Service with a Ready endpoint
/// on N3: the signature of a node-name mismatch (`--hostname-override`), as `B1`'s drop.
pub const LOCAL_NOT_SEEN: &str = "N3's kube-proxy does not see its own node's endpoint as local";

/// The increase `M` expects with its Service and no endpoint on `N3`.
pub fn expected_increase(mode: Option<ProxyMode>, ports: usize, families: usize) -> f64 {
    let per_family = if mode == Some(ProxyMode::Ipvs) { 1 } else { ports };
    (per_family * families.max(1)) as f64
}

/// What the case's Service contributes to the gauge, once N3's kube-proxy has synced past the
/// case's change (a late kube-proxy is lag, never a wrong count): its drop once the Service is
/// deleted and N3 has synced after the deletion. `Err`: why that could not be told.
async fn share_of_service(
    env: &Env<'_>,
    reader: &mut Reader<'_, '_>,
    case: &str,
    group: &str,
    lag_prefix: &str,
    evidence: &mut Evidence,
) -> Result<Result<f64, Unsynced>, VerifyError> {
    let node = reader.node.clone();
    if let Some(u) = crate::lag::gate(env, &node, group, group, lag_prefix, evidence).await? {
        return Ok(Err(u));
    }
    let unknown = |why: String| Unsynced { why, over: None };
    let mut texts = Vec::new();
    let before = match reader.until(evidence, &mut texts, |_| true).await? {
        Ok(v) => v,
        Err(why) => return Ok(Err(unknown(why))),
    };
    let Some(since) = reader.read_at else {
        return Ok(Err(unknown(
            "the metrics read has no time (the curl pod's end)".into(),
        )));
    };
    let Env { cluster, ns, .. } = *env;
    cluster
        .delete(&format!("/api/v1/namespaces/{ns}/services/{group}"))
        .await?;
    if let Some(u) = crate::lag::gate_since(env, &node, since, "m-del", evidence).await? {
        return Ok(Err(unknown(format!("after deleting the Service: {}", u.why))));
    }
    let after = match reader.until(evidence, &mut texts, |_| true).await? {
        Ok(v) => v,
        Err(why) => return Ok(Err(unknown(why))),
    };
    if let Some(t) = texts.last() {
        evidence.case_file(case, "metrics-4-service-deleted.txt", t)?;
    }
    Ok(Ok(before - after))
}

fn not_executed(mut r: CaseRecord, why: String) -> CaseRecord {
    r.status = Status::NotExecuted;
    r.why = if why.starts_with(NO_METRICS) {
        why
    } else {
        format!("{NO_METRICS} on N3: {why}")
    };
    r
}

/// Runs `M` with its own Service and backends (setup group `m`).
pub(crate) async fn metrics_case(
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
    let setup = c.setup;
    let group = setup.group;
    let Some(n3) = roles.node(Role::N3).map(str::to_string) else {
        let mut r = record(c, None);
        r.why = "no node for role N3 (see 01-nodes.yaml)".into();
        return Ok(r);
    };
    let mut r = record(c, Some(&n3));
    r.reason = "metrics".into();
    let mut reader = Reader {
        env,
        node: n3.clone(),
        prefix: "m-metrics".into(),
        seq: 0,
        read_at: None,
    };
    // The mode decides what is counted; kube-proxy itself says which (`/proxyMode`).
    let mode_text = match reader.read("/proxyMode", evidence).await? {
        Ok(t) => t,
        Err(why) => return Ok(not_executed(r, why)),
    };
    evidence.case_file(c.id, "proxyMode.txt", &mode_text)?;
    let mode = crate::survey::model_mode(&mode_text).or(opts.proxy_mode);
    let mut texts = Vec::new();
    let baseline = match reader.until(evidence, &mut texts, |_| true).await? {
        Ok(v) => v,
        Err(why) => return Ok(not_executed(r, why)),
    };
    if let Some(t) = texts.last() {
        evidence.case_file(c.id, "metrics-1-before.txt", t)?;
    }

    // The Service with backends on N1 and N2 only.
    let mut pods = Vec::new();
    for role in setup.backends {
        // A backend's role without a node (the reduced form): left out.
        let Some(node) = roles.node(*role) else { continue };
        let m = fixture::backend(ns, &opts.run_id, &setup, *role, node, true);
        let m = evidence.manifest(&m)?;
        cluster.create(&pods_path(ns), &m).await?;
        pods.push((fixture::backend_name(group, *role, true), true));
    }
    let m = fixture::service(ns, &opts.run_id, &setup);
    let m = evidence.manifest(&m)?;
    cluster
        .create(&format!("/api/v1/namespaces/{ns}/services"), &m)
        .await?;
    if wait_pods(cluster, ns, &pods, opts.pod_ready_timeout)
        .await?
        .is_none()
    {
        r.status = Status::Incomplete;
        r.why = format!(
            "the backends did not become Ready within {:?}",
            opts.pod_ready_timeout
        );
        return Ok(r);
    }
    let slices_now = settle(cluster, ns, group, opts.settle).await?;
    let mut live = opts.live.clone();
    live.namespace = Some(ns.to_string());
    live.all_namespaces = false;
    let snap = locality_live::snapshot(&live, None).await?;
    let config = matrix_config(&snap, mode.or(opts.proxy_mode));
    let (expected, _) = for_route(
        &snap.state,
        config,
        Query {
            namespace: ns,
            service: group,
            port: fixture::service_port_name(&setup),
            node: &n3,
            source: Source::Pod,
            destination: Destination::ClusterIp,
        },
    );
    let svc = snap
        .state
        .services
        .iter()
        .find(|s| s.meta.namespace == ns && s.meta.name == group);
    let ports = svc.map_or(1, |s| s.ports.len().max(1));
    let families = svc.map_or(1, |s| s.cluster_ips.len().max(1));
    let increase = expected_increase(mode, ports, families);
    let want = baseline + increase;
    r.expected = Some(expected.clone());
    evidence.case_file(
        c.id,
        "endpointslices-without-n3.yaml",
        &crate::ledger::yaml(&slices_now),
    )?;
    if !matches!(expected, Expected::Drop | Expected::Reject) {
        r.status = Status::Incomplete;
        r.why = format!(
            "the model expects {} from N3 but the case needs N3 without a local endpoint: the state read back is not the case's setup",
            describe(&expected)
        );
        return Ok(r);
    }
    let mut texts = Vec::new();
    let counted = match reader.until(evidence, &mut texts, |v| v == want).await? {
        Ok(v) => v,
        Err(why) => return Ok(not_executed(r, why)),
    };
    if let Some(t) = texts.last() {
        evidence.case_file(c.id, "metrics-2-no-local-endpoint.txt", t)?;
    }
    let mode_name = mode.map_or("unknown mode", ProxyMode::as_str);
    if counted != want {
        // A kube-proxy that has not synced since the change is late, not wrong.
        // The gauge counts every Service of the node: what this one contributes is told by
        // deleting it (other Services may have moved the gauge since the baseline).
        let share = match share_of_service(env, &mut reader, c.id, group, "m-lag", evidence).await? {
            Ok(v) => v,
            Err(u) => {
                r.status = Status::Incomplete;
                r.why = u.why;
                r.lag_over_limit = u.over;
                return Ok(r);
            }
        };
        let seen = format!(
            "{NO_LOCAL_ENDPOINTS}{{traffic_policy=\"internal\"}} on N3 ({n3}, {mode_name}) was {baseline} before the Service and {counted} with it and no endpoint on N3 after {:?}; deleting the Service lowered it by {share}; expected +{increase}",
            opts.proxy_lag_timeout
        );
        if share == 0.0 {
            r.status = Status::Fail;
            r.why = format!("{seen}: kube-proxy does not account for the traffic it drops");
        } else {
            r.status = Status::Incomplete;
            r.why = format!(
                "{seen}: the Service was counted, but the gauge also moved with other Services' changes; rerun"
            );
        }
        return Ok(r);
    }

    // A Ready backend on N3: no longer counted.
    let m = fixture::backend(ns, &opts.run_id, &setup, Role::N3, &n3, true);
    let m = evidence.manifest(&m)?;
    cluster.create(&pods_path(ns), &m).await?;
    let n3_pod = vec![(fixture::backend_name(group, Role::N3, true), true)];
    if wait_pods(cluster, ns, &n3_pod, opts.pod_ready_timeout)
        .await?
        .is_none()
    {
        r.status = Status::Incomplete;
        r.why = format!(
            "the backend on N3 did not become Ready within {:?}",
            opts.pod_ready_timeout
        );
        return Ok(r);
    }
    let slices_after = settle(cluster, ns, group, opts.settle).await?;
    evidence.case_file(
        c.id,
        "endpointslices-with-n3.yaml",
        &crate::ledger::yaml(&slices_after),
    )?;
    let mut texts = Vec::new();
    let local = match reader.until(evidence, &mut texts, |v| v == baseline).await? {
        Ok(v) => v,
        Err(why) => return Ok(not_executed(r, why)),
    };
    if let Some(t) = texts.last() {
        evidence.case_file(c.id, "metrics-3-local-endpoint.txt", t)?;
    }
    if local != baseline {
        let share = match share_of_service(env, &mut reader, c.id, group, "m-lag2", evidence).await? {
            Ok(v) => v,
            Err(u) => {
                r.status = Status::Incomplete;
                r.why = u.why;
                r.lag_over_limit = u.over;
                return Ok(r);
            }
        };
        let seen = format!(
            "{NO_LOCAL_ENDPOINTS}{{traffic_policy=\"internal\"}} on N3 ({n3}, {mode_name}): {baseline} before, {counted} without a local endpoint, still {local} with a Ready endpoint on N3 after {:?}; deleting the Service lowered it by {share}; expected {baseline}",
            opts.proxy_lag_timeout
        );
        if share == 0.0 {
            r.status = Status::Incomplete;
            r.why = format!(
                "{seen}: the Service is no longer counted, the gauge moved with other Services' changes; rerun"
            );
            return Ok(r);
        }
        r.status = Status::Fail;
        r.why =
            format!("{seen}: {LOCAL_NOT_SEEN} (does its node name match the Node's? --hostname-override)");
        // A kube-proxy that does not know its node counts a Service with a Ready endpoint on
        // that node as without local endpoints: exactly this reading.
        r.nodes.push(crate::record::NodeJudgement {
            node: n3.clone(),
            status: Status::Fail,
            hypotheses: vec![crate::record::Hypothesis {
                kind: crate::decision::RepairKind::HostnameOverride,
                entry: None,
                expected: Expected::Unknown {
                    why: LOCAL_NOT_SEEN.into(),
                },
                consistent: true,
            }],
            lag_over_limit: None,
        });
        return Ok(r);
    }
    r.status = Status::Pass;
    r.why = format!(
        "{NO_LOCAL_ENDPOINTS}{{traffic_policy=\"internal\"}} on N3 ({n3}, {mode_name}): {baseline} before the Service, {counted} with it and no endpoint on N3 (+{increase}), {local} once N3 had a Ready endpoint ({} reads)",
        reader.seq - 1
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_internal_series_are_summed_over_families() {
        let text = "# HELP x\nkubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7e+09\n\
            kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv4\",traffic_policy=\"external\"} 5\n\
            kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv4\",traffic_policy=\"internal\"} 2\n\
            kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv6\",traffic_policy=\"internal\"} 1\n";
        assert_eq!(no_local_internal(text), Some(3.0));
        assert_eq!(
            no_local_internal("kubeproxy_sync_proxy_rules_last_timestamp_seconds 0\n"),
            Some(0.0)
        );
        assert_eq!(no_local_internal("404 page not found"), None);
        assert_eq!(expected_increase(Some(ProxyMode::Iptables), 2, 2), 4.0);
        assert_eq!(expected_increase(Some(ProxyMode::Ipvs), 2, 2), 2.0);
        assert_eq!(expected_increase(None, 1, 1), 1.0);
    }
}
