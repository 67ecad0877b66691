//! `report.html` (docs/design.md §6): the ledger as one self-contained page, readable offline. No
//! script, no external stylesheet, font or image: the style is inline and each case's tries
//! are drawn as an inline SVG timeline. Every text that comes from the cluster or the run
//! (pod names, error strings, descriptions) is escaped for HTML.

use std::fmt::Write as _;
use std::path::Path;

use crate::judge::Status;
use crate::options::VerifyOptions;
use crate::record::{CaseRecord, VerifyOutcome, describe};

mod timeline;
use timeline::timeline;

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
    for c in failures_first(&outcome.cases) {
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
    for c in failures_first(&outcome.cases) {
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

/// The cases FAIL first, then INCOMPLETE, NOT_EXECUTED and PASS, each in run order.
fn failures_first(cases: &[CaseRecord]) -> Vec<&CaseRecord> {
    let rank = |c: &CaseRecord| match c.status {
        Status::Fail => 0,
        Status::Incomplete => 1,
        Status::NotExecuted => 2,
        Status::Pass => 3,
    };
    let mut out: Vec<&CaseRecord> = cases.iter().collect();
    out.sort_by_key(|c| rank(c));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{Declared, Role};
    use crate::decision::Decision;
    use crate::probe::{Seen, Try};
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
    fn thousands_of_tries_are_binned_into_few_marks_with_their_count() {
        let tries: Vec<Try> = (0..5_000u128)
            .map(|i| attempt(i * 10, Seen::Timeout, ""))
            .collect();
        let mut o = outcome(tries);
        o.cases[0].expected = Some(crate::expect::Expected::Drop);
        let svg = timeline(&o.cases[0]);
        let marks = svg.matches("<rect ").count();
        // One lane, 640 px in 2-px columns.
        assert!((300..=321).contains(&marks), "{marks} marks");
        assert!(svg.contains("tries from try 1:"), "{svg}");
    }

    #[test]
    fn forbidden_answers_are_red_and_allowed_ones_green() {
        let tries = vec![
            attempt(
                0,
                Seen::Answer {
                    responder: "c-be-n1".into(),
                },
                "",
            ),
            attempt(
                50,
                Seen::Answer {
                    responder: "c-be-n2".into(),
                },
                "",
            ),
        ];
        let mut o = outcome(tries);
        o.cases[0].expected = Some(crate::expect::Expected::Deliver {
            pods: vec!["c-be-n1".into()],
        });
        let svg = timeline(&o.cases[0]);
        assert!(svg.contains("answer: c-be-n1 (1), as expected"), "{svg}");
        assert!(svg.contains("answer: c-be-n2 (1), not expected"), "{svg}");
        let fill = |pod: &str| {
            let at = svg.find(&format!("answer: {pod} (1)")).unwrap();
            let before = &svg[..at];
            let i = before.rfind("background:").unwrap();
            before[i + 11..i + 18].to_string()
        };
        assert_eq!(fill("c-be-n1"), "#2ca02c");
        assert_eq!(fill("c-be-n2"), "#d62728");
    }

    #[test]
    fn failed_cases_come_first() {
        let mut o = outcome(Vec::new());
        let mut pass = o.cases[0].clone();
        pass.id = "A".into();
        pass.status = Status::Pass;
        o.cases.insert(0, pass);
        let order: Vec<&str> = failures_first(&o.cases).iter().map(|c| c.id.as_str()).collect();
        assert_eq!(order, ["C", "A"]);
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
