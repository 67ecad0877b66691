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

/// three-zones.json with `HOSTILE` in the first Service's free-text annotations.
fn hostile_dump(dir: &TempDir) -> std::path::PathBuf {
    let text = std::fs::read_to_string(examples().join("three-zones.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let svc = doc["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i["kind"] == "Service")
        .unwrap();
    svc["metadata"]["annotations"] = serde_json::json!({
        "locality.dev/ignore": format!("LOC001, {HOSTILE}"),
        "locality.dev/ignore-reason": HOSTILE,
        "service.kubernetes.io/topology-mode": HOSTILE,
    });
    let path = dir.join("svc.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    path
}

/// JSON, YAML, SARIF, JUnit and HTML carry outside text escaped in their own syntax (JSON
/// and YAML: `\uXXXX`, which parses back to the same text), never raw.
#[test]
fn structured_outputs_escape_unsafe_characters_in_their_own_syntax() {
    let dir = TempDir::new("hostile-structured");
    let path = hostile_dump(&dir);
    let file = path.to_str().unwrap();
    let node = "node-a";
    let runs: Vec<(String, Vec<&str>)> = ["json", "yaml", "sarif", "junit", "html"]
        .iter()
        .map(|o| (format!("audit -o {o}"), vec!["audit", "-o", o, "-f", file]))
        .chain(
            ["json", "yaml"]
                .iter()
                .map(|o| (format!("matrix -o {o}"), vec!["matrix", "-o", o, "-f", file])),
        )
        .chain([(
            "explain -o json".to_string(),
            vec![
                "explain",
                "internal-acceptance/myservice",
                "--node",
                node,
                "-o",
                "json",
                "-f",
                file,
            ],
        )])
        .collect();
    for (what, args) in runs {
        let out = locality().args(&args).output().unwrap();
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_inert(&what, &out);
        let text = String::from_utf8(out.stdout).unwrap();
        let parsed: Option<Value> = if what.ends_with("json") || what.ends_with("sarif") {
            Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}")))
        } else if what.ends_with("yaml") {
            Some(serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}")))
        } else {
            None
        };
        if let Some(doc) = parsed {
            assert!(
                contains_string(&doc, "\u{202e}evil"),
                "{what}: the text is kept, escaped: {text}"
            );
        }
    }
    // The YAML report written this way is read back as a baseline.
    let base = dir.join("base.yaml");
    let out = locality()
        .args(["audit", "-o", "yaml", "-f", file])
        .output()
        .unwrap();
    std::fs::write(&base, &out.stdout).unwrap();
    let out = locality()
        .args(["audit", "-o", "table", "-f", file, "--baseline"])
        .arg(&base)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn contains_string(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => s.contains(needle),
        Value::Array(a) => a.iter().any(|x| contains_string(x, needle)),
        Value::Object(o) => o.values().any(|x| contains_string(x, needle)),
        _ => false,
    }
}
