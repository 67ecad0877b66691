//! #38 point 7: a list of 100,000 pods asked whole (no `limit`), in JSON and in protobuf, is
//! written item by item: what the server holds for it stays under twice the answer, and a
//! small client is answered within a second while it is written.

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{Probe, Server, request};

const PODS: usize = 100_000;
const T: Duration = Duration::from_secs(60);

/// Bytes of the body of `GET path` (read and dropped as it comes).
fn answer_bytes(addr: &str, path: &str, accept: &str) -> usize {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0;
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

#[test]
#[ignore = "load test (minutes, 100,000 pods, measures memory): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn a_list_of_100000_pods_is_written_item_by_item() {
    // 100,000 pods and their 200 Deployments and ReplicaSets: past the default quota.
    let mut server = Server::start("lists", &["--max-objects", "110000"]);
    // The ReplicaSet controller makes at most 500 pods per sync: 200 Deployments of 500 make
    // 100,000 pods at once.
    let path = "/apis/apps/v1/namespaces/default/deployments";
    for i in 0..PODS / 500 {
        let deployment = format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"big-{i}"}},
            "spec":{{"replicas":500,"selector":{{"matchLabels":{{"app":"big-{i}"}}}},
            "template":{{"metadata":{{"labels":{{"app":"big-{i}"}}}},
            "spec":{{"containers":[{{"name":"c","image":"registry.k8s.io/e2e-test-images/agnhost:2.52"}}]}}}}}}}}"#
        );
        let a = request(&server.addr, "POST", path, Some(&deployment), T).expect("created");
        assert_eq!(a.code, 201, "{}", String::from_utf8_lossy(&a.body));
    }
    let start = Instant::now();
    loop {
        let made: u64 = request(&server.addr, "GET", path, None, T).map_or(0, |a| {
            a.json()["items"].as_array().map_or(0, |ds| {
                ds.iter().filter_map(|d| d["status"]["replicas"].as_u64()).sum()
            })
        });
        if made >= PODS as u64 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "{made} of {PODS} pods were created"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    std::thread::sleep(Duration::from_secs(2));
    for (what, accept) in [
        ("JSON", "application/json"),
        ("protobuf", "application/vnd.kubernetes.protobuf,application/json"),
    ] {
        // The peak of creating the pods is not the list's.
        server.reset_peak_rss();
        let before = server.peak_rss_kb();
        let probe = Probe::start(&server.addr);
        let bytes = answer_bytes(&server.addr, "/api/v1/pods", accept);
        probe.finish(&format!("a list of {PODS} pods in {what}"));
        let peak = server.peak_rss_kb();
        let added_kb = peak.saturating_sub(before);
        eprintln!(
            "{PODS} pods in {what}: answer {} MB; server peak RSS {} MB before, {} MB after (+{} MB, {:.2}× the answer)",
            bytes >> 20,
            before / 1024,
            peak / 1024,
            added_kb / 1024,
            (added_kb * 1024) as f64 / bytes as f64
        );
        assert!(
            bytes > PODS * 500,
            "{what}: an answer of {bytes} bytes for {PODS} pods"
        );
        assert!(
            added_kb * 1024 < 2 * bytes as u64,
            "{what}: the list added {} MB to the peak for an answer of {} MB",
            added_kb / 1024,
            bytes >> 20
        );
    }
    server.assert_alive_without_panic();
}
