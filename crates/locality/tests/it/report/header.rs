//! The header every report carries (`locality_report::header`): one snapshot per command
//! of the header as each format renders it, the SIMULATED banner in every format when the
//! input was simulated (and in none otherwise), and the HTML page parsed for anything it
//! would load from the network.

use assert_cmd::Command;
use locality_testkit::files::TempDir;
use serde_json::Value;

/// Reports are stamped with this time (`SOURCE_DATE_EPOCH`): 2026-01-01T00:00:00Z.
const EPOCH: &str = "1767225600";

fn run(args: &[&str]) -> String {
    let out = Command::cargo_bin("locality")
        .expect("locality binary")
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .env_remove("LOCALITY_PROFILE")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
        .args(args)
        .arg("-q")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).expect("utf-8")
}

/// The text header: the lines before the first empty line.
fn text_header(out: &str) -> String {
    out.lines()
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn json_header(out: &str, pointer: &str) -> String {
    let doc: Value = serde_json::from_str(out).expect("JSON");
    serde_json::to_string_pretty(doc.pointer(pointer).expect("a header")).unwrap()
}

/// The YAML document's `header:` block: its line and the indented lines after it.
fn yaml_header(out: &str) -> String {
    let mut lines = out.lines().skip_while(|l| *l != "header:");
    let first = lines.next().expect("a header field");
    std::iter::once(first)
        .chain(lines.take_while(|l| l.starts_with(' ')))
        .collect::<Vec<_>>()
        .join("\n")
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let i = text.find(start).unwrap_or_else(|| panic!("{start} in {text}"));
    let j = text[i..].find(end).unwrap_or_else(|| panic!("{end} in {text}")) + i + end.len();
    &text[i..j]
}

/// Every format of `audit` on the simulated cluster, the header part of each.
fn audit_headers(source: &[&str]) -> String {
    let mut s = String::new();
    let with = |fmt: &str| {
        let mut a = vec!["audit"];
        a.extend_from_slice(source);
        a.extend_from_slice(&["-o", fmt]);
        run(&a)
    };
    s.push_str(&format!("== table\n{}\n", text_header(&with("table"))));
    s.push_str(&format!("== json\n{}\n", json_header(&with("json"), "/header")));
    s.push_str(&format!("== yaml\n{}\n", yaml_header(&with("yaml"))));
    let md = with("markdown");
    s.push_str(&format!(
        "== markdown\n{}\n",
        between(&md, "# Locality audit", "\n\n**").trim_end()
    ));
    let html = with("html");
    s.push_str(&format!(
        "== html\n{}\n",
        between(&html, "<header class=\"report-header\">", "</header>")
    ));
    let sarif: Value = serde_json::from_str(&with("sarif")).unwrap();
    let props = &sarif["runs"][0]["properties"];
    s.push_str(&format!(
        "== sarif run.properties\nsimulated: {}\nbanner: {}\nheader: {}\n",
        props["simulated"],
        props["banner"],
        serde_json::to_string_pretty(&props["header"]).unwrap()
    ));
    let junit = with("junit");
    let props: Vec<&str> = junit
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("name=\"header."))
        .collect();
    s.push_str(&format!("== junit properties\n{}\n", props.join("\n")));
    s
}

#[test]
fn audit_header_in_every_format_simulated() {
    insta::assert_snapshot!("audit_headers_simulated", audit_headers(&["--sim"]));
}

#[test]
fn audit_header_in_every_format_files() {
    insta::assert_snapshot!("audit_headers_files", audit_headers(&["-f", "three-zones.json"]));
}

#[test]
fn matrix_explain_and_simulate_headers() {
    let mut s = String::new();
    for fmt in ["table", "summary"] {
        let out = run(&["matrix", "--sim", "-o", fmt]);
        s.push_str(&format!("== matrix {fmt}\n{}\n", text_header(&out)));
    }
    s.push_str(&format!(
        "== matrix json\n{}\n",
        json_header(&run(&["matrix", "--sim", "-o", "json"]), "/header")
    ));
    s.push_str(&format!(
        "== matrix yaml\n{}\n",
        yaml_header(&run(&["matrix", "--sim", "-o", "yaml"]))
    ));
    let explain = ["explain", "myservice", "--node", "node-c", "--sim"];
    s.push_str(&format!("== explain text\n{}\n", text_header(&run(&explain))));
    let mut json = explain.to_vec();
    json.extend_from_slice(&["-o", "json"]);
    s.push_str(&format!(
        "== explain json\n{}\n",
        json_header(&run(&json), "/header")
    ));
    let simulate = [
        "simulate",
        "--sim",
        "--set",
        "default/myservice:internalTrafficPolicy=Cluster",
    ];
    s.push_str(&format!("== simulate text\n{}\n", text_header(&run(&simulate))));
    let mut json = simulate.to_vec();
    json.extend_from_slice(&["-o", "json"]);
    s.push_str(&format!(
        "== simulate json\n{}\n",
        json_header(&run(&json), "/header")
    ));
    insta::assert_snapshot!("matrix_explain_simulate_headers", s);
}

/// A grep for "simulated" finds every report of a simulated input, and none of a file's.
#[test]
fn simulated_banner_in_every_format() {
    let banner = "SIMULATED cluster";
    let outputs = |source: &[&str], namespace: &str| -> Vec<(String, String)> {
        let mut v = Vec::new();
        for fmt in ["table", "json", "yaml", "markdown", "html", "sarif", "junit"] {
            let mut a = vec!["audit"];
            a.extend_from_slice(source);
            a.extend_from_slice(&["-o", fmt]);
            v.push((format!("audit -o {fmt}"), run(&a)));
        }
        for fmt in ["wide", "summary", "json", "yaml"] {
            let mut a = vec!["matrix"];
            a.extend_from_slice(source);
            a.extend_from_slice(&["-o", fmt]);
            v.push((format!("matrix -o {fmt}"), run(&a)));
        }
        for fmt in ["text", "json"] {
            let mut a = vec!["explain", "myservice", "--node", "node-c", "-n", namespace];
            a.extend_from_slice(source);
            a.extend_from_slice(&["-o", fmt]);
            v.push((format!("explain -o {fmt}"), run(&a)));
        }
        v
    };
    for (what, out) in outputs(&["--sim"], "default") {
        assert!(out.contains(banner), "{what} on --sim has no banner:\n{out}");
    }
    let files = outputs(&["-f", "three-zones.json"], "internal-acceptance");
    for (what, out) in files {
        assert!(!out.contains(banner), "{what} on a file says simulated");
    }
}

/// An HTML tag's name and attributes, as the parser below reads them.
struct Tag {
    name: String,
    attrs: Vec<(String, String)>,
}

/// Reads the tags of a page (names lower-cased; quoted, unquoted and bare attributes) and
/// the text of its `<style>` and `<script>` elements.
fn parse_html(html: &str) -> (Vec<Tag>, Vec<String>) {
    let mut tags = Vec::new();
    let mut raw = Vec::new();
    let b = html.as_bytes();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        i += off + 1;
        if html[i..].starts_with('!') || html[i..].starts_with('/') {
            continue;
        }
        let name_end = html[i..]
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .map_or(html.len(), |n| n + i);
        let name = html[i..name_end].to_ascii_lowercase();
        let mut attrs = Vec::new();
        let mut j = name_end;
        loop {
            while j < b.len() && (b[j] as char).is_whitespace() {
                j += 1;
            }
            if j >= b.len() || b[j] == b'>' || b[j] == b'/' {
                break;
            }
            let key_end = html[j..]
                .find(|c: char| c == '=' || c.is_whitespace() || c == '>')
                .map_or(html.len(), |n| n + j);
            let key = html[j..key_end].to_ascii_lowercase();
            j = key_end;
            let mut value = String::new();
            if j < b.len() && b[j] == b'=' {
                j += 1;
                if b[j] == b'"' || b[j] == b'\'' {
                    let q = b[j] as char;
                    let end = html[j + 1..].find(q).map_or(html.len(), |n| n + j + 1);
                    value = html[j + 1..end].to_string();
                    j = end + 1;
                } else {
                    let end = html[j..]
                        .find(|c: char| c.is_whitespace() || c == '>')
                        .map_or(html.len(), |n| n + j);
                    value = html[j..end].to_string();
                    j = end;
                }
            }
            attrs.push((key, value));
        }
        if name == "style" || name == "script" {
            let close = format!("</{name}>");
            let start = html[j..].find('>').map_or(j, |n| n + j + 1);
            let end = html[start..].find(&close).map_or(html.len(), |n| n + start);
            raw.push(html[start..end].to_string());
        }
        tags.push(Tag { name, attrs });
        i = j;
    }
    (tags, raw)
}

fn is_url(v: &str) -> bool {
    let v = v.trim().to_ascii_lowercase();
    v.starts_with("http:") || v.starts_with("https:") || v.starts_with("//") || v.starts_with("ftp:")
}

/// Nothing on the page is loaded from the network: no attribute names an external URL
/// except the hyperlinks (`<a href>`) to the Kubernetes documentation a reader may follow,
/// and the page's CSS and script fetch nothing.
#[test]
fn html_loads_nothing_from_the_network() {
    let html = run(&["audit", "--sim=telemetry", "-o", "html"]);
    let (tags, raw) = parse_html(&html);
    assert!(
        tags.iter().any(|t| t.name == "header"),
        "the header is on the page"
    );
    assert!(
        tags.iter()
            .any(|t| t.name == "table" && t.attrs.iter().any(|(k, v)| k == "class" && v == "nodes"))
    );
    let mut links = 0;
    for t in &tags {
        assert!(
            !matches!(
                t.name.as_str(),
                "link" | "img" | "iframe" | "object" | "embed" | "base"
            ),
            "<{}> on the page",
            t.name
        );
        for (k, v) in &t.attrs {
            if t.name == "a" && k == "href" {
                links += 1;
                assert!(
                    v.starts_with("https://kubernetes.io/docs/"),
                    "a link outside the docs: {v}"
                );
                continue;
            }
            assert!(!is_url(v), "<{} {k}={v:?}> names an external URL", t.name);
            assert!(!v.contains("url("), "<{} {k}> loads {v}", t.name);
            assert!(k != "src" && k != "srcset", "<{} {k}> on the page", t.name);
        }
    }
    assert!(links > 0, "the findings link their documentation");
    for text in raw {
        for bad in [
            "url(",
            "@import",
            "http:",
            "https:",
            "fetch(",
            "XMLHttpRequest",
            "import(",
        ] {
            assert!(!text.contains(bad), "style or script uses {bad}");
        }
    }
}

/// The chromium binary, when installed (Debian's package is `chromium`).
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// The page as a browser shows it: headless Chromium's DOM has the header and the banner,
/// with the script run (the grid's squares drawn), and a screenshot is written.
#[test]
#[ignore = "needs Debian's chromium (installed by .ci/run): cargo nextest run --profile chromium --run-ignored only"]
fn html_header_renders_in_headless_chromium() {
    let browser = chromium().expect("chromium on PATH");
    let tmp = TempDir::new("chromium");
    let dir = tmp.path().to_path_buf();
    let page = dir.join("audit.html");
    std::fs::write(&page, run(&["audit", "--sim=telemetry", "-o", "html"])).unwrap();
    let url = format!("file://{}", page.display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-dev-shm-usage",
    ];
    let user_data = format!("--user-data-dir={}", dir.join("profile").display());
    let dom = std::process::Command::new(browser)
        .args(common)
        .arg(&user_data)
        .args(["--dump-dom", &url])
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("class=\"report-header\""), "{dom}");
    assert!(dom.contains("class=\"simulated-banner\""), "{dom}");
    assert!(dom.contains("SIMULATED cluster"), "{dom}");
    assert!(dom.contains("class=\"nodes\""), "the Nodes section");
    let shot = dir.join("audit.png");
    let status = std::process::Command::new(browser)
        .args(common)
        .arg(&user_data)
        .arg(format!("--screenshot={}", shot.display()))
        .args(["--window-size=1280,1600", &url])
        .output()
        .expect("chromium runs");
    let png = std::fs::read(&shot)
        .unwrap_or_else(|_| panic!("no screenshot: {}", String::from_utf8_lossy(&status.stderr)));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
}
