//! `kubectl get statefulsets` from every kubectl, 1.27 … 1.33: the Table's columns
//! (`NAME READY AGE`, wide `CONTAINERS IMAGES`), `-o yaml` of the object as stored, and a
//! `get -w` that sees the StatefulSet scaled.

use std::process::{Command, Stdio};
use std::time::Duration;

use super::each_kubectl_version;
use crate::common::{self, eventually, scratch, start};

const STATEFULSET: &str = r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: netexec
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["netexec", "--http-port=8080"]
        ports: [{name: http, containerPort: 8080}]
"#;

#[test]
#[ignore = "needs kubectl.1.27 … kubectl.1.33 beside kubectl: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_1_27_to_1_33_get_statefulsets_wide_yaml_and_watch() {
    let r = start(10.0);
    let dir = scratch();
    let file = dir.path().join("sts.yaml");
    std::fs::write(&file, STATEFULSET).unwrap();
    let file = file.to_str().unwrap();
    each_kubectl_version(&r, file, "sts", |version, bin, ns, out| {
        let kubectl = |args: &[&str]| common::kubectl_bin(bin, &r, args);
        assert!(
            out.stdout.contains("statefulset.apps/db created"),
            "kubectl {version}: {}",
            out.stdout
        );

        // -A: NAMESPACE NAME READY AGE, ready/desired once both pods run.
        let all = eventually(60, || {
            let out = kubectl(&["get", "sts", "-A"]);
            let line = out
                .stdout
                .lines()
                .find(|l| l.starts_with(&format!("{ns} ")))
                .map(str::to_string);
            line.filter(|l| l.split_whitespace().nth(2) == Some("2/2"))
                .map(|_| out)
        })
        .unwrap_or_else(|| panic!("kubectl {version}: db never became 2/2"));
        let header: Vec<&str> = all.stdout.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(header, ["NAMESPACE", "NAME", "READY", "AGE"], "kubectl {version}");

        let out = kubectl(&["-n", ns, "get", "statefulsets", "-o", "wide"]);
        assert!(out.ok, "kubectl {version}: {}", out.stderr);
        let lines: Vec<Vec<&str>> = out
            .stdout
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            lines[0],
            ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"],
            "kubectl {version}"
        );
        assert_eq!(lines[1][0..2], ["db", "2/2"], "kubectl {version}: {}", out.stdout);
        assert_eq!(
            lines[1][3..],
            ["netexec", "registry.k8s.io/e2e-test-images/agnhost:2.53"],
            "kubectl {version}: {}",
            out.stdout
        );

        let out = kubectl(&["-n", ns, "get", "sts", "db", "-o", "yaml"]);
        assert!(out.ok, "kubectl {version}: {}", out.stderr);
        for want in [
            "kind: StatefulSet",
            "serviceName: db",
            "podManagementPolicy: OrderedReady",
            "partition: 0",
            "readyReplicas: 2",
            "currentRevision: db-",
        ] {
            assert!(
                out.stdout.contains(want),
                "kubectl {version}: no {want:?} in\n{}",
                out.stdout
            );
        }

        // A watch sees the scale to 3 (`get -w` asks for Tables).
        let mut watch = Command::new(bin)
            .arg("--kubeconfig")
            .arg(r.kubeconfig_path())
            .args(["-n", ns, "get", "sts", "-w", "--no-headers"])
            .env_remove("KUBECONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run kubectl get -w");
        std::thread::sleep(Duration::from_millis(500));
        let out = kubectl(&["-n", ns, "scale", "sts", "db", "--replicas=3"]);
        assert!(out.ok, "kubectl {version}: {}", out.stderr);
        let seen = eventually(60, || {
            let out = kubectl(&["-n", ns, "get", "sts", "db", "--no-headers"]);
            out.stdout.contains("3/3").then_some(())
        });
        assert!(seen.is_some(), "kubectl {version}: never 3/3");
        std::thread::sleep(Duration::from_millis(500));
        let _ = watch.kill();
        let watched = watch.wait_with_output().expect("kubectl get -w");
        let watched = String::from_utf8_lossy(&watched.stdout);
        let readies: Vec<&str> = watched
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .collect();
        // The status is computed when read: the watch sees the spec change (a pod's
        // readiness alone changes no stored StatefulSet).
        assert_eq!(readies.first(), Some(&"2/2"), "kubectl {version}: {watched}");
        assert!(
            readies.iter().any(|r| r.ends_with("/3")),
            "kubectl {version}: {watched}"
        );
    });
}
