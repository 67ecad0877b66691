//! The credential plugin (`users[].user.exec`) run with bounds, for one-shot reads: its
//! output is capped ([`MAX_STDOUT`], [`MAX_STDERR`]), a plugin that does not exit within
//! the timeout is killed, and a failure is reported by the plugin's command, exit status
//! and its stderr shortened, escaped and masked (`locality_report::display::server_text`),
//! never as a dump of its output. kube-rs runs the plugin without any of these bounds. An
//! interactive plugin (`interactiveMode` not `Never`) run from a terminal keeps the
//! terminal's stderr for its prompts, as under kubectl.
//!
//! The protocol is client-go's (`k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go`):
//! `KUBERNETES_EXEC_INFO` holds an `ExecCredential` with `spec.interactive` (and the
//! cluster with `provideClusterInfo`); the plugin prints an `ExecCredential` whose status
//! carries a token or a client certificate and key.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kube::config::{ExecConfig, ExecInteractiveMode};

/// The most a plugin may print on stdout (an `ExecCredential` is a few kilobytes).
pub(crate) const MAX_STDOUT: usize = 1 << 20;
/// The most of a plugin's stderr kept (for the message when it fails).
pub(crate) const MAX_STDERR: usize = 64 << 10;

/// What a plugin gave.
pub(crate) struct Credential {
    /// A bearer token.
    pub token: Option<String>,
    /// A client certificate (PEM) and its key.
    pub client_certificate_data: Option<String>,
    /// The key of the client certificate (PEM).
    pub client_key_data: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

#[derive(serde::Deserialize)]
struct ExecCredential {
    status: Option<Status>,
}

/// Reads at most `max` bytes of `r` into the returned buffer; sets `over` when there was
/// more (and stops reading).
fn capped(mut r: impl Read, max: usize, over: &AtomicBool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => {
                if out.len() + n > max {
                    out.extend_from_slice(&buf[..max - out.len()]);
                    over.store(true, Ordering::SeqCst);
                    return out;
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
}

/// How a plugin that exited with `status` is reported: by its command and status, with its
/// `stderr` (at most [`MAX_STDERR`] of it) shortened, escaped and masked, never dumped.
pub(crate) fn failed(
    command: &str,
    status: std::process::ExitStatus,
    stderr: &[u8],
    secrets: &[&str],
) -> String {
    let name = format!("the credential plugin {command:?} (users[].user.exec)");
    let stderr = &stderr[..stderr.len().min(MAX_STDERR)];
    let text = locality_report::display::server_text(&String::from_utf8_lossy(stderr), secrets);
    if text.is_empty() {
        format!("{name} failed ({status})")
    } else {
        format!("{name} failed ({status}): {text}")
    }
}

/// Runs the plugin `exec` within `timeout`. `secrets` are masked in what is quoted of its
/// stderr.
///
/// # Errors
/// A message naming the plugin's command (never its arguments or output but its stderr,
/// shortened, escaped and masked): it cannot start, exits with a failure, does not exit in
/// time (it is killed), prints more than the caps, or prints no credential.
pub(crate) fn run(exec: &ExecConfig, timeout: Duration, secrets: &[&str]) -> Result<Credential, String> {
    let command = exec.command.clone().unwrap_or_default();
    if command.is_empty() {
        return Err("the credential plugin (users[].user.exec) names no command".into());
    }
    let name = format!("the credential plugin {command:?} (users[].user.exec)");
    let interactive = exec.interactive_mode != Some(ExecInteractiveMode::Never);
    let mut cmd = Command::new(&command);
    if let Some(args) = &exec.args {
        cmd.args(args);
    }
    for env in exec.env.iter().flatten() {
        if let (Some(n), Some(v)) = (env.get("name"), env.get("value")) {
            cmd.env(n, v);
        }
    }
    let mut spec = serde_json::json!({ "interactive": interactive });
    if exec.provide_cluster_info
        && let Some(cluster) = &exec.cluster
    {
        spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    let info = serde_json::json!({
        "apiVersion": exec.api_version.clone().unwrap_or_else(|| "client.authentication.k8s.io/v1".into()),
        "kind": "ExecCredential",
        "spec": spec,
    });
    cmd.env("KUBERNETES_EXEC_INFO", info.to_string());
    for env in exec.drop_env.iter().flatten() {
        cmd.env_remove(env);
    }
    // An interactive plugin on a terminal talks to the user there, as under kubectl (a
    // device-code prompt on stderr); otherwise its stderr is captured, capped and quoted.
    use std::io::IsTerminal as _;
    let prompts = interactive && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    cmd.stdin(if interactive {
        Stdio::inherit()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(if prompts { Stdio::inherit() } else { Stdio::piped() });
    let mut child = cmd.spawn().map_err(|e| format!("{name} cannot start: {e}"))?;
    let over_out = Arc::new(AtomicBool::new(false));
    let over_err = Arc::new(AtomicBool::new(false));
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        return Err(format!("{name}: its output cannot be read"));
    };
    let stderr = child.stderr.take();
    let out_reader = {
        let over = Arc::clone(&over_out);
        std::thread::spawn(move || capped(stdout, MAX_STDOUT, &over))
    };
    let err_reader = {
        let over = Arc::clone(&over_err);
        std::thread::spawn(move || stderr.map(|e| capped(e, MAX_STDERR, &over)).unwrap_or_default())
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                let _ = child.kill();
                return Err(format!("{name}: {e}"));
            }
        }
        if over_out.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{name} printed more than {} KiB on stdout; it was stopped",
                MAX_STDOUT >> 10
            ));
        }
        if started.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{name} did not answer within {timeout:?}; it was stopped"
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The readers end with the pipes; a grandchild holding them open is not waited for.
    let wait = |h: std::thread::JoinHandle<Vec<u8>>| {
        let until = Instant::now() + Duration::from_secs(2);
        while !h.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        if h.is_finished() {
            h.join().unwrap_or_default()
        } else {
            Vec::new()
        }
    };
    let stdout = wait(out_reader);
    let stderr = wait(err_reader);
    if over_out.load(Ordering::SeqCst) {
        return Err(format!(
            "{name} printed more than {} KiB on stdout",
            MAX_STDOUT >> 10
        ));
    }
    if !status.success() {
        let more = if over_err.load(Ordering::SeqCst) {
            format!(" (stderr cut at {} KiB)", MAX_STDERR >> 10)
        } else {
            String::new()
        };
        return Err(format!("{}{more}", failed(&command, status, &stderr, secrets)));
    }
    let parsed: ExecCredential = serde_json::from_slice(&stdout)
        .or_else(|_| serde_saphyr::from_slice(&stdout))
        .map_err(|_| format!("{name} printed no ExecCredential (JSON) on stdout"))?;
    let status = parsed
        .status
        .ok_or_else(|| format!("{name} printed an ExecCredential without status"))?;
    if status.token.is_none()
        && (status.client_certificate_data.is_none() || status.client_key_data.is_none())
    {
        return Err(format!(
            "{name} printed an ExecCredential with neither a token nor a client certificate and key"
        ));
    }
    Ok(Credential {
        token: status.token,
        client_certificate_data: status.client_certificate_data,
        client_key_data: status.client_key_data,
    })
}
