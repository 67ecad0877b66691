//! Fault injection (`ServeOptions::faults`) over real HTTP: 5xx per verb at the configured
//! rate, 409 on create, added latency, dropped connections, and the repo's live reader
//! (`locality_live::snapshot_blocking`, kube-rs) retrying through a 5xx.

use crate::common;

use std::time::{Duration, Instant};

use locality_apiserver::{Faults, Running, ServeOptions, Verb};
use locality_sim::{SimConfig, Topology};

fn start_with(faults: Faults) -> Running {
    let topology = Topology::builtin("three-zones").expect("built-in topology");
    let mut opts = ServeOptions::from_topology(&topology, SimConfig::default()).expect("engine");
    locality_sim::builders::playbook_fixture(&mut opts.engine).expect("fixture");
    opts.engine.run_for(10_000);
    opts.speed = 10.0;
    opts.faults = faults;
    locality_apiserver::serve(opts).expect("serve")
}

#[test]
fn get_errors_appear_at_the_configured_rate_and_other_verbs_are_spared() {
    let faults = Faults {
        seed: 7,
        ..Faults::default()
    }
    .with_error_rate(Verb::Get, 0.3);
    let r = start_with(faults);
    let mut failed = 0;
    for _ in 0..300 {
        let (code, v) = common::get_json(&r, "/api/v1/namespaces/default/pods/web-a");
        match code {
            200 => {}
            500 => {
                assert_eq!(v["reason"], "InternalError");
                failed += 1;
            }
            c => panic!("unexpected {c}: {v}"),
        }
    }
    assert!((60..=120).contains(&failed), "{failed} of 300 at rate 0.3");
    let counts = r.faults_injected();
    assert_eq!(counts.errors.get(&Verb::Get).copied(), Some(failed));
    for _ in 0..50 {
        assert_eq!(
            common::get_json(&r, "/api/v1/pods").0,
            200,
            "lists are not faulted"
        );
        assert_eq!(
            common::get_json(&r, "/version").0,
            200,
            "discovery is never faulted"
        );
    }
}

#[test]
fn conflict_on_create() {
    let r = start_with(Faults {
        conflict_on_create: 1.0,
        ..Faults::default()
    });
    let (code, body) = common::http(
        &r,
        "POST",
        "/api/v1/namespaces",
        "application/json",
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}"#,
    );
    assert_eq!(code, 409, "{body}");
    assert!(body.contains("\"reason\":\"Conflict\""), "{body}");
    assert_eq!(r.faults_injected().conflicts, 1);
}

#[test]
fn dropped_connections_get_no_answer() {
    let r = start_with(Faults {
        drop_rate: 1.0,
        ..Faults::default()
    });
    let (code, body) = common::http(&r, "GET", "/api/v1/pods", "application/json", "");
    assert_eq!((code, body.as_str()), (0, ""), "closed without an answer");
    assert_eq!(common::get_json(&r, "/version").0, 200);
    assert_eq!(r.faults_injected().dropped, 1);
}

#[test]
fn added_latency() {
    let r = start_with(Faults {
        latency: Duration::from_millis(300),
        ..Faults::default()
    });
    let t = Instant::now();
    assert_eq!(common::get_json(&r, "/api/v1/pods").0, 200);
    assert!(t.elapsed() >= Duration::from_millis(300));
}

#[test]
fn invalid_rates_are_refused() {
    let topology = Topology::builtin("three-zones").expect("built-in topology");
    let mut opts = ServeOptions::from_topology(&topology, SimConfig::default()).expect("engine");
    opts.faults = Faults::default().with_error_rate(Verb::List, 1.5);
    let e = locality_apiserver::serve(opts).expect_err("rate 1.5");
    assert!(
        e.to_string().contains("5xx rate for list must be within [0, 1]"),
        "{e}"
    );
}

#[test]
fn live_snapshot_retries_through_5xx() {
    let r = start_with(Faults {
        fail_first: 2,
        ..Faults::default()
    });
    let opts = locality_live::LiveOptions {
        kubeconfig: Some(r.kubeconfig_path().to_path_buf()),
        all_namespaces: true,
        ..locality_live::LiveOptions::default()
    };
    let snap = locality_live::snapshot_blocking(&opts, None).expect("snapshot despite two 500s");
    // The fixture's 5 pods and the 3 nodes' kube-proxies.
    assert_eq!(snap.state.pods.len(), 8);
    let injected: u64 = r.faults_injected().errors.values().sum();
    assert_eq!(injected, 2);
}

/// A raw JSON watch (HTTP/1.0: the answer ends with the watch); its lines and how long it
/// stayed open.
fn raw_watch(r: &Running, query: &str) -> (Vec<serde_json::Value>, Duration) {
    use std::io::{Read, Write};
    let started = Instant::now();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let head =
        format!("GET /api/v1/namespaces/default/pods?watch=1&{query} HTTP/1.0\r\nHost: localhost\r\n\r\n");
    s.write_all(head.as_bytes()).expect("write");
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    let body = buf.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let events = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect();
    (events, started.elapsed())
}

#[test]
fn expired_watches_end_and_resuming_from_before_the_expiry_is_410() {
    let r = start_with(Faults {
        expire_watches: Some(Duration::from_millis(500)),
        ..Faults::default()
    });
    let (_, list) = common::get_json(&r, "/api/v1/namespaces/default/pods");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    // An open watch (asked for 20 s) ends at the next expiry.
    let (events, open) = raw_watch(&r, &format!("resourceVersion={rv}&timeoutSeconds=20"));
    assert!(open < Duration::from_secs(5), "the watch stayed open {open:?}");
    assert!(events.iter().all(|e| e["type"] != "ERROR"), "{events:?}");
    // A write, then an expiry: resuming from the list's version is 410 Gone; a fresh list's
    // version watches again.
    let (code, v) = common::http(
        &r,
        "PATCH",
        "/api/v1/namespaces/default/pods/web-a",
        "application/merge-patch+json",
        r#"{"metadata":{"labels":{"touched":"yes"}}}"#,
    );
    assert_eq!(code, 200, "{v}");
    std::thread::sleep(Duration::from_millis(1200));
    let (events, _) = raw_watch(&r, &format!("resourceVersion={rv}&timeoutSeconds=20"));
    let first = events.first().expect("an ERROR event");
    assert_eq!(
        (first["type"].as_str(), first["object"]["code"].as_i64()),
        (Some("ERROR"), Some(410)),
        "{events:?}"
    );
    let (_, list) = common::get_json(&r, "/api/v1/namespaces/default/pods");
    let fresh = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let (events, _) = raw_watch(&r, &format!("resourceVersion={fresh}&timeoutSeconds=20"));
    assert!(events.iter().all(|e| e["type"] != "ERROR"), "{events:?}");
}
