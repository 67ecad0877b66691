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

        // A watch started before the deployment sees its pods (`get -w` asks for tables: JSON).
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

#[test]
#[ignore = "needs kubectl.1.31 and kubectl.1.33 beside kubectl: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_1_33_describes_from_protobuf_answers_what_kubectl_1_31_describes_from_json() {
    // `describe` reads through kubectl's typed clients: kubectl 1.33 asks for protobuf and
    // decodes the answers with upstream's generated code, kubectl 1.31 asks for JSON. The
    // same cluster must read the same.
    let r = start(10.0);
    let (json_kubectl, pb_kubectl) = (versioned_kubectl("1.31"), versioned_kubectl("1.33"));
    for args in [
        &["create", "namespace", "described"][..],
        &[
            "-n",
            "described",
            "create",
            "deployment",
            "web",
            "--image=x",
            "--replicas=2",
        ],
        &["-n", "described", "expose", "deployment", "web", "--port=80"],
    ] {
        let out = run(&pb_kubectl, &r, args);
        assert!(out.ok, "kubectl 1.33 {args:?}: {}", out.stderr);
    }
    let ready = eventually(30, || {
        let out = run(
            &json_kubectl,
            &r,
            &["-n", "described", "get", "deployment", "web"],
        );
        out.stdout.contains("2/2").then_some(())
    });
    assert!(ready.is_some(), "the deployment never became ready");
    for what in [
        &["nodes"][..],
        &["-n", "default", "pods"],
        &["-n", "default", "services"],
        &["-n", "described", "deployments"],
        &["-n", "described", "replicasets"],
        &["-n", "described", "pods"],
        &["-n", "described", "services"],
        &["-n", "described", "endpointslices"],
        &["namespace", "described"],
    ] {
        let args: Vec<&str> = ["describe"].iter().chain(what).copied().collect();
        let from_json = run(&json_kubectl, &r, &args);
        assert!(from_json.ok, "kubectl 1.31 {args:?}: {}", from_json.stderr);
        let mut verbose = args.clone();
        verbose.push("-v=8");
        let traced = run(&pb_kubectl, &r, &verbose);
        assert!(
            traced
                .stderr
                .contains("Content-Type: application/vnd.kubernetes.protobuf"),
            "kubectl 1.33 {args:?} got no protobuf answer: {}",
            traced.stderr
        );
        let from_protobuf = run(&pb_kubectl, &r, &args);
        assert!(
            from_protobuf.ok,
            "kubectl 1.33 {args:?}: {}",
            from_protobuf.stderr
        );
        assert!(from_json.stdout.lines().count() > 3, "{}", from_json.stdout);
        assert_eq!(
            from_protobuf.stdout, from_json.stdout,
            "kubectl 1.33 (protobuf) and 1.31 (JSON) describe {what:?} differently"
        );
    }
}
