//! A workload's `metadata.generation`, `status.observedGeneration` and updated count, and the
//! watch events of its status changes: what `kubectl rollout status` waits on. The simulated
//! cluster computes a workload's status when it is read, so these events are the server's own
//! (`status_watch`), not store writes.

use crate::common::{eventually, get_json, http, start};

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

const DS: &str = "/apis/apps/v1/namespaces/default/daemonsets";

fn agent() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{
                    "name": "netexec",
                    "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                    "args": ["netexec", "--http-port=8080"],
                }]},
            },
        },
    })
}

fn status(r: &locality_apiserver::Running) -> Value {
    let (code, v) = get_json(r, &format!("{DS}/agent"));
    assert_eq!(code, 200, "{v}");
    v
}

/// The events of a watch on the DaemonSet `agent` from `rv`, read until `done` says so (or the
/// watch's 30 s end).
fn watch_until(r: &locality_apiserver::Running, rv: &str, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut s = TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(40)))
        .expect("timeout");
    let head = format!(
        "GET {DS}?watch=1&fieldSelector=metadata.name%3Dagent&resourceVersion={rv}&timeoutSeconds=30 HTTP/1.0\r\nHost: localhost\r\nAccept: application/json\r\n\r\n"
    );
    s.write_all(head.as_bytes()).expect("write");
    let mut events = Vec::new();
    for line in BufReader::new(s).lines() {
        let Ok(line) = line else { break };
        let Ok(e) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let stop = done(&e);
        events.push(e);
        if stop {
            break;
        }
    }
    events
}

#[test]
fn a_rollout_is_watched_to_its_end_through_status_events() {
    let r = start(20.0);
    let (code, body) = http(&r, "POST", DS, "application/json", &agent().to_string());
    assert_eq!(code, 201, "{body}");
    let desired = eventually(30, || {
        let v = status(&r);
        let s = &v["status"];
        let n = s["desiredNumberScheduled"].as_u64()?;
        (n > 0 && s["numberAvailable"] == n && s["updatedNumberScheduled"] == n).then_some(n)
    })
    .expect("the DaemonSet's pods become available");
    let v = status(&r);
    assert_eq!(v["metadata"]["generation"], 1, "{v}");
    assert_eq!(v["status"]["observedGeneration"], 1, "{v}");

    // A metadata-only write keeps the generation.
    let (code, body) = http(
        &r,
        "PATCH",
        &format!("{DS}/agent"),
        "application/merge-patch+json",
        r#"{"metadata":{"annotations":{"note":"x"}}}"#,
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(status(&r)["metadata"]["generation"], 1);

    // A template change: generation 2, then a rollout the watch follows to its end.
    let rv = status(&r)["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, body) = http(
        &r,
        "PATCH",
        &format!("{DS}/agent"),
        "application/merge-patch+json",
        r#"{"spec":{"template":{"metadata":{"labels":{"rev":"2"}}}}}"#,
    );
    assert_eq!(code, 200, "{body}");
    let done = |e: &Value| {
        let s = &e["object"]["status"];
        e["object"]["metadata"]["generation"] == 2
            && s["observedGeneration"] == 2
            && s["updatedNumberScheduled"] == desired
            && s["numberAvailable"] == desired
    };
    let events = watch_until(&r, &rv, done);
    let last = events.last().expect("events");
    assert!(done(last), "the watch saw the rollout end: {events:#?}");
    assert!(events.iter().all(|e| e["type"] == "MODIFIED"), "{events:#?}");
    // On the way: fewer pods updated than desired, each event's resourceVersion newer.
    let updated: Vec<u64> = events
        .iter()
        .map(|e| e["object"]["status"]["updatedNumberScheduled"].as_u64().unwrap())
        .collect();
    assert!(updated.iter().any(|&u| u < desired), "{updated:?}");
    let versions: Vec<u64> = events
        .iter()
        .map(|e| {
            e["object"]["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert!(
        events.iter().all(|e| {
            let g = e["object"]["metadata"]["generation"].as_i64().unwrap();
            e["object"]["status"]["observedGeneration"].as_i64().unwrap() <= g
        }),
        "{events:#?}"
    );
}

/// A watch resumed from the resourceVersion of an earlier read is sent the statuses that
/// changed since, though the workload itself was not written: its client read them then.
#[test]
fn a_watch_from_an_earlier_read_is_sent_the_statuses_changed_since() {
    let r = start(0.0);
    let (code, body) = http(&r, "POST", DS, "application/json", &agent().to_string());
    assert_eq!(code, 201, "{body}");
    let v = status(&r);
    let rv = v["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    assert_eq!(v["status"]["numberReady"], 0, "{v}");
    // The pods start and turn Ready: the DaemonSet itself is not written.
    r.advance(60_000);
    let v = status(&r);
    let ready = v["status"]["numberReady"].as_u64().unwrap();
    assert!(ready > 0, "{v}");
    assert_eq!(
        v["metadata"]["resourceVersion"].as_str(),
        Some(rv.as_str()),
        "{v}"
    );
    let events = watch_until(&r, &rv, |e| e["object"]["status"]["numberReady"] == ready);
    assert!(
        events
            .last()
            .is_some_and(|e| e["type"] == "MODIFIED" && e["object"]["status"]["numberReady"] == ready),
        "{events:#?}"
    );
}
