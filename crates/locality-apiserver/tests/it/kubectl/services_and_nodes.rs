//! kubectl reading what the simulated controllers write: LoadBalancer ingress as EXTERNAL-IP,
//! node condition times.

use super::{edited_json, watch_events};
use crate::common;
use common::{kubectl, require_kubectl, scratch, start};

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
