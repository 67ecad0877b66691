//! Suppressions: a team accepts a finding on purpose, and says why. The annotation
//! `locality.dev/ignore` on a Service or its Namespace lists the rules it accepts
//! (`"LOC004,LOC011"`, or `"*"` for every rule), with the reason in
//! `locality.dev/ignore-reason`. A suppressed finding is kept, marked with its
//! [`Suppression`]: it is counted apart in the totals (`suppressed`), never fails `--fail-on`,
//! and SARIF emits it with `suppressions` (kind `inSource`, the reason as `justification`).
//! Nothing is silently dropped.

use locality_model::objects::{ClusterState, ObjectMeta};
use serde::Serialize;

use crate::report::Finding;
use crate::rule::RuleId;

pub use locality_model::objects::{
    ANNOTATION_LOCALITY_IGNORE as ANNOTATION_IGNORE,
    ANNOTATION_LOCALITY_IGNORE_REASON as ANNOTATION_IGNORE_REASON,
};

/// Where a suppression comes from (SARIF's `suppression.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SuppressionKind {
    /// An annotation on the object itself (or its Namespace).
    InSource,
    /// An exemption of the configuration file (`.locality.yaml`).
    External,
}

/// Why a finding is suppressed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Suppression {
    /// Where it comes from.
    pub kind: SuppressionKind,
    /// What says so: `Service default/web annotation locality.dev/ignore`.
    pub source: String,
    /// The reason given, if any.
    pub justification: Option<String>,
}

/// The rules an `ignore` annotation value lists: `None` for `*` (every rule), else the IDs;
/// the entries that are no rule ID are returned apart.
fn parse(value: &str) -> (Option<Vec<RuleId>>, Vec<String>) {
    let mut rules = Vec::new();
    let mut unknown = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        if entry == "*" {
            return (None, unknown);
        }
        match entry.parse::<RuleId>() {
            Ok(r) => rules.push(r),
            Err(_) => unknown.push(entry.to_string()),
        }
    }
    (Some(rules), unknown)
}

/// The suppression `meta`'s annotations give `rule`, if any.
fn from_annotations(meta: &ObjectMeta, kind: &str, rule: RuleId) -> Option<Suppression> {
    let value = meta.annotations.get(ANNOTATION_IGNORE)?;
    let (rules, _) = parse(value);
    if rules.is_some_and(|r| !r.contains(&rule)) {
        return None;
    }
    let name = if meta.namespace.is_empty() {
        meta.name.clone()
    } else {
        format!("{}/{}", meta.namespace, meta.name)
    };
    Some(Suppression {
        kind: SuppressionKind::InSource,
        source: format!("{kind} {name} annotation {ANNOTATION_IGNORE}"),
        justification: meta
            .annotations
            .get(ANNOTATION_IGNORE_REASON)
            .filter(|r| !r.trim().is_empty())
            .cloned(),
    })
}

/// Marks the findings the annotations suppress (the Service's own first, then its
/// Namespace's); returns notes for annotation entries that name no rule.
pub fn apply(state: &ClusterState, findings: &mut [Finding]) -> Vec<String> {
    for f in findings.iter_mut() {
        let service = state
            .services
            .iter()
            .find(|s| s.meta.namespace == f.service.namespace && s.meta.name == f.service.name);
        let namespace = state
            .namespaces
            .iter()
            .find(|n| n.meta.name == f.service.namespace);
        f.suppression = service
            .and_then(|s| from_annotations(&s.meta, "Service", f.rule))
            .or_else(|| namespace.and_then(|n| from_annotations(&n.meta, "Namespace", f.rule)));
    }
    let metas = state
        .services
        .iter()
        .map(|s| ("Service", &s.meta))
        .chain(state.namespaces.iter().map(|n| ("Namespace", &n.meta)));
    let mut notes = Vec::new();
    for (kind, meta) in metas {
        if let Some(value) = meta.annotations.get(ANNOTATION_IGNORE) {
            let (_, unknown) = parse(value);
            if !unknown.is_empty() {
                let name = if meta.namespace.is_empty() {
                    meta.name.clone()
                } else {
                    format!("{}/{}", meta.namespace, meta.name)
                };
                notes.push(format!(
                    "{kind} {name}: annotation {ANNOTATION_IGNORE} names no rule: {} (rules are LOC001…LOC020 or *)",
                    unknown.join(", ")
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_annotation_lists_rules_or_every_rule() {
        let (rules, unknown) = parse("LOC004, loc011,LOC999");
        assert_eq!(rules, Some(vec![RuleId::Loc004, RuleId::Loc011]));
        assert_eq!(unknown, vec!["LOC999".to_string()]);
        assert_eq!(parse(" * ").0, None);
        assert_eq!(parse("").0, Some(vec![]));
    }
}
