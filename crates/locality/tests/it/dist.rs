//! `cargo xtask dist --binary <this crate's binary>`: the release archive holds the binary,
//! the kubectl plugin, completions for bash/zsh/fish and a man page naming every
//! subcommand; the krew manifest carries the archive's real sha256 and URL.

use locality_testkit::files::TempDir;
use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The subcommands `locality --help` lists.
fn subcommands(binary: &std::path::Path) -> Vec<String> {
    let help = Command::new(binary).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout).into_owned();
    text.split("Commands:")
        .nth(1)
        .expect("a Commands: section")
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn xtask_dist_packages_the_binary_completions_man_page_and_krew_manifest() {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_locality"));
    let tmp = TempDir::new("dist");
    let out = tmp.join("dist");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = Command::new(cargo)
        .current_dir(repo())
        .args(["xtask", "dist", "--base-url", "https://example.invalid/v0/"])
        .arg("--binary")
        .arg(&binary)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let version = env!("CARGO_PKG_VERSION");
    let name = format!("locality-{version}-x86_64-unknown-linux-gnu");
    let archive = out.join(format!("{name}.tar.gz"));

    let listing = Command::new("tar").arg("-tzf").arg(&archive).output().unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    for file in [
        "locality",
        "kubectl-locality",
        "completions/locality.bash",
        "completions/_locality",
        "completions/locality.fish",
        "man/locality.1",
    ] {
        assert!(
            listing.lines().any(|l| l == format!("{name}/{file}")),
            "{file} not in {listing}"
        );
    }
    let bash = std::fs::read_to_string(out.join("completions/locality.bash")).unwrap();
    let zsh = std::fs::read_to_string(out.join("completions/_locality")).unwrap();
    let fish = std::fs::read_to_string(out.join("completions/locality.fish")).unwrap();
    assert!(
        bash.contains("_locality()")
            && zsh.contains("#compdef locality")
            && fish.contains("complete -c locality")
    );

    let man = std::fs::read_to_string(out.join("man/locality.1")).unwrap();
    let subs = subcommands(&binary);
    assert!(subs.len() >= 6, "{subs:?}");
    for sub in &subs {
        assert!(
            man.contains(sub.as_str()),
            "the man page does not mention `{sub}`"
        );
    }

    let sum = Command::new("sha256sum").arg(&archive).output().unwrap();
    let sha = String::from_utf8_lossy(&sum.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(sha.len(), 64);
    let recorded = std::fs::read_to_string(out.join(format!("{name}.tar.gz.sha256"))).unwrap();
    assert!(recorded.starts_with(&sha), "{recorded}");
    let krew = std::fs::read_to_string(out.join("krew/locality.yaml")).unwrap();
    let manifest: serde_json::Value = serde_saphyr::from_str(&krew).unwrap();
    let platform = &manifest["spec"]["platforms"][0];
    assert_eq!(platform["sha256"], sha.as_str(), "{krew}");
    assert_eq!(
        platform["uri"],
        format!("https://example.invalid/v0/{name}.tar.gz").as_str()
    );
    assert_eq!(manifest["spec"]["version"], format!("v{version}").as_str());
    assert_eq!(platform["bin"], "kubectl-locality");
    assert_eq!(
        platform["files"][0]["from"],
        format!("{name}/kubectl-locality").as_str()
    );
}
