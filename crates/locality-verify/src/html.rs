//! `report.html` (docs/design.md §6): the ledger as one self-contained page, readable offline. No
//! script, no external stylesheet, font or image: the style is inline and each case's tries
//! are drawn as an inline SVG timeline. Every text that comes from the cluster or the run
//! (pod names, error strings, descriptions) is escaped for HTML.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::judge::Status;
use crate::options::VerifyOptions;
use crate::probe::{Seen, Try};
use crate::record::{CaseRecord, VerifyOutcome, describe};

/// Escapes `s` for HTML text and for quoted attribute values: controls, bidi and zero-width
/// characters visibly as on a terminal (`display::term_lines`, line breaks kept for `<pre>`),
/// then `&`, `<`, `>`, `"`, `'`.
pub fn escape(s: &str) -> String {
    html_escape::encode_quoted_attribute(&locality_report::display::term_lines(s)).into_owned()
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em;color:#222;max-width:80em}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.5em}h3{font-size:1em;margin-bottom:.3em}\
.decision{font-size:1.1em;font-weight:bold;padding:.5em .8em;border-left:6px solid #888;background:#f4f4f4}\
.d-ACCEPT{border-color:#2ca02c}.d-REPAIR{border-color:#ff7f0e}.d-RERUN{border-color:#1f77b4}.d-HOLD{border-color:#d62728}\
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#f0f0f0}td.s{font-weight:bold;white-space:nowrap}\
.PASS{color:#2ca02c}.FAIL{color:#d62728}.INCOMPLETE{color:#1f77b4}.NOT_EXECUTED{color:#777}\
pre{background:#f7f7f7;padding:.5em;overflow-x:auto}svg{display:block;margin:.3em 0}\
.legend span{display:inline-block;margin-right:1.2em;font-size:.9em}\
.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}\
.muted{color:#666}";

/// The whole page.
///
/// `evidence_dir` is read for `00-versions.yaml` (embedded as text when present) and for
/// which cases have a `cases/<ID>/` directory to link to.
pub fn report(
    outcome: &VerifyOutcome,
    decision_line: &str,
    opts: &VerifyOptions,
    evidence_dir: &Path,
) -> String {
    let versions = std::fs::read_to_string(evidence_dir.join("00-versions.yaml")).ok();
    let mut s = String::new();
    let run = escape(&opts.run_id);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>locality verify {run}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>locality verify {run}</h1>\n"
    );
    let _ = writeln!(
        s,
        "<p class=\"decision d-{}\">Decision: {}</p>",
        outcome.decision.as_str(),
        escape(decision_line)
    );
    let _ = writeln!(s, "<p class=\"counts\">{}</p>", escape(&outcome.counts()));
    if outcome.interrupted {
        s.push_str(
            "<p class=\"decision d-RERUN\">Interrupted (Ctrl-C): the cases not finished are \
             NOT_EXECUTED; the namespace was cleaned up as at a normal end.</p>\n",
        );
    }
    if !outcome.advice.is_empty() {
        s.push_str("<ul>\n");
        for a in &outcome.advice {
            let _ = writeln!(s, "<li>{}</li>", escape(a));
        }
        s.push_str("</ul>\n");
    }
    let _ = writeln!(
        s,
        "<table>\n<tr><th>Run</th><td>{run}</td></tr>\n<tr><th>Owner</th><td>{}</td></tr>\n\
         <tr><th>Namespace</th><td>{}</td></tr>\n<tr><th>Target</th><td>{}</td></tr>\n</table>",
        escape(&opts.owner),
        escape(&outcome.namespace),
        if opts.simulated {
            "the embedded SIMULATED cluster (a self-test of locality, not evidence about a real data plane)"
        } else {
            "a live cluster"
        }
    );

    s.push_str("<h2>Roles</h2>\n<table>\n<tr><th>Role</th><th>Node</th></tr>\n");
    for (role, node) in &outcome.roles.nodes {
        let _ = writeln!(s, "<tr><td>{}</td><td>{}</td></tr>", role.as_str(), escape(node));
    }
    s.push_str("</table>\n");
    if !outcome.roles.excluded.is_empty() {
        let excluded: Vec<String> = outcome.roles.excluded.iter().map(|e| escape(e)).collect();
        let _ = writeln!(s, "<p class=\"muted\">Left out: {}</p>", excluded.join("; "));
    }

    s.push_str("<h2>Versions</h2>\n");
    match &versions {
        Some(v) => {
            let _ = writeln!(s, "<pre>{}</pre>", escape(v.trim_end()));
        }
        None => s.push_str("<p class=\"muted\">00-versions.yaml was not written.</p>\n"),
    }

    s.push_str(
        "<h2>Ledger</h2>\n<table>\n<tr><th>Case</th><th>Description</th><th>Expected</th>\
         <th>Observed</th><th>Status</th><th>Evidence</th></tr>\n",
    );
    for c in &outcome.cases {
        let id = escape(&c.id);
        let expected = c
            .expected
            .as_ref()
            .map_or_else(|| crate::record::declared_text(c), describe);
        let docs = if c.docs.starts_with("https://") {
            format!(" <a href=\"{}\">docs</a>", escape(&c.docs))
        } else {
            String::new()
        };
        // Cases not executed have no evidence directory.
        let link = if evidence_dir.join("cases").join(&c.id).is_dir() {
            format!("<a href=\"cases/{id}/\">cases/{id}/</a>")
        } else {
            "none".to_string()
        };
        let _ = writeln!(
            s,
            "<tr id=\"row-{id}\"><td><a href=\"#case-{id}\">{id}</a>{}</td><td>{}{docs}</td><td>{}</td>\
             <td>{}</td><td class=\"s {st}\">{st}</td><td>{link}</td></tr>",
            if c.control { " (control)" } else { "" },
            escape(&c.description),
            escape(&expected),
            escape(&c.why),
            st = c.status.as_str(),
        );
    }
    s.push_str("</table>\n");

    s.push_str(
        "<h2>Tries</h2>\n<p class=\"muted\">Per case, one mark per try: x is the send time \
         after the case's first try, the mark's width the time until the answer; one row per \
         outcome.</p>\n",
    );
    for c in &outcome.cases {
        let id = escape(&c.id);
        let _ = writeln!(
            s,
            "<section id=\"case-{id}\">\n<h3>{id}: <span class=\"{st}\">{st}</span></h3>",
            st = c.status.as_str()
        );
        if c.tries.is_empty() {
            let why = if c.status == Status::NotExecuted {
                format!("not executed: {}", c.why)
            } else {
                "no tries".to_string()
            };
            let _ = writeln!(s, "<p class=\"muted\">{}</p>", escape(&why));
        } else {
            s.push_str(&timeline(c));
        }
        s.push_str("</section>\n");
    }
    let _ = writeln!(
        s,
        "<p class=\"muted\">Owner: {}. Evidence checksums: SHA256SUMS (this file included).</p>\n</body>\n</html>",
        escape(&opts.owner)
    );
    s
}

/// A try's outcome as the timeline draws it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Lane {
    Answer(String),
    Timeout,
    Refused,
    Other,
    Incomplete,
}

impl Lane {
    fn of(t: &Try) -> Lane {
        match &t.seen {
            Seen::Answer { responder } => Lane::Answer(responder.clone()),
            Seen::Timeout => Lane::Timeout,
            Seen::Refused => Lane::Refused,
            Seen::Other => Lane::Other,
            Seen::Incomplete => Lane::Incomplete,
        }
    }

    fn label(&self) -> String {
        match self {
            Lane::Answer(pod) => format!("answer: {pod}"),
            Lane::Timeout => "timeout".into(),
            Lane::Refused => "refused".into(),
            Lane::Other => "other error".into(),
            Lane::Incomplete => "incomplete".into(),
        }
    }
}

/// Colours of responders, in the order of their names.
const ANSWER_COLOURS: [&str; 8] = [
    "#2ca02c", "#1f77b4", "#17becf", "#bcbd22", "#9467bd", "#e377c2", "#8c564b", "#7f7f7f",
];

fn colour(lane: &Lane, answer_index: usize) -> &'static str {
    match lane {
        Lane::Answer(_) => ANSWER_COLOURS[answer_index % ANSWER_COLOURS.len()],
        Lane::Timeout => "#d62728",
        Lane::Refused => "#ff7f0e",
        Lane::Other => "#6b3e26",
        Lane::Incomplete => "#c7c7c7",
    }
}

/// Shortens a lane label for the SVG's left margin (the full text is in its tooltip).
fn short(label: &str) -> String {
    const MAX: usize = 30;
    if label.chars().count() <= MAX {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(MAX - 1).collect();
        s.push('…');
        s
    }
}

/// One case's tries as an inline SVG (one row per outcome, x = send time since the case's
/// first try) with a legend.
fn timeline(c: &CaseRecord) -> String {
    const LEFT: f64 = 220.0;
    const PLOT: f64 = 640.0;
    const ROW: f64 = 18.0;
    const TOP: f64 = 6.0;
    let t0 = c.tries.iter().map(|t| t.sent_ms).min().unwrap_or(0);
    let end = c
        .tries
        .iter()
        .map(|t| t.received_ms.max(t.sent_ms))
        .max()
        .unwrap_or(t0);
    let span = (end - t0).max(1) as f64;
    let x = |ms: u128| LEFT + (ms.saturating_sub(t0)) as f64 / span * PLOT;

    let mut lanes: BTreeMap<Lane, usize> = BTreeMap::new();
    for t in &c.tries {
        *lanes.entry(Lane::of(t)).or_default() += 1;
    }
    let rows: Vec<&Lane> = lanes.keys().collect();
    let mut colours: BTreeMap<&Lane, &'static str> = BTreeMap::new();
    let mut answers = 0;
    for lane in &rows {
        colours.insert(lane, colour(lane, answers));
        if matches!(lane, Lane::Answer(_)) {
            answers += 1;
        }
    }
    let height = TOP + rows.len() as f64 * ROW + 28.0;
    let width = LEFT + PLOT + 20.0;
    let id = escape(&c.id);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"tries of case {id}\" \
         font-family=\"sans-serif\" font-size=\"11\">"
    );
    for (i, lane) in rows.iter().enumerate() {
        let y = TOP + i as f64 * ROW;
        let label = lane.label();
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"><title>{}</title>{}</text>\
             <line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>",
            LEFT - 6.0,
            y + 12.0,
            escape(&label),
            escape(&short(&label)),
            y + ROW / 2.0,
            LEFT + PLOT,
            y + ROW / 2.0,
        );
    }
    for (n, t) in c.tries.iter().enumerate() {
        let lane = Lane::of(t);
        let row = rows.iter().position(|l| **l == lane).unwrap_or(0);
        let y = TOP + row as f64 * ROW + 4.0;
        let x0 = x(t.sent_ms);
        let w = (x(t.received_ms.max(t.sent_ms)) - x0).max(2.0);
        let fill = colours.get(&lane).copied().unwrap_or("#000");
        let mut tip = format!(
            "try {}: +{} ms, {} → {} ({}), {} in {} ms",
            n + 1,
            t.sent_ms.saturating_sub(t0),
            t.client,
            t.target,
            t.protocol,
            lane.label(),
            t.received_ms.saturating_sub(t.sent_ms)
        );
        if !matches!(t.seen, Seen::Answer { .. }) && !t.raw.is_empty() {
            let _ = write!(tip, ": {}", t.raw);
        }
        let _ = writeln!(
            s,
            "<rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"10\" fill=\"{fill}\" \
             fill-opacity=\"0.8\"><title>{}</title></rect>",
            escape(&tip)
        );
    }
    let axis = TOP + rows.len() as f64 * ROW + 4.0;
    // Rollout cases: where N1's endpoints changed phase, as the slices showed it.
    for tr in c.transitions.iter().filter(|tr| (t0..=end).contains(&tr.at_ms)) {
        let tx = x(tr.at_ms);
        let _ = writeln!(
            s,
            "<line class=\"transition\" x1=\"{tx:.1}\" y1=\"{TOP}\" x2=\"{tx:.1}\" y2=\"{axis:.1}\" \
             stroke=\"#555\" stroke-dasharray=\"3,3\"><title>{}: +{} ms</title></line>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\" fill=\"#555\">{}</text>",
            escape(&tr.phase),
            tr.at_ms.saturating_sub(t0),
            tx + 2.0,
            axis - 2.0,
            escape(&tr.phase)
        );
    }
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{axis:.1}\" x2=\"{:.1}\" y2=\"{axis:.1}\" stroke=\"#444\"/>\
         <text x=\"{LEFT}\" y=\"{:.1}\">0 s</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{:.2} s</text>",
        LEFT + PLOT,
        axis + 14.0,
        LEFT + PLOT,
        axis + 14.0,
        (end - t0) as f64 / 1000.0
    );
    s.push_str("</svg>\n<p class=\"legend\">");
    for (lane, count) in &lanes {
        let _ = write!(
            s,
            "<span><i style=\"background:{}\"></i>{} ({count})</span>",
            colours.get(lane).copied().unwrap_or("#000"),
            escape(&lane.label())
        );
    }
    s.push_str("</p>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{Declared, Role};
    use crate::decision::Decision;
    use crate::roles::Roles;

    fn attempt(sent_ms: u128, seen: Seen, raw: &str) -> Try {
        Try {
            channel: "proxy",
            client: "client-n1".into(),
            target: "10.96.0.10:80".into(),
            protocol: "http",
            sent_ms,
            received_ms: sent_ms + 40,
            seen,
            raw: raw.into(),
        }
    }

    fn outcome(tries: Vec<Try>) -> VerifyOutcome {
        VerifyOutcome {
            decision: Decision::Hold,
            cases: vec![CaseRecord {
                id: "C".into(),
                control: false,
                description: "ITP Local & no local <endpoint>".into(),
                guarantee: String::new(),
                docs: "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/"
                    .into(),
                client_node: Some("node-c".into()),
                declared: Declared::Timeout,
                expected: None,
                reason: String::new(),
                status: Status::Fail,
                why: "answered by <b>evil</b>".into(),
                rounds: 1,
                tries,
                nodes: Vec::new(),
                lag_over_limit: None,
                transitions: Vec::new(),
            }],
            advice: vec!["a \"quoted\" advice".into()],
            rerun: Vec::new(),
            evidence: "e".into(),
            roles: Roles {
                nodes: [(Role::N1, "node-<a>".to_string())].into_iter().collect(),
                excluded: Vec::new(),
                zones: Default::default(),
                shape: String::new(),
            },
            namespace: "locality-verify-t".into(),
            interrupted: false,
            partial: None,
            sampled: None,
            uncovered: Vec::new(),
            unprobed_nodes: Vec::new(),
            repairs: Vec::new(),
            lagging: Vec::new(),
            planes: Default::default(),
            simulated: false,
        }
    }

    fn options() -> VerifyOptions {
        VerifyOptions {
            live: Default::default(),
            only: Vec::new(),
            evidence: "e".into(),
            keep: false,
            run_id: "r1".into(),
            simulated: true,
            owner: "o'wner".into(),
            pod_ready_timeout: std::time::Duration::from_secs(1),
            settle: std::time::Duration::from_secs(1),
            proxy_lag_timeout: std::time::Duration::from_secs(1),
            max_proxy_lag: std::time::Duration::from_secs(5),
            proxy_mode: None,
            max_nodes: None,
            request_timeout: crate::cluster::DEFAULT_REQUEST_TIMEOUT,
            external_cases: false,
            images: Default::default(),
            target_args: Vec::new(),
        }
    }

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<pod a="1">&'"#),
            "&lt;pod a=&quot;1&quot;&gt;&amp;&#x27;"
        );
        assert_eq!(escape("web-a"), "web-a");
    }

    #[test]
    fn pod_names_and_errors_from_the_cluster_are_escaped() {
        let tries = vec![
            attempt(
                1_000,
                Seen::Answer {
                    responder: "<script>alert(1)</script>".into(),
                },
                "{}",
            ),
            attempt(1_500, Seen::Timeout, "dial <tcp> i/o timeout & more"),
            attempt(2_000, Seen::Refused, "connection refused"),
            attempt(2_100, Seen::Incomplete, "HTTP 503: <html>"),
        ];
        let html = report(&outcome(tries), "HOLD <x>", &options(), Path::new("/nonexistent"));
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("dial &lt;tcp&gt; i/o timeout &amp; more"), "{html}");
        assert!(!html.contains("<b>evil") && html.contains("&lt;b&gt;evil"));
        assert!(html.contains("node-&lt;a&gt;") && html.contains("o&#x27;wner"));
        // The counts by status, under the decision.
        assert!(
            html.contains("<p class=\"counts\">1 case: 0 PASS, 1 FAIL, 0 INCOMPLETE, 0 NOT_EXECUTED</p>"),
            "{html}"
        );
        assert!(html.contains("HOLD &lt;x&gt;") && html.contains("&quot;quoted&quot;"));
        assert!(!html.contains("<html>"), "an error body must not open markup");
        // One mark per try, a legend entry per outcome, x relative to the first try.
        assert_eq!(html.matches("<rect ").count(), 4);
        for label in ["timeout (1)", "refused (1)", "incomplete (1)"] {
            assert!(html.contains(label), "{label}: {html}");
        }
        assert!(html.contains("try 1: +0 ms") && html.contains("try 2: +500 ms"));
        assert!(
            !html.contains("href=\"cases/C/\""),
            "no evidence directory to link to"
        );
        let dir = locality_testkit::files::TempDir::new("html");
        std::fs::create_dir_all(dir.join("cases/C")).unwrap();
        std::fs::write(dir.join("00-versions.yaml"), "server: v1.35.0 <sim>\n").unwrap();
        let html = report(&outcome(Vec::new()), "HOLD", &options(), &dir);
        assert!(html.contains("<a href=\"cases/C/\">cases/C/</a>"));
        assert!(html.contains("<pre>server: v1.35.0 &lt;sim&gt;</pre>"), "{html}");
    }

    #[test]
    fn rollout_phases_are_drawn_where_the_slices_showed_them() {
        let tries = vec![
            attempt(1_000, Seen::Timeout, ""),
            attempt(3_000, Seen::Timeout, ""),
        ];
        let mut o = outcome(tries);
        o.cases[0].transitions = vec![
            crate::record::Transition {
                at_ms: 2_000,
                phase: "NoLocal".into(),
            },
            // Outside the tries' span: not drawn.
            crate::record::Transition {
                at_ms: 9_000,
                phase: "NewReady".into(),
            },
        ];
        let html = report(&o, "HOLD", &options(), Path::new("/nonexistent"));
        assert_eq!(html.matches("class=\"transition\"").count(), 1, "{html}");
        assert!(html.contains("<title>NoLocal: +1000 ms</title>"), "{html}");
        // About halfway through the plot (x from 220 to 860): between the two tries.
        let at = html.find("class=\"transition\" x1=\"").unwrap() + "class=\"transition\" x1=\"".len();
        let x: f64 = html[at..].split('"').next().unwrap().parse().unwrap();
        assert!((500.0..560.0).contains(&x), "{x}");
        assert!(!html.contains("NewReady"));
    }

    #[test]
    fn a_case_without_tries_has_no_timeline() {
        let mut o = outcome(Vec::new());
        o.cases[0].status = Status::NotExecuted;
        o.cases[0].why = "interrupted".into();
        let html = report(&o, "RERUN", &options(), Path::new("/nonexistent"));
        assert!(!html.contains("<svg"));
        assert!(html.contains("not executed: interrupted"));
    }
}
