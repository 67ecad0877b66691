//! The simulated kube-proxy: one per node, a second implementation **independent of the
//! model's `proxy` module** (it never calls it), written from the upstream description
//! (docs/upstream.md §1–§2: `CategorizeEndpoints`, the iptables/nftables/ipvs proxiers).
//!
//! It reads Services, EndpointSlices and its own Node from its informers (the engine's shared,
//! versioned `ProxyInformer`) as they were a sync delay ago, and programs a [`RuleTable`] shaped like the chains kube-proxy
//! writes: per service port and IP family a REJECT entry when no endpoint is usable, a DROP
//! entry for a Local policy with no local endpoint, else the endpoint list of the cluster or
//! local chain, with the `externalTrafficPolicy: Local` short-circuit for pod and host sources.
//!
//! Its parts: the profiles and faults (`profile`), the endpoints read from slices and
//! `CategorizeEndpoints` (`endpoints`), the metrics endpoint (`metrics`) and the rule
//! table rendered as text (`render`).

mod endpoints;
mod metrics;
mod profile;
mod render;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use locality_model::dataplane::catalogue::Effect;
use locality_model::endpointslice::trafficdist::{PREFER_SAME_NODE, PREFER_SAME_ZONE};
use locality_model::featuregate::FeatureGates;
use locality_model::features::ProxyFeatures;
use locality_model::objects::{
    ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE, IpFamily, Protocol, Service, ServiceType,
    TrafficPolicy,
};
use locality_model::version::KubeVersion;

use crate::informer::ProxyInformer;
use crate::objects::Object;
use crate::time::Millis;

pub use endpoints::{EndpointCache, EndpointIndex};
pub use profile::{DataPlaneProfile, Fault, PlaneProfile, ProfileError, ProxyMode};

/// One endpoint of one service port, as the simulated kube-proxy read it from its slices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimEndpoint {
    /// `addresses[0]`.
    pub ip: IpAddr,
    /// Target port.
    pub port: u16,
    /// `nodeName`.
    pub node_name: Option<String>,
    /// `ready` (unset reads as true).
    pub ready: bool,
    /// `serving` (unset reads as true).
    pub serving: bool,
    /// `terminating` (unset reads as false).
    pub terminating: bool,
    /// `hints.forZones[].name`.
    pub zone_hints: BTreeSet<String>,
    /// `hints.forNodes[].name` (empty when this kube-proxy does not read node hints).
    pub node_hints: BTreeSet<String>,
    /// `targetRef` (namespace, name) of a Pod.
    pub pod: Option<(String, String)>,
}

impl fmt::Display for SimEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ip {
            IpAddr::V4(ip) => write!(f, "{ip}:{}", self.port),
            IpAddr::V6(ip) => write!(f, "[{ip}]:{}", self.port),
        }
    }
}

/// Which endpoint chain a rule jumps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainKind {
    /// `KUBE-SVC-…`: the cluster endpoints (hint-filtered).
    Cluster,
    /// `KUBE-SVL-…`: the node-local endpoints.
    Local,
}

/// What the programmed rules do with a new connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleTarget {
    /// Filter-table REJECT ("has no endpoints"): connection refused.
    Reject,
    /// Filter-table DROP ("has no local endpoints"): timeout.
    Drop,
    /// DNAT to one of these endpoints (indices into [`ServicePortRules::endpoints`]), uniformly.
    Endpoints {
        /// Which chain.
        chain: ChainKind,
        /// Endpoint indices (shared between the nodes that program the same set).
        endpoints: Arc<Vec<usize>>,
    },
    /// ipvs: a virtual server without real servers; the kernel answers port unreachable.
    NoRealServers,
    /// ipvs, ETP Local without local endpoint, from outside: forwarded without SNAT, the reply
    /// is lost (timeout).
    ReplyLost,
}

/// The rules of one service port in one IP family on one node.
#[derive(Debug, Clone, PartialEq)]
pub struct ServicePortRules {
    /// Service namespace.
    pub namespace: String,
    /// Service name.
    pub service: String,
    /// Port name (`""` when unnamed).
    pub port_name: String,
    /// Protocol.
    pub protocol: Protocol,
    /// Service port.
    pub port: u16,
    /// NodePort (0: none).
    pub node_port: u16,
    /// IP family.
    pub family: IpFamily,
    /// Cluster IP of this family.
    pub cluster_ip: Option<IpAddr>,
    /// External IPs of this family.
    pub external_ips: Vec<IpAddr>,
    /// Load-balancer VIPs of this family: `status.loadBalancer.ingress[].ip` whose `ipMode` is
    /// VIP (or unset); kube-proxy programs them like external IPs (upstream
    /// `ServicePort.LoadBalancerVIPs`). `ipMode: Proxy` ingresses are not programmed.
    pub lb_ips: Vec<IpAddr>,
    /// ITP Local honoured.
    pub internal_local: bool,
    /// ETP Local (externally accessible type).
    pub external_local: bool,
    /// All endpoints of this port and family, sorted by address (shared between nodes).
    pub endpoints: Arc<Vec<SimEndpoint>>,
    /// Some endpoint is ready or serving-terminating somewhere.
    pub has_endpoints: bool,
    /// The cluster set (`None`: not used by this port).
    pub cluster: Option<Arc<Vec<usize>>>,
    /// The local set (`None`: not used, or used and none usable).
    pub local: Option<Arc<Vec<usize>>>,
    /// Connections to the cluster IP (from any source).
    pub internal: RuleTarget,
    /// Connections to a NodePort or external IP arriving from outside the node.
    pub external: RuleTarget,
    /// Connections to a NodePort or external IP from a pod or the host of this node
    /// (ETP Local short-circuit to the cluster chain; else as `external`).
    pub external_from_node: RuleTarget,
    /// What a host-network client's connection to an external or load-balancer IP meets when
    /// it differs from `external_from_node` (ETP Local, no local endpoint): nftables' `Drop`
    /// (the `no-endpoint-services` check in `filter-output` comes before the DNAT); ipvs'
    /// `ReplyLost` (the address is bound on every node's kube-ipvs0, so the unmasqueraded
    /// reply of a remote endpoint never returns: kubernetes#93456, left open by #97081).
    pub host_external_ip: Option<RuleTarget>,
}

impl ServicePortRules {
    /// `ns/svc:port` (port name omitted when empty), as upstream's `ServicePortName.String()`.
    pub fn port_name_string(&self) -> String {
        if self.port_name.is_empty() {
            format!("{}/{}", self.namespace, self.service)
        } else {
            format!("{}/{}:{}", self.namespace, self.service, self.port_name)
        }
    }
    /// Endpoints a per-endpoint chain exists for (`allReachableEndpoints`), sorted.
    pub fn reachable(&self) -> Vec<usize> {
        let mut all: Vec<usize> = self
            .cluster
            .iter()
            .chain(self.local.iter())
            .flat_map(|set| set.iter())
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// A node's programmed rule table: service ports by (namespace, Service).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleTable {
    /// Entries, by (namespace, name) then port, then family.
    pub services: BTreeMap<(String, String), Vec<ServicePortRules>>,
}

impl RuleTable {
    /// All entries in order.
    pub fn entries(&self) -> impl Iterator<Item = &ServicePortRules> {
        self.services.values().flatten()
    }
}

/// The simulated kube-proxy of one node.
#[derive(Debug, Clone)]
pub struct SimKubeProxy {
    /// The Node it runs on.
    pub node: String,
    /// The node name it believes it has (differs under `hostname-mismatch`).
    pub identity: String,
    /// Its profile.
    pub profile: DataPlaneProfile,
    /// Its version's behaviours.
    pub features: ProxyFeatures,
    /// Lag between a change and its programming, in ms (sync delay, plus `stale-rules`).
    pub lag_ms: Millis,
    /// Position in the informer feed up to which events are applied (`None`: nothing read
    /// yet, a fresh start lists everything).
    pub(crate) applied: Option<usize>,
    /// The lowest informer position it may still read (for pruning old versions).
    pub(crate) floor: usize,
    /// Time of the pending sync, if any.
    pub(crate) next_sync: Option<Millis>,
    zone: String,
    table: RuleTable,
    last_sync: Option<Millis>,
    /// The syncs that applied state, by `kubeproxy_sync_proxy_rules_duration_seconds` bucket
    /// (see [`SYNC_DURATION_BUCKETS`]), and their summed duration in ms.
    sync_durations: ([u64; SYNC_DURATION_BUCKETS.len()], u64, Millis),
    no_local_internal: BTreeMap<IpFamily, usize>,
    no_local_external: BTreeMap<IpFamily, usize>,
}

/// The upper bounds (seconds) of `kubeproxy_sync_proxy_rules_duration_seconds`' buckets:
/// upstream `pkg/proxy/metrics` `SyncProxyRulesLatency`, `ExponentialBuckets(0.001, 2, 15)`.
pub const SYNC_DURATION_BUCKETS: [f64; 15] = [
    0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
];

impl SimKubeProxy {
    /// A simulated kube-proxy for `node`, with the given profile, version and sync delay, and
    /// the behaviours of that version under `gates` (kube-proxy's `--feature-gates`).
    pub fn new(
        node: &str,
        profile: DataPlaneProfile,
        version: KubeVersion,
        gates: &FeatureGates,
        sync_delay_ms: Millis,
    ) -> Self {
        let identity = match profile.fault {
            Some(Fault::HostnameMismatch) => format!("{node}.simulated-hostname-mismatch.invalid"),
            _ => node.to_string(),
        };
        let late = match profile.fault {
            Some(Fault::StaleRules { late_ms }) => late_ms,
            _ => 0,
        };
        SimKubeProxy {
            node: node.to_string(),
            identity,
            profile,
            features: ProxyFeatures::applying(version, gates),
            lag_ms: sync_delay_ms + late,
            applied: None,
            floor: 0,
            next_sync: None,
            zone: String::new(),
            table: RuleTable::default(),
            last_sync: None,
            sync_durations: ([0; SYNC_DURATION_BUCKETS.len()], 0, 0),
            no_local_internal: BTreeMap::new(),
            no_local_external: BTreeMap::new(),
        }
    }

    /// The programmed table.
    pub fn table(&self) -> &RuleTable {
        &self.table
    }

    /// Virtual time of the last sync that applied state (a fresh start's full sync, or one
    /// that reprogrammed a changed Service or a changed zone): the value of
    /// `kubeproxy_sync_proxy_rules_last_timestamp_seconds`. `None` before the first sync.
    pub fn last_sync(&self) -> Option<Millis> {
        self.last_sync
    }

    /// Position in the informer feed up to which its table is programmed (`None` before its
    /// first sync after a start).
    pub fn applied_position(&self) -> Option<usize> {
        self.applied
    }

    /// Its version (the minor release of its `kubernetes_build_info`).
    pub fn version(&self) -> KubeVersion {
        self.features.version
    }

    /// The zone it read from its own Node (`""` when unknown).
    pub fn zone(&self) -> &str {
        &self.zone
    }

    /// Applies the informer's events up to `position` and reprograms the rules of every
    /// Service they changed (all of them on a fresh start or when its Node's zone changed),
    /// then recomputes the metrics (upstream `Proxier.syncProxyRules`). Events that change
    /// nothing it programs (its own Node updated without a zone change) are consumed without
    /// a sync: the table, the metrics and [`SimKubeProxy::last_sync`] stay as they are.
    pub(crate) fn sync(
        &mut self,
        now: Millis,
        position: usize,
        informer: &ProxyInformer,
        cache: &mut EndpointCache,
    ) {
        let zone = informer.zone(&self.identity, position);
        let dirty: Vec<_> = match self.applied {
            Some(from) if zone == self.zone => informer.touched(from, position),
            _ => informer.all().collect(),
        };
        if self.applied.is_some() && zone == self.zone && dirty.is_empty() {
            self.applied = Some(position);
            self.floor = position;
            return;
        }
        if zone != self.zone {
            self.zone = zone.to_string();
        }
        for id in dirty {
            let key = informer.key(id);
            let view = informer.view(id, position);
            let rules = match view.and_then(|v| Some((v.service.as_ref()?.as_service()?, v))) {
                Some((svc, v)) => {
                    let slices: Vec<&Arc<Object>> = v.slices.values().collect();
                    self.program_service(svc, &slices, cache)
                }
                None => Vec::new(),
            };
            if rules.is_empty() {
                self.table.services.remove(key);
            } else {
                self.table.services.insert(key.clone(), rules);
            }
        }
        self.applied = Some(position);
        self.floor = position;
        self.no_local_internal.clear();
        self.no_local_external.clear();
        let ipvs = self.profile.mode == ProxyMode::Ipvs;
        // ipvs counts Services (a set of names), iptables/nftables count service ports.
        let mut ipvs_int: BTreeSet<(IpFamily, &str, &str)> = BTreeSet::new();
        let mut ipvs_ext: BTreeSet<(IpFamily, &str, &str)> = BTreeSet::new();
        for e in self.table.entries() {
            let no_local = e.local.as_ref().is_none_or(|l| l.is_empty());
            let int = e.has_endpoints && e.internal_local && no_local;
            let ext = e.has_endpoints && e.external_local && no_local;
            if ipvs {
                if int {
                    ipvs_int.insert((e.family, &e.namespace, &e.service));
                }
                if ext {
                    ipvs_ext.insert((e.family, &e.namespace, &e.service));
                }
            } else {
                *self.no_local_internal.entry(e.family).or_default() += usize::from(int);
                *self.no_local_external.entry(e.family).or_default() += usize::from(ext);
            }
        }
        for (fam, _, _) in ipvs_int {
            *self.no_local_internal.entry(fam).or_default() += 1;
        }
        for (fam, _, _) in ipvs_ext {
            *self.no_local_external.entry(fam).or_default() += 1;
        }
        self.last_sync = Some(now);
        // The sync applied the events up to one lag ago: it is as if it had started then (a
        // real sync applies what was pending at its start), so its duration is the lag.
        let (buckets, count, sum) = &mut self.sync_durations;
        for (b, le) in buckets.iter_mut().zip(SYNC_DURATION_BUCKETS) {
            *b += u64::from(self.lag_ms as f64 <= le * 1000.0);
        }
        *count += 1;
        *sum += self.lag_ms;
    }

    /// The rules of every port and family of one Service.
    fn program_service(
        &self,
        svc: &Service,
        slices: &[&Arc<Object>],
        cache: &mut EndpointCache,
    ) -> Vec<ServicePortRules> {
        if svc.type_ == ServiceType::ExternalName || svc.headless {
            return Vec::new();
        }
        let mut ports = svc.ports.clone();
        ports.sort();
        let mut read = Vec::new();
        for port in &ports {
            for family in svc.families() {
                let endpoints = cache.get_or_read(slices, port, family, self.features.node_hints);
                read.push((port, family, endpoints));
            }
        }
        // A simulated data plane with the catalogue's `PreferSameCommitsToIncompatibleLocal`
        // divergence (Cilium, cilium/cilium#45214) commits to its node (PreferSameNode) or
        // zone (PreferSameZone) when an endpoint of the Service is there, whatever its port
        // and family: a port and family without a ready endpoint there has no backend.
        let near = |index: &EndpointIndex| match svc.traffic_distribution.as_deref() {
            Some(PREFER_SAME_NODE) => index.has_ready_on(&self.identity),
            Some(PREFER_SAME_ZONE) => index.has_ready_for_zone(&self.zone),
            _ => false,
        };
        let commits = self
            .profile
            .diverges(Effect::PreferSameCommitsToIncompatibleLocal)
            && read.iter().any(|(_, _, index)| near(index));
        read.into_iter()
            .map(|(port, family, index)| {
                let none_near = commits && !near(&index);
                self.program_port(svc, port, family, index, none_near)
            })
            .collect()
    }

    fn program_port(
        &self,
        svc: &Service,
        port: &locality_model::objects::ServicePort,
        family: IpFamily,
        index: Arc<EndpointIndex>,
        none_near: bool,
    ) -> ServicePortRules {
        let of_family = |ips: &[IpAddr]| -> Vec<IpAddr> {
            ips.iter()
                .copied()
                .filter(|ip| IpFamily::of(ip) == family)
                .collect()
        };
        let cluster_ip = svc
            .cluster_ips
            .iter()
            .copied()
            .find(|ip| IpFamily::of(ip) == family);
        let external_ips = of_family(&svc.external_ips);
        let lb_vips: Vec<IpAddr> = svc
            .load_balancer_ingress
            .iter()
            .filter(|i| i.ip_mode.as_deref().is_none_or(|m| m == "VIP"))
            .filter_map(|i| i.ip)
            .filter(|ip| IpFamily::of(ip) == family)
            .collect();
        let type_external = matches!(svc.type_, ServiceType::NodePort | ServiceType::LoadBalancer)
            || (svc.type_ == ServiceType::ClusterIP && !svc.external_ips.is_empty());
        let node_port = if matches!(svc.type_, ServiceType::NodePort | ServiceType::LoadBalancer) {
            port.node_port
        } else {
            0
        };
        let externally_accessible = node_port != 0 || !external_ips.is_empty() || !lb_vips.is_empty();
        let internal_local = self.features.internal_traffic_policy
            && svc.internal_traffic_policy == Some(TrafficPolicy::Local);
        let external_local = type_external && svc.external_traffic_policy == Some(TrafficPolicy::Local);
        let uses_cluster = !internal_local || externally_accessible;
        let uses_local = internal_local || (external_local && externally_accessible);

        // A simulated data plane that ignores topology without its setting (Cilium without
        // enable-service-topology) reads no hints at all.
        let hints_allowed = !self.profile.diverges(Effect::TopologyIgnoredWithoutSetting)
            && (!self.features.hints_need_annotation || {
                let a = svc
                    .meta
                    .annotations
                    .get(ANNOTATION_TOPOLOGY_AWARE_HINTS)
                    .or_else(|| svc.meta.annotations.get(ANNOTATION_TOPOLOGY_MODE));
                a.is_some_and(|v| !matches!(v.as_str(), "" | "disabled" | "Disabled"))
            });
        let mut sets = self.categorize(&index, uses_cluster, uses_local, hints_allowed);
        if none_near {
            sets.cluster = sets.cluster.map(|_| Arc::default());
        }
        // A simulated data plane that never falls back to the node's serving-terminating
        // endpoints under ETP Local (Cilium, cilium/cilium#37613): without a ready local
        // endpoint the local set is empty, so external traffic to the node drops.
        if external_local
            && !internal_local
            && !index.has_ready_on(&self.identity)
            && self.profile.diverges(Effect::EtpLocalNoTerminatingFallback)
        {
            sets.local = sets.local.map(|_| Arc::default());
        }
        let local_nonempty = sets.local.as_ref().is_some_and(|l| !l.is_empty());
        let cluster_target = |set: &Option<Arc<Vec<usize>>>| match set {
            Some(c) if !c.is_empty() => RuleTarget::Endpoints {
                chain: ChainKind::Cluster,
                endpoints: c.clone(),
            },
            _ => RuleTarget::Reject,
        };
        let local_target = || RuleTarget::Endpoints {
            chain: ChainKind::Local,
            endpoints: sets.local.clone().unwrap_or_default(),
        };
        // `ignores-local-policy`, or a simulated data plane that ignores ITP Local (Calico
        // eBPF before 3.27, kube-router before 2.1).
        // `ignores-local-policy:always`: every ready endpoint, a local one or not.
        let spreads_local = matches!(self.profile.fault, Some(Fault::IgnoresLocalPolicyAlways));
        let ignores_local = matches!(self.profile.fault, Some(Fault::IgnoresLocalPolicy))
            || spreads_local
            || self.profile.diverges(Effect::ItpLocalIgnored);
        // A simulated data plane that applies ETP Local to the cluster IP (kube-router before
        // 2.1): a cluster-IP connection uses the local endpoints, and drops without one.
        let etp_restricts_cluster_ip =
            external_local && !internal_local && self.profile.diverges(Effect::EtpLocalRestrictsClusterIp);
        let (internal, external, external_from_node, host_external_ip);
        if self.profile.mode == ProxyMode::Ipvs {
            let no_rs = |t: RuleTarget| {
                if t == RuleTarget::Reject {
                    RuleTarget::NoRealServers
                } else {
                    t
                }
            };
            internal = if !sets.has_any {
                RuleTarget::NoRealServers
            } else if internal_local && spreads_local {
                no_rs(cluster_target(&sets.cluster_for_fault))
            } else if internal_local && local_nonempty {
                local_target()
            } else if internal_local && ignores_local {
                no_rs(cluster_target(&sets.cluster_for_fault))
            } else if etp_restricts_cluster_ip {
                if local_nonempty {
                    local_target()
                } else {
                    RuleTarget::ReplyLost
                }
            } else {
                no_rs(cluster_target(&sets.cluster))
            };
            external = if !sets.has_any {
                RuleTarget::NoRealServers
            } else if external_local && local_nonempty {
                local_target()
            } else if external_local {
                RuleTarget::ReplyLost
            } else {
                no_rs(cluster_target(&sets.cluster))
            };
            external_from_node = if !sets.has_any {
                RuleTarget::NoRealServers
            } else if external_local && local_nonempty {
                local_target()
            } else {
                no_rs(cluster_target(&sets.cluster))
            };
            host_external_ip =
                (sets.has_any && external_local && !local_nonempty).then_some(RuleTarget::ReplyLost);
        } else {
            internal = if !sets.has_any {
                RuleTarget::Reject
            } else if internal_local && spreads_local {
                cluster_target(&sets.cluster_for_fault)
            } else if internal_local && local_nonempty {
                local_target()
            } else if internal_local && ignores_local {
                cluster_target(&sets.cluster_for_fault)
            } else if internal_local {
                RuleTarget::Drop
            } else if etp_restricts_cluster_ip {
                if local_nonempty {
                    local_target()
                } else {
                    RuleTarget::Drop
                }
            } else {
                cluster_target(&sets.cluster)
            };
            external = if !sets.has_any {
                RuleTarget::Reject
            } else if external_local && local_nonempty {
                local_target()
            } else if external_local {
                RuleTarget::Drop
            } else {
                cluster_target(&sets.cluster)
            };
            // KUBE-EXT-…: pod-sourced and host-sourced traffic short-circuits to the cluster chain.
            external_from_node = if !sets.has_any {
                RuleTarget::Reject
            } else {
                cluster_target(&sets.cluster)
            };
            host_external_ip = (self.profile.mode == ProxyMode::Nftables
                && sets.has_any
                && external_local
                && !local_nonempty)
                .then_some(RuleTarget::Drop);
        }
        ServicePortRules {
            namespace: svc.meta.namespace.clone(),
            service: svc.meta.name.clone(),
            port_name: port.name.clone(),
            protocol: port.protocol,
            port: port.port,
            node_port,
            family,
            cluster_ip,
            external_ips,
            lb_ips: lb_vips,
            internal_local,
            external_local,
            endpoints: index.endpoints.clone(),
            has_endpoints: sets.has_any,
            cluster: sets.cluster,
            local: sets.local,
            internal,
            external,
            external_from_node,
            host_external_ip,
        }
    }
}
