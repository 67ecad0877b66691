//! `matrix -o summary`: per service port, how many nodes deliver, drop or reject, and which
//! nodes are blind when there are few. Its cost does not grow with nodes × services (see
//! [`Matrix::summary`]).

use std::fmt::Write as _;
use std::io::{self, Write};

use locality_model::matrix::{Matrix, PortSummary, VerdictCounts};
use locality_model::proxy::{Destination, Source};

use crate::matrix::Selection;

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
                format!("{} nodes", s.blind_count)
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

/// Writes the summary as aligned text (no colours; one line per service port and route).
pub fn write_summary(m: &Matrix<'_>, sel: &Selection, out: &mut dyn Write) -> io::Result<()> {
    let mut rows = Vec::new();
    for port in sel.port_indices(m) {
        let s = m.summary(port, BLIND_LIST_LIMIT);
        rows.extend(rows_for(m, &s));
    }
    let mode_dependent = rows.iter().any(|r| r.counts.mode_dependent > 0);
    let not_proxied = rows.iter().any(|r| r.counts.not_proxied > 0);
    let mut header = vec![
        "SERVICE", "PORT", "FAMILY", "POLICY", "ROUTE", "DELIVER", "DROP", "REJECT",
    ];
    if not_proxied {
        header.push("NOT-PROXIED");
    }
    if mode_dependent {
        header.push("MODE-DEPENDENT");
    }
    header.push("BLIND NODES");
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
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
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &table {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut line = String::new();
    let mut emit = |cells: &[&str], out: &mut dyn Write| -> io::Result<()> {
        line.clear();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        writeln!(out, "{}", line.trim_end())
    };
    emit(&header, out)?;
    for row in &table {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        emit(&cells, out)?;
    }
    let nodes = m.nodes.len();
    writeln!(
        out,
        "\n{} service port(s) over {} node(s); kube-proxy {} {}, Kubernetes {}.",
        sel.port_indices(m).len(),
        nodes,
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
