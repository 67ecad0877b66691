//! Kubernetes versions: the releases the model covers ([`KubeVersion`]). What each release
//! switches on is in [`crate::features`].

use std::fmt;
use std::str::FromStr;

/// A Kubernetes minor release (`1.35`); patch levels do not change routing behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    /// Major version (always 1).
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl KubeVersion {
    /// Oldest release the model supports (ITP on by default).
    pub const OLDEST: KubeVersion = KubeVersion::new(1, 22);
    /// Newest release the model knows; the default when nothing says otherwise.
    pub const NEWEST: KubeVersion = KubeVersion::new(1, 37);

    /// A version from its parts.
    pub const fn new(major: u16, minor: u16) -> Self {
        KubeVersion { major, minor }
    }

    /// True when `self >= major.minor`.
    pub fn at_least(self, major: u16, minor: u16) -> bool {
        self >= KubeVersion::new(major, minor)
    }

    /// Parses a kubelet/kube-proxy style version (`v1.35.2`, `v1.30.1-eks-abc`, `1.35`)
    /// without checking the supported range.
    pub fn parse_loose(s: &str) -> Option<KubeVersion> {
        let s = s.trim();
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts = s.split(['.', '-', '+']);
        let major: u16 = parts.next()?.parse().ok()?;
        let minor_text = parts.next()?;
        // Some distributions append letters to the minor (GKE `1.30+`), keep the digits.
        let digits: String = minor_text.chars().take_while(|c| c.is_ascii_digit()).collect();
        let minor: u16 = digits.parse().ok()?;
        Some(KubeVersion::new(major, minor))
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Error for a version the model cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionError {
    /// The text given.
    pub input: String,
    /// Why it was refused.
    pub reason: String,
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unsupported Kubernetes version {:?}: {}",
            self.input, self.reason
        )
    }
}

impl std::error::Error for VersionError {}

impl FromStr for KubeVersion {
    type Err = VersionError;

    /// Parses `1.35`, `v1.35` or `v1.35.2` and checks it is within
    /// [`KubeVersion::OLDEST`]..=[`KubeVersion::NEWEST`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| VersionError {
            input: s.to_string(),
            reason,
        };
        let v = KubeVersion::parse_loose(s)
            .ok_or_else(|| err("expected MAJOR.MINOR, e.g. 1.35 or v1.35.2".into()))?;
        if v.major != 1 {
            return Err(err("only Kubernetes 1.x exists".into()));
        }
        if v < KubeVersion::OLDEST || v > KubeVersion::NEWEST {
            return Err(err(format!(
                "supported releases are {}..={}",
                KubeVersion::OLDEST,
                KubeVersion::NEWEST
            )));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms_and_rejects_out_of_range() {
        assert_eq!("1.35".parse::<KubeVersion>().unwrap(), KubeVersion::new(1, 35));
        assert_eq!("v1.30.4".parse::<KubeVersion>().unwrap(), KubeVersion::new(1, 30));
        assert_eq!(
            KubeVersion::parse_loose("v1.29.3-eks-1234"),
            Some(KubeVersion::new(1, 29))
        );
        assert_eq!(KubeVersion::parse_loose("v1.30+"), Some(KubeVersion::new(1, 30)));
        assert!("1.21".parse::<KubeVersion>().is_err());
        assert!("1.99".parse::<KubeVersion>().is_err());
        assert!("2.0".parse::<KubeVersion>().is_err());
        assert!("banana".parse::<KubeVersion>().is_err());
        assert!("".parse::<KubeVersion>().is_err());
    }
}
