//! `audit -o table`: the findings for people, grouped by severity (errors first) and rule,
//! readable at 80 columns (messages are wrapped; only an unbreakable word such as a URL may
//! overflow), then the per-Service summary, the skipped rules and the notes.

use std::fmt::Write as _;
use std::io::{self, Write};

use locality_audit::{AuditReport, Finding, RuleId, ServiceSummary, Severity};

use crate::display::{pad, term};
use crate::header::ReportHeader;
use crate::style::Paint;

use super::{
    context_line, is_notable, nodes_text, object_text, policy_text, port_family_text, port_text,
    service_text, totals_text, wrap,
};

/// Target width of the table output.
pub const WIDTH: usize = 80;

/// At most this many nodes are named per finding (the JSON lists more).
const NODES_SHOWN: usize = 10;

/// At most this many objects are named per finding.
const OBJECTS_SHOWN: usize = 6;

/// Writes the report as text for a terminal: the [header](crate::header), then the
/// findings; severities are coloured when `paint` is on.
pub fn write_table(
    report: &AuditReport,
    header: &ReportHeader,
    paint: Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
    crate::header::write_text(header, paint, out)?;
    let mut text = String::new();
    let _ = writeln!(text, "locality audit: {}", totals_text(report));
    for l in wrap(&context_line(report), WIDTH, "", "  ") {
        let _ = writeln!(text, "{l}");
    }
    super::grouped::write(&mut text, report, WIDTH);
    for severity in Severity::ALL {
        let findings: Vec<&Finding> = report.active().filter(|f| f.severity == severity).collect();
        if findings.is_empty() {
            continue;
        }
        let heading = format!(
            "{} ({})",
            super::severity_heading(severity).to_uppercase(),
            findings.len()
        );
        let _ = writeln!(
            text,
            "\n{}\n{}",
            paint.severity(severity, &heading),
            "─".repeat(heading.chars().count())
        );
        let mut rule: Option<RuleId> = None;
        for f in findings {
            if rule != Some(f.rule) {
                rule = Some(f.rule);
                text.push('\n');
                let first = format!("{}  ", f.rule.as_str());
                for (i, l) in wrap(f.title, WIDTH, &first, "        ").iter().enumerate() {
                    match l.strip_prefix(f.rule.as_str()).filter(|_| i == 0) {
                        Some(rest) => {
                            let _ = writeln!(text, "{}{rest}", paint.severity(severity, f.rule.as_str()));
                        }
                        None => {
                            let _ = writeln!(text, "{l}");
                        }
                    }
                }
                // A URL cannot be wrapped: indent it with the title when it fits.
                let indent = if 8 + f.docs_url.len() <= WIDTH { 8 } else { 0 };
                let _ = writeln!(text, "{:indent$}{}", "", f.docs_url);
            }
            finding(&mut text, f);
        }
    }
    if report.active().next().is_none() {
        let _ = writeln!(text, "\nNo findings.");
    }
    let suppressed = super::suppressed_lines(report);
    if !suppressed.is_empty() {
        let heading = format!("SUPPRESSED ({})", suppressed.len());
        let _ = writeln!(text, "\n{heading}\n{}", "─".repeat(heading.chars().count()));
        for l in &suppressed {
            for w in wrap(l, WIDTH, "  ", "    ") {
                let _ = writeln!(text, "{w}");
            }
        }
    }
    services(&mut text, report);
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(text, "\nSKIPPED RULES (the input lacks what they need)");
        for s in &report.skipped_rules {
            let first = format!("  {}  ", s.rule.as_str());
            for l in wrap(&s.reason, WIDTH, &first, "          ") {
                let _ = writeln!(text, "{l}");
            }
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(text, "\nNOTES");
        for n in &report.notes {
            for l in wrap(n, WIDTH, "  - ", "    ") {
                let _ = writeln!(text, "{l}");
            }
        }
    }
    let _ = writeln!(
        text,
        "\n{} run, {} skipped.",
        crate::header::plural(report.rules.len() as u64, "rule", "rules"),
        report.skipped_rules.len()
    );
    crate::display::Terminal::new(out).write_all(text.as_bytes())
}

fn para(text: &mut String, label: &str, body: &str) {
    let (first, rest) = if label.is_empty() {
        ("    ".to_string(), "    ")
    } else {
        (format!("    {label} "), "      ")
    };
    for l in wrap(body, WIDTH, &first, rest) {
        let _ = writeln!(text, "{l}");
    }
}

fn finding(text: &mut String, f: &Finding) {
    let target = port_family_text(f);
    let head = if target.is_empty() {
        format!("  - {}", service_text(f))
    } else {
        format!("  - {}  {}", service_text(f), target)
    };
    for l in wrap(&head, WIDTH, "", "      ") {
        let _ = writeln!(text, "{l}");
    }
    para(text, "", &f.message);
    if f.node_count > 0 {
        let label = format!(
            "Nodes ({}, {} pod{}):",
            f.node_count,
            f.pod_count,
            if f.pod_count == 1 { "" } else { "s" }
        );
        // Break lines between nodes only, never inside `name (N pods)`.
        let glued = nodes_text(f, NODES_SHOWN)
            .replace(", ", ",\u{e000}")
            .replace(' ', "\u{e001}");
        let glued = glued.replace('\u{e000}', " ");
        let first = format!("    {label} ");
        for l in wrap(&glued, WIDTH, &first, "      ") {
            let _ = writeln!(text, "{}", l.replace('\u{e001}', " "));
        }
    }
    // The Service itself is in the heading: list the other objects.
    let others: Vec<String> = f
        .objects
        .iter()
        .filter(|o| !(o.kind == "Service" && o.namespace == f.service.namespace && o.name == f.service.name))
        .map(object_text)
        .collect();
    if !others.is_empty() {
        let mut body = others
            .iter()
            .take(OBJECTS_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if others.len() > OBJECTS_SHOWN {
            let _ = write!(body, " and {} more", others.len() - OBJECTS_SHOWN);
        }
        para(text, "Objects:", &body);
    }
    para(text, "Fix:", &f.fix);
}

/// One printed row of the summary: a label and, unless it is a note line, the counts.
struct Row {
    label: String,
    counts: Option<[usize; 5]>,
    findings: String,
}

fn services(text: &mut String, report: &AuditReport) {
    let notable: Vec<&ServiceSummary> = report.services.iter().filter(|s| is_notable(s)).collect();
    let others = report.services.len() - notable.len();
    let _ = writeln!(text, "\nSERVICES (nodes per verdict for pods → cluster IP)");
    let two_families = report
        .services
        .iter()
        .any(|s| s.ip_family != locality_model::objects::IpFamily::IPv4);
    let mut rows: Vec<Row> = Vec::new();
    for s in &notable {
        let mut label = format!(
            "{}/{} {}",
            s.service.namespace,
            s.service.name,
            port_text(&s.port)
        );
        if two_families {
            let _ = write!(label, " {}", s.ip_family.as_str());
        }
        rows.push(Row {
            label,
            counts: Some([
                s.delivered,
                s.dropped,
                s.rejected,
                s.not_proxied,
                s.mode_dependent,
            ]),
            findings: s.findings.to_string(),
        });
        rows.push(Row {
            label: format!("    {}", policy_text(s).replace(',', ", ")),
            counts: None,
            findings: String::new(),
        });
        for e in &s.external {
            if e.dropped + e.rejected + e.mode_dependent == 0 && s.external_traffic_policy != Some("Local") {
                continue;
            }
            rows.push(Row {
                label: format!("    {}→{}", e.source.as_str(), e.destination.as_str()),
                counts: Some([
                    e.delivered,
                    e.dropped,
                    e.rejected,
                    e.not_proxied,
                    e.mode_dependent,
                ]),
                findings: String::new(),
            });
        }
    }
    if !rows.is_empty() {
        let counted = || rows.iter().filter_map(|r| r.counts);
        let show_np = counted().any(|c| c[3] > 0);
        let show_md = counted().any(|c| c[4] > 0);
        let mut columns: Vec<(&str, usize)> = vec![("DELIVER", 0), ("DROP", 1), ("REJECT", 2)];
        if show_np {
            columns.push(("NOT-PROXIED", 3));
        }
        if show_md {
            columns.push(("MODE-DEP", 4));
        }
        let mut widths: Vec<usize> = columns
            .iter()
            .map(|(h, i)| {
                counted()
                    .map(|c| c[*i].to_string().len())
                    .max()
                    .unwrap_or(0)
                    .max(h.len())
            })
            .collect();
        let fw = rows
            .iter()
            .map(|r| r.findings.len())
            .max()
            .unwrap_or(0)
            .max("FINDINGS".len());
        widths.push(fw);
        let numbers_width: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
        let label_width = WIDTH.saturating_sub(numbers_width + 2).max(10);
        let numbers = |cells: &[String]| -> String {
            let mut l = String::new();
            for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
                if i > 0 {
                    l.push_str("  ");
                }
                l.push_str(&crate::display::pad_left(c, *w));
            }
            l
        };
        let mut header: Vec<String> = columns.iter().map(|(h, _)| h.to_string()).collect();
        header.push("FINDINGS".to_string());
        let _ = writeln!(text, "{}  {}", pad("SERVICE PORT", label_width), numbers(&header));
        for r in &rows {
            let Some(c) = r.counts else {
                for l in wrap(&r.label, WIDTH, "    ", "      ") {
                    let _ = writeln!(text, "{l}");
                }
                continue;
            };
            let mut cells: Vec<String> = columns.iter().map(|(_, i)| c[*i].to_string()).collect();
            cells.push(r.findings.clone());
            let nums = numbers(&cells);
            let label = term(&r.label);
            if label.chars().count() > label_width {
                let _ = writeln!(text, "{label}");
                let _ = writeln!(text, "{}  {}", pad("", label_width), nums.trim_end());
            } else {
                let line = format!("{}  {}", pad(&label, label_width), nums);
                let _ = writeln!(text, "{}", line.trim_end());
            }
        }
    }
    if others > 0 || rows.is_empty() {
        let line = format!(
            "{} {}service port{} with no Local policy, no finding and no node that drops or rejects (-o json lists every service port).",
            others,
            if rows.is_empty() { "" } else { "other " },
            if others == 1 { "" } else { "s" },
        );
        for l in wrap(&line, WIDTH, "", "") {
            let _ = writeln!(text, "{l}");
        }
    }
}
