//! What happens to a connection: the verdict per traffic source and destination.
//!
//! Mirrors the rule layout of `pkg/proxy/iptables/proxier.go`, `pkg/proxy/nftables/proxier.go`
//! (`syncProxyRules`) and `pkg/proxy/ipvs/proxier.go` (`syncEndpoint`) as summarised in
//! docs/upstream.md §2 and §7. Every [`Route`] carries a [`Reason`], a [`Confidence`] and
//! the ordered [`TraceStep`]s that produced it.

use serde::Serialize;

use super::endpoint::{NotProxiedReason, ServicePortInfo};
use super::topology::{CategorizedEndpoints, TopologyMode};

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
            Reason::NftablesHostExternalDrop => "nftables-host-external-drop",
            Reason::Headless => "headless",
            Reason::ExternalName => "external-name",
            Reason::ServiceProxyName => "service-proxy-name",
            Reason::HeadlessLabel => "headless-label",
        }
    }
}

/// How sure the model is of a verdict (docs/design.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// Reasoned from the rule layout or kernel behaviour, not pinned by upstream.
    Inferred,
    /// Read in upstream source.
    SourceRead,
    /// Pinned by an upstream unit test.
    UpstreamTest,
}

impl Confidence {
    /// Kebab-case code.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Inferred => "inferred",
            Confidence::SourceRead => "source-read",
            Confidence::UpstreamTest => "upstream-test",
        }
    }
}

/// The fallback a route used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Fallback {
    /// Serving-terminating endpoints were used because no ready one qualified.
    #[serde(rename = "servingTerminating")]
    ServingTerminating,
}

/// One step of the reasoning that produced a verdict, in order (printed by `explain`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    /// Stable step code (kebab-case).
    pub step: &'static str,
    /// Plain-words description with the data that decided it.
    pub detail: String,
}

impl TraceStep {
    pub(crate) fn new(step: &'static str, detail: impl Into<String>) -> Self {
        TraceStep {
            step,
            detail: detail.into(),
        }
    }
}

/// The verdict for one (service port, family, node, source, destination).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Source.
    pub source: Source,
    /// Destination.
    pub destination: Destination,
    /// Verdict.
    pub verdict: VerdictKind,
    /// Endpoint indices (into the service port's endpoint list) when delivered.
    pub endpoints: Vec<usize>,
    /// Hint mode applied to the endpoints used (`none` for local sets).
    pub topology: TopologyMode,
    /// Fallback used, if any.
    pub fallback: Option<Fallback>,
    /// Whether the client's source address is masqueraded (SNAT to the node).
    pub masquerade: bool,
    /// Why.
    pub reason: Reason,
    /// How sure the model is.
    pub confidence: Confidence,
    /// How the verdict was reached.
    pub trace: Vec<TraceStep>,
}

/// Everything [`route`] needs besides the categorized endpoints.
#[derive(Debug, Clone, Copy)]
pub struct RouteQuery {
    /// Traffic source.
    pub source: Source,
    /// Destination.
    pub destination: Destination,
    /// kube-proxy mode.
    pub mode: ProxyMode,
}

/// The verdict of a Service kube-proxy does not program (headless, ExternalName, excluded by
/// its informers).
pub fn not_proxied(source: Source, destination: Destination, reason: Reason) -> Route {
    let detail = match reason {
        Reason::Headless => {
            "the Service is headless (clusterIP: None): kube-proxy writes no rules; clients reach pods directly"
        }
        Reason::ExternalName => "the Service is ExternalName: a DNS CNAME, kube-proxy writes no rules",
        Reason::ServiceProxyName => {
            "the Service is labelled service.kubernetes.io/service-proxy-name: kube-proxy's informers exclude it and write no rules; the proxy it names handles it, if one runs"
        }
        Reason::HeadlessLabel => {
            "the Service is labelled service.kubernetes.io/headless: kube-proxy's informers exclude it and write no rules for its cluster IP"
        }
        _ => "kube-proxy writes no rules for this Service",
    };
    Route {
        source,
        destination,
        verdict: VerdictKind::NotProxied,
        endpoints: Vec::new(),
        topology: TopologyMode::None,
        fallback: None,
        masquerade: false,
        reason,
        confidence: Confidence::SourceRead,
        trace: vec![TraceStep::new("not-proxied", detail)],
    }
}

/// Maps a [`NotProxiedReason`] to its [`Reason`].
pub fn not_proxied_reason(r: NotProxiedReason) -> Reason {
    match r {
        NotProxiedReason::Headless => Reason::Headless,
        NotProxiedReason::ExternalName => Reason::ExternalName,
        NotProxiedReason::ServiceProxyName => Reason::ServiceProxyName,
        NotProxiedReason::HeadlessLabel => Reason::HeadlessLabel,
    }
}

struct Builder {
    route: Route,
}

impl Builder {
    fn step(&mut self, step: &'static str, detail: impl Into<String>) -> &mut Self {
        self.route.trace.push(TraceStep::new(step, detail));
        self
    }
    fn finish(
        mut self,
        verdict: VerdictKind,
        endpoints: Vec<usize>,
        reason: Reason,
        confidence: Confidence,
        masquerade: bool,
    ) -> Route {
        self.route.verdict = verdict;
        if verdict != VerdictKind::Deliver {
            self.route.topology = TopologyMode::None;
            self.route.fallback = None;
        }
        self.route.endpoints = endpoints;
        self.route.reason = reason;
        self.route.confidence = confidence;
        self.route.masquerade = masquerade && verdict == VerdictKind::Deliver;
        self.route
    }
}

/// The verdict kube-proxy's rules give a connection, from the categorized endpoints of the
/// node that first processes the packet (docs/upstream.md §7, with §2.2 and §2.3).
///
/// Assumes kube-proxy's local-traffic detector is configured (the default: `--cluster-cidr`
/// or `--detect-local-mode`), and `masqueradeAll=false`.
pub fn route(
    svc: &ServicePortInfo,
    cat: &CategorizedEndpoints,
    endpoint_count: usize,
    q: RouteQuery,
) -> Route {
    if let Some(np) = svc.not_proxied {
        return not_proxied(q.source, q.destination, not_proxied_reason(np));
    }
    let mut b = Builder {
        route: Route {
            source: q.source,
            destination: q.destination,
            verdict: VerdictKind::Reject,
            endpoints: Vec::new(),
            topology: TopologyMode::None,
            fallback: None,
            masquerade: false,
            reason: Reason::NoEndpoints,
            confidence: Confidence::SourceRead,
            trace: Vec::new(),
        },
    };
    let ipvs = q.mode == ProxyMode::Ipvs;
    let nft = q.mode == ProxyMode::Nftables;
    let sets = describe_sets(cat);
    b.step("categorize", sets);

    if !cat.has_any_endpoints {
        let reason = if endpoint_count == 0 {
            Reason::NoEndpoints
        } else {
            Reason::NoUsableEndpoints
        };
        let rule = match q.mode {
            ProxyMode::Ipvs => {
                "virtual server with no real servers; the kernel answers ICMP port unreachable".to_string()
            }
            _ => rule_text(svc, q, "REJECT", "has no endpoints"),
        };
        b.step(
            "no-endpoints",
            "no endpoint is ready or serving-terminating anywhere in the cluster",
        )
        .step("rule", rule);
        let conf = if ipvs {
            Confidence::SourceRead
        } else {
            Confidence::UpstreamTest
        };
        return b.finish(VerdictKind::Reject, Vec::new(), reason, conf, false);
    }

    let cluster: Vec<usize> = cat.cluster.as_deref().map(<[usize]>::to_vec).unwrap_or_default();
    let local: Option<Vec<usize>> = cat.local.as_deref().map(<[usize]>::to_vec);
    let cluster_reason = if cat.cluster_fallback {
        Reason::ClusterServingTerminating
    } else {
        Reason::ClusterReady
    };
    let local_reason = if cat.local_fallback {
        Reason::LocalServingTerminating
    } else {
        Reason::LocalReady
    };

    let use_cluster = |b: &mut Builder| {
        b.route.topology = cat.topology;
        b.route.fallback = cat.cluster_fallback.then_some(Fallback::ServingTerminating);
    };
    let use_local = |b: &mut Builder| {
        b.route.topology = TopologyMode::None;
        b.route.fallback = cat.local_fallback.then_some(Fallback::ServingTerminating);
    };

    if q.destination == Destination::ClusterIp {
        // ITP governs ClusterIP traffic from every source; ETP never applies.
        let masq = q.source != Source::Pod;
        if svc.internal_policy_local {
            b.step(
                "policy",
                "internalTrafficPolicy: Local: only endpoints on this node may be used",
            );
            let local = local.unwrap_or_default();
            if !local.is_empty() {
                use_local(&mut b);
                b.step(
                    "rule",
                    format!(
                        "{} chain KUBE-SVL-… with {} local endpoint(s)",
                        q.mode.as_str(),
                        local.len()
                    ),
                );
                return b.finish(
                    VerdictKind::Deliver,
                    local,
                    local_reason,
                    Confidence::UpstreamTest,
                    masq,
                );
            }
            if ipvs {
                if svc.externally_accessible() {
                    use_cluster(&mut b);
                    b.step(
                        "ipvs",
                        "IPVS programs the cluster endpoints when no local endpoint exists and the Service is externally reachable (kubernetes#97081): ITP Local is not enforced",
                    );
                    return b.finish(
                        VerdictKind::Deliver,
                        cluster,
                        Reason::IpvsLocalPolicyNotEnforced,
                        Confidence::Inferred,
                        masq,
                    );
                }
                b.step("ipvs", "IPVS virtual server with zero real servers: the kernel answers ICMP port unreachable (not a DROP)");
                return b.finish(
                    VerdictKind::Reject,
                    Vec::new(),
                    Reason::IpvsNoRealServers,
                    Confidence::Inferred,
                    false,
                );
            }
            b.step(
                "no-local",
                "endpoints exist on other nodes, none usable on this node",
            )
            .step("rule", rule_text(svc, q, "DROP", "has no local endpoints"));
            return b.finish(
                VerdictKind::Drop,
                Vec::new(),
                Reason::NoLocalEndpoints,
                Confidence::UpstreamTest,
                false,
            );
        }
        use_cluster(&mut b);
        b.step(
            "rule",
            format!(
                "{} chain KUBE-SVC-… with {} endpoint(s)",
                q.mode.as_str(),
                cluster.len()
            ),
        );
        return b.finish(
            VerdictKind::Deliver,
            cluster,
            cluster_reason,
            Confidence::UpstreamTest,
            masq,
        );
    }

    // NodePort, load balancer VIP, external IP: ETP governs, ITP never does.
    let tested_dest = matches!(q.destination, Destination::NodePort | Destination::LoadBalancer);
    let base_conf = if tested_dest {
        Confidence::UpstreamTest
    } else {
        Confidence::SourceRead
    };
    if !svc.external_policy_local {
        b.step(
            "policy",
            "externalTrafficPolicy: Cluster: any endpoint, source masqueraded",
        );
        use_cluster(&mut b);
        return b.finish(VerdictKind::Deliver, cluster, cluster_reason, base_conf, true);
    }
    b.step(
        "policy",
        "externalTrafficPolicy: Local: traffic from outside uses only endpoints on this node",
    );
    let local = local.unwrap_or_default();
    match q.source {
        Source::Pod | Source::Host if !ipvs => {
            if nft && q.source == Source::Host && local.is_empty() && q.destination != Destination::NodePort {
                b.step(
                    "nftables",
                    "filter-output (priority dstnat-10) checks no-endpoint-services before nat-output DNAT: the drop element matches host-originated traffic",
                );
                return b.finish(
                    VerdictKind::Drop,
                    Vec::new(),
                    Reason::NftablesHostExternalDrop,
                    Confidence::Inferred,
                    false,
                );
            }
            b.step(
                "short-circuit",
                "traffic from this node (pod or host) to an external address is short-circuited to the cluster chain",
            );
            use_cluster(&mut b);
            let conf = if local.is_empty() {
                Confidence::Inferred
            } else {
                base_conf
            };
            let masq = q.source == Source::Host;
            b.finish(
                VerdictKind::Deliver,
                cluster,
                Reason::ExternalPolicyShortCircuit,
                conf,
                masq,
            )
        }
        _ if !local.is_empty() => {
            use_local(&mut b);
            let conf = if ipvs { Confidence::SourceRead } else { base_conf };
            b.finish(VerdictKind::Deliver, local, local_reason, conf, false)
        }
        Source::External if !ipvs => {
            b.step("no-local", "no usable endpoint on this node")
                .step("rule", rule_text(svc, q, "DROP", "has no local endpoints"));
            b.finish(
                VerdictKind::Drop,
                Vec::new(),
                Reason::NoLocalEndpoints,
                base_conf,
                false,
            )
        }
        Source::External => {
            b.step(
                "ipvs",
                "IPVS uses the cluster endpoints but does not masquerade external traffic: the reply leaves with the pod address and is discarded",
            );
            b.finish(
                VerdictKind::Drop,
                Vec::new(),
                Reason::IpvsExternalReplyLost,
                Confidence::Inferred,
                false,
            )
        }
        Source::Pod | Source::Host => {
            b.step(
                "ipvs",
                "IPVS: no local endpoint, the virtual server uses the cluster endpoints (kubernetes#97081)",
            );
            use_cluster(&mut b);
            b.finish(
                VerdictKind::Deliver,
                cluster,
                Reason::IpvsLocalPolicyNotEnforced,
                Confidence::SourceRead,
                true,
            )
        }
    }
}

/// The filter rule kube-proxy writes for a DROP or REJECT, as `iptables-save` /
/// `nft list ruleset` would show it (chain and set names as in the proxiers; the
/// per-Service chain hashes are not computed).
fn rule_text(svc: &ServicePortInfo, q: RouteQuery, target: &str, comment: &str) -> String {
    let proto = svc.port.protocol.as_str().to_lowercase();
    let service = if svc.port.name.is_empty() {
        format!("{}/{}", svc.namespace, svc.name)
    } else {
        format!("{}/{}:{}", svc.namespace, svc.name, svc.port.name)
    };
    let v6 = svc.family == crate::objects::IpFamily::IPv6;
    let address = match q.destination {
        Destination::ClusterIp => svc.cluster_ip,
        Destination::LoadBalancer => svc.load_balancer_vips.first().copied(),
        Destination::ExternalIp => svc.external_ips.first().copied(),
        Destination::NodePort => None,
    };
    let port = match q.destination {
        Destination::NodePort if svc.port.node_port == 0 => "<allocated nodePort>".to_string(),
        Destination::NodePort => svc.port.node_port.to_string(),
        _ => svc.port.port.to_string(),
    };
    match q.mode {
        ProxyMode::Iptables => {
            let chain = if q.destination == Destination::ClusterIp {
                "KUBE-SERVICES"
            } else {
                "KUBE-EXTERNAL-SERVICES"
            };
            let dst = match address {
                Some(ip) => format!("-d {ip}/{}", if v6 { 128 } else { 32 }),
                None => "-m addrtype --dst-type LOCAL".to_string(),
            };
            format!(
                "{} filter: -A {chain} -m comment --comment \"{service} {comment}\" {dst} -p {proto} -m {proto} --dport {port} -j {target}",
                if v6 { "ip6tables" } else { "iptables" }
            )
        }
        ProxyMode::Nftables => {
            let verdict = if target == "DROP" {
                "drop"
            } else {
                "goto reject-chain"
            };
            let family = if v6 { "ip6" } else { "ip" };
            match address {
                Some(ip) => format!(
                    "add element {family} kube-proxy no-endpoint-services {{ {ip} . {proto} . {port} comment \"{service}\" : {verdict} }}"
                ),
                None => format!(
                    "add element {family} kube-proxy no-endpoint-nodeports {{ {proto} . {port} comment \"{service}\" : {verdict} }}"
                ),
            }
        }
        ProxyMode::Ipvs => format!("{target} ({comment})"),
    }
}

fn describe_sets(cat: &CategorizedEndpoints<'_>) -> String {
    let set = |s: &Option<std::borrow::Cow<'_, [usize]>>| match s {
        None => "not used".to_string(),
        Some(v) => format!("{} endpoint(s)", v.len()),
    };
    format!(
        "cluster set: {}{}{}; local set: {}{}; hasAnyEndpoints: {}",
        set(&cat.cluster),
        if cat.topology != TopologyMode::None {
            format!(" ({})", cat.topology.as_str())
        } else {
            String::new()
        },
        if cat.cluster_fallback {
            " (serving-terminating fallback)"
        } else {
            ""
        },
        set(&cat.local),
        if cat.local_fallback {
            " (serving-terminating fallback)"
        } else {
            ""
        },
        cat.has_any_endpoints
    )
}
