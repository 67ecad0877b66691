//! #38 point 6: one request that asks for a million objects (`kubectl create deployment big
//! --replicas=1000000`): the ReplicaSet controller makes pods in bursts of 500, at its API
//! client's rate, so memory grows at that rate and a small client is answered within a second
//! while it works.

use std::time::{Duration, Instant};

use super::{MAX_KUBECTL, Probe, Server, request};

const T: Duration = Duration::from_secs(20);

#[test]
#[ignore = "load test (a minute, measures memory): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn a_million_replicas_are_made_in_bursts_while_the_server_answers() {
    let mut server = Server::start("objects", &[]);
    let probe = Probe::start(&server.addr);
    let deployment = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"big"},
        "spec":{"replicas":1000000,"selector":{"matchLabels":{"app":"big"}},
        "template":{"metadata":{"labels":{"app":"big"}},
        "spec":{"containers":[{"name":"c","image":"registry.k8s.io/e2e-test-images/agnhost:2.52"}]}}}}"#;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let a = request(&server.addr, "POST", path, Some(deployment), T).expect("created");
    assert_eq!(a.code, 201, "{}", String::from_utf8_lossy(&a.body));
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(30));
    let replicas = request(&server.addr, "GET", &format!("{path}/big"), None, T)
        .map(|a| a.json()["status"]["replicas"].as_u64().unwrap_or(0))
        .unwrap_or(0);
    // At speed 10, 30 s of wall time are at most 300 virtual seconds: 12 bursts and the first.
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
    if let Some(took) = server.time_kubectl_get_pods() {
        assert!(took < MAX_KUBECTL, "kubectl get pods -A took {took:?}");
    }
    probe.finish("a million replicas");
    server.assert_alive_without_panic();
    server.assert_peak_rss_under_limit("a million replicas");
}
