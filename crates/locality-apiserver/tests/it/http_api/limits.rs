//! The limits of a real API server, over raw HTTP: body size (413), header-read and request
//! timeouts, JSON-patch limits (413, 422) and the object size limit (etcd's refusal).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use locality_apiserver::{
    JSON_PATCH_MAX_COPY_BYTES, Limits, MAX_JSON_PATCH_OPERATIONS, MAX_REQUEST_BODY_BYTES, Running,
    ServeOptions,
};
use locality_sim::{SimConfig, Topology};
use serde_json::{Value, json};

use super::common::{http, read_response};

const PODS: &str = "/api/v1/namespaces/default/pods";

/// `three-zones` with the playbook fixture, served at speed 10 with `limits`.
fn start_with(limits: Limits) -> Running {
    let topology = Topology::builtin("three-zones").expect("built-in topology");
    let mut opts = ServeOptions::from_topology(&topology, SimConfig::default()).expect("engine");
    locality_sim::builders::playbook_fixture(&mut opts.engine).expect("fixture");
    opts.engine.run_for(10_000);
    opts.limits = limits;
    locality_apiserver::serve(opts).expect("serve")
}

fn connect(r: &Running) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    s
}

fn status_of(text: &str) -> Value {
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or(Value::Null)
}

fn pod(name: &str, annotation_bytes: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "annotations": {"big": "x".repeat(annotation_bytes)}},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})
}

#[test]
fn bodies_over_3_mib_are_413_and_objects_over_etcds_limit_are_refused() {
    let r = start_with(Limits::default());
    // Declared too large: answered before any byte of the body is read.
    let mut s = connect(&r);
    let head = format!(
        "POST {PODS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        MAX_REQUEST_BODY_BYTES + 1
    );
    s.write_all(head.as_bytes()).expect("write");
    let (code, text) = read_response(s);
    let v = status_of(&text);
    assert_eq!(
        (code, v["reason"].as_str()),
        (413, Some("RequestEntityTooLarge")),
        "{text}"
    );
    assert_eq!(v["message"], "Request entity too large: limit is 3145728");
    // Found too large while reading a chunked body (no Content-Length).
    let mut s = connect(&r);
    let chunk = vec![b'x'; MAX_REQUEST_BODY_BYTES + 1];
    let mut req = format!(
        "POST {PODS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
        chunk.len()
    )
    .into_bytes();
    req.extend_from_slice(&chunk);
    req.extend_from_slice(b"\r\n0\r\n\r\n");
    s.write_all(&req).expect("write");
    let (code, text) = read_response(s);
    assert_eq!(code, 413, "{}", &text[..text.len().min(300)]);
    // Under the body limit but over etcd's 1.5 MiB: refused as the real server relays etcd.
    let (code, body) = http(
        &r,
        "POST",
        PODS,
        "application/json",
        &pod("big", 2 << 20).to_string(),
    );
    let v: Value = serde_json::from_str(&body).expect("status");
    assert_eq!(code, 500, "{body}");
    assert_eq!(v["message"], "etcdserver: request is too large");
    assert!(v.get("reason").is_none(), "StatusReasonUnknown is left out: {v}");
    // Under both: stored.
    let (code, body) = http(
        &r,
        "POST",
        PODS,
        "application/json",
        &pod("fits", 1 << 20).to_string(),
    );
    assert_eq!(code, 201, "{}", &body[..body.len().min(300)]);
}

#[test]
fn silent_and_slow_clients_are_disconnected_and_do_not_hold_the_server() {
    let r = start_with(Limits {
        header_read_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let started = Instant::now();
    // Sends nothing at all.
    let silent = connect(&r);
    // Sends half a request head.
    let mut slow = connect(&r);
    slow.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\n")
        .expect("write");
    // Meanwhile the server answers others.
    let (code, _) = http(&r, "GET", "/version", "", "");
    assert_eq!(code, 200);
    for s in [silent, slow] {
        let (code, text) = read_response(s);
        assert_eq!(code, 0, "closed without an answer: {text}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "closed after {:?}",
        started.elapsed()
    );
    // A kept-alive connection left idle is closed as well.
    let mut idle = connect(&r);
    idle.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    let started = Instant::now();
    let (code, text) = read_response(idle);
    assert_eq!(code, 200, "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "closed after {:?}",
        started.elapsed()
    );
}

#[test]
fn a_request_not_done_in_time_is_504_but_long_running_ones_run_on() {
    let r = start_with(Limits {
        request_timeout: Duration::from_millis(400),
        ..Limits::default()
    });
    // A body promised and never sent.
    let mut s = connect(&r);
    s.write_all(
        format!("POST {PODS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"kind\"")
            .as_bytes(),
    )
    .expect("write");
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).expect("an answer");
    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(text.starts_with("HTTP/1.1 504"), "{text}");
    assert_eq!(status_of(&text)["reason"], "Timeout", "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // pods/proxy is long-running: two /dial tries that time out (5 virtual s each, 0.5 s of
    // wall time at speed 10) outlast the request timeout and still answer.
    let (code, body) = http(
        &r,
        "GET",
        "/api/v1/namespaces/default/pods/client-node-c:8080/proxy/dial?host=myservice&port=80&request=hostname&tries=2",
        "",
        "",
    );
    let v: Value = serde_json::from_str(body.trim()).unwrap_or(Value::String(body));
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["errors"].as_array().map(Vec::len), Some(2), "{v}");
}

fn json_patch(r: &Running, name: &str, ops: &Value) -> (u16, Value) {
    let (code, body) = http(
        r,
        "PATCH",
        &format!("{PODS}/{name}"),
        "application/json-patch+json",
        &ops.to_string(),
    );
    (code, serde_json::from_str(&body).unwrap_or(Value::String(body)))
}

#[test]
fn json_patches_are_bounded_in_operations_and_in_copied_bytes() {
    let r = start_with(Limits::default());
    let (code, body) = http(
        &r,
        "POST",
        PODS,
        "application/json",
        &pod("target", 10).to_string(),
    );
    assert_eq!(code, 201, "{body}");
    let test_op = json!({"op": "test", "path": "/kind", "value": "Pod"});
    let ops = Value::Array(vec![test_op.clone(); MAX_JSON_PATCH_OPERATIONS + 1]);
    let (code, v) = json_patch(&r, "target", &ops);
    assert_eq!(
        (code, v["reason"].as_str()),
        (413, Some("RequestEntityTooLarge")),
        "{v}"
    );
    assert_eq!(
        v["message"],
        format!(
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got {}",
            MAX_JSON_PATCH_OPERATIONS + 1
        )
    );
    let ops = Value::Array(vec![test_op; MAX_JSON_PATCH_OPERATIONS]);
    assert_eq!(json_patch(&r, "target", &ops).0, 200, "exactly the limit applies");
    // Repeated copies double an annotation: stopped at the copy limit, nothing changed.
    let mut ops =
        vec![json!({"op": "add", "path": "/metadata/annotations/a0", "value": "y".repeat(64 << 10)})];
    for i in 1..40 {
        ops.push(json!({"op": "copy", "from": "/metadata/annotations", "path": format!("/metadata/annotations/a{i}")}));
    }
    let (code, v) = json_patch(&r, "target", &Value::Array(ops));
    assert_eq!((code, v["reason"].as_str()), (422, Some("Invalid")), "{v}");
    let message = v["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the accumulated size increase of copy is")
            && message.contains(&format!("exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}")),
        "{message}"
    );
    let (_, body) = http(&r, "GET", &format!("{PODS}/target"), "", "");
    let now: Value = serde_json::from_str(&body).expect("pod");
    assert!(
        now["metadata"]["annotations"].get("a0").is_none(),
        "{}",
        now["metadata"]
    );
    // A few copies within the limit apply.
    let ops = json!([{"op": "add", "path": "/metadata/annotations/b", "value": "z"},
                     {"op": "copy", "from": "/metadata/annotations/b", "path": "/metadata/annotations/c"}]);
    let (code, v) = json_patch(&r, "target", &ops);
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["annotations"]["c"], "z");
}
