//! Text outputs and stderr: annotation values, file names and long values from the input
//! reach the terminal escaped (`\x1b`, `\u{202e}`), never raw, and padded columns take any
//! width.

use super::{HOSTILE, assert_inert, examples, locality};
use locality_testkit::files::TempDir;
use serde_json::Value;

/// `three-zones.json` with `annotations` on its Service, written as `name` in a new
/// directory.
fn annotated(tag: &str, name: &str, annotations: Value) -> (TempDir, std::path::PathBuf) {
    let text = std::fs::read_to_string(examples().join("three-zones.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let svc = doc["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i["kind"] == "Service")
        .unwrap();
    svc["metadata"]["annotations"] = annotations;
    let dir = TempDir::new(tag);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    (dir, path)
}

fn run(args: &[&str], path: &std::path::Path) -> std::process::Output {
    locality().args(args).arg("-f").arg(path).output().unwrap()
}

#[test]
fn annotation_values_are_escaped_in_every_text_output() {
    let (_dir, path) = annotated(
        "hostile-annotations",
        "svc.json",
        serde_json::json!({
            "locality.dev/ignore": format!("LOC001, {HOSTILE}"),
            "locality.dev/ignore-reason": HOSTILE,
            "service.kubernetes.io/topology-mode": HOSTILE,
        }),
    );
    for args in [
        &["audit"][..],
        &["matrix"],
        &["matrix", "-o", "summary"],
        &["explain", "internal-acceptance/myservice", "--node", "node-a"],
    ] {
        let out = run(args, &path);
        let what = args.join(" ");
        assert_inert(&what, &out);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !all.contains("\nLOC001 forged line"),
            "{what}: a forged line\n{all}"
        );
    }
    // Shown escaped, where it is shown at all.
    let out = run(&["matrix", "-o", "summary"], &path);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(r"\x1b]0;pwned\x07") && text.contains(r"\u{202e}"),
        "{text}"
    );
}

#[test]
fn a_file_name_from_a_directory_walk_is_escaped_in_the_header() {
    let (dir, _) = annotated(
        "hostile-file-name",
        "a\u{1b}[2J\u{202e}\nb.json",
        serde_json::json!({}),
    );
    for args in [&["audit"][..], &["matrix"], &["matrix", "-o", "summary"]] {
        let out = locality().args(args).arg("-f").arg(dir.path()).output().unwrap();
        assert_inert(&args.join(" "), &out);
        assert!(String::from_utf8_lossy(&out.stdout).contains(r"a\x1b[2J\u{202e}\nb.json"));
    }
}

#[test]
fn a_value_over_65535_characters_does_not_panic_a_padded_column() {
    let long = "a".repeat(70_000);
    let (_dir, path) = annotated(
        "hostile-long",
        "svc.json",
        serde_json::json!({"service.kubernetes.io/topology-mode": long}),
    );
    for args in [&["matrix", "-o", "summary"][..], &["matrix"], &["audit"]] {
        let out = run(args, &path);
        assert_inert(&args.join(" "), &out);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_warning_quoting_the_input_is_one_inert_line() {
    // An object of a kind locality does not read is named, by its kind, in a warning.
    let text = std::fs::read_to_string(examples().join("three-zones.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["items"].as_array_mut().unwrap().push(serde_json::json!({
        "apiVersion": "example.com/v1",
        "kind": format!("Widget{HOSTILE}"),
        "metadata": {"name": "w", "namespace": "internal-acceptance"}
    }));
    let dir = TempDir::new("hostile-warning");
    let path = dir.join("w.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = run(&["matrix"], &path);
    assert_inert("a warning", &out);
    let err = String::from_utf8_lossy(&out.stderr);
    let warning = err.lines().find(|l| l.contains("Widget")).expect("the warning");
    assert!(warning.contains("forged line"), "one line: {err}");
}
