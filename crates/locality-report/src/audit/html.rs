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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, Write};

use locality_audit::{AuditReport, Finding, Severity};
use locality_model::matrix::Matrix;
use locality_model::proxy::{Destination, Source, VerdictKind};

use super::{
    context_line, is_notable, nodes_text, object_text, policy_text, port_family_text, port_text,
    service_text, totals_text,
};

/// Above this many cells in the grid the node squares are drawn on demand by the page's
/// script (collapsed zones show counts only).
pub const INLINE_CELLS: usize = 20_000;

/// A node's verdict in the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cell {
    /// Traffic is delivered.
    Delivered,
    /// Traffic is dropped (the client times out): a blind node.
    Dropped,
    /// Traffic is rejected (connection refused).
    Rejected,
    /// kube-proxy does not proxy the Service on this node.
    NotProxied,
    /// The verdict depends on the unknown proxy mode.
    ModeDependent,
}

impl Cell {
    /// Every verdict, in legend order.
    pub const ALL: [Cell; 5] = [
        Cell::Delivered,
        Cell::Dropped,
        Cell::Rejected,
        Cell::NotProxied,
        Cell::ModeDependent,
    ];

    /// The letter that encodes it in the page's data.
    pub fn letter(self) -> char {
        match self {
            Cell::Delivered => 'd',
            Cell::Dropped => 'x',
            Cell::Rejected => 'r',
            Cell::NotProxied => 'n',
            Cell::ModeDependent => 'm',
        }
    }

    /// Words for people.
    pub fn label(self) -> &'static str {
        match self {
            Cell::Delivered => "delivered",
            Cell::Dropped => "dropped",
            Cell::Rejected => "rejected",
            Cell::NotProxied => "not proxied",
            Cell::ModeDependent => "mode-dependent",
        }
    }

    fn index(self) -> usize {
        match self {
            Cell::Delivered => 0,
            Cell::Dropped => 1,
            Cell::Rejected => 2,
            Cell::NotProxied => 3,
            Cell::ModeDependent => 4,
        }
    }
}

/// A zone's column of the grid.
#[derive(Debug, Clone)]
pub struct GridZone {
    /// Zone name (`""` for nodes without a zone label).
    pub name: String,
    /// Its nodes, sorted by name.
    pub nodes: Vec<String>,
}

/// One row of the grid: a service port and route.
#[derive(Debug, Clone)]
pub struct GridRow {
    /// `namespace/name`.
    pub service: String,
    /// `name:port/PROTO IPv4`.
    pub port: String,
    /// Short policy text (`ITP=Local`).
    pub policy: String,
    /// `pod→clusterIP` or `external→nodePort`.
    pub route: String,
    /// The most severe finding on the Service, if any.
    pub severity: Option<Severity>,
    /// Per zone (in [`Grid::zones`] order), the verdict of each node in zone order.
    pub cells: Vec<Vec<Cell>>,
}

/// The Service × node grid of the page.
#[derive(Debug, Clone, Default)]
pub struct Grid {
    /// Zones, sorted by name (nodes without a zone last, as `""`).
    pub zones: Vec<GridZone>,
    /// Rows: Services with findings (most severe first), then the other Local ones.
    pub rows: Vec<GridRow>,
    /// Rows left out to keep the page bounded.
    pub omitted: usize,
}

impl Grid {
    /// At most this many rows.
    pub const MAX_ROWS: usize = 200;
    /// At most this many cells (rows × nodes).
    pub const MAX_CELLS: usize = 1_000_000;

    /// Builds the grid from the routing matrix the report was computed on: per-node verdicts
    /// (`Matrix::port_routes`) of pods → cluster IP, and of external → the first external
    /// destination for `externalTrafficPolicy: Local`, only for the service ports in
    /// `report.services` whose Service has a finding or that have a Local policy.
    pub fn from_matrix(m: &Matrix<'_>, report: &AuditReport) -> Grid {
        let mut by_zone: BTreeMap<(bool, &str), Vec<usize>> = BTreeMap::new();
        for (i, n) in m.nodes.iter().enumerate() {
            by_zone.entry((n.zone.is_empty(), n.zone)).or_default().push(i);
        }
        let mut position: Vec<(usize, usize)> = vec![(0, 0); m.nodes.len()];
        let mut zones = Vec::with_capacity(by_zone.len());
        for (z, ((_, zone), nodes)) in by_zone.iter().enumerate() {
            for (k, &i) in nodes.iter().enumerate() {
                position[i] = (z, k);
            }
            zones.push(GridZone {
                name: zone.to_string(),
                nodes: nodes.iter().map(|&i| m.nodes[i].name().to_string()).collect(),
            });
        }
        let mut worst: HashMap<(&str, &str), Severity> = HashMap::new();
        for f in report.active() {
            let e = worst
                .entry((f.service.namespace.as_str(), f.service.name.as_str()))
                .or_insert(f.severity);
            *e = (*e).min(f.severity);
        }
        let listed: HashSet<(&str, &str)> = report
            .services
            .iter()
            .map(|s| (s.service.namespace.as_str(), s.service.name.as_str()))
            .collect();
        let mut candidates: Vec<(u8, usize)> = Vec::new();
        for (i, p) in m.ports.iter().enumerate() {
            let key = (p.service.meta.namespace.as_str(), p.service.meta.name.as_str());
            if !listed.contains(&key) {
                continue;
            }
            let rank = match worst.get(&key) {
                Some(Severity::Error) => 0,
                Some(Severity::Warning) => 1,
                Some(Severity::Info) => 2,
                None if p.info.internal_policy_local || p.info.external_policy_local => 3,
                None => continue,
            };
            candidates.push((rank, i));
        }
        candidates.sort();
        let per_row = m.nodes.len().max(1);
        let max_rows = Self::MAX_ROWS.min(Self::MAX_CELLS / per_row).max(1);
        let mut rows = Vec::new();
        let mut omitted = 0;
        for (_, port) in candidates {
            if rows.len() >= max_rows {
                omitted += 1;
                continue;
            }
            let e = &m.ports[port];
            let key = (e.service.meta.namespace.as_str(), e.service.meta.name.as_str());
            let severity = worst.get(&key).copied();
            let mut routes: Vec<(Source, Destination)> = vec![(Source::Pod, Destination::ClusterIp)];
            if e.info.external_policy_local
                && let Some(d) = e.destinations.iter().find(|d| **d != Destination::ClusterIp)
            {
                routes.push((Source::External, *d));
            }
            let mut per_route: Vec<Vec<Vec<Cell>>> = routes
                .iter()
                .map(|_| {
                    zones
                        .iter()
                        .map(|z| vec![Cell::Delivered; z.nodes.len()])
                        .collect()
                })
                .collect();
            for (node, nr) in m.port_routes(port, None) {
                let (z, k) = position[node];
                for (r, (src, dst)) in routes.iter().enumerate() {
                    let Some(route) = nr
                        .routes
                        .iter()
                        .find(|mr| mr.route.source == *src && mr.route.destination == *dst)
                    else {
                        continue;
                    };
                    per_route[r][z][k] = if route.by_mode.is_some() {
                        Cell::ModeDependent
                    } else {
                        match route.route.verdict {
                            VerdictKind::Deliver => Cell::Delivered,
                            VerdictKind::Drop => Cell::Dropped,
                            VerdictKind::Reject => Cell::Rejected,
                            VerdictKind::NotProxied => Cell::NotProxied,
                        }
                    };
                }
            }
            let port_label = format!(
                "{} {}",
                port_text(&locality_audit::PortRef {
                    name: e.info.port.name.clone(),
                    protocol: e.info.port.protocol,
                    port: e.info.port.port,
                }),
                e.info.family.as_str()
            );
            let policy = report
                .services
                .iter()
                .find(|s| {
                    s.service.namespace == key.0
                        && s.service.name == key.1
                        && s.port.name == e.info.port.name
                        && s.port.port == e.info.port.port
                        && s.port.protocol == e.info.port.protocol
                        && s.ip_family == e.info.family
                })
                .map(policy_text)
                .unwrap_or_default();
            for ((src, dst), cells) in routes.into_iter().zip(per_route) {
                rows.push(GridRow {
                    service: format!("{}/{}", key.0, key.1),
                    port: port_label.clone(),
                    policy: policy.clone(),
                    route: format!("{}→{}", src.as_str(), dst.as_str()),
                    severity,
                    cells,
                });
            }
        }
        Grid { zones, rows, omitted }
    }

    fn node_count(&self) -> usize {
        self.zones.iter().map(|z| z.nodes.len()).sum()
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON for a `<script>` block: `<` is escaped so no `</script>` can close it early.
fn script_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value)
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
pub fn write_html(report: &AuditReport, grid: Option<&Grid>, out: &mut dyn Write) -> io::Result<()> {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        h,
        "<title>locality audit: {}</title>",
        escape(&totals_text(report))
    );
    let _ = writeln!(h, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(h, "<h1>locality audit</h1>");
    let _ = writeln!(h, "<p class=\"muted\">{}</p>", escape(&context_line(report)));
    let _ = writeln!(
        h,
        "<p class=\"totals\"><span>{} finding{}</span><span class=\"sev sev-error\">{} error</span> <span class=\"sev sev-warning\">{} warning</span> <span class=\"sev sev-info\">{} info</span></p>",
        report.totals.findings,
        if report.totals.findings == 1 { "" } else { "s" },
        report.totals.error,
        report.totals.warning,
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
    let zones: Vec<&Vec<String>> = grid
        .map(|g| g.zones.iter().map(|z| &z.nodes).collect())
        .unwrap_or_default();
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"zones\">{}</script>",
        script_json(&zones)
    );
    let _ = writeln!(h, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out.write_all(h.as_bytes())
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
            "<p><b>Nodes</b> ({}, {} pods): {}</p>",
            f.node_count,
            f.pod_count,
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

fn bar(counts: &[usize; 5], total: usize) -> String {
    let mut s = String::from("<div class=\"bar\">");
    for c in Cell::ALL {
        let n = counts[c.index()];
        if n == 0 || total == 0 {
            continue;
        }
        let pct = (n as f64) * 100.0 / (total as f64);
        let _ = write!(
            s,
            "<i class=\"c-{}\" style=\"width:{pct:.3}%\" title=\"{n} {}\"></i>",
            c.letter(),
            c.label()
        );
    }
    s.push_str("</div>");
    s
}

fn grid_html(h: &mut String, g: &Grid) {
    let _ = writeln!(h, "<h2>Service × node grid</h2>");
    let _ = writeln!(
        h,
        "<p class=\"muted\">One row per service port with a finding or a Local policy; one square per node, grouped by zone. Hover a square for the node.</p>"
    );
    let _ = write!(h, "<p class=\"legend\">");
    for c in Cell::ALL {
        let _ = write!(
            h,
            "<span><i class=\"sq c-{}\"></i> {}</span>",
            c.letter(),
            c.label()
        );
    }
    let _ = writeln!(
        h,
        " <button id=\"expand\" type=\"button\">Expand all zones</button></p>"
    );
    if g.rows.is_empty() {
        let _ = writeln!(h, "<p>No service port has a finding or a Local policy.</p>");
        return;
    }
    let nodes = g.node_count();
    let inline = g.rows.len() * nodes <= INLINE_CELLS;
    let _ = writeln!(
        h,
        "<div style=\"overflow-x:auto\"><table class=\"grid\">\n<thead><tr><th>Service port</th>"
    );
    for z in &g.zones {
        let name = if z.name.is_empty() { "(no zone)" } else { &z.name };
        let _ = write!(
            h,
            "<th>{} <span class=\"muted\">({} nodes)</span></th>",
            escape(name),
            z.nodes.len()
        );
    }
    let _ = writeln!(h, "</tr></thead>\n<tbody>");
    for row in &g.rows {
        let mut blind: Vec<&str> = Vec::new();
        let mut blind_count = 0;
        for (z, cells) in g.zones.iter().zip(&row.cells) {
            for (name, c) in z.nodes.iter().zip(cells) {
                if matches!(c, Cell::Dropped | Cell::Rejected) {
                    blind_count += 1;
                    if blind.len() < 10 {
                        blind.push(name);
                    }
                }
            }
        }
        let sev = row
            .severity
            .map(|s| format!(" <span class=\"sev sev-{0}\">{0}</span>", s.as_str()))
            .unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"rowlabel\"><b>{}</b>{sev}<br><code>{}</code> {} <span class=\"muted\">{}</span>",
            escape(&row.service),
            escape(&row.port),
            escape(&row.policy),
            escape(&row.route)
        );
        if blind_count > 0 {
            let more = blind_count - blind.len();
            let _ = write!(
                h,
                "<br><span class=\"blind\">blind on {blind_count}: {}{}</span>",
                escape(&blind.join(", ")),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        let _ = write!(h, "</td>");
        for (zi, (z, cells)) in g.zones.iter().zip(&row.cells).enumerate() {
            let mut counts = [0usize; 5];
            for c in cells {
                counts[c.index()] += 1;
            }
            let text: Vec<String> = Cell::ALL
                .iter()
                .filter(|c| counts[c.index()] > 0)
                .map(|c| format!("{} {}", counts[c.index()], c.label()))
                .collect();
            let _ = write!(
                h,
                "<td class=\"zone\">{}<span class=\"muted\">{}</span>",
                bar(&counts, cells.len()),
                escape(&text.join(" · "))
            );
            if inline {
                let _ = write!(h, "<details open><summary>nodes</summary><div class=\"cells\">");
                for (name, c) in z.nodes.iter().zip(cells) {
                    let _ = write!(
                        h,
                        "<span class=\"sq c-{}\" title=\"{}: {}\"></span>",
                        c.letter(),
                        escape(name),
                        c.label()
                    );
                }
                let _ = write!(h, "</div></details>");
            } else {
                let letters: String = cells.iter().map(|c| c.letter()).collect();
                let _ = write!(
                    h,
                    "<details data-z=\"{zi}\" data-v=\"{letters}\"><summary>{} nodes</summary></details>",
                    cells.len()
                );
            }
            let _ = write!(h, "</td>");
        }
        let _ = writeln!(h, "</tr>");
    }
    let _ = writeln!(h, "</tbody></table></div>");
    if g.omitted > 0 {
        let _ = writeln!(
            h,
            "<p class=\"muted\">{} more service ports with a finding or a Local policy are left out of the grid to keep the page small (see the findings and the summary).</p>",
            g.omitted
        );
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
                "<tr><td>{}/{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>pod→clusterIP</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
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
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(script_json(&vec!["</script>"]), "[\"\\u003c/script>\"]");
    }
}
