//! The stable codes of a route: proxy mode, traffic source, destination, verdict and reason
//! (spelled as in `locality matrix -o json`, docs/matrix-json.md).

use serde::Serialize;

/// kube-proxy's proxy mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProxyMode {
    /// iptables (the default mode up to at least 1.36).
    Iptables,
    /// nftables (GA in 1.33).
    Nftables,
    /// ipvs (deprecated in 1.35).
    Ipvs,
}

impl ProxyMode {
    /// All modes, in output order.
    pub const ALL: [ProxyMode; 3] = [ProxyMode::Iptables, ProxyMode::Nftables, ProxyMode::Ipvs];
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Iptables => "iptables",
            ProxyMode::Nftables => "nftables",
            ProxyMode::Ipvs => "ipvs",
        }
    }
}

/// Where the connection starts, relative to the node being evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A pod (pod network) on the node.
    Pod,
    /// The node itself or a hostNetwork pod on it.
    Host,
    /// A client outside the cluster whose packet arrives at the node.
    External,
}

impl Source {
    /// All sources, in output order.
    pub const ALL: [Source; 3] = [Source::Pod, Source::Host, Source::External];
    /// Output spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Pod => "pod",
            Source::Host => "host",
            Source::External => "external",
        }
    }
}

/// The address the client connects to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Destination {
    /// The Service's cluster IP.
    #[serde(rename = "clusterIP")]
    ClusterIp,
    /// The node's own address at the Service's nodePort.
    #[serde(rename = "nodePort")]
    NodePort,
    /// A load balancer VIP (`status.loadBalancer.ingress[].ip`, ipMode VIP).
    #[serde(rename = "loadBalancer")]
    LoadBalancer,
    /// One of `spec.externalIPs`.
    #[serde(rename = "externalIP")]
    ExternalIp,
}

impl Destination {
    /// All destinations, in output order.
    pub const ALL: [Destination; 4] = [
        Destination::ClusterIp,
        Destination::NodePort,
        Destination::LoadBalancer,
        Destination::ExternalIp,
    ];
    /// Output spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Destination::ClusterIp => "clusterIP",
            Destination::NodePort => "nodePort",
            Destination::LoadBalancer => "loadBalancer",
            Destination::ExternalIp => "externalIP",
        }
    }
    /// True for the destinations `externalTrafficPolicy` governs.
    pub fn is_external(self) -> bool {
        self != Destination::ClusterIp
    }
}

/// The outcome of a connection, as the client experiences it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    /// Delivered uniformly over the route's endpoints.
    Deliver,
    /// Dropped: the client times out.
    Drop,
    /// Rejected: connection refused (TCP) or ICMP port unreachable (UDP).
    Reject,
    /// kube-proxy writes no rule (headless, ExternalName, excluded by its informers).
    NotProxied,
}

impl VerdictKind {
    /// Output spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Deliver => "deliver",
            VerdictKind::Drop => "drop",
            VerdictKind::Reject => "reject",
            VerdictKind::NotProxied => "not-proxied",
        }
    }
    /// What the client sees.
    pub fn client_sees(self) -> &'static str {
        match self {
            VerdictKind::Deliver => "a response from one of the endpoints",
            VerdictKind::Drop => "a timeout",
            VerdictKind::Reject => "connection refused",
            VerdictKind::NotProxied => "no Service proxying (DNS or direct pod addressing)",
        }
    }
}

/// Why a route has its verdict: a stable, documented enumeration (docs/matrix-json.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Delivered to the cluster set of ready endpoints (possibly hint-filtered).
    ClusterReady,
    /// Delivered to serving-terminating endpoints cluster-wide: no ready endpoint exists.
    ClusterServingTerminating,
    /// Local policy: delivered to this node's ready endpoints.
    LocalReady,
    /// Local policy: delivered to this node's serving-terminating endpoints.
    LocalServingTerminating,
    /// ETP Local: a pod or the node itself reaching an external address is short-circuited to
    /// the cluster set.
    ExternalPolicyShortCircuit,
    /// Local policy, endpoints exist elsewhere, none usable on this node: dropped.
    NoLocalEndpoints,
    /// The service port has no endpoints at all: rejected.
    NoEndpoints,
    /// Endpoints exist, but none is ready or serving-terminating anywhere: rejected.
    NoUsableEndpoints,
    /// IPVS: ITP Local without local endpoints on an externally reachable Service uses the
    /// cluster endpoints (ITP not enforced).
    IpvsLocalPolicyNotEnforced,
    /// IPVS: ITP Local without local endpoints, not externally reachable: the virtual server
    /// has no real servers and the kernel answers port unreachable.
    IpvsNoRealServers,
    /// IPVS: ETP Local without local endpoints: external traffic is forwarded to a remote
    /// endpoint without SNAT and the reply is lost.
    IpvsExternalReplyLost,
    /// IPVS: ETP Local without local endpoints, a host-network client dialling a load-balancer
    /// or external IP: the address is bound on every node's `kube-ipvs0`, so the unmasqueraded
    /// reply of a remote endpoint never comes back (kubernetes#93456, left open by #97081).
    IpvsHostReplyLost,
    /// nftables: a host-network client reaching a load balancer or external IP with ETP Local
    /// and no local endpoint hits the `no-endpoint-services` drop in `filter-output`.
    NftablesHostExternalDrop,
    /// Headless Service: no virtual IP.
    Headless,
    /// ExternalName Service: a DNS alias.
    ExternalName,
    /// Labelled `service.kubernetes.io/service-proxy-name`: kube-proxy's informers never
    /// deliver it; the proxy named handles it (or nothing does).
    ServiceProxyName,
    /// Labelled `service.kubernetes.io/headless` though it has a cluster IP: kube-proxy's
    /// informers never deliver it.
    HeadlessLabel,
    /// The source is outside the load balancer's `loadBalancerSourceRanges`: kube-proxy's
    /// firewall drops it ([`super::firewall`]).
    LoadBalancerSourceRanges,
}

impl Reason {
    /// Kebab-case code, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ClusterReady => "cluster-ready",
            Reason::ClusterServingTerminating => "cluster-serving-terminating",
            Reason::LocalReady => "local-ready",
            Reason::LocalServingTerminating => "local-serving-terminating",
            Reason::ExternalPolicyShortCircuit => "external-policy-short-circuit",
            Reason::NoLocalEndpoints => "no-local-endpoints",
            Reason::NoEndpoints => "no-endpoints",
            Reason::NoUsableEndpoints => "no-usable-endpoints",
            Reason::IpvsLocalPolicyNotEnforced => "ipvs-local-policy-not-enforced",
            Reason::IpvsNoRealServers => "ipvs-no-real-servers",
            Reason::IpvsExternalReplyLost => "ipvs-external-reply-lost",
            Reason::IpvsHostReplyLost => "ipvs-host-reply-lost",
            Reason::NftablesHostExternalDrop => "nftables-host-external-drop",
            Reason::Headless => "headless",
            Reason::ExternalName => "external-name",
            Reason::ServiceProxyName => "service-proxy-name",
            Reason::HeadlessLabel => "headless-label",
            Reason::LoadBalancerSourceRanges => "load-balancer-source-ranges",
        }
    }
}
