//! `.locality.yaml`: the team's audit configuration, found upward from the working directory
//! (or named with `--config`), read and validated here; errors name the file and line. The
//! typed result is [`locality_audit::config::AuditConfig`].
//!
//! ```yaml
//! rules:
//!   LOC011: {severity: info}        # or {enabled: false}
//! exemptions:
//!   - rules: [LOC004]               # or ["*"]
//!     namespace: monitoring
//!     name: node-agent              # or selector: {matchLabels: {team: obs}}
//!     reason: node agent; callers tolerate short outages   # required
//!     expires: 2027-06-30           # optional: the last day it applies
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use locality_audit::config::{AuditConfig, Exemption, RuleConfig};
use locality_audit::{RuleId, Severity};
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::error::CliError;

/// The file name looked for.
pub const FILE_NAME: &str = ".locality.yaml";

/// A configuration file larger than this is refused.
const MAX_BYTES: u64 = 1 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    rules: BTreeMap<String, Spanned<RawRule>>,
    #[serde(default)]
    exemptions: Vec<Spanned<RawExemption>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    severity: Option<String>,
    enabled: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExemption {
    rules: Vec<String>,
    namespace: Option<String>,
    name: Option<String>,
    selector: Option<RawSelector>,
    reason: Option<String>,
    expires: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawSelector {
    #[serde(default)]
    match_labels: BTreeMap<String, String>,
}

/// The nearest `.locality.yaml` in `start` or one of its parents.
pub fn find(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|d| d.join(FILE_NAME)).find(|p| p.is_file())
}

/// Reads and validates the configuration at `path`.
pub fn load(path: &Path) -> Result<AuditConfig, CliError> {
    let shown = path.display().to_string();
    let err = |line: Option<u32>, what: String| {
        CliError::usage(match line {
            Some(l) => format!("{shown}:{l}: {what}"),
            None => format!("{shown}: {what}"),
        })
    };
    let bytes = crate::files::read_regular(path, MAX_BYTES).map_err(|e| err(None, e))?;
    let text = String::from_utf8(bytes).map_err(|_| err(None, "not UTF-8 text".into()))?;
    parse(&text, &shown)
}

/// Parses configuration text read from `shown` (the name errors give).
pub fn parse(text: &str, shown: &str) -> Result<AuditConfig, CliError> {
    let err = |line: u64, what: String| CliError::usage(format!("{shown}:{line}: {what}"));
    if text.trim().is_empty() {
        return Ok(AuditConfig {
            source: Some(shown.to_string()),
            ..AuditConfig::default()
        });
    }
    let raw: RawConfig =
        serde_saphyr::from_str(text).map_err(|e| CliError::usage(format!("{shown}: {e}")))?;
    let mut config = AuditConfig {
        source: Some(shown.to_string()),
        ..AuditConfig::default()
    };
    for (id, spanned) in raw.rules {
        let line = spanned.referenced.line();
        let rule: RuleId = id
            .parse()
            .map_err(|_| err(line, format!("rules: {id:?} is not a rule ID (LOC001…LOC021)")))?;
        let severity = match &spanned.value.severity {
            Some(s) => Some(s.parse::<Severity>().map_err(|_| {
                err(
                    line,
                    format!("rules.{id}.severity: {s:?} is not error, warning or info"),
                )
            })?),
            None => None,
        };
        config.rules.insert(
            rule,
            RuleConfig {
                severity,
                enabled: spanned.value.enabled,
            },
        );
    }
    for (i, spanned) in raw.exemptions.into_iter().enumerate() {
        let line = spanned.referenced.line();
        let e = spanned.value;
        let at = format!("exemptions[{i}]");
        let mut rules = Vec::new();
        for r in &e.rules {
            if r.trim() == "*" {
                rules.clear();
                break;
            }
            rules.push(
                r.parse::<RuleId>()
                    .map_err(|_| err(line, format!("{at}.rules: {r:?} is not a rule ID or *")))?,
            );
        }
        if e.rules.is_empty() {
            return Err(err(
                line,
                format!("{at}.rules: list the rules it covers, or [\"*\"]"),
            ));
        }
        let reason = e.reason.filter(|r| !r.trim().is_empty()).ok_or_else(|| {
            err(
                line,
                format!("{at}.reason is required: say why the finding is accepted"),
            )
        })?;
        let expires = match &e.expires {
            Some(d) => Some(
                d.parse::<jiff::civil::Date>()
                    .map_err(|_| err(line, format!("{at}.expires: {d:?} is not a date (YYYY-MM-DD)")))?,
            ),
            None => None,
        };
        config.exemptions.push(Exemption {
            rules,
            namespace: e.namespace,
            name: e.name,
            match_labels: e.selector.map(|s| s.match_labels).unwrap_or_default(),
            reason,
            expires,
            origin: format!("{shown}:{line}"),
        });
    }
    Ok(config)
}

/// The configuration for a run: `--config FILE`, else the nearest `.locality.yaml` upward
/// from the working directory, else none.
pub fn resolve(explicit: Option<&Path>) -> Result<AuditConfig, CliError> {
    match explicit {
        Some(p) => load(p),
        None => match std::env::current_dir().ok().and_then(|d| find(&d)) {
            Some(p) => load(&p),
            None => Ok(AuditConfig::default()),
        },
    }
}

/// Today in UTC, for exemptions' expiry ([`crate::clock`]: `SOURCE_DATE_EPOCH` fixes it).
pub fn today() -> jiff::civil::Date {
    crate::clock::today()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_line() {
        let text = "rules:\n  LOC011: {severity: info}\nexemptions:\n  - rules: [LOC004]\n    namespace: monitoring\n";
        let e = parse(text, ".locality.yaml").unwrap_err().to_string();
        assert!(
            e.contains(".locality.yaml:4:") && e.contains("reason is required"),
            "{e}"
        );
        let e = parse("rules:\n  LOC99: {enabled: false}\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.yaml:2:") && e.contains("LOC99"), "{e}");
        let e = parse(
            "exemptions:\n  - rules: ['*']\n    reason: r\n    expires: soon\n",
            "c.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("expires") && e.contains("c.yaml:2:"), "{e}");
        let e = parse("rulez: {}\n", "c.yaml").unwrap_err().to_string();
        assert!(e.contains("rulez"), "{e}");
    }

    #[test]
    fn a_valid_file_is_typed() {
        let text = "rules:\n  loc011: {severity: info}\n  LOC004: {enabled: false}\nexemptions:\n  - rules: ['*']\n    selector: {matchLabels: {team: obs}}\n    reason: agents\n    expires: 2027-06-30\n";
        let c = parse(text, "c.yaml").unwrap();
        assert_eq!(c.rules[&RuleId::Loc011].severity, Some(Severity::Info));
        assert_eq!(c.disabled().collect::<Vec<_>>(), [RuleId::Loc004]);
        let e = &c.exemptions[0];
        assert!(e.rules.is_empty());
        assert_eq!(e.match_labels["team"], "obs");
        assert_eq!(e.expires, Some(jiff::civil::date(2027, 6, 30)));
        assert_eq!(e.origin, "c.yaml:5");
    }
}
