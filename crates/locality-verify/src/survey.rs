//! What each node's kube-proxy says about itself, read before any case: its mode
//! (`127.0.0.1:10249/proxyMode`) and its version (`kubernetes_build_info` on `/metrics`),
//! through one-shot hostNetwork curl pods ([`crate::metrics::Reader`]).
//!
//! The version is kube-proxy's own (never `nodeInfo.kubeProxyVersion`, which is the
//! kubelet's); the mode decides the failure signature the model expects on that node (a
//! Local policy without a local endpoint drops on iptables and nftables, refuses on ipvs).
//! A node whose kube-proxy cannot be read (a replacement data plane, the port closed,
//! hostNetwork pods not admitted) is recorded as unreadable, with why: its cases are judged
//! against the cluster-wide configuration.

use std::collections::BTreeMap;

use crate::diagnose::NodeDataPlane;
use crate::env::Env;
use crate::error::VerifyError;
use crate::ledger::Evidence;
use crate::metrics::Reader;

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

/// A kube-proxy mode name (`/proxyMode`) as the model's mode; `None` for a mode the model
/// does not route (`kernelspace`) or any other text.
pub fn model_mode(name: &str) -> Option<locality_model::proxy::ProxyMode> {
    locality_model::proxy::ProxyMode::ALL
        .into_iter()
        .find(|m| m.as_str() == name.trim())
}

/// Reads every node of `nodes`, in order.
pub(crate) async fn survey(
    env: &Env<'_>,
    nodes: &[String],
    evidence: &mut Evidence,
) -> Result<BTreeMap<String, NodeDataPlane>, VerifyError> {
    let mut planes = BTreeMap::new();
    for (i, node) in nodes.iter().enumerate() {
        let mut reader = Reader {
            env,
            node: node.clone(),
            prefix: format!("dp-{i}"),
            seq: 0,
            read_at: None,
        };
        let mut plane = NodeDataPlane::default();
        match reader.read("/proxyMode", evidence).await? {
            Ok(text) => plane.mode = proxy_mode(&text),
            Err(why) => plane.unreadable = Some(why),
        }
        if plane.unreadable.is_none() {
            match reader.read("/metrics", evidence).await? {
                Ok(text) => {
                    plane.version = build_info_version(&text);
                    if plane.version.is_none() {
                        plane.unreadable = Some("no kubernetes_build_info in kube-proxy's metrics".into());
                    }
                }
                Err(why) => plane.unreadable = Some(why),
            }
        }
        planes.insert(node.clone(), plane);
    }
    Ok(planes)
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
    fn proxy_modes_are_kube_proxys_words() {
        assert_eq!(proxy_mode("ipvs\n").as_deref(), Some("ipvs"));
        assert_eq!(model_mode("ipvs\n"), Some(locality_model::proxy::ProxyMode::Ipvs));
        assert_eq!(model_mode("kernelspace"), None);
        assert_eq!(proxy_mode("<html>404</html>"), None);
    }
}
