//! What each node's kube-proxy says about itself, read before any case: its mode
//! (`127.0.0.1:10249/proxyMode`) and its version (`kubernetes_build_info` on `/metrics`),
//! through one-shot hostNetwork curl pods ([`crate::scrape::Reader`]).
//!
//! The version is kube-proxy's own (never `nodeInfo.kubeProxyVersion`, which is the
//! kubelet's); the mode decides the failure signature the model expects on that node (a
//! Local policy without a local endpoint drops on iptables and nftables, refuses on ipvs).
//! A node whose kube-proxy cannot be read (a replacement data plane, the port closed,
//! hostNetwork pods not admitted) is recorded as unreadable, with why: its cases are judged
//! against the cluster-wide configuration.

pub use crate::record::model_mode;
use std::collections::BTreeMap;

use crate::env::Env;
use crate::error::VerifyError;
use crate::ledger::Evidence;
use crate::record::NodeDataPlane;
use crate::scrape::Reader;

/// `git_version` of `kubernetes_build_info` in a Prometheus text exposition.
pub fn build_info_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("kubernetes_build_info{"))?;
    let rest = &line[line.find("git_version=\"")? + "git_version=\"".len()..];
    let v = &rest[..rest.find('"')?];
    (!v.is_empty()).then(|| v.to_string())
}

/// A `/proxyMode` answer as a mode name, if it is one kube-proxy writes.
pub fn proxy_mode(text: &str) -> Option<String> {
    let t = text.trim();
    matches!(t, "iptables" | "nftables" | "ipvs" | "kernelspace").then(|| t.to_string())
}

/// The version an image reference is tagged with, when the tag is one
/// (`registry.k8s.io/kube-proxy:v1.33.2` → `v1.33.2`; a digest after `@` is ignored; a tag
/// that is not a `vMAJOR.MINOR…` version, or no tag, is `None`).
pub fn image_version(image: &str) -> Option<String> {
    let name = image.split('@').next().unwrap_or_default();
    // The tag follows the last ':' after the last '/' (a registry may have a port).
    let last = name.rsplit('/').next().unwrap_or_default();
    let (_, tag) = last.rsplit_once(':')?;
    let digits = tag.strip_prefix('v')?;
    let mut parts = digits.split(['.', '-', '+']);
    let major = parts.next()?;
    let minor = parts.next()?;
    (major.parse::<u32>().is_ok() && minor.parse::<u32>().is_ok()).then(|| tag.to_string())
}

/// A node whose kube-proxy reported no version (its metrics unreadable, or without
/// `kubernetes_build_info`) takes the tag of the image its kube-proxy pod runs, when it runs
/// exactly one kube-proxy pod (during a surge it may run two: then the version stays unknown).
pub fn with_image_versions(
    planes: &mut BTreeMap<String, NodeDataPlane>,
    proxies: &BTreeMap<String, std::collections::BTreeSet<crate::roles::KubeProxy>>,
) {
    for (node, plane) in planes.iter_mut() {
        if plane.version.is_some() {
            continue;
        }
        let Some(set) = proxies.get(node) else { continue };
        let [only] = set.iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        if let Some(v) = image_version(&only.image) {
            plane.version = Some(v);
            plane.version_from = Some(format!("image {}", only.image));
        }
    }
}

/// Records on each node served by a known data plane its detection and the catalogue
/// entries (docs/dataplanes.md) that apply to it. A node served by kube-proxy itself gets
/// the entries of its reported mode (`/proxyMode`, e.g. ipvs) when any apply, detected from
/// what its kube-proxy said.
pub fn with_known_planes(
    planes: &mut BTreeMap<String, NodeDataPlane>,
    known: &BTreeMap<String, locality_model::dataplane::Detection>,
) {
    use locality_model::dataplane::{Detection, Plane, PlaneVersion, catalogue};
    for (node, plane) in planes.iter_mut() {
        let d = match (known.get(node), &plane.mode) {
            (Some(d), _) => d.clone(),
            (None, Some(mode)) => Detection {
                plane: Some(Plane::KubeProxy),
                version: plane.version.as_deref().and_then(PlaneVersion::parse),
                settings: [("mode".to_string(), mode.clone())].into(),
                source: format!("{node}'s kube-proxy: /proxyMode {mode}"),
                looked_at: Vec::new(),
            },
            (None, None) => continue,
        };
        let divergences: Vec<String> = catalogue::applicable(&d)
            .iter()
            .map(|e| e.id.to_string())
            .collect();
        // kube-proxy itself is recorded only when one of its mode's entries applies.
        if !known.contains_key(node) && divergences.is_empty() {
            continue;
        }
        plane.replaces_kube_proxy = d.plane.is_some_and(|p| p != Plane::KubeProxy);
        plane.known = Some(d.describe());
        plane.known_from = Some(d.source.clone());
        plane.divergences = divergences;
    }
}

/// Reads every node of `nodes` (every node's curl pod created, then all awaited at once); a
/// node whose kube-proxy gives no version gets its pod's image tag ([`with_image_versions`])
/// when the kube-proxy pods can be read.
pub(crate) async fn survey(
    env: &Env<'_>,
    nodes: &[String],
    evidence: &mut Evidence,
) -> Result<BTreeMap<String, NodeDataPlane>, VerifyError> {
    let mut readers: Vec<Reader> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| Reader {
            env,
            node: node.clone(),
            prefix: format!("dp-{i}"),
            seq: 0,
            read_at: None,
        })
        .collect();
    let mut planes: BTreeMap<String, NodeDataPlane> = nodes
        .iter()
        .map(|n| (n.clone(), NodeDataPlane::default()))
        .collect();
    let modes = read_all(&mut readers, "/proxyMode", evidence).await?;
    for (reader, read) in readers.iter().zip(modes) {
        let plane = planes.entry(reader.node.clone()).or_default();
        match read {
            Ok(text) => plane.mode = proxy_mode(&text),
            Err(why) => plane.unreadable = Some(why),
        }
    }
    // The metrics of the nodes whose kube-proxy answered.
    readers.retain(|r| planes.get(&r.node).is_some_and(|p| p.unreadable.is_none()));
    let metrics = read_all(&mut readers, "/metrics", evidence).await?;
    for (reader, read) in readers.iter().zip(metrics) {
        let plane = planes.entry(reader.node.clone()).or_default();
        match read {
            Ok(text) => {
                plane.version = build_info_version(&text);
                plane.version_from = plane.version.as_ref().map(|_| "metrics".to_string());
                if plane.version.is_none() {
                    plane.unreadable = Some("no kubernetes_build_info in kube-proxy's metrics".into());
                }
            }
            Err(why) => plane.unreadable = Some(why),
        }
    }
    if planes.values().any(|p| p.version.is_none())
        && let Ok(pods) = crate::env::kube_proxy_pods(env.cluster).await
    {
        with_image_versions(&mut planes, &crate::roles::kube_proxies(&pods));
    }
    let (_, known) = crate::known_planes::read(env.cluster).await;
    with_known_planes(&mut planes, &known);
    Ok(planes)
}

/// One read of `path` by each reader: every curl pod created in turn, then all awaited at
/// once; the answers in the readers' order.
async fn read_all(
    readers: &mut [Reader<'_, '_>],
    path: &str,
    evidence: &mut Evidence,
) -> Result<Vec<Result<String, String>>, VerifyError> {
    let mut started = Vec::with_capacity(readers.len());
    for r in readers.iter_mut() {
        started.push(r.start(path, evidence).await?);
    }
    let finished = futures_util::future::join_all(readers.iter_mut().zip(started).map(|(r, s)| async move {
        match s {
            Ok(name) => r.finish(&name, path).await,
            Err(why) => Ok(Err(why)),
        }
    }))
    .await;
    finished.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_info_version_is_read() {
        let text = "# HELP kubernetes_build_info x\n# TYPE kubernetes_build_info gauge\n\
            kubernetes_build_info{build_date=\"2025-01-01T00:00:00Z\",compiler=\"gc\",git_version=\"v1.32.0\",major=\"1\",minor=\"32\"} 1\n";
        assert_eq!(build_info_version(text).as_deref(), Some("v1.32.0"));
        assert_eq!(build_info_version("kubeproxy_x 1\n"), None);
        assert_eq!(
            build_info_version("kubernetes_build_info{git_version=\"\"} 1\n"),
            None
        );
    }

    #[test]
    fn a_node_without_build_info_takes_its_kube_proxy_pods_image_tag() {
        assert_eq!(
            image_version("registry.k8s.io/kube-proxy:v1.33.2").as_deref(),
            Some("v1.33.2")
        );
        assert_eq!(
            image_version("localhost:5000/kube-proxy:v1.31.0@sha256:abc").as_deref(),
            Some("v1.31.0")
        );
        assert_eq!(image_version("localhost:5000/kube-proxy"), None);
        assert_eq!(image_version("registry.k8s.io/kube-proxy:latest"), None);
        let kp = |image: &str| crate::roles::KubeProxy {
            owner: "DaemonSet/kube-proxy".into(),
            image: image.into(),
            command: Vec::new(),
        };
        let mut planes: BTreeMap<String, NodeDataPlane> = BTreeMap::new();
        planes.insert(
            "node-a".into(),
            NodeDataPlane {
                unreadable: Some("port closed".into()),
                ..NodeDataPlane::default()
            },
        );
        planes.insert(
            "node-b".into(),
            NodeDataPlane {
                version: Some("v1.35.0".into()),
                version_from: Some("metrics".into()),
                ..NodeDataPlane::default()
            },
        );
        planes.insert("node-c".into(), NodeDataPlane::default());
        let mut proxies = BTreeMap::new();
        proxies.insert(
            "node-a".to_string(),
            [kp("registry.k8s.io/kube-proxy:v1.32.4")].into(),
        );
        proxies.insert(
            "node-b".to_string(),
            [kp("registry.k8s.io/kube-proxy:v1.30.0")].into(),
        );
        proxies.insert(
            "node-c".to_string(),
            [
                kp("registry.k8s.io/kube-proxy:v1.32.4"),
                kp("registry.k8s.io/kube-proxy:v1.33.0"),
            ]
            .into(),
        );
        with_image_versions(&mut planes, &proxies);
        assert_eq!(planes["node-a"].version.as_deref(), Some("v1.32.4"));
        assert_eq!(
            planes["node-a"].version_from.as_deref(),
            Some("image registry.k8s.io/kube-proxy:v1.32.4")
        );
        assert_eq!(
            planes["node-b"].version.as_deref(),
            Some("v1.35.0"),
            "the metrics win"
        );
        assert_eq!(planes["node-c"].version, None, "two kube-proxy pods: unknown");
    }

    #[test]
    fn proxy_modes_are_kube_proxys_words() {
        assert_eq!(proxy_mode("ipvs\n").as_deref(), Some("ipvs"));
        assert_eq!(model_mode("ipvs\n"), Some(locality_model::proxy::ProxyMode::Ipvs));
        assert_eq!(model_mode("kernelspace"), None);
        assert_eq!(proxy_mode("<html>404</html>"), None);
    }
}
