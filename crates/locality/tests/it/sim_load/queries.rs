//! #38 points 1–3: long query strings on one kept-alive connection (the request record), watch
//! lifetimes that do not parse or overflow, and resourceVersions that do not parse or come
//! from the future.

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{Probe, Server, current_resource_version, read_answer, request};

const T: Duration = Duration::from_secs(20);

/// Point 1: 6,000 kept-alive `GET /version?<60 KB query>` on one connection leave the server
/// under 300 MB (the request record kept every URI).
#[test]
#[ignore = "load test (minutes, measures memory): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn long_queries_on_one_connection_keep_memory_bounded() {
    let mut server = Server::start("queries", &[]);
    let probe = Probe::start(&server.addr);
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let query = "q".repeat(60_000);
    let head = format!("GET /version?{query} HTTP/1.1\r\nHost: x\r\n\r\n");
    let before = server.rss_kb();
    for i in 0..6_000 {
        s.write_all(head.as_bytes()).unwrap();
        let a = read_answer(&mut r).unwrap_or_else(|| panic!("answer {i}"));
        assert_eq!(a.code, 200, "request {i}");
    }
    eprintln!(
        "6,000 × 60 KB queries: RSS {} MB before, {} MB after",
        before / 1024,
        server.rss_kb() / 1024
    );
    probe.finish("long queries");
    server.assert_alive_without_panic();
    server.assert_peak_rss_under_limit("long queries");
}

/// Point 2: `timeoutSeconds` that does not fit an int64 is `400 BadRequest`, a huge one that
/// fits serves a watch (bounded) without a panic, a negative one ends the watch at once.
#[test]
#[ignore = "load test (measures memory and latency): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn watch_timeouts_that_overflow_are_refused_or_bounded() {
    let mut server = Server::start("timeouts", &[]);
    let probe = Probe::start(&server.addr);
    for bad in ["18446744073709551615", "abc", "1e9", "99999999999999999999999"] {
        let a = request(
            &server.addr,
            "GET",
            &format!("/api/v1/pods?watch=true&timeoutSeconds={bad}"),
            None,
            T,
        )
        .expect("an answer");
        assert_eq!(
            (a.code, a.reason().as_str()),
            (400, "BadRequest"),
            "timeoutSeconds={bad}"
        );
    }
    // The largest int64: a watch, which starts with the current pods.
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /api/v1/pods?watch=true&timeoutSeconds=9223372036854775807 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 512];
    let n = s.read(&mut first).unwrap();
    let text = String::from_utf8_lossy(&first[..n]);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    // Many of them at once, and negative ones (which end at once).
    let watches: Vec<TcpStream> = (0..200)
        .map(|i| {
            let mut s = TcpStream::connect(&server.addr).unwrap();
            let t = if i % 2 == 0 { "9223372036854775807" } else { "-5" };
            write!(
                s,
                "GET /api/v1/pods?watch=true&timeoutSeconds={t} HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            .unwrap();
            s
        })
        .collect();
    let ended = request(
        &server.addr,
        "GET",
        "/api/v1/pods?watch=true&timeoutSeconds=-5",
        None,
        T,
    )
    .expect("a negative timeout ends the watch");
    assert_eq!(ended.code, 200);
    std::thread::sleep(Duration::from_secs(2));
    drop(watches);
    probe.finish("watch timeouts");
    server.assert_alive_without_panic();
    server.assert_peak_rss_under_limit("watch timeouts");
}

/// Point 3: a resourceVersion from the future is `504 Timeout` (cause
/// `ResourceVersionTooLarge`) after about 3 s, for lists and gets, while the server keeps
/// answering; one that does not parse is `400`, and so is `continue` with a resourceVersion.
#[test]
#[ignore = "load test (measures memory and latency): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn resource_versions_from_the_future_time_out_as_upstream() {
    let mut server = Server::start("rvs", &[]);
    let probe = Probe::start(&server.addr);
    let future = current_resource_version(&server.addr) + 1_000_000_000;
    let addr = server.addr.clone();
    // 200 waiting at once must not hold the server.
    let waiting: Vec<_> = (0..200)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let path = if i % 2 == 0 {
                    format!("/api/v1/pods?resourceVersion={future}")
                } else {
                    format!("/api/v1/namespaces/default?resourceVersion={future}")
                };
                let start = Instant::now();
                let a = request(&addr, "GET", &path, None, T).expect("an answer");
                (a, start.elapsed(), path)
            })
        })
        .collect();
    for w in waiting {
        let (a, took, path) = w.join().unwrap();
        let s = a.json();
        assert_eq!((a.code, a.reason().as_str()), (504, "Timeout"), "{path}: {s}");
        assert_eq!(
            s["details"]["causes"][0]["reason"], "ResourceVersionTooLarge",
            "{s}"
        );
        assert!(
            s["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with("Timeout: Too large resource version"),
            "{s}"
        );
        assert!(
            took >= Duration::from_millis(2_500) && took < Duration::from_secs(10),
            "{path}: {took:?}"
        );
    }
    for bad in ["abc", "-1", "1.5"] {
        for path in [
            format!("/api/v1/pods?resourceVersion={bad}"),
            format!("/api/v1/namespaces/default?resourceVersion={bad}"),
            format!("/api/v1/pods?watch=true&resourceVersion={bad}"),
        ] {
            let a = request(&server.addr, "GET", &path, None, T).expect("an answer");
            assert_eq!((a.code, a.reason().as_str()), (400, "BadRequest"), "{path}");
        }
    }
    let page = request(&server.addr, "GET", "/api/v1/pods?limit=1", None, T)
        .unwrap()
        .json();
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_string();
    let a = request(
        &server.addr,
        "GET",
        &format!("/api/v1/pods?limit=1&continue={token}&resourceVersion=5"),
        None,
        T,
    )
    .unwrap();
    assert_eq!((a.code, a.reason().as_str()), (400, "BadRequest"));
    assert_eq!(
        a.json()["message"],
        "specifying resource version is not allowed when using continue"
    );
    probe.finish("future resourceVersions");
    server.assert_alive_without_panic();
    server.assert_peak_rss_under_limit("future resourceVersions");
}
