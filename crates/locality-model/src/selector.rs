//! Label selection: Service selectors (`map[string]string`) and `metav1.LabelSelector`.

use crate::objects::{LabelSelector, Labels, SelectorRequirement};

/// True when every `key=value` of a Service selector is in `labels`.
///
/// An empty selector selects nothing for a Service: upstream
/// (`endpointslice_controller.go` `syncService`) skips Services with a nil selector, and
/// `labels.Set(map).AsSelectorPreValidated()` of an empty map selects everything; the
/// controller only ever sees non-empty selectors because the API server keeps `{}` as nil.
/// We follow the observable behaviour: an empty selector selects nothing.
pub fn service_selects(selector: &Labels, labels: &Labels) -> bool {
    !selector.is_empty() && selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// One requirement of a `matchExpressions` list against a label set.
pub fn requirement_matches(req: &SelectorRequirement, labels: &Labels) -> bool {
    let value = labels.get(&req.key);
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| req.values.contains(v)),
        "NotIn" => value.is_none_or(|v| !req.values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (value, req.values.first()) else {
                return false;
            };
            match (v.parse::<i64>(), bound.parse::<i64>()) {
                (Ok(v), Ok(b)) if req.operator == "Gt" => v > b,
                (Ok(v), Ok(b)) => v < b,
                _ => false,
            }
        }
        _ => false,
    }
}

impl LabelSelector {
    /// `metav1.LabelSelector` semantics: `matchLabels` and `matchExpressions` ANDed; an
    /// empty selector matches everything.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self
                .match_expressions
                .iter()
                .all(|r| requirement_matches(r, labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn service_selector_is_subset_match() {
        let sel = labels(&[("app", "web")]);
        assert!(service_selects(&sel, &labels(&[("app", "web"), ("tier", "x")])));
        assert!(!service_selects(&sel, &labels(&[("app", "db")])));
        assert!(!service_selects(&labels(&[]), &labels(&[("app", "web")])));
    }

    #[test]
    fn expressions() {
        let l = labels(&[("app", "web"), ("n", "5")]);
        let req = |k: &str, op: &str, v: &[&str]| SelectorRequirement {
            key: k.into(),
            operator: op.into(),
            values: v.iter().map(|s| s.to_string()).collect(),
        };
        assert!(requirement_matches(&req("app", "In", &["web", "x"]), &l));
        assert!(!requirement_matches(&req("app", "NotIn", &["web"]), &l));
        assert!(requirement_matches(&req("zz", "NotIn", &["web"]), &l));
        assert!(requirement_matches(&req("app", "Exists", &[]), &l));
        assert!(requirement_matches(&req("zz", "DoesNotExist", &[]), &l));
        assert!(requirement_matches(&req("n", "Gt", &["4"]), &l));
        assert!(!requirement_matches(&req("n", "Lt", &["4"]), &l));
        assert!(!requirement_matches(&req("app", "Bogus", &[]), &l));
    }
}
