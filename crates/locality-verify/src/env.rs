//! What every step of a run reads, and the API waits every step uses (pods Ready,
//! EndpointSlices settled).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::Cluster;
use crate::diagnose::NodeDataPlane;
use crate::error::VerifyError;
use crate::options::VerifyOptions;
use crate::roles::Roles;

pub(crate) fn pods_path(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/pods")
}

pub(crate) async fn pod_condition(
    cluster: &Cluster,
    ns: &str,
    name: &str,
) -> Result<(bool, bool, Option<String>), VerifyError> {
    let Some(p) = cluster.get(&format!("{}/{name}", pods_path(ns))).await? else {
        return Ok((false, false, None));
    };
    let running = p["status"]["phase"] == "Running";
    let ready = p["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    Ok((running, ready, p["status"]["podIP"].as_str().map(str::to_string)))
}

pub(crate) async fn wait_pods(
    cluster: &Cluster,
    ns: &str,
    names: &[(String, bool)],
    timeout: Duration,
) -> Result<Option<BTreeMap<String, String>>, VerifyError> {
    cluster
        .wait_for(timeout, Duration::from_millis(200), || async {
            let mut ips = BTreeMap::new();
            for (name, want_ready) in names {
                let (running, ready, ip) = pod_condition(cluster, ns, name).await?;
                if !running || (*want_ready && !ready) {
                    return Ok(None);
                }
                ips.insert(name.clone(), ip.unwrap_or_default());
            }
            Ok(Some(ips))
        })
        .await
}

pub(crate) async fn slices(cluster: &Cluster, ns: &str, service: &str) -> Result<Value, VerifyError> {
    Ok(cluster
        .get(&format!(
            "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D{service}"
        ))
        .await?
        .unwrap_or(Value::Null))
}

/// (name, resourceVersion) of each slice: unchanged means settled.
pub(crate) fn slice_versions(list: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                s["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

pub(crate) async fn settle(
    cluster: &Cluster,
    ns: &str,
    service: &str,
    settle: Duration,
) -> Result<Value, VerifyError> {
    let mut last = slice_versions(&slices(cluster, ns, service).await?);
    for _ in 0..30 {
        tokio::time::sleep(settle).await;
        let list = slices(cluster, ns, service).await?;
        let now = slice_versions(&list);
        if now == last {
            return Ok(list);
        }
        last = now;
    }
    slices(cluster, ns, service).await
}

/// What every step of a run reads.
pub(crate) struct Env<'a> {
    pub(crate) opts: &'a VerifyOptions,
    pub(crate) cluster: &'a Cluster,
    pub(crate) ns: &'a str,
    pub(crate) roles: &'a Roles,
    /// The nodes `P` and `Pn` probe from.
    pub(crate) sampled: &'a [String],
    /// What each node's kube-proxy reported (mode, version).
    pub(crate) planes: &'a BTreeMap<String, NodeDataPlane>,
}
