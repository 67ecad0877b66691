//! The Service × node grid of the HTML page ([`Grid`]): per service port and route, each
//! node's verdict grouped by zone, with the node's labels (zone, roles) and client count.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use locality_audit::{AuditReport, Severity};
use locality_model::matrix::Matrix;
use locality_model::objects::ClusterState;
use locality_model::proxy::{Destination, Source, VerdictKind};

use super::escape;
use crate::audit::{policy_text, port_text};

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
    /// Each node's roles (`node-role.kubernetes.io/<role>` labels, as kubectl's ROLES
    /// column: `<none>` without one), in `nodes` order.
    pub roles: Vec<String>,
    /// Each node's client pods ([`locality_audit::clients`]), in `nodes` order.
    pub clients: Vec<usize>,
}

impl GridZone {
    /// What the page says about node `k` of the zone: `node-a (zone a, roles <none>, 3
    /// client pods)`.
    pub fn node_title(&self, k: usize) -> String {
        let zone = if self.name.is_empty() {
            "no zone"
        } else {
            &self.name
        };
        let clients = self.clients.get(k).copied().unwrap_or(0);
        format!(
            "{} (zone {zone}, roles {}, {})",
            self.nodes.get(k).map_or("", String::as_str),
            self.roles.get(k).map_or("<none>", String::as_str),
            crate::header::plural(clients as u64, "client pod", "client pods")
        )
    }
}

/// A node's roles as kubectl's ROLES column shows them: the `<role>` of every
/// `node-role.kubernetes.io/<role>` label, comma-separated, or `<none>`.
pub fn node_roles(labels: &locality_model::objects::Labels) -> String {
    let roles: Vec<&str> = labels
        .keys()
        .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
        .filter(|r| !r.is_empty())
        .collect();
    if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.join(",")
    }
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
    /// Node roles come from the Nodes' labels and client counts from `state`'s pods.
    pub fn from_matrix(m: &Matrix<'_>, state: &ClusterState, report: &AuditReport) -> Grid {
        let clients = locality_audit::clients::clients_per_node(state);
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
                roles: nodes
                    .iter()
                    .map(|&i| node_roles(&m.nodes[i].node.meta.labels))
                    .collect(),
                clients: nodes
                    .iter()
                    .map(|&i| clients.get(m.nodes[i].name()).copied().unwrap_or(0))
                    .collect(),
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

    pub(super) fn node_count(&self) -> usize {
        self.zones.iter().map(|z| z.nodes.len()).sum()
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

pub(super) fn grid_html(h: &mut String, g: &Grid) {
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
            "<th>{} <span class=\"muted\">({})</span></th>",
            escape(name),
            crate::header::plural(z.nodes.len() as u64, "node", "nodes")
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
                for (k, c) in cells.iter().enumerate() {
                    let _ = write!(
                        h,
                        "<span class=\"sq c-{}\" title=\"{}: {}\"></span>",
                        c.letter(),
                        escape(&z.node_title(k)),
                        c.label()
                    );
                }
                let _ = write!(h, "</div></details>");
            } else {
                let letters: String = cells.iter().map(|c| c.letter()).collect();
                let _ = write!(
                    h,
                    "<details data-z=\"{zi}\" data-v=\"{letters}\"><summary>{}</summary></details>",
                    crate::header::plural(cells.len() as u64, "node", "nodes")
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
