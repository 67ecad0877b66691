//! `explain`: a route's explanation in plain words, or as data.

use std::io::{self, Write};

use locality_model::explain::{Explanation, Usability};
use locality_model::proxy::VerdictKind;
use serde::Serialize;

use crate::display::Term as T;
use crate::header::{Count, ReportHeader, Summary, plural};
use crate::matrix::API_VERSION;
use crate::style::Paint;

/// The JSON document of `explain -o json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplanationDoc<'a> {
    /// Always `locality/v1`.
    pub api_version: &'static str,
    /// Always `Explanation`.
    pub kind: &'static str,
    /// One per service port and family explained.
    pub explanations: &'a [Explanation],
    /// What the report is a report of ([`crate::header`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<&'a ReportHeader>,
}

/// The header counts of an `explain` report: explanations, and how many deliver, drop,
/// reject or are not proxied.
pub fn counts(explanations: &[Explanation]) -> Summary {
    let n = |v: VerdictKind| explanations.iter().filter(|e| e.verdict == v).count();
    Summary(vec![
        Count::new("explanations", "explanation", "explanations", explanations.len()),
        Count::new("delivered", "delivered", "delivered", n(VerdictKind::Deliver)),
        Count::new("dropped", "dropped", "dropped", n(VerdictKind::Drop)),
        Count::new("rejected", "rejected", "rejected", n(VerdictKind::Reject)),
        Count::new(
            "notProxied",
            "not proxied",
            "not proxied",
            n(VerdictKind::NotProxied),
        ),
    ])
}

/// Writes explanations as JSON, with `header`.
pub fn write_json(
    explanations: &[Explanation],
    header: &ReportHeader,
    out: &mut dyn Write,
) -> io::Result<()> {
    let doc = ExplanationDoc {
        api_version: API_VERSION,
        kind: "Explanation",
        explanations,
        header: Some(header),
    };
    crate::encode::json_pretty(&doc, &mut *out)?;
    writeln!(out)
}

/// Writes the [header](crate::header), then explanations in words; the verdict is
/// coloured when `paint` is on.
pub fn write_text(
    explanations: &[Explanation],
    header: &ReportHeader,
    paint: Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
    crate::header::write_text(header, paint, out)?;
    let mut out = crate::display::Terminal::new(out);
    let out: &mut dyn Write = &mut out;
    for (i, e) in explanations.iter().enumerate() {
        if i > 0 {
            writeln!(out, "\n{}\n", "─".repeat(60))?;
        }
        write_one(e, paint, out)?;
    }
    Ok(())
}

fn write_one(e: &Explanation, paint: Paint, out: &mut dyn Write) -> io::Result<()> {
    let zone = e
        .zone
        .as_deref()
        .map(|z| format!(" (zone {})", T(z)))
        .unwrap_or_else(|| " (no zone label)".into());
    writeln!(
        out,
        "Service {} port {} ({}) on node {}{}",
        T(&e.service),
        T(&e.port),
        e.ip_family,
        T(&e.node),
        zone
    )?;
    let source = match e.source {
        locality_model::proxy::Source::Pod => format!("a pod on {}", T(&e.node)),
        locality_model::proxy::Source::Host => format!("{} itself (host network)", T(&e.node)),
        locality_model::proxy::Source::External => {
            format!("a client outside the cluster, arriving at {}", T(&e.node))
        }
    };
    writeln!(out, "Traffic:  {source} → {}", e.destination.as_str())?;
    writeln!(out, "Policy:   {}", T(&e.policy.join("; ")))?;
    if !e.defaulted.is_empty() {
        writeln!(out, "Read as applied (the input left these out):")?;
        for d in &e.defaulted {
            writeln!(out, "  {}", T(d))?;
        }
    }
    let source_name = match e.endpoint_source {
        locality_model::matrix::EndpointSource::EndpointSlices => "observed EndpointSlices",
        locality_model::matrix::EndpointSource::Derived => {
            "EndpointSlices derived from pods (no slices in the input)"
        }
        locality_model::matrix::EndpointSource::Mirrored => {
            "EndpointSlices mirrored from the Endpoints object (selector-less Service)"
        }
    };
    writeln!(out, "\n1. Endpoints ({}, {source_name}):", e.endpoints.len())?;
    if e.endpoints.is_empty() {
        writeln!(out, "   none")?;
    }
    for ep in &e.endpoints {
        let usability = match ep.usability {
            Usability::Ready => "ready",
            Usability::ServingTerminating => "serving-terminating",
            Usability::Unusable => "unusable",
        };
        let mut hints = Vec::new();
        if !ep.zone_hints.is_empty() {
            hints.push(format!("zones {}", ep.zone_hints.join(",")));
        }
        if !ep.node_hints.is_empty() {
            hints.push(format!("nodes {}", ep.node_hints.join(",")));
        }
        let hints = if hints.is_empty() {
            String::new()
        } else {
            format!("; hints for {}", T(&hints.join(" and ")))
        };
        writeln!(
            out,
            "   {} on {}{}: {usability}{} — {}{hints}",
            T(&ep.endpoint),
            T(ep.node.as_deref().unwrap_or("(no nodeName)")),
            if ep.local { " (local)" } else { "" },
            match (ep.in_cluster_set, ep.in_local_set) {
                (true, true) => ", in the cluster and local sets",
                (true, false) => ", in the cluster set",
                (false, true) => ", in the local set",
                (false, false) => "",
            },
            T(&ep.why)
        )?;
    }
    writeln!(out, "\n2. Topology hints:")?;
    for t in &e.topology {
        writeln!(out, "   - {}", T(t))?;
    }
    let set = |s: Option<usize>| match s {
        None => "not used".to_string(),
        Some(n) => plural(n as u64, "endpoint", "endpoints"),
    };
    writeln!(
        out,
        "\n3. Endpoint sets on {}: cluster {}, local {}",
        T(&e.node),
        set(e.cluster_set),
        set(e.local_set)
    )?;
    writeln!(out, "\n4. Trace:")?;
    for (i, step) in e.trace.iter().enumerate() {
        writeln!(out, "   {}. [{}] {}", i + 1, step.step, T(&step.detail))?;
    }
    let verdict = match e.verdict {
        VerdictKind::Deliver => format!("DELIVER to {}", T(&e.delivered_to.join(", "))),
        VerdictKind::Drop => "DROP".to_string(),
        VerdictKind::Reject => "REJECT".to_string(),
        VerdictKind::NotProxied => "NOT PROXIED".to_string(),
    };
    if e.by_mode.is_empty() {
        writeln!(
            out,
            "\nVerdict:    {} ({})",
            paint.verdict(e.verdict, &verdict),
            e.reason.as_str()
        )?;
        writeln!(out, "Client sees: {}", T(e.client_sees))?;
    } else {
        writeln!(
            out,
            "\nVerdict:    depends on the proxy mode, which is not known (--proxy-mode):"
        )?;
        for m in &e.by_mode {
            writeln!(
                out,
                "            {}: {} ({}): the client sees {}",
                m.mode,
                m.verdict.as_str(),
                m.reason.as_str(),
                m.verdict.client_sees()
            )?;
        }
    }
    if let Some(a) = &e.session_affinity {
        writeln!(
            out,
            "Spread:     sessionAffinity ClientIP: each client address sticks to one of these endpoints (which one is not predictable) for {}s after its last new connection; not uniform",
            a.client_ip.timeout_seconds
        )?;
    }
    if !e.source_ranges.is_empty() {
        writeln!(
            out,
            "Only from:  clients inside loadBalancerSourceRanges [{}]; from anywhere else kube-proxy drops the connection (a timeout)",
            T(&e.source_ranges.join(", "))
        )?;
    }
    if e.verdict == VerdictKind::Deliver {
        writeln!(
            out,
            "Source IP:  {}",
            if e.masquerade {
                "masqueraded to the node"
            } else {
                "preserved"
            }
        )?;
    }
    writeln!(
        out,
        "Confidence: {} ({})",
        e.confidence.as_str(),
        T(e.confidence_note)
    )?;
    for note in &e.missing_notes {
        writeln!(out, "            lowered: {}", T(note))?;
    }
    if !e.remedies.is_empty() {
        writeln!(out, "\nWhat would change it:")?;
        for r in &e.remedies {
            writeln!(out, "   - {}", T(r))?;
        }
    }
    Ok(())
}
