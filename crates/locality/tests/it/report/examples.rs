//! Every EXAMPLES line of the help (`locality::examples::EXAMPLES`): shown in its command's
//! `--help`, parsed by the real flags, and, unless it needs a real cluster, run by the real
//! binary (from a directory whose `examples/` is the repository's) with the exit code the
//! example documents.

use assert_cmd::Command;
use locality::examples::{EXAMPLES, command};
use locality_testkit::files::TempDir;

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn every_example_is_in_its_help_and_parses() {
    for e in EXAMPLES {
        let mut help_args = words(e.command);
        help_args.push("--help");
        let out = Command::cargo_bin("locality")
            .unwrap()
            .args(&help_args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let help = String::from_utf8(out).unwrap();
        assert!(
            help.contains("Examples:") && help.contains(e.line),
            "`locality {} --help` lacks {:?}:\n{help}",
            e.command,
            e.line
        );
        if let Err(err) = command().try_get_matches_from(words(e.line)) {
            panic!("{:?} does not parse: {err}", e.line);
        }
    }
    // Every subcommand has examples.
    for sub in command().get_subcommands() {
        let name = sub.get_name();
        if sub.has_subcommands() {
            for inner in sub.get_subcommands() {
                let path = format!("{name} {}", inner.get_name());
                assert!(
                    EXAMPLES.iter().any(|e| e.command == path),
                    "no example for {path}"
                );
            }
        } else if name != "help" {
            assert!(
                EXAMPLES.iter().any(|e| e.command == name),
                "no example for {name}"
            );
        }
    }
}

#[test]
fn every_example_that_needs_no_cluster_runs_with_its_exit_code() {
    let tmp = TempDir::new("examples");
    let dir = tmp.path().to_path_buf();
    let link = dir.join("examples");
    if !link.exists() {
        std::os::unix::fs::symlink(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"), &link).unwrap();
    }
    for e in EXAMPLES.iter().filter(|e| e.runs_here) {
        let args = words(e.line);
        let out = Command::cargo_bin("locality")
            .unwrap()
            .current_dir(&dir)
            .env("SOURCE_DATE_EPOCH", "1767225600")
            .args(&args[1..])
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(i32::from(e.exit)),
            "{:?}: {}",
            e.line,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{:?} printed nothing", e.line);
    }
}

#[test]
fn top_level_help_has_the_exit_code_table() {
    let out = Command::cargo_bin("locality")
        .unwrap()
        .arg("--help")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8(out).unwrap();
    assert!(help.contains(&locality::error::exit_codes_help()), "{help}");
}
