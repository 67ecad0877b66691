//! The behaviours each Kubernetes release switches on by default, per component, and what
//! `--feature-gates` overrides change.
//!
//! What decides behaviour is the release where a feature is **on by default** in the
//! component that implements it (docs/design.md §2 "Versions and skew", docs/upstream.md §5),
//! not its GA release. The API server and the controller manager share
//! `--kube-version`; kube-proxy has its own `--kube-proxy-version` (it may lag up to three
//! minors).

use crate::featuregate::{Component, FeatureGates, Gate, GateError, GateOverrides};
use crate::version::KubeVersion;

/// The behaviours of the control plane (API server + controller manager) at a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlPlaneFeatures {
    /// The version these were derived from.
    pub version: KubeVersion,
    /// `TopologyAwareHints` on in the controller manager: the controller honours
    /// `topology-mode: Auto` (beta on 1.24).
    pub topology_aware_hints: bool,
    /// `ServiceTrafficDistribution` on in the API server (else it drops the field) and the
    /// controller manager: `trafficDistribution: PreferClose` (beta on 1.31).
    pub service_traffic_distribution: bool,
    /// `PreferSameTrafficDistribution` on in the API server and the controller manager:
    /// PreferSameZone / PreferSameNode (beta on 1.34).
    pub prefer_same_traffic_distribution: bool,
    /// `ServiceInternalTrafficPolicy` on in the API server: `spec.internalTrafficPolicy` is
    /// kept (on by default from 1.22; off, `dropServiceDisabledFields` drops it).
    pub internal_traffic_policy: bool,
    /// The controller no longer writes dummy `forZones: [{name: ""}]` hints for zone-less
    /// endpoints (since 1.33, endpointslice commit ae45d1cc).
    pub no_empty_zone_hints: bool,
    /// `MaxUnavailableStatefulSet` on in the API server (else it drops a StatefulSet's
    /// `rollingUpdate.maxUnavailable`) and the controller manager: the StatefulSet controller
    /// replaces up to `maxUnavailable` pods at once (beta on 1.35).
    pub max_unavailable_stateful_set: bool,
    /// `--feature-gates` overrides of the API server in effect.
    pub apiserver_gates: GateOverrides,
    /// `--feature-gates` overrides of the controller manager in effect.
    pub controller_manager_gates: GateOverrides,
}

impl ControlPlaneFeatures {
    /// Defaults of a release.
    pub fn at(version: KubeVersion) -> Self {
        Self::applying(version, &FeatureGates::default())
    }

    /// A release with `--feature-gates` overrides of kube-apiserver and
    /// kube-controller-manager, refused as those components refuse them
    /// ([`FeatureGates::check`]).
    pub fn with_gates(version: KubeVersion, gates: &FeatureGates) -> Result<Self, GateError> {
        gates.check(Component::KubeApiserver, version)?;
        gates.check(Component::KubeControllerManager, version)?;
        Ok(Self::applying(version, gates))
    }

    /// A release with overrides already checked: overrides of gates that cannot be set at
    /// `version` (absent, locked, removed) have no effect.
    ///
    /// The API server's gates act through the fields it keeps (`pkg/registry/core/service/
    /// strategy.go` `dropServiceDisabledFields`); the controller manager's through the
    /// EndpointSlice controller (`pkg/controller/endpointslice/endpointslice_controller.go`
    /// `NewController`: a topology cache only with `TopologyAwareHints`,
    /// `WithTrafficDistributionEnabled(ServiceTrafficDistribution)`) and the StatefulSet
    /// controller (`pkg/controller/statefulset/stateful_set_control.go` `updateStatefulSet`:
    /// `maxUnavailable` only with `MaxUnavailableStatefulSet`).
    pub fn applying(version: KubeVersion, gates: &FeatureGates) -> Self {
        let api = |g| gates.enabled(Component::KubeApiserver, g, version);
        let kcm = |g| gates.enabled(Component::KubeControllerManager, g, version);
        let field_kept = api(Gate::ServiceTrafficDistribution);
        ControlPlaneFeatures {
            version,
            topology_aware_hints: kcm(Gate::TopologyAwareHints),
            service_traffic_distribution: field_kept && kcm(Gate::ServiceTrafficDistribution),
            prefer_same_traffic_distribution: field_kept
                && api(Gate::PreferSameTrafficDistribution)
                && kcm(Gate::PreferSameTrafficDistribution),
            internal_traffic_policy: api(Gate::ServiceInternalTrafficPolicy),
            no_empty_zone_hints: version.at_least(1, 33),
            max_unavailable_stateful_set: api(Gate::MaxUnavailableStatefulSet)
                && kcm(Gate::MaxUnavailableStatefulSet),
            apiserver_gates: gates.overrides(Component::KubeApiserver, version),
            controller_manager_gates: gates.overrides(Component::KubeControllerManager, version),
        }
    }
}

/// The behaviours of kube-proxy at a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProxyFeatures {
    /// The version these were derived from.
    pub version: KubeVersion,
    /// `internalTrafficPolicy` honoured (beta, on by default, from 1.22).
    pub internal_traffic_policy: bool,
    /// `ProxyTerminatingEndpoints`: serving-terminating fallback (on by default from 1.26).
    pub terminating_fallback: bool,
    /// Zone hints are used at all (`TopologyAwareHints` on by default from 1.24).
    pub zone_hints: bool,
    /// Before 1.31 kube-proxy also required the Service's topology annotation to be set to a
    /// value other than `""`, `disabled`, `Disabled` before using hints (pkg/proxy/topology.go
    /// before the `ServiceTrafficDistribution` gate went beta).
    pub hints_need_annotation: bool,
    /// `PreferSameTrafficDistribution`: node hints read (`forNodes`, on by default from 1.34).
    pub node_hints: bool,
    /// One `IP:port` in several slices: a non-terminating copy wins (from 1.36, upstream PR
    /// #135593); before, a copy on kube-proxy's own node wins (`endpointslicecache.go`
    /// `addEndpoints`; see [`crate::proxy::duplicates`]).
    pub duplicates_non_terminating_win: bool,
    /// Its informers filter each kind on its own label only (from 1.36, upstream PR #134623):
    /// Services on `service-proxy-name`, EndpointSlices on `headless`. Before, both labels
    /// excluded both kinds (`cmd/kube-proxy/app/server.go`).
    pub informer_filters_per_kind: bool,
    /// `--feature-gates` overrides of this kube-proxy in effect.
    pub gates: GateOverrides,
}

impl ProxyFeatures {
    /// Defaults of a release.
    pub fn at(version: KubeVersion) -> Self {
        Self::applying(version, &FeatureGates::default())
    }

    /// A release with `--feature-gates` overrides of kube-proxy, refused as kube-proxy
    /// refuses them ([`FeatureGates::check`]).
    pub fn with_gates(version: KubeVersion, gates: &FeatureGates) -> Result<Self, GateError> {
        gates.check(Component::KubeProxy, version)?;
        Ok(Self::applying(version, gates))
    }

    /// A release with overrides already checked: overrides of gates that cannot be set at
    /// `version` (absent, locked, removed) have no effect.
    ///
    /// Zone hints follow `pkg/proxy/topology.go` `canUseTopology` (1.30–1.32): hints need
    /// `TopologyAwareHints` or `ServiceTrafficDistribution`, and without the latter the
    /// topology annotation (KEP-4444 "Changes within kube-proxy": with the gate on, hints are
    /// considered whatever the annotation or field say); node hints follow `topologyModeFromHints` (checks
    /// `PreferSameTrafficDistribution`); the fallback `CategorizeEndpoints` (checks
    /// `ProxyTerminatingEndpoints` before 1.30); `internalTrafficPolicy` the service port's
    /// `internalPolicyLocal` (`pkg/proxy/serviceport.go`, `ServiceInternalTrafficPolicy`
    /// before 1.28).
    pub fn applying(version: KubeVersion, gates: &FeatureGates) -> Self {
        let on = |g| gates.enabled(Component::KubeProxy, g, version);
        let traffic_distribution = on(Gate::ServiceTrafficDistribution);
        ProxyFeatures {
            version,
            internal_traffic_policy: on(Gate::ServiceInternalTrafficPolicy),
            terminating_fallback: on(Gate::ProxyTerminatingEndpoints),
            zone_hints: on(Gate::TopologyAwareHints) || traffic_distribution,
            hints_need_annotation: !traffic_distribution,
            node_hints: on(Gate::PreferSameTrafficDistribution),
            duplicates_non_terminating_win: version.at_least(1, 36),
            informer_filters_per_kind: version.at_least(1, 36),
            gates: gates.overrides(Component::KubeProxy, version),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_follow_on_by_default_releases() {
        let p = ProxyFeatures::at(KubeVersion::new(1, 25));
        assert!(p.internal_traffic_policy && !p.terminating_fallback && !p.node_hints);
        assert!(ProxyFeatures::at(KubeVersion::new(1, 26)).terminating_fallback);
        assert!(!ProxyFeatures::at(KubeVersion::new(1, 33)).node_hints);
        assert!(ProxyFeatures::at(KubeVersion::new(1, 34)).node_hints);
        let c = ControlPlaneFeatures::at(KubeVersion::new(1, 30));
        assert!(c.topology_aware_hints && !c.service_traffic_distribution);
        assert!(ControlPlaneFeatures::at(KubeVersion::new(1, 31)).service_traffic_distribution);
        assert!(!ControlPlaneFeatures::at(KubeVersion::new(1, 33)).prefer_same_traffic_distribution);
        assert!(ControlPlaneFeatures::at(KubeVersion::new(1, 34)).prefer_same_traffic_distribution);
    }

    fn gates(flags: &[&str]) -> FeatureGates {
        FeatureGates::from_flags(flags).unwrap()
    }

    #[test]
    fn kube_proxy_gates_switch_its_behaviours() {
        let v = KubeVersion::new;
        let off = |version, flag| ProxyFeatures::with_gates(version, &gates(&[flag])).unwrap();
        assert!(ProxyFeatures::at(v(1, 34)).node_hints);
        assert!(!off(v(1, 34), "kube-proxy:PreferSameTrafficDistribution=false").node_hints);
        assert!(off(v(1, 33), "kube-proxy:PreferSameTrafficDistribution=true").node_hints);
        assert!(ProxyFeatures::at(v(1, 27)).terminating_fallback);
        assert!(!off(v(1, 27), "kube-proxy:ProxyTerminatingEndpoints=false").terminating_fallback);
        assert!(off(v(1, 25), "kube-proxy:ProxyTerminatingEndpoints=true").terminating_fallback);
        assert!(!off(v(1, 25), "kube-proxy:ServiceInternalTrafficPolicy=false").internal_traffic_policy);
        // canUseTopology: hints with either gate; without ServiceTrafficDistribution only
        // with the annotation.
        let p = off(v(1, 31), "kube-proxy:ServiceTrafficDistribution=false");
        assert!(p.zone_hints && p.hints_need_annotation);
        let p = off(
            v(1, 31),
            "kube-proxy:ServiceTrafficDistribution=false,TopologyAwareHints=false",
        );
        assert!(!p.zone_hints);
        let p = off(v(1, 31), "kube-proxy:TopologyAwareHints=false");
        assert!(p.zone_hints && !p.hints_need_annotation);
        assert!(!off(v(1, 27), "kube-proxy:TopologyAwareHints=false").zone_hints);
        let p = off(v(1, 30), "kube-proxy:ServiceTrafficDistribution=true");
        assert!(p.zone_hints && !p.hints_need_annotation);
        assert_eq!(
            off(v(1, 27), "kube-proxy:ProxyTerminatingEndpoints=false")
                .gates
                .get(Gate::ProxyTerminatingEndpoints),
            Some(false)
        );
        assert!(ProxyFeatures::at(v(1, 27)).gates.is_empty());
    }

    #[test]
    fn control_plane_gates_switch_its_behaviours() {
        let v = KubeVersion::new;
        let with = |version, flag| ControlPlaneFeatures::with_gates(version, &gates(&[flag])).unwrap();
        assert!(ControlPlaneFeatures::at(v(1, 27)).topology_aware_hints);
        assert!(!with(v(1, 27), "kube-controller-manager:TopologyAwareHints=false").topology_aware_hints);
        assert!(with(v(1, 23), "kube-controller-manager:TopologyAwareHints=true").topology_aware_hints);
        assert!(
            !with(
                v(1, 31),
                "kube-controller-manager:ServiceTrafficDistribution=false"
            )
            .service_traffic_distribution
        );
        assert!(
            !with(v(1, 31), "kube-apiserver:ServiceTrafficDistribution=false").service_traffic_distribution
        );
        assert!(with(v(1, 30), "ServiceTrafficDistribution=true").service_traffic_distribution);
        assert!(
            !with(v(1, 30), "kube-apiserver:ServiceTrafficDistribution=true").service_traffic_distribution,
            "the controller's gate is still off"
        );
        assert!(
            !with(v(1, 34), "kube-apiserver:PreferSameTrafficDistribution=false")
                .prefer_same_traffic_distribution
        );
        assert!(
            !with(
                v(1, 34),
                "kube-controller-manager:PreferSameTrafficDistribution=false"
            )
            .prefer_same_traffic_distribution
        );
        assert!(ControlPlaneFeatures::at(v(1, 25)).internal_traffic_policy);
        assert!(!with(v(1, 25), "kube-apiserver:ServiceInternalTrafficPolicy=false").internal_traffic_policy);
    }

    #[test]
    fn with_gates_refuses_what_the_component_refuses() {
        let v = KubeVersion::new;
        let locked = gates(&["kube-proxy:PreferSameTrafficDistribution=false"]);
        assert!(ProxyFeatures::with_gates(v(1, 35), &locked).is_err());
        assert!(
            ControlPlaneFeatures::with_gates(v(1, 35), &locked).is_ok(),
            "a kube-proxy gate"
        );
        let removed = gates(&["kube-controller-manager:TopologyAwareHints=true"]);
        assert!(ControlPlaneFeatures::with_gates(v(1, 36), &removed).is_err());
        assert!(ProxyFeatures::with_gates(v(1, 36), &removed).is_ok());
        let early = gates(&["kube-apiserver:PreferSameTrafficDistribution=true"]);
        assert!(ControlPlaneFeatures::with_gates(v(1, 32), &early).is_err());
        // Unchecked, an override that cannot be set has no effect.
        assert_eq!(
            ProxyFeatures::applying(v(1, 35), &locked),
            ProxyFeatures::at(v(1, 35))
        );
    }
}
