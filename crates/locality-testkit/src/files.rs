//! Temporary directories and kubeconfig files for tests.

use std::path::{Path, PathBuf};

/// A temporary directory, removed on drop unless the test is failing (then it is kept and
/// its path printed, to look at what the test left).
///
/// The one way tests make scratch space: a run of the whole workspace leaves nothing in
/// `$TMPDIR`.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory `$TMPDIR/locality-test-<tag>-<pid>-<n>`.
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("locality-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test failed: its files are kept in {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a kubeconfig with two contexts: `fake` (current, no namespace) and `fake-app`
/// (namespace `internal-acceptance`), both to `server` with a bearer token.
pub fn write_kubeconfig(dir: &Path, server: &str, token: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {server}\n\
         contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: tester\n\
         - name: fake-app\n  context:\n    cluster: fake\n    user: tester\n    namespace: internal-acceptance\n\
         current-context: fake\nusers:\n- name: tester\n  user:\n    token: {token}\n"
    );
    std::fs::write(&path, text).expect("write kubeconfig");
    path
}

/// Writes a credential plugin `dir/plugin` (`#!/bin/sh` + `script`) and a kubeconfig whose
/// only user runs it (`interactiveMode: Never`) against `server`; returns the kubeconfig's
/// path.
pub fn write_exec_kubeconfig(dir: &Path, server: &str, plugin: &str, script: &str) -> PathBuf {
    let plugin = dir.join(plugin);
    std::fs::write(&plugin, format!("#!/bin/sh\n{script}")).expect("write plugin");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&plugin)
        .status()
        .expect("chmod");
    let path = dir.join("exec-kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nclusters:\n- name: k\n  cluster: {{server: \"{server}\"}}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: {}\n      interactiveMode: Never\n",
            plugin.display()
        ),
    )
    .expect("write kubeconfig");
    path
}

/// Every file under `dir`, recursively (panics on an unreadable directory: tests only).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
