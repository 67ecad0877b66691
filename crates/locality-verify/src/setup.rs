//! Creating what the cases need: the clients (pods and hostNetwork pods on the role nodes)
//! and each setup group's Service and backends (a DaemonSet for `P`, clients on every sampled
//! node for `P` and `Pn`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::cases::{Case, Client, Dial, Role, Setup};
use crate::cluster::Cluster;
use crate::env::{Env, pod_condition, pods_path, wait_pods};
use crate::error::VerifyError;
use crate::fixture::{self, HOST_HTTP_PORT};
use crate::ledger::Evidence;
use crate::roles::Roles;

/// The clients of a run: pod clients by node, hostNetwork clients by role (or why not).
pub(crate) struct Clients {
    /// (role, client pod) on the pod network, created up front (`N0` probes from each).
    pub(crate) pods: Vec<(Role, String)>,
    /// hostNetwork client per role: its pod, or why its cases cannot run.
    pub(crate) hosts: BTreeMap<Role, Result<String, String>>,
}

/// Creates the clients: pods on N1, N2, N3 (and N1z when a case dials from it), Ready or the
/// run cannot go on; hostNetwork pods on the roles host cases need, whose failure (admission,
/// a port taken on the node) only makes those cases NOT_EXECUTED.
pub(crate) async fn create_clients(
    env: &Env<'_>,
    selected: &[&Case],
    evidence: &mut Evidence,
) -> Result<Clients, VerifyError> {
    let Env {
        opts,
        cluster,
        ns,
        roles,
        ..
    } = *env;
    let mut pods = Vec::new();
    for role in crate::plan::pod_client_roles(selected) {
        if let Some(node) = roles.node(role) {
            let m = fixture::client(ns, &opts.run_id, role, node);
            let m = evidence.manifest(&m)?;
            cluster.create(&pods_path(ns), &m).await?;
            pods.push((role, fixture::client_name(role)));
        }
    }
    let mut hosts = BTreeMap::new();
    let mut pending = Vec::new();
    for c in selected {
        let Client::Host(role) = c.client else { continue };
        let Some(node) = roles.node(role) else { continue };
        if hosts.contains_key(&role) {
            continue;
        }
        let m = fixture::host_client(ns, &opts.run_id, role, node);
        let m = evidence.manifest(&m)?;
        let name = fixture::host_client_name(role);
        match cluster.json(http::Method::POST, &pods_path(ns), Some(&m)).await? {
            Ok(_) => {
                hosts.insert(role, Ok(name.clone()));
                pending.push((role, name));
            }
            Err(f) => {
                hosts.insert(
                    role,
                    Err(format!(
                        "the hostNetwork client {name} was not admitted: {} {}",
                        f.code, f.message
                    )),
                );
            }
        }
    }
    let names: Vec<(String, bool)> = pods.iter().map(|(_, n)| (n.clone(), true)).collect();
    if wait_pods(cluster, ns, &names, opts.pod_ready_timeout)
        .await?
        .is_none()
    {
        return Err(VerifyError::Unsuitable(format!(
            "the client pods did not become Ready within {:?}",
            opts.pod_ready_timeout
        )));
    }
    let host_names: Vec<(String, bool)> = pending.iter().map(|(_, n)| (n.clone(), true)).collect();
    if !host_names.is_empty()
        && wait_pods(cluster, ns, &host_names, opts.pod_ready_timeout)
            .await?
            .is_none()
    {
        for (role, name) in &pending {
            let (running, ready, _) = pod_condition(cluster, ns, name).await?;
            if !(running && ready) {
                hosts.insert(
                    *role,
                    Err(format!(
                        "the hostNetwork client {name} did not become Ready within {:?} (is port {HOST_HTTP_PORT} free on its node?)",
                        opts.pod_ready_timeout
                    )),
                );
            }
        }
    }
    Ok(Clients { pods, hosts })
}

/// Why `case` cannot run with these roles and clients, if it cannot.
pub(crate) fn not_executable(case: &Case, roles: &Roles, clients: &Clients) -> Option<String> {
    let dialled = match case.dial {
        Dial::NodePort(r) => Some(r),
        Dial::ClusterIp | Dial::LoadBalancer => None,
    };
    if let Some(missing) = case
        .client
        .role()
        .into_iter()
        .chain(dialled)
        .find(|r| roles.node(*r).is_none())
    {
        return Some(format!(
            "no node for role {} (see 01-nodes.yaml)",
            missing.as_str()
        ));
    }
    if let Client::Host(role) = case.client {
        match clients.hosts.get(&role) {
            Some(Ok(_)) => {}
            Some(Err(why)) => return Some(why.clone()),
            None => return Some(format!("no hostNetwork client on {}", role.as_str())),
        }
    }
    None
}

/// Waits until each of `nodes` runs a Ready pod of the DaemonSet `group`; node → pod.
pub(crate) async fn wait_daemon_pods(
    cluster: &Cluster,
    ns: &str,
    group: &str,
    nodes: &[String],
    timeout: Duration,
) -> Result<Option<BTreeMap<String, String>>, VerifyError> {
    cluster
        .wait_for(timeout, Duration::from_millis(200), || async {
            let list = cluster
                .get(&format!("{}?labelSelector=app%3D{group}", pods_path(ns)))
                .await?
                .unwrap_or(Value::Null);
            let mut by_node = BTreeMap::new();
            for p in list["items"].as_array().into_iter().flatten() {
                let ready = p["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                if p["status"]["phase"] == "Running" && ready && p["metadata"]["deletionTimestamp"].is_null()
                {
                    by_node.insert(
                        p["spec"]["nodeName"].as_str().unwrap_or_default().to_string(),
                        p["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                    );
                }
            }
            Ok(nodes.iter().all(|n| by_node.contains_key(n)).then_some(by_node))
        })
        .await
}

/// A setup group's backends and Service, Ready (and deleted again for `F`); the pod clients
/// `P` adds on sampled nodes without one. `Ok(Err(why))`: the group's cases are INCOMPLETE.
pub(crate) async fn create_group(
    env: &Env<'_>,
    setup: &Setup,
    clients: &Clients,
    evidence: &mut Evidence,
) -> Result<Result<GroupState, String>, VerifyError> {
    let Env {
        opts,
        cluster,
        ns,
        roles,
        sampled,
        ..
    } = *env;
    let group = setup.group;
    let mut pods = Vec::new();
    for b in crate::plan::backends(ns, &opts.run_id, setup, roles) {
        let m = evidence.manifest(&b.manifest)?;
        cluster.create(&pods_path(ns), &m).await?;
        pods.push((b.name, b.ready));
    }
    // P, Pn: a client on every sampled node (the role clients where they exist); Pn skips the
    // nodes that carry one of its backends.
    let mut node_clients = Vec::new();
    if setup.daemonset || setup.each_node {
        if setup.daemonset {
            let m = fixture::daemonset(ns, &opts.run_id, setup, env.sampled);
            let m = evidence.manifest(&m)?;
            cluster
                .create(&format!("/apis/apps/v1/namespaces/{ns}/daemonsets"), &m)
                .await?;
        }
        let mut extra = Vec::new();
        for (node, client, manifest) in
            crate::plan::sampled_clients(ns, &opts.run_id, setup, roles, sampled, &clients.pods)
        {
            if let Some(m) = manifest {
                let m = evidence.manifest(&m)?;
                cluster.create(&pods_path(ns), &m).await?;
                extra.push((client.clone(), true));
            }
            node_clients.push((node, client));
        }
        if wait_pods(cluster, ns, &extra, opts.pod_ready_timeout)
            .await?
            .is_none()
        {
            return Ok(Err(format!(
                "the clients on the sampled nodes did not become Ready within {:?}",
                opts.pod_ready_timeout
            )));
        }
        if setup.daemonset
            && wait_daemon_pods(cluster, ns, group, sampled, opts.pod_ready_timeout)
                .await?
                .is_none()
        {
            return Ok(Err(format!(
                "the DaemonSet {group} did not run a Ready pod on every sampled node ({}) within {:?}",
                sampled.join(", "),
                opts.pod_ready_timeout
            )));
        }
    }
    if setup.service {
        let m = fixture::service(ns, &opts.run_id, setup);
        let m = evidence.manifest(&m)?;
        cluster
            .create(&format!("/api/v1/namespaces/{ns}/services"), &m)
            .await?;
    }
    let Some(ips) = wait_pods(cluster, ns, &pods, opts.pod_ready_timeout).await? else {
        return Ok(Err(format!(
            "the backends did not become Ready within {:?}",
            opts.pod_ready_timeout
        )));
    };
    if setup.load_balancer && wait_ingress(env, group).await?.is_none() {
        return Ok(Err(format!(
            "the Service {group} of type LoadBalancer got no load-balancer ingress IP within {:?} (does the cluster implement LoadBalancer Services?)",
            opts.pod_ready_timeout
        )));
    }
    let mut terminating = Vec::new();
    if setup.terminating {
        match start_terminating(env, group, setup.daemonset).await? {
            Ok(names) => terminating = names,
            Err(why) => return Ok(Err(why)),
        }
    }
    if setup.delete_backends {
        for (name, _) in &pods {
            cluster.delete(&format!("{}/{name}", pods_path(ns))).await?;
        }
        let gone = cluster
            .wait_for(opts.pod_ready_timeout, Duration::from_millis(200), || async {
                for (name, _) in &pods {
                    if cluster.get(&format!("{}/{name}", pods_path(ns))).await?.is_some() {
                        return Ok(None);
                    }
                }
                Ok(Some(()))
            })
            .await?;
        if gone.is_none() {
            return Err(VerifyError::Unsuitable("deleted backends did not go away".into()));
        }
    }
    Ok(Ok(GroupState {
        pods,
        ips,
        node_clients,
        terminating,
    }))
}

/// `Pt`, `Xt`: deletes the group's pods (`Pt`: orphaned from their DaemonSet first), so each
/// serves its shutdown delay; waits until the group's slices show every one
/// serving-terminating.
async fn start_terminating(
    env: &Env<'_>,
    group: &str,
    daemonset: bool,
) -> Result<Result<Vec<String>, String>, VerifyError> {
    let Env {
        opts, cluster, ns, ..
    } = *env;
    if daemonset {
        cluster
            .delete(&format!(
                "/apis/apps/v1/namespaces/{ns}/daemonsets/{group}?propagationPolicy=Orphan"
            ))
            .await?;
    }
    let names = group_pods(cluster, ns, group).await?;
    for name in &names {
        cluster.delete(&format!("{}/{name}", pods_path(ns))).await?;
    }
    let all = cluster
        .wait_for(opts.pod_ready_timeout, Duration::from_millis(200), || async {
            let list = crate::env::slices(cluster, ns, group).await?;
            Ok(all_serving_terminating(&list, names.len()).then_some(()))
        })
        .await?;
    Ok(match all {
        Some(()) => Ok(names),
        None => Err(format!(
            "the {} deleted backends were not all serving-terminating within {:?}",
            names.len(),
            opts.pod_ready_timeout
        )),
    })
}

/// Waits until the Service `group` has a load-balancer ingress IP (`X4`); the IP.
async fn wait_ingress(env: &Env<'_>, group: &str) -> Result<Option<String>, VerifyError> {
    let Env {
        opts, cluster, ns, ..
    } = *env;
    let path = format!("/api/v1/namespaces/{ns}/services/{group}");
    cluster
        .wait_for(opts.pod_ready_timeout, Duration::from_millis(200), || async {
            let svc = cluster.get(&path).await?.unwrap_or(Value::Null);
            Ok(svc["status"]["loadBalancer"]["ingress"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|i| i["ip"].as_str().map(str::to_string)))
        })
        .await
}

/// The names of the group's pods (label `app=<group>`).
pub(crate) async fn group_pods(cluster: &Cluster, ns: &str, group: &str) -> Result<Vec<String>, VerifyError> {
    let pods = cluster
        .get(&format!("{}?labelSelector=app%3D{group}", pods_path(ns)))
        .await?
        .unwrap_or(Value::Null);
    Ok(pods["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .collect())
}

/// Whether the slice list shows `n` endpoints (`n` > 0), each serving and terminating, none
/// ready.
pub(crate) fn all_serving_terminating(list: &Value, n: usize) -> bool {
    let endpoints: Vec<&Value> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["endpoints"].as_array().into_iter().flatten())
        .collect();
    n > 0
        && endpoints.len() == n
        && endpoints.iter().all(|e| {
            let c = &e["conditions"];
            c["serving"] == Value::Bool(true)
                && c["terminating"] == Value::Bool(true)
                && c["ready"] != Value::Bool(true)
        })
}

/// What a setup group created.
pub(crate) struct GroupState {
    /// Backend pods (name, meant to be Ready).
    pub(crate) pods: Vec<(String, bool)>,
    /// Backend pod → IP.
    pub(crate) ips: BTreeMap<String, String>,
    /// `P`: (sampled node, its client pod).
    pub(crate) node_clients: Vec<(String, String)>,
    /// `Pt`, `Xt`: the backend pods deleted, serving their shutdown delay.
    pub(crate) terminating: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::case;
    use crate::roles::four_nodes;

    #[test]
    fn cases_that_cannot_run_say_why() {
        let mut hosts = BTreeMap::new();
        hosts.insert(Role::N1, Ok("host-client-n1".to_string()));
        hosts.insert(
            Role::N3,
            Err(
                "the hostNetwork client host-client-n3 was not admitted: 403 violates PodSecurity"
                    .to_string(),
            ),
        );
        let clients = Clients {
            pods: vec![(Role::N1, "client-n1".into())],
            hosts,
        };
        let c = |id: &str| case(id).unwrap();
        assert_eq!(not_executable(c("Bh"), &four_nodes(true), &clients), None);
        assert!(
            not_executable(c("Ch"), &four_nodes(true), &clients)
                .unwrap()
                .contains("PodSecurity")
        );
        assert!(
            not_executable(c("Z1"), &four_nodes(false), &clients)
                .unwrap()
                .contains("no node for role N1z")
        );
        assert_eq!(not_executable(c("Z2"), &four_nodes(false), &clients), None);
        assert_eq!(not_executable(c("X1"), &four_nodes(false), &clients), None);
    }
}
