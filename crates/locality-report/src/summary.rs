//! `matrix -o summary`: per service port, how many nodes deliver, drop or reject, and which
//! nodes are blind when there are few. Its cost does not grow with nodes × services (see
//! [`Matrix::summary`]).

use std::io::{self, Write};

use locality_model::matrix::{Matrix, PortSummary, VerdictCounts};
use locality_model::proxy::{Destination, Source};

use crate::header::{Count, ReportHeader, Summary, plural};
use crate::matrix::Selection;
use crate::style::Paint;
use locality_model::proxy::VerdictKind;

/// Blind nodes are listed by name up to this many per service port.
pub const BLIND_LIST_LIMIT: usize = 5;

/// One printed row.
struct Row {
    service: String,
    port: String,
    family: &'static str,
    policy: String,
    route: String,
    counts: VerdictCounts,
    blind: String,
}

/// The summaries of `ports`, in order, computed on the available cores: each port's is
/// independent of the others', and a large dump has thousands. Workers take batches of
/// ports in turn, so one costly port does not hold up a whole share.
fn summaries(m: &Matrix<'_>, ports: &[usize]) -> Vec<PortSummary> {
    const BATCH: usize = 32;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if threads < 2 || ports.len() < 2 * BATCH {
        return ports.iter().map(|&p| m.summary(p, BLIND_LIST_LIMIT)).collect();
    }
    let batches: Vec<&[usize]> = ports.chunks(BATCH).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Vec<PortSummary>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(batch) = batches.get(b) else {
                            return mine;
                        };
                        mine.push((b, batch.iter().map(|&p| m.summary(p, BLIND_LIST_LIMIT)).collect()));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|(b, _)| *b);
    done.into_iter().flat_map(|(_, s)| s).collect()
}

fn policy_text(m: &Matrix<'_>, port: usize) -> String {
    let e = &m.ports[port];
    let svc = e.service;
    let mut parts = Vec::new();
    if e.info.internal_policy_local {
        parts.push("ITP=Local".to_string());
    }
    if e.info.external_policy_local {
        parts.push("ETP=Local".to_string());
    }
    if let Some(td) = &svc.traffic_distribution {
        parts.push(format!("TD={td}"));
    }
    if let Some(a) = &e.info.hints_annotation {
        parts.push(format!("topology-mode={a}"));
    }
    if e.info.not_proxied.is_some() {
        parts.push("not proxied".to_string());
    }
    if parts.is_empty() {
        "Cluster".to_string()
    } else {
        parts.join(",")
    }
}

fn rows_for(m: &Matrix<'_>, s: &PortSummary) -> Vec<Row> {
    let e = &m.ports[s.port];
    let svc = e.service;
    let service = format!("{}/{}", svc.meta.namespace, svc.meta.name);
    let port = e.info.port.to_string();
    let mut rows = Vec::new();
    for (source, dest, counts) in &s.counts {
        // The internal view (pods → clusterIP) and what outside clients see; the other cells
        // are in the full matrix.
        let shown = matches!((source, dest), (Source::Pod, Destination::ClusterIp))
            || (*source == Source::External && *dest != Destination::ClusterIp);
        if !shown {
            continue;
        }
        let blind = if *source == Source::Pod && *dest == Destination::ClusterIp && s.blind_count > 0 {
            if s.blind_nodes.is_empty() {
                plural(s.blind_count as u64, "node", "nodes")
            } else {
                s.blind_nodes.join(",")
            }
        } else {
            String::new()
        };
        rows.push(Row {
            service: service.clone(),
            port: port.clone(),
            family: e.info.family.as_str(),
            policy: policy_text(m, s.port),
            route: format!("{}→{}", source.as_str(), dest.as_str()),
            counts: counts.clone(),
            blind,
        });
    }
    rows
}

/// The header counts of a `matrix` report: Services, service ports and nodes selected.
pub fn counts(m: &Matrix<'_>, sel: &Selection) -> Summary {
    let ports = sel.port_indices(m);
    let mut services: Vec<(&str, &str)> = ports
        .iter()
        .map(|&p| {
            let s = m.ports[p].service;
            (s.meta.namespace.as_str(), s.meta.name.as_str())
        })
        .collect();
    services.sort_unstable();
    services.dedup();
    let nodes = sel.nodes.as_ref().map_or(m.nodes.len(), Vec::len);
    Summary(vec![
        Count::new("services", "Service", "Services", services.len()),
        Count::new("servicePorts", "service port", "service ports", ports.len()),
        Count::new("nodes", "node", "nodes", nodes),
    ])
}

/// Writes the [header](crate::header), then the summary as aligned text (one line per
/// service port and route); nodes that drop or reject are coloured when `paint` is on.
pub fn write_summary(
    m: &Matrix<'_>,
    sel: &Selection,
    header: &ReportHeader,
    paint: Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
    crate::header::write_text(header, paint, out)?;
    let mut out = crate::display::Terminal::new(out);
    let out: &mut dyn Write = &mut out;
    let mut rows = Vec::new();
    for s in summaries(m, &sel.port_indices(m)) {
        rows.extend(rows_for(m, &s));
    }
    let mode_dependent = rows.iter().any(|r| r.counts.mode_dependent > 0);
    let not_proxied = rows.iter().any(|r| r.counts.not_proxied > 0);
    let mut columns = vec![
        "SERVICE", "PORT", "FAMILY", "POLICY", "ROUTE", "DELIVER", "DROP", "REJECT",
    ];
    if not_proxied {
        columns.push("NOT-PROXIED");
    }
    if mode_dependent {
        columns.push("MODE-DEPENDENT");
    }
    columns.push("BLIND NODES");
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            // Names, the topology-mode value and blind nodes may carry input text.
            let mut cells = vec![
                r.service.clone(),
                r.port.clone(),
                r.family.to_string(),
                r.policy.clone(),
                r.route.clone(),
                r.counts.deliver.to_string(),
                r.counts.drop.to_string(),
                r.counts.reject.to_string(),
            ];
            if not_proxied {
                cells.push(r.counts.not_proxied.to_string());
            }
            if mode_dependent {
                cells.push(r.counts.mode_dependent.to_string());
            }
            cells.push(r.blind.clone());
            cells
                .into_iter()
                .map(|c| crate::display::term(&c).into_owned())
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = columns.iter().map(|h| h.chars().count()).collect();
    for row in &table {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut line = String::new();
    // The verdict a column's non-zero counts stand for (DROP, REJECT, BLIND NODES).
    let verdict_of = |name: &str| match name {
        "DROP" | "BLIND NODES" => Some(VerdictKind::Drop),
        "REJECT" => Some(VerdictKind::Reject),
        _ => None,
    };
    let mut emit = |cells: &[&str], colour: bool, out: &mut dyn Write| -> io::Result<()> {
        line.clear();
        for (i, ((c, w), name)) in cells.iter().zip(&widths).zip(&columns).enumerate() {
            let cell = if i + 1 == cells.len() {
                c.to_string()
            } else {
                // Not `format!`'s width: it panics beyond 65,535.
                let mut cell = crate::display::pad(c, *w);
                cell.push_str("  ");
                cell
            };
            match verdict_of(name) {
                Some(v) if colour && !c.is_empty() && *c != "0" => {
                    let trimmed = cell.trim_end();
                    line.push_str(&paint.verdict(v, trimmed));
                    line.push_str(&cell[trimmed.len()..]);
                }
                _ => line.push_str(&cell),
            }
        }
        writeln!(out, "{}", line.trim_end())
    };
    emit(&columns, false, out)?;
    for row in &table {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        emit(&cells, true, out)?;
    }
    let nodes = m.nodes.len();
    writeln!(
        out,
        "\n{} over {}; kube-proxy {} {}, Kubernetes {}.",
        plural(sel.port_indices(m).len() as u64, "service port", "service ports"),
        plural(nodes as u64, "node", "nodes"),
        m.config.kube_proxy_version,
        match &m.config.data_plane {
            locality_model::matrix::DataPlane::KubeProxy(Some(mode)) => mode.as_str().to_string(),
            locality_model::matrix::DataPlane::KubeProxy(None) => "(mode unknown)".to_string(),
            locality_model::matrix::DataPlane::Other(n) => format!("replaced by {n}"),
            locality_model::matrix::DataPlane::Unknown => "(data plane unknown)".to_string(),
        },
        m.config.kube_version
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use locality_model::matrix::MatrixConfig;
    use locality_model::objects::{ClusterState, Node, Service, ServicePort, TargetPort};

    use super::*;

    #[test]
    fn summaries_on_several_cores_come_in_port_order() {
        let mut state = ClusterState::default();
        for i in 0..3 {
            let mut n = Node::default();
            n.meta.name = format!("n{i}");
            state.nodes.push(n);
        }
        for i in 0..300u16 {
            let mut s = Service::default();
            s.meta.namespace = "ns".into();
            s.meta.name = format!("s{i:03}");
            s.ports.push(ServicePort {
                port: 80 + i,
                target_port: TargetPort::Number(80 + i),
                ..ServicePort::default()
            });
            state.services.push(s);
        }
        let m = Matrix::new(&state, MatrixConfig::default());
        let ports: Vec<usize> = (0..m.ports.len()).collect();
        assert!(ports.len() >= 300, "the parallel path needs many ports");
        let one_by_one: Vec<String> = ports
            .iter()
            .map(|&p| format!("{:?}", m.summary(p, BLIND_LIST_LIMIT)))
            .collect();
        let parallel: Vec<String> = summaries(&m, &ports).iter().map(|s| format!("{s:?}")).collect();
        assert_eq!(parallel, one_by_one);
    }
}
