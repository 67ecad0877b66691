//! The simulated API server driven by kube-rs: `Api::list`, `watcher`, create/delete,
//! `await_condition` and `pods/log`, with a client built from the kubeconfig it writes.

use crate::common;

use std::future::Future;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::watcher;
use kube::{Client, Config};
use locality_apiserver::Running;
use serde_json::json;

/// Wall-clock bound for any single wait.
const WAIT: Duration = Duration::from_secs(30);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn client(r: &Running) -> Client {
    let kc = Kubeconfig::read_from(r.kubeconfig_path()).expect("read the written kubeconfig");
    let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("kube config from the kubeconfig");
    assert_eq!(config.cluster_url.to_string().trim_end_matches('/'), r.url());
    Client::try_from(config).expect("kube client")
}

/// `fut`, or a panic naming `what` after [`WAIT`].
async fn bounded<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(WAIT, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {WAIT:?} waiting for {what}"),
    }
}

/// Pulls watcher events until `f` returns `Some`, bounded by [`WAIT`].
async fn until<K, T>(
    what: &str,
    events: &mut (impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Unpin),
    mut f: impl FnMut(&watcher::Event<K>) -> Option<T>,
) -> T {
    bounded(what, async {
        loop {
            let ev = events
                .next()
                .await
                .unwrap_or_else(|| panic!("watch stream ended waiting for {what}"))
                .unwrap_or_else(|e| panic!("watch error waiting for {what}: {e}"));
            if let Some(v) = f(&ev) {
                return v;
            }
        }
    })
    .await
}

fn name_of(p: &Pod) -> &str {
    p.metadata.name.as_deref().unwrap_or_default()
}

/// `(target pod name, ready)` of each endpoint of `s`, sorted.
fn endpoints(s: &EndpointSlice) -> Vec<(String, bool)> {
    let mut v: Vec<(String, bool)> = s
        .endpoints
        .iter()
        .map(|e| {
            let name = e
                .target_ref
                .as_ref()
                .and_then(|t| t.name.clone())
                .unwrap_or_default();
            let ready = e.conditions.as_ref().and_then(|c| c.ready) == Some(true);
            (name, ready)
        })
        .collect();
    v.sort();
    v
}

fn ready(names: &[&str]) -> Vec<(String, bool)> {
    names.iter().map(|n| ((*n).to_string(), true)).collect()
}

#[test]
fn list_pods_and_endpointslices() {
    let r = common::start(0.0);
    runtime().block_on(async {
        let client = client(&r).await;
        let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
        let list = bounded("pod list", pods.list(&ListParams::default()))
            .await
            .expect("list pods");
        let mut names: Vec<&str> = list.items.iter().map(name_of).collect();
        names.sort_unstable();
        for want in ["client-node-b", "web-a", "web-b"] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for p in &list.items {
            let spec = p.spec.as_ref().expect("spec");
            let status = p.status.as_ref().expect("status");
            assert!(
                spec.node_name.as_deref().is_some_and(|n| n.starts_with("node-")),
                "{}: node {:?}",
                name_of(p),
                spec.node_name
            );
            assert!(
                status
                    .pod_ip
                    .as_deref()
                    .is_some_and(|ip| ip.starts_with("10.244.")),
                "{}: ip {:?}",
                name_of(p),
                status.pod_ip
            );
            assert_eq!(status.phase.as_deref(), Some("Running"), "{}", name_of(p));
        }
        let web_a = list.items.iter().find(|p| name_of(p) == "web-a").expect("web-a");
        assert_eq!(
            web_a.spec.as_ref().and_then(|s| s.node_name.as_deref()),
            Some("node-a")
        );

        let labelled = pods
            .list(&ListParams::default().labels("app=web"))
            .await
            .expect("list by label");
        let mut names: Vec<&str> = labelled.items.iter().map(name_of).collect();
        names.sort_unstable();
        assert_eq!(names, ["web-a", "web-b"]);

        let slices: Api<EndpointSlice> = Api::namespaced(client, "default");
        let list = slices
            .list(&ListParams::default().labels("kubernetes.io/service-name=myservice"))
            .await
            .expect("list endpointslices");
        assert_eq!(list.items.len(), 1, "one slice for myservice");
        assert_eq!(endpoints(&list.items[0]), ready(&["web-a", "web-b"]));
        assert_eq!(list.items[0].address_type, "IPv4");
    });
}

fn web_c() -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-c", "labels": {"app": "web"}},
        "spec": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-c"]}]}]}}},
            "containers": [{
                "name": "netexec",
                "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                "args": ["netexec", "--http-port=8080"],
                "ports": [{"name": "http", "containerPort": 8080}],
                "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 1}
            }]
        }
    }))
    .expect("pod")
}

#[test]
fn create_watch_and_delete_a_pod() {
    let r = common::start(10.0);
    runtime().block_on(async {
        let client = client(&r).await;
        let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
        let slices: Api<EndpointSlice> = Api::namespaced(client, "default");
        let mut pod_events = watcher(pods.clone(), watcher::Config::default()).boxed();
        let mut slice_events = watcher(
            slices,
            watcher::Config::default().labels("kubernetes.io/service-name=myservice"),
        )
        .boxed();
        // Both watchers listed the current state before the pod exists.
        until("the initial pod list", &mut pod_events, |e| {
            matches!(e, watcher::Event::InitDone).then_some(())
        })
        .await;
        let initial = until("the initial slice list", &mut slice_events, |e| match e {
            watcher::Event::InitApply(s) => Some(endpoints(s)),
            _ => None,
        })
        .await;
        assert_eq!(initial, ready(&["web-a", "web-b"]));
        until("the slice InitDone", &mut slice_events, |e| {
            matches!(e, watcher::Event::InitDone).then_some(())
        })
        .await;

        let created = pods
            .create(&PostParams::default(), &web_c())
            .await
            .expect("create web-c");
        assert_eq!(name_of(&created), "web-c");
        let err = pods
            .create(&PostParams::default(), &web_c())
            .await
            .expect_err("a second create conflicts");
        match err {
            kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists")),
            e => panic!("expected AlreadyExists, got {e}"),
        }

        // The watcher sees it scheduled on node-c by the matchFields affinity, then Running.
        let running = until("web-c Running", &mut pod_events, |e| match e {
            watcher::Event::Apply(p)
                if name_of(p) == "web-c"
                    && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running") =>
            {
                Some(p.clone())
            }
            _ => None,
        })
        .await;
        assert_eq!(
            running.spec.as_ref().and_then(|s| s.node_name.as_deref()),
            Some("node-c")
        );
        let ip = running
            .status
            .as_ref()
            .and_then(|s| s.pod_ip.clone())
            .unwrap_or_default();
        assert!(ip.starts_with("10.244."), "web-c ip {ip:?}");
        let got = bounded(
            "await_condition is_pod_running",
            await_condition(pods.clone(), "web-c", conditions::is_pod_running()),
        )
        .await
        .expect("await_condition")
        .expect("web-c exists");
        assert_eq!(name_of(&got), "web-c");

        // The EndpointSlice gains web-c as a third ready endpoint.
        until(
            "myservice's slice to list web-c ready",
            &mut slice_events,
            |e| match e {
                watcher::Event::Apply(s) => {
                    (endpoints(s) == ready(&["web-a", "web-b", "web-c"])).then_some(())
                }
                _ => None,
            },
        )
        .await;

        pods.delete("web-c", &DeleteParams::default())
            .await
            .expect("delete web-c");
        let deleted = until("the DELETED event of web-c", &mut pod_events, |e| match e {
            watcher::Event::Delete(p) if name_of(p) == "web-c" => Some(p.clone()),
            _ => None,
        })
        .await;
        assert_eq!(name_of(&deleted), "web-c");
        until(
            "myservice's slice to drop web-c",
            &mut slice_events,
            |e| match e {
                watcher::Event::Apply(s) => (endpoints(s) == ready(&["web-a", "web-b"])).then_some(()),
                _ => None,
            },
        )
        .await;
        let err = pods.get("web-c").await.expect_err("web-c is gone");
        assert!(
            matches!(&err, kube::Error::Api(s) if s.code == 404),
            "expected NotFound, got {err}"
        );
        let left = bounded(
            "await_condition is_deleted",
            await_condition(
                pods.clone(),
                "web-c",
                conditions::is_deleted(created.metadata.uid.as_deref().unwrap_or_default()),
            ),
        )
        .await
        .expect("await_condition");
        assert!(left.is_none());
    });
}

fn curl_pod(name: &str, node: &str, host_network: bool, args: &[&str]) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeName": node, "hostNetwork": host_network, "restartPolicy": "Never",
                 "containers": [{"name": "curl", "image": "curlimages/curl:8.11.1", "command": args}]}
    }))
    .expect("pod")
}

fn probe_pod(name: &str, node: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeName": node, "containers": [{"name": "probe", "image": "curlimages/curl:8.11.1",
            "env": [{"name": "LOCALITY_PROBE_TARGET", "value": "myservice:80/hostname"},
                    {"name": "LOCALITY_PROBE_INTERVAL_MS", "value": "100"},
                    {"name": "LOCALITY_PROBE_TIMEOUT_MS", "value": "500"},
                    {"name": "LOCALITY_PROBE_LOOPS", "value": "2"}]}]}
    }))
    .expect("pod")
}

#[test]
fn pod_logs_of_curl_and_probe_pods() {
    let r = common::start(0.0);
    runtime().block_on(async {
        let client = client(&r).await;
        let pods: Api<Pod> = Api::namespaced(client, "default");
        let pp = PostParams::default();
        let mode = curl_pod(
            "mode-c",
            "node-c",
            true,
            &["curl", "-s", "127.0.0.1:10249/proxyMode"],
        );
        pods.create(&pp, &mode).await.expect("create mode-c");
        pods.create(&pp, &probe_pod("probe-a", "node-a"))
            .await
            .expect("create probe-a");
        pods.create(&pp, &probe_pod("probe-c", "node-c"))
            .await
            .expect("create probe-c");

        let err = pods
            .logs("mode-c", &LogParams::default())
            .await
            .expect_err("no log before the container starts");
        match err {
            kube::Error::Api(s) => {
                assert_eq!(s.code, 400, "{s:?}");
                assert!(s.message.contains("ContainerCreating"), "{}", s.message);
            }
            e => panic!("expected a 400, got {e}"),
        }

        r.advance(4_000);
        let text = pods
            .logs("mode-c", &LogParams::default())
            .await
            .expect("log of mode-c");
        assert_eq!(text, "iptables");
        let done = pods.get("mode-c").await.expect("get mode-c");
        assert_eq!(done.status.and_then(|s| s.phase).as_deref(), Some("Succeeded"));

        // Probe loops: `<n> <curl code> <responder>` on node-a, timeouts on node-c (ITP Local).
        let a = pods
            .logs("probe-a", &LogParams::default())
            .await
            .expect("log of probe-a");
        let a: Vec<Vec<&str>> = a.lines().map(|l| l.split(' ').collect()).collect();
        assert!(a.len() >= 20, "{a:?}");
        assert!(
            a.iter()
                .all(|l| l.len() == 3 && l[2] == "web-a" && (l[1] == "0" || l[1] == "1")),
            "{a:?}"
        );
        let c = pods
            .logs("probe-c", &LogParams::default())
            .await
            .expect("log of probe-c");
        let c: Vec<Vec<&str>> = c.lines().map(|l| l.split(' ').collect()).collect();
        assert!(c.len() >= 4, "{c:?}");
        assert!(
            c.iter().all(|l| l.len() == 4 && l[2] == "ERR" && l[3] == "28"),
            "{c:?}"
        );

        // Query parameters pass through kube's LogParams.
        let tail = LogParams {
            tail_lines: Some(3),
            ..LogParams::default()
        };
        let last = pods.logs("probe-a", &tail).await.expect("tail of probe-a");
        assert_eq!(last.lines().count(), 3, "{last}");
        let stamped = LogParams {
            timestamps: true,
            tail_lines: Some(1),
            ..LogParams::default()
        };
        let line = pods.logs("probe-a", &stamped).await.expect("stamped tail");
        assert!(line.starts_with("2025-01-01T00:00:"), "{line}");
        let wrong = LogParams {
            container: Some("nope".into()),
            ..LogParams::default()
        };
        let err = pods.logs("probe-a", &wrong).await.expect_err("no such container");
        assert!(matches!(&err, kube::Error::Api(s) if s.code == 400), "{err}");
    });
}
