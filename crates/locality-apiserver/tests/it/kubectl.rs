//! The simulated API server driven by the real kubectl binary (skipped, with a message, when
//! kubectl is not installed).

mod rollout_status;
mod services_and_nodes;
mod statefulsets;
mod writes;

use crate::common;

use common::{eventually, kubectl, require_kubectl, scratch, start};

const POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: web-c
  labels: {app: web}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields:
          - {key: metadata.name, operator: In, values: [node-c]}
  containers:
  - name: netexec
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: ["netexec", "--http-port=8080", "--delay-shutdown=5"]
    ports: [{name: http, containerPort: 8080}]
    readinessProbe:
      httpGet: {path: /readyz, port: http}
      periodSeconds: 1
"#;

/// Each kubectl 1.27 … 1.33 in turn, in a namespace of its own (`{prefix}-{minor}`, created by
/// that kubectl) where it has applied `file`: `each(version, kubectl binary, namespace, the
/// apply's output)`.
pub(super) fn each_kubectl_version(
    r: &locality_apiserver::Running,
    file: &str,
    prefix: &str,
    mut each: impl FnMut(&str, &std::path::Path, &str, common::Out),
) {
    for minor in 27..=33 {
        let version = format!("1.{minor}");
        let bin = crate::clients::versioned_kubectl(&version);
        let ns = format!("{prefix}-{minor}");
        let out = common::kubectl_bin(&bin, r, &["create", "namespace", &ns]);
        assert!(out.ok, "kubectl {version}: {}", out.stderr);
        let out = common::kubectl_bin(&bin, r, &["-n", &ns, "apply", "-f", file]);
        assert!(out.ok, "kubectl {version}: {}", out.stderr);
        each(&version, &bin, &ns, out);
    }
}

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: gateway
spec:
  replicas: 3
  selector: {matchLabels: {app: gateway}}
  template:
    metadata: {labels: {app: gateway}}
    spec:
      containers:
      - name: netexec
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["netexec", "--http-port=8080"]
        ports: [{name: http, containerPort: 8080}]
"#;

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_get_nodes_pods_services_and_version() {
    require_kubectl();
    let r = start(10.0);
    let out = kubectl(&r, &["get", "nodes"]);
    assert!(out.ok, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("NAME") && lines[0].contains("STATUS") && lines[0].contains("VERSION"));
    for n in ["node-a", "node-b", "node-c"] {
        assert!(
            lines.iter().any(|l| l.starts_with(n) && l.contains("Ready")),
            "{}",
            out.stdout
        );
    }

    let out = kubectl(&r, &["get", "pods", "-A", "-o", "wide"]);
    assert!(out.ok, "{}", out.stderr);
    let header = out.stdout.lines().next().unwrap();
    for col in [
        "NAMESPACE",
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
    ] {
        assert!(header.contains(col), "{header}");
    }
    let web_a = out
        .stdout
        .lines()
        .find(|l| l.contains("web-a"))
        .expect("web-a listed");
    assert!(
        web_a.contains("node-a") && web_a.contains("10.244.") && web_a.contains("Running"),
        "{web_a}"
    );

    let out = kubectl(&r, &["get", "svc", "-o", "json"]);
    assert!(out.ok, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let svc = &v["items"][0];
    assert_eq!(svc["metadata"]["name"], "myservice");
    assert_eq!(svc["spec"]["internalTrafficPolicy"], "Local");
    assert!(
        svc["spec"]["clusterIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.96."))
    );

    let out = kubectl(&r, &["get", "endpointslices", "-o", "yaml"]);
    assert!(out.ok, "{}", out.stderr);
    assert!(
        out.stdout.contains("kubernetes.io/service-name: myservice"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("ready: true") && out.stdout.contains("zone: zone-a"));

    let out = kubectl(&r, &["get", "--raw", "/version"]);
    assert!(out.ok, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("\"gitVersion\":\"v1.35.0+locality-simulated\""),
        "{}",
        out.stdout
    );

    let out = kubectl(&r, &["get", "pod", "nope"]);
    assert!(!out.ok);
    assert!(
        out.stderr.contains("(NotFound): pods \"nope\" not found"),
        "{}",
        out.stderr
    );
    let out = kubectl(&r, &["get", "pods", "-l", "a b"]);
    assert!(!out.ok && out.stderr.contains("BadRequest"), "{}", out.stderr);
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_create_label_delete_pod() {
    require_kubectl();
    let r = start(10.0);
    let dir = scratch();
    let file = dir.join("pod.yaml");
    std::fs::write(&file, POD).unwrap();
    let file = file.to_str().unwrap();
    // Default (client-side) validation on: no --validate=false.
    let out = kubectl(&r, &["create", "-f", file]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "pod/web-c created");
    let out = kubectl(&r, &["create", "-f", file]);
    assert!(!out.ok && out.stderr.contains("AlreadyExists"), "{}", out.stderr);
    // Scheduled on node-c by matchFields affinity, an IP assigned, Ready as virtual time passes.
    let ip = eventually(20, || {
        let out = kubectl(
            &r,
            &[
                "get",
                "pod",
                "web-c",
                "-o",
                "jsonpath={.spec.nodeName} {.status.podIP}",
            ],
        );
        let s = out.stdout.trim().to_string();
        (s.starts_with("node-c ") && s.len() > "node-c ".len()).then_some(s)
    })
    .expect("web-c scheduled with an IP");
    assert!(ip.starts_with("node-c 10.244."), "{ip}");
    let out = kubectl(
        &r,
        &["wait", "--for=condition=Ready", "pod/web-c", "--timeout=20s"],
    );
    assert!(out.ok, "{}", out.stderr);
    let out = kubectl(&r, &["get", "pod", "web-c", "-o", "wide"]);
    assert!(
        out.stdout.contains("node-c") && out.stdout.contains("1/1"),
        "{}",
        out.stdout
    );
    let out = kubectl(&r, &["get", "pod", "web-c", "-o", "yaml"]);
    assert!(
        out.stdout
            .contains("image: registry.k8s.io/e2e-test-images/agnhost:2.53"),
        "{}",
        out.stdout
    );

    let out = kubectl(&r, &["label", "pod", "web-c", "tier=front"]);
    assert!(out.ok, "{}", out.stderr);
    let out = kubectl(&r, &["annotate", "pod", "web-c", "note=simulated"]);
    assert!(out.ok, "{}", out.stderr);
    let out = kubectl(&r, &["get", "pods", "-l", "tier=front", "-o", "name"]);
    assert_eq!(out.stdout.trim(), "pod/web-c");
    let out = kubectl(
        &r,
        &[
            "get",
            "pods",
            "--field-selector",
            "spec.nodeName=node-c",
            "-o",
            "name",
        ],
    );
    assert!(
        out.stdout.contains("pod/web-c") && !out.stdout.contains("web-a"),
        "{}",
        out.stdout
    );

    // The EndpointSlice now lists web-c; a graceful delete ends with the pod gone.
    let has_c = || {
        let out = kubectl(
            &r,
            &[
                "get",
                "endpointslices",
                "-o",
                "jsonpath={.items[*].endpoints[*].targetRef.name}",
            ],
        );
        out.stdout.contains("web-c")
    };
    assert!(eventually(10, || has_c().then_some(())).is_some());
    let out = kubectl(&r, &["delete", "pod", "web-c", "--wait=false"]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "pod \"web-c\" deleted");
    let gone = eventually(20, || {
        let out = kubectl(&r, &["get", "pod", "web-c"]);
        out.stderr.contains("NotFound").then_some(())
    });
    assert!(gone.is_some(), "web-c removed after its grace period");
    assert!(!has_c());
    // `kubectl delete` with its default wait too.
    let out = kubectl(&r, &["delete", "pod", "web-a", "--timeout=30s"]);
    assert!(out.ok, "{}", out.stderr);
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_apply_and_scale_deployment() {
    require_kubectl();
    let r = start(10.0);
    let dir = scratch();
    let file = dir.join("deploy.yaml");
    std::fs::write(&file, DEPLOYMENT).unwrap();
    let out = kubectl(&r, &["apply", "-f", file.to_str().unwrap()]);
    assert!(out.ok, "{}", out.stderr);
    let ready = eventually(20, || {
        let out = kubectl(&r, &["get", "deploy", "gateway"]);
        out.stdout.contains("3/3").then_some(())
    });
    assert!(ready.is_some());
    std::fs::write(&file, DEPLOYMENT.replace("replicas: 3", "replicas: 2")).unwrap();
    let out = kubectl(&r, &["apply", "-f", file.to_str().unwrap()]);
    assert!(
        out.ok && out.stdout.contains("configured"),
        "{} {}",
        out.stdout,
        out.stderr
    );
    assert!(
        !out.stderr
            .contains("missing the kubectl.kubernetes.io/last-applied-configuration"),
        "{}",
        out.stderr
    );
    let out = kubectl(&r, &["scale", "deploy/gateway", "--replicas=1"]);
    assert!(out.ok, "{}", out.stderr);
    let one = eventually(20, || {
        let out = kubectl(&r, &["get", "pods", "-l", "app=gateway", "-o", "name"]);
        (out.stdout.lines().count() == 1).then_some(())
    });
    assert!(one.is_some());
    let out = kubectl(&r, &["get", "rs", "-o", "wide"]);
    assert!(
        out.stdout.contains("netexec") && out.stdout.contains("agnhost"),
        "{}",
        out.stdout
    );
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_logs_follow_streams_until_the_pod_exits() {
    require_kubectl();
    let r = start(10.0);
    let dir = scratch();
    let file = dir.join("curl.yaml");
    // From node-c the ITP Local Service has no endpoint: curl times out after 20 virtual s
    // (2 wall s at speed 10), prints its error and exits 28.
    std::fs::write(
        &file,
        r#"apiVersion: v1
kind: Pod
metadata: {name: curl-c}
spec:
  nodeName: node-c
  restartPolicy: Never
  containers:
  - name: curl
    image: curlimages/curl:8.11.1
    command: ["curl", "-sS", "-m", "20", "http://myservice:80/hostname"]
"#,
    )
    .unwrap();
    let out = kubectl(&r, &["create", "-f", file.to_str().unwrap()]);
    assert!(out.ok, "{}", out.stderr);
    let running = eventually(20, || {
        let out = kubectl(&r, &["get", "pod", "curl-c", "-o", "jsonpath={.status.phase}"]);
        (out.stdout == "Running").then_some(())
    });
    assert!(running.is_some());
    let t0 = std::time::Instant::now();
    let out = kubectl(&r, &["logs", "-f", "curl-c", "--request-timeout=30s"]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        out.stdout, "curl: (28) Connection timed out after 20000 milliseconds\n",
        "the line written after kubectl started following"
    );
    assert!(
        t0.elapsed() > std::time::Duration::from_millis(500),
        "kubectl waited for the line: {:?}",
        t0.elapsed()
    );
    let out = kubectl(&r, &["get", "pod", "curl-c", "-o", "jsonpath={.status.phase}"]);
    assert_eq!(out.stdout, "Failed");
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_rollout_restart_and_set_image_roll_a_deployment_and_labels_do_not() {
    require_kubectl();
    let r = start(20.0);
    let dir = scratch();
    let file = dir.join("deploy.yaml");
    std::fs::write(&file, DEPLOYMENT).unwrap();
    assert!(kubectl(&r, &["apply", "-f", file.to_str().unwrap()]).ok);
    let pods = || {
        let out = kubectl(&r, &["get", "pods", "-l", "app=gateway", "-o", "name"]);
        out.stdout
            .lines()
            .map(str::to_string)
            .collect::<std::collections::BTreeSet<_>>()
    };
    let replica_sets = || kubectl(&r, &["get", "rs", "-o", "name"]).stdout.lines().count();
    let ready = |n: &str| {
        eventually(60, || {
            let out = kubectl(&r, &["get", "deploy", "gateway"]);
            out.stdout.contains(n).then_some(())
        })
    };
    assert!(ready("3/3").is_some());
    let first = pods();
    assert_eq!(replica_sets(), 1);

    // Metadata only: no new ReplicaSet.
    assert!(kubectl(&r, &["label", "deploy", "gateway", "team=edge"]).ok);
    assert!(kubectl(&r, &["annotate", "deploy", "gateway", "note=x"]).ok);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        replica_sets(),
        1,
        "a label or annotation on the Deployment rolls nothing"
    );

    // `kubectl rollout restart` patches a template annotation: every pod is replaced.
    let out = kubectl(&r, &["rollout", "restart", "deploy/gateway"]);
    assert!(out.ok, "{}", out.stderr);
    let replaced = eventually(60, || {
        let now = pods();
        (now.len() == 3 && now.is_disjoint(&first)).then_some(now)
    });
    let second = replaced.expect("rollout restart replaces every pod");
    let pod = second.iter().next().unwrap().clone();
    let out = kubectl(
        &r,
        &[
            "get",
            &pod,
            "-o",
            "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}",
        ],
    );
    assert!(
        !out.stdout.trim().is_empty(),
        "pods carry the template annotation: {}",
        out.stderr
    );
    assert_eq!(replica_sets(), 2);

    // A new image is a new template too.
    let out = kubectl(
        &r,
        &[
            "set",
            "image",
            "deploy/gateway",
            "netexec=registry.k8s.io/e2e-test-images/agnhost:2.56",
        ],
    );
    assert!(out.ok, "{}", out.stderr);
    let third = eventually(60, || {
        let now = pods();
        (now.len() == 3 && now.is_disjoint(&second)).then_some(now)
    });
    assert!(third.is_some(), "set image replaces every pod");
    assert_eq!(replica_sets(), 3);
    let out = kubectl(&r, &["get", "rs", "-o", "wide"]);
    assert!(out.stdout.contains("agnhost:2.56"), "{}", out.stdout);
}

/// Starts a raw watch of `path` from `rv` for `secs` seconds; the join gives its events.
fn watch_events(
    r: &locality_apiserver::Running,
    path: &str,
    rv: &str,
    secs: u32,
) -> std::thread::JoinHandle<Vec<serde_json::Value>> {
    let port = r.port();
    let req = format!(
        "GET {path}?watch=1&resourceVersion={rv}&timeoutSeconds={secs} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    );
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
            .filter(|v| v.get("type").is_some())
            .collect()
    })
}

/// `kubectl get -o json` of one object, with `edit` applied, written for `kubectl replace -f`.
fn edited_json(
    r: &locality_apiserver::Running,
    what: &str,
    file: &std::path::Path,
    edit: impl FnOnce(&mut serde_json::Value),
) -> String {
    let out = kubectl(r, &["get", what, "-o", "json"]);
    assert!(out.ok, "{}", out.stderr);
    let mut v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    edit(&mut v);
    std::fs::write(file, v.to_string()).unwrap();
    file.to_str().unwrap().to_string()
}
