//! The bad-input catalogue at the binary edge: every command that reads objects (`matrix`,
//! `audit`, `explain`) exits 2 with one clear message naming the file and line:column, and
//! never panics. The full catalogue (52 cases) is in `crates/locality-ingest/tests/it/bad_input.rs`;
//! these are representative cases of each family, driven through the real binary.

use assert_cmd::Command;
use locality_testkit::files::TempDir;
use predicates::prelude::*;

struct Case {
    name: &'static str,
    file: &'static str,
    content: &'static [u8],
    /// Text the message must contain besides the file name.
    expect: &'static str,
}

const CASES: &[Case] = &[
    Case { name: "truncated JSON", file: "t.json", content: b"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [", expect: "t.json:1:" },
    Case { name: "YAML syntax error", file: "s.yaml", content: b"apiVersion: v1\nkind: Pod\nmetadata: {name: a\n", expect: "s.yaml:" },
    Case {
        name: "missing metadata.name",
        file: "m.json",
        content: b"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\"}}]}",
        expect: "metadata.name",
    },
    Case {
        name: "wrong field type",
        file: "w.yaml",
        content: b"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports: \"80\"\n",
        expect: "spec.ports",
    },
    Case {
        name: "invalid endpoint IP",
        file: "e.yaml",
        content: b"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: IPv4\nendpoints:\n  - addresses: [\"10.0.0.999\"]\nports: []\n",
        expect: "e.yaml:",
    },
    Case { name: "binary garbage", file: "g.json", content: b"\x00\x01\x02\xff\xfe garbage", expect: "g.json" },
    Case { name: "empty file", file: "empty.yaml", content: b"", expect: "empty.yaml" },
    Case {
        name: "an empty List",
        file: "none.json",
        content: b"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}",
        expect: "no objects",
    },
    Case {
        name: "only kinds locality does not read",
        file: "cm.yaml",
        content: b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\ndata: {a: b}\n",
        expect: "only 1 ConfigMap",
    },
    Case {
        name: "no Service: nothing to analyse",
        file: "nodes.yaml",
        content: b"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
        expect: "nothing to analyse: no Service (read: 1 Node)",
    },
    Case {
        name: "kind given twice",
        file: "twice.json",
        content: b"{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}",
        expect: "duplicate field \"kind\"",
    },
    Case {
        name: "selector not a map",
        file: "sel.yaml",
        content: b"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  selector: [app]\n  ports: [{port: 80}]\n",
        expect: "spec.selector",
    },
];

fn commands(path: &str) -> Vec<Vec<String>> {
    let p = path.to_string();
    vec![
        vec!["matrix".into(), "-f".into(), p.clone()],
        vec!["audit".into(), "-f".into(), p.clone()],
        vec![
            "explain".into(),
            "n/s".into(),
            "--node".into(),
            "x".into(),
            "-f".into(),
            p,
        ],
    ]
}

#[test]
fn every_command_rejects_bad_input_with_a_located_message() {
    let tmp = TempDir::new("bad-input");
    let dir = tmp.path().to_path_buf();
    for case in CASES {
        let path = dir.join(case.file);
        std::fs::write(&path, case.content).unwrap();
        for args in commands(path.to_str().unwrap()) {
            let out = Command::cargo_bin("locality")
                .unwrap()
                .args(&args)
                .assert()
                .code(2);
            let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
            assert!(
                stderr.contains(case.file),
                "{}: {:?}: {stderr}",
                case.name,
                args[0]
            );
            assert!(
                stderr.contains(case.expect),
                "{}: {:?}: {stderr}",
                case.name,
                args[0]
            );
            assert!(!stderr.contains("panicked"), "{}: {stderr}", case.name);
            assert_eq!(
                stderr.lines().filter(|l| l.starts_with("error")).count(),
                1,
                "{}: one error: {stderr}",
                case.name
            );
        }
    }
}

#[test]
fn empty_stdin_is_an_input_error() {
    Command::cargo_bin("locality")
        .unwrap()
        .args(["matrix", "-f", "-"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-"));
}

/// `-f /dev/zero`: an endless stream of bytes that are not JSON or YAML fails at once, not
/// after reading it all.
#[test]
fn an_endless_binary_stream_fails_at_once() {
    Command::cargo_bin("locality")
        .unwrap()
        .args(["matrix", "-f", "/dev/zero"])
        .timeout(std::time::Duration::from_secs(10))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/dev/zero").and(predicate::str::contains("binary data")));
}

/// A stream larger than `--max-input-size` is an error naming the input.
#[test]
fn a_stream_over_the_size_limit_is_an_error_naming_it() {
    let big = format!("# {}\n", "x".repeat(4096));
    Command::cargo_bin("locality")
        .unwrap()
        .args(["matrix", "--max-input-size", "1KiB", "-f", "-"])
        .write_stdin(big)
        .timeout(std::time::Duration::from_secs(10))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "-: larger than the input limit of 1024 bytes",
        ));
}

/// A FIFO named like an input inside a directory is skipped with a warning instead of
/// blocking the walk forever.
#[test]
fn a_fifo_in_an_input_directory_is_skipped_with_a_warning() {
    let tmp = TempDir::new("fifo");
    let dir = tmp.path().to_path_buf();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("stuck.json"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    std::fs::write(
        dir.join("node.yaml"),
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    )
    .unwrap();
    Command::cargo_bin("locality")
        .unwrap()
        .args(["matrix", "--allow-empty", "-f", dir.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(10))
        .assert()
        .success()
        .stderr(predicate::str::contains("stuck.json").and(predicate::str::contains("not a regular file")));
}

/// Runs `locality matrix -f SOURCE` with `feed` written to its stdin over and over (an
/// endless stream) and returns its exit code, stderr and peak resident memory (KiB, the
/// highest `VmHWM` seen while it ran), within `timeout`.
fn run_endless(
    source: &str,
    feed: Option<&'static [u8]>,
    timeout: std::time::Duration,
) -> (i32, String, u64) {
    use std::io::{Read, Write};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("locality"))
        .args(["matrix", "-f", source])
        .stdin(if feed.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if let (Some(feed), Some(mut stdin)) = (feed, child.stdin.take()) {
        // Ends when the child closes its stdin (exits).
        std::thread::spawn(move || while stdin.write_all(feed).is_ok() {});
    }
    let status_path = format!("/proc/{}/status", child.id());
    let started = std::time::Instant::now();
    let mut peak_kib = 0;
    let code = loop {
        if let Ok(status) = std::fs::read_to_string(&status_path)
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{source}: still running after {timeout:?} (peak {peak_kib} KiB)");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    (code, stderr, peak_kib)
}

/// Endless streams end in bounded time and memory with one line naming the input: bytes
/// that are not text, text that is not an object, JSON values after the one a document
/// holds, and a YAML document whose keys repeat forever.
#[test]
fn endless_streams_stop_early_in_bounded_memory() {
    let limit = std::time::Duration::from_secs(10);
    let cases: [(&str, Option<&'static [u8]>, &str); 5] = [
        ("/dev/zero", None, "binary data"),
        ("-", Some(b"\0\0\0\0\0\0\0\0"), "binary data"),
        ("-", Some(b"y\n"), "not a Kubernetes object"),
        (
            "-",
            Some(b"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"x\"}}\n"),
            "trailing characters",
        ),
        ("-", Some(b"a: b\n"), "duplicate mapping key"),
    ];
    for (source, feed, expect) in cases {
        let (code, stderr, peak_kib) = run_endless(source, feed, limit);
        let what = format!("{source} fed {:?}", feed.map(String::from_utf8_lossy));
        assert_eq!(code, 2, "{what}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: one line: {stderr}");
        assert!(
            stderr.contains(&format!("{source}:")) && stderr.contains(expect),
            "{what}: {stderr}"
        );
        assert!(peak_kib < 256 * 1024, "{what}: peak {peak_kib} KiB");
    }
}

/// A large dump truncated and rewritten while `locality` reads it (log rotation, a
/// `kubectl get > dump.json` started again) ends in a result or one error line naming it,
/// never in a signal (a memory-mapped reader dies of SIGBUS here).
#[test]
fn a_dump_truncated_while_it_is_read_never_kills_the_process() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    let tmp = TempDir::new("truncated");
    let dir = tmp.path().to_path_buf();
    let path = dir.join("dump.json");
    let mut full = String::from("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n");
    for i in 0..60_000 {
        if i > 0 {
            full.push_str(",\n");
        }
        full.push_str(&format!(
            "        {{\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Pod\",\n            \"metadata\": {{\"name\": \"p{i}\", \"namespace\": \"d\", \"labels\": {{\"app\": \"{}\"}}}},\n            \"spec\": {{\"nodeName\": \"n{}\"}},\n            \"status\": {{\"phase\": \"Running\"}}\n        }}",
            "x".repeat(200),
            i % 40
        ));
    }
    full.push_str("\n    ],\n    \"kind\": \"List\"\n}\n");
    std::fs::write(&path, &full).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut k = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                f.set_len(full.len() as u64 * (1 + k % 5) / 6).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(3));
                f.set_len(0).unwrap();
                (&f).write_all(full.as_bytes()).unwrap();
                k += 1;
            }
        });
        for _ in 0..6 {
            let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("locality"))
                .args(["matrix", "-o", "summary", "-f", path.to_str().unwrap()])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                matches!(out.status.code(), Some(0 | 2)),
                "{:?}: {stderr}",
                out.status
            );
            let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
            assert!(errors.len() <= 1, "{stderr}");
            if let Some(e) = errors.first() {
                assert!(e.contains("dump.json"), "{e}");
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// Under the one-line message, the lines around the error with its column marked and the
/// field named (miette); a file too large to read again keeps the one line.
#[test]
fn an_input_error_shows_the_lines_around_it() {
    let tmp = TempDir::new("snippet");
    let path = tmp.join("svc.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports:\n  - port: 70000\n",
    )
    .unwrap();
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args(["matrix", "-f"])
        .arg(&path)
        .env("NO_COLOR", "1")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let first = stderr.lines().next().unwrap();
    assert!(
        first.starts_with("error: ") && first.contains("svc.yaml:6:"),
        "{stderr}"
    );
    assert!(stderr.contains("6 │   - port: 70000"), "{stderr}");
    assert!(stderr.contains("5 │   ports:"), "the line before: {stderr}");
    assert!(stderr.contains("spec.ports[0].port"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour when NO_COLOR is set: {stderr:?}"
    );

    // Over the size limit for a snippet: the message alone.
    let big = tmp.join("big.yaml");
    let mut text = String::from("apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\n");
    text.push_str(&"# padding\n".repeat(500_000));
    text.push_str("spec:\n  ports:\n  - port: 70000\n");
    std::fs::write(&big, text).unwrap();
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args(["matrix", "-f"])
        .arg(&big)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
