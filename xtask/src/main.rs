//! `cargo xtask dist [--binary PATH] [--out DIR] [--base-url URL]`: packages a release.
//!
//! Builds `locality` with the release profile (stripped, thin LTO) unless `--binary` names
//! one already built, then writes into `--out` (default `target/dist`):
//! - `locality-VERSION-x86_64-unknown-linux-gnu.tar.gz` holding `locality`,
//!   `kubectl-locality` (the same binary: kubectl runs it as the plugin), the completions and
//!   the man page, and its `.sha256`;
//! - `completions/locality.bash`, `completions/_locality` (zsh), `completions/locality.fish`;
//! - `man/locality.1`;
//! - `krew/locality.yaml`: `dist/krew/locality.yaml` with the version, the archive's URL
//!   (`--base-url`, default the GitHub release of the version) and its sha256.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use sha2::{Digest, Sha256};

const TRIPLE: &str = "x86_64-unknown-linux-gnu";

struct Args {
    binary: Option<PathBuf>,
    out: PathBuf,
    base_url: Option<String>,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    match argv.next().as_deref() {
        Some("dist") => {}
        Some(other) => return Err(format!("unknown task {other:?}; tasks: dist")),
        None => return Err("usage: cargo xtask dist [--binary PATH] [--out DIR] [--base-url URL]".into()),
    }
    let mut args = Args {
        binary: None,
        out: root().join("target/dist"),
        base_url: None,
    };
    while let Some(flag) = argv.next() {
        let mut value = || argv.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--binary" => args.binary = Some(PathBuf::from(value()?)),
            "--out" => args.out = PathBuf::from(value()?),
            "--base-url" => args.base_url = Some(value()?),
            _ => return Err(format!("unknown flag {flag:?}")),
        }
    }
    Ok(args)
}

/// Runs `cmd`, failing with its stderr.
fn output(cmd: &mut Command) -> Result<Vec<u8>, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn run() -> Result<(), String> {
    let args = parse(std::env::args().skip(1))?;
    let binary = match args.binary {
        Some(b) => b,
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            output(
                Command::new(cargo)
                    .current_dir(root())
                    .args(["build", "--release", "-p", "locality"]),
            )?;
            root().join("target/release/locality")
        }
    };
    let version = String::from_utf8_lossy(&output(Command::new(&binary).arg("--version"))?)
        .split_whitespace()
        .nth(1)
        .ok_or("`locality --version` printed no version")?
        .to_string();
    let out = &args.out;
    let _ = std::fs::remove_dir_all(out);
    let stage = out.join(format!("locality-{version}-{TRIPLE}"));
    for name in ["locality", "kubectl-locality"] {
        let to = stage.join(name);
        std::fs::create_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
        std::fs::copy(&binary, &to).map_err(|e| format!("{} -> {}: {e}", binary.display(), to.display()))?;
    }
    for (shell, file) in [
        ("bash", "locality.bash"),
        ("zsh", "_locality"),
        ("fish", "locality.fish"),
    ] {
        let text = output(Command::new(&binary).args(["completions", shell]))?;
        write(&out.join("completions").join(file), &text)?;
        write(&stage.join("completions").join(file), &text)?;
    }
    let man = output(Command::new(&binary).arg("man"))?;
    write(&out.join("man/locality.1"), &man)?;
    write(&stage.join("man/locality.1"), &man)?;

    let archive_name = format!("locality-{version}-{TRIPLE}.tar.gz");
    let archive = out.join(&archive_name);
    let stage_name = stage
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    output(
        Command::new("tar")
            .current_dir(out)
            .args(["--sort=name", "--owner=0", "--group=0", "--numeric-owner", "-czf"])
            .arg(&archive_name)
            .arg(&stage_name),
    )?;
    let bytes = std::fs::read(&archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    write(
        &out.join(format!("{archive_name}.sha256")),
        format!("{sha}  {archive_name}\n").as_bytes(),
    )?;

    let base = args
        .base_url
        .unwrap_or_else(|| format!("https://github.com/locality-dev/locality/releases/download/v{version}"));
    let template = std::fs::read_to_string(root().join("dist/krew/locality.yaml"))
        .map_err(|e| format!("dist/krew/locality.yaml: {e}"))?;
    let manifest = template
        .replace("{{VERSION}}", &version)
        .replace(
            "{{URI}}",
            &format!("{}/{archive_name}", base.trim_end_matches('/')),
        )
        .replace("{{SHA256}}", &sha);
    write(&out.join("krew/locality.yaml"), manifest.as_bytes())?;
    println!("{}", archive.display());
    Ok(())
}
