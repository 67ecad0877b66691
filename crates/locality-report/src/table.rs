//! `matrix -o wide`: one row per service port, node and route, for people; endpoints as
//! `pod@node` ([`crate::labels`]).

use std::io::{self, Write};

use comfy_table::{Table, presets};
use locality_model::matrix::Matrix;

use crate::header::ReportHeader;
use crate::matrix::{Selection, port_doc};
use crate::style::Paint;
use locality_model::proxy::VerdictKind;

/// Writes the [header](crate::header), then the matrix as a text table; rows that drop or
/// reject are coloured when `paint` is on.
pub fn write_table(
    m: &Matrix<'_>,
    sel: &Selection,
    header: &ReportHeader,
    paint: Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
    crate::header::write_text(header, paint, out)?;
    let mut verdicts: Vec<VerdictKind> = Vec::new();
    let mut table = Table::new();
    table.load_style(presets::NOTHING);
    table.set_header(vec![
        "SERVICE",
        "PORT",
        "FAMILY",
        "NODE",
        "ZONE",
        "ROUTE",
        "VERDICT",
        "ENDPOINTS",
        "REASON",
        "CONFIDENCE",
    ]);
    for port in sel.port_indices(m) {
        let doc = port_doc(m, port, sel.nodes.as_deref());
        let service = format!("{}/{}", doc.namespace, doc.name);
        let port_text = m.ports[port].info.port.to_string();
        // The document's endpoints are addresses; people read the pod and its node.
        let names: std::collections::HashMap<String, String> = m.ports[port]
            .endpoints
            .iter()
            .map(|ep| (ep.to_string(), crate::labels::endpoint(ep)))
            .collect();
        for node in &doc.nodes {
            for r in &node.routes {
                let mut verdict = r.verdict.to_string();
                if let Some(t) = crate::labels::topology(&doc, r) {
                    verdict.push_str(&format!(" ({t})"));
                }
                if r.fallback.is_some() {
                    verdict.push_str(" (terminating)");
                }
                if r.session_affinity.is_some() {
                    verdict.push_str(" (sticky per client)");
                }
                if !r.source_ranges.is_empty() {
                    verdict.push_str(" (from sourceRanges only)");
                }
                verdicts.push(match r.verdict {
                    "deliver" => VerdictKind::Deliver,
                    "drop" => VerdictKind::Drop,
                    "reject" => VerdictKind::Reject,
                    _ => VerdictKind::NotProxied,
                });
                // Names, zones and reasons may carry input text: escaped (crate::display).
                let row: Vec<String> = vec![
                    service.clone(),
                    port_text.clone(),
                    doc.ip_family.to_string(),
                    node.node.to_string(),
                    node.zone.unwrap_or("-").to_string(),
                    format!("{}→{}", r.source, r.destination),
                    verdict,
                    if r.endpoints.is_empty() {
                        "-".to_string()
                    } else {
                        r.endpoints
                            .iter()
                            .map(|e| names.get(e).map_or(e.as_str(), String::as_str))
                            .collect::<Vec<_>>()
                            .join(",")
                    },
                    r.reason.to_string(),
                    r.confidence.to_string(),
                ];
                table.add_row(row.into_iter().map(|c| crate::display::term(&c).into_owned()));
            }
        }
    }
    let text = table.to_string();
    let mut out = crate::display::Terminal::new(out);
    let lines: Vec<&str> = text.lines().collect();
    // One line per row after the header (no wrapping): rows can be coloured by verdict.
    let colour_rows = paint.enabled && lines.len() == verdicts.len() + 1;
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end();
        let line = line.strip_prefix(' ').unwrap_or(line);
        match i.checked_sub(1).and_then(|r| verdicts.get(r)) {
            Some(v) if colour_rows && *v != VerdictKind::Deliver => {
                writeln!(out, "{}", paint.verdict(*v, line))?
            }
            _ => writeln!(out, "{line}")?,
        }
    }
    Ok(())
}
