//! `Cluster`'s retries against the wire: a scripted HTTP/1.1 server on loopback answers each
//! request as a test says (status, `Retry-After`, a connection dropped without an answer, no
//! answer at all), and against the simulated API server with faults injected, the
//! namespace's final delete.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::Method;
use locality_apiserver::{Faults, ServeOptions, Verb};
use locality_live::LiveOptions;
use locality_sim::{SimConfig, Topology};
use locality_testkit::files::TempDir;
use locality_verify::cluster::{Cluster, MAX_ATTEMPTS, RETRY_BUDGET};
use locality_verify::fixture::RUN_LABEL;
use serde_json::{Value, json};

/// A request as the scripted server read it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
}

/// How the scripted server answers one request.
enum Reply {
    /// Status, extra headers, body.
    Answer(u16, Vec<(&'static str, String)>, String),
    /// Close the connection without a word.
    Drop,
    /// Say nothing for this long, then close.
    Hang(Duration),
}

fn answer(code: u16, body: &Value) -> Reply {
    Reply::Answer(code, Vec::new(), body.to_string())
}

fn status(code: u16, reason: &str) -> Reply {
    answer(
        code,
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": format!("scripted {code} {reason}")}),
    )
}

type Script = dyn Fn(&Seen, usize) -> Reply + Send + Sync;

/// A scripted server: `script(request, index)` (index: 0 for the first request) decides each
/// answer. Every answer closes its connection.
struct Scripted {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Requests being answered right now, and the most at once.
    busy: Arc<(AtomicUsize, AtomicUsize)>,
}

impl Scripted {
    fn start(script: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let busy: Arc<(AtomicUsize, AtomicUsize)> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let (s, b) = (seen.clone(), busy.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (seen, busy, script) = (s.clone(), b.clone(), script.clone());
                std::thread::spawn(move || serve_one(stream, &seen, &busy, &*script));
            }
        });
        Scripted { url, seen, busy }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    async fn cluster(&self) -> Cluster {
        let mut config = kube::Config::new(self.url.parse().unwrap());
        config.default_retry = false;
        Cluster::new(kube::Client::try_from(config).unwrap(), self.url.clone())
    }
}

fn serve_one(stream: TcpStream, seen: &Mutex<Vec<Seen>>, busy: &(AtomicUsize, AtomicUsize), script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or_default().to_string();
    let path = words.next().unwrap_or_default().to_string();
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let request = Seen { method, path };
    let index = {
        let mut s = seen.lock().unwrap();
        s.push(request.clone());
        s.len() - 1
    };
    let now = busy.0.fetch_add(1, Ordering::SeqCst) + 1;
    busy.1.fetch_max(now, Ordering::SeqCst);
    let reply = script(&request, index);
    let mut stream = stream;
    // A request stops counting as in flight before its answer is written: the client may send
    // its next one as soon as it reads it, and must not be counted twice.
    let leave = || busy.0.fetch_sub(1, Ordering::SeqCst);
    match reply {
        Reply::Answer(code, headers, body) => {
            leave();
            let mut text = format!(
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                text.push_str(&format!("{k}: {v}\r\n"));
            }
            text.push_str("\r\n");
            text.push_str(&body);
            let _ = stream.write_all(text.as_bytes());
        }
        Reply::Drop => {
            leave();
        }
        Reply::Hang(d) => {
            std::thread::sleep(d);
            leave();
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn pod(name: &str, run: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "labels": {RUN_LABEL: run}}})
}

const PODS: &str = "/api/v1/namespaces/ns/pods";

#[test]
fn reads_retry_5xx_and_dropped_connections_and_take_404_as_an_answer() {
    let server = Scripted::start(|_, i| match i {
        0 => status(503, "ServiceUnavailable"),
        1 => Reply::Drop,
        2 => status(500, "InternalError"),
        3 => answer(200, &pod("p", "r1")),
        _ => status(404, "NotFound"),
    });
    rt().block_on(async {
        let cluster = server.cluster().await;
        let got = cluster
            .get(&format!("{PODS}/p"))
            .await
            .expect("the 4th attempt answers");
        assert_eq!(got.unwrap()["metadata"]["name"], "p");
        assert_eq!(
            cluster.get(&format!("{PODS}/q")).await.unwrap(),
            None,
            "404 is an answer"
        );
    });
    assert_eq!(server.seen().len(), 5, "{:?}", server.seen());
}

#[test]
fn a_read_that_keeps_failing_gives_up_after_the_attempts_within_the_budget() {
    let server = Scripted::start(|_, _| status(500, "InternalError"));
    let start = Instant::now();
    let err = rt().block_on(async { server.cluster().await.get(&format!("{PODS}/p")).await });
    let took = start.elapsed();
    let err = err.expect_err("never answered");
    assert!(err.to_string().contains("500"), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("after {MAX_ATTEMPTS} attempts")),
        "{err}"
    );
    assert_eq!(server.seen().len(), MAX_ATTEMPTS as usize);
    assert!(took <= RETRY_BUDGET + Duration::from_secs(1), "{took:?}");
    assert!(
        took >= Duration::from_millis(100 + 200 + 400 + 800),
        "backed off: {took:?}"
    );
}

#[test]
fn a_client_error_is_not_retried() {
    let server = Scripted::start(|_, _| status(403, "Forbidden"));
    let err = rt().block_on(async { server.cluster().await.get(&format!("{PODS}/p")).await });
    assert!(err.unwrap_err().to_string().contains("403"));
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn retry_after_on_429_is_honoured() {
    let server = Scripted::start(|_, i| match i {
        0 => Reply::Answer(429, vec![("Retry-After", "1".into())], "{}".into()),
        _ => answer(200, &json!({"kind": "PodList", "items": []})),
    });
    let start = Instant::now();
    rt().block_on(async { server.cluster().await.get(PODS).await.unwrap() });
    assert!(start.elapsed() >= Duration::from_secs(1), "{:?}", start.elapsed());
    assert_eq!(server.seen().len(), 2);
}

/// The create's answer is lost (connection dropped after the server made the object); the
/// retry gets 409 AlreadyExists; the object read back carries the run's label: success.
#[test]
fn a_retried_create_that_finds_its_own_object_succeeds() {
    let server = Scripted::start(|r, i| match (r.method.as_str(), i) {
        // The first POST "creates" the pod and its answer is lost; the retry's is a 409.
        ("POST", 0) => Reply::Drop,
        ("POST", _) => status(409, "AlreadyExists"),
        ("GET", _) if r.path == format!("{PODS}/p") => answer(200, &pod("p", "r1")),
        _ => status(404, "NotFound"),
    });
    let created = rt()
        .block_on(async { server.cluster().await.create(PODS, &pod("p", "r1")).await })
        .expect("our own object");
    assert_eq!(created["metadata"]["labels"][RUN_LABEL], "r1");
    let methods: Vec<String> = server.seen().iter().map(|s| s.method.clone()).collect();
    assert_eq!(methods, ["POST", "POST", "GET"]);
}

#[test]
fn a_retried_create_that_finds_someone_elses_object_fails() {
    let server = Scripted::start(|r, i| match (r.method.as_str(), i) {
        ("POST", 0) => status(500, "InternalError"),
        ("POST", _) => status(409, "AlreadyExists"),
        _ => answer(200, &pod("p", "another-run")),
    });
    let err = rt()
        .block_on(async { server.cluster().await.create(PODS, &pod("p", "r1")).await })
        .expect_err("not ours");
    assert!(err.to_string().contains("409"), "{err}");
}

#[test]
fn a_409_on_the_first_create_is_the_callers_even_for_an_object_labelled_like_ours() {
    let server = Scripted::start(|r, _| match r.method.as_str() {
        "POST" => status(409, "AlreadyExists"),
        _ => answer(200, &pod("p", "r1")),
    });
    let err = rt()
        .block_on(async { server.cluster().await.create(PODS, &pod("p", "r1")).await })
        .expect_err("the first attempt's 409");
    assert!(err.to_string().contains("409"), "{err}");
    assert_eq!(server.seen().len(), 1, "no read back: {:?}", server.seen());
}

/// A transient 409 Conflict (not AlreadyExists) that created nothing is retried.
#[test]
fn a_create_conflict_that_made_nothing_is_retried() {
    let server = Scripted::start(|r, i| match (r.method.as_str(), i) {
        ("POST", 0) => status(409, "Conflict"),
        ("GET", _) => status(404, "NotFound"),
        _ => answer(201, &pod("p", "r1")),
    });
    rt().block_on(async { server.cluster().await.create(PODS, &pod("p", "r1")).await })
        .expect("created on the retry");
    let methods: Vec<String> = server.seen().iter().map(|s| s.method.clone()).collect();
    assert_eq!(methods, ["POST", "GET", "POST"]);
}

#[test]
fn a_delete_whose_answer_was_lost_finds_the_object_gone() {
    let server = Scripted::start(|_, i| match i {
        0 => Reply::Drop,
        1 => status(503, "ServiceUnavailable"),
        _ => status(404, "NotFound"),
    });
    rt().block_on(async { server.cluster().await.delete(&format!("{PODS}/p")).await })
        .expect("404 on the retry: gone");
    assert_eq!(server.seen().len(), 3);
}

#[test]
fn a_request_without_an_answer_times_out_and_is_retried() {
    let server = Scripted::start(|_, i| match i {
        0 => Reply::Hang(Duration::from_secs(3)),
        _ => answer(200, &pod("p", "r1")),
    });
    let start = Instant::now();
    rt().block_on(async {
        let cluster = server
            .cluster()
            .await
            .with_request_timeout(Duration::from_millis(300));
        assert_eq!(cluster.request_timeout(), Duration::from_millis(300));
        cluster
            .get(&format!("{PODS}/p"))
            .await
            .expect("the retry answers");
    });
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn probes_through_pods_proxy_keep_their_5xx() {
    let server = Scripted::start(|_, _| status(503, "ServiceUnavailable"));
    let (code, _) = rt()
        .block_on(async {
            server
                .cluster()
                .await
                .call(
                    Method::GET,
                    "/api/v1/namespaces/ns/pods/c:8080/proxy/dial?request=hostname",
                    None,
                )
                .await
        })
        .unwrap();
    assert_eq!(code, 503);
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn no_more_requests_than_the_limit_are_in_flight() {
    // Each answer waits (at most 5 s) until three requests are inside at once, so reaching
    // the limit does not depend on how busy the machine is; a limit above 3 shows as a
    // maximum above 3, one below as a maximum below.
    let inside = Arc::new(AtomicUsize::new(0));
    let server = Scripted::start(move |_, _| {
        inside.fetch_add(1, Ordering::SeqCst);
        let until = Instant::now() + Duration::from_secs(5);
        while inside.load(Ordering::SeqCst) < 3 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(20));
        inside.fetch_sub(1, Ordering::SeqCst);
        answer(200, &json!({}))
    });
    rt().block_on(async {
        let cluster = server.cluster().await.with_max_in_flight(3);
        assert_eq!(cluster.max_in_flight(), 3);
        let gets: Vec<_> = (0..12)
            .map(|i| {
                let c = cluster.clone();
                async move { c.get(&format!("{PODS}/p{i}")).await }
            })
            .collect();
        for r in futures_join_all(gets).await {
            r.unwrap();
        }
    });
    assert_eq!(server.seen().len(), 12);
    assert_eq!(
        server.busy.1.load(Ordering::SeqCst),
        3,
        "at most 3 at once, and 3 reached"
    );
}

/// Runs `futures` concurrently on the current task (no `futures` crate needed).
async fn futures_join_all<F>(futures: Vec<F>) -> Vec<F::Output>
where
    F: std::future::Future + 'static,
    F::Output: 'static,
{
    let set = tokio::task::LocalSet::new();
    let handles: Vec<_> = futures.into_iter().map(|f| set.spawn_local(f)).collect();
    set.await;
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// A simulated API server with `faults`, a namespace `ns` labelled for run `run`, and a
/// `Cluster` on it naming the kubeconfig in its messages.
fn simulated(name: &str, faults: Faults) -> (locality_apiserver::Running, TempDir) {
    let dir = TempDir::new(&format!("verify-test-{name}"));
    let topology = Topology::builtin("four-nodes").unwrap();
    let mut serve = ServeOptions::from_topology(&topology, SimConfig::default()).unwrap();
    serve.speed = 50.0;
    serve.kubeconfig_out = Some(dir.join("kubeconfig"));
    serve.faults = faults;
    (locality_apiserver::serve(serve).unwrap(), dir)
}

async fn cluster_of(running: &locality_apiserver::Running) -> Cluster {
    let live = LiveOptions {
        kubeconfig: Some(running.kubeconfig_path().to_path_buf()),
        ..LiveOptions::default()
    };
    let (client, target) = locality_live::client(&live).await.unwrap();
    Cluster::new(client, target.server).with_kubectl_target(Some(running.kubeconfig_path()), None)
}

fn namespace_phase(running: &locality_apiserver::Running, ns: &str) -> Option<bool> {
    running.with_engine(|e| {
        e.store()
            .list(locality_sim::Kind::Namespace)
            .find(|(k, _)| k.name == ns)
            .map(|(_, s)| s.deletion.is_some())
    })
}

/// Every DELETE fails (`--api-faults delete=1`): after its 30 s budget, the final delete says
/// which command deletes the namespace.
#[test]
fn a_namespace_that_cannot_be_deleted_is_explained_with_the_command() {
    let (running, dir) = simulated(
        "ns-delete-fails",
        Faults::default().with_error_rate(Verb::Delete, 1.0),
    );
    let ns = "locality-verify-nsdel1";
    let start = Instant::now();
    let result = rt().block_on(async {
        let cluster = cluster_of(&running).await;
        cluster
            .create(
                "/api/v1/namespaces",
                &locality_verify::fixture::namespace(ns, "nsdel1", false),
            )
            .await
            .unwrap();
        cluster.delete_namespace_or_explain(ns).await
    });
    let took = start.elapsed();
    let why = result.expect_err("every delete fails");
    let command = format!(
        "kubectl --kubeconfig {} delete namespace {ns}",
        running.kubeconfig_path().display()
    );
    assert!(why.ends_with(&command), "{why}");
    assert!(why.contains("500"), "{why}");
    assert!(
        took >= Duration::from_secs(20) && took < Duration::from_secs(45),
        "the namespace budget (30 s) was used: {took:?}"
    );
    let deletes = running.faults_injected().errors[&Verb::Delete];
    assert!(deletes >= 8, "retried: {deletes} deletes");
    assert_eq!(
        namespace_phase(&running, ns),
        Some(false),
        "still there, not terminating"
    );
    running.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

/// Half the DELETEs fail (seed 1: the first few of them, the request order being fixed):
/// the final delete gets through.
#[test]
fn a_flaky_namespace_delete_gets_through() {
    let faults = Faults {
        seed: 1,
        fail_first: 0,
        ..Faults::default().with_error_rate(Verb::Delete, 0.5)
    };
    let (running, dir) = simulated("ns-delete-flaky", faults);
    let ns = "locality-verify-nsdel2";
    rt().block_on(async {
        let cluster = cluster_of(&running).await;
        cluster
            .create(
                "/api/v1/namespaces",
                &locality_verify::fixture::namespace(ns, "nsdel2", false),
            )
            .await
            .unwrap();
        cluster.delete_namespace_or_explain(ns).await.expect("deleted");
        // Deleting it again (terminating, or gone) is no failure either.
        cluster
            .delete_namespace_or_explain(ns)
            .await
            .expect("already deleted");
    });
    assert_ne!(namespace_phase(&running, ns), Some(false), "terminating or gone");
    let failed = running
        .faults_injected()
        .errors
        .get(&Verb::Delete)
        .copied()
        .unwrap_or(0);
    assert!(failed >= 1, "some deletes failed and were retried");
    running.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_command_without_a_kubeconfig_is_plain_kubectl() {
    let server = Scripted::start(|_, _| status(500, "InternalError"));
    let cmd = rt().block_on(async {
        server
            .cluster()
            .await
            .delete_namespace_command("locality-verify-x")
    });
    assert_eq!(cmd, "kubectl delete namespace locality-verify-x");
}
