//! Node roles (docs/design.md §5.1): chosen among Ready, untainted, schedulable Linux nodes, recorded.

use std::collections::BTreeMap;

use locality_model::objects::Node;

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

/// The nodes `P` probes from (docs/design.md §5.4: `--max-nodes`, every zone covered): among the usable
/// nodes, first one node per zone (role nodes preferred), then the role nodes, then the others
/// by name, up to `max` nodes; every zone is covered even beyond `max`. `None`: every usable
/// node. Sorted by name; deterministic for a given set of nodes.
pub fn sample(nodes: &[Node], roles: &Roles, max: Option<usize>) -> Vec<String> {
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
mod tests {
    use super::*;
    use locality_model::objects::{LABEL_ZONE, ObjectMeta, Taint};

    fn node(name: &str, zone: &str) -> Node {
        let mut meta = ObjectMeta {
            name: name.into(),
            ..ObjectMeta::default()
        };
        meta.labels.insert(LABEL_ZONE.into(), zone.into());
        Node {
            meta,
            ready: Some(true),
            ..Node::default()
        }
    }

    #[test]
    fn four_nodes_gets_the_documented_map() {
        let nodes = vec![
            node("node-a", "zone-a"),
            node("node-b", "zone-b"),
            node("node-c", "zone-c"),
            node("node-d", "zone-a"),
        ];
        let r = pick(&nodes);
        assert_eq!(r.node(Role::N1), Some("node-a"));
        assert_eq!(r.node(Role::N1z), Some("node-d"));
        assert_eq!(r.node(Role::N2), Some("node-b"));
        assert_eq!(r.node(Role::N3), Some("node-c"));
    }

    #[test]
    fn the_sample_covers_every_zone_and_prefers_role_nodes() {
        let mut nodes = vec![
            node("node-a", "zone-a"),
            node("node-b", "zone-b"),
            node("node-c", "zone-c"),
            node("node-d", "zone-a"),
        ];
        let roles = pick(&nodes);
        assert_eq!(
            sample(&nodes, &roles, Some(10)),
            ["node-a", "node-b", "node-c", "node-d"]
        );
        assert_eq!(sample(&nodes, &roles, None).len(), 4);
        for i in 0..20 {
            nodes.push(node(&format!("node-x{i:02}"), "zone-x"));
        }
        nodes.push(node("node-y", "zone-y"));
        let roles = pick(&nodes);
        let s = sample(&nodes, &roles, Some(6));
        assert_eq!(s.len(), 6, "{s:?}");
        for n in ["node-a", "node-b", "node-c", "node-d", "node-y"] {
            assert!(s.iter().any(|x| x == n), "{n} in {s:?}");
        }
        assert!(s.iter().any(|x| x.starts_with("node-x")), "zone-x covered: {s:?}");
        // Every zone even beyond the limit.
        assert_eq!(sample(&nodes, &roles, Some(1)).len(), 5);
        assert_eq!(sample(&nodes, &roles, None).len(), 25);
    }

    #[test]
    fn unusable_nodes_are_left_out_with_a_reason() {
        let mut tainted = node("node-b", "zone-b");
        tainted.taints.push(Taint {
            key: "dedicated".into(),
            value: "x".into(),
            effect: "NoSchedule".into(),
        });
        let mut not_ready = node("node-c", "zone-c");
        not_ready.ready = Some(false);
        let r = pick(&[
            node("node-a", "zone-a"),
            tainted,
            not_ready,
            node("node-e", "zone-e"),
        ]);
        assert_eq!(r.node(Role::N1), Some("node-a"));
        // Two usable nodes: the second is N3, the node without a backend.
        assert_eq!(r.node(Role::N2), None);
        assert_eq!(r.node(Role::N3), Some("node-e"));
        assert_eq!(r.node(Role::N1z), None);
        assert_eq!(r.excluded.len(), 2, "{:?}", r.excluded);
        assert_eq!(r.lacking(), None);
    }

    #[test]
    fn two_nodes_of_one_zone_are_enough_and_one_is_not() {
        let r = pick(&[node("node-a", "zone-a"), node("node-b", "zone-a")]);
        assert_eq!(r.node(Role::N1), Some("node-a"));
        assert_eq!(r.node(Role::N3), Some("node-b"));
        assert_eq!(r.lacking(), None);
        let mut tainted = node("node-b", "zone-a");
        tainted.taints.push(Taint {
            key: "node-role.kubernetes.io/control-plane".into(),
            value: String::new(),
            effect: "NoSchedule".into(),
        });
        let r = pick(&[node("node-a", "zone-a"), tainted]);
        let why = r.lacking().unwrap();
        assert!(why.contains("1 usable (node-a)"), "{why}");
        assert!(why.contains("node-b: tainted"), "{why}");
    }
}
