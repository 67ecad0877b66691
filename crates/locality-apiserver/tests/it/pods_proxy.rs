//! `pods/proxy` to simulated agnhost netexec pods, over real HTTP: `/hostname`, `/dial` through
//! the simulated kube-proxy, and the proxy's own errors.

use crate::common;

use locality_model::objects::TargetPort;
use locality_sim::Object;
use locality_sim::builders::{labels, service};
use serde_json::Value;

const CLIENT_C: &str = "/api/v1/namespaces/default/pods/client-node-c:8080/proxy";
const CLIENT_A: &str = "/api/v1/namespaces/default/pods/client-node-a:8080/proxy";

fn dial(r: &locality_apiserver::Running, base: &str, query: &str) -> (u16, Value) {
    let (code, body) = common::http(r, "GET", &format!("{base}/dial?{query}"), "application/json", "");
    let v = serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    (code, v)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn hostname_and_probes_via_proxy() {
    let r = common::start(10.0);
    let (code, body) = common::http(
        &r,
        "GET",
        "/api/v1/namespaces/default/pods/web-a:8080/proxy/hostname",
        "text/plain",
        "",
    );
    assert_eq!((code, body.as_str()), (200, "web-a"));
    let (code, body) = common::http(
        &r,
        "GET",
        "/api/v1/namespaces/default/pods/web-b/proxy/hostname",
        "",
        "",
    );
    assert_eq!(
        (code, body.as_str()),
        (200, "web-b"),
        "default port: the first container port"
    );
    for p in ["healthz", "readyz"] {
        let (code, _) = common::http(&r, "GET", &format!("{CLIENT_A}/{p}"), "", "");
        assert_eq!(code, 200, "{p}");
    }
    let (code, body) = common::http(&r, "GET", &format!("{CLIENT_A}/clientip"), "", "");
    assert_eq!(code, 200);
    assert!(body.parse::<std::net::SocketAddr>().is_ok(), "{body}");
}

#[test]
fn proxy_to_a_closed_port_fails_like_the_real_api_server() {
    let r = common::start(10.0);
    let (code, v) = common::get_json(&r, "/api/v1/namespaces/default/pods/web-a:81/proxy/hostname");
    assert_eq!(code, 503, "{v}");
    assert_eq!(v["reason"], "ServiceUnavailable");
    let msg = v["message"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with("error trying to reach service: dial tcp ")
            && msg.ends_with(":81: connect: connection refused"),
        "{msg}"
    );
    let (code, _) = common::get_json(&r, "/api/v1/namespaces/default/pods/nope/proxy/hostname");
    assert_eq!(code, 404);
}

#[test]
fn dial_from_node_c_times_out_and_from_node_a_reaches_web_a() {
    let r = common::start(10.0);
    let before = r.virtual_now();
    let (code, v) = dial(
        &r,
        CLIENT_C,
        "host=myservice&port=80&request=hostname&protocol=http&tries=1",
    );
    assert_eq!(
        code, 200,
        "netexec's /dial answers 200 even when every try failed"
    );
    let errors = strings(&v, "errors");
    assert_eq!(errors.len(), 1, "{v}");
    assert!(
        v.get("responses").is_none(),
        "no key when the last try failed: {v}"
    );
    let e = &errors[0];
    assert!(
        e.starts_with("Get \"http://") && e.contains(":80/hostname\": "),
        "{e}"
    );
    assert!(
        e.ends_with("context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
        "{e}"
    );
    assert!(
        r.virtual_now() >= before + 5_000,
        "a timeout costs 5 s of virtual time"
    );

    let (code, v) = dial(
        &r,
        CLIENT_A,
        "host=myservice&port=80&request=hostname&protocol=http&tries=1",
    );
    assert_eq!(code, 200);
    assert_eq!(strings(&v, "responses"), vec!["web-a".to_string()], "{v}");
    assert!(v.get("errors").is_none(), "{v}");

    let (code, v) = dial(
        &r,
        CLIENT_A,
        "host=myservice.default.svc.cluster.local&port=80&request=hostname&tries=2",
    );
    assert_eq!(code, 200);
    assert_eq!(strings(&v, "responses"), vec!["web-a".to_string(); 2], "{v}");
}

#[test]
fn dial_to_a_service_without_endpoints_is_refused_each_try() {
    let r = common::start(10.0);
    let svc = service(
        "default",
        "empty",
        labels(&[("app", "none")]),
        80,
        TargetPort::Number(8080),
    );
    r.with_engine(|e| e.create(Object::Service(svc)))
        .expect("create Service");
    r.advance(5_000);
    let (code, v) = dial(&r, CLIENT_A, "host=empty&port=80&request=hostname&tries=3");
    assert_eq!(code, 200);
    let errors = strings(&v, "errors");
    assert_eq!(errors.len(), 3, "{v}");
    assert!(v.get("responses").is_none(), "{v}");
    for e in &errors {
        assert!(
            e.starts_with("Get \"http://") && e.ends_with(":80: connect: connection refused"),
            "{e}"
        );
        assert!(e.contains("/hostname\": dial tcp "), "{e}");
    }
}

#[test]
fn dial_bad_parameters_answer_400_as_netexec() {
    let r = common::start(10.0);
    let (code, body) = common::http(
        &r,
        "GET",
        &format!("{CLIENT_A}/dial?host=myservice&port=80"),
        "",
        "",
    );
    assert_eq!(
        (code, body.as_str()),
        (400, "request parameter not specified. <nil>\n")
    );
    let (code, body) = common::http(
        &r,
        "GET",
        &format!("{CLIENT_A}/dial?host=nosuch&port=80&request=hostname"),
        "",
        "",
    );
    assert_eq!(code, 400);
    assert!(
        body.starts_with("host and/or port param are invalid. lookup nosuch on ")
            && body.ends_with(":53: no such host\n"),
        "{body}"
    );
    let (code, body) = common::http(&r, "GET", &format!("{CLIENT_A}/dial?request=x&tries=x"), "", "");
    assert_eq!(
        (code, body.as_str()),
        (
            400,
            "tries parameter is invalid. strconv.Atoi: parsing \"x\": invalid syntax\n"
        )
    );
}

#[test]
fn dial_tries_are_bounded_and_a_long_dial_does_not_hold_the_server() {
    let r = common::start(10.0);
    let max = locality_apiserver::MAX_DIAL_TRIES;
    for tries in [max + 1, 3_000_000] {
        let started = std::time::Instant::now();
        let (code, body) = common::http(
            &r,
            "GET",
            &format!("{CLIENT_A}/dial?host=myservice&port=80&request=hostname&tries={tries}"),
            "",
            "",
        );
        assert_eq!(
            (code, body.as_str()),
            (
                400,
                format!(
                    "tries parameter is invalid. the simulated netexec runs at most {max} tries, not {tries}\n"
                )
                .as_str()
            )
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
    // The most tries, each reaching web-a.
    let (code, v) = dial(
        &r,
        CLIENT_A,
        &format!("host=myservice&port=80&request=hostname&tries={max}"),
    );
    assert_eq!(code, 200);
    assert_eq!(
        strings(&v, "responses").len(),
        usize::try_from(max).unwrap(),
        "{v}"
    );
    // The most tries, each timing out (50 s of wall time at speed 10): the server answers
    // others meanwhile.
    let port = r.port();
    let long = std::thread::spawn(move || {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let req = format!(
            "GET {CLIENT_C}/dial?host=myservice&port=80&request=hostname&tries={max} HTTP/1.1\r\nHost: x\r\n\r\n"
        );
        s.write_all(req.as_bytes()).expect("write");
        std::thread::sleep(std::time::Duration::from_secs(2));
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let (code, _) = common::get_json(&r, "/api/v1/namespaces/default/pods");
        assert_eq!(code, 200);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "a list took {:?} during a long dial",
            started.elapsed()
        );
    }
    long.join().expect("the long dial's client");
}
