//! Which routes depend on facts the input does not give, and so cannot be stated as pinned
//! or read upstream ([`crate::proxy::confidence`]).
//!
//! The caller says what it assumed ([`Assumed`]: kube-proxy's version, the control plane's,
//! the proxy mode). A route only loses confidence when its answer actually follows a rule
//! that differs across what was assumed: the version table in docs/semantics.md lists them.
//! [`VersionSensitivity`] records, once per service port, which of those rules its
//! endpoints and objects touch; [`missing_facts`] then decides per route in constant time.

use crate::featuregate::{Component, Gate};
use crate::features::{ControlPlaneFeatures, ProxyFeatures};
use crate::objects::{
    ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE, EndpointSlice, LABEL_HEADLESS,
    LABEL_SERVICE_PROXY_NAME, Service,
};
use crate::proxy::{MissingFact, MissingFacts, ProxyEndpoint, Reason, Route, VerdictKind};

use super::EndpointSource;

/// What the caller could not establish and assumed (nothing, by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Assumed {
    /// kube-proxy's version on every node was assumed (no `--kube-proxy-version`, no
    /// kube-proxy image read: e.g. taken from the kubelet's version).
    pub kube_proxy_version: bool,
    /// The control plane's version was assumed (no `--kube-version`, no server version).
    pub kube_version: bool,
    /// kube-proxy's mode was assumed (files without `--proxy-mode` are read as iptables).
    pub proxy_mode: bool,
}

/// The facts of one service port that make some of its routes depend on versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VersionSensitivity {
    /// Some endpoint is serving and terminating: the fallback to them exists from 1.26.
    pub serving_terminating: bool,
    /// Some endpoint carries zone or node hints: read from 1.24 (zones) and 1.34 (nodes),
    /// without the topology annotation from 1.31.
    pub hints: bool,
    /// An address appears in several slices with differing copies: the copy kept changed in
    /// 1.36 (upstream PR #135593).
    pub duplicates: bool,
    /// The Service or one of its slices carries `service-proxy-name` or `headless`: which
    /// kind each excludes changed in 1.36 (upstream PR #134623).
    pub proxy_labels: bool,
    /// The slices were derived by the controller model for a Service asking for hints
    /// (`trafficDistribution` or a topology annotation): the controller's hint rules changed
    /// in 1.24, 1.31, 1.33 and 1.34.
    pub derived_hints: bool,
}

impl VersionSensitivity {
    /// The sensitivity of a port: its Service, the slices kube-proxy reads for it (before
    /// its informer filters), its endpoints, whether addresses are duplicated, and where the
    /// slices came from.
    pub fn of(
        svc: &Service,
        slices: &[&EndpointSlice],
        endpoints: &[ProxyEndpoint],
        duplicated: bool,
        source: EndpointSource,
    ) -> Self {
        let labelled = |labels: &crate::objects::Labels| {
            labels.contains_key(LABEL_SERVICE_PROXY_NAME) || labels.contains_key(LABEL_HEADLESS)
        };
        let asks_for_hints = svc.traffic_distribution.is_some()
            || svc.meta.annotations.contains_key(ANNOTATION_TOPOLOGY_MODE)
            || svc.meta.annotations.contains_key(ANNOTATION_TOPOLOGY_AWARE_HINTS);
        VersionSensitivity {
            serving_terminating: endpoints.iter().any(ProxyEndpoint::is_serving_terminating),
            hints: endpoints
                .iter()
                .any(|e| !e.zone_hints.is_empty() || !e.node_hints.is_empty()),
            duplicates: duplicated,
            proxy_labels: labelled(&svc.meta.labels) || slices.iter().any(|s| labelled(&s.meta.labels)),
            derived_hints: source == EndpointSource::Derived && asks_for_hints,
        }
    }
}

/// True when the route's endpoints come from the cluster set (where hints apply).
fn uses_cluster_set(route: &Route) -> bool {
    route.verdict == VerdictKind::Deliver
        && matches!(
            route.reason,
            Reason::ClusterReady
                | Reason::ClusterServingTerminating
                | Reason::ExternalPolicyShortCircuit
                | Reason::IpvsLocalPolicyNotEnforced
        )
}

/// Whether the route's answer follows a kube-proxy rule that changed across the supported
/// releases, given the port's sensitivity and the node's kube-proxy behaviour.
pub fn depends_on_kube_proxy_version(
    route: &Route,
    s: &VersionSensitivity,
    proxy: &ProxyFeatures,
    windows: bool,
    internal_policy_local: bool,
) -> bool {
    if route.verdict == VerdictKind::NotProxied {
        // Headless and ExternalName are version-independent; the label exclusions are not.
        return s.proxy_labels;
    }
    s.duplicates
        || s.proxy_labels
        // winkernel honours internalTrafficPolicy: Local from 1.27 (upstream PR #114407).
        || (windows && internal_policy_local)
        // The serving-terminating fallback (1.26): used here, or absent and would be.
        || route.fallback.is_some()
        || (!proxy.terminating_fallback && s.serving_terminating && route.verdict != VerdictKind::Deliver)
        || (s.hints && uses_cluster_set(route))
}

/// The missing facts of one route (the mode is handled where modes are compared).
pub fn missing_facts(
    route: &Route,
    s: &VersionSensitivity,
    proxy: &ProxyFeatures,
    windows: bool,
    internal_policy_local: bool,
    assumed: Assumed,
) -> MissingFacts {
    let mut missing = MissingFacts::NONE;
    if assumed.kube_proxy_version
        && depends_on_kube_proxy_version(route, s, proxy, windows, internal_policy_local)
    {
        missing.insert(MissingFact::KubeProxyVersion);
    }
    if assumed.kube_version && s.derived_hints && uses_cluster_set(route) {
        missing.insert(MissingFact::KubeVersion);
    }
    missing
}

/// The trace line naming the missing facts of a route.
pub fn describe(missing: MissingFacts) -> String {
    let facts: Vec<&str> = missing.iter().map(MissingFact::explain).collect();
    format!("confidence lowered: {}", facts.join("; "))
}

/// The `--feature-gates` overrides a route's answer follows: each overridden gate whose
/// behaviour the route touches (by the same sensitivity as the version rules above).
/// `service_itp_local` is the Service's own `internalTrafficPolicy: Local`, before any
/// gate. Empty, fast, when nothing is overridden.
pub fn gates_in_play(
    route: &Route,
    s: &VersionSensitivity,
    proxy: &ProxyFeatures,
    control_plane: &ControlPlaneFeatures,
    service_itp_local: bool,
) -> Vec<(Component, Gate, bool)> {
    if proxy.gates.is_empty()
        && control_plane.apiserver_gates.is_empty()
        && control_plane.controller_manager_gates.is_empty()
    {
        return Vec::new();
    }
    let hinted = s.hints && uses_cluster_set(route);
    let derived = s.derived_hints && uses_cluster_set(route);
    let mut out = Vec::new();
    for (gate, value) in control_plane.apiserver_gates.iter() {
        let touches = match gate {
            Gate::ServiceInternalTrafficPolicy => service_itp_local,
            Gate::ServiceTrafficDistribution | Gate::PreferSameTrafficDistribution => derived,
            _ => false,
        };
        if touches {
            out.push((Component::KubeApiserver, gate, value));
        }
    }
    for (gate, value) in control_plane.controller_manager_gates.iter() {
        // The StatefulSet controller's gate changes no route.
        if derived && gate != Gate::MaxUnavailableStatefulSet {
            out.push((Component::KubeControllerManager, gate, value));
        }
    }
    for (gate, value) in proxy.gates.iter() {
        let touches = match gate {
            Gate::ServiceInternalTrafficPolicy => service_itp_local,
            Gate::ProxyTerminatingEndpoints => s.serving_terminating,
            Gate::TopologyAwareHints
            | Gate::ServiceTrafficDistribution
            | Gate::PreferSameTrafficDistribution => hinted,
            Gate::MaxUnavailableStatefulSet => false,
        };
        if touches {
            out.push((Component::KubeProxy, gate, value));
        }
    }
    out
}

/// The trace line naming the overridden gates a route follows.
pub fn describe_gates(gates: &[(Component, Gate, bool)]) -> String {
    let named: Vec<String> = gates.iter().map(|(c, g, v)| format!("{c}:{g}={v}")).collect();
    format!(
        "follows feature gates set by --feature-gates, not the release defaults: {}",
        named.join(", ")
    )
}
