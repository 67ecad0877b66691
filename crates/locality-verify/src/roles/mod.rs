//! Node roles (docs/design.md §5.1): chosen among Ready, untainted, schedulable Linux nodes, recorded;
//! the nodes sampled under `--max-nodes` (every zone, every distinct kube-proxy).

use std::collections::{BTreeMap, BTreeSet};

use locality_model::objects::Node;
use serde_json::Value;

use crate::cases::Role;

/// The nodes chosen for each role.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Roles {
    /// Role → node name.
    pub nodes: BTreeMap<Role, String>,
    /// Why nodes were left out (`node: reason`).
    pub excluded: Vec<String>,
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

/// Why a node cannot take a role, if it cannot.
/// How many nodes a run may use (Ready, untainted, schedulable, Linux).
pub fn usable_count(nodes: &[Node]) -> usize {
    nodes.iter().filter(|n| unusable(n).is_none()).count()
}

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

/// Picks the roles: `N1` in the first zone (by name) with two usable nodes, so that `N1z`
/// exists (else the first usable node); `N2` the first node outside `N1`'s zone (else any
/// other); `N3` the next such node. Deterministic for a given set of nodes.
pub fn pick(nodes: &[Node]) -> Roles {
    let mut excluded = Vec::new();
    let mut usable: Vec<&Node> = Vec::new();
    for n in nodes {
        match unusable(n) {
            Some(why) => excluded.push(format!("{}: {why}", n.meta.name)),
            None => usable.push(n),
        }
    }
    usable.sort_by(|a, b| a.meta.name.cmp(&b.meta.name));
    let mut by_zone: BTreeMap<&str, Vec<&Node>> = BTreeMap::new();
    for n in &usable {
        by_zone.entry(n.zone().unwrap_or("")).or_default().push(n);
    }
    let mut roles = BTreeMap::new();
    let n1 = by_zone
        .values()
        .find(|v| v.len() >= 2)
        .map(|v| v[0])
        .or_else(|| usable.first().copied());
    let Some(n1) = n1 else {
        return Roles {
            nodes: roles,
            excluded,
        };
    };
    roles.insert(Role::N1, n1.meta.name.clone());
    let zone1 = n1.zone().unwrap_or("");
    if let Some(z) = usable
        .iter()
        .find(|n| n.meta.name != n1.meta.name && n.zone().unwrap_or("") == zone1 && !zone1.is_empty())
    {
        roles.insert(Role::N1z, z.meta.name.clone());
    }
    let taken = |roles: &BTreeMap<Role, String>, n: &Node| roles.values().any(|v| *v == n.meta.name);
    for role in [Role::N2, Role::N3] {
        let pick = usable
            .iter()
            .find(|n| !taken(&roles, n) && n.zone().unwrap_or("") != zone1)
            .or_else(|| usable.iter().find(|n| !taken(&roles, n)));
        if let Some(n) = pick {
            roles.insert(role, n.meta.name.clone());
        }
    }
    // Two usable nodes: the second is N3 (the node without a backend, which the core cases
    // need); the cases with a backend on N2 run with N1's alone.
    if !roles.contains_key(&Role::N3) {
        if let Some(n2) = roles.remove(&Role::N2) {
            roles.insert(Role::N3, n2);
        } else if let Some(z) = roles.get(&Role::N1z).cloned() {
            roles.insert(Role::N3, z);
        }
    }
    Roles {
        nodes: roles,
        excluded,
    }
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
    if with_n1z {
        nodes.insert(Role::N1z, "node-d".to_string());
    }
    Roles {
        nodes,
        excluded: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
