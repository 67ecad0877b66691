//! The data-plane profile of a simulated node: its proxy mode and at most one fault, parsed
//! from and printed as the `--profile NODE=PROFILE` text.

use std::fmt;
use std::str::FromStr;

use locality_model::dataplane::catalogue::{self, Effect};
use locality_model::dataplane::{Detection, Plane, PlaneVersion};

use crate::time::Millis;

/// The simulated kube-proxy's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProxyMode {
    /// iptables.
    Iptables,
    /// nftables.
    Nftables,
    /// ipvs.
    Ipvs,
}

impl ProxyMode {
    /// What `/proxyMode` answers.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyMode::Iptables => "iptables",
            ProxyMode::Nftables => "nftables",
            ProxyMode::Ipvs => "ipvs",
        }
    }
}

/// A simulated data-plane fault (docs/design.md §8.1): what a `verify` run must catch.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Uses cluster endpoints when ITP Local has no local endpoint.
    IgnoresLocalPolicy,
    /// Ignores ITP Local altogether: picks among every ready endpoint of the cluster, a local
    /// one or not (`ignores-local-policy:always`).
    IgnoresLocalPolicyAlways,
    /// Applies endpoint changes `late_ms` later than a conformant kube-proxy.
    StaleRules {
        /// Extra lag in ms.
        late_ms: Millis,
    },
    /// kube-proxy's node name differs from the Node's: nothing is local, no zone is known.
    HostnameMismatch,
    /// Never falls back to serving-terminating endpoints (KEP-1669), as kube-proxy before
    /// 1.26 or with `ProxyTerminatingEndpoints=false`, or a replacement that lacks it: a
    /// Local Service whose only local endpoint is terminating drops.
    NoTerminatingFallback,
    /// Masquerades every external connection to the node's address, `externalTrafficPolicy:
    /// Local` included: the client's source IP is lost (as a replacement data plane in an
    /// SNAT load-balancing mode would).
    MasqueradesExternal,
    /// Loses `fraction` of connections at random (seeded).
    Lossy {
        /// Fraction in `[0, 1]`.
        fraction: f64,
    },
    /// A kube-proxy replacement: routes like kube-proxy, has no metrics endpoint on 10249.
    Other {
        /// Its name (e.g. `cilium`).
        name: String,
    },
    /// A known data plane at a version (`cilium:1.18.0`, `calico-ebpf:3.26`,
    /// `kube-router:2.0`): routes like kube-proxy except for the divergences of the catalogue
    /// (`locality_model::dataplane::catalogue`) that apply to it, has no metrics endpoint on
    /// 10249, and is published in `kube-system` as that project installs it.
    Plane(PlaneProfile),
}

/// A simulated known data plane: which, at which version, with which settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaneProfile {
    /// The data plane (never kube-proxy).
    pub plane: Plane,
    /// Its version.
    pub version: PlaneVersion,
    /// Cilium's `enable-service-topology` (on unless the profile says
    /// `service-topology=false`).
    pub service_topology: bool,
}

impl PlaneProfile {
    /// What detection reads of it (the settings its `kube-system` objects carry).
    pub fn detection(&self) -> Detection {
        let mut d = Detection {
            plane: Some(self.plane),
            version: Some(self.version),
            source: format!("simulated {} {}", self.plane, self.version),
            ..Detection::default()
        };
        if self.plane == Plane::Cilium {
            d.settings.insert("kube-proxy-replacement".into(), "true".into());
            d.settings.insert(
                "enable-service-topology".into(),
                self.service_topology.to_string(),
            );
        }
        d
    }

    /// The effects of the catalogue entries that apply to it.
    pub fn effects(&self) -> Vec<Effect> {
        catalogue::applicable(&self.detection())
            .into_iter()
            .map(|e| e.effect)
            .collect()
    }

    fn parse(name: &str, arg: Option<&str>) -> Option<PlaneProfile> {
        let plane = Plane::parse(name).filter(|p| *p != Plane::KubeProxy)?;
        let mut parts = arg?.split(',');
        let version = PlaneVersion::parse(parts.next()?)?;
        let mut service_topology = true;
        for opt in parts {
            match (plane, opt.trim()) {
                (Plane::Cilium, "service-topology=false") => service_topology = false,
                (Plane::Cilium, "service-topology=true") => service_topology = true,
                _ => return None,
            }
        }
        Some(PlaneProfile {
            plane,
            version,
            service_topology,
        })
    }
}

impl fmt::Display for PlaneProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.plane, self.version)?;
        if self.plane == Plane::Cilium && !self.service_topology {
            f.write_str(",service-topology=false")?;
        }
        Ok(())
    }
}

/// The data-plane profile of a simulated node: a proxy mode and at most one fault.
#[derive(Debug, Clone, PartialEq)]
pub struct DataPlaneProfile {
    /// Proxy mode (rules shape, DROP/REJECT semantics).
    pub mode: ProxyMode,
    /// Fault, `None` for a conformant kube-proxy.
    pub fault: Option<Fault>,
}

impl DataPlaneProfile {
    /// The name of the data plane that replaces kube-proxy on the node (`other:NAME` or a
    /// known data plane), `None` for kube-proxy.
    pub fn replacement(&self) -> Option<String> {
        match &self.fault {
            Some(Fault::Other { name }) => Some(name.clone()),
            Some(Fault::Plane(p)) => Some(p.plane.to_string()),
            _ => None,
        }
    }

    /// The simulated known data plane, if the profile is one.
    pub fn plane(&self) -> Option<&PlaneProfile> {
        match &self.fault {
            Some(Fault::Plane(p)) => Some(p),
            _ => None,
        }
    }

    /// Whether the data plane has a catalogue divergence with this effect.
    pub fn diverges(&self, effect: Effect) -> bool {
        self.plane().is_some_and(|p| p.effects().contains(&effect))
    }
}

impl Default for DataPlaneProfile {
    fn default() -> Self {
        DataPlaneProfile {
            mode: ProxyMode::Iptables,
            fault: None,
        }
    }
}

/// Error for a profile name the simulation does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown simulated data-plane profile {0:?}: expected kube-proxy[:iptables|nftables|ipvs], \
     ignores-local-policy[:always], stale-rules[:SECONDS], hostname-mismatch, no-terminating-fallback, masquerades-external, lossy[:FRACTION], other[:NAME], \
     or a known data plane at a version: cilium:VERSION[,service-topology=false], calico-ebpf:VERSION, kube-router:VERSION, ovn-kubernetes:VERSION"
)]
pub struct ProfileError(pub String);

impl FromStr for DataPlaneProfile {
    type Err = ProfileError;

    /// `kube-proxy`, `kube-proxy:nftables`, `ipvs`, `ignores-local-policy`, `stale-rules:5`,
    /// `hostname-mismatch`, `no-terminating-fallback`, `masquerades-external`, `lossy:0.3`, `other:cilium`. A fault may name a mode after a `+`:
    /// `stale-rules:5+nftables`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ProfileError(s.to_string());
        let (main, mode) = match s.split_once('+') {
            Some((m, mode)) => (m, Some(mode)),
            None => (s, None),
        };
        let parse_mode = |m: &str| match m {
            "iptables" => Ok(ProxyMode::Iptables),
            "nftables" => Ok(ProxyMode::Nftables),
            "ipvs" => Ok(ProxyMode::Ipvs),
            _ => Err(err()),
        };
        let (name, arg) = match main.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (main.trim(), None),
        };
        let mut profile = DataPlaneProfile::default();
        match (name, arg) {
            ("kube-proxy", None) => {}
            ("kube-proxy", Some(m)) => profile.mode = parse_mode(m)?,
            ("iptables" | "nftables" | "ipvs", None) => profile.mode = parse_mode(name)?,
            ("ignores-local-policy", None) => profile.fault = Some(Fault::IgnoresLocalPolicy),
            ("ignores-local-policy", Some("always")) => profile.fault = Some(Fault::IgnoresLocalPolicyAlways),
            ("hostname-mismatch", None) => profile.fault = Some(Fault::HostnameMismatch),
            ("no-terminating-fallback", None) => profile.fault = Some(Fault::NoTerminatingFallback),
            ("masquerades-external", None) => profile.fault = Some(Fault::MasqueradesExternal),
            ("stale-rules", a) => {
                let secs: f64 = a.map_or(Ok(10.0), str::parse).map_err(|_| err())?;
                if !(secs.is_finite() && secs >= 0.0) {
                    return Err(err());
                }
                profile.fault = Some(Fault::StaleRules {
                    late_ms: (secs * 1000.0).round() as Millis,
                });
            }
            ("lossy", a) => {
                let fraction: f64 = a.map_or(Ok(0.3), str::parse).map_err(|_| err())?;
                if !(0.0..=1.0).contains(&fraction) {
                    return Err(err());
                }
                profile.fault = Some(Fault::Lossy { fraction });
            }
            ("other", a) => {
                profile.fault = Some(Fault::Other {
                    name: a
                        .filter(|a| !a.is_empty())
                        .unwrap_or("kube-proxy-replacement")
                        .to_string(),
                });
            }
            (name, arg) => match PlaneProfile::parse(name, arg) {
                Some(p) => profile.fault = Some(Fault::Plane(p)),
                None => return Err(err()),
            },
        }
        if let Some(m) = mode {
            profile.mode = parse_mode(m)?;
        }
        Ok(profile)
    }
}

impl fmt::Display for DataPlaneProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.fault {
            None => return write!(f, "kube-proxy:{}", self.mode.as_str()),
            Some(Fault::IgnoresLocalPolicy) => f.write_str("ignores-local-policy")?,
            Some(Fault::IgnoresLocalPolicyAlways) => f.write_str("ignores-local-policy:always")?,
            Some(Fault::HostnameMismatch) => f.write_str("hostname-mismatch")?,
            Some(Fault::NoTerminatingFallback) => f.write_str("no-terminating-fallback")?,
            Some(Fault::MasqueradesExternal) => f.write_str("masquerades-external")?,
            Some(Fault::StaleRules { late_ms }) => write!(f, "stale-rules:{}", *late_ms as f64 / 1000.0)?,
            Some(Fault::Lossy { fraction }) => write!(f, "lossy:{fraction}")?,
            Some(Fault::Other { name }) => write!(f, "other:{name}")?,
            Some(Fault::Plane(p)) => write!(f, "{p}")?,
        }
        if self.mode != ProxyMode::Iptables {
            write!(f, "+{}", self.mode.as_str())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_data_planes_parse_and_print() {
        for text in [
            "cilium:1.18.0",
            "calico-ebpf:3.26.0",
            "kube-router:2.0.1",
            "cilium:1.18.1,service-topology=false",
        ] {
            let p: DataPlaneProfile = text.parse().unwrap();
            assert_eq!(p.to_string(), text);
            assert!(p.replacement().is_some());
        }
        let p: DataPlaneProfile = "calico-ebpf:3.26".parse().unwrap();
        assert_eq!(p.to_string(), "calico-ebpf:3.26.0");
        for bad in [
            "cilium",
            "cilium:latest",
            "kube-router:2.0,service-topology=false",
            "calico:3.26",
        ] {
            assert!(bad.parse::<DataPlaneProfile>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_the_catalogue_divergences_of_the_version_apply() {
        let p = |s: &str| s.parse::<DataPlaneProfile>().unwrap();
        assert!(p("calico-ebpf:3.26").diverges(Effect::ItpLocalIgnored));
        assert!(!p("calico-ebpf:3.27").diverges(Effect::ItpLocalIgnored));
        assert!(p("cilium:1.18.0").diverges(Effect::ZoneHintsNoFallback));
        assert!(!p("cilium:1.18.1").diverges(Effect::ZoneHintsNoFallback));
        assert!(!p("cilium:1.18.1").diverges(Effect::TopologyIgnoredWithoutSetting));
        assert!(p("cilium:1.18.1,service-topology=false").diverges(Effect::TopologyIgnoredWithoutSetting));
        assert!(p("kube-router:2.0").diverges(Effect::EtpLocalRestrictsClusterIp));
        assert!(p("kube-router:2.0").diverges(Effect::ItpLocalIgnored));
        assert!(!p("kube-router:2.1").diverges(Effect::ItpLocalIgnored));
        assert!(!p("kube-proxy").diverges(Effect::ItpLocalIgnored));
        assert!(p("cilium:1.18.1").diverges(Effect::PreferSameCommitsToIncompatibleLocal));
        assert!(
            !p("cilium:1.18.1,service-topology=false").diverges(Effect::PreferSameCommitsToIncompatibleLocal)
        );
        assert!(!p("cilium:1.18.1").diverges(Effect::EtpLocalAppliedToInClusterLbIp));
        assert!(p("cilium:1.19.3").diverges(Effect::EtpLocalAppliedToInClusterLbIp));
        // cilium/cilium#37613 is open: every version.
        assert!(p("cilium:1.18.1").diverges(Effect::EtpLocalNoTerminatingFallback));
        assert!(p("cilium:1.19.3").diverges(Effect::EtpLocalNoTerminatingFallback));
        assert!(!p("calico-ebpf:3.27").diverges(Effect::EtpLocalNoTerminatingFallback));
        assert!(!p("kube-proxy").diverges(Effect::EtpLocalNoTerminatingFallback));
    }
}
