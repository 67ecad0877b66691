//! The simulated kube-proxy: one per node, a second implementation **independent of the
//! model's `proxy` module** (it never calls it), written from the upstream description
//! (docs/upstream.md §1–§2: `CategorizeEndpoints`, the iptables/nftables/ipvs proxiers).
//!
//! It reads Services, EndpointSlices and its own Node from its informers (the engine's shared,
//! versioned [`ProxyInformer`]) as they were a sync delay ago, and programs a [`RuleTable`] shaped like the chains kube-proxy
//! writes: per service port and IP family a REJECT entry when no endpoint is usable, a DROP
//! entry for a Local policy with no local endpoint, else the endpoint list of the cluster or
//! local chain, with the `externalTrafficPolicy: Local` short-circuit for pod and host sources.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Write as _};
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;

use locality_model::objects::{
    ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE, AddressType, IpFamily, Protocol, Service,
    ServiceType, TrafficPolicy,
};
use locality_model::version::{KubeVersion, ProxyFeatures};

use crate::informer::ProxyInformer;
use crate::objects::Object;
use crate::time::{Millis, rfc3339, unix_seconds};

/// The simulated kube-proxy's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProxyMode {
    /// iptables.
    Iptables,
    /// nftables.
    Nftables,
    /// ipvs.
    Ipvs,
}

impl ProxyMode {
    /// What `/proxyMode` answers.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Iptables => "iptables",
            ProxyMode::Nftables => "nftables",
            ProxyMode::Ipvs => "ipvs",
        }
    }
}

/// A simulated data-plane fault (docs/design.md §8.1): what a `verify` run must catch.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Uses cluster endpoints when ITP Local has no local endpoint.
    IgnoresLocalPolicy,
    /// Applies endpoint changes `late_ms` later than a conformant kube-proxy.
    StaleRules {
        /// Extra lag in ms.
        late_ms: Millis,
    },
    /// kube-proxy's node name differs from the Node's: nothing is local, no zone is known.
    HostnameMismatch,
    /// Never falls back to serving-terminating endpoints (KEP-1669), as kube-proxy before
    /// 1.26 or with `ProxyTerminatingEndpoints=false`, or a replacement that lacks it: a
    /// Local Service whose only local endpoint is terminating drops.
    NoTerminatingFallback,
    /// Masquerades every external connection to the node's address, `externalTrafficPolicy:
    /// Local` included: the client's source IP is lost (as a replacement data plane in an
    /// SNAT load-balancing mode would).
    MasqueradesExternal,
    /// Loses `fraction` of connections at random (seeded).
    Lossy {
        /// Fraction in `[0, 1]`.
        fraction: f64,
    },
    /// A kube-proxy replacement: routes like kube-proxy, has no metrics endpoint on 10249.
    Other {
        /// Its name (e.g. `cilium`).
        name: String,
    },
}

/// The data-plane profile of a simulated node: a proxy mode and at most one fault.
#[derive(Debug, Clone, PartialEq)]
pub struct DataPlaneProfile {
    /// Proxy mode (rules shape, DROP/REJECT semantics).
    pub mode: ProxyMode,
    /// Fault, `None` for a conformant kube-proxy.
    pub fault: Option<Fault>,
}

impl Default for DataPlaneProfile {
    fn default() -> Self {
        DataPlaneProfile {
            mode: ProxyMode::Iptables,
            fault: None,
        }
    }
}

/// Error for a profile name the simulation does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown simulated data-plane profile {0:?}: expected kube-proxy[:iptables|nftables|ipvs], \
     ignores-local-policy, stale-rules[:SECONDS], hostname-mismatch, no-terminating-fallback, masquerades-external, lossy[:FRACTION] or other[:NAME]"
)]
pub struct ProfileError(pub String);

impl FromStr for DataPlaneProfile {
    type Err = ProfileError;

    /// `kube-proxy`, `kube-proxy:nftables`, `ipvs`, `ignores-local-policy`, `stale-rules:5`,
    /// `hostname-mismatch`, `no-terminating-fallback`, `masquerades-external`, `lossy:0.3`, `other:cilium`. A fault may name a mode after a `+`:
    /// `stale-rules:5+nftables`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ProfileError(s.to_string());
        let (main, mode) = match s.split_once('+') {
            Some((m, mode)) => (m, Some(mode)),
            None => (s, None),
        };
        let parse_mode = |m: &str| match m {
            "iptables" => Ok(ProxyMode::Iptables),
            "nftables" => Ok(ProxyMode::Nftables),
            "ipvs" => Ok(ProxyMode::Ipvs),
            _ => Err(err()),
        };
        let (name, arg) = match main.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (main.trim(), None),
        };
        let mut profile = DataPlaneProfile::default();
        match (name, arg) {
            ("kube-proxy", None) => {}
            ("kube-proxy", Some(m)) => profile.mode = parse_mode(m)?,
            ("iptables" | "nftables" | "ipvs", None) => profile.mode = parse_mode(name)?,
            ("ignores-local-policy", None) => profile.fault = Some(Fault::IgnoresLocalPolicy),
            ("hostname-mismatch", None) => profile.fault = Some(Fault::HostnameMismatch),
            ("no-terminating-fallback", None) => profile.fault = Some(Fault::NoTerminatingFallback),
            ("masquerades-external", None) => profile.fault = Some(Fault::MasqueradesExternal),
            ("stale-rules", a) => {
                let secs: f64 = a.map_or(Ok(10.0), str::parse).map_err(|_| err())?;
                if !(secs.is_finite() && secs >= 0.0) {
                    return Err(err());
                }
                profile.fault = Some(Fault::StaleRules {
                    late_ms: (secs * 1000.0).round() as Millis,
                });
            }
            ("lossy", a) => {
                let fraction: f64 = a.map_or(Ok(0.3), str::parse).map_err(|_| err())?;
                if !(0.0..=1.0).contains(&fraction) {
                    return Err(err());
                }
                profile.fault = Some(Fault::Lossy { fraction });
            }
            ("other", a) => {
                profile.fault = Some(Fault::Other {
                    name: a
                        .filter(|a| !a.is_empty())
                        .unwrap_or("kube-proxy-replacement")
                        .to_string(),
                });
            }
            _ => return Err(err()),
        }
        if let Some(m) = mode {
            profile.mode = parse_mode(m)?;
        }
        Ok(profile)
    }
}

impl fmt::Display for DataPlaneProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.fault {
            None => return write!(f, "kube-proxy:{}", self.mode.as_str()),
            Some(Fault::IgnoresLocalPolicy) => f.write_str("ignores-local-policy")?,
            Some(Fault::HostnameMismatch) => f.write_str("hostname-mismatch")?,
            Some(Fault::NoTerminatingFallback) => f.write_str("no-terminating-fallback")?,
            Some(Fault::MasqueradesExternal) => f.write_str("masquerades-external")?,
            Some(Fault::StaleRules { late_ms }) => write!(f, "stale-rules:{}", *late_ms as f64 / 1000.0)?,
            Some(Fault::Lossy { fraction }) => write!(f, "lossy:{fraction}")?,
            Some(Fault::Other { name }) => write!(f, "other:{name}")?,
        }
        if self.mode != ProxyMode::Iptables {
            write!(f, "+{}", self.mode.as_str())?;
        }
        Ok(())
    }
}

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
    /// nftables: a host client to an external IP hits the `no-endpoint-services` drop.
    pub host_external_ip_drop: bool,
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
    no_local_internal: BTreeMap<IpFamily, usize>,
    no_local_external: BTreeMap<IpFamily, usize>,
}

impl SimKubeProxy {
    /// A simulated kube-proxy for `node`, with the given profile, version and sync delay.
    pub fn new(node: &str, profile: DataPlaneProfile, version: KubeVersion, sync_delay_ms: Millis) -> Self {
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
            features: ProxyFeatures::at(version),
            lag_ms: sync_delay_ms + late,
            applied: None,
            floor: 0,
            next_sync: None,
            zone: String::new(),
            table: RuleTable::default(),
            last_sync: None,
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
        let mut out = Vec::new();
        for port in &ports {
            for family in svc.families() {
                let endpoints = cache.get_or_read(slices, port, family, self.features.node_hints);
                out.push(self.program_port(svc, port, family, endpoints));
            }
        }
        out
    }

    fn program_port(
        &self,
        svc: &Service,
        port: &locality_model::objects::ServicePort,
        family: IpFamily,
        index: Arc<EndpointIndex>,
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

        let hints_allowed = !self.features.hints_need_annotation || {
            let a = svc
                .meta
                .annotations
                .get(ANNOTATION_TOPOLOGY_AWARE_HINTS)
                .or_else(|| svc.meta.annotations.get(ANNOTATION_TOPOLOGY_MODE));
            a.is_some_and(|v| !matches!(v.as_str(), "" | "disabled" | "Disabled"))
        };
        let sets = self.categorize(&index, uses_cluster, uses_local, hints_allowed);
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
        let ignores_local = matches!(self.profile.fault, Some(Fault::IgnoresLocalPolicy));
        let (internal, external, external_from_node, host_external_ip_drop);
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
            } else if internal_local && local_nonempty {
                local_target()
            } else if internal_local && ignores_local {
                no_rs(cluster_target(&sets.cluster_for_fault))
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
            host_external_ip_drop = false;
        } else {
            internal = if !sets.has_any {
                RuleTarget::Reject
            } else if internal_local && local_nonempty {
                local_target()
            } else if internal_local && ignores_local {
                cluster_target(&sets.cluster_for_fault)
            } else if internal_local {
                RuleTarget::Drop
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
            host_external_ip_drop =
                self.profile.mode == ProxyMode::Nftables && sets.has_any && external_local && !local_nonempty;
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
            host_external_ip_drop,
        }
    }
}

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

    fn get_or_read(
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

impl SimKubeProxy {
    /// `CategorizeEndpoints`, written afresh from docs/upstream.md §1.2–§1.3: the cluster
    /// set is the ready endpoints the topology mode admits (all of them without hints), else
    /// the serving-terminating ones; the local set is the ready endpoints on this node, else
    /// its serving-terminating ones.
    fn categorize(
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
                Some(set) => set.clone(),
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
    fn hinted<'a>(&self, index: &'a EndpointIndex) -> Option<&'a Arc<Vec<usize>>> {
        if index.ready.is_empty() {
            return None;
        }
        if self.features.node_hints
            && index.every_ready_node_hinted
            && let Some(set) = index.ready_for_node.get(&self.identity)
        {
            return Some(set);
        }
        if self.features.zone_hints && index.every_ready_zone_hinted {
            return index.ready_for_zone.get(&self.zone);
        }
        None
    }

    /// The metrics endpoint text (`127.0.0.1:10249/metrics`), `None` for an `other` data
    /// plane (no kube-proxy metrics). Metric families in name order, as the Prometheus client
    /// writes them:
    /// - `kubeproxy_sync_proxy_rules_endpoint_changes_pending`: `endpoint_changes_pending`,
    ///   the EndpointSlice changes its informer received that no sync has applied yet (see
    ///   [`crate::Engine::endpoint_changes_pending`]);
    /// - `kubeproxy_sync_proxy_rules_last_timestamp_seconds`: [`SimKubeProxy::last_sync`] as
    ///   Unix seconds (0 before the first sync);
    /// - `kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family,traffic_policy}`;
    /// - `kubernetes_build_info{build_date,compiler,git_commit,git_tree_state,git_version,
    ///   go_version,major,minor,platform} 1`, `git_version` its version with patch `.0`
    ///   (see [`build_info_labels`]).
    pub fn metrics_text(&self, endpoint_changes_pending: usize) -> Option<String> {
        if matches!(self.profile.fault, Some(Fault::Other { .. })) {
            return None;
        }
        let mut s = String::new();
        s.push_str(
            "# HELP kubeproxy_sync_proxy_rules_endpoint_changes_pending [ALPHA] Pending proxy rules Endpoint changes\n\
             # TYPE kubeproxy_sync_proxy_rules_endpoint_changes_pending gauge\n",
        );
        let _ = writeln!(
            s,
            "kubeproxy_sync_proxy_rules_endpoint_changes_pending {endpoint_changes_pending}"
        );
        s.push_str(
            "# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds [ALPHA] The last time proxy rules were successfully synced\n\
             # TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge\n",
        );
        let last = self.last_sync.map_or(0.0, unix_seconds);
        let _ = writeln!(
            s,
            "kubeproxy_sync_proxy_rules_last_timestamp_seconds {}",
            go_float(last)
        );
        s.push_str(
            "# HELP kubeproxy_sync_proxy_rules_no_local_endpoints_total [ALPHA] Number of services with a Local traffic policy and no endpoints\n\
             # TYPE kubeproxy_sync_proxy_rules_no_local_endpoints_total gauge\n",
        );
        for fam in [IpFamily::IPv4, IpFamily::IPv6] {
            for (policy, map) in [
                ("external", &self.no_local_external),
                ("internal", &self.no_local_internal),
            ] {
                if let Some(v) = map.get(&fam) {
                    let _ = writeln!(
                        s,
                        "kubeproxy_sync_proxy_rules_no_local_endpoints_total{{ip_family=\"{}\",traffic_policy=\"{policy}\"}} {v}",
                        fam.as_str()
                    );
                }
            }
        }
        s.push_str(
            "# HELP kubernetes_build_info [ALPHA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.\n\
             # TYPE kubernetes_build_info gauge\n",
        );
        let labels: Vec<String> = build_info_labels(self.version())
            .iter()
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect();
        let _ = writeln!(s, "kubernetes_build_info{{{}}} 1", labels.join(","));
        Some(s)
    }

    /// The `/proxyMode` answer, `None` for an `other` data plane.
    pub fn proxy_mode_text(&self) -> Option<String> {
        match self.profile.fault {
            Some(Fault::Other { .. }) => None,
            _ => Some(self.profile.mode.as_str().to_string()),
        }
    }

    /// The value of `kubeproxy_sync_proxy_rules_no_local_endpoints_total` for a policy
    /// (`internal`/`external`) and family.
    pub fn no_local_endpoints(&self, traffic_policy: &str, family: IpFamily) -> usize {
        let map = if traffic_policy == "internal" {
            &self.no_local_internal
        } else {
            &self.no_local_external
        };
        map.get(&family).copied().unwrap_or(0)
    }

    /// The rule table as text: `iptables-save` style (iptables), `nft list table` style
    /// (nftables) or `ipvsadm -Ln` style (ipvs).
    pub fn rules_text(&self) -> String {
        let mut out = String::new();
        let synced = self.last_sync.map_or_else(|| "never".to_string(), rfc3339);
        let _ = writeln!(
            out,
            "# Simulated kube-proxy ({} mode, profile {}) on node {}, rules synced {synced}",
            self.profile.mode.as_str(),
            self.profile,
            self.node
        );
        let _ = writeln!(
            out,
            "# (simulated cluster: a rendering of the simulated rule table, not real kernel state)"
        );
        match self.profile.mode {
            ProxyMode::Iptables => {
                for fam in [IpFamily::IPv4, IpFamily::IPv6] {
                    let entries: Vec<&ServicePortRules> =
                        self.table.entries().filter(|e| e.family == fam).collect();
                    if fam == IpFamily::IPv6 && entries.is_empty() {
                        continue;
                    }
                    let tool = if fam == IpFamily::IPv4 {
                        "iptables-save"
                    } else {
                        "ip6tables-save"
                    };
                    let _ = writeln!(out, "# {tool}");
                    render_iptables(&mut out, &entries);
                }
            }
            ProxyMode::Nftables => render_nftables(&mut out, &self.table),
            ProxyMode::Ipvs => render_ipvs(&mut out, &self.table),
        }
        out
    }
}

/// The labels of a simulated kube-proxy's `kubernetes_build_info`, in name order, as
/// upstream `k8s.io/component-base/metrics/prometheus/version` sets them from
/// `version.Get()`: `git_version` `v1.MINOR.0` (the simulation knows minor releases only),
/// the Go minor release that release was built with (patch `.0`), and the simulated build's
/// fixed commit (all zeros) and date (the simulated epoch), as the simulated API server's
/// `/version` reports them.
pub fn build_info_labels(version: KubeVersion) -> [(&'static str, String); 9] {
    [
        ("build_date", rfc3339(0)),
        ("compiler", "gc".into()),
        ("git_commit", "0".repeat(40)),
        ("git_tree_state", "clean".into()),
        ("git_version", format!("v{}.{}.0", version.major, version.minor)),
        ("go_version", format!("go1.{}.0", go_minor(version))),
        ("major", version.major.to_string()),
        ("minor", version.minor.to_string()),
        ("platform", "linux/amd64".into()),
    ]
}

/// The Go minor release a Kubernetes minor release's `.0` was built with; releases newer
/// than the table take its last entry.
fn go_minor(version: KubeVersion) -> u16 {
    match version.minor {
        ..=22 => 16,
        23 => 17,
        24 => 18,
        25 | 26 => 19,
        27 | 28 => 20,
        29 => 21,
        30 | 31 => 22,
        32 => 23,
        33 | 34 => 24,
        _ => 25,
    }
}

/// Result of categorization.
struct Sets {
    cluster: Option<Arc<Vec<usize>>>,
    /// The cluster set even where the port does not use it (for `ignores-local-policy`).
    cluster_for_fault: Option<Arc<Vec<usize>>>,
    local: Option<Arc<Vec<usize>>>,
    has_any: bool,
}

/// Go's `strconv.FormatFloat(v, 'g', -1, 64)`, as Prometheus' text format writes values:
/// the shortest digits, in `%e` form when the exponent is below -4 or at least 6.
pub fn go_float(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{v}")
}

/// A kube-proxy style chain hash: 16 base32 characters of a 80-bit FNV-based digest.
fn chain_hash(parts: &[&str]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut h1: u64 = 0xcbf2_9ce4_8422_2325;
    let mut h2: u64 = 0x8422_2325_cbf2_9ce4;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0xff)) {
            h1 = (h1 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            h2 = (h2 ^ u64::from(b))
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    let mut out = String::with_capacity(16);
    for i in 0..16 {
        let v = if i < 12 {
            h1 >> (i * 5)
        } else {
            h2 >> ((i - 12) * 5)
        };
        out.push(ALPHABET[(v & 31) as usize] as char);
    }
    out
}

fn svc_chain(e: &ServicePortRules, prefix: &str) -> String {
    let fam = if e.family == IpFamily::IPv6 { "6" } else { "" };
    format!(
        "{prefix}{}",
        chain_hash(&[&e.port_name_string(), e.protocol.as_str(), fam])
    )
}

fn sep_chain(e: &ServicePortRules, ep: &SimEndpoint) -> String {
    format!(
        "KUBE-SEP-{}",
        chain_hash(&[&e.port_name_string(), e.protocol.as_str(), &ep.to_string()])
    )
}

fn host_cidr(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(_) => format!("{ip}/32"),
        IpAddr::V6(_) => format!("{ip}/128"),
    }
}

fn proto(e: &ServicePortRules) -> String {
    e.protocol.as_str().to_ascii_lowercase()
}

fn render_iptables(out: &mut String, entries: &[&ServicePortRules]) {
    // filter table
    out.push_str("*filter\n:KUBE-EXTERNAL-SERVICES - [0:0]\n:KUBE-SERVICES - [0:0]\n");
    for e in entries {
        let name = e.port_name_string();
        let p = proto(e);
        let (target, why) = match e.internal {
            RuleTarget::Reject => ("REJECT", "has no endpoints"),
            RuleTarget::Drop => ("DROP", "has no local endpoints"),
            _ => ("", ""),
        };
        if !target.is_empty()
            && let Some(ip) = e.cluster_ip
        {
            let _ = writeln!(
                out,
                "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} {why}\" -m {p} --dport {} -j {target}",
                host_cidr(&ip),
                e.port
            );
        }
        let (target, why) = match e.external {
            RuleTarget::Reject => ("REJECT", "has no endpoints"),
            RuleTarget::Drop => ("DROP", "has no local endpoints"),
            _ => ("", ""),
        };
        if !target.is_empty() {
            for ip in e.external_ips.iter().chain(&e.lb_ips) {
                let _ = writeln!(
                    out,
                    "-A KUBE-EXTERNAL-SERVICES -d {} -p {p} -m comment --comment \"{name} {why}\" -m {p} --dport {} -j {target}",
                    host_cidr(ip),
                    e.port
                );
            }
            if e.node_port != 0 {
                let _ = writeln!(
                    out,
                    "-A KUBE-EXTERNAL-SERVICES -m comment --comment \"{name} {why}\" -m addrtype --dst-type LOCAL -p {p} -m {p} --dport {} -j {target}",
                    e.node_port
                );
            }
        }
    }
    out.push_str("COMMIT\n");

    // nat table
    out.push_str("*nat\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n:KUBE-SERVICES - [0:0]\n");
    let mut chains: Vec<String> = Vec::new();
    let mut rules: Vec<String> = Vec::new();
    let mut services_rules: Vec<String> = Vec::new();
    let mut nodeport_rules: Vec<String> = Vec::new();
    for e in entries {
        let name = e.port_name_string();
        let p = proto(e);
        let svc = svc_chain(e, "KUBE-SVC-");
        let svl = svc_chain(e, "KUBE-SVL-");
        let ext = svc_chain(e, "KUBE-EXT-");
        let cluster = e.cluster.as_ref().filter(|c| !c.is_empty());
        let local = e.local.as_ref();
        if cluster.is_some() {
            chains.push(svc.clone());
        }
        if e.internal_local || e.external_local {
            chains.push(svl.clone());
        }
        if let (Some(ip), RuleTarget::Endpoints { chain, .. }) = (e.cluster_ip, &e.internal) {
            let to = if *chain == ChainKind::Local { &svl } else { &svc };
            services_rules.push(format!(
                "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} cluster IP\" -m {p} --dport {} -j {to}",
                host_cidr(&ip),
                e.port
            ));
        }
        let ext_exists =
            e.has_endpoints && (e.node_port != 0 || !e.external_ips.is_empty() || !e.lb_ips.is_empty());
        if ext_exists {
            chains.push(ext.clone());
            for ip in &e.external_ips {
                services_rules.push(format!(
                    "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} external IP\" -m {p} --dport {} -j {ext}",
                    host_cidr(ip),
                    e.port
                ));
            }
            for ip in &e.lb_ips {
                services_rules.push(format!(
                    "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} loadbalancer IP\" -m {p} --dport {} -j {ext}",
                    host_cidr(ip),
                    e.port
                ));
            }
            if e.node_port != 0 {
                nodeport_rules.push(format!(
                    "-A KUBE-NODEPORTS -p {p} -m comment --comment \"{name}\" -m {p} --dport {} -j {ext}",
                    e.node_port
                ));
            }
            if e.external_local {
                rules.push(format!(
                    "-A {ext} -m comment --comment \"pod traffic for {name} external destinations\" -j {svc}"
                ));
                rules.push(format!(
                    "-A {ext} -m comment --comment \"masquerade LOCAL traffic for {name} external destinations\" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ"
                ));
                rules.push(format!(
                    "-A {ext} -m comment --comment \"route LOCAL traffic for {name} external destinations\" -m addrtype --src-type LOCAL -j {svc}"
                ));
                if local.is_some_and(|l| !l.is_empty()) {
                    rules.push(format!("-A {ext} -j {svl}"));
                }
            } else {
                rules.push(format!(
                    "-A {ext} -m comment --comment \"masquerade traffic for {name} external destinations\" -j KUBE-MARK-MASQ"
                ));
                rules.push(format!("-A {ext} -j {svc}"));
            }
        }
        let jump_list = |chain: &str, set: &[usize], rules: &mut Vec<String>| {
            let n = set.len();
            for (i, &idx) in set.iter().enumerate() {
                let ep = &e.endpoints[idx];
                let sep = sep_chain(e, ep);
                if i + 1 < n {
                    rules.push(format!(
                        "-A {chain} -m comment --comment \"{name} -> {ep}\" -m statistic --mode random --probability {:.10} -j {sep}",
                        1.0 / (n - i) as f64
                    ));
                } else {
                    rules.push(format!(
                        "-A {chain} -m comment --comment \"{name} -> {ep}\" -j {sep}"
                    ));
                }
            }
        };
        if let Some(c) = cluster {
            jump_list(&svc, c, &mut rules);
        }
        if let Some(l) = local.filter(|l| !l.is_empty()) {
            jump_list(&svl, l, &mut rules);
        }
        for idx in e.reachable() {
            let ep = &e.endpoints[idx];
            let sep = sep_chain(e, ep);
            chains.push(sep.clone());
            rules.push(format!(
                "-A {sep} -s {} -m comment --comment \"{name}\" -j KUBE-MARK-MASQ",
                host_cidr(&ep.ip)
            ));
            rules.push(format!(
                "-A {sep} -p {p} -m comment --comment \"{name}\" -m {p} -j DNAT --to-destination {ep}"
            ));
        }
    }
    chains.sort();
    chains.dedup();
    for c in &chains {
        let _ = writeln!(out, ":{c} - [0:0]");
    }
    for r in services_rules {
        let _ = writeln!(out, "{r}");
    }
    out.push_str(
        "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n",
    );
    for r in nodeport_rules.into_iter().chain(rules) {
        let _ = writeln!(out, "{r}");
    }
    out.push_str("COMMIT\n");
}

fn target_word(t: &RuleTarget) -> &'static str {
    match t {
        RuleTarget::Reject => "goto reject-chain",
        RuleTarget::Drop => "drop",
        RuleTarget::NoRealServers => "no real servers",
        RuleTarget::ReplyLost => "reply lost",
        RuleTarget::Endpoints { .. } => "",
    }
}

fn render_nftables(out: &mut String, table: &RuleTable) {
    for fam in [IpFamily::IPv4, IpFamily::IPv6] {
        let entries: Vec<&ServicePortRules> = table.entries().filter(|e| e.family == fam).collect();
        if fam == IpFamily::IPv6 && entries.is_empty() {
            continue;
        }
        let (t, addr) = if fam == IpFamily::IPv4 {
            ("ip", "ipv4_addr")
        } else {
            ("ip6", "ipv6_addr")
        };
        let _ = writeln!(out, "table {t} kube-proxy {{");
        let _ = writeln!(
            out,
            "\tmap no-endpoint-services {{\n\t\ttype {addr} . inet_proto . inet_service : verdict"
        );
        let mut elems = Vec::new();
        for e in &entries {
            let p = proto(e);
            let name = e.port_name_string();
            if let (Some(ip), w) = (e.cluster_ip, target_word(&e.internal))
                && !w.is_empty()
            {
                let why = if e.internal == RuleTarget::Drop {
                    "has no local endpoints"
                } else {
                    "has no endpoints"
                };
                elems.push(format!("{ip} . {p} . {} comment \"{name} {why}\" : {w}", e.port));
            }
            let w = target_word(&e.external);
            if !w.is_empty() {
                let why = if e.external == RuleTarget::Drop {
                    "has no local endpoints"
                } else {
                    "has no endpoints"
                };
                for ip in e.external_ips.iter().chain(&e.lb_ips) {
                    elems.push(format!("{ip} . {p} . {} comment \"{name} {why}\" : {w}", e.port));
                }
            }
        }
        let _ = writeln!(out, "\t\telements = {{ {} }}\n\t}}", elems.join(",\n\t\t\t     "));
        let mut np = Vec::new();
        for e in &entries {
            let w = target_word(&e.external);
            if e.node_port != 0 && !w.is_empty() {
                let why = if e.external == RuleTarget::Drop {
                    "has no local endpoints"
                } else {
                    "has no endpoints"
                };
                np.push(format!(
                    "{} . {} comment \"{} {why}\" : {w}",
                    proto(e),
                    e.node_port,
                    e.port_name_string()
                ));
            }
        }
        let _ = writeln!(
            out,
            "\tmap no-endpoint-nodeports {{\n\t\ttype inet_proto . inet_service : verdict\n\t\telements = {{ {} }}\n\t}}",
            np.join(",\n\t\t\t     ")
        );
        let mut sips = Vec::new();
        for e in &entries {
            if let (Some(ip), RuleTarget::Endpoints { chain, .. }) = (e.cluster_ip, &e.internal) {
                let c = if *chain == ChainKind::Local {
                    "local"
                } else {
                    "cluster"
                };
                sips.push(format!(
                    "{ip} . {} . {} : goto service-{}-{c}",
                    proto(e),
                    e.port,
                    svc_chain(e, "").to_ascii_lowercase()
                ));
            }
        }
        let _ = writeln!(
            out,
            "\tmap service-ips {{\n\t\ttype {addr} . inet_proto . inet_service : verdict\n\t\telements = {{ {} }}\n\t}}",
            sips.join(",\n\t\t\t     ")
        );
        for e in &entries {
            let h = svc_chain(e, "").to_ascii_lowercase();
            for (c, set) in [("cluster", e.cluster.as_ref()), ("local", e.local.as_ref())] {
                let Some(set) = set.filter(|s| !s.is_empty()) else {
                    continue;
                };
                let eps: Vec<String> = set
                    .iter()
                    .enumerate()
                    .map(|(i, &idx)| format!("{i} : goto endpoint-{}", e.endpoints[idx]))
                    .collect();
                let _ = writeln!(
                    out,
                    "\tchain service-{h}-{c} {{\n\t\tcomment \"{}\"\n\t\tnumgen random mod {} vmap {{ {} }}\n\t}}",
                    e.port_name_string(),
                    set.len(),
                    eps.join(", ")
                );
            }
        }
        out.push_str("}\n");
    }
}

fn render_ipvs(out: &mut String, table: &RuleTable) {
    out.push_str("IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n");
    for e in table.entries() {
        let Some(ip) = e.cluster_ip else { continue };
        let addr = match ip {
            IpAddr::V4(v) => format!("{v}:{}", e.port),
            IpAddr::V6(v) => format!("[{v}]:{}", e.port),
        };
        let _ = writeln!(
            out,
            "{:<4} {addr} rr    # {} cluster IP",
            e.protocol.as_str(),
            e.port_name_string()
        );
        if let RuleTarget::Endpoints { endpoints, .. } = &e.internal {
            for &i in endpoints.iter() {
                let _ = writeln!(
                    out,
                    "  -> {:<28} Masq    1      0          0",
                    e.endpoints[i].to_string()
                );
            }
        }
    }
}
