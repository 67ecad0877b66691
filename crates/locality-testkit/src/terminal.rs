//! A command run with its stdout (or stdout and stderr) on a pseudo-terminal, as at a user's
//! terminal (outputs that differ on a terminal: `matrix`'s default, colours, `verify`'s
//! stream); stderr is otherwise piped. The terminal's
//! `\r\n` line ends are read back as `\n`.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};

use rustix::pty::{OpenptFlags, grantpt, ioctl_tiocgptpeer, openpt, unlockpt};

/// What a command printed with its stdout on a terminal.
#[derive(Debug)]
pub struct TerminalOutput {
    /// Its exit status.
    pub status: ExitStatus,
    /// What reached the terminal (`\r\n` read as `\n`).
    pub stdout: String,
    /// Its stderr (a pipe).
    pub stderr: String,
}

/// Runs `cmd` with stdout on a new pseudo-terminal and stdin closed, and waits for it.
///
/// # Panics
/// When the system has no pseudo-terminals, or the command cannot be spawned.
pub fn run_on_terminal(cmd: Command) -> TerminalOutput {
    run(cmd, false)
}

/// Runs `cmd` with stdout and stderr on one new pseudo-terminal (what a user sees: both
/// streams in the order written, in [`TerminalOutput::stdout`]; `stderr` is empty).
///
/// # Panics
/// As [`run_on_terminal`].
pub fn run_with_both_on_terminal(cmd: Command) -> TerminalOutput {
    run(cmd, true)
}

fn run(mut cmd: Command, both: bool) -> TerminalOutput {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let peer = ioctl_tiocgptpeer(&master, OpenptFlags::RDWR | OpenptFlags::NOCTTY)
        .expect("the terminal's other end");
    let err = if both {
        Stdio::from(peer.try_clone().expect("a second handle on the terminal"))
    } else {
        Stdio::piped()
    };
    cmd.stdout(Stdio::from(peer)).stderr(err).stdin(Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    // Our copy of the terminal's end closes with `cmd`: the read below ends with the child.
    drop(cmd);
    let mut master = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match master.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => text.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // EIO: every writer has closed the terminal.
                Err(_) => break,
            }
        }
        text
    });
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut stderr).expect("stderr");
    }
    let status = child.wait().expect("wait");
    let stdout = reader.join().expect("the terminal's reader");
    TerminalOutput {
        status,
        stdout: String::from_utf8_lossy(&stdout).replace("\r\n", "\n"),
        stderr,
    }
}
