//! `locality audit rules`: the rule catalogue, from the rules' own table
//! (`locality_audit::RuleId`), so the list can never differ from what `audit` runs.

use std::io::Write;

use locality_audit::RuleId;

use crate::cli::AuditRulesOutput;
use crate::error::{CliError, EXIT_OK};

/// Prints every rule in ID order.
pub fn list(output: AuditRulesOutput, out: &mut dyn Write) -> Result<u8, CliError> {
    let text = match output {
        AuditRulesOutput::Text => text(),
        AuditRulesOutput::Json => {
            let rules: Vec<serde_json::Value> = RuleId::ALL
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.as_str(),
                        "severity": r.default_severity().as_str(),
                        "title": r.title(),
                        "fix": r.fix(),
                        "docs": r.docs_url(),
                    })
                })
                .collect();
            serde_json::to_string_pretty(&rules).map_err(|e| CliError::runtime(e.to_string()))? + "\n"
        }
    };
    out.write_all(text.as_bytes())
        .map_err(|e| CliError::writing("the rules", &e))?;
    Ok(EXIT_OK)
}

/// One block per rule: `ID  severity  title`, then the fix and the page, indented.
fn text() -> String {
    let mut s = String::new();
    for r in RuleId::ALL {
        s.push_str(&format!(
            "{}  {:<7}  {}\n        fix:  {}\n        docs: {}\n",
            r.as_str(),
            r.default_severity().as_str(),
            r.title(),
            r.fix(),
            r.docs_url()
        ));
    }
    s.push_str(&format!(
        "\n{} rules. Run some with `locality audit --rule ID,…`, skip some with --skip-rule; severities and exemptions per team in .locality.yaml.\n",
        RuleId::ALL.len()
    ));
    s
}
