//! The known divergences of data planes from kube-proxy, as data: one [`Divergence`] per
//! upstream bug or configuration pitfall. `verify` explains a confirmed violation by an entry
//! that matches the node's detected data plane and version, `audit` flags the Services whose
//! policy meets one, and the simulation reproduces each as a profile. docs/dataplanes.md is
//! rendered from [`CATALOGUE`] ([`super::markdown`]).
//!
//! Every entry says what was checked upstream (`checked`) and whether the facts were
//! confirmed there (`confirmed`); a fixed version that was inferred rather than read from a
//! release is said to be so.

use super::{Detection, Plane, PlaneVersion};
use crate::endpointslice::hints_enabled;
use crate::endpointslice::trafficdist::{PREFER_CLOSE, PREFER_SAME_NODE, PREFER_SAME_ZONE};
use crate::objects::{Service, ServiceType, TrafficPolicy};

/// What a divergence does, in terms of the model's verdicts for the Services it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// `internalTrafficPolicy: Local` is ignored on the cluster IP: where the model's verdict
    /// is DROP (no local endpoint), the data plane serves from other nodes.
    ItpLocalIgnored,
    /// `externalTrafficPolicy: Local` also restricts the cluster IP: where the model routes a
    /// cluster-IP connection to any endpoint, a node without a local endpoint drops it.
    EtpLocalRestrictsClusterIp,
    /// Zone hints with none for the client's zone: where the model falls back to every
    /// endpoint, the data plane refuses the connection (no backend).
    ZoneHintsNoFallback,
    /// `PreferSameNode`/`PreferSameZone` with a local endpoint that lacks a port (name,
    /// family or protocol): where the model uses every endpoint of that port, the data plane
    /// selects none.
    PreferSameCommitsToIncompatibleLocal,
    /// Topology (hints, `trafficDistribution`) ignored unless a setting is on: where the model
    /// keeps traffic in the zone or on the node, the data plane spreads it cluster-wide.
    TopologyIgnoredWithoutSetting,
    /// In-cluster connections to the load-balancer IP of an `externalTrafficPolicy: Local`
    /// Service fail on nodes without a local endpoint, where the model routes them to any
    /// endpoint (kube-proxy's short-circuit).
    EtpLocalAppliedToInClusterLbIp,
    /// `externalTrafficPolicy: Local` never falls back to the node's serving-terminating
    /// endpoints (KEP-1669): where the model serves traffic to the node's external addresses
    /// from its terminating endpoint, the data plane has none and drops.
    EtpLocalNoTerminatingFallback,
}

impl Effect {
    /// Whether a Service's spec meets the divergence (what `audit` flags).
    pub fn applies_to(self, svc: &Service) -> bool {
        let proxied = svc.type_ != ServiceType::ExternalName && !svc.headless;
        let external = matches!(svc.type_, ServiceType::NodePort | ServiceType::LoadBalancer);
        let td = svc.traffic_distribution.as_deref();
        proxied
            && match self {
                Effect::ItpLocalIgnored => svc.itp() == TrafficPolicy::Local,
                Effect::EtpLocalRestrictsClusterIp => external && svc.etp() == TrafficPolicy::Local,
                // PreferSameNode's slices carry zone hints too (the controller writes both).
                Effect::ZoneHintsNoFallback => {
                    matches!(td, Some(PREFER_CLOSE | PREFER_SAME_ZONE | PREFER_SAME_NODE))
                        || hints_enabled(&svc.meta.annotations)
                }
                Effect::PreferSameCommitsToIncompatibleLocal => {
                    matches!(td, Some(PREFER_SAME_NODE | PREFER_SAME_ZONE)) && svc.ports.len() > 1
                }
                Effect::TopologyIgnoredWithoutSetting => td.is_some() || hints_enabled(&svc.meta.annotations),
                Effect::EtpLocalAppliedToInClusterLbIp => {
                    svc.type_ == ServiceType::LoadBalancer && svc.etp() == TrafficPolicy::Local
                }
                Effect::EtpLocalNoTerminatingFallback => external && svc.etp() == TrafficPolicy::Local,
            }
    }
}

/// How an entry is resolved upstream, which decides `verify`'s decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Fixed: REPAIR by upgrading. `version` is the first release with the fix, `None`
    /// when no release was confirmed to carry it.
    Fixed {
        /// First fixed release, if known.
        version: Option<PlaneVersion>,
        /// The pull request that fixed it (`owner/repo#N`).
        by: &'static str,
    },
    /// A configuration pitfall: REPAIR by setting `setting` to `value`.
    Setting {
        /// The setting (as the data plane's configuration names it).
        setting: &'static str,
        /// The value that avoids the divergence.
        value: &'static str,
        /// How to set it (e.g. the Helm value).
        how: &'static str,
    },
    /// An open bug: HOLD, with the entry's mitigation.
    Open,
}

/// A setting the divergence needs (or needs absent) to apply, read by detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingCondition {
    /// Key in [`Detection::settings`].
    pub key: &'static str,
    /// The entry applies when the setting is `value` (`present: true`) or is anything else,
    /// absent included (`present: false`).
    pub value: &'static str,
    /// See `value`.
    pub present: bool,
}

/// One known divergence from kube-proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divergence {
    /// Stable ID (`calico-ebpf-itp-ignored`).
    pub id: &'static str,
    /// The data plane.
    pub plane: Plane,
    /// First affected release (`None`: every release before `affected_before`).
    pub affected_from: Option<PlaneVersion>,
    /// First release not affected (`None`: still affected, or fixed in an unknown release).
    pub affected_before: Option<PlaneVersion>,
    /// A setting the divergence needs.
    pub requires: Option<SettingCondition>,
    /// What it does to the model's verdicts.
    pub effect: Effect,
    /// The divergence in one sentence, in the model's words.
    pub divergence: &'static str,
    /// Upstream issues (`owner/repo#N`).
    pub issues: &'static [&'static str],
    /// How it is resolved.
    pub resolution: Resolution,
    /// The repair, in one sentence (for a fixed bug or a pitfall).
    pub repair: &'static str,
    /// What to do meanwhile (an open bug's HOLD names it).
    pub mitigation: &'static str,
    /// `verify` cases that expose it (empty: no case yet, see `note`).
    pub cases: &'static [&'static str],
    /// Whether the facts above were confirmed in the upstream tracker or source.
    pub confirmed: bool,
    /// What was read upstream, and what was not confirmed.
    pub checked: &'static str,
}

impl Divergence {
    /// Whether a version is in the affected range (an unknown version is not).
    pub fn affects_version(&self, v: Option<PlaneVersion>) -> bool {
        let Some(v) = v else { return false };
        self.affected_from.is_none_or(|f| v >= f) && self.affected_before.is_none_or(|b| v < b)
    }

    /// Whether the entry applies to a detected data plane (plane, version, settings).
    pub fn applies(&self, d: &Detection) -> bool {
        d.plane == Some(self.plane)
            && self.affects_version(d.version)
            && self.requires.is_none_or(|r| {
                let is = d.settings.get(r.key).is_some_and(|v| v.trim() == r.value);
                is == r.present
            })
    }

    /// The first upstream issue, as a URL.
    pub fn issue_url(&self) -> String {
        url(self.issues.first().copied().unwrap_or_default())
    }

    /// The affected versions in words: `>= 1.18.0, < 1.18.1`, `< 3.27.0`, `every version`.
    pub fn affected_text(&self) -> String {
        match (self.affected_from, self.affected_before) {
            (Some(f), Some(b)) => format!(">= {f}, < {b}"),
            (None, Some(b)) => format!("< {b}"),
            (Some(f), None) => format!(">= {f}"),
            (None, None) => "every version".to_string(),
        }
    }

    /// What to do, naming the fixed version and the upstream issue, the setting, or (open
    /// bug) the issue and the mitigation.
    pub fn advice(&self) -> String {
        let issues = self.issues.join(", ");
        match self.resolution {
            Resolution::Fixed { version: Some(v), by } => {
                format!("{} to {v} or later (fixed by {by}; {issues})", self.repair)
            }
            Resolution::Fixed { version: None, by } => {
                format!("{} to a release that contains {by} ({issues})", self.repair)
            }
            Resolution::Setting { setting, value, how } => {
                format!("{}: set {setting}={value} ({how}; {issues})", self.repair)
            }
            Resolution::Open => format!("open upstream bug {issues}: {}", self.mitigation),
        }
    }
}

/// `owner/repo#N` as a GitHub URL (issue and pull request numbers share one space).
pub fn url(reference: &str) -> String {
    match reference.split_once('#') {
        Some((repo, n)) => format!("https://github.com/{repo}/issues/{n}"),
        None => reference.to_string(),
    }
}

/// The entries that apply to a detected data plane.
pub fn applicable(d: &Detection) -> Vec<&'static Divergence> {
    CATALOGUE.iter().filter(|e| e.applies(d)).collect()
}

/// The entry with this ID.
pub fn entry(id: &str) -> Option<&'static Divergence> {
    CATALOGUE.iter().find(|e| e.id == id)
}

/// Every known divergence.
pub const CATALOGUE: &[Divergence] = &[
    Divergence {
        id: "calico-ebpf-itp-ignored",
        plane: Plane::CalicoEbpf,
        affected_from: None,
        affected_before: Some(PlaneVersion::new(3, 27, 0)),
        requires: None,
        effect: Effect::ItpLocalIgnored,
        divergence: "a ClusterIP with internalTrafficPolicy: Local is served from endpoints on other nodes where kube-proxy drops (no local endpoint)",
        issues: &["projectcalico/calico#8255"],
        resolution: Resolution::Fixed {
            version: Some(PlaneVersion::new(3, 27, 0)),
            by: "projectcalico/calico#8259",
        },
        repair: "upgrade Calico",
        mitigation: "do not rely on internalTrafficPolicy: Local on this data plane",
        cases: &["C", "Pn"],
        confirmed: true,
        checked: "issue #8255 (closed, area/bpf); PR #8259 'ClusterIP should reflect InternalTrafficPolicy=Local' (felix/bpf/proxy/syncer.go) and its pick #8262 to the v3.27 release branch, merged 2023-11-23. That v3.27.0 is the first release with it is inferred from the branch, not read from release notes",
    },
    Divergence {
        id: "cilium-zone-hints-no-fallback",
        plane: Plane::Cilium,
        affected_from: Some(PlaneVersion::new(1, 18, 0)),
        affected_before: Some(PlaneVersion::new(1, 18, 1)),
        requires: Some(SettingCondition {
            key: "enable-service-topology",
            value: "true",
            present: true,
        }),
        effect: Effect::ZoneHintsNoFallback,
        divergence: "with zone hints (PreferClose, PreferSameZone, PreferSameNode, topology-mode Auto) and no endpoint hinted for the client's zone, the connection is refused where kube-proxy falls back to every endpoint",
        issues: &["cilium/cilium#41022"],
        resolution: Resolution::Fixed {
            version: Some(PlaneVersion::new(1, 18, 1)),
            by: "cilium/cilium#41116",
        },
        repair: "upgrade Cilium",
        mitigation: "keep a ready endpoint in every zone that has clients",
        cases: &["Z2"],
        confirmed: true,
        checked: "issue #41022 (closed; affects/v1.18, 'equal or higher than v1.18.0 and lower than v1.19.0', ECONNREFUSED); PR #41116 '[v1.18] loadbalancer: Fix topology-aware routing safe-guards' (Fixes: #41022), merged 2025-08. 1.18.1 as the first fixed release is inferred from the merge date, not read from release notes",
    },
    Divergence {
        id: "cilium-prefer-same-incompatible-local",
        plane: Plane::Cilium,
        affected_from: None,
        affected_before: None,
        requires: Some(SettingCondition {
            key: "enable-service-topology",
            value: "true",
            present: true,
        }),
        effect: Effect::PreferSameCommitsToIncompatibleLocal,
        divergence: "PreferSameNode/PreferSameZone commits to the local node (zone) when an endpoint there exists but lacks the port (name, family or protocol): that port has no backend, where kube-proxy uses every endpoint of the port",
        issues: &["cilium/cilium#45214"],
        resolution: Resolution::Fixed {
            version: None,
            by: "cilium/cilium#45215",
        },
        repair: "upgrade Cilium",
        mitigation: "give every pod behind the Service every port of the Service",
        cases: &["H5"],
        confirmed: false,
        checked: "issue #45214 and PR #45215 'Apply compatibility filters in TrafficDistribution lookahead loops' (merged 2026-04) read; the releases affected and the first release with the fix were not confirmed, so every version is treated as affected. H5 exposes it: a two-port PreferSameNode Service whose pod on the client's node lacks the port dialled",
    },
    Divergence {
        id: "cilium-topology-needs-service-topology",
        plane: Plane::Cilium,
        affected_from: None,
        affected_before: None,
        requires: Some(SettingCondition {
            key: "enable-service-topology",
            value: "true",
            present: false,
        }),
        effect: Effect::TopologyIgnoredWithoutSetting,
        divergence: "trafficDistribution and topology hints are ignored unless enable-service-topology is on: connections go to every endpoint where kube-proxy keeps them in the zone or on the node",
        issues: &[
            "cilium/cilium#40883",
            "cilium/cilium#37930",
            "cilium/cilium#25283",
        ],
        resolution: Resolution::Setting {
            setting: "enable-service-topology",
            value: "true",
            how: "Helm value loadBalancer.serviceTopology=true, in ConfigMap cilium-config",
        },
        repair: "turn Cilium's service topology on",
        mitigation: "",
        cases: &["Z1", "Z3", "H1"],
        confirmed: true,
        checked: "PR #17929 (the feature, docs: 'To enable the feature, set loadBalancer.serviceTopology=true'); issue #25283 (enable-service-topology off by default); #40883 and #37930 (PreferClose routes cluster-wide without it)",
    },
    Divergence {
        id: "cilium-etp-local-in-cluster-lb-ip",
        plane: Plane::Cilium,
        affected_from: Some(PlaneVersion::new(1, 19, 0)),
        affected_before: None,
        requires: None,
        effect: Effect::EtpLocalAppliedToInClusterLbIp,
        divergence: "in-cluster connections to the load-balancer IP of an externalTrafficPolicy: Local Service fail on nodes without a local endpoint, where kube-proxy sends them to any endpoint",
        issues: &["cilium/cilium#45252"],
        resolution: Resolution::Open,
        repair: "",
        mitigation: "have in-cluster clients use the Service's cluster IP (its DNS name), or set externalTrafficPolicy: Cluster",
        cases: &["X4"],
        confirmed: true,
        checked: "issue #45252 (open, affects/v1.19; reproduced by a maintainer on v1.19.3 with kind). X4 (--external-cases) dials a load-balancer IP from a pod on a node without an endpoint",
    },
    Divergence {
        id: "cilium-socket-lb-etp-no-terminating-fallback",
        plane: Plane::Cilium,
        affected_from: None,
        affected_before: None,
        requires: None,
        effect: Effect::EtpLocalNoTerminatingFallback,
        divergence: "socket-level load balancing does not fall back to local serving-terminating endpoints of an externalTrafficPolicy: Local Service, where kube-proxy does (KEP-1669)",
        issues: &["cilium/cilium#37613"],
        resolution: Resolution::Open,
        repair: "",
        mitigation: "roll the Service's pods with a surge (a new pod Ready before the old one terminates) on every node that receives external traffic",
        cases: &["Xt"],
        confirmed: true,
        checked: "issue #37613 (open, feature/socket-lb, pinned): Cilium fails the upstream e2e 'should fallback to local terminating endpoints when there are no ready endpoints with externalTrafficPolicy=Local'. The versions affected are not stated there, so every version is treated as affected. Xt (--external-cases) dials, from another node, the nodePort of a node whose only endpoint is serving-terminating; the simulated Cilium drops it there. Whether a real Cilium fails it on the receiving node or in the socket-LB of the client's node (the feature #37613 is filed under) was not checked",
    },
    Divergence {
        id: "kube-proxy-ipvs-etp-local-lb-ip",
        plane: Plane::KubeProxy,
        affected_from: None,
        affected_before: None,
        requires: Some(SettingCondition {
            key: "mode",
            value: "ipvs",
            present: true,
        }),
        effect: Effect::EtpLocalAppliedToInClusterLbIp,
        divergence: "in ipvs mode the load-balancer IP of an externalTrafficPolicy: Local Service is bound on every node, so in-cluster clients on a node without a local endpoint get no answer (every client before kubernetes#97081; since, clients in the node's network namespace: hostNetwork pods and the node itself), where the iptables and nftables modes send them to any endpoint",
        issues: &["kubernetes/kubernetes#75262", "kubernetes/kubernetes#93456"],
        resolution: Resolution::Open,
        repair: "",
        mitigation: "have in-cluster clients use the Service's cluster IP (its DNS name), or run kube-proxy in nftables or iptables mode",
        cases: &["X4", "X4h"],
        confirmed: false,
        checked: "issue #75262 (closed: described as expected for Local traffic) and #93456 (in-cluster LB-IP traffic should use cluster-wide endpoints, as the iptables proxier does since PR #77523). PR #97081 'Ipvs: non-local access to externalTrafficPolicy:Local' (merged, 'Partially Fixes #93456') makes syncEndpoint in pkg/proxy/ipvs/proxier.go use the cluster endpoints when a Local policy has no local endpoint: pods on such a node reach the LB IP, while the node's own network namespace still gets no answer (said in the PR, and by its author on #93456 in 2025: not fixed, no work-around). The first release with #97081 was not confirmed: it was still under review in January 2022, so not before 1.24 (inferred, not read from release notes). Why the host part remains, inferred from the proxier's layout rather than read in a test: the LB IP is bound on every node's kube-ipvs0, a connection from the node's own network namespace takes it as its source address, ETP Local leaves it unmasqueraded, so the remote endpoint's reply is delivered to its own node. The model and the simulated ipvs kube-proxy (profile kube-proxy:ipvs) follow #97081 for pods and lose the reply for host clients; the pre-#97081 behaviour for pods is older than the releases the model covers. X4 (--external-cases) dials a load-balancer IP from a pod on a node without an endpoint, X4h from that node's host network",
    },
    Divergence {
        id: "kube-router-etp-local-restricts-cluster-ip",
        plane: Plane::KubeRouter,
        affected_from: None,
        affected_before: Some(PlaneVersion::new(2, 1, 0)),
        requires: None,
        effect: Effect::EtpLocalRestrictsClusterIp,
        divergence: "externalTrafficPolicy: Local also restricts the cluster IP: a client on a node without a local endpoint gets no answer where kube-proxy serves it from any endpoint",
        issues: &[
            "cloudnativelabs/kube-router#818",
            "cloudnativelabs/kube-router#1597",
        ],
        resolution: Resolution::Fixed {
            version: Some(PlaneVersion::new(2, 1, 0)),
            by: "cloudnativelabs/kube-router#1598",
        },
        repair: "upgrade kube-router",
        mitigation: "",
        cases: &["X3"],
        confirmed: false,
        checked: "X3 dials the cluster IP of an externalTrafficPolicy: Local Service from a node without an endpoint; issues #818 and #1597 ('even when it applies spec.externalTrafficPolicy it does so by setting both Cluster IP and External IP to route locally'); PR #1598 'Support All Upstream Traffic Policies' merged 2024-01. 2.1.0 as the first fixed release is inferred (PR #1774 speaks of behaviour 'in place since kube-router v2.1.0'), not read from release notes",
    },
    Divergence {
        id: "kube-router-itp-unsupported",
        plane: Plane::KubeRouter,
        affected_from: None,
        affected_before: Some(PlaneVersion::new(2, 1, 0)),
        requires: None,
        effect: Effect::ItpLocalIgnored,
        divergence: "internalTrafficPolicy is not implemented: a ClusterIP with internalTrafficPolicy: Local is served from other nodes where kube-proxy drops",
        issues: &["cloudnativelabs/kube-router#1597"],
        resolution: Resolution::Fixed {
            version: Some(PlaneVersion::new(2, 1, 0)),
            by: "cloudnativelabs/kube-router#1598",
        },
        repair: "upgrade kube-router",
        mitigation: "",
        cases: &["C", "Pn"],
        confirmed: false,
        checked: "issue #1597 ('does not support spec.internalTrafficPolicy ... at all'); PR #1598 adds it, merged 2024-01. 2.1.0 as the first release with it is inferred from PR #1774, not read from release notes",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const V: fn(u16, u16, u16) -> PlaneVersion = PlaneVersion::new;

    fn detection(plane: Plane, v: PlaneVersion, settings: &[(&str, &str)]) -> Detection {
        Detection {
            plane: Some(plane),
            version: Some(v),
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            ..Detection::default()
        }
    }

    #[test]
    fn ids_are_unique_and_each_names_an_issue() {
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CATALOGUE.len());
        for e in CATALOGUE {
            assert!(!e.issues.is_empty(), "{}", e.id);
            assert!(
                e.issues.iter().all(|i| i.starts_with(e.plane.repository())),
                "{}",
                e.id
            );
            if e.resolution == Resolution::Open {
                assert!(!e.mitigation.is_empty(), "{}", e.id);
            }
        }
    }

    #[test]
    fn calico_ebpf_326_is_affected_327_is_not() {
        let e = entry("calico-ebpf-itp-ignored").unwrap();
        assert!(e.applies(&detection(Plane::CalicoEbpf, V(3, 26, 4), &[])));
        assert!(!e.applies(&detection(Plane::CalicoEbpf, V(3, 27, 0), &[])));
        assert!(!e.applies(&detection(Plane::KubeProxy, V(3, 26, 0), &[])));
        assert!(!e.applies(&Detection {
            version: None,
            ..detection(Plane::CalicoEbpf, V(3, 26, 0), &[])
        }));
        assert!(e.advice().contains("3.27.0") && e.advice().contains("projectcalico/calico#8255"));
    }

    #[test]
    fn cilium_entries_follow_the_service_topology_setting() {
        let on = detection(Plane::Cilium, V(1, 18, 0), &[("enable-service-topology", "true")]);
        let ids = |d: &Detection| applicable(d).iter().map(|e| e.id).collect::<Vec<_>>();
        assert!(ids(&on).contains(&"cilium-zone-hints-no-fallback"));
        assert!(!ids(&on).contains(&"cilium-topology-needs-service-topology"));
        let off = detection(Plane::Cilium, V(1, 18, 0), &[]);
        assert!(ids(&off).contains(&"cilium-topology-needs-service-topology"));
        assert!(!ids(&off).contains(&"cilium-zone-hints-no-fallback"));
        let fixed = detection(Plane::Cilium, V(1, 18, 1), &[("enable-service-topology", "true")]);
        assert!(!ids(&fixed).contains(&"cilium-zone-hints-no-fallback"));
    }

    #[test]
    fn effects_match_service_specs() {
        let mut svc = Service {
            type_: ServiceType::ClusterIP,
            ..Service::default()
        };
        assert!(!Effect::ItpLocalIgnored.applies_to(&svc));
        svc.internal_traffic_policy = Some(TrafficPolicy::Local);
        assert!(Effect::ItpLocalIgnored.applies_to(&svc));
        assert!(!Effect::EtpLocalRestrictsClusterIp.applies_to(&svc));
        svc.type_ = ServiceType::NodePort;
        svc.external_traffic_policy = Some(TrafficPolicy::Local);
        assert!(Effect::EtpLocalRestrictsClusterIp.applies_to(&svc));
        svc.traffic_distribution = Some(PREFER_CLOSE.into());
        assert!(Effect::ZoneHintsNoFallback.applies_to(&svc));
        assert!(!Effect::PreferSameCommitsToIncompatibleLocal.applies_to(&svc));
    }

    #[test]
    fn advice_names_the_fix_the_setting_or_the_mitigation() {
        let fixed = entry("kube-router-itp-unsupported").unwrap().advice();
        assert!(fixed.contains("2.1.0") && fixed.contains("#1598"), "{fixed}");
        let setting = entry("cilium-topology-needs-service-topology").unwrap().advice();
        assert!(setting.contains("enable-service-topology=true"), "{setting}");
        let open = entry("cilium-etp-local-in-cluster-lb-ip").unwrap().advice();
        assert!(
            open.starts_with("open upstream bug cilium/cilium#45252"),
            "{open}"
        );
    }
}
