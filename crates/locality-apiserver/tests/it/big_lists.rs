//! Lists of more than 500 items are written item by item (#38): in JSON streamed in chunks,
//! in protobuf encoded item by item into the envelope; both say what a whole answer says.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use k8s_pb::api::core::v1 as core;
use prost::Message as _;
use serde_json::Value;

use crate::common::{eventually, get_json, http, start};
use crate::protobuf_bodies::{PREFERS_PROTOBUF, unwrap_envelope};

const PODS: &str = "/api/v1/namespaces/default/pods";

/// The body of an answer, its chunked framing undone; and whether it was chunked.
fn body_of(path: &str, accept: &str, port: u16) -> (Vec<u8>, bool) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("an answer") + 4;
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let mut rest = &raw[split..];
    if !head.contains("transfer-encoding: chunked") {
        return (rest.to_vec(), false);
    }
    let mut body = Vec::new();
    loop {
        let end = rest.windows(2).position(|w| w == b"\r\n").expect("a chunk size");
        let n = usize::from_str_radix(std::str::from_utf8(&rest[..end]).unwrap().trim(), 16).unwrap();
        rest = &rest[end + 2..];
        if n == 0 {
            return (body, true);
        }
        body.extend_from_slice(&rest[..n]);
        rest = &rest[n + 2..];
    }
}

#[test]
fn a_big_list_is_streamed_and_says_what_a_whole_one_says() {
    let r = start(10.0);
    let deployment = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"big"},
        "spec":{"replicas":700,"selector":{"matchLabels":{"app":"big"}},
        "template":{"metadata":{"labels":{"app":"big"}},
        "spec":{"containers":[{"name":"c","image":"registry.k8s.io/e2e-test-images/agnhost:2.52"}]}}}}"#;
    let (code, body) = http(
        &r,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        "application/json",
        deployment,
    );
    assert_eq!(code, 201, "{body}");
    let selected = format!("{PODS}?labelSelector=app%3Dbig");
    eventually(60, || {
        let (body, _) = body_of(&selected, "application/json", r.port());
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        (v["items"].as_array().map_or(0, Vec::len) == 700).then_some(())
    })
    .expect("700 pods");
    let (json, chunked) = body_of(&selected, "application/json", r.port());
    assert!(chunked, "a list of 700 is streamed");
    let list: Value = serde_json::from_slice(&json).expect("one JSON document");
    assert_eq!(
        (list["kind"].as_str(), list["apiVersion"].as_str()),
        (Some("PodList"), Some("v1"))
    );
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 700);
    assert!(
        items
            .iter()
            .all(|p| p["kind"] == "Pod" && p["metadata"]["labels"]["app"] == "big")
    );
    // Pages of it (each small, written whole) hold the same pods in the same order.
    let (_, first) = get_json(&r, &format!("{selected}&limit=400"));
    let token = first["metadata"]["continue"].as_str().expect("a continue token");
    let (_, second) = get_json(&r, &format!("{selected}&limit=400&continue={token}"));
    let names = |v: &[Value]| -> Vec<String> {
        v.iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let mut paged = names(first["items"].as_array().unwrap());
    paged.extend(names(second["items"].as_array().unwrap()));
    assert_eq!(paged, names(items));
    // In protobuf: the same pods, decoded by prost.
    let (pb, _) = body_of(&selected, PREFERS_PROTOBUF, r.port());
    let (kind, raw) = unwrap_envelope(&pb);
    assert_eq!(kind, ("v1".to_string(), "PodList".to_string()));
    let decoded = core::PodList::decode(raw.as_slice()).expect("a PodList");
    let pb_names: Vec<String> = decoded
        .items
        .iter()
        .map(|p| {
            p.metadata
                .as_ref()
                .and_then(|m| m.name.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(pb_names, names(items));
    assert!(
        decoded
            .metadata
            .and_then(|m| m.resource_version)
            .is_some_and(|rv| !rv.is_empty())
    );
}
