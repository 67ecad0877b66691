//! `audit -o markdown`: the report as GitHub-flavoured Markdown (a pull-request comment or a
//! CI job summary): totals, a findings table, one section per finding, the per-Service
//! summary, skipped rules and notes. Text from the input is escaped.

use std::fmt::Write as _;
use std::io::{self, Write};

use locality_audit::{AuditReport, Finding, Severity};

use super::{
    context_line, is_notable, nodes_text, object_text, policy_text, port_family_text, port_text,
    service_text, totals_text,
};

/// At most this many nodes are named per finding.
const NODES_SHOWN: usize = 20;

/// Escapes text for Markdown (inline text and table cells): [`crate::display::markdown`].
pub(crate) fn escape(text: &str) -> String {
    crate::display::markdown(text)
}

fn icon(s: Severity) -> &'static str {
    match s {
        Severity::Error => "🔴 error",
        Severity::Warning => "🟠 warning",
        Severity::Info => "🔵 info",
    }
}

/// Writes the report as Markdown, its [header](crate::header) first.
pub fn write_markdown(
    report: &AuditReport,
    header: &crate::header::ReportHeader,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "# Locality audit\n");
    let _ = writeln!(md, "{}", crate::header::markdown(header, escape));
    let _ = writeln!(md, "**{}**  ", escape(&totals_text(report)));
    let _ = writeln!(md, "{}", escape(&context_line(report)));
    let active: Vec<&Finding> = report.active().collect();
    if !active.is_empty() {
        let _ = writeln!(md, "\n## Findings\n");
        let _ = writeln!(md, "| Severity | Rule | Service | Port | Nodes | Finding |");
        let _ = writeln!(md, "|---|---|---|---|---:|---|");
        for (i, f) in active.iter().enumerate() {
            let _ = writeln!(
                md,
                "| {} | [{}]({}) | {} | {} | {} | [{}](#finding-{}) |",
                icon(f.severity),
                f.rule.as_str(),
                f.docs_url,
                escape(&service_text(f)),
                escape(&port_family_text(f)),
                f.node_count,
                escape(f.title),
                i + 1
            );
        }
        for (i, f) in active.iter().enumerate() {
            let target = port_family_text(f);
            let _ = writeln!(
                md,
                "\n<a id=\"finding-{}\"></a>\n### {}. {} {} · {}{}\n",
                i + 1,
                i + 1,
                f.rule.as_str(),
                f.severity.as_str(),
                escape(&service_text(f)),
                if target.is_empty() {
                    String::new()
                } else {
                    format!(" {}", escape(&target))
                }
            );
            let _ = writeln!(md, "{}\n", escape(&f.message));
            if f.node_count > 0 {
                let _ = writeln!(
                    md,
                    "- **Nodes** ({}, {} pod{}): {}",
                    f.node_count,
                    f.pod_count,
                    if f.pod_count == 1 { "" } else { "s" },
                    escape(&nodes_text(f, NODES_SHOWN))
                );
            }
            if !f.objects.is_empty() {
                let objects: Vec<String> = f.objects.iter().map(|o| escape(&object_text(o))).collect();
                let _ = writeln!(md, "- **Objects**: {}", objects.join(", "));
            }
            let _ = writeln!(md, "- **Fix**: {}", escape(&f.fix));
            let _ = writeln!(md, "- **Docs**: <{}>", f.docs_url);
        }
    } else {
        let _ = writeln!(md, "\nNo findings.");
    }
    let suppressed = super::suppressed_lines(report);
    if !suppressed.is_empty() {
        let _ = writeln!(md, "\n## Suppressed ({})\n", suppressed.len());
        for l in &suppressed {
            let _ = writeln!(md, "- {}", escape(l));
        }
    }
    let notable: Vec<_> = report.services.iter().filter(|s| is_notable(s)).collect();
    let _ = writeln!(md, "\n## Services\n");
    if !notable.is_empty() {
        let _ = writeln!(
            md,
            "Nodes per verdict for pods → cluster IP (and external routes that drop).\n"
        );
        let _ = writeln!(
            md,
            "| Service | Port | Family | Policy | Route | Delivered | Dropped | Rejected | Findings |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---:|---:|---:|---:|");
        for s in &notable {
            let _ = writeln!(
                md,
                "| {}/{} | {} | {} | {} | pod→clusterIP | {} | {} | {} | {} |",
                escape(&s.service.namespace),
                escape(&s.service.name),
                escape(&port_text(&s.port)),
                s.ip_family.as_str(),
                escape(&policy_text(s)),
                s.delivered,
                s.dropped,
                s.rejected,
                s.findings
            );
            for e in &s.external {
                if e.dropped + e.rejected + e.mode_dependent == 0
                    && s.external_traffic_policy != Some("Local")
                {
                    continue;
                }
                let _ = writeln!(
                    md,
                    "| | | | | {}→{} | {} | {} | {} | |",
                    e.source.as_str(),
                    e.destination.as_str(),
                    e.delivered,
                    e.dropped,
                    e.rejected
                );
            }
        }
    }
    let others = report.services.len() - notable.len();
    if others > 0 || notable.is_empty() {
        let _ = writeln!(
            md,
            "\n{} {}service port{} with no Local policy, no finding and no node that drops or rejects.",
            others,
            if notable.is_empty() { "" } else { "other " },
            if others == 1 { "" } else { "s" }
        );
    }
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(md, "\n## Skipped rules\n");
        for s in &report.skipped_rules {
            let _ = writeln!(md, "- **{}**: {}", s.rule.as_str(), escape(&s.reason));
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(md, "\n## Notes\n");
        for n in &report.notes {
            let _ = writeln!(md, "- {}", escape(n));
        }
    }
    out.write_all(md.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markdown_syntax() {
        assert_eq!(escape("a|b *c* <d>"), "a\\|b \\*c\\* \\<d\\>");
        assert_eq!(escape("plain text"), "plain text");
    }
}
