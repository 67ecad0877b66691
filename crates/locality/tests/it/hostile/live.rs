//! Live reads against a hostile fake API server (`locality_testkit::fake_api::Hostile`):
//! every case ends with a clear error, in bounded time and memory, and nothing the server
//! or a credential plugin says reaches the terminal raw or unmasked.

use std::time::{Duration, Instant};

use locality_testkit::fake_api::{FakeApi, Hostile, Running};
use locality_testkit::files::{TempDir, write_exec_kubeconfig, write_kubeconfig};

use super::{HOSTILE, assert_inert};

/// The binary as `super::locality`, without a kubeconfig from the environment.
fn locality() -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("locality"));
    c.env("SOURCE_DATE_EPOCH", "1767225600")
        .env("NO_COLOR", "1")
        .env_remove("LOCALITY_PROFILE")
        .env_remove("KUBECONFIG");
    c
}

/// What a run did: its output, how long it took and the most memory it held (VmHWM,
/// sampled while it ran), killed if it runs past `limit`.
pub(super) struct Run {
    pub(super) out: std::process::Output,
    pub(super) took: Duration,
    pub(super) peak_kib: u64,
}

pub(super) fn run(args: &[&str], limit: Duration) -> Run {
    let started = Instant::now();
    let mut child = locality()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    // The pipes are small: read them while waiting.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).ok();
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).ok();
        b
    });
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("{args:?} still running after {limit:?} (peak {peak_kib} KiB)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        out: std::process::Output {
            status,
            stdout: out_t.join().unwrap(),
            stderr: err_t.join().unwrap(),
        },
        took: started.elapsed(),
        peak_kib,
    }
}

pub(super) fn stderr(r: &Run) -> String {
    String::from_utf8_lossy(&r.out.stderr).into_owned()
}

/// The fixture cluster with `hostile` answers on `path`, and a kubeconfig for it.
fn serve(path: &str, hostile: Hostile) -> (Running, TempDir, String) {
    let mut api = FakeApi::cluster();
    api.faults.hostile.insert(path.to_owned(), hostile);
    let token = api.token.clone();
    let server = api.start();
    let dir = TempDir::new("hostile-live");
    let kc = write_kubeconfig(&dir.0, &server.url(), &token)
        .to_str()
        .unwrap()
        .to_owned();
    (server, dir, kc)
}

#[test]
fn a_two_gigabyte_list_page_is_refused_in_bounded_memory() {
    let (_server, _dir, kc) = serve("/api/v1/nodes", Hostile::Huge(2 << 30));
    let r = run(&["matrix", "--kubeconfig", &kc], Duration::from_secs(120));
    assert_eq!(r.out.status.code(), Some(1), "{}", stderr(&r));
    assert!(stderr(&r).contains("larger than 64 MiB"), "{}", stderr(&r));
    assert!(r.peak_kib < 300 * 1024, "peak RSS {} KiB", r.peak_kib);
    assert_inert("huge page", &r.out);
}

#[test]
fn a_one_byte_a_second_answer_ends_at_the_deadline() {
    let (_server, _dir, kc) = serve("/version", Hostile::Trickle(Duration::from_secs(1)));
    let r = run(
        &["matrix", "--kubeconfig", &kc, "--live-timeout", "3s"],
        Duration::from_secs(60),
    );
    assert_eq!(r.out.status.code(), Some(1), "{}", stderr(&r));
    assert!(stderr(&r).contains("did not finish within 3s"), "{}", stderr(&r));
    assert!(r.took < Duration::from_secs(20), "took {:?}", r.took);
}

#[test]
fn a_list_that_never_ends_ends_at_the_deadline() {
    let (_server, _dir, kc) = serve("/api/v1/nodes", Hostile::Endless);
    let r = run(
        &["matrix", "--kubeconfig", &kc, "--live-timeout", "4s"],
        Duration::from_secs(60),
    );
    assert_eq!(r.out.status.code(), Some(1), "{}", stderr(&r));
    assert!(stderr(&r).contains("did not finish within 4s"), "{}", stderr(&r));
    assert!(r.peak_kib < 300 * 1024, "peak RSS {} KiB", r.peak_kib);
}

#[test]
fn a_repeating_continue_token_is_an_error() {
    let (server, _dir, kc) = serve("/api/v1/nodes", Hostile::RepeatContinue);
    let r = run(&["matrix", "--kubeconfig", &kc], Duration::from_secs(60));
    assert_eq!(r.out.status.code(), Some(1), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("repeats the continue token"),
        "{}",
        stderr(&r)
    );
    assert!(
        server.requests_to("/api/v1/nodes").len() <= 3,
        "followed the token"
    );
}

#[test]
fn a_huge_hostile_status_message_is_shortened_escaped_and_masked() {
    let api = FakeApi::cluster();
    let token = api.token.clone();
    let message = format!("{HOSTILE} bearer {token} {}", "\u{1b}[31mX".repeat(400_000));
    let mut api = api;
    api.faults
        .hostile
        .insert("/api/v1/nodes".into(), Hostile::Status(500, message.clone()));
    let server = api.start();
    let dir = TempDir::new("hostile-status");
    let kc = write_kubeconfig(&dir.0, &server.url(), &token);
    let r = run(
        &["audit", "--kubeconfig", kc.to_str().unwrap()],
        Duration::from_secs(60),
    );
    let err = stderr(&r);
    assert_eq!(r.out.status.code(), Some(1), "{err}");
    assert_inert("status message", &r.out);
    assert!(!err.contains(&token), "the token is printed: {err}");
    assert!(err.contains("[masked]"), "{err}");
    assert!(err.contains(&format!("({} bytes)", message.len())), "{err}");
    assert!(err.len() < 8 * 1024, "{} bytes on stderr", err.len());
}

#[test]
fn a_hostile_git_version_is_escaped_in_the_report_header() {
    let mut api = FakeApi::cluster();
    api.git_version = format!("v1.35.0{HOSTILE}{}", "x".repeat(1_000_000));
    let token = api.token.clone();
    let server = api.start();
    let dir = TempDir::new("hostile-version");
    let kc = write_kubeconfig(&dir.0, &server.url(), &token);
    for cmd in ["audit", "matrix"] {
        let r = run(
            &[cmd, "--kubeconfig", kc.to_str().unwrap()],
            Duration::from_secs(60),
        );
        assert_inert(cmd, &r.out);
        let text = String::from_utf8_lossy(&r.out.stdout);
        assert!(text.contains(r"\x1b]0;pwned"), "{cmd}");
        // Shortened, with the size said.
        assert!(
            text.contains(&format!(" ({} bytes)", 1_000_000 + 7 + HOSTILE.len())),
            "{cmd}"
        );
        assert!(text.len() < 32 * 1024, "{cmd}: {} bytes on stdout", text.len());
    }
}

#[test]
fn insecure_skip_tls_verify_warns() {
    let api = FakeApi::cluster();
    let token = api.token.clone();
    let server = api.start();
    let dir = TempDir::new("hostile-insecure");
    let kc = write_kubeconfig(&dir.0, &server.url(), &token);
    let text = std::fs::read_to_string(&kc)
        .unwrap()
        .replace("    server: ", "    insecure-skip-tls-verify: true\n    server: ");
    std::fs::write(&kc, text).unwrap();
    let r = run(
        &["audit", "--kubeconfig", kc.to_str().unwrap()],
        Duration::from_secs(60),
    );
    assert!(
        stderr(&r).contains("warning: insecure-skip-tls-verify is set"),
        "{}",
        stderr(&r)
    );
}

/// A kubeconfig whose credential plugin runs `script`, against the fixture cluster.
pub(super) fn plugin(tag: &str, script: &str) -> (Running, TempDir, String) {
    let server = FakeApi::cluster().start();
    let dir = TempDir::new(tag);
    let kc = write_exec_kubeconfig(&dir.0, &server.url(), "plugin.sh", script);
    (server, dir, kc.to_str().unwrap().to_owned())
}

#[test]
fn a_credential_plugin_that_prints_without_end_is_stopped() {
    let (_server, _dir, kc) = plugin(
        "hostile-plugin-flood",
        "exec yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
    );
    let r = run(&["audit", "--kubeconfig", &kc], Duration::from_secs(60));
    assert_eq!(r.out.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("printed more than 1024 KiB"),
        "{}",
        stderr(&r)
    );
    assert!(r.peak_kib < 300 * 1024, "peak RSS {} KiB", r.peak_kib);
}

#[test]
fn a_credential_plugin_that_hangs_is_killed() {
    // The plugin writes its pid, then becomes `sleep` (same pid).
    let (_server, dir, kc) = plugin(
        "hostile-plugin-hang",
        "echo $$ > \"$(dirname \"$0\")/pid\"\nexec sleep 300\n",
    );
    let r = run(
        &["audit", "--kubeconfig", &kc, "--request-timeout", "2s"],
        Duration::from_secs(60),
    );
    assert_eq!(r.out.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("did not answer within 2s; it was stopped"),
        "{}",
        stderr(&r)
    );
    let pid = std::fs::read_to_string(dir.0.join("pid")).unwrap();
    let proc_dir = format!("/proc/{}", pid.trim());
    // Gone, or at most a zombie not yet reaped.
    let state = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
    assert!(
        state.is_empty() || state.split_whitespace().nth(2) == Some("Z"),
        "the plugin still runs: {state}"
    );
}

#[test]
fn a_failing_credential_plugin_is_quoted_shortened_escaped_and_masked() {
    let (_server, _dir, kc) = plugin(
        "hostile-plugin-fail",
        "printf 'login failed: password=hunter2 \\033]0;pwned\\007\\033[2J\\n' >&2\nhead -c 100000 /dev/zero | tr '\\0' x >&2\nexit 3\n",
    );
    let r = run(&["audit", "--kubeconfig", &kc], Duration::from_secs(60));
    let err = stderr(&r);
    assert_eq!(r.out.status.code(), Some(2), "{err}");
    assert_inert("plugin stderr", &r.out);
    assert!(!err.contains("hunter2"), "{err}");
    assert!(err.contains("password=[masked]"), "{err}");
    assert!(
        !err.contains("Output {") && !err.contains("stdout: ["),
        "a Debug dump: {err}"
    );
    assert!(err.contains("bytes)"), "{err}");
    assert!(err.len() < 8 * 1024, "{} bytes on stderr", err.len());
}
