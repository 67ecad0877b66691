//! kube-proxy's view of endpoints and service ports.
//!
//! Mirrors `pkg/proxy/endpoint.go` (`BaseEndpointInfo`) and `pkg/proxy/serviceport.go`
//! (`UsesClusterEndpoints`, `UsesLocalEndpoints`); which slice entries become endpoints is
//! `super::endpointslicecache`.

use std::fmt;
use std::net::IpAddr;

use crate::features::ProxyFeatures;
use crate::objects::{
    ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE, IpFamily, ProxyExclusion, Service,
    ServicePort, ServiceType, TrafficPolicy,
};

/// One endpoint of one service port as kube-proxy sees it (`BaseEndpointInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProxyEndpoint {
    /// `addresses[0]` of the slice entry (kube-proxy ignores the others).
    pub ip: IpAddr,
    /// The slice port number for this service port.
    pub port: u16,
    /// `nodeName`, if set: locality is `nodeName == kube-proxy's node name`.
    pub node_name: Option<String>,
    /// `ready == nil || *ready`.
    pub ready: bool,
    /// `serving == nil || *serving`.
    pub serving: bool,
    /// `terminating != nil && *terminating`.
    pub terminating: bool,
    /// `hints.forZones[].name` (empty when absent).
    pub zone_hints: Vec<String>,
    /// `hints.forNodes[].name`, only read when kube-proxy has `PreferSameTrafficDistribution`.
    pub node_hints: Vec<String>,
    /// The endpoint's `zone` (informational: kube-proxy does not read it).
    pub zone: Option<String>,
    /// The pod behind it (`targetRef` name), informational.
    pub target: Option<String>,
}

impl ProxyEndpoint {
    /// True when the endpoint is on `node` (`endpoint.go` `IsLocal`, string equality).
    pub fn is_local(&self, node: &str) -> bool {
        !node.is_empty() && self.node_name.as_deref() == Some(node)
    }
    /// Usable when nothing ready exists: serving and terminating.
    pub fn is_serving_terminating(&self) -> bool {
        self.serving && self.terminating
    }
}

impl fmt::Display for ProxyEndpoint {
    /// `IP:port`, `[v6]:port` for IPv6 (`ep.String()`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ip {
            IpAddr::V4(ip) => write!(f, "{ip}:{}", self.port),
            IpAddr::V6(ip) => write!(f, "[{ip}]:{}", self.port),
        }
    }
}

/// kube-proxy's view of one service port in one IP family (`serviceport.go` `BaseServicePortInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePortInfo {
    /// Service namespace.
    pub namespace: String,
    /// Service name.
    pub name: String,
    /// The port (name, protocol, number, nodePort).
    pub port: ServicePort,
    /// The IP family of this instance.
    pub family: IpFamily,
    /// Cluster IP of this family, if any.
    pub cluster_ip: Option<IpAddr>,
    /// `InternalPolicyLocal()` (and kube-proxy honours the field).
    pub internal_policy_local: bool,
    /// `ExternalPolicyLocal()`: externally accessible by type and ETP Local.
    pub external_policy_local: bool,
    /// `spec.externalIPs` of this family.
    pub external_ips: Vec<IpAddr>,
    /// Load balancer VIPs of this family (`ipMode` VIP or unset).
    pub load_balancer_vips: Vec<IpAddr>,
    /// The topology annotation value (deprecated key first), for kube-proxy < 1.31.
    pub hints_annotation: Option<String>,
    /// Headless, ExternalName or excluded by kube-proxy's informers: it writes no rules for it.
    pub not_proxied: Option<NotProxiedReason>,
    /// The port has a NodePort ([`Service::has_node_port`]: a number, or one allocated whose
    /// number a file does not give).
    pub has_node_port: bool,
    /// `StickyMaxAgeSeconds`: the client-IP affinity timeout under `sessionAffinity:
    /// ClientIP`, `None` without affinity.
    pub sticky_max_age_seconds: Option<u32>,
    /// `LoadBalancerSourceRanges()`: the Service's ranges of this family, trimmed and parsed
    /// (empty: no firewall in front of the VIPs).
    pub load_balancer_source_ranges: Vec<super::source_ranges::SourceRange>,
}

/// Why kube-proxy ignores a Service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotProxiedReason {
    /// `clusterIP: None`.
    Headless,
    /// `type: ExternalName`.
    ExternalName,
    /// Labelled `service.kubernetes.io/service-proxy-name` (kube-proxy's informer filter).
    ServiceProxyName,
    /// Labelled `service.kubernetes.io/headless` (kube-proxy's informer filter).
    HeadlessLabel,
}

impl ServicePortInfo {
    /// Builds the port info of `port` in `family` (`newBaseServiceInfo`).
    pub fn new(svc: &Service, port: &ServicePort, family: IpFamily, features: &ProxyFeatures) -> Self {
        let api_externally_accessible =
            matches!(svc.type_, ServiceType::LoadBalancer | ServiceType::NodePort)
                || (svc.type_ == ServiceType::ClusterIP && !svc.external_ips.is_empty());
        let of_family = |ips: &[IpAddr]| {
            ips.iter()
                .copied()
                .filter(|ip| IpFamily::of(ip) == family)
                .collect()
        };
        let load_balancer_vips = svc
            .load_balancer_ingress
            .iter()
            .filter(|i| i.ip_mode.as_deref().is_none_or(|m| m == "VIP"))
            .filter_map(|i| i.ip)
            .filter(|ip| IpFamily::of(ip) == family)
            .collect();
        let hints_annotation = svc
            .meta
            .annotations
            .get(ANNOTATION_TOPOLOGY_AWARE_HINTS)
            .or_else(|| svc.meta.annotations.get(ANNOTATION_TOPOLOGY_MODE))
            .cloned();
        let not_proxied = if svc.type_ == ServiceType::ExternalName {
            Some(NotProxiedReason::ExternalName)
        } else if svc.headless {
            Some(NotProxiedReason::Headless)
        } else {
            svc.meta
                .kube_proxy_exclusion(true, features.informer_filters_per_kind)
                .map(|e| match e {
                    ProxyExclusion::ServiceProxyName(_) => NotProxiedReason::ServiceProxyName,
                    ProxyExclusion::HeadlessLabel => NotProxiedReason::HeadlessLabel,
                })
        };
        ServicePortInfo {
            namespace: svc.meta.namespace.clone(),
            name: svc.meta.name.clone(),
            port: port.clone(),
            family,
            cluster_ip: svc
                .cluster_ips
                .iter()
                .copied()
                .find(|ip| IpFamily::of(ip) == family),
            internal_policy_local: features.internal_traffic_policy && svc.itp() == TrafficPolicy::Local,
            external_policy_local: api_externally_accessible && svc.etp() == TrafficPolicy::Local,
            external_ips: of_family(&svc.external_ips),
            load_balancer_vips,
            hints_annotation,
            not_proxied,
            has_node_port: svc.has_node_port(port),
            sticky_max_age_seconds: svc.client_ip_affinity_seconds(),
            load_balancer_source_ranges: super::source_ranges::ranges_of_family(
                &svc.load_balancer_source_ranges,
                family,
            ),
        }
    }

    /// `ExternallyAccessible()`: a NodePort, a load balancer VIP or an external IP of this family.
    pub fn externally_accessible(&self) -> bool {
        self.has_node_port || !self.load_balancer_vips.is_empty() || !self.external_ips.is_empty()
    }

    /// `UsesClusterEndpoints()`: "Even if the external traffic policy is Local, we need Cluster
    /// endpoints to implement short circuiting".
    pub fn uses_cluster_endpoints(&self) -> bool {
        !self.internal_policy_local || self.externally_accessible()
    }

    /// `UsesLocalEndpoints()`.
    pub fn uses_local_endpoints(&self) -> bool {
        self.internal_policy_local || (self.external_policy_local && self.externally_accessible())
    }
}
