//! `locality simulate`: what-if on the simulated cluster (docs/design.md §8.3).

use std::fmt::Write as _;
use std::io::Write;

use locality_model::matrix::{DataPlane, MatrixConfig};
use locality_sim::whatif::{Change, WhatIf, run as what_if};
use locality_sim::{Kind, ObjectKey};

use crate::cli::{SimulateArgs, SimulateOutput};
use crate::error::CliError;
use crate::ui::Ui;
use locality_model::proxy::VerdictKind;
use locality_report::header::{Count, ReportSource, Summary};
use locality_report::style::Paint;

fn secs(ms: u64) -> String {
    format!("{:.1}", ms as f64 / 1000.0)
}

fn change(args: &SimulateArgs) -> Result<Change, CliError> {
    if let Some(r) = &args.rollout {
        let parts: Vec<&str> = r.split('/').collect();
        let kind = match parts.first().map(|k| k.to_ascii_lowercase()).as_deref() {
            Some("daemonset" | "ds") => Kind::DaemonSet,
            Some("deployment" | "deploy") => Kind::Deployment,
            _ => {
                return Err(CliError::usage(format!(
                    "--rollout {r:?}: expected daemonset/NAMESPACE/NAME or deployment/NAMESPACE/NAME"
                )));
            }
        };
        let [_, ns, name] = parts[..] else {
            return Err(CliError::usage(format!(
                "--rollout {r:?}: expected KIND/NAMESPACE/NAME"
            )));
        };
        return Ok(Change::Rollout {
            workload: ObjectKey::new(kind, ns, name),
            max_surge: args.max_surge.clone(),
            max_unavailable: args.max_unavailable.clone(),
        });
    }
    let set = args.set.as_deref().unwrap_or_default();
    let Some((field, value)) = set.split_once('=') else {
        return Err(CliError::usage(format!("--set {set:?}: expected FIELD=VALUE")));
    };
    let service = args.service.as_deref().unwrap_or_default();
    let Some((ns, name)) = service.split_once('/') else {
        return Err(CliError::usage(format!(
            "--service {service:?}: expected NAMESPACE/NAME"
        )));
    };
    Ok(Change::SetService {
        service: ObjectKey::new(Kind::Service, ns, name),
        field: field.to_string(),
        value: value.to_string(),
    })
}

/// Runs `simulate`.
pub fn run(args: &SimulateArgs, ui: &Ui, out: &mut dyn Write) -> Result<(), CliError> {
    let change = change(args)?;
    let mut engine = crate::commands::sim::build_engine(&args.cluster)?;
    engine.run_until(args.at.saturating_mul(1000));
    let modes = crate::commands::sim::proxy_modes(&engine);
    let config = MatrixConfig {
        kube_version: engine.config().kube_version,
        kube_proxy_version: engine.config().kube_proxy_version,
        node_proxy_versions: Default::default(),
        data_plane: DataPlane::KubeProxy((modes.len() == 1).then(|| modes.into_iter().next()).flatten()),
        derive: false,
    };
    ui.status(&format!(
        "what-if on the SIMULATED cluster {:?} (seed {}): verdicts are the model's on the simulated state",
        args.cluster.topology, args.cluster.seed
    ));
    let result = what_if(
        &mut engine,
        &change,
        &config,
        args.step_ms,
        args.limit.saturating_mul(1000),
    )
    .map_err(|e| CliError::usage(e.to_string()))?;
    if let Some(path) = &args.svg {
        std::fs::write(path, svg(args, &result))
            .map_err(|e| CliError::runtime(format!("{}: {e}", path.display())))?;
    }
    let header = crate::report_header(
        "simulate",
        ReportSource::simulated(&args.cluster.topology, args.at),
        true,
        None,
        &config,
        counts(&result),
    );
    match args.output {
        SimulateOutput::Json => {
            let doc = serde_json::json!({
                "apiVersion": "locality/v1",
                "kind": "WhatIf",
                "simulated": true,
                "topology": args.cluster.topology,
                "change": format!("{change:?}"),
                "result": result,
                "header": header,
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default())?;
        }
        SimulateOutput::Text => {
            locality_report::header::write_text(&header, ui.paint(), out)?;
            write!(out, "{}", text(args, &change, &result, ui.paint()))?
        }
    }
    out.flush()?;
    Ok(())
}

/// The header counts of a what-if: service ports that changed verdict, nodes with a drop
/// window, and client pods on them.
fn counts(r: &WhatIf) -> Summary {
    let mut nodes: Vec<&str> = r
        .ports
        .iter()
        .flat_map(|p| p.windows.keys().map(String::as_str))
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    Summary(vec![
        Count::new(
            "servicePorts",
            "service port changed",
            "service ports changed",
            r.ports.len(),
        ),
        Count::new(
            "nodesWithDropWindows",
            "node with a drop window",
            "nodes with a drop window",
            nodes.len(),
        ),
    ])
}

fn text(args: &SimulateArgs, change: &Change, r: &WhatIf, paint: Paint) -> String {
    let mut s = String::new();
    let what = match change {
        Change::Rollout {
            workload,
            max_surge,
            max_unavailable,
        } => format!(
            "rollout of {} {}/{}{}{}",
            workload.kind.as_str(),
            workload.namespace,
            workload.name,
            max_surge
                .as_ref()
                .map_or(String::new(), |v| format!(", maxSurge {v}")),
            max_unavailable
                .as_ref()
                .map_or(String::new(), |v| format!(", maxUnavailable {v}"))
        ),
        Change::SetService {
            service,
            field,
            value,
        } => {
            format!(
                "{field}={value} on Service {}/{}",
                service.namespace, service.name
            )
        }
    };
    let _ = writeln!(
        s,
        "SIMULATED what-if on topology {} (seed {}): {what}",
        args.cluster.topology, args.cluster.seed
    );
    let _ = writeln!(
        s,
        "{} after {} s of virtual time ({} model steps of {} ms).",
        if r.settled { "Settled" } else { "Did NOT settle" },
        secs(r.duration_ms),
        r.steps,
        args.step_ms
    );
    if r.ports.is_empty() {
        let _ = writeln!(s, "\nNo Service port changed verdict on any node.");
        return s;
    }
    for p in &r.ports {
        let _ = writeln!(s, "\n{} {} {}", p.service, p.port, p.family);
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        let _ = writeln!(
            s,
            "  blind before: {}; after: {}",
            list(&p.blind_before),
            list(&p.blind_after)
        );
        if !p.blind_throughout.is_empty() {
            let _ = writeln!(
                s,
                "  blind throughout (before the change too): {}",
                p.blind_throughout.join(", ")
            );
        }
        if p.windows.is_empty() {
            let _ = writeln!(s, "  no drop window during the change");
        } else {
            let w = p.windows.keys().map(String::len).max().unwrap_or(4).max(4);
            let _ = writeln!(
                s,
                "  {:<w$}  CLIENTS  BLIND  DROP WINDOWS (virtual s after the change)",
                "NODE"
            );
            for (node, ws) in &p.windows {
                let total: u64 = ws.iter().map(|x| x.end_ms - x.start_ms).sum();
                let spans: Vec<String> = ws
                    .iter()
                    .map(|x| format!("{}–{}", secs(x.start_ms), secs(x.end_ms)))
                    .collect();
                let blind = format!("{:>5}", format!("{}s", secs(total)));
                let _ = writeln!(
                    s,
                    "  {node:<w$}  {:>7}  {}  {}",
                    p.clients.get(node).copied().unwrap_or(0),
                    if total > 0 {
                        paint.verdict(VerdictKind::Drop, &blind)
                    } else {
                        blind
                    },
                    spans.join(", ")
                );
            }
        }
        let _ = writeln!(
            s,
            "  client traffic the change lost: {:.1}% of client-time over the run",
            p.lost_share * 100.0
        );
    }
    s
}

/// Escapes text for SVG/XML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The timeline as one self-contained SVG: per Service port, a row per node with its drop
/// windows as red bars over virtual time (nodes blind throughout in grey).
fn svg(args: &SimulateArgs, r: &WhatIf) -> String {
    const LEFT: f64 = 160.0;
    const WIDTH: f64 = 720.0;
    const ROW: f64 = 14.0;
    let dur = r.duration_ms.max(1) as f64;
    let x = |ms: u64| LEFT + WIDTH * ms as f64 / dur;
    let mut body = String::new();
    let mut y = 40.0;
    for p in &r.ports {
        let _ = writeln!(
            body,
            r#"<text x="4" y="{y}" font-weight="bold">{} {} {} — client traffic lost {:.1}%</text>"#,
            esc(&p.service),
            esc(&p.port),
            esc(&p.family),
            p.lost_share * 100.0
        );
        y += ROW + 4.0;
        for node in &p.blind_throughout {
            let _ = writeln!(body, r#"<text x="4" y="{}">{}</text>"#, y + 10.0, esc(node));
            let _ = writeln!(
                body,
                r##"<rect x="{LEFT}" y="{y}" width="{WIDTH}" height="{}" fill="#bbb"><title>{} blind throughout</title></rect>"##,
                ROW - 3.0,
                esc(node)
            );
            y += ROW;
        }
        for (node, ws) in &p.windows {
            let _ = writeln!(body, r#"<text x="4" y="{}">{}</text>"#, y + 10.0, esc(node));
            for w in ws {
                let _ = writeln!(
                    body,
                    r##"<rect x="{:.1}" y="{y}" width="{:.1}" height="{}" fill="#d33"><title>{} dropped {}–{} s</title></rect>"##,
                    x(w.start_ms),
                    (x(w.end_ms) - x(w.start_ms)).max(1.0),
                    ROW - 3.0,
                    esc(node),
                    secs(w.start_ms),
                    secs(w.end_ms)
                );
            }
            y += ROW;
        }
        y += 10.0;
    }
    let height = y + 30.0;
    let axis = y + 4.0;
    let mut ticks = String::new();
    for i in 0..=4 {
        let ms = r.duration_ms * i / 4;
        let _ = writeln!(
            ticks,
            r##"<line x1="{0:.1}" y1="30" x2="{0:.1}" y2="{axis}" stroke="#eee"/><text x="{0:.1}" y="{1}" text-anchor="middle">{2} s</text>"##,
            x(ms),
            axis + 14.0,
            secs(ms)
        );
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="monospace" font-size="11">
<title>SIMULATED what-if: {}</title>
<text x="4" y="16">SIMULATED what-if on topology {} (seed {}): drop windows over virtual time (red), blind throughout (grey)</text>
{ticks}{body}</svg>
"#,
        LEFT + WIDTH + 20.0,
        esc(&args.cluster.topology),
        esc(&args.cluster.topology),
        args.cluster.seed
    )
}
