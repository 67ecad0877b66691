//! The data-plane profile of a simulated node: its proxy mode and at most one fault, parsed
//! from and printed as the `--profile NODE=PROFILE` text.

use std::fmt;
use std::str::FromStr;

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
}

/// The data-plane profile of a simulated node: a proxy mode and at most one fault.
#[derive(Debug, Clone, PartialEq)]
pub struct DataPlaneProfile {
    /// Proxy mode (rules shape, DROP/REJECT semantics).
    pub mode: ProxyMode,
    /// Fault, `None` for a conformant kube-proxy.
    pub fault: Option<Fault>,
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
     ignores-local-policy, stale-rules[:SECONDS], hostname-mismatch, no-terminating-fallback, masquerades-external, lossy[:FRACTION] or other[:NAME]"
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
            _ => return Err(err()),
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
            Some(Fault::HostnameMismatch) => f.write_str("hostname-mismatch")?,
            Some(Fault::NoTerminatingFallback) => f.write_str("no-terminating-fallback")?,
            Some(Fault::MasqueradesExternal) => f.write_str("masquerades-external")?,
            Some(Fault::StaleRules { late_ms }) => write!(f, "stale-rules:{}", *late_ms as f64 / 1000.0)?,
            Some(Fault::Lossy { fraction }) => write!(f, "lossy:{fraction}")?,
            Some(Fault::Other { name }) => write!(f, "other:{name}")?,
        }
        if self.mode != ProxyMode::Iptables {
            write!(f, "+{}", self.mode.as_str())?;
        }
        Ok(())
    }
}
