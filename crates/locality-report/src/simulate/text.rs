//! The `SimulationReport` for a terminal: the notice, per alternative its outcome and a
//! table of drop windows per Service port, the comparison table when several alternatives
//! ran, then the assumptions.

use std::fmt::Write as _;
use std::io::{self, Write};

use locality_model::proxy::VerdictKind;

use super::{Alternative, Outcome, SimulationReport, percent, secs};
use crate::display::{Term as T, pad, pad_left, term};
use crate::header::TEXT_WIDTH;
use crate::style::Paint;

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// The outcome in words (also used by Markdown).
pub fn outcome_text(a: &Alternative) -> String {
    let t = &a.totals;
    match a.outcome {
        Outcome::NoChange => {
            "No change: no route of the Service ports in scope changed, and no node is blind.".into()
        }
        Outcome::StillBlind => {
            let mut nodes: Vec<String> = a
                .service_ports
                .iter()
                .flat_map(|p| p.blind_after.iter().cloned())
                .collect();
            nodes.sort();
            nodes.dedup();
            format!(
                "No route changed, but {} node(s) stay blind before and after: {}.",
                nodes.len(),
                nodes.join(", ")
            )
        }
        Outcome::ChangedWithoutDrops => format!(
            "Routes changed; no drop window. Client traffic sent off its node: {}.",
            percent(t.traffic_left_node_share)
        ),
        Outcome::DropWindows => format!(
            "Drop windows on {} node(s), {} client pod(s) affected, {} blind node-seconds; worst node {} ({} s); longest window {} s.",
            t.nodes_with_drop_windows,
            t.affected_client_pods,
            secs(t.blind_node_seconds),
            t.worst_node.as_ref().map_or("-", |w| w.name.as_str()),
            secs(t.worst_node.as_ref().map_or(0.0, |w| w.blind_seconds)),
            secs(t.longest_window_seconds)
        ),
    }
}

/// `Pod shop/web-a: deleted 0 s, notReady 8 s, gone 8.2 s, …` for a `delete` or `replace`
/// (also used by Markdown).
pub fn pod_events_line(a: &Alternative) -> Option<String> {
    let first = a.pod_events.first()?;
    let events: Vec<String> = a
        .pod_events
        .iter()
        .map(|e| format!("{} {} s", e.event, secs(e.at_seconds)))
        .collect();
    Some(format!("Pod {}: {}.", first.pod, events.join(", ")))
}

fn alternative(s: &mut String, a: &Alternative, step: f64, sync: f64, paint: Paint) {
    let what: Vec<&str> = a.changes.iter().map(|c| c.description.as_str()).collect();
    let _ = writeln!(
        s,
        "{} — {}",
        paint.bold(&format!("[{}]", T(&a.name))),
        T(&what.join("; "))
    );
    for p in &a.prepared {
        let _ = writeln!(s, "  first: {}", T(&p.description));
    }
    let _ = writeln!(
        s,
        "  {} after {} s of virtual time ({} checks every {} ms; rules {} s behind the store).",
        if a.settled { "Settled" } else { "Did NOT settle" },
        secs(a.duration_seconds),
        a.steps,
        (step * 1000.0).round(),
        secs(sync)
    );
    if let Some(line) = pod_events_line(a) {
        let _ = writeln!(s, "  {}", T(&line));
    }
    for why in &a.unsettled_reasons {
        let _ = writeln!(s, "  Not settled: {}.", T(why));
    }
    let _ = writeln!(s, "  {}", T(&outcome_text(a)));
    for p in &a.service_ports {
        let _ = writeln!(s, "\n  {} {} {}", T(&p.service), T(&p.port), p.family);
        let _ = writeln!(
            s,
            "    blind before: {}; after: {}",
            T(&list(&p.blind_before)),
            T(&list(&p.blind_after))
        );
        if !p.blind_throughout.is_empty() {
            let _ = writeln!(
                s,
                "    blind throughout (before the change too): {}",
                T(&p.blind_throughout.join(", "))
            );
        }
        if p.nodes.is_empty() {
            let _ = writeln!(s, "    no drop window");
        } else {
            let w = p
                .nodes
                .iter()
                .map(|n| term(&n.name).chars().count())
                .max()
                .unwrap_or(4)
                .max(4);
            let _ = writeln!(
                s,
                "    {}  CLIENTS  BLIND  DROP WINDOWS (virtual s after the change)",
                pad("NODE", w)
            );
            for n in &p.nodes {
                let spans: Vec<String> = n
                    .windows
                    .iter()
                    .map(|x| {
                        let gone = if x.cause == "endpointGone" {
                            " (endpoint gone)"
                        } else {
                            ""
                        };
                        format!("{}–{}{gone}", secs(x.start_seconds), secs(x.end_seconds))
                    })
                    .collect();
                let blind = pad_left(&format!("{}s", secs(n.blind_seconds)), 5);
                let _ = writeln!(
                    s,
                    "    {}  {}  {}  {}",
                    pad(&term(&n.name), w),
                    pad_left(&n.clients.to_string(), 7),
                    paint.verdict(VerdictKind::Drop, &blind),
                    spans.join(", ")
                );
            }
        }
        let _ = writeln!(
            s,
            "    client-time lost: {}; sent off the client's node: {}",
            percent(p.lost_client_time_share),
            percent(p.traffic_left_node_share)
        );
    }
    s.push('\n');
}

/// The comparison table (also used by Markdown, with `|` separators).
pub fn comparison_rows(r: &SimulationReport) -> Vec<[String; 7]> {
    r.alternatives
        .iter()
        .map(|a| {
            let t = &a.totals;
            [
                a.name.clone(),
                secs(t.blind_node_seconds),
                t.affected_client_pods.to_string(),
                t.worst_node.as_ref().map_or("-".to_string(), |w| {
                    format!("{} ({} s)", w.name, secs(w.blind_seconds))
                }),
                secs(t.longest_window_seconds),
                percent(t.lost_client_time_share),
                percent(t.traffic_left_node_share),
            ]
        })
        .collect()
}

/// Column titles of [`comparison_rows`].
pub const COMPARISON_HEADERS: [&str; 7] = [
    "ALTERNATIVE",
    "BLIND NODE-S",
    "AFFECTED CLIENTS",
    "WORST NODE",
    "LONGEST S",
    "LOST",
    "LEFT NODE",
];

/// Writes the report as text.
pub fn write_text(r: &SimulationReport, paint: Paint, out: &mut dyn Write) -> io::Result<()> {
    crate::header::write_text(&r.header, paint, out)?;
    let mut s = String::new();
    for l in crate::audit::wrap(super::NOTICE, TEXT_WIDTH, "", "  ") {
        let _ = writeln!(s, "{}", paint.banner(&l));
    }
    s.push('\n');
    for a in &r.alternatives {
        alternative(
            &mut s,
            a,
            r.settings.step_seconds,
            r.settings.proxy_sync_seconds,
            paint,
        );
    }
    if r.alternatives.len() > 1 {
        let rows: Vec<Vec<String>> = comparison_rows(r)
            .into_iter()
            .map(|row| row.iter().map(|c| term(c).into_owned()).collect())
            .collect();
        let mut widths: Vec<usize> = COMPARISON_HEADERS.iter().map(|h| h.len()).collect();
        for row in &rows {
            for (w, c) in widths.iter_mut().zip(row.iter()) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: Vec<&str>| -> String {
            cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| pad(c, *w))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        let _ = writeln!(s, "{}", paint.bold("Comparison"));
        let _ = writeln!(s, "{}", line(COMPARISON_HEADERS.to_vec()));
        for row in &rows {
            let _ = writeln!(s, "{}", line(row.iter().map(String::as_str).collect()));
        }
        s.push('\n');
    }
    let _ = writeln!(s, "{}", paint.bold("Assumptions"));
    for a in &r.assumptions {
        let item = format!("- {}: {} — {}", a.subject, a.value, a.reason);
        for l in crate::audit::wrap(&item, TEXT_WIDTH, "", "  ") {
            let _ = writeln!(s, "{l}");
        }
    }
    crate::display::Terminal::new(out).write_all(s.as_bytes())
}
