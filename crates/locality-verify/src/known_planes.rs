//! Which known data plane (Cilium, Calico eBPF, kube-router, OVN-Kubernetes) serves each
//! node, read from the objects that install it (`locality_model::dataplane::detect`, the same
//! detection `audit` and the live snapshot use): the DaemonSets of `kube-system`,
//! `calico-system` and `ovn-kubernetes`, Cilium's `cilium-config`, Calico's `default`
//! FelixConfiguration, and which nodes run the detected DaemonSet's pods. A node served by
//! one gets its detection and the catalogue entries that apply to it (docs/dataplanes.md).

use std::collections::BTreeMap;

use locality_model::dataplane::detect::{ContainerFacts, DaemonSetFacts, Facts, detect};
use locality_model::dataplane::{Detection, Plane};
use serde_json::Value;

use crate::cluster::Cluster;

/// Namespaces the data planes install into.
const NAMESPACES: &[&str] = &["kube-system", "calico-system", "ovn-kubernetes"];

/// A DaemonSet as detection reads it (pure).
pub fn daemonset_facts(ds: &Value) -> DaemonSetFacts {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    DaemonSetFacts {
        namespace: ds["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        name: ds["metadata"]["name"].as_str().unwrap_or_default().to_string(),
        containers: ds["spec"]["template"]["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| ContainerFacts {
                name: c["name"].as_str().unwrap_or_default().to_string(),
                image: c["image"].as_str().unwrap_or_default().to_string(),
                env: c["env"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| Some((e["name"].as_str()?.to_string(), e["value"].as_str()?.to_string())))
                    .collect(),
                args: strings(&c["command"])
                    .into_iter()
                    .chain(strings(&c["args"]))
                    .collect(),
            })
            .collect(),
    }
}

/// The cluster's detection (the first data plane found) and each node whose pods a known
/// data plane's DaemonSet runs, with that plane's detection: `(node → detection)`, empty when
/// every node runs kube-proxy or nothing is known. What cannot be read is recorded in the
/// detection's `looked_at`.
pub(crate) async fn read(cluster: &Cluster) -> (Detection, BTreeMap<String, Detection>) {
    let mut facts = Facts::default();
    let mut raw: Vec<Value> = Vec::new();
    for ns in NAMESPACES {
        match crate::env::list_all(cluster, &format!("/apis/apps/v1/namespaces/{ns}/daemonsets")).await {
            Ok(items) => raw.extend(items),
            Err(why) => facts.looked_at.push(format!("DaemonSets in {ns}: {why}")),
        }
    }
    facts.daemonsets = raw.iter().map(daemonset_facts).collect();
    if let Some(ds) = facts.daemonsets.iter().find(|d| d.name == "cilium") {
        let path = format!("/api/v1/namespaces/{}/configmaps/cilium-config", ds.namespace);
        match cluster.get(&path).await {
            Ok(Some(cm)) => {
                facts.cilium_config = cm["data"].as_object().map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                });
            }
            Ok(None) => facts
                .looked_at
                .push(format!("ConfigMap {}/cilium-config: absent", ds.namespace)),
            Err(e) => facts
                .looked_at
                .push(format!("ConfigMap {}/cilium-config: {e}", ds.namespace)),
        }
    }
    if facts.daemonsets.iter().any(|d| d.name == "calico-node") {
        const FELIX: &str = "/apis/crd.projectcalico.org/v1/felixconfigurations/default";
        match cluster.get(FELIX).await {
            Ok(Some(fc)) => facts.felix_bpf_enabled = fc["spec"]["bpfEnabled"].as_bool(),
            Ok(None) => facts.looked_at.push("FelixConfiguration default: absent".into()),
            Err(e) => facts.looked_at.push(format!("FelixConfiguration default: {e}")),
        }
    }
    // One detection per data plane: detect, take the DaemonSet it was found in out, detect
    // again, so that a cluster whose nodes run different data planes (Cilium on some,
    // kube-router on others) has each node's own. The first is the cluster's.
    let first = detect(&facts);
    let mut nodes = BTreeMap::new();
    let mut detection = first.clone();
    let mut pods_of: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    loop {
        if detection.plane.is_none_or(|p| p == Plane::KubeProxy) {
            break;
        }
        let Some((ns, name)) = source_daemonset(&detection.source) else {
            break;
        };
        if !pods_of.contains_key(&ns) {
            let path = format!("/api/v1/namespaces/{ns}/pods");
            let pods = crate::env::list_all(cluster, &path).await.unwrap_or_default();
            pods_of.insert(ns.clone(), pods);
        }
        for p in &pods_of[&ns] {
            let owned = p["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|o| o["kind"] == "DaemonSet" && o["name"] == name.as_str());
            if let (true, Some(node)) = (owned, p["spec"]["nodeName"].as_str()) {
                // A node two DaemonSets claim keeps the first detection's (detection's own
                // order of precedence).
                nodes.entry(node.to_string()).or_insert_with(|| detection.clone());
            }
        }
        let before = facts.daemonsets.len();
        facts
            .daemonsets
            .retain(|d| !(d.namespace == ns && d.name == name));
        if facts.daemonsets.len() == before {
            break;
        }
        detection = detect(&facts);
    }
    (first, nodes)
}

/// `(namespace, name)` of the DaemonSet in a detection's source (`DaemonSet NS/NAME image …`).
pub fn source_daemonset(source: &str) -> Option<(String, String)> {
    let rest = source.strip_prefix("DaemonSet ")?;
    let (ns, rest) = rest.split_once('/')?;
    Some((ns.to_string(), rest.split_whitespace().next()?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `cilium` DaemonSet as the Helm chart renders it (trimmed), read as detection does.
    #[test]
    fn a_helm_rendered_cilium_daemonset_is_read() {
        let ds: Value = serde_json::json!({
            "metadata": {"name": "cilium", "namespace": "kube-system"},
            "spec": {"template": {"spec": {"containers": [{
                "name": "cilium-agent",
                "image": "quay.io/cilium/cilium:v1.18.0@sha256:0123",
                "command": ["cilium-agent"],
                "args": ["--config-dir=/tmp/cilium/config-map"],
                "env": [{"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                        {"name": "CILIUM_K8S_NAMESPACE", "value": "kube-system"}]
            }]}}}
        });
        let f = daemonset_facts(&ds);
        assert_eq!(
            f.containers[0].env,
            vec![("CILIUM_K8S_NAMESPACE".to_string(), "kube-system".to_string())]
        );
        assert_eq!(
            f.containers[0].args,
            ["cilium-agent", "--config-dir=/tmp/cilium/config-map"]
        );
        let d = detect(&Facts {
            daemonsets: vec![f],
            ..Facts::default()
        });
        assert_eq!(d.describe(), "cilium 1.18.0");
        assert_eq!(
            source_daemonset(&d.source),
            Some(("kube-system".to_string(), "cilium".to_string()))
        );
    }
}
