//! `audit`: renders an [`locality_audit::AuditReport`] (the findings of
//! `locality-audit` and its per-Service summary) in every output format of `locality audit`.
//!
//! One module per format: [`table`] (for people, grouped by severity, 80 columns),
//! [`json`] and [`yaml`] (the stable `locality/v1` `AuditReport` document as-is),
//! [`markdown`] (for pull-request comments), [`junit`] (JUnit XML for CI test reports),
//! [`sarif`] (SARIF 2.1.0 for code-scanning tools)
//! and [`html`] (one self-contained page with a Service × node grid). Renderers format what
//! the audit returns; the only extra inputs are resolved source lines for SARIF
//! ([`sarif::Locations`]) and per-node verdicts for the HTML grid ([`html::Grid`]).

pub mod baseline;
mod grouped;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod sarif;
pub mod table;
pub mod yaml;

use locality_audit::{AuditReport, Finding, ObjectRef, PortRef, ServiceSummary, Severity};

/// `name:port/PROTO`, or `port/PROTO` when the port is unnamed.
pub(crate) fn port_text(p: &PortRef) -> String {
    p.to_string()
}

/// `namespace/name` of the finding's Service.
pub(crate) fn service_text(f: &Finding) -> String {
    format!("{}/{}", f.service.namespace, f.service.name)
}

/// The port and family of a per-port finding (`otlp:4317/TCP IPv4`), empty otherwise.
pub(crate) fn port_family_text(f: &Finding) -> String {
    match (&f.port, f.ip_family) {
        (Some(p), Some(fam)) => format!("{} {}", port_text(p), fam.as_str()),
        (Some(p), None) => port_text(p),
        (None, Some(fam)) => fam.as_str().to_string(),
        (None, None) => String::new(),
    }
}

/// `Kind namespace/name` (`Kind name` for cluster-scoped objects).
pub(crate) fn object_text(o: &ObjectRef) -> String {
    if o.namespace.is_empty() {
        format!("{} {}", o.kind, o.name)
    } else {
        format!("{} {}/{}", o.kind, o.namespace, o.name)
    }
}

/// The policies of a service port in short form (`ITP=Local,TD=PreferSameZone`), `Cluster`
/// when nothing is set.
pub(crate) fn policy_text(s: &ServiceSummary) -> String {
    let mut parts = Vec::new();
    if s.internal_traffic_policy == "Local" {
        parts.push("ITP=Local".to_string());
    }
    if s.external_traffic_policy == Some("Local") {
        parts.push("ETP=Local".to_string());
    }
    if let Some(td) = &s.traffic_distribution {
        parts.push(format!("TD={td}"));
    }
    if let Some(mode) = &s.topology_mode {
        parts.push(format!("topology-mode={mode}"));
    }
    if parts.is_empty() {
        "Cluster".to_string()
    } else {
        parts.join(",")
    }
}

/// The data plane in words: `iptables`, `mode unknown`, `replaced by cilium`, `unknown`.
pub(crate) fn data_plane_text(r: &AuditReport) -> String {
    match (r.data_plane.kind, r.data_plane.mode, &r.data_plane.name) {
        ("kube-proxy", Some(mode), _) => mode.as_str().to_string(),
        ("kube-proxy", None, _) => "mode unknown".to_string(),
        ("other", _, Some(name)) => format!("replaced by {name}"),
        _ => "data plane unknown".to_string(),
    }
}

/// One line about the cluster audited.
pub(crate) fn context_line(r: &AuditReport) -> String {
    let mut s = format!(
        "Kubernetes {}, kube-proxy {} ({}); {} node{}, {} of them running pods",
        r.kubernetes_version,
        r.kube_proxy_version,
        data_plane_text(r),
        r.node_count,
        if r.node_count == 1 { "" } else { "s" },
        r.client_node_count
    );
    if let Some(shape) = &r.assumed_shape {
        s.push_str(&format!(" (assumed: --nodes {}", shape.nodes));
        if !shape.zones.is_empty() {
            s.push_str(&format!(" --zones {}", shape.zones.join(",")));
        }
        s.push(')');
    }
    s
}

/// `2 findings (1 error, 1 warning, 0 info)`, then `, 1 suppressed` when some are.
pub(crate) fn totals_text(r: &AuditReport) -> String {
    let mut s = format!(
        "{} finding{} ({} error{}, {} warning{}, {} info)",
        r.totals.findings,
        if r.totals.findings == 1 { "" } else { "s" },
        r.totals.error,
        if r.totals.error == 1 { "" } else { "s" },
        r.totals.warning,
        if r.totals.warning == 1 { "" } else { "s" },
        r.totals.info
    );
    if r.totals.suppressed > 0 {
        s.push_str(&format!(", {} suppressed", r.totals.suppressed));
    }
    s
}

/// One line per suppressed finding: `LOC004 default/web (port http/TCP): Service
/// default/web annotation locality.dev/ignore: node agent` (the reason when given).
pub(crate) fn suppressed_lines(r: &AuditReport) -> Vec<String> {
    r.suppressed()
        .filter_map(|f| {
            let s = f.suppression.as_ref()?;
            let target = port_family_text(f);
            Some(format!(
                "{} {}{}: {}{}",
                f.rule.as_str(),
                service_text(f),
                if target.is_empty() {
                    String::new()
                } else {
                    format!(" {target}")
                },
                s.source,
                s.justification
                    .as_ref()
                    .map_or_else(|| " (no reason given)".to_string(), |j| format!(": {j}"))
            ))
        })
        .collect()
}

/// `ERRORS`, `WARNINGS`, `INFO`.
pub(crate) fn severity_heading(s: Severity) -> &'static str {
    match s {
        Severity::Error => "Errors",
        Severity::Warning => "Warnings",
        Severity::Info => "Info",
    }
}

/// The nodes of a finding in words, at most `max` of them:
/// `worker-7 (31 pods), worker-8 (12 pods) and 1 more`.
pub(crate) fn nodes_text(f: &Finding, max: usize) -> String {
    let shown: Vec<String> = f
        .nodes
        .iter()
        .take(max)
        .map(|n| {
            format!(
                "{} ({} pod{})",
                n.node,
                n.pods,
                if n.pods == 1 { "" } else { "s" }
            )
        })
        .collect();
    let more = f.node_count.saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Whether a service port belongs in the human summaries: it has findings, a Local policy,
/// or nodes that do not deliver. The others are counted, not listed (`-o json` lists all).
pub(crate) fn is_notable(s: &ServiceSummary) -> bool {
    s.findings > 0
        || s.internal_traffic_policy == "Local"
        || s.external_traffic_policy == Some("Local")
        || s.dropped > 0
        || s.rejected > 0
        || s.mode_dependent > 0
        || s.external
            .iter()
            .any(|e| e.dropped > 0 || e.rejected > 0 || e.mode_dependent > 0)
}

/// Greedy word wrap: the first line starts with `first`, the others with `rest`; no line is
/// longer than `width` columns unless a single word is (a URL): it then stands alone. The
/// text is escaped first ([`crate::display::term`]): a line break or control character in a
/// value is shown (`\n`), never acted on, and cannot start a line of its own.
pub(crate) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let text = crate::display::term(text);
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let len = line.chars().count();
        let w = word.chars().count();
        if !empty && len + 1 + w > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    if !empty || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_respects_width_and_prefixes() {
        let text = "three of thirty client nodes have no usable local endpoint for this port";
        let lines = wrap(text, 30, "  ", "    ");
        assert!(lines.iter().all(|l| l.chars().count() <= 30), "{lines:?}");
        assert!(lines[0].starts_with("  t"));
        assert!(lines[1].starts_with("    "));
        assert_eq!(lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" "), text);
        // A word longer than the width stands alone.
        let long = wrap(
            "see https://kubernetes.io/docs/concepts/services-networking/ now",
            20,
            "",
            "",
        );
        assert_eq!(long.len(), 3);
        assert_eq!(wrap("", 20, "x ", ""), vec!["x".to_string()]);
    }
}
