//! The simulated API server driven by the real kubectl binary (skipped, with a message, when
//! kubectl is not installed).

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

const LB_SERVICE: &str = r#"apiVersion: v1
kind: Service
metadata:
  name: lb
  labels: {rev: "1"}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
"#;

/// An update of the main resource keeps the status (`PrepareForUpdate`): a changed
/// LoadBalancer Service applied or replaced never loses its ingress, not even for one event;
/// a pod replaced with a made-up status (and without the default tolerations) keeps its IP,
/// phase and readiness; a Node replaced without status keeps its addresses and condition.
#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_apply_and_replace_keep_the_status() {
    require_kubectl();
    let r = start(0.0);
    let dir = scratch();
    let file = dir.join("lb.yaml");
    std::fs::write(&file, LB_SERVICE).unwrap();
    let out = kubectl(&r, &["apply", "-f", file.to_str().unwrap()]);
    assert!(out.ok, "{}", out.stderr);
    r.advance(2_000);
    let ingress = |r: &locality_apiserver::Running| {
        let out = kubectl(
            r,
            &[
                "get",
                "svc",
                "lb",
                "-o",
                "jsonpath={.status.loadBalancer.ingress[*].ip}",
            ],
        );
        assert!(out.ok, "{}", out.stderr);
        out.stdout.trim().to_string()
    };
    let ip = ingress(&r);
    assert!(ip.starts_with("203.0.113."), "ingress assigned: {ip:?}");
    let rv = common::get_json(&r, "/api/v1/namespaces/default/services/lb").1["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let watch = watch_events(&r, "/api/v1/namespaces/default/services", &rv, 3);
    std::thread::sleep(std::time::Duration::from_millis(300));

    // Client-side apply of a changed manifest (a strategic merge patch).
    std::fs::write(&file, LB_SERVICE.replace("rev: \"1\"", "rev: \"2\"")).unwrap();
    let out = kubectl(&r, &["apply", "-f", file.to_str().unwrap()]);
    assert!(out.ok, "{}", out.stderr);
    r.advance(1_000);
    // A PUT of the manifest (no status), then one with a status of its own.
    std::fs::write(&file, LB_SERVICE.replace("rev: \"1\"", "rev: \"3\"")).unwrap();
    let out = kubectl(&r, &["replace", "-f", file.to_str().unwrap()]);
    assert!(out.ok, "{}", out.stderr);
    r.advance(1_000);
    let put = edited_json(&r, "svc/lb", &dir.join("lb.json"), |v| {
        v["metadata"]["labels"]["rev"] = "4".into();
        v["status"] = serde_json::json!({"loadBalancer": {"ingress": [{"ip": "198.51.100.1"}]}});
    });
    let out = kubectl(&r, &["replace", "-f", &put]);
    assert!(out.ok, "{}", out.stderr);
    r.advance(1_000);

    let events = watch.join().unwrap();
    let lb: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["object"]["metadata"]["name"] == "lb")
        .collect();
    let revs: Vec<&str> = lb
        .iter()
        .filter_map(|e| e["object"]["metadata"]["labels"]["rev"].as_str())
        .collect();
    assert!(
        ["2", "3", "4"].iter().all(|r| revs.contains(r)),
        "every update seen: {revs:?}"
    );
    for e in &lb {
        assert_eq!(e["type"], "MODIFIED", "{e}");
        assert_eq!(
            e["object"]["status"]["loadBalancer"]["ingress"],
            serde_json::json!([{"ip": ip, "ipMode": "VIP"}]),
            "no event without the ingress: {e}"
        );
    }
    assert_eq!(ingress(&r), ip, "the status is the controller's");

    // A pod: a replace with a made-up status and without its tolerations (the admission gives
    // the defaults back, so the update removes none).
    let jsonpath = |what: &str, path: &str| {
        let out = kubectl(&r, &["get", what, "-o", &format!("jsonpath={path}")]);
        assert!(out.ok, "{}", out.stderr);
        out.stdout
    };
    let status = "{.status.phase} {.status.podIP} {.status.podIPs[*].ip} {.status.conditions[?(@.type==\"Ready\")].status}";
    let before = jsonpath("pod/web-a", status);
    assert!(
        before.starts_with("Running 10.244.") && before.ends_with(" True"),
        "{before}"
    );
    let defaults = "{.spec.tolerations[*].key} {.spec.tolerations[*].tolerationSeconds}";
    assert_eq!(
        jsonpath("pod/web-a", defaults),
        "node.kubernetes.io/not-ready node.kubernetes.io/unreachable 300 300"
    );
    let put = edited_json(&r, "pod/web-a", &dir.join("pod.json"), |v| {
        v["metadata"]["labels"]["extra"] = "1".into();
        v["spec"].as_object_mut().unwrap().remove("tolerations");
        v["status"] = serde_json::json!({"phase": "Pending", "podIP": "10.244.99.99",
                                         "podIPs": [{"ip": "10.244.99.99"}]});
    });
    let out = kubectl(&r, &["replace", "-f", &put]);
    assert!(out.ok, "{}", out.stderr);
    r.advance(1_000);
    assert_eq!(jsonpath("pod/web-a", "{.metadata.labels.extra}"), "1");
    assert_eq!(jsonpath("pod/web-a", status), before);
    assert_eq!(
        jsonpath("pod/web-a", defaults),
        "node.kubernetes.io/not-ready node.kubernetes.io/unreachable 300 300"
    );

    // A Node without status.
    let node_status = "{.status.addresses[0].type}={.status.addresses[0].address} {.status.nodeInfo.kubeletVersion} {.status.allocatable.cpu} {.status.conditions[?(@.type==\"Ready\")].status}";
    let before = jsonpath("node/node-a", node_status);
    assert!(
        before.starts_with("InternalIP=") && before.ends_with(" True"),
        "{before}"
    );
    let put = edited_json(&r, "node/node-a", &dir.join("node.json"), |v| {
        v["metadata"]["labels"]["extra"] = "1".into();
        v.as_object_mut().unwrap().remove("status");
    });
    let out = kubectl(&r, &["replace", "-f", &put]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(jsonpath("node/node-a", "{.metadata.labels.extra}"), "1");
    assert_eq!(jsonpath("node/node-a", node_status), before);
}

/// `kubectl get svc`'s EXTERNAL-IP as the server's printer gives it (`getServiceExternalIP`):
/// a LoadBalancer's ingress then its externalIPs, a ClusterIP's or NodePort's externalIPs or
/// `<none>`, an ExternalName's name.
#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_get_services_external_ip() {
    require_kubectl();
    let r = start(0.0);
    let dir = scratch();
    let file = dir.join("services.yaml");
    std::fs::write(
        &file,
        r#"apiVersion: v1
kind: Service
metadata: {name: lb-ext}
spec:
  type: LoadBalancer
  selector: {app: web}
  externalIPs: [192.0.2.10]
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: cip-ext}
spec:
  selector: {app: web}
  externalIPs: [192.0.2.11, 192.0.2.12]
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: np}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: ext}
spec:
  type: ExternalName
  externalName: db.example.com
"#,
    )
    .unwrap();
    let out = kubectl(&r, &["apply", "-f", file.to_str().unwrap()]);
    assert!(out.ok, "{}", out.stderr);
    r.advance(2_000);
    let out = kubectl(
        &r,
        &[
            "get",
            "svc",
            "lb-ext",
            "-o",
            "jsonpath={.status.loadBalancer.ingress[0].ip}",
        ],
    );
    let ip = out.stdout.trim().to_string();
    assert!(ip.starts_with("203.0.113."), "{ip:?} {}", out.stderr);
    let out = kubectl(&r, &["get", "svc"]);
    assert!(out.ok, "{}", out.stderr);
    let header = out.stdout.lines().next().unwrap();
    let col = header.find("EXTERNAL-IP").expect("EXTERNAL-IP column");
    let external = |name: &str| -> String {
        let line = out
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} listed: {}", out.stdout));
        line[col..].split_whitespace().next().unwrap().to_string()
    };
    assert_eq!(external("lb-ext"), format!("{ip},192.0.2.10"), "{}", out.stdout);
    assert_eq!(external("cip-ext"), "192.0.2.11,192.0.2.12");
    assert_eq!(external("np"), "<none>");
    assert_eq!(external("myservice"), "<none>");
    assert_eq!(external("ext"), "db.example.com");
}

/// The Node Ready condition's `lastHeartbeatTime` and `lastTransitionTime` follow the simulated
/// node lifecycle: the Node's creation while nothing happened, then the kubelet's last post
/// and the controller's transition to Unknown.
#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_node_condition_times_follow_the_simulated_transitions() {
    require_kubectl();
    let r = start(0.0);
    let times = |r: &locality_apiserver::Running| {
        let out = kubectl(
            r,
            &[
                "get",
                "node",
                "node-a",
                "-o",
                "jsonpath={.metadata.creationTimestamp} {.status.conditions[?(@.type==\"Ready\")].status} {.status.conditions[?(@.type==\"Ready\")].lastHeartbeatTime} {.status.conditions[?(@.type==\"Ready\")].lastTransitionTime}",
            ],
        );
        assert!(out.ok, "{}", out.stderr);
        out.stdout
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let t = times(&r);
    assert_eq!(t[1], "True");
    assert_eq!((&t[2], &t[3]), (&t[0], &t[0]), "nothing since the creation");
    let created = t[0].clone();

    let stopped_at = r.virtual_now();
    r.with_engine(|e| e.set_node_ready("node-a", false)).unwrap();
    // Unknown on the first 5 s pass after the 50 s grace period.
    let unknown_at = ((stopped_at + 50_000) / 5_000 + 1) * 5_000;
    r.advance(unknown_at + 1_000 - stopped_at);
    let rfc = locality_sim::time::rfc3339;
    let t = times(&r);
    assert_eq!(t[0], created);
    assert_eq!(t[1], "Unknown");
    assert_eq!(t[2], rfc(stopped_at), "the kubelet's last post");
    assert_eq!(t[3], rfc(unknown_at), "the controller's transition");

    r.advance(10_000);
    let back_at = r.virtual_now();
    r.with_engine(|e| e.set_node_ready("node-a", true)).unwrap();
    let t = times(&r);
    assert_eq!(t[1], "True");
    assert_eq!((&t[2], &t[3]), (&rfc(back_at), &rfc(back_at)));
}
