//! The simulated API server driven by the real kubectl binary (skipped, with a message, when
//! kubectl is not installed).

mod common;

use common::{eventually, have_kubectl, kubectl, scratch, start};

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
fn kubectl_get_nodes_pods_services_and_version() {
    if !have_kubectl("kubectl_get_nodes_pods_services_and_version") {
        return;
    }
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
        out.stdout.contains("\"gitVersion\":\"v1.35.0-locality-sim\""),
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
fn kubectl_create_label_delete_pod() {
    if !have_kubectl("kubectl_create_label_delete_pod") {
        return;
    }
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
fn kubectl_apply_and_scale_deployment() {
    if !have_kubectl("kubectl_apply_and_scale_deployment") {
        return;
    }
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
