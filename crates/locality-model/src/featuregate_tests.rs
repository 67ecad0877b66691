//! The gate table on both sides of each stage change, `--feature-gates` parsing, and each
//! refusal.

use super::*;

fn at(minor: u16) -> KubeVersion {
    KubeVersion::new(1, minor)
}

/// Each gate's stage on both sides of each change (upstream `kube_features.go`).
#[test]
fn stages_change_at_the_upstream_releases() {
    use Stage::*;
    let cases: [(Gate, &[(u16, Stage)]); 6] = [
        (
            Gate::ServiceInternalTrafficPolicy,
            &[
                (20, Absent),
                (21, OffByDefault),
                (22, OnByDefault),
                (25, OnByDefault),
                (26, Locked),
                (27, Locked),
                (28, Removed),
            ],
        ),
        (
            Gate::TopologyAwareHints,
            &[
                (20, Absent),
                (21, OffByDefault),
                (23, OffByDefault),
                (24, OnByDefault),
                (32, OnByDefault),
                (33, Locked),
                (35, Locked),
                (36, Removed),
            ],
        ),
        (
            Gate::ServiceTrafficDistribution,
            &[
                (29, Absent),
                (30, OffByDefault),
                (31, OnByDefault),
                (32, OnByDefault),
                (33, Locked),
                (35, Locked),
                (36, Removed),
            ],
        ),
        (
            Gate::PreferSameTrafficDistribution,
            &[
                (32, Absent),
                (33, OffByDefault),
                (34, OnByDefault),
                (35, Locked),
                (37, Locked),
            ],
        ),
        (
            Gate::ProxyTerminatingEndpoints,
            &[
                (21, Absent),
                (22, OffByDefault),
                (25, OffByDefault),
                (26, OnByDefault),
                (27, OnByDefault),
                (28, Locked),
                (29, Locked),
                (30, Removed),
            ],
        ),
        (
            Gate::MaxUnavailableStatefulSet,
            &[
                (23, Absent),
                (24, OffByDefault),
                (34, OffByDefault),
                (35, OnByDefault),
                (40, OnByDefault),
            ],
        ),
    ];
    for (gate, stages) in cases {
        for (minor, stage) in stages {
            assert_eq!(gate.spec().stage_at(at(*minor)), *stage, "{gate} at 1.{minor}");
        }
    }
}

#[test]
fn an_override_counts_only_where_the_gate_may_be_set() {
    let spec = Gate::ProxyTerminatingEndpoints.spec();
    assert!(
        !spec.enabled_at(at(21), Some(true)),
        "absent: off whatever is set"
    );
    assert!(spec.enabled_at(at(25), Some(true)), "alpha switched on");
    assert!(!spec.enabled_at(at(25), None));
    assert!(!spec.enabled_at(at(27), Some(false)), "beta switched off");
    assert!(spec.enabled_at(at(27), None));
    assert!(spec.enabled_at(at(28), Some(false)), "locked: on whatever is set");
    assert!(spec.enabled_at(at(30), None), "removed: always on");
}

#[test]
fn parses_component_prefixed_lists_and_bare_gates() {
    let g = FeatureGates::from_flags(&[
        "kube-proxy:PreferSameTrafficDistribution=false,ProxyTerminatingEndpoints=true",
        "kube-controller-manager:TopologyAwareHints=F",
    ])
    .unwrap();
    assert_eq!(
        g.get(Component::KubeProxy, Gate::PreferSameTrafficDistribution),
        Some(false)
    );
    assert_eq!(
        g.get(Component::KubeProxy, Gate::ProxyTerminatingEndpoints),
        Some(true)
    );
    assert_eq!(
        g.get(Component::KubeControllerManager, Gate::TopologyAwareHints),
        Some(false)
    );
    assert_eq!(
        g.get(Component::KubeApiserver, Gate::PreferSameTrafficDistribution),
        None
    );
    assert_eq!(
        g.describe(),
        vec![
            "kube-controller-manager:TopologyAwareHints=false",
            "kube-proxy:PreferSameTrafficDistribution=false",
            "kube-proxy:ProxyTerminatingEndpoints=true",
        ]
    );

    // Without a prefix: every component that reads the gate.
    let bare = FeatureGates::from_flags(&["TopologyAwareHints=false"]).unwrap();
    assert_eq!(
        bare.get(Component::KubeControllerManager, Gate::TopologyAwareHints),
        Some(false)
    );
    assert_eq!(
        bare.get(Component::KubeProxy, Gate::TopologyAwareHints),
        Some(false)
    );
    assert_eq!(bare.get(Component::KubeApiserver, Gate::TopologyAwareHints), None);

    // The last value wins, as in the component's own flag.
    let last =
        FeatureGates::from_flags(&["kube-proxy:ProxyTerminatingEndpoints=false,ProxyTerminatingEndpoints=1"])
            .unwrap();
    assert_eq!(
        last.get(Component::KubeProxy, Gate::ProxyTerminatingEndpoints),
        Some(true)
    );
}

#[test]
fn refuses_malformed_values() {
    for bad in [
        "kube-proxy:",
        "kube-proxy:ProxyTerminatingEndpoints",
        "kube-proxy:ProxyTerminatingEndpoints=maybe",
        "",
    ] {
        let e = FeatureGates::from_flags(&[bad]).unwrap_err();
        assert!(matches!(e, GateError::Syntax { .. }), "{bad:?}: {e}");
    }
    let e = FeatureGates::from_flags(&["kubelet:TopologyAwareHints=false"]).unwrap_err();
    assert_eq!(e, GateError::UnknownComponent("kubelet".into()));
    assert!(e.to_string().contains("kube-controller-manager"), "{e}");
    let e = FeatureGates::from_flags(&["kube-proxy:SidecarContainers=false"]).unwrap_err();
    assert_eq!(e, GateError::UnknownGate("SidecarContainers".into()));
    assert!(
        e.to_string()
            .contains("unrecognized feature gate: SidecarContainers"),
        "{e}"
    );
    // Gate names are case-sensitive, as upstream.
    assert!(FeatureGates::from_flags(&["kube-proxy:topologyawarehints=false"]).is_err());
}

#[test]
fn refuses_a_gate_the_component_does_not_read() {
    let e = FeatureGates::from_flags(&["kube-apiserver:ProxyTerminatingEndpoints=false"]).unwrap_err();
    assert_eq!(
        e,
        GateError::NotRead {
            component: Component::KubeApiserver,
            gate: Gate::ProxyTerminatingEndpoints
        }
    );
    assert!(
        e.to_string()
            .contains("kube-apiserver does not read ProxyTerminatingEndpoints (read by kube-proxy)"),
        "{e}"
    );
    assert!(
        FeatureGates::from_flags(&["kube-controller-manager:ServiceInternalTrafficPolicy=false"]).is_err()
    );
    assert!(FeatureGates::from_flags(&["kube-apiserver:TopologyAwareHints=false"]).is_err());
    assert!(FeatureGates::from_flags(&["kube-apiserver:ServiceInternalTrafficPolicy=false"]).is_ok());
}

/// A gate before its alpha release, and after its removal, is unknown to the component.
#[test]
fn refuses_a_gate_the_release_does_not_have() {
    let g = FeatureGates::from_flags(&["kube-proxy:ProxyTerminatingEndpoints=true"]).unwrap();
    assert!(g.check(Component::KubeProxy, at(22)).is_ok());
    assert!(
        g.check(Component::KubeProxy, at(29)).is_ok(),
        "locked, set to its default: accepted"
    );
    let removed = g.check(Component::KubeProxy, at(30)).unwrap_err();
    assert_eq!(
        removed.to_string(),
        "--feature-gates: kube-proxy 1.30: unrecognized feature gate: ProxyTerminatingEndpoints (removed in 1.30; the feature is always on)"
    );
    let g = FeatureGates::from_flags(&["kube-apiserver:ServiceTrafficDistribution=true"]).unwrap();
    assert!(g.check(Component::KubeApiserver, at(30)).is_ok());
    let early = g.check(Component::KubeApiserver, at(29)).unwrap_err();
    assert_eq!(
        early.to_string(),
        "--feature-gates: kube-apiserver 1.29: unrecognized feature gate: ServiceTrafficDistribution (introduced as alpha in 1.30)"
    );
    // Other components' overrides are not this one's business.
    assert!(g.check(Component::KubeProxy, at(29)).is_ok());
}

/// A locked gate set to false is refused with the release it was locked in; one release
/// earlier it is accepted.
#[test]
fn refuses_switching_off_a_locked_gate() {
    let g = FeatureGates::from_flags(&["kube-proxy:PreferSameTrafficDistribution=false"]).unwrap();
    assert!(g.check(Component::KubeProxy, at(34)).is_ok());
    let e = g.check(Component::KubeProxy, at(35)).unwrap_err();
    assert!(matches!(e, GateError::Locked { .. }));
    assert_eq!(
        e.to_string(),
        "--feature-gates: kube-proxy 1.35: cannot set feature gate PreferSameTrafficDistribution to false, feature is locked to true since 1.35 (GA)"
    );
    let g = FeatureGates::from_flags(&["kube-controller-manager:TopologyAwareHints=false"]).unwrap();
    assert!(g.check(Component::KubeControllerManager, at(32)).is_ok());
    assert!(
        g.check(Component::KubeControllerManager, at(33))
            .unwrap_err()
            .to_string()
            .contains("locked to true since 1.33")
    );
}

#[test]
fn overrides_record_only_what_takes_effect() {
    let g = FeatureGates::from_flags(&[
        "kube-proxy:ProxyTerminatingEndpoints=false,PreferSameTrafficDistribution=true",
    ])
    .unwrap();
    let o = g.overrides(Component::KubeProxy, at(27));
    assert_eq!(
        o.iter().collect::<Vec<_>>(),
        vec![(Gate::ProxyTerminatingEndpoints, false)]
    );
    let o = g.overrides(Component::KubeProxy, at(34));
    assert_eq!(
        o.iter().collect::<Vec<_>>(),
        vec![(Gate::PreferSameTrafficDistribution, true)]
    );
    assert!(g.overrides(Component::KubeApiserver, at(34)).is_empty());
}

/// `MaxUnavailableStatefulSet` is read by the API server and the controller manager (not
/// kube-proxy), may be switched on where it is alpha and off where it is beta, and the
/// control plane honours `maxUnavailable` only with both on.
#[test]
fn max_unavailable_stateful_set_on_both_sides_of_its_beta() {
    use crate::features::ControlPlaneFeatures;
    let on = |minor, flags: &[&str]| {
        let g = FeatureGates::from_flags(flags).unwrap();
        ControlPlaneFeatures::with_gates(at(minor), &g).map(|f| f.max_unavailable_stateful_set)
    };
    assert_eq!(on(34, &[]), Ok(false));
    assert_eq!(on(35, &[]), Ok(true));
    assert_eq!(on(33, &["MaxUnavailableStatefulSet=true"]), Ok(true));
    assert_eq!(on(35, &["MaxUnavailableStatefulSet=false"]), Ok(false));
    assert_eq!(
        on(35, &["kube-controller-manager:MaxUnavailableStatefulSet=false"]),
        Ok(false),
        "the controller alone switched off"
    );
    assert_eq!(
        on(34, &["kube-apiserver:MaxUnavailableStatefulSet=true"]),
        Ok(false),
        "the API server keeps the field, the controller does not read it"
    );
    assert!(matches!(
        on(23, &["MaxUnavailableStatefulSet=true"]),
        Err(GateError::NotAtVersion { .. })
    ));
    assert!(matches!(
        FeatureGates::from_flags(&["kube-proxy:MaxUnavailableStatefulSet=true"]),
        Err(GateError::NotRead { .. })
    ));
}
