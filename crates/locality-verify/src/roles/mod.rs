//! Node roles (docs/design.md §5.1): chosen among Ready, untainted, schedulable Linux nodes, recorded;
//! the nodes sampled under `--max-nodes` (every zone, every distinct kube-proxy).

use std::collections::{BTreeMap, BTreeSet};

use locality_model::objects::Node;
use serde_json::Value;

use crate::cases::Role;

mod placement;
mod solve;

pub use placement::{Placement, place};
pub use solve::pick_for;

/// The nodes chosen for each role.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Roles {
    /// Role → node name.
    pub nodes: BTreeMap<Role, String>,
    /// Why nodes were left out (`node: reason`).
    pub excluded: Vec<String>,
    /// Role → the zone of its node (no entry: the node has no zone label).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub zones: BTreeMap<Role, String>,
    /// The usable nodes per zone, in words (for the reasons a case cannot run).
    #[serde(skip)]
    pub shape: String,
}

impl Roles {
    /// The node of `role`, if there is one.
    pub fn node(&self, role: Role) -> Option<&str> {
        self.nodes.get(&role).map(String::as_str)
    }

    /// Why the cluster is too small for the contract (`N1` with a backend and `N3` without
    /// one need two usable nodes), if it is.
    pub fn lacking(&self) -> Option<String> {
        if self.node(Role::N1).is_some() && self.node(Role::N3).is_some() {
            return None;
        }
        let usable: std::collections::BTreeSet<&str> = self.nodes.values().map(String::as_str).collect();
        Some(format!(
            "the contract needs two Ready, untainted, schedulable Linux nodes (one with a backend, one without); this cluster has {} usable{}{}",
            usable.len(),
            if usable.is_empty() {
                String::new()
            } else {
                format!(" ({})", usable.into_iter().collect::<Vec<_>>().join(", "))
            },
            if self.excluded.is_empty() {
                String::new()
            } else {
                format!("; left out: {}", self.excluded.join("; "))
            }
        ))
    }
}

/// How many nodes a run may use (Ready, untainted, schedulable, Linux).
pub fn usable_count(nodes: &[Node]) -> usize {
    nodes.iter().filter(|n| unusable(n).is_none()).count()
}

/// Why a node cannot take a role, if it cannot.
fn unusable(n: &Node) -> Option<String> {
    if n.ready != Some(true) {
        return Some("not Ready".into());
    }
    if n.unschedulable {
        return Some("cordoned".into());
    }
    if n.is_windows() {
        return Some("Windows".into());
    }
    if let Some(t) = n
        .taints
        .iter()
        .find(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
    {
        return Some(format!("tainted {}:{}", t.key, t.effect));
    }
    None
}

/// Picks the roles for the whole catalogue ([`pick_for`]), whichever cases a run selects:
/// a run with `--only` (a rerun, say) gets the roles of the full run.
pub fn pick(nodes: &[Node]) -> Roles {
    let cases: Vec<&crate::cases::Case> = crate::cases::CATALOGUE.iter().collect();
    pick_for(nodes, &cases)
}

/// A node's kube-proxy as its pod in `kube-system` declares it: what owns the pod
/// (`DaemonSet/NAME`; `static pod` for a kubelet's static pod), the kube-proxy container's
/// image and its command and args. Nodes with equal `KubeProxy`s run the same kube-proxy
/// build with the same flags; a node mid-upgrade, a node pool with its own DaemonSet (another
/// mode, another configuration) or a node without a kube-proxy pod differs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeProxy {
    /// `DaemonSet/NAME`, `static pod`, another controller's `KIND/NAME`, or empty.
    pub owner: String,
    /// The container's image.
    pub image: String,
    /// The container's command, then its args.
    pub command: Vec<String>,
}

/// Every node's kube-proxy from the pods of `kube-system`: a pod labelled
/// `k8s-app=kube-proxy`, or owned by a DaemonSet and with a container named `kube-proxy`,
/// bound to a node, neither finished nor terminating. Its container is the one named
/// `kube-proxy`, else the first. A node with more than one (a surge during a rollout) has
/// each.
pub fn kube_proxies(pods: &[Value]) -> BTreeMap<String, BTreeSet<KubeProxy>> {
    let mut out: BTreeMap<String, BTreeSet<KubeProxy>> = BTreeMap::new();
    for p in pods {
        let meta = &p["metadata"];
        let node = p["spec"]["nodeName"].as_str().unwrap_or_default();
        let finished = matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"));
        if meta["namespace"] != "kube-system"
            || node.is_empty()
            || finished
            || !meta["deletionTimestamp"].is_null()
        {
            continue;
        }
        let containers = p["spec"]["containers"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let named = containers.iter().find(|c| c["name"] == "kube-proxy");
        let controller = meta["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["controller"] == true);
        let kind = controller.and_then(|o| o["kind"].as_str()).unwrap_or_default();
        let labelled = meta["labels"]["k8s-app"] == "kube-proxy";
        let daemon = kind == "DaemonSet" && named.is_some();
        if !(labelled || daemon) {
            continue;
        }
        let Some(c) = named.or_else(|| containers.first()) else {
            continue;
        };
        let owner = match (kind, controller.and_then(|o| o["name"].as_str())) {
            ("Node", _) => "static pod".to_string(),
            (kind, Some(name)) if !kind.is_empty() => format!("{kind}/{name}"),
            _ => String::new(),
        };
        let words = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        };
        let mut command = words(&c["command"]);
        command.extend(words(&c["args"]));
        out.entry(node.to_string()).or_default().insert(KubeProxy {
            owner,
            image: c["image"].as_str().unwrap_or_default().to_string(),
            command,
        });
    }
    out
}

/// The nodes `P` probes from (docs/design.md §5.4: `--max-nodes`, every zone and every
/// kube-proxy covered): among the usable nodes, first one node per zone (role nodes
/// preferred), then one node of every distinct kube-proxy of `proxies` (owner, image,
/// command: [`kube_proxies`]; a node without one counts as one more kind when others have
/// one) not covered yet, then the role nodes, then the others by name, up to `max` nodes;
/// every zone and every kube-proxy is covered even beyond `max`. `None`: every usable node.
/// Sorted by name; deterministic for a given set of nodes.
pub fn sample(
    nodes: &[Node],
    roles: &Roles,
    max: Option<usize>,
    proxies: &BTreeMap<String, BTreeSet<KubeProxy>>,
) -> Vec<String> {
    let mut usable: Vec<&Node> = nodes.iter().filter(|n| unusable(n).is_none()).collect();
    usable.sort_by(|a, b| a.meta.name.cmp(&b.meta.name));
    let is_role = |n: &Node| roles.nodes.values().any(|v| *v == n.meta.name);
    let candidates: Vec<&Node> = usable
        .iter()
        .copied()
        .filter(|n| is_role(n))
        .chain(usable.iter().copied().filter(|n| !is_role(n)))
        .collect();
    let mut picked: Vec<&Node> = Vec::new();
    match max {
        None => picked = candidates,
        Some(max) => {
            let mut zones: Vec<&str> = Vec::new();
            for n in &candidates {
                let z = n.zone().unwrap_or("");
                if !zones.contains(&z) {
                    zones.push(z);
                    picked.push(n);
                }
            }
            // Each node's kinds of kube-proxy; `None`: no kube-proxy pod on it.
            let kinds = |n: &Node| -> Vec<Option<&KubeProxy>> {
                match proxies.get(&n.meta.name) {
                    Some(set) if !set.is_empty() => set.iter().map(Some).collect(),
                    _ => vec![None],
                }
            };
            if !proxies.is_empty() {
                let every: BTreeSet<Option<&KubeProxy>> = candidates.iter().flat_map(|n| kinds(n)).collect();
                for kind in every {
                    if picked.iter().any(|p| kinds(p).contains(&kind)) {
                        continue;
                    }
                    if let Some(n) = candidates.iter().find(|n| kinds(n).contains(&kind)) {
                        picked.push(n);
                    }
                }
            }
            for n in &candidates {
                if picked.len() >= max {
                    break;
                }
                if !picked.iter().any(|p| p.meta.name == n.meta.name) {
                    picked.push(n);
                }
            }
        }
    }
    let mut names: Vec<String> = picked.iter().map(|n| n.meta.name.clone()).collect();
    names.sort();
    names
}

/// The four-nodes role map (`N1z` optional), for tests.
#[cfg(test)]
pub(crate) fn four_nodes(with_n1z: bool) -> Roles {
    let mut nodes = BTreeMap::new();
    nodes.insert(Role::N1, "node-a".to_string());
    nodes.insert(Role::N2, "node-b".to_string());
    nodes.insert(Role::N3, "node-c".to_string());
    let mut zones = BTreeMap::new();
    zones.insert(Role::N1, "zone-a".to_string());
    zones.insert(Role::N2, "zone-b".to_string());
    zones.insert(Role::N3, "zone-c".to_string());
    if with_n1z {
        nodes.insert(Role::N1z, "node-d".to_string());
        zones.insert(Role::N1z, "zone-a".to_string());
    }
    Roles {
        nodes,
        excluded: Vec::new(),
        zones,
        shape: "this cluster has 4 usable nodes".into(),
    }
}

#[cfg(test)]
mod tests;
