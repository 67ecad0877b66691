//! Protobuf request bodies over raw HTTP (no kubectl needed): the bodies kubectl 1.32 and 1.33
//! send (captured in `tests/fixtures/protobuf/`) create, update and delete as their JSON does,
//! answers stay JSON, and a kind the server does not decode is `415`.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{get_json, start};
use serde_json::Value;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/protobuf/{name}.kubectl-1.32-1.33.pb",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A request with a binary body and kubectl 1.32's `Accept`; the status code, the answer's
/// `Content-Type` and its JSON.
fn send(r: &locality_apiserver::Running, method: &str, path: &str, body: &[u8]) -> (u16, String, Value) {
    let mut s = TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {PROTOBUF}\r\nAccept: {PROTOBUF},application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("write");
    s.write_all(body).expect("write");
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    (
        code,
        content_type,
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

/// A length-delimited protobuf field.
fn field(tag: u8, b: &[u8]) -> Vec<u8> {
    let mut out = vec![tag << 3 | 2, u8::try_from(b.len()).unwrap()];
    out.extend_from_slice(b);
    out
}

#[test]
fn kubectl_protobuf_bodies_create_update_and_delete() {
    let r = start(0.0);
    let (code, ct, v) = send(&r, "POST", "/api/v1/namespaces", &fixture("namespace"));
    assert_eq!((code, ct.as_str()), (201, "application/json"), "{v}");
    assert_eq!(v["metadata"]["name"], "fixture");

    let deploys = "/apis/apps/v1/namespaces/fixture/deployments";
    let (code, _, v) = send(&r, "POST", deploys, &fixture("deployment"));
    assert_eq!(code, 201, "{v}");
    let (_, v) = get_json(&r, &format!("{deploys}/web"));
    assert_eq!(v["spec"]["replicas"], 0, "{v}");
    let c = &v["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"], serde_json::json!(["/agnhost", "netexec"]), "{v}");
    assert_eq!(c["ports"][0]["containerPort"], 8080, "{v}");
    // An update (PUT) of the same body.
    let (code, _, v) = send(&r, "PUT", &format!("{deploys}/web"), &fixture("deployment"));
    assert_eq!(code, 200, "{v}");

    let services = "/api/v1/namespaces/fixture/services";
    let (code, _, v) = send(&r, "POST", services, &fixture("service"));
    assert_eq!(code, 201, "{v}");
    let (_, v) = get_json(&r, &format!("{services}/web"));
    assert_eq!(v["spec"]["type"], "NodePort", "{v}");
    assert_eq!(v["spec"]["ports"][0]["nodePort"], 30080, "{v}");
    assert_eq!(v["spec"]["ports"][0]["targetPort"], "http", "{v}");

    // `drain --grace-period=0`'s DeleteOptions: gone at once.
    let pod = "/api/v1/namespaces/default/pods/web-b";
    let (code, _, v) = send(&r, "DELETE", pod, &fixture("deleteoptions"));
    assert_eq!(code, 200, "{v}");
    assert_eq!(get_json(&r, pod).0, 404);
}

#[test]
fn protobuf_bodies_of_unknown_kinds_are_415_and_broken_ones_400() {
    let r = start(0.0);
    let type_meta = [field(1, b"example.com/v1"), field(2, b"Widget")].concat();
    let body = [
        b"k8s\0".as_slice(),
        field(1, &type_meta).as_slice(),
        field(2, b"").as_slice(),
    ]
    .concat();
    let (code, _, v) = send(&r, "POST", "/api/v1/namespaces", &body);
    assert_eq!(code, 415, "{v}");
    assert_eq!(
        (v["kind"].as_str(), v["reason"].as_str()),
        (Some("Status"), Some("UnsupportedMediaType"))
    );
    assert!(v["message"].as_str().unwrap().contains("kind Widget"), "{v}");

    let (code, _, v) = send(&r, "POST", "/api/v1/namespaces", br#"{"metadata":{"name":"x"}}"#);
    assert_eq!(code, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("does not appear to be a protobuf message"),
        "{v}"
    );
    // A Namespace body sent to the pods collection: the kind check JSON bodies get.
    let (code, _, v) = send(
        &r,
        "POST",
        "/api/v1/namespaces/default/pods",
        &fixture("namespace"),
    );
    assert_eq!(code, 400, "{v}");
    assert!(v["message"].as_str().unwrap().contains("does not match"), "{v}");
}
