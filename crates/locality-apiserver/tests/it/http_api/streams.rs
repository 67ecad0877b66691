//! Streams over raw HTTP: watches with selectors, followed logs.

use super::{PODS, send, store_rv};
use crate::common;
use common::start;
use serde_json::json;

#[test]
fn watches_with_selectors_see_objects_enter_and_leave() {
    let r = start(0.0);
    let rv = store_rv(&r);
    let watcher = std::thread::spawn({
        let port = r.port();
        move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            let req = format!(
                "GET /api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dweb&resourceVersion={rv}&timeoutSeconds=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            );
            s.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let label = |app: &str| json!({"metadata": {"labels": {"app": app}}}).to_string();
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/merge-patch+json",
        &label("other"),
    );
    assert_eq!(code, 200);
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/merge-patch+json",
        &label("web"),
    );
    assert_eq!(code, 200);
    // A pod that never matches is not seen.
    let (code, _) = send(
        &r,
        "PATCH",
        &format!("{PODS}/client-node-a"),
        "application/merge-patch+json",
        &label("client"),
    );
    assert_eq!(code, 200);
    let out = watcher.join().unwrap();
    let events: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .filter(|v| v.get("type").is_some())
        .collect();
    let seen: Vec<(String, String, String)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["name"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["labels"]["app"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    let want = |t: &str, app: &str| (t.to_string(), "web-a".to_string(), app.to_string());
    assert_eq!(seen, [want("DELETED", "web"), want("ADDED", "web")], "{out}");
    // The DELETED event carries the last matching state at the change's resourceVersion.
    assert!(
        events[0]["object"]["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > rv
    );
}

#[test]
fn followed_logs_stream_until_the_container_ends() {
    use std::io::{Read, Write};
    let r = start(0.0);
    let probe = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe-a"},
        "spec": {"nodeName": "node-a", "containers": [{"name": "probe", "image": "curlimages/curl:8.11.1",
          "env": [{"name": "LOCALITY_PROBE_TARGET", "value": "myservice:80/hostname"},
                  {"name": "LOCALITY_PROBE_INTERVAL_MS", "value": "100"}]}]}});
    let curl = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "curl-c"},
        "spec": {"nodeName": "node-c", "restartPolicy": "Never", "containers": [{"name": "curl",
          "image": "curlimages/curl:8.11.1", "command": ["curl", "-sS", "-m", "2", "http://myservice:80/hostname"]}]}});
    for p in [&probe, &curl] {
        assert_eq!(send(&r, "POST", PODS, "application/json", &p.to_string()).0, 201);
    }
    r.advance(1_500);
    let open = |name: &str| {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", r.port())).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_millis(100)))
            .unwrap();
        let req =
            format!("GET {PODS}/{name}/log?follow=true HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).unwrap();
        s
    };
    // Reads what arrives within `ms` of wall time; true when the server closed the stream.
    let read_for = |s: &mut std::net::TcpStream, buf: &mut String, ms: u64| -> bool {
        let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
        let mut chunk = [0u8; 4096];
        while std::time::Instant::now() < end {
            match s.read(&mut chunk) {
                Ok(0) => return true,
                Ok(n) => buf.push_str(&String::from_utf8_lossy(&chunk[..n])),
                Err(_) => {}
            }
        }
        false
    };
    let count = |buf: &str| buf.lines().filter(|l| l.contains(" 0 web-a")).count();
    let mut probe_stream = open("probe-a");
    let mut got = String::new();
    assert!(
        !read_for(&mut probe_stream, &mut got, 500),
        "follow keeps the connection open"
    );
    assert!(
        got.contains("Transfer-Encoding: chunked") || got.contains("transfer-encoding: chunked"),
        "{got}"
    );
    let before = count(&got);
    assert!(before >= 3, "the log so far: {got}");
    r.advance(1_000);
    assert!(!read_for(&mut probe_stream, &mut got, 700));
    let after = count(&got);
    assert!(
        after >= before + 9,
        "about 10 new tries in 1 s of virtual time: {before} -> {after}: {got}"
    );
    // The curl pod times out 2 s after it starts: its line arrives, then the stream ends.
    let mut curl_stream = open("curl-c");
    let mut text = String::new();
    assert!(!read_for(&mut curl_stream, &mut text, 300));
    assert!(!text.contains("curl: (28)"), "not written yet: {text}");
    r.advance(3_000);
    assert!(
        read_for(&mut curl_stream, &mut text, 3_000),
        "ends with the container: {text}"
    );
    assert!(
        text.contains("curl: (28) Connection timed out after 2000 milliseconds"),
        "{text}"
    );
    // Deleting the probe pod ends its stream.
    assert_eq!(
        send(
            &r,
            "DELETE",
            &format!("{PODS}/probe-a?gracePeriodSeconds=0"),
            "application/json",
            ""
        )
        .0,
        200
    );
    assert!(
        read_for(&mut probe_stream, &mut got, 3_000),
        "ends when the pod goes"
    );
}
