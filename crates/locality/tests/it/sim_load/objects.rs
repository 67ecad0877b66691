//! #38 point 6: one request that asks for a million objects (`kubectl create deployment big
//! --replicas=1000000`): the ReplicaSet controller makes pods in bursts of 500, at its API
//! client's rate; the scheduler places each node's `maxPods` (110) and leaves the rest Pending
//! as kube-scheduler does; the store's quota (here `--max-objects 4000`, to reach it within
//! the test) refuses creates past it with etcd's `500`, while deletes go through; and a small
//! client is answered within a second while it works.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{MAX_KUBECTL, Probe, Server, request};

const T: Duration = Duration::from_secs(20);
const QUOTA: u64 = 4000;

/// The items of a list.
fn items(addr: &str, path: &str) -> Vec<Value> {
    request(addr, "GET", path, None, T)
        .map(|a| a.json()["items"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
}

#[test]
#[ignore = "load test (a minute, measures memory): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn a_million_replicas_are_made_in_bursts_placed_up_to_max_pods_and_stopped_by_the_quota() {
    let quota = QUOTA.to_string();
    let mut server = Server::start("objects", &["--max-objects", &quota]);
    let probe = Probe::start(&server.addr);
    let deployment = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"big"},
        "spec":{"replicas":1000000,"selector":{"matchLabels":{"app":"big"}},
        "template":{"metadata":{"labels":{"app":"big"}},
        "spec":{"containers":[{"name":"c","image":"registry.k8s.io/e2e-test-images/agnhost:2.52"}]}}}}"#;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let a = request(&server.addr, "POST", path, Some(deployment), T).expect("created");
    assert_eq!(a.code, 201, "{}", String::from_utf8_lossy(&a.body));
    let start = Instant::now();
    // Until the store is full (its other objects are a few dozen), at most 90 s.
    let mut replicas = 0;
    while replicas < QUOTA - 100 && start.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_secs(2));
        replicas = request(&server.addr, "GET", &format!("{path}/big"), None, T)
            .map(|a| a.json()["status"]["replicas"].as_u64().unwrap_or(0))
            .unwrap_or(0);
    }
    // At speed 10, a wall second is at most 10 virtual seconds: a burst per 2.5 s and the first.
    let bursts = start.elapsed().as_secs() * 10 / 25 + 1;
    eprintln!(
        "a million replicas asked: {replicas} pods after {:?} ({bursts} bursts at most)",
        start.elapsed()
    );
    assert!(replicas >= 500, "the first burst was made: {replicas}");
    assert!(
        replicas <= bursts * 500,
        "{replicas} pods: more than {bursts} bursts of 500"
    );
    assert!(
        replicas < QUOTA,
        "{replicas} pods past a quota of {QUOTA} objects"
    );

    // The scheduler: at most maxPods on each node, the rest Pending as kube-scheduler leaves them.
    let nodes = items(&server.addr, "/api/v1/nodes");
    let max_pods: u64 = nodes
        .iter()
        .map(|n| {
            n["status"]["allocatable"]["pods"]
                .as_str()
                .and_then(|p| p.parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum();
    assert_eq!(
        max_pods,
        110 * nodes.len() as u64,
        "kubelet's default maxPods on every node"
    );
    let pods = items(&server.addr, "/api/v1/pods?limit=0");
    let bound = pods.iter().filter(|p| p["spec"]["nodeName"].is_string()).count() as u64;
    let pending: Vec<&Value> = pods
        .iter()
        .filter(|p| !p["spec"]["nodeName"].is_string())
        .collect();
    eprintln!(
        "{} pods: {bound} on {} nodes, {} Pending",
        pods.len(),
        nodes.len(),
        pending.len()
    );
    assert!(
        bound <= max_pods,
        "{bound} pods bound, more than maxPods {max_pods}"
    );
    assert!(pending.len() > 1000, "{} pods Pending", pending.len());
    let want = format!("0/{n} nodes are available: {n} Too many pods.", n = nodes.len());
    let unschedulable = pending
        .iter()
        .filter(|p| {
            p["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter().any(|c| {
                    c["type"] == "PodScheduled"
                        && c["status"] == "False"
                        && c["reason"] == "Unschedulable"
                        && c["message"].as_str().is_some_and(|m| m.ends_with(&want))
                })
            })
        })
        .count();
    // The newest may not have been tried yet.
    assert!(
        unschedulable * 10 >= pending.len() * 9,
        "{unschedulable} of {} Pending pods say {want:?}: {}",
        pending.len(),
        pending[0]["status"]
    );

    // The quota: the store is full (pods, ReplicaSet, Deployment, Nodes, the rest), a create
    // is refused as etcd's NOSPACE reaches a client, a delete goes through.
    let sa = r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"one-more"}}"#;
    let refused = request(
        &server.addr,
        "POST",
        "/api/v1/namespaces/default/serviceaccounts",
        Some(sa),
        T,
    )
    .expect("an answer");
    let status = refused.json();
    eprintln!("a create past the quota: {} {}", refused.code, status);
    assert_eq!(refused.code, 500);
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"].as_str().unwrap_or_default(), "");
    assert_eq!(status["message"], "etcdserver: mvcc: database space exceeded");
    let victim = pending[0]["metadata"]["name"].as_str().unwrap();
    let deleted = request(
        &server.addr,
        "DELETE",
        &format!("/api/v1/namespaces/default/pods/{victim}?gracePeriodSeconds=0"),
        None,
        T,
    )
    .expect("an answer");
    assert_eq!(deleted.code, 200, "{}", String::from_utf8_lossy(&deleted.body));

    if let Some(took) = server.time_kubectl_get_pods() {
        assert!(took < MAX_KUBECTL, "kubectl get pods -A took {took:?}");
    }
    probe.finish("a million replicas");
    server.assert_alive_without_panic();
    server.assert_peak_rss_under_limit("a million replicas");
}
