//! Feature gates per component: which release each gate the model follows is alpha, on by
//! default, locked and removed, which components read it, and `--feature-gates` values
//! checked the way the component checks its own flag.
//!
//! The table ([`GATES`]) follows the versioned specs in upstream
//! `pkg/features/kube_features.go` (`defaultVersionedKubernetesFeatureGates`; before 1.31 the
//! per-release `defaultKubernetesFeatureGates`) and the KEPs (2086 internalTrafficPolicy,
//! 2433 topology aware hints, 4444 trafficDistribution, 3015 PreferSameZone/PreferSameNode,
//! 1669 proxy terminating endpoints, 961 StatefulSet maxUnavailable). [`FeatureGates`] holds overrides per component;
//! [`FeatureGates::check`] refuses what the component would refuse at start
//! (`k8s.io/component-base/featuregate` `featureGate.Set`: an unrecognized gate, a gate locked
//! to its default set to the other value), and also a gate the component does not read
//! (there it would be accepted and have no effect: refused here so that a misplaced override
//! does not silently change nothing). [`crate::features::ControlPlaneFeatures::with_gates`]
//! and [`crate::features::ProxyFeatures::with_gates`] apply them.

use std::collections::BTreeMap;
use std::fmt;

use crate::version::KubeVersion;

/// A Kubernetes component that reads feature gates the model follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Component {
    /// `kube-apiserver`: drops disabled fields on write (`dropServiceDisabledFields`).
    KubeApiserver,
    /// `kube-controller-manager`: the EndpointSlice controller's hints, the StatefulSet
    /// controller's `maxUnavailable`.
    KubeControllerManager,
    /// `kube-proxy`: which endpoints each node uses.
    KubeProxy,
}

impl Component {
    /// Every component, in flag order.
    pub const ALL: [Component; 3] = [
        Component::KubeApiserver,
        Component::KubeControllerManager,
        Component::KubeProxy,
    ];

    /// The binary's name (`kube-proxy`), as the `--feature-gates` prefix spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Component::KubeApiserver => "kube-apiserver",
            Component::KubeControllerManager => "kube-controller-manager",
            Component::KubeProxy => "kube-proxy",
        }
    }

    /// The component named `s` (its binary name).
    pub fn parse(s: &str) -> Option<Component> {
        Component::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A feature gate the model follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gate {
    /// `spec.internalTrafficPolicy` (KEP-2086).
    ServiceInternalTrafficPolicy,
    /// Zone hints: `topology-mode: Auto` in the controller, `hints.forZones` in kube-proxy
    /// (KEP-2433).
    TopologyAwareHints,
    /// `spec.trafficDistribution: PreferClose` (KEP-4444).
    ServiceTrafficDistribution,
    /// `PreferSameZone` / `PreferSameNode` and `hints.forNodes` (KEP-3015).
    PreferSameTrafficDistribution,
    /// kube-proxy falls back to serving-terminating endpoints (KEP-1669).
    ProxyTerminatingEndpoints,
    /// A StatefulSet's `rollingUpdate.maxUnavailable` (KEP-961): kept by the API server,
    /// honoured by the StatefulSet controller.
    MaxUnavailableStatefulSet,
}

impl Gate {
    /// Every gate, in table order.
    pub const ALL: [Gate; 6] = [
        Gate::ServiceInternalTrafficPolicy,
        Gate::TopologyAwareHints,
        Gate::ServiceTrafficDistribution,
        Gate::PreferSameTrafficDistribution,
        Gate::ProxyTerminatingEndpoints,
        Gate::MaxUnavailableStatefulSet,
    ];

    /// The gate's name as upstream spells it.
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The gate named `s` (case-sensitive, as `featureGate.Set`).
    pub fn parse(s: &str) -> Option<Gate> {
        Gate::ALL.into_iter().find(|g| g.as_str() == s)
    }

    /// The gate's row in [`GATES`].
    pub fn spec(self) -> &'static GateSpec {
        &GATES[self as usize]
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One gate's history and readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateSpec {
    /// Upstream's name.
    pub name: &'static str,
    /// The components whose behaviour the gate changes.
    pub read_by: &'static [Component],
    /// First release with the gate (alpha, off by default).
    pub alpha: KubeVersion,
    /// First release where it is on by default (beta).
    pub on_by_default: KubeVersion,
    /// First release where it is GA and locked to `true` (`LockToDefault`); `None` while it
    /// is not GA.
    pub locked: Option<KubeVersion>,
    /// First release without the gate (the behaviour is always on), if any.
    pub removed: Option<KubeVersion>,
    /// What switching it off changes, per reader, in words.
    pub effect: &'static str,
}

const fn v(minor: u16) -> KubeVersion {
    KubeVersion::new(1, minor)
}

/// The gates, in [`Gate::ALL`] order (upstream `pkg/features/kube_features.go`).
pub const GATES: [GateSpec; 6] = [
    GateSpec {
        name: "ServiceInternalTrafficPolicy",
        read_by: &[Component::KubeApiserver, Component::KubeProxy],
        alpha: v(21),
        on_by_default: v(22),
        locked: Some(v(26)),
        removed: Some(v(28)),
        effect: "kube-apiserver drops spec.internalTrafficPolicy on write (and does not default it); kube-proxy treats every Service as internalTrafficPolicy Cluster",
    },
    GateSpec {
        name: "TopologyAwareHints",
        read_by: &[Component::KubeControllerManager, Component::KubeProxy],
        alpha: v(21),
        on_by_default: v(24),
        locked: Some(v(33)),
        removed: Some(v(36)),
        effect: "the EndpointSlice controller builds no topology cache (topology-mode: Auto writes no zone hints); kube-proxy ignores zone hints unless ServiceTrafficDistribution is on",
    },
    GateSpec {
        name: "ServiceTrafficDistribution",
        read_by: &[
            Component::KubeApiserver,
            Component::KubeControllerManager,
            Component::KubeProxy,
        ],
        alpha: v(30),
        on_by_default: v(31),
        locked: Some(v(33)),
        removed: Some(v(36)),
        effect: "kube-apiserver drops spec.trafficDistribution on write; the EndpointSlice controller ignores it; kube-proxy uses hints only with the topology annotation",
    },
    GateSpec {
        name: "PreferSameTrafficDistribution",
        read_by: &[
            Component::KubeApiserver,
            Component::KubeControllerManager,
            Component::KubeProxy,
        ],
        alpha: v(33),
        on_by_default: v(34),
        locked: Some(v(35)),
        removed: None,
        effect: "kube-apiserver refuses PreferSameZone/PreferSameNode and drops hints.forNodes; the EndpointSlice controller writes no hints for them; kube-proxy ignores hints.forNodes",
    },
    GateSpec {
        name: "ProxyTerminatingEndpoints",
        read_by: &[Component::KubeProxy],
        alpha: v(22),
        on_by_default: v(26),
        locked: Some(v(28)),
        removed: Some(v(30)),
        effect: "kube-proxy drops traffic when only serving-terminating endpoints remain, instead of falling back to them",
    },
    // `MaxUnavailableStatefulSet`: alpha 1.24 (off), beta 1.35 (on). kube-apiserver drops
    // `rollingUpdate.maxUnavailable` without it (`pkg/registry/apps/statefulset/strategy.go`
    // `dropStatefulSetDisabledFields`) and defaults it to 1 with it
    // (`pkg/apis/apps/v1/defaults.go` `SetDefaults_StatefulSet`); the controller honours it
    // only with it (`pkg/controller/statefulset/stateful_set_control.go` `updateStatefulSet`).
    GateSpec {
        name: "MaxUnavailableStatefulSet",
        read_by: &[Component::KubeApiserver, Component::KubeControllerManager],
        alpha: v(24),
        on_by_default: v(35),
        locked: None,
        removed: None,
        effect: "kube-apiserver drops a StatefulSet's rollingUpdate.maxUnavailable on write; the StatefulSet controller replaces one pod at a time",
    },
];

/// Where a gate stands at a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Not yet introduced: the feature does not exist.
    Absent,
    /// Exists, off by default (alpha, or beta off by default).
    OffByDefault,
    /// On by default, may be switched off.
    OnByDefault,
    /// GA, locked to `true`.
    Locked,
    /// Removed: the feature is always on.
    Removed,
}

impl GateSpec {
    /// The gate's stage at `version`.
    pub fn stage_at(&self, version: KubeVersion) -> Stage {
        if version < self.alpha {
            Stage::Absent
        } else if self.removed.is_some_and(|r| version >= r) {
            Stage::Removed
        } else if self.locked.is_some_and(|l| version >= l) {
            Stage::Locked
        } else if version >= self.on_by_default {
            Stage::OnByDefault
        } else {
            Stage::OffByDefault
        }
    }

    /// Whether the feature is on at `version` with `set` (the override, if any): the override
    /// counts only where the gate may be set; before alpha the feature is off, once locked or
    /// removed it is on.
    pub fn enabled_at(&self, version: KubeVersion, set: Option<bool>) -> bool {
        match self.stage_at(version) {
            Stage::Absent => false,
            Stage::OffByDefault => set.unwrap_or(false),
            Stage::OnByDefault => set.unwrap_or(true),
            Stage::Locked | Stage::Removed => true,
        }
    }
}

/// Overrides applied to one component, small and `Copy` (it rides on the features that
/// group nodes): which gates were set and to what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GateOverrides {
    set: u8,
    value: u8,
}

impl GateOverrides {
    /// Records `gate=value`.
    pub fn insert(&mut self, gate: Gate, value: bool) {
        self.set |= gate.bit();
        if value {
            self.value |= gate.bit();
        } else {
            self.value &= !gate.bit();
        }
    }
    /// The value `gate` was set to, if it was.
    pub fn get(self, gate: Gate) -> Option<bool> {
        (self.set & gate.bit() != 0).then_some(self.value & gate.bit() != 0)
    }
    /// True when nothing was set.
    pub fn is_empty(self) -> bool {
        self.set == 0
    }
    /// The overrides, in [`Gate::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = (Gate, bool)> {
        Gate::ALL
            .into_iter()
            .filter_map(move |g| self.get(g).map(|v| (g, v)))
    }
}

/// Why a `--feature-gates` value was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateError {
    /// Not `[COMPONENT:]Gate=bool[,Gate=bool…]`.
    Syntax {
        /// The text given.
        input: String,
        /// What is wrong.
        reason: String,
    },
    /// A prefix that names no component.
    UnknownComponent(String),
    /// A gate the model does not follow.
    UnknownGate(String),
    /// A gate the component does not read.
    NotRead {
        /// The component.
        component: Component,
        /// The gate.
        gate: Gate,
    },
    /// The gate does not exist in the component at that release.
    NotAtVersion {
        /// The component.
        component: Component,
        /// The gate.
        gate: Gate,
        /// The component's release.
        version: KubeVersion,
    },
    /// The gate is locked to its default and was set to the other value.
    Locked {
        /// The component.
        component: Component,
        /// The gate.
        gate: Gate,
        /// The component's release.
        version: KubeVersion,
    },
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateError::Syntax { input, reason } => {
                write!(
                    f,
                    "--feature-gates {input:?}: {reason} (expected [COMPONENT:]Gate=true|false[,Gate=…], COMPONENT one of kube-apiserver, kube-controller-manager, kube-proxy)"
                )
            }
            GateError::UnknownComponent(c) => write!(
                f,
                "--feature-gates: unknown component {c:?}: one of kube-apiserver, kube-controller-manager, kube-proxy"
            ),
            GateError::UnknownGate(g) => {
                let known: Vec<&str> = Gate::ALL.iter().map(|g| g.as_str()).collect();
                write!(
                    f,
                    "--feature-gates: unrecognized feature gate: {g} (locality models {})",
                    known.join(", ")
                )
            }
            GateError::NotRead { component, gate } => {
                let readers: Vec<&str> = gate.spec().read_by.iter().map(|c| c.as_str()).collect();
                write!(
                    f,
                    "--feature-gates: {component} does not read {gate} (read by {})",
                    readers.join(", ")
                )
            }
            GateError::NotAtVersion {
                component,
                gate,
                version,
            } => {
                let spec = gate.spec();
                match spec.removed {
                    Some(r) if *version >= r => write!(
                        f,
                        "--feature-gates: {component} {version}: unrecognized feature gate: {gate} (removed in {r}; the feature is always on)"
                    ),
                    _ => write!(
                        f,
                        "--feature-gates: {component} {version}: unrecognized feature gate: {gate} (introduced as alpha in {})",
                        spec.alpha
                    ),
                }
            }
            GateError::Locked {
                component,
                gate,
                version,
            } => write!(
                f,
                "--feature-gates: {component} {version}: cannot set feature gate {gate} to false, feature is locked to true since {} (GA)",
                gate.spec().locked.unwrap_or(*version)
            ),
        }
    }
}

impl std::error::Error for GateError {}

/// `strconv.ParseBool`, as `featureGate.Set` parses values.
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Feature-gate overrides per component (`--feature-gates`); empty: every gate at its
/// release's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates {
    set: BTreeMap<(Component, Gate), bool>,
}

impl FeatureGates {
    /// True when nothing is overridden.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Sets `gate` on `component`; refused when the component does not read it. A later
    /// value for the same gate wins, as in the component's own flag.
    pub fn set(&mut self, component: Component, gate: Gate, value: bool) -> Result<(), GateError> {
        if !gate.spec().read_by.contains(&component) {
            return Err(GateError::NotRead { component, gate });
        }
        self.set.insert((component, gate), value);
        Ok(())
    }

    /// Adds one `--feature-gates` value: `COMPONENT:Gate=bool[,Gate=bool…]`, or without the
    /// prefix to set each gate on every component that reads it (as if the same flag were
    /// given to each).
    pub fn add_flag(&mut self, value: &str) -> Result<(), GateError> {
        let syntax = |reason: &str| GateError::Syntax {
            input: value.to_string(),
            reason: reason.to_string(),
        };
        let (component, list) = match value.split_once(':') {
            Some((c, rest)) => (
                Some(Component::parse(c.trim()).ok_or_else(|| GateError::UnknownComponent(c.trim().into()))?),
                rest,
            ),
            None => (None, value),
        };
        if list.trim().is_empty() {
            return Err(syntax("no gate given"));
        }
        for item in list.split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, val) = item
                .split_once('=')
                .ok_or_else(|| syntax(&format!("missing bool value for {item}")))?;
            let (name, val) = (name.trim(), val.trim());
            let gate = Gate::parse(name).ok_or_else(|| GateError::UnknownGate(name.into()))?;
            let on = parse_bool(val)
                .ok_or_else(|| syntax(&format!("invalid value of {name}={val}, want true or false")))?;
            match component {
                Some(c) => self.set(c, gate, on)?,
                None => {
                    for c in gate.spec().read_by {
                        self.set(*c, gate, on)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Parses repeated `--feature-gates` values (see [`FeatureGates::add_flag`]).
    pub fn from_flags<S: AsRef<str>>(values: &[S]) -> Result<Self, GateError> {
        let mut gates = FeatureGates::default();
        for v in values {
            gates.add_flag(v.as_ref())?;
        }
        Ok(gates)
    }

    /// The value `gate` was set to on `component`, if it was.
    pub fn get(&self, component: Component, gate: Gate) -> Option<bool> {
        self.set.get(&(component, gate)).copied()
    }

    /// Refuses what `component` at `version` would refuse at start: a gate that does not
    /// exist at that release (before alpha, or removed), a locked gate set to `false`
    /// (`featureGate.Set`; setting a locked gate to its default is accepted, as upstream).
    pub fn check(&self, component: Component, version: KubeVersion) -> Result<(), GateError> {
        for ((c, gate), value) in &self.set {
            if *c != component {
                continue;
            }
            match gate.spec().stage_at(version) {
                Stage::Absent | Stage::Removed => {
                    return Err(GateError::NotAtVersion {
                        component,
                        gate: *gate,
                        version,
                    });
                }
                Stage::Locked if !*value => {
                    return Err(GateError::Locked {
                        component,
                        gate: *gate,
                        version,
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether `gate` is on in `component` at `version` ([`GateSpec::enabled_at`]).
    pub fn enabled(&self, component: Component, gate: Gate, version: KubeVersion) -> bool {
        gate.spec().enabled_at(version, self.get(component, gate))
    }

    /// The overrides of `component` that take effect at `version`: those of gates that may
    /// be set there (not absent, removed or locked).
    pub fn overrides(&self, component: Component, version: KubeVersion) -> GateOverrides {
        let mut out = GateOverrides::default();
        for ((c, gate), value) in &self.set {
            if *c == component
                && matches!(
                    gate.spec().stage_at(version),
                    Stage::OffByDefault | Stage::OnByDefault
                )
            {
                out.insert(*gate, *value);
            }
        }
        out
    }

    /// Every override as `component:Gate=value`, in component then gate order.
    pub fn describe(&self) -> Vec<String> {
        self.set
            .iter()
            .map(|((c, g), v)| format!("{c}:{g}={v}"))
            .collect()
    }
}

#[cfg(test)]
#[path = "featuregate_tests.rs"]
mod tests;
