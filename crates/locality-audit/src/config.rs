//! The team's audit configuration (`.locality.yaml`), typed: per-rule severity or disabling,
//! and exemptions, each with its reason and an optional expiry date. Parsing and finding the
//! file are the caller's (I/O at the edge); [`apply`] is pure, with the day injected.
//!
//! An exemption suppresses the findings of its rules (or `*`) on the Services it matches
//! (namespace, name, label selector; all given must match). It is kept and marked with a
//! [`Suppression`] of kind `external`; an expired exemption (its `expires` day has passed)
//! no longer applies, and a note says so.

use std::collections::BTreeMap;

use jiff::civil::Date;
use locality_model::objects::ClusterState;
use serde::Serialize;

use crate::finding::{Finding, Suppression, SuppressionKind};
use crate::rule::{RuleId, Severity};

/// What the configuration says of one rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RuleConfig {
    /// The severity its findings get instead of the rule's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// `false`: the rule does not run (as `--skip-rule`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// One exemption.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exemption {
    /// The rules it covers; empty means every rule (`*`).
    pub rules: Vec<RuleId>,
    /// The Services' namespace, if restricted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The Service's name, if restricted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Labels the Service must carry (`selector.matchLabels`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Why (required).
    pub reason: String,
    /// The last day it applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<Date>,
    /// Where it was written (`.locality.yaml:12`).
    #[serde(skip)]
    pub origin: String,
}

/// The configuration: rule settings and exemptions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AuditConfig {
    /// The file it was read from, if any.
    #[serde(skip)]
    pub source: Option<String>,
    /// Per-rule settings.
    pub rules: BTreeMap<RuleId, RuleConfig>,
    /// Exemptions, in file order.
    pub exemptions: Vec<Exemption>,
}

impl AuditConfig {
    /// The rules the configuration disables.
    pub fn disabled(&self) -> impl Iterator<Item = RuleId> + '_ {
        self.rules
            .iter()
            .filter(|(_, c)| c.enabled == Some(false))
            .map(|(r, _)| *r)
    }
}

impl Exemption {
    fn covers(&self, rule: RuleId) -> bool {
        self.rules.is_empty() || self.rules.contains(&rule)
    }

    fn matches(&self, state: &ClusterState, f: &Finding) -> bool {
        if self.namespace.as_ref().is_some_and(|n| *n != f.service.namespace)
            || self.name.as_ref().is_some_and(|n| *n != f.service.name)
        {
            return false;
        }
        if self.match_labels.is_empty() {
            return true;
        }
        state
            .services
            .iter()
            .find(|s| s.meta.namespace == f.service.namespace && s.meta.name == f.service.name)
            .is_some_and(|s| {
                self.match_labels
                    .iter()
                    .all(|(k, v)| s.meta.labels.get(k) == Some(v))
            })
    }

    /// Expired on `today`: its last day has passed.
    pub fn expired(&self, today: Date) -> bool {
        self.expires.is_some_and(|last| today > last)
    }
}

/// Applies `config` to the findings on `today`: severities overridden, findings of
/// exempted Services marked (annotations marked earlier win). Returns notes: expired
/// exemptions, and exemptions that matched nothing.
pub fn apply(
    config: &AuditConfig,
    today: Date,
    state: &ClusterState,
    findings: &mut [Finding],
) -> Vec<String> {
    let mut notes = Vec::new();
    for f in findings.iter_mut() {
        if let Some(sev) = config.rules.get(&f.rule).and_then(|c| c.severity) {
            f.severity = sev;
        }
    }
    for (i, e) in config.exemptions.iter().enumerate() {
        if e.expired(today) {
            notes.push(format!(
                "exemption {} ({}) expired on {}: it no longer applies",
                i + 1,
                e.origin,
                e.expires.map(|d| d.to_string()).unwrap_or_default()
            ));
            continue;
        }
        let mut used = false;
        for f in findings
            .iter_mut()
            .filter(|f| e.covers(f.rule) && e.matches(state, f))
        {
            used = true;
            if f.suppression.is_none() {
                f.suppression = Some(Suppression {
                    kind: SuppressionKind::External,
                    source: format!("exemption {} ({})", i + 1, e.origin),
                    justification: Some(e.reason.clone()),
                });
            }
        }
        if !used {
            notes.push(format!("exemption {} ({}) matched no finding", i + 1, e.origin));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exemption(expires: Option<Date>) -> Exemption {
        Exemption {
            rules: vec![RuleId::Loc004],
            namespace: Some("monitoring".into()),
            name: None,
            match_labels: BTreeMap::new(),
            reason: "node agent".into(),
            expires,
            origin: ".locality.yaml:3".into(),
        }
    }

    #[test]
    fn an_exemption_applies_through_its_last_day_only() {
        let last = jiff::civil::date(2027, 6, 30);
        let e = exemption(Some(last));
        assert!(!e.expired(last));
        assert!(e.expired(jiff::civil::date(2027, 7, 1)));
        assert!(!exemption(None).expired(jiff::civil::date(9999, 1, 1)));
        assert!(e.covers(RuleId::Loc004) && !e.covers(RuleId::Loc001));
    }
}
