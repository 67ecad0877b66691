//! The `SimulationReport`'s timeline as one self-contained SVG: per alternative and Service
//! port, a row per node with its drop windows as bars over virtual time (red: no endpoint,
//! orange: endpoints gone before the rules caught up), nodes blind throughout in grey.

use std::fmt::Write as _;

use super::{SimulationReport, secs};

/// Escapes text for SVG/XML content and quoted attributes: [`crate::display::xml`].
fn esc(s: &str) -> String {
    crate::display::xml(s)
}

/// The SVG document.
pub fn svg(r: &SimulationReport) -> String {
    const LEFT: f64 = 160.0;
    const WIDTH: f64 = 720.0;
    const ROW: f64 = 14.0;
    let dur = r
        .alternatives
        .iter()
        .map(|a| a.duration_seconds)
        .fold(0.001, f64::max);
    let x = |s: f64| LEFT + WIDTH * s / dur;
    let mut body = String::new();
    let mut y = 40.0;
    for a in &r.alternatives {
        let _ = writeln!(
            body,
            r#"<text x="4" y="{y}" font-weight="bold">[{}] {}</text>"#,
            esc(&a.name),
            esc(a.outcome.as_str())
        );
        y += ROW + 4.0;
        for p in &a.service_ports {
            let _ = writeln!(
                body,
                r#"<text x="4" y="{y}">{} {} {}</text>"#,
                esc(&p.service),
                esc(&p.port),
                esc(&p.family)
            );
            y += ROW + 2.0;
            for node in &p.blind_throughout {
                let _ = writeln!(body, r#"<text x="4" y="{}">{}</text>"#, y + 10.0, esc(node));
                let _ = writeln!(
                    body,
                    r##"<rect x="{LEFT}" y="{y}" width="{:.1}" height="{}" fill="#bbb"><title>{} blind throughout</title></rect>"##,
                    x(a.duration_seconds) - LEFT,
                    ROW - 3.0,
                    esc(node)
                );
                y += ROW;
            }
            for n in &p.nodes {
                let _ = writeln!(body, r#"<text x="4" y="{}">{}</text>"#, y + 10.0, esc(&n.name));
                for w in &n.windows {
                    let fill = if w.cause == "endpointGone" { "#e80" } else { "#d33" };
                    let _ = writeln!(
                        body,
                        r##"<rect x="{:.1}" y="{y}" width="{:.1}" height="{}" fill="{fill}"><title>{} dropped {}–{} s ({})</title></rect>"##,
                        x(w.start_seconds),
                        (x(w.end_seconds) - x(w.start_seconds)).max(1.0),
                        ROW - 3.0,
                        esc(&n.name),
                        secs(w.start_seconds),
                        secs(w.end_seconds),
                        w.cause
                    );
                }
                y += ROW;
            }
            y += 6.0;
        }
        y += 10.0;
    }
    let height = y + 30.0;
    let axis = y + 4.0;
    let mut ticks = String::new();
    for i in 0..=4 {
        let s = dur * f64::from(i) / 4.0;
        let _ = writeln!(
            ticks,
            r##"<line x1="{0:.1}" y1="30" x2="{0:.1}" y2="{axis}" stroke="#eee"/><text x="{0:.1}" y="{1}" text-anchor="middle">{2} s</text>"##,
            x(s),
            axis + 14.0,
            secs(s)
        );
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="monospace" font-size="11">
<title>SIMULATED what-if</title>
<text x="4" y="16">SIMULATED what-if: drop windows over virtual time (red: no endpoint, orange: endpoint gone before the rules caught up; grey: blind throughout)</text>
{ticks}{body}</svg>
"#,
        LEFT + WIDTH + 20.0
    )
}
