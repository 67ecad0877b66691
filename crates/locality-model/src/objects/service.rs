//! Services and their ports.

use std::net::IpAddr;

use super::*;

/// `spec.ports[]` of a Service.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServicePort {
    /// Port name (`""` when unnamed).
    pub name: String,
    /// Protocol.
    pub protocol: Protocol,
    /// `port`.
    pub port: u16,
    /// `targetPort` (defaults to `port`).
    pub target_port: TargetPort,
    /// `nodePort` (0 when none).
    pub node_port: u16,
}

impl std::fmt::Display for ServicePort {
    /// `name:port/PROTO`, or `port/PROTO` for an unnamed port.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.name.is_empty() {
            write!(f, "{}/{}", self.port, self.protocol.as_str())
        } else {
            write!(f, "{}:{}/{}", self.name, self.port, self.protocol.as_str())
        }
    }
}

/// A Service `targetPort`: a number or a container port name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetPort {
    /// Numeric target port.
    Number(u16),
    /// Named target port, resolved per pod.
    Name(String),
}

impl Default for TargetPort {
    fn default() -> Self {
        TargetPort::Number(0)
    }
}

/// `spec.type` of a Service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServiceType {
    /// ClusterIP (default).
    #[default]
    ClusterIP,
    /// NodePort.
    NodePort,
    /// LoadBalancer.
    LoadBalancer,
    /// ExternalName (not proxied).
    ExternalName,
}

/// `spec.internalTrafficPolicy` / `spec.externalTrafficPolicy` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum TrafficPolicy {
    /// Cluster (default).
    #[default]
    Cluster,
    /// Local.
    Local,
}

/// `status.loadBalancer.ingress[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadBalancerIngress {
    /// `ip`, if any (hostname-only ingresses go through the NodePort path).
    pub ip: Option<IpAddr>,
    /// `hostname`, if any.
    pub hostname: Option<String>,
    /// `ipMode` (`VIP` or `Proxy`); `None` means VIP.
    pub ip_mode: Option<String>,
}

/// A Service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Service {
    /// Metadata (annotations carry `topology-mode`).
    pub meta: ObjectMeta,
    /// `spec.type`.
    pub type_: ServiceType,
    /// `spec.selector`; `None` for a selector-less Service (hand-made slices).
    pub selector: Option<Labels>,
    /// `spec.ports`.
    pub ports: Vec<ServicePort>,
    /// `spec.clusterIP` (`None` when unset; `"None"` is represented by [`Service::headless`]).
    pub cluster_ips: Vec<IpAddr>,
    /// `spec.clusterIP == "None"`.
    pub headless: bool,
    /// `spec.ipFamilies` (empty: inferred from clusterIPs, else IPv4).
    pub ip_families: Vec<IpFamily>,
    /// `spec.externalIPs`.
    pub external_ips: Vec<IpAddr>,
    /// `spec.internalTrafficPolicy` (`None` when unset: Cluster).
    pub internal_traffic_policy: Option<TrafficPolicy>,
    /// `spec.externalTrafficPolicy` (`None` when unset: Cluster).
    pub external_traffic_policy: Option<TrafficPolicy>,
    /// `spec.trafficDistribution` verbatim (unknown values are kept and treated as unset).
    pub traffic_distribution: Option<String>,
    /// `spec.publishNotReadyAddresses`.
    pub publish_not_ready_addresses: bool,
    /// `spec.loadBalancerSourceRanges`.
    pub load_balancer_source_ranges: Vec<String>,
    /// `status.loadBalancer.ingress`.
    pub load_balancer_ingress: Vec<LoadBalancerIngress>,
    /// `spec.allocateLoadBalancerNodePorts` (LoadBalancer only; `None` reads as `true`, the
    /// API server's default).
    pub allocate_load_balancer_node_ports: Option<bool>,
    /// `spec.sessionAffinity` verbatim (`None` when unset; the API server stores `"None"`).
    pub session_affinity: Option<String>,
    /// `spec.sessionAffinityConfig.clientIP.timeoutSeconds` (`None` when unset; the API
    /// server stores [`DEFAULT_CLIENT_IP_AFFINITY_SECONDS`] for `ClientIP`).
    pub session_affinity_timeout_seconds: Option<u32>,
}

/// `v1.DefaultClientIPServiceAffinitySeconds`: the `timeoutSeconds` the API server stores for
/// `sessionAffinity: ClientIP` without one (`pkg/apis/core/v1/defaults.go` `SetDefaults_Service`).
pub const DEFAULT_CLIENT_IP_AFFINITY_SECONDS: u32 = 10800;

impl Service {
    /// The families this Service serves: `spec.ipFamilies`, else the families of its cluster IPs, else IPv4.
    pub fn families(&self) -> Vec<IpFamily> {
        if !self.ip_families.is_empty() {
            let mut f = self.ip_families.clone();
            f.dedup();
            return f;
        }
        let mut f: Vec<IpFamily> = Vec::new();
        for ip in &self.cluster_ips {
            let fam = IpFamily::of(ip);
            if !f.contains(&fam) {
                f.push(fam);
            }
        }
        if f.is_empty() {
            f.push(IpFamily::IPv4);
        }
        f
    }
    /// Whether `port` has a NodePort: a number, or one the API server allocates (a NodePort
    /// Service, or a LoadBalancer unless `allocateLoadBalancerNodePorts: false`), even when a
    /// file does not say which.
    pub fn has_node_port(&self, port: &ServicePort) -> bool {
        match self.type_ {
            ServiceType::NodePort => true,
            ServiceType::LoadBalancer => {
                port.node_port != 0 || self.allocate_load_balancer_node_ports != Some(false)
            }
            _ => false,
        }
    }
    /// `sessionAffinity: ClientIP`: the stickiness timeout in seconds (the written one, else
    /// the API server's default); `None` without client-IP affinity. What kube-proxy reads as
    /// `StickyMaxAgeSeconds` (`pkg/proxy/serviceport.go` `newBaseServiceInfo`).
    pub fn client_ip_affinity_seconds(&self) -> Option<u32> {
        (self.session_affinity.as_deref() == Some("ClientIP")).then(|| {
            self.session_affinity_timeout_seconds
                .unwrap_or(DEFAULT_CLIENT_IP_AFFINITY_SECONDS)
        })
    }
    /// Effective internal traffic policy.
    pub fn itp(&self) -> TrafficPolicy {
        self.internal_traffic_policy.unwrap_or_default()
    }
    /// Effective external traffic policy (only meaningful when externally accessible).
    pub fn etp(&self) -> TrafficPolicy {
        self.external_traffic_policy.unwrap_or_default()
    }
}
