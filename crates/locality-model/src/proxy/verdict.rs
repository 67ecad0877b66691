//! What happens to a connection: the verdict per traffic source and destination.
//!
//! Mirrors the rule layout of `pkg/proxy/iptables/proxier.go`, `pkg/proxy/nftables/proxier.go`
//! (`syncProxyRules`) and `pkg/proxy/ipvs/proxier.go` (`syncEndpoint`) as summarised in
//! docs/upstream.md §2 and §7. Every [`Route`] carries a [`Reason`], a [`Confidence`] and
//! the ordered [`TraceStep`]s that produced it.

pub use super::codes::{Destination, ProxyMode, Reason, Source, VerdictKind};
pub use super::confidence::{Assessment, Confidence, MissingFact, MissingFacts};
use super::endpoint::{NotProxiedReason, ServicePortInfo};
pub use super::route::{Fallback, Route, RouteQuery, TraceStep};
use super::rule_text::{describe_sets, rule_text};
use super::topology::{CategorizedEndpoints, TopologyMode};

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
        missing: MissingFacts::NONE,
        session_affinity: None,
        source_ranges: false,
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
    /// Write the trace (`false`: the same route with an empty trace, for callers that read
    /// only the verdict and endpoints).
    explain: bool,
}

impl Builder {
    fn step(&mut self, step: &'static str, detail: impl Into<String>) -> &mut Self {
        if self.explain {
            self.route.trace.push(TraceStep::new(step, detail));
        }
        self
    }
    /// [`Builder::step`] with a detail worth building only when it is written.
    fn step_with<S: Into<String>>(&mut self, step: &'static str, detail: impl FnOnce() -> S) -> &mut Self {
        if self.explain {
            self.route.trace.push(TraceStep::new(step, detail()));
        }
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
/// node that first processes the packet (docs/upstream.md §7, with §2.2 and §2.3), then
/// what the Service's `loadBalancerSourceRanges` firewall and `sessionAffinity` make of it.
///
/// Assumes kube-proxy's local-traffic detector is configured (the default: `--cluster-cidr`
/// or `--detect-local-mode`), and `masqueradeAll=false`.
pub fn route(
    svc: &ServicePortInfo,
    cat: &CategorizedEndpoints,
    endpoint_count: usize,
    q: RouteQuery,
) -> Route {
    route_with(svc, cat, endpoint_count, q, true, true)
}

/// [`route`], with or without the `loadBalancerSourceRanges` firewall (winkernel has none),
/// with or without the trace (`explain`: `false` gives the same route with an empty trace,
/// without building the text nobody reads, e.g. a simulation's step over every node).
pub(crate) fn route_with(
    svc: &ServicePortInfo,
    cat: &CategorizedEndpoints,
    endpoint_count: usize,
    q: RouteQuery,
    firewall: bool,
    explain: bool,
) -> Route {
    if let Some(np) = svc.not_proxied {
        let mut r = not_proxied(q.source, q.destination, not_proxied_reason(np));
        if !explain {
            r.trace.clear();
        }
        return r;
    }
    let mut r = by_endpoints(svc, cat, endpoint_count, q, explain);
    if firewall && q.destination == Destination::LoadBalancer {
        super::firewall::apply(svc, q, &mut r);
    }
    if r.verdict == VerdictKind::Deliver
        && let Some(seconds) = svc.sticky_max_age_seconds
    {
        r.session_affinity = Some(seconds);
        if explain {
            r.trace.push(TraceStep::new(
                "session-affinity",
                super::affinity::describe(q.mode, seconds, r.endpoints.len()),
            ));
        }
    }
    if !explain {
        // What the firewall wrote.
        r.trace.clear();
    }
    r
}

/// The verdict from the endpoints alone.
fn by_endpoints(
    svc: &ServicePortInfo,
    cat: &CategorizedEndpoints,
    endpoint_count: usize,
    q: RouteQuery,
    explain: bool,
) -> Route {
    let mut b = Builder {
        explain,
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
            missing: MissingFacts::NONE,
            session_affinity: None,
            source_ranges: false,
            trace: Vec::new(),
        },
    };
    let ipvs = q.mode == ProxyMode::Ipvs;
    let nft = q.mode == ProxyMode::Nftables;
    b.step_with("categorize", || describe_sets(cat));

    if !cat.has_any_endpoints {
        let reason = if endpoint_count == 0 {
            Reason::NoEndpoints
        } else {
            Reason::NoUsableEndpoints
        };
        let rule = || match q.mode {
            ProxyMode::Ipvs => {
                "virtual server with no real servers; the kernel answers ICMP port unreachable".to_string()
            }
            _ => rule_text(svc, q, "REJECT", "has no endpoints"),
        };
        b.step(
            "no-endpoints",
            "no endpoint is ready or serving-terminating anywhere in the cluster",
        )
        .step_with("rule", rule);
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
                b.step_with("rule", || {
                    format!(
                        "{} chain KUBE-SVL-… with {} local endpoint(s)",
                        q.mode.as_str(),
                        local.len()
                    )
                });
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
            .step_with("rule", || rule_text(svc, q, "DROP", "has no local endpoints"));
            return b.finish(
                VerdictKind::Drop,
                Vec::new(),
                Reason::NoLocalEndpoints,
                Confidence::UpstreamTest,
                false,
            );
        }
        use_cluster(&mut b);
        b.step_with("rule", || {
            format!(
                "{} chain KUBE-SVC-… with {} endpoint(s)",
                q.mode.as_str(),
                cluster.len()
            )
        });
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
                .step_with("rule", || rule_text(svc, q, "DROP", "has no local endpoints"));
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
        Source::Host if q.destination != Destination::NodePort => {
            b.step(
                "ipvs",
                "IPVS: no local endpoint, the virtual server uses the cluster endpoints (kubernetes#97081), but a connection from the node's own network namespace to an address bound on kube-ipvs0 leaves with that address as its source and is not masqueraded under ETP Local: the endpoint's reply goes to the same address, bound on its own node too, and is lost (kubernetes#93456)",
            );
            b.finish(
                VerdictKind::Drop,
                Vec::new(),
                Reason::IpvsHostReplyLost,
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
