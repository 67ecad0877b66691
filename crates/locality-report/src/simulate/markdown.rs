//! The `SimulationReport` as Markdown, for a pull request: the notice, the comparison table,
//! each alternative's outcome and drop windows, and the assumptions.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::text::{COMPARISON_HEADERS, comparison_rows, outcome_text};
use super::{SimulationReport, percent, secs};

/// Escapes text for a Markdown table cell or line: [`crate::display::markdown`].
fn esc(s: &str) -> String {
    crate::display::markdown(s)
}

/// Writes the report as Markdown.
pub fn write_markdown(r: &SimulationReport, out: &mut dyn Write) -> io::Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "## locality simulate\n");
    let _ = writeln!(md, "> **{}**\n", esc(super::NOTICE));
    md.push_str(&crate::header::markdown(&r.header, esc));
    md.push('\n');
    let _ = writeln!(md, "| {} |", COMPARISON_HEADERS.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(COMPARISON_HEADERS.len()));
    for row in comparison_rows(r) {
        let cells: Vec<String> = row.iter().map(|c| esc(c)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    for a in &r.alternatives {
        let what: Vec<String> = a.changes.iter().map(|c| esc(&c.description)).collect();
        let _ = writeln!(md, "\n### {}\n", esc(&a.name));
        let _ = writeln!(md, "{}  ", what.join("; "));
        for p in &a.prepared {
            let _ = writeln!(md, "first: {}  ", esc(&p.description));
        }
        let _ = writeln!(
            md,
            "{} after {} s of virtual time.\n",
            if a.settled {
                "Settled"
            } else {
                "Did **not** settle"
            },
            secs(a.duration_seconds)
        );
        if let Some(line) = super::text::pod_events_line(a) {
            let _ = writeln!(md, "{}  ", esc(&line));
        }
        for why in &a.unsettled_reasons {
            let _ = writeln!(md, "Not settled: {}.  ", esc(why));
        }
        let _ = writeln!(md, "{}\n", esc(&outcome_text(a)));
        for p in &a.service_ports {
            let _ = writeln!(
                md,
                "**{} {} {}**: client-time lost {}, sent off-node {}",
                esc(&p.service),
                esc(&p.port),
                esc(&p.family),
                percent(p.lost_client_time_share),
                percent(p.traffic_left_node_share)
            );
            if !p.blind_throughout.is_empty() {
                let _ = writeln!(
                    md,
                    "\nBlind throughout (before the change too): {}",
                    esc(&p.blind_throughout.join(", "))
                );
            }
            if !p.nodes.is_empty() {
                let _ = writeln!(
                    md,
                    "\n| node | clients | blind s | drop windows (s after the change) |"
                );
                let _ = writeln!(md, "|---|---:|---:|---|");
                for n in &p.nodes {
                    let spans: Vec<String> = n
                        .windows
                        .iter()
                        .map(|w| format!("{}–{} ({})", secs(w.start_seconds), secs(w.end_seconds), w.cause))
                        .collect();
                    let _ = writeln!(
                        md,
                        "| {} | {} | {} | {} |",
                        esc(&n.name),
                        n.clients,
                        secs(n.blind_seconds),
                        spans.join(", ")
                    );
                }
            }
            md.push('\n');
        }
    }
    let _ = writeln!(md, "\n### Assumptions\n");
    for a in &r.assumptions {
        let _ = writeln!(
            md,
            "- **{}**: {} — {}",
            esc(&a.subject),
            esc(&a.value),
            esc(&a.reason)
        );
    }
    out.write_all(md.as_bytes())
}
