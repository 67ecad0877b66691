//! The endpoints of a service port as the simulated kube-proxy reads them from its
//! EndpointSlices (shared between nodes), and its `CategorizeEndpoints`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

use locality_model::objects::{AddressType, IpFamily, Protocol};

use locality_model::dataplane::catalogue::Effect;

use super::{Fault, SimEndpoint, SimKubeProxy};
use crate::objects::Object;

/// Endpoints read from slices, shared by every simulated kube-proxy: the same slice objects
/// (the same `Arc`s from the informer) are parsed and indexed once, not once per node.
#[derive(Debug, Clone, Default)]
pub struct EndpointCache {
    map: HashMap<CacheKey, CacheEntry>,
}

/// Slice object addresses, port name, protocol, family, node hints read.
type CacheKey = (Vec<usize>, String, Protocol, IpFamily, bool);
/// The slice objects (kept alive so their addresses stay unique) and the endpoints read.
type CacheEntry = (Vec<Arc<Object>>, Arc<EndpointIndex>);

impl EndpointCache {
    /// Entries kept before the cache is emptied (it holds the slice objects alive).
    const LIMIT: usize = 4096;

    pub(super) fn get_or_read(
        &mut self,
        slices: &[&Arc<Object>],
        port: &locality_model::objects::ServicePort,
        family: IpFamily,
        node_hints: bool,
    ) -> Arc<EndpointIndex> {
        let key: CacheKey = (
            slices.iter().map(|a| Arc::as_ptr(a) as usize).collect(),
            port.name.clone(),
            port.protocol,
            family,
            node_hints,
        );
        if let Some((_, index)) = self.map.get(&key) {
            return index.clone();
        }
        if self.map.len() >= Self::LIMIT {
            self.map.clear();
        }
        let objects: Vec<&Object> = slices.iter().map(|a| &***a).collect();
        let index = Arc::new(EndpointIndex::new(read_endpoints(
            &objects, port, family, node_hints,
        )));
        self.map.insert(
            key,
            (slices.iter().map(|a| (*a).clone()).collect(), index.clone()),
        );
        index
    }
}

/// The endpoints of one service port and family, with the node-independent part of
/// categorization done once: the ready and serving-terminating sets, both by node, and the
/// ready endpoints by zone and node hint. Each node's categorization is then a few lookups.
#[derive(Debug, Default)]
pub struct EndpointIndex {
    /// The endpoints, sorted by address.
    pub endpoints: Arc<Vec<SimEndpoint>>,
    ready: Arc<Vec<usize>>,
    serving_terminating: Arc<Vec<usize>>,
    ready_on: HashMap<String, Arc<Vec<usize>>>,
    serving_terminating_on: HashMap<String, Arc<Vec<usize>>>,
    every_ready_zone_hinted: bool,
    every_ready_node_hinted: bool,
    ready_for_zone: HashMap<String, Arc<Vec<usize>>>,
    ready_for_node: HashMap<String, Arc<Vec<usize>>>,
}

impl EndpointIndex {
    fn new(endpoints: Vec<SimEndpoint>) -> Self {
        fn group<'a>(pairs: impl Iterator<Item = (&'a str, usize)>) -> HashMap<String, Arc<Vec<usize>>> {
            let mut m: HashMap<&str, Vec<usize>> = HashMap::new();
            for (k, i) in pairs {
                m.entry(k).or_default().push(i);
            }
            m.into_iter().map(|(k, v)| (k.to_string(), Arc::new(v))).collect()
        }
        let eps = &endpoints;
        let ready: Vec<usize> = (0..eps.len()).filter(|&i| eps[i].ready).collect();
        let st: Vec<usize> = (0..eps.len())
            .filter(|&i| eps[i].serving && eps[i].terminating)
            .collect();
        let on = |set: &[usize]| {
            group(
                set.iter()
                    .filter_map(|&i| eps[i].node_name.as_deref().map(|n| (n, i))),
            )
        };
        let index = EndpointIndex {
            ready_on: on(&ready),
            serving_terminating_on: on(&st),
            every_ready_zone_hinted: ready.iter().all(|&i| !eps[i].zone_hints.is_empty()),
            every_ready_node_hinted: ready.iter().all(|&i| !eps[i].node_hints.is_empty()),
            ready_for_zone: group(
                ready
                    .iter()
                    .flat_map(|&i| eps[i].zone_hints.iter().map(move |z| (z.as_str(), i))),
            ),
            ready_for_node: group(
                ready
                    .iter()
                    .flat_map(|&i| eps[i].node_hints.iter().map(move |n| (n.as_str(), i))),
            ),
            ready: Arc::new(ready),
            serving_terminating: Arc::new(st),
            endpoints: Arc::new(Vec::new()),
        };
        EndpointIndex {
            endpoints: Arc::new(endpoints),
            ..index
        }
    }
}

/// The endpoints of one service port and family from a Service's slices (upstream
/// `endpointslicecache.go`: address type of the family, the slice port with the same name
/// and protocol, `addresses[0]`, a non-terminating duplicate wins; node hints only read when
/// kube-proxy has `PreferSameTrafficDistribution`).
fn read_endpoints(
    slices: &[&Object],
    port: &locality_model::objects::ServicePort,
    family: IpFamily,
    node_hints: bool,
) -> Vec<SimEndpoint> {
    let want = match family {
        IpFamily::IPv4 => AddressType::IPv4,
        IpFamily::IPv6 => AddressType::IPv6,
    };
    let mut by_addr: BTreeMap<(IpAddr, u16), SimEndpoint> = BTreeMap::new();
    for slice in slices.iter().filter_map(|o| o.as_endpoint_slice()) {
        if slice.address_type != want {
            continue;
        }
        let Some(number) = slice
            .ports
            .iter()
            .find(|p| {
                p.name.as_deref() == Some(port.name.as_str())
                    && p.protocol.unwrap_or(Protocol::TCP) == port.protocol
            })
            .and_then(|p| p.port)
            .filter(|n| *n != 0)
        else {
            continue;
        };
        for ep in &slice.endpoints {
            let Some(&ip) = ep.addresses.first() else { continue };
            let hints = ep.hints.as_ref();
            let e = SimEndpoint {
                ip,
                port: number,
                node_name: ep.node_name.clone(),
                ready: ep.conditions.ready.unwrap_or(true),
                serving: ep.conditions.serving.unwrap_or(true),
                terminating: ep.conditions.terminating.unwrap_or(false),
                zone_hints: hints
                    .map(|h| h.for_zones.iter().cloned().collect())
                    .unwrap_or_default(),
                node_hints: if node_hints {
                    hints
                        .map(|h| h.for_nodes.iter().cloned().collect())
                        .unwrap_or_default()
                } else {
                    BTreeSet::new()
                },
                pod: ep
                    .target_ref
                    .as_ref()
                    .filter(|(kind, _, _)| kind == "Pod")
                    .map(|(_, ns, name)| (ns.clone(), name.clone())),
            };
            let key = (ip, number);
            if !by_addr.contains_key(&key) || !e.terminating {
                by_addr.insert(key, e);
            }
        }
    }
    by_addr.into_values().collect()
}

impl EndpointIndex {
    /// Whether a ready endpoint is on `node`.
    pub(super) fn has_ready_on(&self, node: &str) -> bool {
        self.ready_on.contains_key(node)
    }

    /// Whether a ready endpoint is hinted for `zone`.
    pub(super) fn has_ready_for_zone(&self, zone: &str) -> bool {
        self.ready_for_zone.contains_key(zone)
    }
}

impl SimKubeProxy {
    /// `CategorizeEndpoints`, written afresh from docs/upstream.md §1.2–§1.3: the cluster
    /// set is the ready endpoints the topology mode admits (all of them without hints), else
    /// the serving-terminating ones; the local set is the ready endpoints on this node, else
    /// its serving-terminating ones.
    pub(super) fn categorize(
        &self,
        index: &EndpointIndex,
        uses_cluster: bool,
        uses_local: bool,
        hints_allowed: bool,
    ) -> Sets {
        let fallback = self.features.terminating_fallback
            && !matches!(self.profile.fault, Some(Fault::NoTerminatingFallback));
        let has_any = !index.ready.is_empty() || (fallback && !index.serving_terminating.is_empty());
        let cluster_set = || {
            let hinted = if hints_allowed { self.hinted(index) } else { None };
            match hinted {
                Some(set) => set,
                None if !index.ready.is_empty() => index.ready.clone(),
                None if fallback => index.serving_terminating.clone(),
                None => Arc::default(),
            }
        };
        let cluster = uses_cluster.then(cluster_set);
        let cluster_for_fault = if uses_cluster {
            cluster.clone()
        } else {
            Some(cluster_set())
        };
        let local = if uses_local {
            let on = |m: &HashMap<String, Arc<Vec<usize>>>| m.get(&self.identity).cloned();
            on(&index.ready_on).or_else(|| {
                if fallback {
                    on(&index.serving_terminating_on)
                } else {
                    None
                }
            })
        } else {
            None
        };
        Sets {
            cluster,
            cluster_for_fault,
            local,
            has_any,
        }
    }

    /// `topologyModeFromHints`: node hints first (when read), then zone hints, over the ready
    /// endpoints only; each mode needs every ready endpoint hinted and one hinted for us. The
    /// ready endpoints the chosen mode admits, `None` without a mode.
    ///
    /// A simulated data plane with the catalogue's `ZoneHintsNoFallback` divergence (Cilium
    /// 1.18.0, cilium/cilium#41022) keeps the zone mode when no endpoint is hinted for its
    /// zone: the set is empty (the connection is refused) instead of every endpoint.
    fn hinted(&self, index: &EndpointIndex) -> Option<Arc<Vec<usize>>> {
        if index.ready.is_empty() {
            return None;
        }
        if self.features.node_hints
            && index.every_ready_node_hinted
            && let Some(set) = index.ready_for_node.get(&self.identity)
        {
            return Some(set.clone());
        }
        if self.features.zone_hints && index.every_ready_zone_hinted {
            return match index.ready_for_zone.get(&self.zone) {
                Some(set) => Some(set.clone()),
                None if self.profile.diverges(Effect::ZoneHintsNoFallback) => Some(Arc::default()),
                None => None,
            };
        }
        None
    }
}

/// Result of categorization.
pub(super) struct Sets {
    pub(super) cluster: Option<Arc<Vec<usize>>>,
    /// The cluster set even where the port does not use it (for `ignores-local-policy`).
    pub(super) cluster_for_fault: Option<Arc<Vec<usize>>>,
    pub(super) local: Option<Arc<Vec<usize>>>,
    pub(super) has_any: bool,
}
