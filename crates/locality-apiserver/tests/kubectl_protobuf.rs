//! kubectl 1.32 and 1.33, whose typed commands send protobuf request bodies, against the
//! simulated API server: the versioned binaries `kubectl.1.32` and `kubectl.1.33` installed
//! beside the `kubectl` on PATH (the test fails when they are missing).

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{Out, eventually, start};
use locality_apiserver::Running;

/// `kubectl.<version>` beside the resolved `kubectl` of PATH.
fn versioned_kubectl(version: &str) -> PathBuf {
    let kubectl = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("kubectl"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.is_file())
        .expect("kubectl is not on PATH: this test runs under the nextest profile `kubectl`");
    let resolved = std::fs::canonicalize(&kubectl).expect("resolve kubectl");
    let bin = resolved
        .parent()
        .expect("kubectl's directory")
        .join(format!("kubectl.{version}"));
    assert!(
        bin.is_file(),
        "{} is missing: this test needs kubectl {version} beside {}",
        bin.display(),
        resolved.display()
    );
    bin
}

fn run(bin: &std::path::Path, r: &Running, args: &[&str]) -> Out {
    common::kubectl_bin(bin, r, args)
}

#[test]
#[ignore = "needs kubectl.1.32 and kubectl.1.33 beside kubectl: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_1_32_and_1_33_create_expose_get_and_delete_with_protobuf_bodies() {
    let r = start(10.0);
    for version in ["1.32", "1.33"] {
        let bin = versioned_kubectl(version);
        let kubectl = |args: &[&str]| run(&bin, &r, args);
        let ns = format!("pb-{}", version.replace('.', "-"));
        let ns = ns.as_str();
        let ctx = |what: &str, out: &Out| format!("kubectl {version} {what}: {}{}", out.stdout, out.stderr);

        // -v=8 shows the request's headers: the body is protobuf.
        let out = kubectl(&["create", "namespace", ns, "-v=8"]);
        assert!(out.ok, "{}", ctx("create namespace", &out));
        assert!(
            out.stdout.contains(&format!("namespace/{ns} created")),
            "{}",
            ctx("create namespace", &out)
        );
        assert!(
            out.stderr
                .contains("Content-Type: application/vnd.kubernetes.protobuf"),
            "{}",
            ctx("create namespace sent no protobuf", &out)
        );

        // A watch started before the deployment sees its pods (watches stay JSON).
        let mut watch = Command::new(&bin)
            .arg("--kubeconfig")
            .arg(r.kubeconfig_path())
            .args(["-n", ns, "get", "pods", "-w", "-o", "name"])
            .env_remove("KUBECONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run kubectl get -w");

        let out = kubectl(&["-n", ns, "create", "deployment", "web", "--image=x"]);
        assert!(out.ok, "{}", ctx("create deployment", &out));
        let out = kubectl(&["-n", ns, "expose", "deployment", "web", "--port", "80"]);
        assert!(out.ok, "{}", ctx("expose", &out));
        // ConfigMaps are served read-only (kube-proxy's): 405, the answer kubectl 1.31's JSON
        // gets, never a decoding error.
        let out = kubectl(&["-n", ns, "create", "configmap", "settings", "--from-literal=a=b"]);
        assert!(
            out.ok || out.stderr.contains("does not allow POST on configmaps"),
            "{}",
            ctx("create configmap", &out)
        );
        assert!(
            !out.stderr.contains("decode"),
            "{}",
            ctx("create configmap", &out)
        );

        let wide = eventually(30, || {
            let out = kubectl(&["-n", ns, "get", "deployments,services,pods", "-o", "wide"]);
            let running = out
                .stdout
                .lines()
                .any(|l| l.starts_with("pod/web-") && l.contains("Running"));
            (out.ok && running).then_some(out)
        })
        .unwrap_or_else(|| panic!("kubectl {version}: the deployment's pod never ran"));
        let lines: Vec<&str> = wide.stdout.lines().collect();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("deployment.apps/web") && l.contains("1/1") && l.contains("app=web")),
            "{}",
            wide.stdout
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("service/web") && l.contains("80/TCP") && l.contains("app=web")),
            "{}",
            wide.stdout
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("pod/web-") && l.contains("Running") && l.contains("node-")),
            "{}",
            wide.stdout
        );

        // Only the child this test started is stopped.
        let _ = watch.kill();
        let watched = watch.wait_with_output().expect("kubectl get -w");
        let watched = String::from_utf8_lossy(&watched.stdout);
        assert!(
            watched.contains("pod/web-"),
            "kubectl {version} get -w saw: {watched:?}"
        );

        let out = kubectl(&["delete", "namespace", ns, "--wait=false"]);
        assert!(out.ok, "{}", ctx("delete namespace", &out));
        let gone = eventually(30, || {
            let out = kubectl(&["get", "namespace", ns]);
            (!out.ok && out.stderr.contains("NotFound")).then_some(())
        });
        assert!(
            gone.is_some(),
            "kubectl {version}: namespace {ns} was not deleted"
        );
    }
}
