//! What every step of a run reads, and the API waits every step uses (pods Ready,
//! EndpointSlices settled).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::Cluster;
use crate::error::VerifyError;
use crate::options::VerifyOptions;
use crate::record::NodeDataPlane;
use crate::roles::Roles;

pub(crate) use crate::fixture::pods_path;

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

/// Pod name → container restarts, for every pod of the run's namespace.
pub(crate) async fn pod_restarts(
    cluster: &Cluster,
    ns: &str,
) -> Result<std::collections::BTreeMap<String, u64>, VerifyError> {
    Ok(cluster
        .get(&pods_path(ns))
        .await?
        .map(|l| crate::restarts::restart_counts(&l))
        .unwrap_or_default())
}

pub(crate) async fn slices(cluster: &Cluster, ns: &str, service: &str) -> Result<Value, VerifyError> {
    Ok(cluster
        .get(&slices_path(ns, service))
        .await?
        .unwrap_or(Value::Null))
}

/// The collection of `service`'s EndpointSlices in `ns`.
pub(crate) fn slices_path(ns: &str, service: &str) -> String {
    format!(
        "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D{service}"
    )
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
        cluster.sleep(settle).await;
        let list = slices(cluster, ns, service).await?;
        let now = slice_versions(&list);
        if now == last {
            return Ok(list);
        }
        last = now;
    }
    slices(cluster, ns, service).await
}

/// `s` percent-encoded for a query value (RFC 3986 unreserved characters kept).
fn query_value(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every item of the list at `path` (a query string already there or not), page by page.
pub(crate) async fn list_all(cluster: &Cluster, path: &str) -> Result<Vec<Value>, String> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut items = Vec::new();
    let mut token = String::new();
    loop {
        let page = format!("{path}{sep}limit=500&continue={}", query_value(&token));
        let v = match cluster.json(http::Method::GET, &page, None).await {
            Ok(Ok(v)) => v,
            Ok(Err(f)) => return Err(format!("GET {path}: {} {}", f.code, f.message)),
            Err(e) => return Err(format!("GET {path}: {e}")),
        };
        items.extend(v["items"].as_array().into_iter().flatten().cloned());
        match v["metadata"]["continue"].as_str() {
            Some(t) if !t.is_empty() => token = t.to_string(),
            _ => return Ok(items),
        }
    }
}

/// The kube-proxy pods of `kube-system`, read (never written) before nodes are sampled
/// (`roles::kube_proxies` groups them): the pods of every DaemonSet there whose pod template
/// has a container named `kube-proxy` or the label `k8s-app: kube-proxy` (listed by its
/// `matchLabels`), and every pod labelled `k8s-app=kube-proxy` (static pods). Why not, when
/// they cannot be read (RBAC, the API): sampling then covers the zones only.
pub(crate) async fn kube_proxy_pods(cluster: &Cluster) -> Result<Vec<Value>, String> {
    const NS: &str = "/apis/apps/v1/namespaces/kube-system/daemonsets";
    const PODS: &str = "/api/v1/namespaces/kube-system/pods";
    let mut selectors = vec!["k8s-app=kube-proxy".to_string()];
    for ds in list_all(cluster, NS).await? {
        let template = &ds["spec"]["template"];
        let kube_proxy = template["metadata"]["labels"]["k8s-app"] == "kube-proxy"
            || template["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["name"] == "kube-proxy");
        let Some(labels) = ds["spec"]["selector"]["matchLabels"].as_object() else {
            continue;
        };
        if !kube_proxy || labels.is_empty() {
            continue;
        }
        let selector: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        selectors.push(selector.join(","));
    }
    selectors.sort();
    selectors.dedup();
    let mut pods: BTreeMap<String, Value> = BTreeMap::new();
    for selector in selectors {
        let path = format!("{PODS}?labelSelector={}", query_value(&selector));
        for p in list_all(cluster, &path).await? {
            let uid = p["metadata"]["uid"].as_str().unwrap_or_default().to_string();
            pods.insert(uid, p);
        }
    }
    Ok(pods.into_values().collect())
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
    /// Each node's lag reader, where one runs (`lag::start_readers`).
    pub(crate) lag_readers: &'a BTreeMap<String, crate::logs::ProbeLoop>,
}

/// A node's first IPv4 InternalIP, as read back.
pub(crate) fn node_ip(state: &locality_model::objects::ClusterState, node: &str) -> String {
    state
        .nodes
        .iter()
        .find(|n| n.meta.name == node)
        .and_then(|n| {
            n.internal_ips.iter().find(|ip| {
                locality_model::objects::IpFamily::of(ip) == locality_model::objects::IpFamily::IPv4
            })
        })
        .map(ToString::to_string)
        .unwrap_or_default()
}
