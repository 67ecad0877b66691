//! `--baseline`: the findings of an earlier report, so that a team adopting the tool on a
//! cluster that already has findings is shown (and fails `--fail-on` on) new ones only.
//!
//! A finding is identified across runs by its [fingerprint](Finding::fingerprint): rule,
//! Service, port and IP family, the identity SARIF carries in
//! `partialFingerprints."localityFinding/v1"`. Messages, node lists and counts may change
//! between runs without making a finding new.

use std::collections::BTreeSet;
use std::fmt;

use crate::finding::{Finding, PortRef};
use crate::report::AuditReport;

/// The `partialFingerprints` key of SARIF results.
pub const FINGERPRINT_KEY: &str = "localityFinding/v1";

impl fmt::Display for PortRef {
    /// `name:port/PROTOCOL`, or `port/PROTOCOL` for an unnamed port.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&port_key(&self.name, self.port.into(), self.protocol.as_str()))
    }
}

/// A service port as findings name it: `name:port/PROTOCOL`, or `port/PROTOCOL` unnamed.
pub fn port_key(name: &str, port: u64, protocol: &str) -> String {
    if name.is_empty() {
        format!("{port}/{protocol}")
    } else {
        format!("{name}:{port}/{protocol}")
    }
}

/// The identity of a finding from its parts (what [`Finding::fingerprint`] and a baseline
/// read from an `AuditReport` both use): `RULE:namespace/name[:PORT][:FAMILY]`, e.g.
/// `LOC004:monitoring/node-agent:otlp:4317/TCP:IPv4`.
pub fn fingerprint(
    rule: &str,
    namespace: &str,
    name: &str,
    port: Option<&str>,
    family: Option<&str>,
) -> String {
    let mut s = format!("{rule}:{namespace}/{name}");
    for part in [port, family].into_iter().flatten() {
        s.push(':');
        s.push_str(part);
    }
    s
}

impl Finding {
    /// This finding's identity across runs (see [`fingerprint`]).
    pub fn fingerprint(&self) -> String {
        let port = self.port.as_ref().map(PortRef::to_string);
        fingerprint(
            self.rule.as_str(),
            &self.service.namespace,
            &self.service.name,
            port.as_deref(),
            self.ip_family.map(|f| f.as_str()),
        )
    }
}

/// The fingerprints of a previous report's findings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    fingerprints: BTreeSet<String>,
}

impl Baseline {
    /// A baseline of these fingerprints.
    pub fn new(fingerprints: impl IntoIterator<Item = String>) -> Self {
        Baseline {
            fingerprints: fingerprints.into_iter().collect(),
        }
    }

    /// Number of distinct findings in the baseline.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// True when the baseline holds no finding.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    /// Whether `finding` was already in the baseline.
    pub fn contains(&self, finding: &Finding) -> bool {
        self.fingerprints.contains(&finding.fingerprint())
    }
}

impl AuditReport {
    /// Leaves out the findings already in `baseline` (suppressed or not), counting them in
    /// [`Totals::in_baseline`](crate::report::Totals::in_baseline); the per-Service finding
    /// counts follow.
    pub fn apply_baseline(&mut self, baseline: &Baseline) {
        let before = self.findings.len();
        self.findings.retain(|f| !baseline.contains(f));
        let known = before - self.findings.len();
        for s in &mut self.services {
            s.findings = self
                .findings
                .iter()
                .filter(|f| f.service == s.service && f.suppression.is_none())
                .count();
        }
        self.recount();
        self.totals.in_baseline += known;
    }
}
