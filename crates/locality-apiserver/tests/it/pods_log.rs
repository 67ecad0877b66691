//! `pods/log` of simulated one-shot curl pods and probe-loop pods, over real HTTP and with
//! the real kubectl (skipped when absent).

use crate::common;

use serde_json::{Value, json};

const PODS: &str = "/api/v1/namespaces/default/pods";

fn create(r: &locality_apiserver::Running, pod: &Value) {
    let (code, body) = common::http(r, "POST", PODS, "application/json", &pod.to_string());
    assert_eq!(code, 201, "{body}");
}

fn curl_pod(name: &str, node: &str, host_network: bool, args: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"nodeName": node, "hostNetwork": host_network, "restartPolicy": "Never",
                    "containers": [{"name": "curl", "image": "curlimages/curl:8.11.1",
                                    "command": args}]}})
}

fn log(r: &locality_apiserver::Running, name: &str, query: &str) -> (u16, String) {
    common::http(r, "GET", &format!("{PODS}/{name}/log{query}"), "", "")
}

fn phase(r: &locality_apiserver::Running, name: &str) -> (String, i64) {
    let (_, body) = common::http(r, "GET", &format!("{PODS}/{name}"), "application/json", "");
    let v: Value = serde_json::from_str(&body).expect("pod json");
    let code = v
        .pointer("/status/containerStatuses/0/state/terminated/exitCode")
        .and_then(Value::as_i64)
        .unwrap_or(-1);
    (
        v["status"]["phase"].as_str().unwrap_or_default().to_string(),
        code,
    )
}

#[test]
fn host_network_curl_reads_kube_proxy() {
    let r = common::start(0.0);
    create(
        &r,
        &curl_pod(
            "mode-c",
            "node-c",
            true,
            &["curl", "-s", "127.0.0.1:10249/proxyMode"],
        ),
    );
    create(
        &r,
        &curl_pod(
            "metrics-c",
            "node-c",
            true,
            &["curl", "-s", "[::1]:10249/metrics"],
        ),
    );
    let (code, body) = log(&r, "mode-c", "");
    assert_eq!(code, 400, "not started yet: {body}");
    assert!(body.contains("is waiting to start: ContainerCreating"), "{body}");
    r.advance(5_000);
    assert_eq!(log(&r, "mode-c", ""), (200, "iptables".to_string()));
    let (code, metrics) = log(&r, "metrics-c", "");
    assert_eq!(code, 200);
    assert!(
        metrics.contains("kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv4\",traffic_policy=\"internal\"} 1"),
        "{metrics}"
    );
    assert_eq!(phase(&r, "mode-c"), ("Succeeded".to_string(), 0));
    let (_, ts) = log(&r, "mode-c", "?timestamps=true");
    assert!(
        ts.starts_with("2025-01-01T00:00:") && ts.ends_with("Z iptables"),
        "{ts}"
    );
}

#[test]
fn pod_network_curl_is_refused() {
    let r = common::start(0.0);
    create(
        &r,
        &curl_pod(
            "mode-pod",
            "node-c",
            false,
            &["curl", "-sS", "127.0.0.1:10249/proxyMode"],
        ),
    );
    create(
        &r,
        &curl_pod(
            "silent",
            "node-c",
            false,
            &["curl", "-s", "127.0.0.1:10249/proxyMode"],
        ),
    );
    r.advance(5_000);
    assert_eq!(
        log(&r, "mode-pod", "").1,
        "curl: (7) Failed to connect to 127.0.0.1 port 10249 after 0 ms: Couldn't connect to server\n"
    );
    assert_eq!(phase(&r, "mode-pod"), ("Failed".to_string(), 7));
    assert_eq!(
        log(&r, "silent", "").1,
        "",
        "-s without -S prints nothing, as curl"
    );
}

#[test]
fn curl_to_an_itp_local_service_times_out_on_node_c() {
    let r = common::start(0.0);
    let args = ["sh", "-c", "curl -sS -m 2 http://myservice:80/hostname"];
    create(&r, &curl_pod("svc-c", "node-c", false, &args));
    create(&r, &curl_pod("svc-a", "node-a", false, &args));
    r.advance(1_500);
    assert_eq!(log(&r, "svc-a", "").1, "web-a");
    r.advance(5_000);
    assert_eq!(
        log(&r, "svc-c", "").1,
        "curl: (28) Connection timed out after 2000 milliseconds\n"
    );
    assert_eq!(phase(&r, "svc-c"), ("Failed".to_string(), 28));
}

fn probe_pod(name: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"nodeName": node, "containers": [{"name": "probe", "image": "curlimages/curl:8.11.1",
             "env": [{"name": "LOCALITY_PROBE_TARGET", "value": "myservice:80/hostname"},
                     {"name": "LOCALITY_PROBE_INTERVAL_MS", "value": "100"},
                     {"name": "LOCALITY_PROBE_TIMEOUT_MS", "value": "500"},
                     {"name": "LOCALITY_PROBE_LOOPS", "value": "2"}]}]}})
}

fn lines(s: &str) -> Vec<Vec<String>> {
    s.lines()
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect()
}

#[test]
fn probe_loops_log_responders_and_curl_codes() {
    let r = common::start(0.0);
    create(&r, &probe_pod("probe-c", "node-c"));
    create(&r, &probe_pod("probe-a", "node-a"));
    r.advance(4_000);
    let (code, a) = log(&r, "probe-a", "");
    assert_eq!(code, 200);
    let a = lines(&a);
    assert!(a.len() >= 40, "{a:?}");
    assert!(
        a.iter()
            .all(|l| l.len() == 3 && l[2] == "web-a" && (l[1] == "0" || l[1] == "1")),
        "{a:?}"
    );
    let c = lines(&log(&r, "probe-c", "").1);
    assert!(c.len() >= 8, "{c:?}");
    assert!(
        c.iter().all(|l| l.len() == 4 && l[2] == "ERR" && l[3] == "28"),
        "{c:?}"
    );
    // Repeated reads agree; later reads extend earlier ones.
    let first = log(&r, "probe-a", "").1;
    assert_eq!(first, log(&r, "probe-a", "").1);
    r.advance(1_000);
    let later = log(&r, "probe-a", "").1;
    assert!(later.starts_with(&first) && later.len() > first.len());
    // timestamps and sinceTime.
    let ts = log(&r, "probe-a", "?timestamps=true").1;
    let first_line = ts.lines().next().expect("a line");
    let stamp = first_line.split(' ').next().expect("stamp");
    assert_eq!(
        stamp.len(),
        "2025-01-01T00:00:00.000000000Z".len(),
        "{first_line}"
    );
    // Parameters that do not parse are a 400, never a panic (a non-ASCII sinceTime once
    // sliced a `&str` inside a character); values out of range a 422 Invalid, as
    // `ValidatePodLogOptions`.
    for bad in [
        "?sinceTime=2025-01-01T00:00:00%C3%A90:00",
        "?sinceTime=%E2%82%AC%E2%82%AC%E2%82%AC%E2%82%AC%E2%82%AC%E2%82%AC%E2%82%AC",
        "?sinceTime=yesterday",
        "?sinceSeconds=soon",
        "?tailLines=ten",
        "?limitBytes=1e3",
        "?tailLines=99999999999999999999",
    ] {
        let (code, body) = log(&r, "probe-a", bad);
        assert_eq!(code, 400, "{bad}: {body}");
        let v: Value = serde_json::from_str(&body).expect("a Status");
        assert_eq!(v["reason"], "BadRequest", "{bad}: {body}");
    }
    for (bad, field) in [
        ("?sinceSeconds=-5", "sinceSeconds"),
        ("?sinceSeconds=0", "sinceSeconds"),
        ("?tailLines=-1", "tailLines"),
        ("?limitBytes=0", "limitBytes"),
        (
            "?sinceSeconds=5&sinceTime=2025-01-01T00:00:14Z",
            "at most one of `sinceTime` or `sinceSeconds`",
        ),
    ] {
        let (code, body) = log(&r, "probe-a", bad);
        assert_eq!(code, 422, "{bad}: {body}");
        let v: Value = serde_json::from_str(&body).expect("a Status");
        assert_eq!(v["reason"], "Invalid", "{bad}: {body}");
        assert!(
            v["message"].as_str().is_some_and(|m| m.starts_with("PodLogOptions \"probe-a\" is invalid: ") && m.contains(field)),
            "{bad}: {body}"
        );
    }
    assert_eq!(log(&r, "probe-a", "?tailLines=0").1, "");
    assert_eq!(log(&r, "probe-a", "?limitBytes=5").1.len(), 5);
    let since = "2025-01-01T00:00:14Z";
    let filtered = log(&r, "probe-a", &format!("?timestamps=true&sinceTime={since}")).1;
    assert!(!filtered.is_empty());
    assert!(
        filtered
            .lines()
            .all(|l| &l[..30] >= "2025-01-01T00:00:14.000000000Z"),
        "{filtered}"
    );
    assert_eq!(log(&r, "probe-a", "?tailLines=3").1.lines().count(), 3);
    let (code, body) = log(&r, "probe-a", "?container=nope");
    assert_eq!(code, 400, "{body}");
}

/// A hostNetwork probe loop on kube-proxy's `/metrics` with `LOCALITY_PROBE_GREP` writes only
/// the lines of each answer that name the series asked for, each after its try's prefix: the
/// node's sync state, sampled in the cluster's clock.
#[test]
fn a_metrics_probe_loop_keeps_only_the_series_it_greps() {
    let r = common::start(0.0);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lag-reader"},
           "spec": {"nodeName": "node-b", "hostNetwork": true, "containers": [{"name": "probe", "image": "curlimages/curl:8.11.1",
             "env": [{"name": "LOCALITY_PROBE_TARGET", "value": "127.0.0.1:10249/metrics"},
                     {"name": "LOCALITY_PROBE_INTERVAL_MS", "value": "200"},
                     {"name": "LOCALITY_PROBE_GREP", "value":
                        "^(kubeproxy_sync_proxy_rules_last_timestamp_seconds|kubeproxy_sync_proxy_rules_endpoint_changes_pending) "}]}]}});
    create(&r, &pod);
    r.advance(3_000);
    let (code, body) = log(&r, "lag-reader", "?timestamps=true");
    assert_eq!(code, 200, "{body}");
    let rows = lines(&body);
    assert!(rows.len() >= 10, "{body}");
    // <kubelet ts> <try ts> <loop> <series> <value>
    assert!(
        rows.iter().all(|l| l.len() == 5
            && l[2] == "0"
            && (l[3] == "kubeproxy_sync_proxy_rules_last_timestamp_seconds"
                || l[3] == "kubeproxy_sync_proxy_rules_endpoint_changes_pending")
            && l[4].parse::<f64>().is_ok()),
        "{body}"
    );
    assert!(rows.iter().any(|l| l[3].ends_with("_pending")), "{body}");
    assert!(rows.iter().any(|l| l[3].ends_with("_seconds")), "{body}");
}

/// A probe-loop pod with `loops` loops every `interval_ms`.
fn fast_probe_pod(name: &str, interval_ms: u64, loops: u32) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"nodeName": "node-a", "containers": [{"name": "probe", "image": "curlimages/curl:8.11.1",
             "env": [{"name": "LOCALITY_PROBE_TARGET", "value": "myservice:80/hostname"},
                     {"name": "LOCALITY_PROBE_INTERVAL_MS", "value": interval_ms.to_string()},
                     {"name": "LOCALITY_PROBE_TIMEOUT_MS", "value": "500"},
                     {"name": "LOCALITY_PROBE_LOOPS", "value": loops.to_string()}]}]}})
}

#[test]
fn probe_loops_faster_than_the_server_sustains_are_slowed_down() {
    use locality_apiserver::{MAX_PROBE_TRIES_PER_SECOND, MIN_PROBE_INTERVAL_MS};
    let r = common::start(0.0);
    create(&r, &fast_probe_pod("every-ms", 1, 1));
    create(&r, &fast_probe_pod("thousand-loops", 1, 1000));
    let started = std::time::Instant::now();
    r.advance(3_000);
    let count = |name: &str| log(&r, name, "").1.lines().count();
    let (one, many) = (count("every-ms"), count("thousand-loops"));
    assert!(one > 0 && many > 0, "both run: {one} {many}");
    r.advance(1_000);
    // One virtual second at the minimum interval, not at 1 ms.
    let per_second = usize::try_from(1_000 / MIN_PROBE_INTERVAL_MS).unwrap();
    let more = count("every-ms") - one;
    assert!((per_second - 1..=per_second + 1).contains(&more), "{more} lines");
    // A thousand loops share the pod's MAX_PROBE_TRIES_PER_SECOND (50) tries per second:
    // each loop tries every 20 s (all at the same instants, as the real loops start
    // together), so once or twice in these 20 s.
    assert_eq!(MAX_PROBE_TRIES_PER_SECOND, 50);
    r.advance(20_000);
    let more = count("thousand-loops") - many;
    assert!((1000..=2000).contains(&more), "{more} lines in 20 s");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
#[ignore = "needs kubectl on PATH: runs under the nextest profile `kubectl` (.ci/run)"]
fn kubectl_logs_prints_the_same() {
    common::require_kubectl();
    let r = common::start(0.0);
    create(
        &r,
        &curl_pod(
            "mode-c",
            "node-c",
            true,
            &["curl", "-s", "127.0.0.1:10249/proxyMode"],
        ),
    );
    create(&r, &probe_pod("probe-a", "node-a"));
    r.advance(3_000);
    let out = common::kubectl(&r, &["logs", "mode-c"]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout.trim_end(), "iptables");
    let out = common::kubectl(&r, &["logs", "probe-a"]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout, log(&r, "probe-a", "").1);
    let out = common::kubectl(&r, &["logs", "--timestamps", "probe-a", "--tail=2"]);
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(out.stdout, log(&r, "probe-a", "?timestamps=true&tailLines=2").1);
    let since = "2025-01-01T00:00:12Z";
    let out = common::kubectl(&r, &["logs", "--timestamps", "--since-time", since, "probe-a"]);
    assert!(out.ok, "{}", out.stderr);
    assert!(!out.stdout.is_empty());
    assert_eq!(
        out.stdout,
        log(&r, "probe-a", &format!("?timestamps=true&sinceTime={since}")).1
    );
}

#[test]
fn deployment_probe_pods_log_from_their_first_read() {
    let r = common::start(0.0);
    let mut template = probe_pod("unused", "node-a");
    let mut spec = template["spec"].take();
    spec.as_object_mut().expect("spec").remove("nodeName");
    spec["nodeSelector"] = json!({"kubernetes.io/hostname": "node-a"});
    let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "prober"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "prober"}},
                 "template": {"metadata": {"labels": {"app": "prober"}}, "spec": spec}}});
    let (code, body) = common::http(
        &r,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        "application/json",
        &dep.to_string(),
    );
    assert_eq!(code, 201, "{body}");
    r.advance(5_000);
    let (_, body) = common::http(
        &r,
        "GET",
        &format!("{PODS}?labelSelector=app%3Dprober"),
        "application/json",
        "",
    );
    let v: Value = serde_json::from_str(&body).expect("list");
    let name = v["items"][0]["metadata"]["name"]
        .as_str()
        .expect("a pod")
        .to_string();
    assert_eq!(log(&r, &name, "").1, "", "noticed at the first read");
    r.advance(1_000);
    let l = lines(&log(&r, &name, "").1);
    assert!(l.len() >= 10 && l.iter().all(|l| l[2] == "web-a"), "{l:?}");
}
