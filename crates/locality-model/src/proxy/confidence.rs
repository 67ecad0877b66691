//! How sure the model is of an answer, and which missing facts make it less sure.
//!
//! A [`Confidence`] level says where the rule behind an answer comes from (an upstream test,
//! upstream source, or reasoning). [`MissingFacts`] names what the answer depends on that the
//! input does not give (kube-proxy's version when it was assumed, the control plane's, the
//! proxy mode). Together they form a small lattice: pairs are ordered by level and, for equal
//! levels, by fewer missing facts; [`Assessment::meet`] (the least sure of two answers) takes
//! the lower level and the union of the missing facts. A missing fact caps the level at
//! [`Confidence::Inferred`]: the answer holds under an assumption the input does not support,
//! and is never presented as pinned or read upstream.

use serde::Serialize;

/// How sure the model is of a verdict (docs/design.md §2), lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// Reasoned from the rule layout or kernel behaviour, not pinned by upstream; or an
    /// answer that depends on a fact the input lacks ([`MissingFacts`]).
    Inferred,
    /// Read in upstream source.
    SourceRead,
    /// Pinned by an upstream unit test.
    UpstreamTest,
}

impl Confidence {
    /// Kebab-case code.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Inferred => "inferred",
            Confidence::SourceRead => "source-read",
            Confidence::UpstreamTest => "upstream-test",
        }
    }
}

/// A fact an answer depends on that the input does not give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MissingFact {
    /// kube-proxy's version was assumed (no `--kube-proxy-version`, no kube-proxy image read),
    /// and the answer follows a rule that changed across the supported releases.
    KubeProxyVersion,
    /// The control plane's version was assumed (no `--kube-version`, no server version read),
    /// and the answer rests on EndpointSlices derived by a controller whose behaviour changed
    /// across releases (hints for `trafficDistribution` or `topology-mode`).
    KubeVersion,
    /// kube-proxy's mode is not known (unknown, or assumed: files without `--proxy-mode` are
    /// read as iptables) and the modes disagree on this route.
    ProxyMode,
}

impl MissingFact {
    /// Every fact, in output order.
    pub const ALL: [MissingFact; 3] = [
        MissingFact::KubeProxyVersion,
        MissingFact::KubeVersion,
        MissingFact::ProxyMode,
    ];
    /// Kebab-case code (JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            MissingFact::KubeProxyVersion => "kube-proxy-version",
            MissingFact::KubeVersion => "kube-version",
            MissingFact::ProxyMode => "proxy-mode",
        }
    }
    /// What is missing and how to supply it, in words.
    pub fn explain(self) -> &'static str {
        match self {
            MissingFact::KubeProxyVersion => {
                "kube-proxy's version is assumed (from the kubelet's, or the newest release) and this answer follows a rule that changed between releases: give --kube-proxy-version"
            }
            MissingFact::KubeVersion => {
                "the control plane's version is assumed and these EndpointSlices were derived with hints whose rules changed between releases: give --kube-version, or the observed EndpointSlices"
            }
            MissingFact::ProxyMode => {
                "kube-proxy's mode is not known (unknown, or assumed iptables for files) and the modes disagree here: give --proxy-mode"
            }
        }
    }
    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`MissingFact`]s (small and `Copy`: it rides on every route).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MissingFacts(u8);

impl MissingFacts {
    /// The empty set.
    pub const NONE: MissingFacts = MissingFacts(0);
    /// Adds a fact.
    pub fn insert(&mut self, fact: MissingFact) {
        self.0 |= fact.bit();
    }
    /// True when `fact` is in the set.
    pub fn contains(self, fact: MissingFact) -> bool {
        self.0 & fact.bit() != 0
    }
    /// True when nothing is missing.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
    /// The union of two sets.
    pub fn union(self, other: MissingFacts) -> MissingFacts {
        MissingFacts(self.0 | other.0)
    }
    /// The facts, in [`MissingFact::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = MissingFact> {
        MissingFact::ALL.into_iter().filter(move |f| self.contains(*f))
    }
}

impl Serialize for MissingFacts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(MissingFact::as_str))
    }
}

/// A confidence level with the facts that lowered it: an element of the lattice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Assessment {
    /// The level (already capped by `missing`).
    pub level: Confidence,
    /// What the answer depends on that the input does not give.
    pub missing: MissingFacts,
}

impl Assessment {
    /// A level with nothing missing.
    pub fn new(level: Confidence) -> Self {
        Assessment {
            level,
            missing: MissingFacts::NONE,
        }
    }
    /// The same answer, now known to depend on `fact`: the fact is named and the level capped
    /// at [`Confidence::Inferred`].
    pub fn lacking(self, fact: MissingFact) -> Self {
        let mut missing = self.missing;
        missing.insert(fact);
        Assessment {
            level: Confidence::Inferred,
            missing,
        }
    }
    /// The least sure of two answers: the lower level, every missing fact.
    pub fn meet(self, other: Assessment) -> Self {
        Assessment {
            level: self.level.min(other.level),
            missing: self.missing.union(other.missing),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_fact_caps_the_level_and_is_named() {
        let pinned = Assessment::new(Confidence::UpstreamTest);
        assert!(pinned.missing.is_empty());
        let assumed = pinned.lacking(MissingFact::KubeProxyVersion);
        assert_eq!(assumed.level, Confidence::Inferred);
        assert!(assumed.missing.contains(MissingFact::KubeProxyVersion));
        assert!(!assumed.missing.contains(MissingFact::ProxyMode));
    }

    #[test]
    fn meet_takes_the_lower_level_and_every_missing_fact() {
        let a = Assessment::new(Confidence::SourceRead).lacking(MissingFact::ProxyMode);
        let b = Assessment::new(Confidence::UpstreamTest).lacking(MissingFact::KubeVersion);
        let m = a.meet(b);
        assert_eq!(m.level, Confidence::Inferred);
        assert_eq!(
            m.missing.iter().collect::<Vec<_>>(),
            vec![MissingFact::KubeVersion, MissingFact::ProxyMode]
        );
        let plain = Assessment::new(Confidence::SourceRead).meet(Assessment::new(Confidence::UpstreamTest));
        assert_eq!(plain, Assessment::new(Confidence::SourceRead));
    }
}
