//! A reader that goes away (`locality audit --fail-on error … | head`) ends the output, not
//! the run: the exit code the command decided survives the closed pipe, and nothing is said
//! about it on stderr (docs/exit-codes.md). Every audit format is tried with a report several
//! times larger than a pipe's buffer (64 KiB on Linux) plus the binary's own (64 KiB), so the
//! binary is still writing when the pipe closes.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use locality_testkit::files::TempDir;

/// Every `audit -o` format.
const FORMATS: [&str; 7] = ["table", "yaml", "markdown", "junit", "html", "json", "sarif"];

/// The smallest report that is sure to outlast the pipe's buffer and the binary's.
const LARGER_THAN_BUFFERS: usize = 256 << 10;

/// `examples/three-zones.json` with its namespace copied `copies` times: one blind node
/// (an error finding) per copy.
fn large_dump(dir: &Path, copies: usize) -> std::path::PathBuf {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/three-zones.json"
    ))
    .expect("examples/three-zones.json");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let items = doc["items"].as_array().unwrap();
    let mut out: Vec<serde_json::Value> = items.iter().filter(|i| i["kind"] == "Node").cloned().collect();
    let rest =
        serde_json::to_string(&items.iter().filter(|i| i["kind"] != "Node").collect::<Vec<_>>()).unwrap();
    for n in 0..copies {
        let copy = rest
            .replace("internal-acceptance", &format!("team-{n}"))
            .replace("\"uid-", &format!("\"uid-{n}-"));
        out.extend(serde_json::from_str::<Vec<serde_json::Value>>(&copy).unwrap());
    }
    let path = dir.join("large.json");
    std::fs::write(
        &path,
        serde_json::to_vec(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": out})).unwrap(),
    )
    .unwrap();
    path
}

fn audit(dump: &Path, format: &str) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("locality"));
    c.args(["audit", "--fail-on", "error", "-o", format, "-f"])
        .arg(dump)
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env_remove("LOCALITY_PROFILE")
        .stdin(Stdio::null());
    c
}

/// Reads `bytes` bytes of the report, closes the pipe, and returns the exit code and stderr.
fn read_then_close(mut command: Command, bytes: usize) -> (Option<i32>, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut head = vec![0; bytes];
    stdout.read_exact(&mut head).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    (child.wait().unwrap().code(), stderr)
}

#[test]
fn the_decided_exit_code_survives_a_closed_pipe_silently_in_every_format() {
    let dir = TempDir::new("closed-pipe");
    let dump = large_dump(&dir, 300);
    for format in FORMATS {
        // Read to the end: the report's size, the exit code and what stderr says anyway.
        let whole = audit(&dump, format).output().unwrap();
        assert_eq!(
            whole.status.code(),
            Some(3),
            "{format}: 300 blind nodes fail --fail-on error"
        );
        assert!(
            whole.stdout.len() > LARGER_THAN_BUFFERS,
            "{format}: the report ({} bytes) must outlast the pipe's and the binary's buffers",
            whole.stdout.len()
        );
        let (code, stderr) = read_then_close(audit(&dump, format), 16);
        assert_eq!(
            code,
            Some(3),
            "{format}: the exit code after `| head -c 16`; stderr:\n{stderr}"
        );
        assert_eq!(
            stderr,
            String::from_utf8_lossy(&whole.stderr),
            "{format}: a closed pipe adds nothing to stderr"
        );
        assert!(!stderr.to_lowercase().contains("pipe"), "{format}: {stderr}");
    }
}
