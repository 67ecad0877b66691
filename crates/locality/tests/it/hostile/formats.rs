//! Markdown and SVG under hostile input: `audit -o markdown` lets no `@org/team` mention
//! through (GitHub would notify the team), `simulate -o markdown` keeps its rows and
//! headings whole, `simulate --svg` stays well-formed XML.

use locality_testkit::files::TempDir;
use serde_json::Value;

use super::{HOSTILE, assert_inert, examples, locality};

/// A text no Markdown line or table row may break on, with a mention.
const MARKDOWN_HOSTILE: &str = "cc @acme/sre-team | col\n# Forged heading\n<img src=x onerror=alert(1)>";

#[test]
fn audit_markdown_mentions_nobody() {
    let text = std::fs::read_to_string(examples().join("three-zones.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let svc = doc["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i["kind"] == "Service")
        .unwrap();
    svc["metadata"]["annotations"] = serde_json::json!({
        "locality.dev/ignore": format!("LOC001, @acme/sre-team"),
        "locality.dev/ignore-reason": MARKDOWN_HOSTILE,
    });
    let dir = TempDir::new("hostile-md");
    let path = dir.join("svc.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = locality()
        .args(["audit", "-o", "markdown", "-f"])
        .arg(&path)
        .output()
        .unwrap();
    assert_inert("audit -o markdown", &out);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("acme/sre-team"), "the value is shown:\n{md}");
    assert_no_bare_mention(&md);
    assert!(
        !md.lines().any(|l| l.starts_with("# Forged")),
        "a forged heading:\n{md}"
    );
    assert!(
        md.match_indices("<img").all(|(i, _)| md[..i].ends_with('\\')),
        "raw HTML:\n{md}"
    );
}

/// Every `@` of `md` opens a code span, where GitHub does not mention anyone.
fn assert_no_bare_mention(md: &str) {
    for (i, _) in md.match_indices('@') {
        assert!(
            md[..i].ends_with('`'),
            "a bare mention at byte {i}: {:?}",
            md[i..].lines().next()
        );
    }
}

/// `simulate` with a hostile `topology-mode` value set on the telemetry Service.
fn simulate(extra: &[&str]) -> std::process::Output {
    locality()
        .args([
            "simulate",
            "--sim=telemetry",
            "--set",
            &format!("telemetry/agent:topology-mode={HOSTILE}{MARKDOWN_HOSTILE}"),
            "-q",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn simulate_markdown_rows_and_headings_stay_whole() {
    let out = simulate(&["-o", "markdown"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_inert("simulate -o markdown", &out);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("Forged heading"), "the value is shown:\n{md}");
    assert!(
        !md.lines().any(|l| l.starts_with("# Forged")),
        "a forged heading:\n{md}"
    );
    for l in md.lines().filter(|l| l.starts_with('|')) {
        // Unescaped pipes only: as many as the header row has.
        let cells = l.replace("\\|", "").matches('|').count();
        let header = md.lines().find(|h| h.starts_with("| ALTERNATIVE")).unwrap();
        if l.contains("---") || header.matches('|').count() != cells {
            assert!(l.contains("---") || cells == 5 || cells == 8, "a broken row: {l}");
        }
    }
    assert_no_bare_mention(&md);
}

#[test]
fn simulate_svg_is_well_formed_xml() {
    let dir = TempDir::new("hostile-svg");
    let svg = dir.join("t.svg");
    let out = simulate(&["--svg", svg.to_str().unwrap(), "-o", "text"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_inert("simulate -o text", &out);
    let text = std::fs::read_to_string(&svg).unwrap();
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut elements = 0;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(quick_xml::events::Event::Text(t)) => {
                let s = t.decode().expect("text");
                assert!(
                    !s.chars()
                        .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')),
                    "a control character in the SVG text: {s:?}"
                );
            }
            Ok(quick_xml::events::Event::Start(_) | quick_xml::events::Event::Empty(_)) => elements += 1,
            Ok(_) => {}
            Err(e) => panic!("not well-formed at {}: {e}", reader.error_position()),
        }
    }
    assert!(elements > 3);
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')),
        "XML 1.0 cannot carry a raw control character"
    );
}
