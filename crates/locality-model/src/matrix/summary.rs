//! [`Matrix::summary`]: node counts per verdict for one port, in time proportional to its
//! endpoints and node groups.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::proxy::Assessment;

/// Counts of nodes per verdict for one route of one port.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct VerdictCounts {
    /// Nodes that deliver.
    pub deliver: usize,
    /// Nodes that drop.
    pub drop: usize,
    /// Nodes that reject.
    pub reject: usize,
    /// Nodes that do not proxy.
    #[serde(rename = "notProxied")]
    pub not_proxied: usize,
    /// Nodes whose verdict depends on the unknown proxy mode.
    #[serde(rename = "modeDependent")]
    pub mode_dependent: usize,
}

impl VerdictCounts {
    fn add(&mut self, r: &MatrixRoute, n: usize) {
        if r.by_mode.is_some() {
            self.mode_dependent += n;
            return;
        }
        match r.route.verdict {
            VerdictKind::Deliver => self.deliver += n,
            VerdictKind::Drop => self.drop += n,
            VerdictKind::Reject => self.reject += n,
            VerdictKind::NotProxied => self.not_proxied += n,
        }
    }
}

/// The summary of one port: node counts per verdict per route, and the blind nodes.
#[derive(Debug, Clone)]
pub struct PortSummary {
    /// Index into [`Matrix::ports`].
    pub port: usize,
    /// Per (source, destination): node counts.
    pub counts: Vec<(Source, Destination, VerdictCounts)>,
    /// Nodes whose pods are blind (pod → clusterIP dropped), when at most `blind_limit`.
    pub blind_nodes: Vec<String>,
    /// Number of blind nodes.
    pub blind_count: usize,
    /// The least sure of the port's routes (the meet of their confidence and missing facts,
    /// every mode's route included); `None` without nodes.
    pub assessment: Option<Assessment>,
}

/// Meets `r`'s assessment (and each of its per-mode routes') into `acc`.
fn meet_into(acc: &mut Option<Assessment>, r: &MatrixRoute) {
    let mut a = r.route.assessment();
    for (_, m) in r.by_mode.iter().flatten() {
        a = a.meet(m.assessment());
    }
    *acc = Some(acc.map_or(a, |b| b.meet(a)));
}

impl<'s> Matrix<'s> {
    /// Node counts per verdict for one port, in time proportional to its endpoints and the
    /// number of node groups (zones × kube-proxy versions), not to the number of nodes.
    /// Blind nodes are listed when there are at most `blind_limit`.
    ///
    /// Nodes that host an endpoint or are named by a node hint are categorized one by one
    /// (allocation-free); every other node of a group categorizes like the group's
    /// representative. Verdicts are computed once per distinct [`CategorySignature`].
    pub fn summary(&self, port: usize, blind_limit: usize) -> PortSummary {
        let entry = &self.ports[port];
        let mut counts: Vec<(Source, Destination, VerdictCounts)> = Vec::new();
        for source in Source::ALL {
            for &d in &entry.destinations {
                counts.push((source, d, VerdictCounts::default()));
            }
        }
        if !entry.duplicates.is_empty() || entry.firewalled() {
            // Duplicated addresses, and a firewall that judges each node's own address, make
            // routes node-specific: every node on its own.
            let mut blind = Vec::new();
            let mut assessment = None;
            for (i, r) in self.port_routes(port, None) {
                for (c, route) in counts.iter_mut().zip(r.routes.iter()) {
                    c.2.add(route, 1);
                    meet_into(&mut assessment, route);
                }
                if r.routes
                    .first()
                    .is_some_and(|r| r.by_mode.is_none() && r.route.verdict == VerdictKind::Drop)
                {
                    blind.push(self.nodes[i].name().to_string());
                }
            }
            let blind_count = blind.len();
            return PortSummary {
                port,
                counts,
                blind_nodes: if blind_count <= blind_limit {
                    blind
                } else {
                    Vec::new()
                },
                blind_count,
                assessment,
            };
        }
        // One (port info, index) per distinct kube-proxy behaviour among the nodes.
        let mut indexes: Vec<(ProxyFeatures, ServicePortInfo, CategorizeIndex<'_>)> = Vec::new();
        let index_pos = |proxy: ProxyFeatures, indexes: &mut Vec<_>| -> usize {
            match indexes
                .iter()
                .position(|(p, _, _): &(ProxyFeatures, _, _)| *p == proxy)
            {
                Some(p) => p,
                None => {
                    let (info, idx) = self.index_for(entry, &proxy);
                    indexes.push((proxy, info, idx));
                    indexes.len() - 1
                }
            }
        };
        // Verdicts per (index, windows, signature): (routes, blind).
        let mut memo: HashMap<(usize, bool, CategorySignature), (Vec<MatrixRoute>, bool)> = HashMap::new();
        let is_blind = |routes: &[MatrixRoute]| {
            // Source::Pod × Destination::ClusterIp is always the first route.
            routes
                .first()
                .is_some_and(|r| r.by_mode.is_none() && r.route.verdict == VerdictKind::Drop)
        };

        let default_pos = index_pos(self.default_proxy, &mut indexes);
        let mut specials: Vec<usize> = indexes[default_pos]
            .2
            .special_nodes()
            .filter_map(|name| self.node_position(name))
            .collect();
        specials.sort_unstable();
        specials.dedup();

        let mut special_per_group: HashMap<usize, usize> = HashMap::new();
        let mut blind_special: Vec<usize> = Vec::new();
        let mut blind_groups: Vec<usize> = Vec::new();
        let mut blind_count = 0;
        let mut assessment = None;
        let mut evaluate = |pos: usize,
                            node: ProxyNode<'_>,
                            windows: bool,
                            weight: usize,
                            indexes: &Vec<(ProxyFeatures, ServicePortInfo, CategorizeIndex<'_>)>,
                            counts: &mut Vec<(Source, Destination, VerdictCounts)>|
         -> bool {
            let (_, info, idx) = &indexes[pos];
            let cat = idx.categorize(node);
            let (routes, blind) = memo.entry((pos, windows, cat.signature())).or_insert_with(|| {
                let routes = self.routes_of(
                    entry,
                    info,
                    &cat,
                    super::routes::NodeFacts {
                        proxy: &indexes[pos].0,
                        ip: None,
                        windows,
                    },
                    super::routes::Detail::FULL,
                );
                let blind = is_blind(&routes);
                (routes, blind)
            });
            for (c, route) in counts.iter_mut().zip(routes.iter()) {
                c.2.add(route, weight);
                meet_into(&mut assessment, route);
            }
            *blind
        };
        for &i in &specials {
            let n = &self.nodes[i];
            let pos = index_pos(n.proxy, &mut indexes);
            let node = ProxyNode {
                name: n.name(),
                zone: n.zone,
            };
            if evaluate(pos, node, n.windows, 1, &indexes, &mut counts) {
                blind_count += 1;
                blind_special.push(i);
            }
            *special_per_group.entry(self.group_of(i)).or_default() += 1;
        }
        for (g, group) in self.groups.iter().enumerate() {
            let ordinary = group.nodes.len() - special_per_group.get(&g).copied().unwrap_or(0);
            if ordinary == 0 {
                continue;
            }
            let pos = index_pos(group.proxy, &mut indexes);
            let node = ProxyNode {
                name: ANONYMOUS_NODE,
                zone: &group.zone,
            };
            if evaluate(pos, node, group.windows, ordinary, &indexes, &mut counts) {
                blind_count += ordinary;
                blind_groups.push(g);
            }
        }
        let mut blind_nodes = Vec::new();
        if blind_count <= blind_limit {
            let special_set: HashSet<usize> = specials.iter().copied().collect();
            let mut idx: Vec<usize> = blind_special;
            for g in blind_groups {
                idx.extend(
                    self.groups[g]
                        .nodes
                        .iter()
                        .copied()
                        .filter(|i| !special_set.contains(i)),
                );
            }
            idx.sort_unstable();
            blind_nodes = idx
                .into_iter()
                .map(|i| self.nodes[i].name().to_string())
                .collect();
        }
        PortSummary {
            port,
            counts,
            blind_nodes,
            blind_count,
            assessment,
        }
    }

    fn group_of(&self, node: usize) -> usize {
        self.node_group[node]
    }
}
