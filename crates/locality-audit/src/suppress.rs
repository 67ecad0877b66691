//! Suppressions: a team accepts a finding on purpose, and says why. The annotation
//! `locality.dev/ignore` on a Service or its Namespace lists the rules it accepts
//! (`"LOC004,LOC011"`, or `"*"` for every rule), with the reason in
//! `locality.dev/ignore-reason`. A suppressed finding is kept, marked with its
//! [`Suppression`]: it is counted apart in the totals (`suppressed`), never fails `--fail-on`,
//! and SARIF emits it with `suppressions` (kind `inSource`, the reason as `justification`).
//! Nothing is silently dropped.

use std::collections::HashMap;

use crate::finding::Finding;
pub use crate::finding::{Suppression, SuppressionKind};
use crate::rule::RuleId;
use locality_model::objects::{ClusterState, ObjectMeta};

pub use locality_model::objects::{
    ANNOTATION_LOCALITY_IGNORE as ANNOTATION_IGNORE,
    ANNOTATION_LOCALITY_IGNORE_REASON as ANNOTATION_IGNORE_REASON,
};

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

/// `ns/name`, or `name` for a cluster-scoped object.
fn display_name(meta: &ObjectMeta) -> String {
    if meta.namespace.is_empty() {
        meta.name.clone()
    } else {
        format!("{}/{}", meta.namespace, meta.name)
    }
}

/// The suppression `meta`'s annotations give `rule`, if any.
fn from_annotations(meta: &ObjectMeta, kind: &str, rule: RuleId) -> Option<Suppression> {
    let value = meta.annotations.get(ANNOTATION_IGNORE)?;
    let (rules, _) = parse(value);
    if rules.is_some_and(|r| !r.contains(&rule)) {
        return None;
    }
    Some(Suppression {
        kind: SuppressionKind::InSource,
        source: format!("{kind} {} annotation {ANNOTATION_IGNORE}", display_name(meta)),
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
    // Only the annotated objects are indexed: without any, findings are not looked at.
    let annotated = |m: &ObjectMeta| m.annotations.contains_key(ANNOTATION_IGNORE);
    let services: HashMap<(&str, &str), &ObjectMeta> = state
        .services
        .iter()
        .map(|s| &s.meta)
        .filter(|m| annotated(m))
        .map(|m| ((m.namespace.as_str(), m.name.as_str()), m))
        .collect();
    let namespaces: HashMap<&str, &ObjectMeta> = state
        .namespaces
        .iter()
        .map(|n| &n.meta)
        .filter(|m| annotated(m))
        .map(|m| (m.name.as_str(), m))
        .collect();
    if !services.is_empty() || !namespaces.is_empty() {
        for f in findings.iter_mut() {
            let (ns, name) = (f.service.namespace.as_str(), f.service.name.as_str());
            f.suppression = services
                .get(&(ns, name))
                .and_then(|m| from_annotations(m, "Service", f.rule))
                .or_else(|| {
                    namespaces
                        .get(ns)
                        .and_then(|m| from_annotations(m, "Namespace", f.rule))
                });
        }
    }
    let metas = services
        .values()
        .map(|m| ("Service", *m))
        .chain(namespaces.values().map(|m| ("Namespace", *m)));
    let mut notes = Vec::new();
    for (kind, meta) in metas {
        let (_, unknown) = parse(&meta.annotations[ANNOTATION_IGNORE]);
        if !unknown.is_empty() {
            notes.push(format!(
                "{kind} {}: annotation {ANNOTATION_IGNORE} names no rule: {} (rules are LOC001…LOC021 or *)",
                display_name(meta),
                unknown.join(", ")
            ));
        }
    }
    notes.sort();
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
