//! Why a connection is delivered, dropped or rejected on a node: the data behind a route.
//!
//! [`explain`] gathers, for one (service port, family, node, source, destination), every
//! endpoint with the conditions that decided whether it is usable (and the pod state behind
//! them when the pod is known), the hint decisions of `topologyModeFromHints`, the cluster
//! and local sets, the route with its trace, and, for drops and rejects, what would change
//! the outcome. `locality explain` prints it in words or as JSON.

use std::collections::HashMap;

use serde::Serialize;

use crate::matrix::{Matrix, MatrixRoute};
use crate::objects::{ClusterState, Pod};
use crate::proxy::{
    CategorizedEndpoints, Destination, HintDecision, ProxyEndpoint, Reason, Source, TopologyMode, TraceStep,
    VerdictKind,
};

/// How an endpoint stands for kube-proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Usability {
    /// Ready: used normally.
    Ready,
    /// Serving and terminating: used only as a fallback.
    ServingTerminating,
    /// Neither: never used.
    Unusable,
}

/// One endpoint and the facts that decided its use.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointFacts {
    /// `IP:port`.
    pub endpoint: String,
    /// `nodeName`, if set.
    pub node: Option<String>,
    /// `zone`, if set.
    pub zone: Option<String>,
    /// The pod behind it (`targetRef`), if known.
    pub pod: Option<String>,
    /// Conditions as kube-proxy reads them.
    pub ready: bool,
    /// Serving.
    pub serving: bool,
    /// Terminating.
    pub terminating: bool,
    /// Usability.
    pub usability: Usability,
    /// On the node being explained.
    pub local: bool,
    /// `hints.forZones`.
    pub zone_hints: Vec<String>,
    /// `hints.forNodes`.
    pub node_hints: Vec<String>,
    /// In the cluster set on this node.
    pub in_cluster_set: bool,
    /// In the local set on this node.
    pub in_local_set: bool,
    /// Why the conditions are what they are, from the pod when it is in the input.
    pub why: String,
}

/// The verdict of one proxy mode (when the mode is unknown and the modes disagree).
#[derive(Debug, Clone, Serialize)]
pub struct ModeVerdict {
    /// `iptables`, `nftables` or `ipvs`.
    pub mode: &'static str,
    /// Its verdict.
    pub verdict: VerdictKind,
    /// Its reason.
    pub reason: Reason,
}

/// `sessionAffinity: ClientIP` as Kubernetes writes it (`sessionAffinityConfig.clientIP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SessionAffinity {
    /// `clientIP`.
    #[serde(rename = "clientIP")]
    pub client_ip: ClientIpAffinity,
}

/// `sessionAffinityConfig.clientIP`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientIpAffinity {
    /// How long a client address sticks to its endpoint after its last new connection.
    pub timeout_seconds: u32,
}

impl SessionAffinity {
    /// Client-IP affinity with `timeout_seconds`.
    pub fn client_ip(timeout_seconds: u32) -> Self {
        SessionAffinity {
            client_ip: ClientIpAffinity { timeout_seconds },
        }
    }
}

/// The explanation of one route.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// `namespace/name`.
    pub service: String,
    /// Port as `name:port/PROTO` (or `port/PROTO`).
    pub port: String,
    /// IP family.
    pub ip_family: &'static str,
    /// The node.
    pub node: String,
    /// Its zone, if labelled.
    pub zone: Option<String>,
    /// Source.
    pub source: Source,
    /// Destination.
    pub destination: Destination,
    /// The Service's settings that matter, in words.
    pub policy: Vec<String>,
    /// What the cluster would have set on the Service and its EndpointSlices that the input
    /// left out ([`crate::admission`]; empty for live objects), as `object: field: value (by)`.
    pub defaulted: Vec<String>,
    /// `EndpointSlices` or `derived`.
    pub endpoint_source: crate::matrix::EndpointSource,
    /// Every endpoint of the port.
    pub endpoints: Vec<EndpointFacts>,
    /// Hint decisions, in words, in the order kube-proxy takes them.
    pub topology: Vec<String>,
    /// The hint mode applied to the cluster set.
    pub topology_mode: TopologyMode,
    /// Cluster set size (`None`: not used).
    pub cluster_set: Option<usize>,
    /// Local set size (`None`: not used).
    pub local_set: Option<usize>,
    /// The verdict.
    pub verdict: VerdictKind,
    /// Per-mode verdicts when the mode is unknown and they disagree.
    pub by_mode: Vec<ModeVerdict>,
    /// Endpoints delivered to.
    pub delivered_to: Vec<String>,
    /// Reason code.
    pub reason: Reason,
    /// Confidence, as a code.
    pub confidence: crate::proxy::Confidence,
    /// What the confidence means, in words.
    pub confidence_note: &'static str,
    /// What the verdict depends on that the input does not give (codes), which lowered the
    /// confidence.
    pub missing_facts: crate::proxy::MissingFacts,
    /// Each missing fact in words, with what would supply it.
    pub missing_notes: Vec<&'static str>,
    /// `sessionAffinity: ClientIP` on a delivered route: each client address sticks to one
    /// of `deliveredTo` (not a uniform spread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_affinity: Option<SessionAffinity>,
    /// The `loadBalancerSourceRanges` the verdict is conditional on (the client's address must
    /// be inside one; from elsewhere the connection is dropped). Empty when none applies.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub source_ranges: Vec<String>,
    /// What the client sees.
    pub client_sees: &'static str,
    /// Masqueraded.
    pub masquerade: bool,
    /// The ordered trace from the model.
    pub trace: Vec<TraceStep>,
    /// For drops and rejects: what would change the outcome.
    pub remedies: Vec<String>,
}

fn pod_facts(pod: Option<&Pod>, ep: &ProxyEndpoint) -> String {
    let Some(pod) = pod else {
        return match (ep.ready, ep.serving, ep.terminating) {
            (true, _, false) => "ready per its EndpointSlice".into(),
            (true, _, true) => {
                "ready and terminating per its EndpointSlice (publishNotReadyAddresses)".into()
            }
            (false, true, true) => "terminating, still serving, per its EndpointSlice".into(),
            (false, false, true) => "terminating and no longer serving per its EndpointSlice".into(),
            (false, _, false) => "not ready per its EndpointSlice".into(),
        };
    };
    let mut parts = Vec::new();
    parts.push(format!(
        "pod {} is {}",
        pod.meta.name,
        if pod.ready { "Ready" } else { "not Ready" }
    ));
    if let Some(ts) = &pod.meta.deletion_timestamp {
        parts.push(format!("being deleted since {ts}"));
    }
    if pod.spec.node_name.is_empty() {
        parts.push("not scheduled".into());
    }
    parts.join(", ")
}

fn hint_decision_text(d: &HintDecision, endpoints: &[ProxyEndpoint], zone: &str, node: &str) -> String {
    match d {
        HintDecision::NotConsidered => {
            "hints are not considered: internalTrafficPolicy Local and not externally reachable, so only the local set is used".into()
        }
        HintDecision::NoReadyEndpoints => "no ready endpoint, so no topology mode".into(),
        HintDecision::AnnotationRequired => {
            "kube-proxy before 1.31 uses hints only when the Service's topology annotation is set (not \"\", \"disabled\", \"Disabled\")".into()
        }
        HintDecision::HintsOff => {
            "this kube-proxy uses no hints: TopologyAwareHints and ServiceTrafficDistribution are off (before 1.24 by default, or --feature-gates)".into()
        }
        HintDecision::NodeHintsIgnored => {
            "node hints (forNodes) are ignored: PreferSameTrafficDistribution is off in this kube-proxy (on by default from 1.34; or --feature-gates)".into()
        }
        HintDecision::Applied(TopologyMode::PreferSameNode) => {
            format!("every ready endpoint has a node hint and at least one is for {node}: PreferSameNode applies")
        }
        HintDecision::Applied(TopologyMode::PreferSameZone) => {
            format!("every ready endpoint has a zone hint and at least one is for zone {zone:?}: PreferSameZone applies")
        }
        HintDecision::Applied(TopologyMode::None) => "no topology".into(),
        HintDecision::NoHints => "no ready endpoint carries hints: all ready endpoints are used".into(),
        HintDecision::NotAllHinted { mode, unhinted } => format!(
            "{} not applied: ready endpoint {} has no {} hint (all-or-nothing)",
            mode.as_str(),
            endpoints.get(*unhinted).map(|e| e.to_string()).unwrap_or_default(),
            if *mode == TopologyMode::PreferSameNode { "node" } else { "zone" }
        ),
        HintDecision::NoneForThisNode { mode } => match mode {
            TopologyMode::PreferSameNode => format!("no ready endpoint is hinted for node {node}: PreferSameNode not applied"),
            _ => format!("no ready endpoint is hinted for zone {zone:?}: PreferSameZone not applied"),
        },
    }
}

fn confidence_note(c: crate::proxy::Confidence, missing: crate::proxy::MissingFacts) -> &'static str {
    if !missing.is_empty() {
        return "not established: the verdict depends on what the input does not say";
    }
    match c {
        crate::proxy::Confidence::UpstreamTest => "pinned by an upstream unit test",
        crate::proxy::Confidence::SourceRead => "read in upstream source, not pinned by a test",
        crate::proxy::Confidence::Inferred => {
            "inferred from the rule layout or kernel behaviour: not established fact"
        }
    }
}

fn remedies(route: &MatrixRoute, node: &str, m: &Matrix<'_>, port: usize) -> Vec<String> {
    let entry = &m.ports[port];
    let mut out = Vec::new();
    match route.route.reason {
        Reason::NoLocalEndpoints | Reason::IpvsNoRealServers | Reason::IpvsExternalReplyLost => {
            out.push(format!(
                "run a Ready endpoint on {node} (e.g. make the backing DaemonSet tolerate and select this node)"
            ));
            if route.route.destination == Destination::ClusterIp {
                out.push(
                    "or, if the traffic may leave the node, drop internalTrafficPolicy: Local and use trafficDistribution: PreferSameNode (falls back instead of dropping)"
                        .into(),
                );
            } else {
                out.push(
                    "or set externalTrafficPolicy: Cluster (loses the client source IP), or let the load balancer's health checks (healthCheckNodePort) steer traffic away from this node"
                        .into(),
                );
            }
        }
        Reason::NoEndpoints => {
            if entry.service.selector.is_none() {
                out.push("the Service has no selector: create an EndpointSlice labelled kubernetes.io/service-name for it".into());
            } else {
                out.push("no pod matches the selector with this port: check the selector, the pods' labels and a named targetPort".into());
            }
        }
        Reason::NoUsableEndpoints => out.push(
            "every endpoint is not ready (and not serving-terminating): fix the pods' readiness".into(),
        ),
        Reason::NftablesHostExternalDrop | Reason::IpvsHostReplyLost => out.push(format!(
            "run a Ready endpoint on {node}, or reach the Service by its clusterIP from host-network clients"
        )),
        Reason::LoadBalancerSourceRanges => out.push(format!(
            "add {node}'s address (or a range holding it) to loadBalancerSourceRanges, or reach the Service by its clusterIP from inside the cluster"
        )),
        _ => {}
    }
    out
}

/// Explains one route. `port` and `node` index [`Matrix::ports`] and [`Matrix::nodes`].
pub fn explain(
    m: &Matrix<'_>,
    state: &ClusterState,
    port: usize,
    node: usize,
    source: Source,
    destination: Destination,
) -> Option<Explanation> {
    let entry = &m.ports[port];
    let n = &m.nodes[node];
    let routes = m.node_routes(port, node);
    let route = routes
        .routes
        .iter()
        .find(|r| r.route.source == source && r.route.destination == destination)?;
    let cat: &CategorizedEndpoints<'_> = &routes.categorized;
    let svc = entry.service;
    let pods: HashMap<&str, &Pod> = state
        .pods
        .iter()
        .filter(|p| p.meta.namespace == svc.meta.namespace)
        .map(|p| (p.meta.name.as_str(), p))
        .collect();
    let pod_of = |ep: &ProxyEndpoint| -> Option<&Pod> { pods.get(ep.target.as_deref()?).copied() };
    let in_set =
        |s: &Option<std::borrow::Cow<'_, [usize]>>, i: usize| s.as_ref().is_some_and(|v| v.contains(&i));
    let endpoints = entry
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, ep)| EndpointFacts {
            endpoint: ep.to_string(),
            node: ep.node_name.clone(),
            zone: ep.zone.clone(),
            pod: ep.target.clone(),
            ready: ep.ready,
            serving: ep.serving,
            terminating: ep.terminating,
            usability: if ep.ready {
                Usability::Ready
            } else if ep.serving && ep.terminating {
                Usability::ServingTerminating
            } else {
                Usability::Unusable
            },
            local: ep.is_local(n.name()),
            zone_hints: ep.zone_hints.clone(),
            node_hints: ep.node_hints.clone(),
            in_cluster_set: in_set(&cat.cluster, i),
            in_local_set: in_set(&cat.local, i),
            why: pod_facts(pod_of(ep), ep),
        })
        .collect();
    let mut policy = Vec::new();
    let itp = svc
        .internal_traffic_policy
        .map(|p| format!("{p:?}"))
        .unwrap_or_else(|| "Cluster (unset)".into());
    policy.push(format!("internalTrafficPolicy: {itp}"));
    if entry.info.externally_accessible() {
        let etp = svc
            .external_traffic_policy
            .map(|p| format!("{p:?}"))
            .unwrap_or_else(|| "Cluster (unset)".into());
        policy.push(format!("externalTrafficPolicy: {etp}"));
    }
    if let Some(td) = &svc.traffic_distribution {
        policy.push(format!("trafficDistribution: {td}"));
    }
    if let Some(a) = &entry.info.hints_annotation {
        policy.push(format!("topology annotation: {a}"));
    }
    if let Some(t) = entry.info.sticky_max_age_seconds {
        policy.push(format!("sessionAffinity: ClientIP (timeoutSeconds: {t})"));
    }
    if destination == Destination::LoadBalancer && !entry.info.load_balancer_source_ranges.is_empty() {
        let ranges: Vec<String> = entry
            .info
            .load_balancer_source_ranges
            .iter()
            .map(ToString::to_string)
            .collect();
        policy.push(format!("loadBalancerSourceRanges: [{}]", ranges.join(", ")));
    }
    let mut defaulted: Vec<String> = svc
        .meta
        .defaulted
        .iter()
        .map(|d| format!("Service {}: {d}", svc.meta.name))
        .collect();
    for slice in state.endpoint_slices.iter().filter(|s| {
        s.meta.namespace == svc.meta.namespace && s.service_name() == Some(svc.meta.name.as_str())
    }) {
        defaulted.extend(
            slice
                .meta
                .defaulted
                .iter()
                .filter(|d| d.field != "metadata.namespace")
                .map(|d| format!("EndpointSlice {}: {d}", slice.meta.name)),
        );
    }
    let topology = cat
        .hint_decisions()
        .map(|d| hint_decision_text(d, &entry.endpoints, n.zone, n.name()))
        .collect();
    let by_mode = route
        .by_mode
        .iter()
        .flatten()
        .map(|(mode, r)| ModeVerdict {
            mode: mode.as_str(),
            verdict: r.verdict,
            reason: r.reason,
        })
        .collect();
    Some(Explanation {
        service: format!("{}/{}", svc.meta.namespace, svc.meta.name),
        port: entry.info.port.to_string(),
        ip_family: entry.info.family.as_str(),
        node: n.name().to_string(),
        zone: (!n.zone.is_empty()).then(|| n.zone.to_string()),
        source,
        destination,
        policy,
        defaulted,
        endpoint_source: entry.endpoint_source,
        endpoints,
        topology,
        topology_mode: cat.topology,
        cluster_set: cat.cluster.as_ref().map(|s| s.len()),
        local_set: cat.local.as_ref().map(|s| s.len()),
        verdict: route.route.verdict,
        by_mode,
        delivered_to: route
            .route
            .endpoints
            .iter()
            .map(|i| entry.endpoints[*i].to_string())
            .collect(),
        reason: route.route.reason,
        confidence: route.route.confidence,
        confidence_note: confidence_note(route.route.confidence, route.route.missing),
        missing_facts: route.route.missing,
        missing_notes: route
            .route
            .missing
            .iter()
            .map(crate::proxy::MissingFact::explain)
            .collect(),
        session_affinity: route.route.session_affinity.map(SessionAffinity::client_ip),
        source_ranges: entry.source_ranges(route.route.source_ranges),
        client_sees: route.route.verdict.client_sees(),
        masquerade: route.route.masquerade,
        trace: route.route.trace.clone(),
        remedies: remedies(route, n.name(), m, port),
    })
}
