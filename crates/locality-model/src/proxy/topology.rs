//! `CategorizeEndpoints`: which endpoints kube-proxy on a node uses for a service port.
//!
//! Mirrors kubernetes/kubernetes `pkg/proxy/topology.go` (`CategorizeEndpoints`,
//! `topologyModeFromHints`, `availableForTopology`), newest version (docs/upstream.md §1).
//! The work that does not depend on the node is done once per service port in
//! [`CategorizeIndex::new`]; [`CategorizeIndex::categorize`] then answers per node in time
//! proportional to the size of the answer, which keeps a 5,000-node matrix cheap.

use std::borrow::Cow;
use std::collections::HashMap;

use super::endpoint::{ProxyEndpoint, ServicePortInfo};
use crate::features::ProxyFeatures;

/// The hint mode kube-proxy applied to the cluster set on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
pub enum TopologyMode {
    /// No filtering by hints.
    #[default]
    #[serde(rename = "none")]
    None,
    /// Zone hints (`forZones`) filtered the cluster set.
    PreferSameZone,
    /// Node hints (`forNodes`) filtered the cluster set.
    PreferSameNode,
}

impl TopologyMode {
    /// Output spelling (`none`, `PreferSameZone`, `PreferSameNode`).
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyMode::None => "none",
            TopologyMode::PreferSameZone => "PreferSameZone",
            TopologyMode::PreferSameNode => "PreferSameNode",
        }
    }
}

/// Why a hint mode was or was not used on a node (for `explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HintDecision {
    /// The Service does not use cluster endpoints (ITP Local, not externally accessible):
    /// hints are not looked at.
    NotConsidered,
    /// No ready endpoint exists: no topology.
    NoReadyEndpoints,
    /// kube-proxy < 1.31 requires the topology annotation, and it is unset or disabled.
    AnnotationRequired,
    /// kube-proxy uses no hints at all: `TopologyAwareHints` and `ServiceTrafficDistribution`
    /// both off (before 1.24 by default, or switched off with `--feature-gates`).
    HintsOff,
    /// Ready endpoints carry node hints, but this kube-proxy does not read them
    /// (`PreferSameTrafficDistribution` off: before 1.34 by default, or switched off).
    NodeHintsIgnored,
    /// The mode applied.
    Applied(TopologyMode),
    /// No ready endpoint carries hints of either kind.
    NoHints,
    /// Some ready endpoint lacks a hint of the kind (all-or-nothing): the first such endpoint.
    NotAllHinted {
        /// Mode that was refused.
        mode: TopologyMode,
        /// Index (into the endpoint list) of the first ready endpoint without that kind of hint.
        unhinted: usize,
    },
    /// Every ready endpoint is hinted, but none for this node (or this node's zone).
    NoneForThisNode {
        /// Mode that was refused.
        mode: TopologyMode,
    },
}

/// Result of `CategorizeEndpoints` on one node.
///
/// `None` for a set means the Service does not use that kind of endpoints; `Some` of an
/// empty set means it does and there are none (upstream returns `nil` for both; the
/// difference matters for explaining a drop, so the model keeps it). The sets borrow from the
/// [`CategorizeIndex`] they came from; [`CategorizedEndpoints::into_owned`] detaches them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategorizedEndpoints<'a> {
    /// Cluster set: indices into the endpoint list, ascending.
    pub cluster: Option<Cow<'a, [usize]>>,
    /// Local set: indices into the endpoint list, ascending.
    pub local: Option<Cow<'a, [usize]>>,
    /// `hasAnyEndpoints`: some endpoint anywhere is ready, or serving and terminating.
    pub has_any_endpoints: bool,
    /// The hint mode applied to the cluster set.
    pub topology: TopologyMode,
    /// Why the topology mode was chosen: the node-hint decision (when node hints were
    /// considered), then the zone-hint decision, in the order kube-proxy takes them.
    pub hint_decisions: [Option<HintDecision>; 2],
    /// The cluster set fell back to serving-terminating endpoints (no ready endpoint anywhere).
    pub cluster_fallback: bool,
    /// The local set fell back to serving-terminating local endpoints.
    pub local_fallback: bool,
}

/// What decides the verdicts on a node, without the endpoint identities: nodes with the same
/// signature get the same verdicts (used to count nodes per verdict cheaply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CategorySignature {
    /// `hasAnyEndpoints`.
    pub has_any_endpoints: bool,
    /// Cluster set used, and non-empty.
    pub cluster: Option<bool>,
    /// Local set used, and non-empty.
    pub local: Option<bool>,
    /// Hint mode.
    pub topology: TopologyMode,
    /// Cluster fallback.
    pub cluster_fallback: bool,
    /// Local fallback.
    pub local_fallback: bool,
    /// Both sets are used and hold the same endpoints (then modes that pick different sets
    /// still agree).
    pub local_is_cluster: bool,
}

impl CategorizedEndpoints<'_> {
    /// `allReachableEndpoints`: the union of the cluster and local sets (sorted indices).
    pub fn all_reachable(&self) -> Vec<usize> {
        let mut all: Vec<usize> = self
            .cluster
            .iter()
            .chain(self.local.iter())
            .flat_map(|s| s.iter())
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The hint decisions, in order.
    pub fn hint_decisions(&self) -> impl Iterator<Item = &HintDecision> {
        self.hint_decisions.iter().flatten()
    }

    /// The verdict-deciding facts (see [`CategorySignature`]).
    pub fn signature(&self) -> CategorySignature {
        CategorySignature {
            has_any_endpoints: self.has_any_endpoints,
            cluster: self.cluster.as_ref().map(|s| !s.is_empty()),
            local: self.local.as_ref().map(|s| !s.is_empty()),
            topology: self.topology,
            cluster_fallback: self.cluster_fallback,
            local_fallback: self.local_fallback,
            local_is_cluster: matches!((&self.cluster, &self.local), (Some(c), Some(l)) if c == l),
        }
    }

    /// Detaches the sets from the index.
    pub fn into_owned(self) -> CategorizedEndpoints<'static> {
        CategorizedEndpoints {
            cluster: self.cluster.map(|c| Cow::Owned(c.into_owned())),
            local: self.local.map(|l| Cow::Owned(l.into_owned())),
            has_any_endpoints: self.has_any_endpoints,
            topology: self.topology,
            hint_decisions: self.hint_decisions,
            cluster_fallback: self.cluster_fallback,
            local_fallback: self.local_fallback,
        }
    }
}

/// Node-independent facts about one service port's endpoints, computed once.
#[derive(Debug, Clone)]
pub struct CategorizeIndex<'a> {
    endpoints: &'a [ProxyEndpoint],
    uses_cluster: bool,
    uses_local: bool,
    terminating_fallback: bool,
    hints_allowed: bool,
    zone_hints_enabled: bool,
    node_hints_enabled: bool,
    ready: Vec<usize>,
    serving_terminating: Vec<usize>,
    first_without_node_hint: Option<usize>,
    first_without_zone_hint: Option<usize>,
    ready_by_node_hint: HashMap<&'a str, Vec<usize>>,
    ready_by_zone_hint: HashMap<&'a str, Vec<usize>>,
    /// Per node name: (local ready, local serving-terminating).
    local_by_node: HashMap<&'a str, (Vec<usize>, Vec<usize>)>,
}

/// The node kube-proxy runs on, as kube-proxy knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyNode<'a> {
    /// kube-proxy's node name (`--hostname-override` or the host name).
    pub name: &'a str,
    /// The node's `topology.kubernetes.io/zone` label, `""` when absent.
    pub zone: &'a str,
}

impl<'a> CategorizeIndex<'a> {
    /// Precomputes the node-independent part of `CategorizeEndpoints`.
    pub fn new(endpoints: &'a [ProxyEndpoint], svc: &ServicePortInfo, features: &ProxyFeatures) -> Self {
        let hints_allowed = features.zone_hints
            && (!features.hints_need_annotation
                || svc
                    .hints_annotation
                    .as_deref()
                    .is_some_and(|v| !matches!(v, "" | "disabled" | "Disabled")));
        let mut idx = CategorizeIndex {
            endpoints,
            uses_cluster: svc.uses_cluster_endpoints(),
            uses_local: svc.uses_local_endpoints(),
            terminating_fallback: features.terminating_fallback,
            hints_allowed,
            zone_hints_enabled: features.zone_hints,
            node_hints_enabled: features.node_hints,
            ready: Vec::new(),
            serving_terminating: Vec::new(),
            first_without_node_hint: None,
            first_without_zone_hint: None,
            ready_by_node_hint: HashMap::new(),
            ready_by_zone_hint: HashMap::new(),
            local_by_node: HashMap::new(),
        };
        for (i, ep) in endpoints.iter().enumerate() {
            let usable_terminating =
                !ep.ready && ep.is_serving_terminating() && features.terminating_fallback;
            if ep.ready {
                idx.ready.push(i);
                if ep.node_hints.is_empty() {
                    idx.first_without_node_hint.get_or_insert(i);
                }
                if ep.zone_hints.is_empty() {
                    idx.first_without_zone_hint.get_or_insert(i);
                }
                for n in dedup(&ep.node_hints) {
                    idx.ready_by_node_hint.entry(n).or_default().push(i);
                }
                for z in dedup(&ep.zone_hints) {
                    idx.ready_by_zone_hint.entry(z).or_default().push(i);
                }
            } else if usable_terminating {
                idx.serving_terminating.push(i);
            }
            if let Some(node) = ep.node_name.as_deref().filter(|n| !n.is_empty()) {
                if ep.ready {
                    idx.local_by_node.entry(node).or_default().0.push(i);
                } else if usable_terminating {
                    idx.local_by_node.entry(node).or_default().1.push(i);
                }
            }
        }
        idx
    }

    /// The endpoints this index was built from.
    pub fn endpoints(&self) -> &'a [ProxyEndpoint] {
        self.endpoints
    }

    /// `hasAnyEndpoints`: node-independent.
    pub fn has_any_endpoints(&self) -> bool {
        !self.ready.is_empty() || !self.serving_terminating.is_empty()
    }

    /// Nodes that categorize differently from an anonymous node of their zone: nodes that
    /// host an endpoint or are named in a node hint.
    pub fn special_nodes(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.local_by_node
            .keys()
            .chain(self.ready_by_node_hint.keys())
            .copied()
    }

    /// `topologyModeFromHints` for a node, with the reasons (node decision, zone decision).
    fn topology_mode(&self, node: ProxyNode<'_>) -> (TopologyMode, [Option<HintDecision>; 2]) {
        if self.ready.is_empty() {
            return (TopologyMode::None, [Some(HintDecision::NoReadyEndpoints), None]);
        }
        if !self.hints_allowed {
            let why = if self.zone_hints_enabled {
                HintDecision::AnnotationRequired
            } else {
                HintDecision::HintsOff
            };
            return (TopologyMode::None, [Some(why), None]);
        }
        let mut node_decision = None;
        if !self.node_hints_enabled && !self.ready_by_node_hint.is_empty() {
            node_decision = Some(HintDecision::NodeHintsIgnored);
        }
        if self.node_hints_enabled {
            match self.first_without_node_hint {
                None if self.ready_by_node_hint.contains_key(node.name) => {
                    let applied = Some(HintDecision::Applied(TopologyMode::PreferSameNode));
                    return (TopologyMode::PreferSameNode, [applied, None]);
                }
                None => {
                    node_decision = Some(HintDecision::NoneForThisNode {
                        mode: TopologyMode::PreferSameNode,
                    })
                }
                Some(i) if !self.ready_by_node_hint.is_empty() => {
                    node_decision = Some(HintDecision::NotAllHinted {
                        mode: TopologyMode::PreferSameNode,
                        unhinted: i,
                    })
                }
                Some(_) => {}
            }
        }
        let zone_decision = match self.first_without_zone_hint {
            None if self.ready_by_zone_hint.contains_key(node.zone) => {
                let applied = Some(HintDecision::Applied(TopologyMode::PreferSameZone));
                return (TopologyMode::PreferSameZone, [node_decision, applied]);
            }
            None => Some(HintDecision::NoneForThisNode {
                mode: TopologyMode::PreferSameZone,
            }),
            Some(i) if !self.ready_by_zone_hint.is_empty() => Some(HintDecision::NotAllHinted {
                mode: TopologyMode::PreferSameZone,
                unhinted: i,
            }),
            Some(_) if node_decision.is_none() => Some(HintDecision::NoHints),
            Some(_) => None,
        };
        (TopologyMode::None, [node_decision, zone_decision])
    }

    /// `CategorizeEndpoints` for one node. Allocation-free: the sets borrow from the index.
    pub fn categorize(&self, node: ProxyNode<'_>) -> CategorizedEndpoints<'_> {
        let mut out = CategorizedEndpoints {
            cluster: None,
            local: None,
            has_any_endpoints: self.has_any_endpoints(),
            topology: TopologyMode::None,
            hint_decisions: [Some(HintDecision::NotConsidered), None],
            cluster_fallback: false,
            local_fallback: false,
        };
        if self.uses_cluster {
            let (mode, why) = self.topology_mode(node);
            out.topology = mode;
            out.hint_decisions = why;
            let filtered: &[usize] = match mode {
                TopologyMode::None => &self.ready,
                TopologyMode::PreferSameNode => {
                    self.ready_by_node_hint.get(node.name).map_or(&[], Vec::as_slice)
                }
                TopologyMode::PreferSameZone => {
                    self.ready_by_zone_hint.get(node.zone).map_or(&[], Vec::as_slice)
                }
            };
            if filtered.is_empty() && self.terminating_fallback && !self.serving_terminating.is_empty() {
                // No topology and no locality filter on the fallback (topology.go step 3.4).
                out.cluster = Some(Cow::Borrowed(&self.serving_terminating));
                out.cluster_fallback = true;
            } else {
                out.cluster = Some(Cow::Borrowed(filtered));
            }
        }
        if self.uses_local {
            let local = if node.name.is_empty() {
                None
            } else {
                self.local_by_node.get(node.name)
            };
            out.local = Some(Cow::Borrowed(match local {
                Some((ready, _)) if !ready.is_empty() => ready.as_slice(),
                Some((_, terminating)) if !terminating.is_empty() => {
                    out.local_fallback = true;
                    terminating.as_slice()
                }
                _ => &[],
            }));
        }
        out
    }
}

/// Distinct hint names of one endpoint, in order (a hint listed twice counts once).
fn dedup(names: &[String]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::with_capacity(names.len());
    for n in names {
        if !seen.contains(&n.as_str()) {
            seen.push(n);
        }
    }
    seen
}

/// `CategorizeEndpoints(endpoints, svcInfo, nodeName, topologyLabels)` for a single node.
///
/// Equivalent to `CategorizeIndex::new(..).categorize(node)`; use the index when asking
/// about many nodes.
pub fn categorize_endpoints(
    endpoints: &[ProxyEndpoint],
    svc: &ServicePortInfo,
    node: ProxyNode<'_>,
    features: &ProxyFeatures,
) -> CategorizedEndpoints<'static> {
    CategorizeIndex::new(endpoints, svc, features)
        .categorize(node)
        .into_owned()
}
