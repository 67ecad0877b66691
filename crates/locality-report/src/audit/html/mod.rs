//! `audit -o html`: one self-contained page (inline CSS and JavaScript, no network): the
//! totals, the findings by severity, the per-Service summary, and a Service × node grid
//! coloured by verdict and grouped by zone.
//!
//! The grid ([`Grid`]) has one row per service port (and external route for
//! `externalTrafficPolicy: Local`) that has a finding or a Local policy, at most
//! [`Grid::MAX_ROWS`] rows and [`Grid::MAX_CELLS`] cells, so the page stays bounded. Each
//! (row, zone) cell shows the node counts per verdict as a bar, and a `<details>` that
//! expands to one square per node (hover: node name and verdict). On small clusters the
//! squares are written in the page and shown open; on large ones (more than
//! [`INLINE_CELLS`] cells) they are kept as one letter per node and drawn by the page's
//! script when a zone is expanded, so 5,000 nodes read as per-zone counts first.
//!
//! All text from the input is HTML-escaped; the only links are the Kubernetes
//! documentation pages of the rules.

mod grid;

pub use grid::{Cell, Grid, GridRow, GridZone, INLINE_CELLS};

use std::fmt::Write as _;
use std::io::{self, Write};

use locality_audit::{AuditReport, Finding, Severity};

use super::{
    context_line, is_notable, nodes_text, object_text, policy_text, port_family_text, port_text,
    service_text, totals_text,
};
use grid::grid_html;

/// Escapes text for HTML element content and attribute values (unsafe characters written
/// visibly first, as [`crate::display::xml`] does: a character reference would still act).
pub fn escape(text: &str) -> String {
    crate::display::xml(text)
}

/// JSON for a `<script>` block: `<` is escaped so no `</script>` can close it early.
fn script_json<T: serde::Serialize>(value: &T) -> String {
    crate::encode::json_compact_string(value)
        .unwrap_or_else(|_| "null".to_string())
        .replace('<', "\\u003c")
}

const STYLE: &str = r#"
:root{--d:#2e7d32;--x:#c62828;--r:#ef6c00;--n:#9e9e9e;--m:#6a1b9a;--fg:#1f2328;--mut:#59636e;--bd:#d1d9e0}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);margin:0 auto;max-width:1400px;padding:16px 24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--bd);padding-bottom:4px}
.muted{color:var(--mut)}code{font:12px ui-monospace,Menlo,Consolas,monospace}
.totals span{display:inline-block;margin-right:12px;font-weight:600}
.sev{display:inline-block;padding:0 6px;border-radius:4px;color:#fff;font-size:12px;font-weight:600;text-transform:uppercase}
.sev-error{background:var(--x)}.sev-warning{background:var(--r)}.sev-info{background:#0969da}
.finding{border:1px solid var(--bd);border-left-width:4px;border-radius:6px;padding:8px 12px;margin:8px 0}
.finding.error{border-left-color:var(--x)}.finding.warning{border-left-color:var(--r)}.finding.info{border-left-color:#0969da}
.finding h3{font-size:15px;margin:0 0 4px}.finding p{margin:4px 0}
table{border-collapse:collapse}th,td{padding:4px 8px;border-bottom:1px solid var(--bd);text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.legend span{margin-right:14px;white-space:nowrap}
.sq{display:inline-block;width:10px;height:10px;margin:1px;border-radius:2px;vertical-align:middle}
.c-d{background:var(--d)}.c-x{background:var(--x)}.c-r{background:var(--r)}.c-n{background:var(--n)}.c-m{background:var(--m)}
.grid td.zone{min-width:180px;max-width:520px}
.bar{display:flex;height:8px;border-radius:4px;overflow:hidden;background:#eee;margin:2px 0}
.bar i{display:block;height:100%}
.grid details summary{cursor:pointer;color:var(--mut);font-size:12px}
.cells{line-height:0;padding:4px 0}
.rowlabel{min-width:260px}.blind{color:var(--x);font-size:12px}
.v-x{color:var(--x);font-weight:600}.v-r{color:var(--r);font-weight:600}
"#;

const SCRIPT: &str = r#"
(function(){
  var zones = JSON.parse(document.getElementById('zones').textContent);
  var labels = {d:'delivered',x:'dropped',r:'rejected',n:'not proxied',m:'mode-dependent'};
  function draw(d){
    if (!d.open || d.dataset.done) return;
    var v = d.dataset.v, names = zones[+d.dataset.z], box = document.createElement('div');
    box.className = 'cells';
    for (var i = 0; i < v.length; i++) {
      var s = document.createElement('span');
      s.className = 'sq c-' + v[i];
      s.title = names[i] + ': ' + labels[v[i]];
      box.appendChild(s);
    }
    d.appendChild(box);
    d.dataset.done = '1';
  }
  document.querySelectorAll('details[data-v]').forEach(function(d){
    d.addEventListener('toggle', function(){ draw(d); });
    draw(d);
  });
  var all = document.getElementById('expand');
  if (all) all.addEventListener('click', function(){
    document.querySelectorAll('.grid details').forEach(function(d){ d.open = true; draw(d); });
  });
})();
"#;

/// Writes the page. `grid` is `None` when per-node verdicts are not available (an assumed
/// cluster shape): the page then says so.
pub fn write_html(
    report: &AuditReport,
    header: &crate::header::ReportHeader,
    grid: Option<&Grid>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        h,
        "<title>locality audit: {}</title>",
        escape(&totals_text(report))
    );
    let _ = writeln!(
        h,
        "<style>{STYLE}{}</style>\n</head>\n<body>",
        crate::header::HTML_STYLE
    );
    let _ = writeln!(h, "<h1>locality audit</h1>");
    h.push_str(&crate::header::html(header, escape));
    let _ = writeln!(h, "<p class=\"muted\">{}</p>", escape(&context_line(report)));
    let _ = writeln!(
        h,
        "<p class=\"totals\"><span>{}</span><span class=\"sev sev-error\">{}</span> <span class=\"sev sev-warning\">{}</span> <span class=\"sev sev-info\">{} info</span></p>",
        plural(report.totals.findings, "finding", "findings"),
        plural(report.totals.error, "error", "errors"),
        plural(report.totals.warning, "warning", "warnings"),
        report.totals.info
    );
    findings(&mut h, report);
    match grid {
        Some(g) => grid_html(&mut h, g),
        None => {
            let _ = writeln!(
                h,
                "<h2>Service × node grid</h2>\n<p class=\"muted\">Not available: the audit ran on an assumed cluster shape (--nodes/--zones), without real nodes.</p>"
            );
        }
    }
    if let Some(g) = grid {
        nodes_html(&mut h, g);
    }
    services(&mut h, report);
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(h, "<h2>Skipped rules</h2>\n<ul>");
        for s in &report.skipped_rules {
            let _ = writeln!(
                h,
                "<li><code>{}</code>: {}</li>",
                s.rule.as_str(),
                escape(&s.reason)
            );
        }
        let _ = writeln!(h, "</ul>");
    }
    if !report.notes.is_empty() {
        let _ = writeln!(h, "<h2>Notes</h2>\n<ul>");
        for n in &report.notes {
            let _ = writeln!(h, "<li>{}</li>", escape(n));
        }
        let _ = writeln!(h, "</ul>");
    }
    // What each node's square says when drawn by the script.
    let zones: Vec<Vec<String>> = grid
        .map(|g| {
            g.zones
                .iter()
                .map(|z| (0..z.nodes.len()).map(|k| z.node_title(k)).collect())
                .collect()
        })
        .unwrap_or_default();
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"zones\">{}</script>",
        script_json(&zones)
    );
    let _ = writeln!(h, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out.write_all(h.as_bytes())
}

/// The class of a count cell: coloured as its verdict (`x` dropped, `r` rejected) when
/// non-zero.
fn verdict_class(n: usize, letter: &str) -> String {
    if n > 0 {
        format!("num v-{letter}")
    } else {
        "num".to_string()
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    crate::header::plural(n as u64, one, many)
}

/// Up to this many nodes are listed one by one in the Nodes section; beyond, per zone.
const NODES_LISTED: usize = 500;

/// The Nodes section: each node's zone, roles and client pods (per zone on large clusters).
fn nodes_html(h: &mut String, g: &Grid) {
    let _ = writeln!(h, "<h2>Nodes</h2>");
    let _ = writeln!(
        h,
        "<p class=\"muted\">Client pods: pods bound to the node that have not finished, kube-proxy's own excluded.</p>"
    );
    if g.node_count() <= NODES_LISTED {
        let _ = writeln!(
            h,
            "<table class=\"nodes\">\n<thead><tr><th>Node</th><th>Zone</th><th>Roles</th><th>Client pods</th></tr></thead>\n<tbody>"
        );
        for z in &g.zones {
            for (k, name) in z.nodes.iter().enumerate() {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                    escape(name),
                    escape(if z.name.is_empty() { "(no zone)" } else { &z.name }),
                    escape(z.roles.get(k).map_or("<none>", String::as_str)),
                    z.clients.get(k).copied().unwrap_or(0)
                );
            }
        }
    } else {
        let _ = writeln!(
            h,
            "<table class=\"nodes\">\n<thead><tr><th>Zone</th><th>Nodes</th><th>Client pods</th></tr></thead>\n<tbody>"
        );
        for z in &g.zones {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(if z.name.is_empty() { "(no zone)" } else { &z.name }),
                z.nodes.len(),
                z.clients.iter().sum::<usize>()
            );
        }
    }
    let _ = writeln!(h, "</tbody></table>");
}

fn finding_html(h: &mut String, f: &Finding) {
    let sev = f.severity.as_str();
    let target = port_family_text(f);
    let _ = writeln!(
        h,
        "<article class=\"finding {sev}\">\n<h3><span class=\"sev sev-{sev}\">{sev}</span> <code>{}</code> {} <span class=\"muted\">{}</span></h3>",
        f.rule.as_str(),
        escape(&service_text(f)),
        escape(&target)
    );
    let _ = writeln!(h, "<p class=\"muted\">{}</p>", escape(f.title));
    let _ = writeln!(h, "<p>{}</p>", escape(&f.message));
    if f.node_count > 0 {
        let _ = writeln!(
            h,
            "<p><b>Nodes</b> ({}, {}): {}</p>",
            f.node_count,
            plural(f.pod_count, "pod", "pods"),
            escape(&nodes_text(f, 30))
        );
    }
    if !f.objects.is_empty() {
        let objects: Vec<String> = f
            .objects
            .iter()
            .take(30)
            .map(|o| escape(&object_text(o)))
            .collect();
        let more = f.objects.len().saturating_sub(30);
        let _ = writeln!(
            h,
            "<p><b>Objects</b>: {}{}</p>",
            objects.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(h, "<p><b>Fix</b>: {}</p>", escape(&f.fix));
    let _ = writeln!(
        h,
        "<p><a href=\"{}\" rel=\"noopener noreferrer\">Kubernetes documentation</a></p>\n</article>",
        escape(f.docs_url)
    );
}

fn findings(h: &mut String, report: &AuditReport) {
    let _ = writeln!(h, "<h2>Findings</h2>");
    if report.active().next().is_none() {
        let _ = writeln!(h, "<p>No findings.</p>");
    }
    for severity in Severity::ALL {
        let list: Vec<&Finding> = report.active().filter(|f| f.severity == severity).collect();
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(
            h,
            "<details open>\n<summary><b>{} ({})</b></summary>",
            super::severity_heading(severity),
            list.len()
        );
        for f in list {
            finding_html(h, f);
        }
        let _ = writeln!(h, "</details>");
    }
    let suppressed = super::suppressed_lines(report);
    if !suppressed.is_empty() {
        let _ = writeln!(
            h,
            "<details>\n<summary><b>Suppressed ({})</b></summary>\n<ul>",
            suppressed.len()
        );
        for l in &suppressed {
            let _ = writeln!(h, "<li>{}</li>", escape(l));
        }
        let _ = writeln!(h, "</ul>\n</details>");
    }
}

fn services(h: &mut String, report: &AuditReport) {
    let notable: Vec<_> = report.services.iter().filter(|s| is_notable(s)).collect();
    let _ = writeln!(h, "<h2>Services</h2>");
    if !notable.is_empty() {
        let _ = writeln!(
            h,
            "<table>\n<thead><tr><th>Service</th><th>Port</th><th>Family</th><th>Policy</th><th>Route</th><th>Delivered</th><th>Dropped</th><th>Rejected</th><th>Findings</th></tr></thead>\n<tbody>"
        );
        for s in &notable {
            let _ = writeln!(
                h,
                "<tr><td>{}/{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>pod→clusterIP</td><td class=\"num\">{}</td><td class=\"{}\">{}</td><td class=\"{}\">{}</td><td class=\"num\">{}</td></tr>",
                escape(&s.service.namespace),
                escape(&s.service.name),
                escape(&port_text(&s.port)),
                s.ip_family.as_str(),
                escape(&policy_text(s)),
                s.delivered,
                verdict_class(s.dropped, "x"),
                s.dropped,
                verdict_class(s.rejected, "r"),
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
                    h,
                    "<tr><td></td><td></td><td></td><td></td><td>{}→{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td></td></tr>",
                    e.source.as_str(),
                    e.destination.as_str(),
                    e.delivered,
                    e.dropped,
                    e.rejected
                );
            }
        }
        let _ = writeln!(h, "</tbody></table>");
    }
    let others = report.services.len() - notable.len();
    if others > 0 || notable.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"muted\">{others} {}service port{} with no Local policy, no finding and no node that drops or rejects.</p>",
            if notable.is_empty() { "" } else { "other " },
            if others == 1 { "" } else { "s" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, script_json};

    #[test]
    fn escapes_html_and_script_json() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;"
        );
        assert_eq!(script_json(&vec!["</script>"]), "[\"\\u003c/script>\"]");
    }
}
