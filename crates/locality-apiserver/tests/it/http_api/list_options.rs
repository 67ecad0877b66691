//! The list options a real API server refuses or bounds (#38), over raw HTTP: `timeoutSeconds`
//! and `resourceVersion` that do not parse (`400`), a watch lifetime that would overflow, a
//! resourceVersion from the future (`504 Timeout`, cause `ResourceVersionTooLarge`, after
//! the watch cache's 3 s), `continue` with a resourceVersion (`400`), and the request record
//! kept only when asked.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common::{get_json, start};

fn reason(v: &Value) -> (&str, &str) {
    (
        v["reason"].as_str().unwrap_or_default(),
        v["message"].as_str().unwrap_or_default(),
    )
}

#[test]
fn watch_timeouts_that_do_not_fit_an_int64_are_bad_requests() {
    let r = start(10.0);
    for bad in ["18446744073709551615", "abc", "1.5", "-9223372036854775809"] {
        let (code, v) = get_json(&r, &format!("/api/v1/pods?watch=true&timeoutSeconds={bad}"));
        assert_eq!(
            (code, reason(&v).0),
            (400, "BadRequest"),
            "timeoutSeconds={bad}: {v}"
        );
        assert!(reason(&v).1.starts_with("strconv.ParseInt: parsing"), "{v}");
    }
    // The same for a list, and `limit`.
    let (code, _) = get_json(&r, "/api/v1/pods?timeoutSeconds=abc");
    assert_eq!(code, 400);
    let (code, _) = get_json(&r, "/api/v1/pods?limit=abc");
    assert_eq!(code, 400);
    // A negative timeout ends the watch at once (Go's timer fires at once).
    let start = Instant::now();
    let (code, _) = get_json(&r, "/api/v1/namespaces?watch=true&timeoutSeconds=-1");
    assert_eq!(code, 200);
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_largest_watch_timeout_serves_a_watch_without_a_panic() {
    let r = start(10.0);
    let mut s = TcpStream::connect(("127.0.0.1", r.port())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /api/v1/namespaces?watch=true&timeoutSeconds=9223372036854775807 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    .unwrap();
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 4096];
    let until = Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&seen).contains("\"ADDED\"") && Instant::now() < until {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&seen);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.contains("\"ADDED\""),
        "the watch sends the namespaces: {text}"
    );
    // The server still answers (the watch task did not panic and take the server with it).
    let (code, _) = get_json(&r, "/api/v1/namespaces");
    assert_eq!(code, 200);
}

#[test]
fn resource_versions_that_do_not_parse_are_bad_requests() {
    let r = start(10.0);
    for bad in ["abc", "-1", "1.5", "18446744073709551616"] {
        for path in [
            format!("/api/v1/pods?resourceVersion={bad}"),
            format!("/api/v1/namespaces/default?resourceVersion={bad}"),
            format!("/api/v1/pods?watch=true&resourceVersion={bad}"),
        ] {
            let (code, v) = get_json(&r, &path);
            assert_eq!((code, reason(&v).0), (400, "BadRequest"), "{path}: {v}");
            assert!(reason(&v).1.starts_with("invalid resource version: "), "{v}");
        }
    }
}

#[test]
fn a_resource_version_from_the_future_times_out_as_the_watch_cache() {
    let r = start(10.0);
    let (_, list) = get_json(&r, "/api/v1/namespaces");
    let current: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let future = current + 1_000_000;
    for path in [
        format!("/api/v1/pods?resourceVersion={future}"),
        format!("/api/v1/namespaces/default?resourceVersion={future}"),
    ] {
        let start = Instant::now();
        let (code, v) = get_json(&r, &path);
        let took = start.elapsed();
        assert_eq!((code, reason(&v).0), (504, "Timeout"), "{path}: {v}");
        assert!(
            reason(&v).1.starts_with(&format!(
                "Timeout: Too large resource version: {future}, current: "
            )),
            "{v}"
        );
        assert_eq!(
            v["details"]["causes"][0]["reason"], "ResourceVersionTooLarge",
            "{v}"
        );
        assert_eq!(v["details"]["causes"][0]["message"], "Too large resource version");
        assert_eq!(v["details"]["retryAfterSeconds"], 1);
        assert!(
            took >= Duration::from_millis(2_900),
            "{path}: answered after {took:?}"
        );
    }
    // One the store has reached is served at once.
    let (code, _) = get_json(&r, &format!("/api/v1/pods?resourceVersion={current}"));
    assert_eq!(code, 200);
}

#[test]
fn continue_with_a_resource_version_is_a_bad_request() {
    let r = start(10.0);
    let (_, page) = get_json(&r, "/api/v1/pods?limit=1");
    let token = page["metadata"]["continue"].as_str().expect("a continue token");
    let (code, v) = get_json(
        &r,
        &format!("/api/v1/pods?limit=1&continue={token}&resourceVersion=3"),
    );
    assert_eq!(
        (code, reason(&v)),
        (
            400,
            (
                "BadRequest",
                "specifying resource version is not allowed when using continue"
            )
        )
    );
    // "0" (any) is allowed with it, as upstream.
    let (code, _) = get_json(
        &r,
        &format!("/api/v1/pods?limit=1&continue={token}&resourceVersion=0"),
    );
    assert_eq!(code, 200);
}

#[test]
fn requests_are_recorded_only_when_asked() {
    let r = start(10.0);
    let _ = get_json(&r, "/version");
    assert!(r.requests().is_empty(), "a server not asked keeps no record");
}

#[test]
fn requests_are_recorded_when_asked() {
    let topology = locality_sim::Topology::builtin("three-zones").expect("built-in topology");
    let mut opts =
        locality_apiserver::ServeOptions::from_topology(&topology, locality_sim::SimConfig::default())
            .expect("engine");
    opts.record_requests = true;
    let r = locality_apiserver::serve(opts).expect("serve");
    let _ = get_json(&r, "/version?x=1");
    assert_eq!(r.requests(), [("GET".to_string(), "/version?x=1".to_string())]);
}
