//! `labelSelector` and `fieldSelector` query parameters, parsed as the API server parses them.

use locality_model::objects::{LabelSelector, Labels, SelectorRequirement};

use crate::status::ApiError;

/// Parses a `labelSelector` (`a=b,c!=d,e in (x,y),f notin (z),g,!h`).
pub fn parse_label_selector(s: &str) -> Result<LabelSelector, ApiError> {
    let mut sel = LabelSelector::default();
    for part in split_top_level(s) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let bad = |why: &str| ApiError::bad_request(format!("unable to parse requirement: {why}: {part:?}"));
        let req = if let Some(key) = part.strip_prefix('!') {
            check_key(key.trim()).map_err(|w| bad(&w))?;
            SelectorRequirement {
                key: key.trim().into(),
                operator: "DoesNotExist".into(),
                values: Vec::new(),
            }
        } else if let Some((k, v)) = part.split_once("!=") {
            requirement(k, "NotIn", vec![v.trim().to_string()]).map_err(|w| bad(&w))?
        } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            requirement(k, "In", vec![v.trim().to_string()]).map_err(|w| bad(&w))?
        } else if let Some((k, op, rest)) = set_based(part) {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| bad("expected a parenthesised list of values"))?;
            let values = inner.split(',').map(|v| v.trim().to_string()).collect();
            requirement(k, op, values).map_err(|w| bad(&w))?
        } else {
            check_key(part).map_err(|w| bad(&w))?;
            SelectorRequirement {
                key: part.into(),
                operator: "Exists".into(),
                values: Vec::new(),
            }
        };
        if req.operator == "In" && req.values.len() == 1 {
            sel.match_labels.insert(req.key, req.values[0].clone());
        } else {
            sel.match_expressions.push(req);
        }
    }
    Ok(sel)
}

fn set_based(part: &str) -> Option<(&str, &'static str, &str)> {
    let (key, rest) = part.split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    if let Some(r) = rest.strip_prefix("notin") {
        Some((key, "NotIn", r))
    } else {
        rest.strip_prefix("in").map(|r| (key, "In", r))
    }
}

fn requirement(key: &str, op: &str, values: Vec<String>) -> Result<SelectorRequirement, String> {
    let key = key.trim();
    check_key(key)?;
    for v in &values {
        check_value(v)?;
    }
    Ok(SelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values,
    })
}

fn check_key(key: &str) -> Result<(), String> {
    let ok = !key.is_empty()
        && key.len() <= 317
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok {
        Ok(())
    } else {
        Err(format!("invalid label key {key:?}"))
    }
}

fn check_value(v: &str) -> Result<(), String> {
    let ok = v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!("invalid label value {v:?}"))
    }
}

/// Splits at commas outside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// True when `labels` match (an empty selector matches everything).
pub fn label_matches(sel: &LabelSelector, labels: &Labels) -> bool {
    sel.matches(labels)
}

/// One `fieldSelector` term: field, equality, value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTerm {
    /// `metadata.name`, `spec.nodeName`…
    pub field: String,
    /// `=`/`==` (true) or `!=` (false).
    pub equal: bool,
    /// The value.
    pub value: String,
}

/// Parses a `fieldSelector`, checking each field against those `supported` for the kind.
pub fn parse_field_selector(s: &str, supported: &[&str], plural: &str) -> Result<Vec<FieldTerm>, ApiError> {
    let mut terms = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
            (f, false, v)
        } else if let Some((f, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            (f, true, v)
        } else {
            return Err(ApiError::bad_request(format!(
                "invalid selector: '{s}'; can't understand '{part}'"
            )));
        };
        let field = field.trim();
        if !supported.contains(&field) {
            return Err(ApiError::bad_request(format!(
                "field label not supported: {field} (simulated API, {plural} support {})",
                supported.join(", ")
            )));
        }
        terms.push(FieldTerm {
            field: field.to_string(),
            equal,
            value: value.trim().to_string(),
        });
    }
    Ok(terms)
}

/// True when every term holds, `get` giving a field's value.
pub fn fields_match(terms: &[FieldTerm], get: impl Fn(&str) -> String) -> bool {
    terms.iter().all(|t| (get(&t.field) == t.value) == t.equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_selectors() {
        let s = parse_label_selector("app=web,tier!=db,zone in (a, b),!legacy,env").unwrap();
        assert!(s.matches(&l(&[("app", "web"), ("zone", "a"), ("env", "x")])));
        assert!(!s.matches(&l(&[("app", "web"), ("zone", "c"), ("env", "x")])));
        assert!(!s.matches(&l(&[("app", "web"), ("zone", "a"), ("env", "x"), ("legacy", "")])));
        assert!(!s.matches(&l(&[("app", "web"), ("zone", "a"), ("env", "x"), ("tier", "db")])));
        let s = parse_label_selector("k notin (x)").unwrap();
        assert!(s.matches(&l(&[])));
        assert!(parse_label_selector("a=(b").is_err());
        assert!(parse_label_selector("a b c").is_err());
        assert!(parse_label_selector("").unwrap().matches(&l(&[])));
    }

    #[test]
    fn field_selectors() {
        let t = parse_field_selector(
            "metadata.name=x,spec.nodeName!=",
            &["metadata.name", "spec.nodeName"],
            "pods",
        )
        .unwrap();
        assert!(fields_match(&t, |f| if f == "metadata.name" {
            "x".into()
        } else {
            "n".into()
        }));
        assert_eq!(
            parse_field_selector("spec.foo=1", &["metadata.name"], "pods")
                .unwrap_err()
                .code,
            400
        );
        assert_eq!(
            parse_field_selector("nonsense", &["metadata.name"], "pods")
                .unwrap_err()
                .code,
            400
        );
    }
}
