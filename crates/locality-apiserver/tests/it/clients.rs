//! Every current client against the simulated API server: kubectl 1.27 … 1.33 (the versioned
//! binaries `kubectl.1.27` … `kubectl.1.33` installed beside the `kubectl` on PATH; a test
//! fails when one is missing) and the official Python client run the same walk-through
//! (`tests/clients/`: `steps.txt`, `kubectl.sh`, `python_client.py`); kubectl 1.32 and 1.33,
//! whose typed commands send protobuf bodies and read protobuf answers, also against JSON;
//! and the repository's in-cluster audit manifests (`deploy/`) go through `kubectl apply
//! --dry-run=server` with kubectl, 1.27 and 1.33.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{Out, eventually, start};
use locality_apiserver::Running;

/// `kubectl.<version>` beside the resolved `kubectl` of PATH.
pub(crate) fn versioned_kubectl(version: &str) -> PathBuf {
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

/// The walk-through's steps, in order (`tests/clients/steps.txt`).
fn walkthrough_steps() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/steps.txt");
    std::fs::read_to_string(path)
        .expect("steps.txt")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("step: {}", l.trim()))
        .collect()
}

/// Runs one client's walk-through (`program args…`) in namespace `ns`; asserts it printed
/// every step of `steps.txt` in order.
fn walkthrough(
    r: &Running,
    who: &str,
    program: &std::path::Path,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &std::ffi::OsStr)],
    ns: &str,
) {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("KUBECONFIG", r.kubeconfig_path())
        .env("NS", ns)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{who}: cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let got: Vec<&str> = stdout.lines().filter(|l| l.starts_with("step: ")).collect();
    assert_eq!(
        got,
        walkthrough_steps(),
        "{who}: the walk-through stopped.\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{who}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs kubectl.1.27 … kubectl.1.33 beside kubectl: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_1_27_to_1_33_run_the_client_walkthrough() {
    let r = start(10.0);
    let script = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/kubectl.sh"));
    for minor in 27..=33 {
        let version = format!("1.{minor}");
        let bin = versioned_kubectl(&version);
        walkthrough(
            &r,
            &format!("kubectl {version}"),
            std::path::Path::new("bash"),
            &[script.as_os_str()],
            &[("KUBECTL", bin.as_os_str())],
            &format!("walk-{minor}"),
        );
    }
}

#[test]
#[ignore = "needs the Python client: LOCALITY_PYTHON names a python with `kubernetes` installed; runs under the nextest profile `python-client` (.ci/run)"]
fn python_client_runs_the_client_walkthrough() {
    let python = std::env::var_os("LOCALITY_PYTHON").expect(
        "LOCALITY_PYTHON is not set: it names a python with the `kubernetes` package (.ci/run installs one)",
    );
    let r = start(10.0);
    let script = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/python_client.py"
    ));
    walkthrough(
        &r,
        "the Python client",
        std::path::Path::new(&python),
        &[script.as_os_str()],
        &[],
        "walk-python",
    );
}

/// The repository's in-cluster audit (`deploy/rbac-audit.yaml`, `deploy/audit-job.yaml`)
/// taken by `kubectl apply --dry-run=server` from the kubectl on PATH, 1.27 and 1.33: each
/// object answered "(server dry run)", none stored; a copy whose Job restarts `Always` refused
/// with a Status naming the field.
#[test]
#[ignore = "needs kubectl, kubectl.1.27 and kubectl.1.33 beside it: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_apply_dry_run_server_takes_the_audit_job_and_its_rbac() {
    common::require_kubectl();
    let r = start(10.0);
    let deploy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    let (rbac, job) = (deploy.join("rbac-audit.yaml"), deploy.join("audit-job.yaml"));
    let job_text = std::fs::read_to_string(&job).expect("deploy/audit-job.yaml");
    assert!(job_text.contains("restartPolicy: Never"), "{job_text}");
    let dir = common::scratch();
    let broken = dir.join("audit-job-always.yaml");
    std::fs::write(
        &broken,
        job_text.replace("restartPolicy: Never", "restartPolicy: Always"),
    )
    .expect("write the broken copy");
    let (rbac, job, broken) = (
        rbac.to_str().unwrap(),
        job.to_str().unwrap(),
        broken.to_str().unwrap(),
    );
    let out = common::kubectl(&r, &["create", "namespace", "locality"]);
    assert!(out.ok, "create namespace: {}", out.stderr);
    let objects = [
        ("namespace/locality", "/api/v1/namespaces/locality"),
        (
            "serviceaccount/locality",
            "/api/v1/namespaces/locality/serviceaccounts/locality",
        ),
        (
            "clusterrole.rbac.authorization.k8s.io/locality-audit",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/locality-audit",
        ),
        (
            "role.rbac.authorization.k8s.io/locality-audit-dataplane",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles/locality-audit-dataplane",
        ),
        (
            "clusterrolebinding.rbac.authorization.k8s.io/locality-audit",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/locality-audit",
        ),
        (
            "rolebinding.rbac.authorization.k8s.io/locality-audit-dataplane",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/locality-audit-dataplane",
        ),
        (
            "job.batch/locality-audit",
            "/apis/batch/v1/namespaces/locality/jobs/locality-audit",
        ),
    ];
    for bin in [
        PathBuf::from("kubectl"),
        versioned_kubectl("1.27"),
        versioned_kubectl("1.33"),
    ] {
        let who = bin.display().to_string();
        let out = run(&bin, &r, &["apply", "--dry-run=server", "-f", rbac, "-f", job]);
        assert!(out.ok, "{who}: {}{}", out.stdout, out.stderr);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), objects.len(), "{who}: {}", out.stdout);
        for (name, _) in objects {
            // The Namespace exists (configured), the rest would be created.
            let verb = if name.starts_with("namespace/") {
                "configured"
            } else {
                "created"
            };
            let want = format!("{name} {verb} (server dry run)");
            assert!(
                lines.contains(&want.as_str()),
                "{who}: no {want:?} in\n{}",
                out.stdout
            );
        }
        // The dry run stored nothing: no object, no annotation on the Namespace.
        for (name, path) in &objects[1..] {
            let (code, v) = common::get_json(&r, path);
            assert_eq!(code, 404, "{who}: {name} was stored: {v}");
        }
        let (_, ns) = common::get_json(&r, objects[0].1);
        assert!(
            ns["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_null(),
            "{who}: {ns}"
        );
        // A Job that restarts Always is refused, naming the field.
        let out = run(&bin, &r, &["apply", "--dry-run=server", "-f", broken]);
        assert!(!out.ok, "{who}: {}", out.stdout);
        assert!(
            out.stderr.contains("\"locality-audit\" is invalid")
                && out.stderr.contains(
                    "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
                ),
            "{who}: {}",
            out.stderr
        );
    }
}
