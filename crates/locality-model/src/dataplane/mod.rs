//! Known data planes, their versions, and the catalogue of their known divergences from
//! kube-proxy (docs/dataplanes.md, generated from [`catalogue::CATALOGUE`]).
//!
//! - [`detect`]: which data plane implements Services, and its version, from the objects a
//!   cluster (or a dump of one) holds in its system namespaces: the `kube-proxy`, `cilium`,
//!   `calico-node`, `kube-router` and `ovnkube-node` DaemonSets, the `cilium-config`
//!   ConfigMap, Calico's `FelixConfiguration` and the operator's `Installation`. Pure: the
//!   callers (`live`, `audit`) hand it the facts they read.
//! - [`catalogue`]: each known divergence as data: data plane, affected versions, what it
//!   does in terms of the model's verdicts, the upstream issue and fix, the repair and the
//!   `verify` cases that expose it.
//! - [`markdown`]: docs/dataplanes.md, rendered from the catalogue (a test keeps the file
//!   current).

pub mod catalogue;
pub mod detect;
pub mod markdown;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

/// A data plane the catalogue knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plane {
    /// kube-proxy (iptables, nftables or ipvs).
    KubeProxy,
    /// Cilium with its kube-proxy replacement.
    Cilium,
    /// Calico with its eBPF data plane (which replaces kube-proxy).
    CalicoEbpf,
    /// kube-router with its service proxy (`--run-service-proxy`).
    KubeRouter,
    /// OVN-Kubernetes (its own Service load balancers in OVN).
    OvnKubernetes,
}

impl Plane {
    /// Every known data plane.
    pub const ALL: [Plane; 5] = [
        Plane::KubeProxy,
        Plane::Cilium,
        Plane::CalicoEbpf,
        Plane::KubeRouter,
        Plane::OvnKubernetes,
    ];

    /// The name used in profiles, reports and the catalogue: `kube-proxy`, `cilium`,
    /// `calico-ebpf`, `kube-router`, `ovn-kubernetes`.
    pub fn as_str(self) -> &'static str {
        match self {
            Plane::KubeProxy => "kube-proxy",
            Plane::Cilium => "cilium",
            Plane::CalicoEbpf => "calico-ebpf",
            Plane::KubeRouter => "kube-router",
            Plane::OvnKubernetes => "ovn-kubernetes",
        }
    }

    /// Parses [`Plane::as_str`].
    pub fn parse(s: &str) -> Option<Plane> {
        Plane::ALL.into_iter().find(|p| p.as_str() == s.trim())
    }

    /// The upstream repository whose tracker the catalogue cites.
    pub fn repository(self) -> &'static str {
        match self {
            Plane::KubeProxy => "kubernetes/kubernetes",
            Plane::Cilium => "cilium/cilium",
            Plane::CalicoEbpf => "projectcalico/calico",
            Plane::KubeRouter => "cloudnativelabs/kube-router",
            Plane::OvnKubernetes => "ovn-org/ovn-kubernetes",
        }
    }
}

impl fmt::Display for Plane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A data plane's release, `MAJOR.MINOR.PATCH` (a missing patch reads as 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlaneVersion {
    /// Major.
    pub major: u16,
    /// Minor.
    pub minor: u16,
    /// Patch.
    pub patch: u16,
}

impl PlaneVersion {
    /// `major.minor.patch`.
    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        PlaneVersion { major, minor, patch }
    }

    /// Parses `v1.18.0`, `1.18`, `v3.26.4-rc1`, `v2.0.1+build`; `None` for anything else
    /// (`latest`, `master`, a digest).
    pub fn parse(s: &str) -> Option<PlaneVersion> {
        let s = s.trim();
        let s = s.strip_prefix('v').unwrap_or(s);
        let core = s.split(['-', '+']).next()?;
        let mut parts = core.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = match parts.next() {
            Some(p) => p.parse().ok()?,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(PlaneVersion::new(major, minor, patch))
    }

    /// The version in an image reference's tag (`quay.io/cilium/cilium:v1.18.0@sha256:…`
    /// → 1.18.0); `None` without a version tag.
    pub fn from_image(image: &str) -> Option<PlaneVersion> {
        let image = image.split('@').next().unwrap_or(image);
        let last = image.rsplit('/').next().unwrap_or(image);
        let (_, tag) = last.rsplit_once(':')?;
        PlaneVersion::parse(tag)
    }
}

impl PartialOrd for PlaneVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PlaneVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch))
    }
}

impl fmt::Display for PlaneVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// What detection found: the data plane that implements Services (if known), its version,
/// the settings read that the catalogue depends on, and what was looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detection {
    /// The data plane, `None` when unknown.
    pub plane: Option<Plane>,
    /// Its version, `None` when no tag says it.
    pub version: Option<PlaneVersion>,
    /// Settings read (e.g. `enable-service-topology` → `true` from `cilium-config`).
    pub settings: BTreeMap<String, String>,
    /// The object that decided (e.g. `DaemonSet kube-system/cilium image quay.io/…`).
    pub source: String,
    /// Every object looked at, found or not (so an unknown says why).
    pub looked_at: Vec<String>,
}

impl Detection {
    /// `cilium 1.18.0`, `calico-ebpf (version unknown)`, `unknown`.
    pub fn describe(&self) -> String {
        match (self.plane, self.version) {
            (Some(p), Some(v)) => format!("{p} {v}"),
            (Some(p), None) => format!("{p} (version unknown)"),
            (None, _) => "unknown".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_tags_and_images() {
        assert_eq!(PlaneVersion::parse("v1.18.0"), Some(PlaneVersion::new(1, 18, 0)));
        assert_eq!(PlaneVersion::parse("3.26"), Some(PlaneVersion::new(3, 26, 0)));
        assert_eq!(
            PlaneVersion::parse("v3.26.4-rc1"),
            Some(PlaneVersion::new(3, 26, 4))
        );
        assert_eq!(PlaneVersion::parse("latest"), None);
        assert_eq!(PlaneVersion::parse("1.2.3.4"), None);
        assert_eq!(
            PlaneVersion::from_image("quay.io/cilium/cilium:v1.18.0@sha256:0123"),
            Some(PlaneVersion::new(1, 18, 0))
        );
        assert_eq!(
            PlaneVersion::from_image("localhost:5000/cloudnativelabs/kube-router"),
            None
        );
        assert!(PlaneVersion::new(3, 26, 9) < PlaneVersion::new(3, 27, 0));
        assert_eq!(Plane::parse("calico-ebpf"), Some(Plane::CalicoEbpf));
    }
}
