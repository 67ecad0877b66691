//! Protobuf over raw HTTP (no kubectl needed): the request bodies kubectl 1.32 and 1.33 send
//! (captured in `tests/fixtures/protobuf/`) create, update and delete as their JSON does, and
//! a kind the server does not decode is `415`; answers and watches are protobuf when the
//! client prefers it, read here by an independent decoder (`k8s-pb`'s prost types, generated
//! from upstream's `generated.proto` files).

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{get_json, start};
use serde_json::Value;

pub(crate) const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/protobuf/{name}.kubectl-1.32-1.33.pb",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A request with a binary body and `accept`: the status code, the answer's `Content-Type`
/// and its bytes.
pub(crate) fn exchange(
    r: &locality_apiserver::Running,
    method: &str,
    path: &str,
    accept: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {PROTOBUF}\r\nAccept: {accept}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("write");
    s.write_all(body).expect("write");
    let (head, body) = answer(s);
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
    (code, content_type, body)
}

/// An HTTP answer read to its end: the head and the body's bytes.
pub(crate) fn answer(mut s: TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    (
        String::from_utf8_lossy(&buf[..split]).into_owned(),
        buf[split + 4..].to_vec(),
    )
}

/// A request as kubectl 1.31 sends it (`Accept: application/json`): the status code, the
/// answer's `Content-Type` and its JSON.
fn send(r: &locality_apiserver::Running, method: &str, path: &str, body: &[u8]) -> (u16, String, Value) {
    let (code, ct, bytes) = exchange(r, method, path, "application/json", body);
    (code, ct, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
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
    // Stored as the API server defaults it (`SetDefaults_Deployment`).
    assert_eq!(
        v["spec"]["strategy"],
        serde_json::json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
        "{v}"
    );
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
fn kubectl_protobuf_bodies_of_stored_kinds_create_a_job_and_a_serviceaccount() {
    let r = start(0.0);
    let jobs = "/apis/batch/v1/namespaces/default/jobs";
    let (code, _, v) = send(&r, "POST", jobs, &fixture("job"));
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["backoffLimit"], 6, "defaulted: {v}");
    assert_eq!(v["spec"]["template"]["spec"]["restartPolicy"], "Never", "{v}");
    // Read back in protobuf by prost's Job.
    let (code, ct, bytes) = exchange(&r, "GET", &format!("{jobs}/once"), PREFERS_PROTOBUF, b"");
    assert_eq!((code, ct.as_str()), (200, PROTOBUF));
    let ((api, kind), raw) = unwrap_envelope(&bytes);
    assert_eq!((api.as_str(), kind.as_str()), ("batch/v1", "Job"));
    let job = k8s_pb::api::batch::v1::Job::decode(raw.as_slice()).expect("a Job");
    let spec = job.spec.expect("spec");
    assert_eq!(
        (
            spec.backoff_limit,
            spec.completions,
            spec.completion_mode.as_deref()
        ),
        (Some(6), Some(1), Some("NonIndexed"))
    );
    let sas = "/api/v1/namespaces/default/serviceaccounts";
    let (code, _, v) = send(&r, "POST", sas, &fixture("serviceaccount"));
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        get_json(&r, &format!("{sas}/robot")).1["metadata"]["name"],
        "robot"
    );
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

// ----- answers and watches in protobuf, read by prost -----

use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message as _;

/// kubectl 1.32's and client-go's `Accept` for built-in kinds.
pub(crate) const PREFERS_PROTOBUF: &str = "application/vnd.kubernetes.protobuf,application/json";

/// The `runtime.Unknown` of an envelope: its (apiVersion, kind) and raw message.
pub(crate) fn unwrap_envelope(bytes: &[u8]) -> ((String, String), Vec<u8>) {
    let data = bytes
        .strip_prefix(b"k8s\0")
        .unwrap_or_else(|| panic!("no protobuf envelope: {:?}", String::from_utf8_lossy(bytes)));
    let u = Unknown::decode(data).expect("runtime.Unknown");
    let t = u.type_meta.expect("typeMeta");
    (
        (t.api_version.unwrap_or_default(), t.kind.unwrap_or_default()),
        u.raw.unwrap_or_default(),
    )
}

/// (name, node, pod IP) of a pod as prost reads it.
fn pod_facts(p: &core::Pod) -> (String, String, String) {
    let name = p.metadata.as_ref().and_then(|m| m.name.clone());
    let node = p.spec.as_ref().and_then(|s| s.node_name.clone());
    let ip = p.status.as_ref().and_then(|s| s.pod_ip.clone());
    (
        name.unwrap_or_default(),
        node.unwrap_or_default(),
        ip.unwrap_or_default(),
    )
}

/// (name, node, pod IP) of a pod in JSON.
fn pod_facts_json(p: &Value) -> (String, String, String) {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        s(&p["metadata"]["name"]),
        s(&p["spec"]["nodeName"]),
        s(&p["status"]["podIP"]),
    )
}

/// The facts of every pod of a JSON `PodList`.
fn listed_pods(list: &Value) -> Vec<(String, String, String)> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(pod_facts_json)
        .collect()
}

#[test]
fn answers_are_protobuf_when_the_client_prefers_it() {
    let r = start(0.0);
    // A create: the object created, in the envelope.
    let (code, ct, body) = exchange(
        &r,
        "POST",
        "/api/v1/namespaces",
        PREFERS_PROTOBUF,
        &fixture("namespace"),
    );
    assert_eq!(
        (code, ct.as_str()),
        (201, PROTOBUF),
        "{}",
        String::from_utf8_lossy(&body)
    );
    let (kind, raw) = unwrap_envelope(&body);
    assert_eq!(kind, ("v1".to_string(), "Namespace".to_string()));
    let ns = core::Namespace::decode(raw.as_slice()).expect("Namespace");
    assert_eq!(ns.metadata.and_then(|m| m.name).as_deref(), Some("fixture"));

    // A list: the same pods as the JSON list, item by item.
    let pods = "/api/v1/namespaces/default/pods";
    let (_, json) = get_json(&r, pods);
    let want = listed_pods(&json);
    assert!(want.len() > 3, "{json}");
    let (code, ct, body) = exchange(&r, "GET", pods, PREFERS_PROTOBUF, b"");
    assert_eq!((code, ct.as_str()), (200, PROTOBUF));
    let (kind, raw) = unwrap_envelope(&body);
    assert_eq!(kind.1, "PodList");
    let list = core::PodList::decode(raw.as_slice()).expect("PodList");
    let got: Vec<_> = list.items.iter().map(pod_facts).collect();
    assert_eq!(got, want);
    assert_eq!(
        list.metadata.and_then(|m| m.resource_version),
        json["metadata"]["resourceVersion"].as_str().map(str::to_string)
    );
    // Labels (a map), container ports (repeated messages), a start time (meta.v1.Time) and
    // a readiness probe's port (IntOrString) survive.
    let first = &list.items[0];
    let labels = &first.metadata.as_ref().expect("metadata").labels;
    assert_eq!(
        labels.get("app").map(String::as_str),
        json["items"][0]["metadata"]["labels"]["app"].as_str(),
        "{:?}",
        labels
    );
    let start = first
        .status
        .as_ref()
        .and_then(|s| s.start_time.as_ref())
        .and_then(|t| t.seconds);
    let want_start = json["items"][0]["status"]["startTime"]
        .as_str()
        .map(|t| t.parse::<jiff::Timestamp>().expect("RFC 3339").as_second());
    assert_eq!(start, want_start);

    // An error: a `Status` in the envelope, with the JSON's code and reason.
    let (code, ct, body) = exchange(&r, "GET", &format!("{pods}/nope"), PREFERS_PROTOBUF, b"");
    assert_eq!((code, ct.as_str()), (404, PROTOBUF));
    let (kind, raw) = unwrap_envelope(&body);
    assert_eq!(kind.1, "Status");
    let status = meta::Status::decode(raw.as_slice()).expect("Status");
    assert_eq!(
        (status.code, status.reason.as_deref()),
        (Some(404), Some("NotFound"))
    );

    // Negotiation: quality first, then order; tables, JSON-only clients and `*/*` get JSON.
    let (_, ct, _) = exchange(
        &r,
        "GET",
        pods,
        "application/json;q=0.5, application/vnd.kubernetes.protobuf",
        b"",
    );
    assert_eq!(ct, PROTOBUF);
    for accept in [
        "application/json, */*",
        "*/*",
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        "application/vnd.kubernetes.protobuf;q=0.1,application/json",
    ] {
        let (code, ct, body) = exchange(&r, "GET", pods, accept, b"");
        assert_eq!((code, ct.as_str()), (200, "application/json"), "Accept: {accept}");
        assert!(serde_json::from_slice::<Value>(&body).is_ok(), "Accept: {accept}");
    }
}

/// The frames of a protobuf watch (4-byte big-endian length, then a `WatchEvent`): each
/// event's type and the object's (kind, raw message).
pub(crate) fn watch_frames(mut body: &[u8]) -> Vec<(String, (String, String), Vec<u8>)> {
    let mut out = Vec::new();
    while body.len() >= 4 {
        let n = u32::from_be_bytes(body[..4].try_into().expect("4 bytes")) as usize;
        let frame = &body[4..4 + n];
        let e = meta::WatchEvent::decode(frame).expect("WatchEvent");
        let raw = e.object.and_then(|o| o.raw).expect("an object");
        let (kind, raw) = unwrap_envelope(&raw);
        out.push((e.r#type.unwrap_or_default(), kind, raw));
        body = &body[4 + n..];
    }
    assert!(body.is_empty(), "a truncated frame: {body:?}");
    out
}

#[test]
fn watches_are_length_delimited_watch_events_in_protobuf() {
    let r = start(0.0);
    let pods = "/api/v1/namespaces/default/pods";
    let (_, json) = get_json(&r, pods);
    let rv = json["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let want = listed_pods(&json);

    // From the start: one ADDED per pod. HTTP/1.0: the stream ends when the watch does.
    let watch = |query: &str| {
        let mut s = TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let head = format!(
            "GET {pods}?watch=1&{query} HTTP/1.0\r\nHost: localhost\r\nAccept: {PREFERS_PROTOBUF}\r\n\r\n"
        );
        s.write_all(head.as_bytes()).expect("write");
        s
    };
    let read = |s: TcpStream| {
        let (head, body) = answer(s);
        let head = head.to_ascii_lowercase();
        assert!(
            head.contains("content-type: application/vnd.kubernetes.protobuf;stream=watch"),
            "{head}"
        );
        watch_frames(&body)
    };
    let events = read(watch("timeoutSeconds=1"));
    assert!(
        events.iter().all(|(t, k, _)| t == "ADDED" && k.1 == "Pod"),
        "{events:?}"
    );
    let got: Vec<_> = events
        .iter()
        .map(|(_, _, raw)| pod_facts(&core::Pod::decode(raw.as_slice()).expect("Pod")))
        .collect();
    assert_eq!(got, want);

    // From the list's resourceVersion: a deletion is a DELETED event of that pod.
    let s = watch(&format!("resourceVersion={rv}&timeoutSeconds=2"));
    std::thread::sleep(Duration::from_millis(300));
    let victim = &want[0].0;
    let (code, _, v) = send(
        &r,
        "DELETE",
        &format!("{pods}/{victim}?gracePeriodSeconds=0"),
        b"",
    );
    assert_eq!(code, 200, "{v}");
    let events = read(s);
    let deleted: Vec<String> = events
        .iter()
        .filter(|(t, _, _)| t == "DELETED")
        .map(|(_, _, raw)| pod_facts(&core::Pod::decode(raw.as_slice()).expect("Pod")).0)
        .collect();
    assert_eq!(deleted, vec![victim.clone()], "{events:?}");

    // A resourceVersion too old: an ERROR event carrying a `Status` (410 Gone).
    let rv: u64 = rv.parse().expect("a number");
    r.expire_watches_before(rv + 1);
    let events = read(watch(&format!("resourceVersion={rv}&timeoutSeconds=1")));
    let (t, kind, raw) = events.first().expect("an ERROR event");
    assert_eq!((t.as_str(), kind.1.as_str()), ("ERROR", "Status"));
    let status = meta::Status::decode(raw.as_slice()).expect("Status");
    assert_eq!(status.code, Some(410));
}
