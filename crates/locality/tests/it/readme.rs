//! The README's first screen is a quick start that works on a machine with only a Rust
//! toolchain: one line of purpose, the prerequisites, exactly two set-up commands (the main
//! job on the embedded simulated cluster, the tests), how to install, one example. Their
//! first steps are run here: the main job's command through the built binary (one case),
//! the test command checked against what `.ci/run` runs (CI has the same toolchain plus
//! nextest), and the example's output against the binary's.

use std::path::{Path, PathBuf};
use std::process::Command;

use locality_testkit::files::TempDir;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A fenced code block: its language, its lines, and the README line it opens on (1-based).
struct Block {
    lang: String,
    lines: Vec<String>,
    opens_at: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (open.take(), line.strip_prefix("```")) {
            (None, Some(lang)) => {
                open = Some(Block {
                    lang: lang.trim().to_string(),
                    lines: Vec::new(),
                    opens_at: i + 1,
                })
            }
            (Some(b), Some(_)) => out.push(b),
            (Some(mut b), None) => {
                b.lines.push(line.to_string());
                open = Some(b);
            }
            (None, None) => {}
        }
    }
    out
}

/// The workspace's `rust-version`.
fn rust_version() -> String {
    let manifest = read("Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.starts_with("rust-version"))
        .expect("Cargo.toml sets rust-version");
    line.split('"').nth(1).expect("rust-version = \"…\"").to_string()
}

#[test]
fn the_first_screen_is_purpose_prerequisites_two_commands_install_and_one_example() {
    let readme = read("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    assert_eq!(lines[0], "# locality");
    assert_eq!(lines[1], "", "a blank line after the title");
    assert!(
        lines[2].starts_with(
            "A Service can look healthy cluster-wide while a client pod on one node reaches nothing"
        ),
        "line 1 after the title is the purpose: {:?}",
        lines[2]
    );
    assert_eq!(lines[3], "", "the purpose is one line");

    let blocks = blocks(&readme);
    let [setup, install, example, ..] = blocks.as_slice() else {
        panic!("the README has fewer than three code blocks");
    };
    // Prerequisites, between the purpose and the commands: the workspace's rust-version.
    let before_setup = lines[4..setup.opens_at - 1].join("\n");
    assert!(
        before_setup.contains(&format!("Rust {} or newer", rust_version())),
        "the prerequisites name the workspace's rust-version ({}): {before_setup}",
        rust_version()
    );

    assert_eq!(setup.lang, "sh");
    let commands: Vec<&str> = setup
        .lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let [main_job, tests] = commands.as_slice() else {
        panic!("exactly two set-up commands, not {commands:?}");
    };
    assert!(
        main_job.starts_with("cargo run ") && main_job.ends_with("-- verify"),
        "the first command runs the main job: {main_job}"
    );
    assert_eq!(
        *tests, "cargo test --workspace",
        "the tests, with only a Rust toolchain"
    );
    // nextest is documented beside it as the faster option, not required.
    let after_setup = lines[setup.opens_at + setup.lines.len() + 1..install.opens_at - 1].join("\n");
    assert!(
        after_setup.contains("`cargo nextest run --workspace`"),
        "{after_setup}"
    );

    assert_eq!(
        install.lines.iter().map(String::as_str).collect::<Vec<_>>(),
        ["cargo install --path crates/locality"]
    );
    assert!(
        read("crates/locality/Cargo.toml").contains("name = \"locality\""),
        "crates/locality builds the binary `locality`"
    );

    assert_eq!(example.lang, "text");
    assert!(
        example.lines[0].starts_with("$ locality "),
        "{:?}",
        example.lines[0]
    );
    assert!(
        example.opens_at + example.lines.len() < 50,
        "the example ends on the first screen (line {})",
        example.opens_at + example.lines.len()
    );
}

/// The catalogue of verify's cases lives in docs/verify.md; the README links it.
#[test]
fn the_verify_catalogue_is_in_docs_not_in_the_readme() {
    let readme = read("README.md");
    assert!(
        !readme.contains("Cases this version runs"),
        "the case catalogue moved to docs/verify.md"
    );
    assert!(
        !readme.contains("`H4` (PreferSameNode prefers"),
        "the case catalogue moved to docs/verify.md"
    );
    assert!(readme.contains("[docs/verify.md](docs/verify.md)"));
    assert!(read("docs/verify.md").contains("\n## Cases\n"));
}

/// `line` without a leading `timeout DURATION` (coreutils), which bounds a command in CI.
fn without_timeout(line: &str) -> &str {
    let line = line.trim();
    match line
        .strip_prefix("timeout ")
        .and_then(|rest| rest.split_once(' '))
    {
        Some((duration, command)) if duration.starts_with(|c: char| c.is_ascii_digit()) => command.trim(),
        _ => line,
    }
}

/// The README's test command is the one CI runs (CI has the toolchain, and nextest only for
/// the profiles of the ignored tests).
#[test]
fn ci_runs_the_readmes_test_command() {
    let readme = read("README.md");
    let setup = &blocks(&readme)[0];
    let tests = setup
        .lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .nth(1)
        .unwrap();
    let ci = read(".ci/run");
    assert!(
        ci.lines().any(|l| without_timeout(l) == tests),
        ".ci/run must run the README's test command {tests:?} as it is"
    );
    assert_eq!(
        without_timeout("timeout 45m cargo test --workspace"),
        "cargo test --workspace"
    );
    assert_eq!(
        without_timeout("cargo test --workspace --no-run"),
        "cargo test --workspace --no-run"
    );
}

/// The main job's command, its first step: the binary it builds, with the arguments after
/// `--` and one case (`--only B1`), on the embedded simulated cluster.
#[test]
fn the_main_job_runs_on_the_simulated_cluster() {
    let readme = read("README.md");
    let setup = &blocks(&readme)[0];
    let main_job = setup.lines[0].trim();
    let (_, args) = main_job.split_once(" -- ").expect("cargo run … -- ARGS");
    let evidence = TempDir::new("readme-verify");
    let out = Command::new(assert_cmd::cargo::cargo_bin("locality"))
        .args(args.split_whitespace())
        .args(["--only", "B1", "--evidence"])
        .arg(evidence.join("ev"))
        .current_dir(evidence.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("PARTIAL ACCEPT"), "{stdout}");
    assert!(stdout.contains("simulated cluster"), "{stdout}");
}

/// The example's output is the binary's, verbatim (the header's time from
/// `SOURCE_DATE_EPOCH`, run from the repository root as the README's commands are).
#[test]
fn the_example_is_the_binarys_output() {
    let readme = read("README.md");
    let example = &blocks(&readme)[2];
    let command = example.lines[0].strip_prefix("$ locality ").unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("locality"))
        .args(command.split_whitespace())
        .env("SOURCE_DATE_EPOCH", "1796322600")
        .env_remove("LOCALITY_PROFILE")
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = example.lines[1..].join("\n") + "\n";
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        expected,
        "README.md's example is stale: paste the output of `locality {command}`"
    );
}
