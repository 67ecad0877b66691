//! #38 point 5: 3,000 watches that never read their socket while pods are created, scaled to
//! 0 and back, twice: memory stays bounded (each watch's queue is, and each event is encoded
//! once for all of them), watchers that cannot keep up are closed, and a small client is
//! answered within a second throughout.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{MAX_KUBECTL, Probe, Server, request};

const WATCHES: usize = 3_000;
const T: Duration = Duration::from_secs(20);
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// Pods of the Deployment `load` that exist.
fn pods(addr: &str) -> usize {
    request(
        addr,
        "GET",
        "/api/v1/namespaces/default/pods?labelSelector=app%3Dload",
        None,
        T,
    )
    .map_or(0, |a| a.json()["items"].as_array().map_or(0, Vec::len))
}

fn scale(addr: &str, replicas: u32, until: impl Fn(usize) -> bool) {
    let a = request(
        addr,
        "PATCH",
        &format!("{DEPLOYMENTS}/load"),
        Some(&format!(r#"{{"spec":{{"replicas":{replicas}}}}}"#)),
        T,
    )
    .expect("scaled");
    assert_eq!(a.code, 200, "{}", String::from_utf8_lossy(&a.body));
    let start = Instant::now();
    while !until(pods(addr)) && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[ignore = "load test (minutes, 3,000 sockets, measures memory): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn watchers_that_never_read_are_closed_and_memory_stays_bounded() {
    let mut server = Server::start("watchers", &[]);
    let watches: Vec<TcpStream> = (0..WATCHES)
        .map(|_| {
            let mut s = TcpStream::connect(&server.addr).unwrap();
            write!(
                s,
                "GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n"
            )
            .unwrap();
            s
        })
        .collect();
    // Every watch established (its connection accepted) before the churn.
    let start = Instant::now();
    while server.open_fds() < WATCHES && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("{WATCHES} watches established in {:?}", start.elapsed());
    std::thread::sleep(Duration::from_secs(1));
    let fds_before = server.open_fds();
    let probe = Probe::start(&server.addr);
    let deployment = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"load"},
        "spec":{"replicas":30,"selector":{"matchLabels":{"app":"load"}},
        "template":{"metadata":{"labels":{"app":"load"}},
        "spec":{"containers":[{"name":"c","image":"registry.k8s.io/e2e-test-images/agnhost:2.52","args":["netexec"]}]}}}}"#;
    let a = request(&server.addr, "POST", DEPLOYMENTS, Some(deployment), T).expect("created");
    assert_eq!(a.code, 201, "{}", String::from_utf8_lossy(&a.body));
    let start = Instant::now();
    while pods(&server.addr) < 30 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(200));
    }
    for _ in 0..2 {
        scale(&server.addr, 0, |n| n == 0);
        scale(&server.addr, 30, |n| n == 30);
    }
    std::thread::sleep(Duration::from_secs(3));
    let fds_after = server.open_fds();
    eprintln!(
        "{WATCHES} watches that never read: server descriptors {fds_before} before the churn, {fds_after} after"
    );
    if let Some(took) = server.time_kubectl_get_pods() {
        assert!(took < MAX_KUBECTL, "kubectl get pods -A took {took:?}");
    }
    probe.finish("3,000 watches that never read");
    server.assert_alive_without_panic();
    server.assert_peak_rss_under_limit("3,000 watches that never read");
    // Those whose events outgrew what the kernel and their queue hold were closed (the
    // others' events wait in the kernel's socket buffers, outside the server's memory).
    assert!(
        fds_after < fds_before,
        "no watcher that never read was closed: {fds_before} descriptors before, {fds_after} after"
    );
    drop(watches);
}
