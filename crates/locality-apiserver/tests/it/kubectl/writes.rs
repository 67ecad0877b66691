//! kubectl writes against the simulated API server: server dry runs, JSON/merge/strategic
//! patches, server-side apply with conflicts, delete with a grace period and --force.

use super::{DEPLOYMENT, POD};
use crate::common;
use common::{eventually, kubectl, require_kubectl, scratch, start};

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_server_dry_runs_change_nothing() {
    require_kubectl();
    let r = start(10.0);
    let dir = scratch();
    let file = dir.join("pod.yaml");
    std::fs::write(&file, POD).unwrap();
    let file = file.to_str().unwrap();
    let out = kubectl(&r, &["create", "--dry-run=server", "-f", file]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "pod/web-c created (server dry run)");
    let out = kubectl(&r, &["create", "--dry-run=server", "-f", file, "-o", "yaml"]);
    assert!(
        out.ok && out.stdout.contains("uid: "),
        "{} {}",
        out.stdout,
        out.stderr
    );
    let out = kubectl(&r, &["get", "pod", "web-c"]);
    assert!(
        !out.ok && out.stderr.contains("NotFound"),
        "a server dry run creates nothing: {} {}",
        out.stdout,
        out.stderr
    );
    let out = kubectl(&r, &["delete", "pod", "web-a", "--dry-run=server"]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "pod \"web-a\" deleted (server dry run)");
    let out = kubectl(&r, &["delete", "svc", "myservice", "--dry-run=server"]);
    assert!(out.ok, "{}", out.stderr);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = kubectl(
        &r,
        &[
            "get",
            "pod",
            "web-a",
            "-o",
            "jsonpath={.metadata.name} {.metadata.deletionTimestamp}",
        ],
    );
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "web-a", "not terminating: {}", out.stdout);
    let out = kubectl(&r, &["get", "svc", "myservice", "-o", "name"]);
    assert_eq!(out.stdout.trim(), "service/myservice");
    // `kubectl create` for real still works after the dry run.
    let out = kubectl(&r, &["create", "-f", file]);
    assert!(out.ok, "{}", out.stderr);
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_patch_json_merge_and_strategic() {
    require_kubectl();
    let r = start(10.0);
    let jsonpath = |what: &str, path: &str| {
        let out = kubectl(&r, &["get", what, "-o", &format!("jsonpath={path}")]);
        assert!(out.ok, "{}", out.stderr);
        out.stdout
    };
    let out = kubectl(
        &r,
        &[
            "patch",
            "svc",
            "myservice",
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/spec/internalTrafficPolicy","value":"Local"},{"op":"replace","path":"/spec/internalTrafficPolicy","value":"Cluster"}]"#,
        ],
    );
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "service/myservice patched");
    assert_eq!(
        jsonpath("svc/myservice", "{.spec.internalTrafficPolicy}"),
        "Cluster"
    );
    // A failed `test`: the real server's 422 wording, nothing changed.
    let out = kubectl(
        &r,
        &[
            "patch",
            "svc",
            "myservice",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/internalTrafficPolicy","value":"Local"},{"op":"test","path":"/spec/type","value":"NodePort"}]"#,
        ],
    );
    assert!(!out.ok);
    assert!(
        out.stderr
            .contains("the server rejected our request due to an error in our request"),
        "{}",
        out.stderr
    );
    assert_eq!(
        jsonpath("svc/myservice", "{.spec.internalTrafficPolicy}"),
        "Cluster"
    );
    let out = kubectl(
        &r,
        &[
            "patch",
            "svc",
            "myservice",
            "--type=merge",
            "-p",
            r#"{"spec":{"trafficDistribution":"PreferClose"}}"#,
        ],
    );
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        jsonpath("svc/myservice", "{.spec.trafficDistribution}"),
        "PreferClose"
    );
    // Strategic (kubectl's default): immutable fields are refused like the real server.
    let out = kubectl(
        &r,
        &["patch", "pod", "web-a", "-p", r#"{"spec":{"nodeName":"node-c"}}"#],
    );
    assert!(!out.ok);
    assert!(
        out.stderr.contains("is invalid") && out.stderr.contains("pod updates may not change fields"),
        "{}",
        out.stderr
    );
    let out = kubectl(
        &r,
        &[
            "patch",
            "svc",
            "myservice",
            "-p",
            r#"{"spec":{"clusterIP":"10.96.0.200"}}"#,
        ],
    );
    assert!(
        !out.ok && out.stderr.contains("may not change once set"),
        "{}",
        out.stderr
    );
    // `kubectl set image` is a strategic merge of the containers by name.
    let container = jsonpath("pod/web-a", "{.spec.containers[0].name}");
    let out = kubectl(
        &r,
        &[
            "set",
            "image",
            "pod/web-a",
            &format!("{container}=registry.k8s.io/e2e-test-images/agnhost:2.52"),
        ],
    );
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        jsonpath("pod/web-a", "{.spec.containers[0].image}"),
        "registry.k8s.io/e2e-test-images/agnhost:2.52"
    );
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_apply_server_side_creates_updates_and_conflicts() {
    require_kubectl();
    let r = start(10.0);
    let dir = scratch();
    let file = dir.join("deploy.yaml");
    std::fs::write(&file, DEPLOYMENT).unwrap();
    let file = file.to_str().unwrap();
    let out = kubectl(&r, &["apply", "--server-side", "-f", file]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "deployment.apps/gateway serverside-applied");
    let ready = eventually(20, || {
        let out = kubectl(&r, &["get", "deploy", "gateway"]);
        out.stdout.contains("3/3").then_some(())
    });
    assert!(ready.is_some());
    std::fs::write(file, DEPLOYMENT.replace("replicas: 3", "replicas: 2")).unwrap();
    let out = kubectl(&r, &["apply", "--server-side", "-f", file]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "deployment.apps/gateway serverside-applied");
    let out = kubectl(
        &r,
        &["get", "deploy", "gateway", "-o", "jsonpath={.spec.replicas}"],
    );
    assert_eq!(out.stdout, "2");
    let out = kubectl(
        &r,
        &[
            "get",
            "deploy",
            "gateway",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
        ],
    );
    assert_eq!(out.stdout, "kubectl", "{}", out.stderr);
    // Another field manager changing replicas conflicts, unless it forces.
    std::fs::write(file, DEPLOYMENT.replace("replicas: 3", "replicas: 1")).unwrap();
    let out = kubectl(&r, &["apply", "--server-side", "--field-manager=ops", "-f", file]);
    assert!(!out.ok, "{}", out.stdout);
    assert!(
        out.stderr.contains("conflict with \"kubectl\"") && out.stderr.contains(".spec.replicas"),
        "{}",
        out.stderr
    );
    let out = kubectl(
        &r,
        &[
            "apply",
            "--server-side",
            "--field-manager=ops",
            "--force-conflicts",
            "-f",
            file,
        ],
    );
    assert!(out.ok, "{}", out.stderr);
    let one = eventually(20, || {
        let out = kubectl(&r, &["get", "pods", "-l", "app=gateway", "-o", "name"]);
        (out.stdout.lines().count() == 1).then_some(())
    });
    assert!(one.is_some());
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_delete_grace_period_and_force() {
    require_kubectl();
    let r = start(1.0);
    let out = kubectl(&r, &["delete", "pod", "web-b", "--grace-period=0", "--force"]);
    assert!(out.ok, "{}", out.stderr);
    assert!(
        out.stdout.contains("pod \"web-b\" force deleted"),
        "{}",
        out.stdout
    );
    let out = kubectl(&r, &["get", "pod", "web-b"]);
    assert!(out.stderr.contains("NotFound"), "gone at once: {}", out.stdout);
    // A pod that delays its shutdown by 60 s dies within the 2 s grace period given.
    let dir = scratch();
    let file = dir.join("slow.yaml");
    std::fs::write(&file, POD.replace("--delay-shutdown=5", "--delay-shutdown=60")).unwrap();
    let out = kubectl(&r, &["create", "-f", file.to_str().unwrap()]);
    assert!(out.ok, "{}", out.stderr);
    let out = kubectl(
        &r,
        &["wait", "--for=condition=Ready", "pod/web-c", "--timeout=20s"],
    );
    assert!(out.ok, "{}", out.stderr);
    let t0 = std::time::Instant::now();
    let out = kubectl(
        &r,
        &["delete", "pod", "web-c", "--grace-period=2", "--timeout=20s"],
    );
    assert!(out.ok, "{}", out.stderr);
    let took = t0.elapsed();
    assert!(
        took < std::time::Duration::from_secs(15),
        "deleted within the grace period, not the 60 s shutdown delay: {took:?}"
    );
    let out = kubectl(&r, &["get", "pod", "web-c"]);
    assert!(out.stderr.contains("NotFound"), "{}", out.stdout);
}
