//! `locality audit rules` lists every rule the audit runs, from the rules' own table, and
//! `--help` groups the flags under headings (as ripgrep and nextest do) without pointing at
//! the repository's files.

use super::locality;
use serde_json::Value;

fn run(args: &[&str]) -> String {
    let out = locality().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn audit_rules_lists_every_rule_with_its_severity_fix_and_page() {
    let rules: Vec<Value> = serde_json::from_str(&run(&["audit", "rules", "-o", "json"])).unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let all: Vec<String> = locality_audit::RuleId::ALL
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert_eq!(ids, all);
    for r in &rules {
        for key in ["severity", "title", "fix", "docs"] {
            assert!(!r[key].as_str().unwrap().is_empty(), "{r}");
        }
        assert!(
            r["docs"].as_str().unwrap().starts_with("https://kubernetes.io/"),
            "{r}"
        );
    }
    let text = run(&["audit", "rules"]);
    assert!(
        text.starts_with("LOC001  error    internalTrafficPolicy: Local"),
        "{text}"
    );
    assert!(text.contains("        fix:  "), "{text}");
    assert!(text.contains(&format!("{} rules.", all.len())), "{text}");
    // Rules and files do not mix: `rules` is a subcommand, not an input.
    let out = locality()
        .args(["audit", "rules", "-f", "x.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_groups_the_flags_under_headings_and_points_at_no_repository_file() {
    for (cmd, headings) in [
        (
            "matrix",
            &["Input:", "Cluster:", "Model:", "Selection:", "Output:", "Global:"][..],
        ),
        (
            "explain",
            &["Input:", "Cluster:", "Model:", "Selection:", "Output:", "Global:"][..],
        ),
        (
            "audit",
            &[
                "Input:",
                "Cluster:",
                "Model:",
                "Rules:",
                "Selection:",
                "Output:",
                "Global:",
            ][..],
        ),
    ] {
        let help = run(&[cmd, "--help"]);
        for h in headings {
            assert!(
                help.lines().any(|l| l == *h),
                "{cmd} --help has no {h} heading:\n{help}"
            );
        }
        for pointer in ["docs/", "README", "§", "design.md"] {
            assert!(
                !help.contains(pointer),
                "{cmd} --help points at {pointer}:\n{help}"
            );
        }
    }
    // simulate's usage line fits a terminal.
    let help = run(&["simulate", "--help"]);
    let usage = help.lines().find(|l| l.starts_with("Usage:")).unwrap();
    assert!(usage.len() <= 100, "{usage}");
}
