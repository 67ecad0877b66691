//! `verify` with a hostile credential plugin (issue #40): kube-rs, which verify's client
//! uses (it refreshes the credential during a long run), runs a plugin without bounds and
//! reports its failure as a `Debug` dump of all it printed. Run first within the one-shot
//! reads' bounds, a plugin that fails, floods or hangs ends the run with the same clear,
//! short, masked and escaped error.

use std::time::Duration;

use super::assert_inert;
use super::live::{plugin, run, stderr};

fn verify(kc: &str, evidence: &std::path::Path) -> super::live::Run {
    let args = [
        "verify",
        "--kubeconfig",
        kc,
        "--only",
        "N0",
        "--evidence",
        evidence.to_str().unwrap(),
    ];
    run(&args, Duration::from_secs(90))
}

#[test]
fn verify_quotes_a_failing_credential_plugin_short_escaped_and_masked() {
    let (_server, dir, kc) = plugin(
        "hostile-verify-plugin-fail",
        "printf 'login failed: password=hunter2 \\033]0;pwned\\007\\033[2J\\n' >&2\nhead -c 100000 /dev/zero | tr '\\0' x >&2\nexit 3\n",
    );
    let r = verify(&kc, &dir.0.join("ev"));
    let err = stderr(&r);
    assert_eq!(r.out.status.code(), Some(2), "{err}");
    assert_inert("verify: plugin stderr", &r.out);
    assert!(!err.contains("hunter2"), "{err}");
    assert!(err.contains("password=[masked]"), "{err}");
    assert!(
        !err.contains("Output {") && !err.contains("stdout: ["),
        "a Debug dump: {err}"
    );
    assert!(err.contains("failed (exit status: 3)"), "{err}");
    assert!(err.len() < 8 * 1024, "{} bytes on stderr", err.len());
}

#[test]
fn verify_stops_a_credential_plugin_that_prints_without_end() {
    let (_server, dir, kc) = plugin(
        "hostile-verify-plugin-flood",
        "exec yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
    );
    let r = verify(&kc, &dir.0.join("ev"));
    assert_eq!(r.out.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("printed more than 1024 KiB"),
        "{}",
        stderr(&r)
    );
    assert!(r.peak_kib < 300 * 1024, "peak RSS {} KiB", r.peak_kib);
}

#[test]
fn verify_kills_a_credential_plugin_that_hangs() {
    let (_server, dir, kc) = plugin(
        "hostile-verify-plugin-hang",
        "echo $$ > \"$(dirname \"$0\")/pid\"\nexec sleep 300\n",
    );
    // verify's plugin timeout is the one-shot reads' 60 s (its --request-timeout bounds its
    // own requests, not the plugin).
    let r = verify(&kc, &dir.0.join("ev"));
    assert_eq!(r.out.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("did not answer within 60s; it was stopped"),
        "{}",
        stderr(&r)
    );
    assert!(r.took < Duration::from_secs(80), "took {:?}", r.took);
    let pid = std::fs::read_to_string(dir.0.join("pid")).unwrap();
    let state = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    assert!(
        state.is_empty() || state.split_whitespace().nth(2) == Some("Z"),
        "the plugin still runs: {state}"
    );
}
