//! `kubectl rollout status` against the simulated API server, kubectl 1.27 … 1.33: it watches
//! the workload until `observedGeneration`, the updated count and the available count say the
//! rollout is done, so it needs the server's status events (`status_watch`) and the
//! generation kept by the simulated store.

use super::{DEPLOYMENT, each_kubectl_version};
use crate::common::{self, scratch, start};

const DAEMONSET: &str = r#"apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - name: netexec
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["netexec", "--http-port=8080"]
"#;

#[test]
#[ignore = "needs kubectl.1.27 … kubectl.1.33 beside kubectl: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_1_27_to_1_33_rollout_status_follows_a_rollout_to_its_end() {
    let r = start(20.0);
    let dir = scratch();
    let file = dir.path().join("workloads.yaml");
    std::fs::write(&file, format!("{DEPLOYMENT}---\n{DAEMONSET}")).unwrap();
    let file = file.to_str().unwrap();
    // Runs whose rollout status printed a progress line. A rollout can end before a kubectl
    // has started (the clock runs 20 times real time), so one run need not see it; all of
    // them missing it is the old server, whose generation and updated count said "done" at once.
    let mut progress = 0;
    each_kubectl_version(&r, file, "rollout", |version, bin, ns, _| {
        let kubectl = |args: &[&str]| common::kubectl_bin(bin, &r, args);
        for (workload, what) in [
            ("deployment/gateway", "deployment \"gateway\""),
            ("daemonset/agent", "daemon set \"agent\""),
        ] {
            let status = || kubectl(&["-n", ns, "rollout", "status", workload, "--timeout=90s"]);
            let out = status();
            assert!(
                out.ok,
                "kubectl {version} {workload}: {} {}",
                out.stdout, out.stderr
            );
            // A template change: a new generation, rolled pod by pod, followed to its end.
            let patch = r#"{"spec":{"template":{"metadata":{"labels":{"rev":"2"}}}}}"#;
            let out = kubectl(&["-n", ns, "patch", workload, "--type", "merge", "-p", patch]);
            assert!(out.ok, "kubectl {version} {workload}: {}", out.stderr);
            let out = status();
            assert!(
                out.ok,
                "kubectl {version} {workload}: {} {}",
                out.stdout, out.stderr
            );
            assert!(
                out.stdout
                    .trim_end()
                    .ends_with(&format!("{what} successfully rolled out")),
                "kubectl {version} {workload}: {}",
                out.stdout
            );
            progress += usize::from(out.stdout.contains("Waiting for"));
            let out = kubectl(&[
                "-n",
                ns,
                "get",
                workload,
                "-o",
                "jsonpath={.metadata.generation} {.status.observedGeneration}",
            ]);
            assert_eq!(out.stdout, "2 2", "kubectl {version} {workload}: {}", out.stderr);
        }
    });
    assert!(progress > 0, "no rollout status showed its progress");
}
