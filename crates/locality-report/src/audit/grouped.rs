//! The table's opening section: one line per blind Service and root cause
//! ([`locality_audit::causes::group`]), the clients there by owner, the findings it stands
//! for, and the confidence with every assumption ending in the flag that states it.

use std::fmt::Write as _;

use locality_audit::AuditReport;

use super::wrap;

/// At most this many blind nodes are named on a Service's line.
const BLIND_NAMED: usize = 5;

/// One line per Service and root cause, first: the answer before the findings that show it
/// ([`locality_audit::causes::group`]).
pub(crate) fn write(text: &mut String, report: &AuditReport, width: usize) {
    let groups = locality_audit::causes::group(report);
    if groups.is_empty() {
        return;
    }
    let heading = "BLIND SERVICES (one line per Service and cause; the findings follow)";
    let _ = writeln!(text, "\n{heading}");
    for g in &groups {
        let mut names: Vec<&str> = g.nodes.iter().map(String::as_str).take(BLIND_NAMED).collect();
        if g.blind > names.len() {
            names.push("…");
        }
        let line = format!(
            "{}/{} ITP=Local blind on {}/{} nodes ({}): {} → {}",
            g.service.namespace,
            g.service.name,
            g.blind,
            g.client_nodes,
            names.join(", "),
            g.cause,
            g.fix
        );
        let _ = writeln!(text);
        for l in wrap(&line, width, "", "    ") {
            let _ = writeln!(text, "{l}");
        }
        let clients: Vec<String> = g
            .clients
            .iter()
            .map(|(owner, pods)| format!("{owner} ({})", crate::header::plural(*pods as u64, "pod", "pods")))
            .collect();
        let findings: Vec<String> = g
            .findings
            .iter()
            .map(|(rule, n)| {
                if *n == 1 {
                    rule.as_str().to_string()
                } else {
                    format!("{} ×{n}", rule.as_str())
                }
            })
            .collect();
        let detail = format!(
            "clients there: {}; findings: {}",
            if clients.is_empty() {
                "none".to_string()
            } else {
                clients.join(", ")
            },
            findings.join(", ")
        );
        for l in wrap(&detail, width, "    ", "      ") {
            let _ = writeln!(text, "{l}");
        }
        if let Some(line) = confidence_line(g) {
            for l in wrap(&line, width, "    ", "      ") {
                let _ = writeln!(text, "{l}");
            }
        }
    }
}

/// `confidence: inferred (assumed: proxy-mode; to state it: --proxy-mode)`: what the line
/// rests on, every assumption ending with the flag that states it (the facts are named as
/// the flags are). `None` without a confidence.
fn confidence_line(g: &locality_audit::causes::BlindService) -> Option<String> {
    let c = g.confidence?;
    let facts: Vec<&str> = g.missing_facts.iter().map(|f| f.as_str()).collect();
    if facts.is_empty() {
        return Some(format!("confidence: {}", c.as_str()));
    }
    let flags: Vec<String> = facts.iter().map(|f| format!("--{f}")).collect();
    Some(format!(
        "confidence: {} (assumed: {}; to state it: {})",
        c.as_str(),
        facts.join(", "),
        flags.join(" ")
    ))
}
