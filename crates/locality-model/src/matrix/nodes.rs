//! The matrix's view of the Nodes: sorted by name, each with its zone, OS and kube-proxy
//! behaviour, and grouped by them ([`Matrix::summary`](super::Matrix::summary) answers for a
//! group's ordinary nodes at once).
//!
//! [`NodeTable`] keeps that work for a list of Nodes and a configuration, for a caller that
//! asks the model many times while the Nodes stay the same (a simulation, at every step):
//! reading every Node's labels again at every step was the part of a 5,000-node simulation
//! that grew fastest with the nodes.

use std::collections::HashMap;
use std::net::IpAddr;

use super::MatrixConfig;
use crate::features::{ControlPlaneFeatures, ProxyFeatures};
use crate::objects::Node;
use crate::version::KubeVersion;

/// A node as the matrix sees it.
#[derive(Debug, Clone)]
pub struct MatrixNode<'s> {
    /// The Node object.
    pub node: &'s Node,
    /// Zone label (`""` when absent).
    pub zone: &'s str,
    /// kube-proxy behaviour on this node.
    pub proxy: ProxyFeatures,
    /// A Windows node ([`Node::is_windows`], read once: every route asks).
    pub windows: bool,
}

impl MatrixNode<'_> {
    /// Node name.
    pub fn name(&self) -> &str {
        &self.node.meta.name
    }
    /// kube-proxy's node IP in `family`: the Node's first InternalIP of that family
    /// (`pkg/proxy/util` `GetNodeIPs` reads the Node's addresses), when the input has one.
    pub fn ip(&self, family: crate::objects::IpFamily) -> Option<IpAddr> {
        self.node
            .internal_ips
            .iter()
            .copied()
            .find(|ip| crate::objects::IpFamily::of(ip) == family)
    }
}

/// Nodes that categorize alike unless special: one zone, kube-proxy behaviour and OS.
#[derive(Debug, Clone)]
pub(super) struct NodeGroup {
    pub zone: String,
    pub proxy: ProxyFeatures,
    pub windows: bool,
    /// The nodes (indices into the name-sorted nodes).
    pub nodes: Vec<usize>,
}

/// The features of the API server and of kube-proxy at the configured versions.
#[derive(Debug, Clone, Copy)]
pub(super) struct Features {
    pub control_plane: ControlPlaneFeatures,
    pub default_proxy: ProxyFeatures,
}

impl Features {
    pub fn of(config: &MatrixConfig) -> Self {
        let control_plane = ControlPlaneFeatures::applying(config.kube_version, &config.feature_gates);
        Features {
            control_plane,
            default_proxy: Self::proxy_at(config, control_plane, config.kube_proxy_version),
        }
    }

    fn proxy_at(config: &MatrixConfig, control_plane: ControlPlaneFeatures, v: KubeVersion) -> ProxyFeatures {
        let mut p = ProxyFeatures::applying(v, &config.feature_gates);
        // An API server that drops spec.internalTrafficPolicy leaves kube-proxy nothing to
        // honour.
        p.internal_traffic_policy &= control_plane.internal_traffic_policy;
        p
    }
}

/// The matrix's nodes, sorted by name, with each one's index in `nodes`.
pub(super) fn matrix_nodes<'s>(
    nodes: &'s [Node],
    config: &MatrixConfig,
    features: Features,
) -> Vec<(usize, MatrixNode<'s>)> {
    // The features of each version met, worked out once (a dump often names a version per
    // node, and most nodes share a few).
    let mut by_version: Vec<(KubeVersion, ProxyFeatures)> =
        vec![(config.kube_proxy_version, features.default_proxy)];
    let mut features_of = |v: KubeVersion| match by_version.iter().find(|(k, _)| *k == v) {
        Some((_, p)) => *p,
        None => {
            let p = Features::proxy_at(config, features.control_plane, v);
            by_version.push((v, p));
            p
        }
    };
    let mut out: Vec<(usize, MatrixNode<'s>)> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let node = MatrixNode {
                node: n,
                zone: n.zone().unwrap_or(""),
                windows: n.is_windows(),
                proxy: features.default_proxy,
            };
            (i, node)
        })
        .collect();
    out.sort_by(|a, b| a.1.node.meta.name.cmp(&b.1.node.meta.name));
    // Each node's own kube-proxy version: both lists are in name order, so one walk along
    // both finds them (a search of the map per node was a good part of this constructor's
    // time on a 5,000-node cluster).
    let mut versions = config.node_proxy_versions.iter().peekable();
    for (_, n) in &mut out {
        while versions.next_if(|(name, _)| name.as_str() < n.name()).is_some() {}
        if let Some((_, v)) = versions.peek().filter(|(name, _)| name.as_str() == n.name()) {
            n.proxy = features_of(**v);
        }
    }
    out
}

/// The groups of name-sorted `nodes`, and each node's group (an index into the groups).
pub(super) fn groups<'n>(nodes: impl Iterator<Item = &'n MatrixNode<'n>>) -> (Vec<NodeGroup>, Vec<usize>) {
    let mut groups: Vec<NodeGroup> = Vec::new();
    let mut node_group: Vec<usize> = Vec::new();
    let mut group_of: HashMap<(&str, ProxyFeatures, bool), usize> = HashMap::new();
    for (i, n) in nodes.enumerate() {
        let key = (n.zone, n.proxy, n.windows);
        let g = *group_of.entry(key).or_insert_with(|| {
            groups.push(NodeGroup {
                zone: n.zone.to_string(),
                proxy: n.proxy,
                windows: n.windows,
                nodes: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].nodes.push(i);
        node_group.push(g);
    }
    (groups, node_group)
}

/// What [`Matrix::new`](super::Matrix::new) works out from the Nodes alone (their order by
/// name, each one's zone, OS and kube-proxy behaviour, their groups), kept for
/// [`Matrix::with_nodes`](super::Matrix::with_nodes) while the Nodes and the configuration stay
/// the same.
#[derive(Debug, Clone)]
pub struct NodeTable {
    pub(super) config: MatrixConfig,
    pub(super) features: Features,
    /// The index in the Nodes the table was built from of each node, in name order (its zone,
    /// OS and kube-proxy behaviour are its group's).
    order: Vec<usize>,
    pub(super) groups: Vec<NodeGroup>,
    pub(super) node_group: Vec<usize>,
}

impl NodeTable {
    /// The table of `nodes` under `config`. A matrix built with it must be given the same
    /// Nodes, in the same order ([`Matrix::with_nodes`](super::Matrix::with_nodes)).
    pub fn new(nodes: &[Node], config: MatrixConfig) -> Self {
        let features = Features::of(&config);
        let sorted = matrix_nodes(nodes, &config, features);
        let (groups, node_group) = groups(sorted.iter().map(|(_, n)| n));
        let order = sorted.iter().map(|(index, _)| *index).collect();
        NodeTable {
            config,
            features,
            order,
            groups,
            node_group,
        }
    }

    /// The configuration the table was built with.
    pub fn config(&self) -> &MatrixConfig {
        &self.config
    }

    /// How many Nodes the table was built from.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when it was built from no Nodes.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The matrix's nodes over `nodes` (those the table was built from), in name order.
    pub(super) fn matrix_nodes<'s>(&'s self, nodes: &'s [Node]) -> Vec<MatrixNode<'s>> {
        self.order
            .iter()
            .zip(&self.node_group)
            .map(|(&index, &g)| {
                let group = &self.groups[g];
                MatrixNode {
                    node: &nodes[index],
                    zone: &group.zone,
                    proxy: group.proxy,
                    windows: group.windows,
                }
            })
            .collect()
    }
}
