//! `audit -o html`: one self-contained page with the node grid.

use super::{audit_out, data, locality};
use locality_testkit::files::TempDir;

fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    for bad in ["<link", "<iframe", "<img", "@import", "url("] {
        assert!(!html.contains(bad), "external resource: {bad}");
    }
    assert!(!html.contains(" src="), "no src attributes");
    // The only network references are documentation links in <a href>.
    let refs = html
        .match_indices("http://")
        .chain(html.match_indices("https://"));
    for (i, _) in refs {
        let before = &html[i.saturating_sub(9)..i];
        let url: String = html[i..].chars().take_while(|c| *c != '"' && *c != '<').collect();
        assert!(
            before.ends_with("<a href=\"") && url.starts_with("https://kubernetes.io/docs/"),
            "reference outside a docs link: {url} (after {before:?})"
        );
    }
}

#[test]
fn html_is_one_self_contained_page_with_the_grid() {
    let tmp = TempDir::new("audit-html");
    let dir = tmp.path().to_path_buf();
    let page = dir.join("audit.html");
    let out = locality()
        .args([
            "audit",
            "-f",
            "telemetry-30-nodes.json",
            "-o",
            "html",
            "--output-file",
        ])
        .arg(&page)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(out.is_empty(), "the page goes to --output-file, not stdout");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    // Zones as column groups, one square per node with its verdict, the blind nodes named.
    for zone in ["eu-west-1a", "eu-west-1b", "eu-west-1c"] {
        assert!(html.contains(zone), "{zone}");
    }
    // Each square names its node's zone, roles and client pods (kube-proxy's pod is not one).
    assert!(
        html.contains("title=\"ingress-1 (zone eu-west-1a, roles &lt;none&gt;, 2 client pods): dropped\"")
    );
    assert!(
        html.contains("title=\"worker-01 (zone eu-west-1a, roles &lt;none&gt;, 3 client pods): delivered\"")
    );
    assert!(html.contains("blind on 3: ingress-1, ingress-2, ingress-3"));
    assert_eq!(html.matches("class=\"finding ").count(), 4);
}

#[test]
fn html_without_nodes_says_the_grid_is_unavailable() {
    let chart = data("rendered-chart.yaml");
    let html = audit_out(&[
        "-f",
        chart.to_str().unwrap(),
        "-o",
        "html",
        "--nodes",
        "3",
        "--zones",
        "a,b,c",
    ]);
    assert_self_contained(&html);
    assert!(html.contains("assumed cluster shape"));
}
