//! Live reading over real HTTP against the loopback fake API server of `locality-testkit`.

mod errors;
mod kube_proxy_mode;
mod rbac;

use std::path::PathBuf;
use std::sync::Mutex;

use locality_live::{LiveError, LiveOptions, LiveSnapshot, kubeconfig_user, snapshot, snapshot_blocking};
use locality_model::matrix::DataPlane;
use locality_model::objects::{ClusterState, ObjectMeta, Origin};
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_testkit::fake_api::{FakeApi, Running};
use locality_testkit::files::{TempDir, write_kubeconfig};
use serde_json::{Value, json};

/// A running fake server and a kubeconfig pointing at it.
struct Env {
    server: Running,
    kubeconfig: PathBuf,
    _dir: TempDir,
}

impl Env {
    fn start(api: FakeApi) -> Env {
        let token = api.token.clone();
        let server = api.start();
        let dir = TempDir::new("kcfg");
        let kubeconfig = write_kubeconfig(&dir.0, &server.url(), &token);
        Env {
            server,
            kubeconfig,
            _dir: dir,
        }
    }

    /// `-A` against this server.
    fn all(&self) -> LiveOptions {
        LiveOptions {
            kubeconfig: Some(self.kubeconfig.clone()),
            all_namespaces: true,
            ..Default::default()
        }
    }

    fn refused(&self) -> Vec<String> {
        self.server.log().into_iter().filter_map(|l| l.refused).collect()
    }
}

fn metas(state: &mut ClusterState) -> Vec<&mut ObjectMeta> {
    state
        .nodes
        .iter_mut()
        .map(|o| &mut o.meta)
        .chain(state.pods.iter_mut().map(|o| &mut o.meta))
        .chain(state.services.iter_mut().map(|o| &mut o.meta))
        .chain(state.endpoint_slices.iter_mut().map(|o| &mut o.meta))
        .chain(state.workloads.iter_mut().map(|o| &mut o.meta))
        .chain(state.namespaces.iter_mut().map(|o| &mut o.meta))
        .collect()
}

/// Sorted by kind, namespace and name; origins cleared (live objects have none).
fn normalize(mut state: ClusterState) -> ClusterState {
    for m in metas(&mut state) {
        m.origin = Origin::default();
    }
    let key = |m: &ObjectMeta| (m.namespace.clone(), m.name.clone());
    state.nodes.sort_by_key(|o| key(&o.meta));
    state.pods.sort_by_key(|o| key(&o.meta));
    state.services.sort_by_key(|o| key(&o.meta));
    state.endpoint_slices.sort_by_key(|o| key(&o.meta));
    state.namespaces.sort_by_key(|o| key(&o.meta));
    state.workloads.sort_by_key(|w| (w.kind.as_str(), key(&w.meta)));
    state
}

/// What `load_bytes` reads from the same objects as one kubectl-style List.
fn expected(objects: &[Value], keep: impl Fn(&Value) -> bool) -> ClusterState {
    let items: Vec<&Value> = objects.iter().filter(|o| keep(o)).collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    let bytes = serde_json::to_vec(&list).unwrap();
    let loaded = locality_ingest::load_bytes("expected.json", &bytes, &Default::default()).unwrap();
    normalize(loaded.state)
}

fn everything(_: &Value) -> bool {
    true
}

fn ns_of(o: &Value) -> &str {
    o["metadata"]["namespace"].as_str().unwrap_or_default()
}

async fn take(opts: &LiveOptions) -> LiveSnapshot {
    match snapshot(opts, None).await {
        Ok(s) => s,
        Err(e) => panic!("snapshot failed: {e}"),
    }
}

fn assert_only_get_list(server: &Running) {
    for l in server.log() {
        assert_eq!(l.method, "GET", "{l:?}");
        assert!(!l.query.contains_key("watch"), "{l:?}");
    }
}

#[tokio::test]
async fn full_snapshot_equals_load_bytes_on_the_same_objects() {
    let api = FakeApi::cluster();
    let want = expected(api.objects(), everything);
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(normalize(snap.state.clone()), want);
    assert_eq!(snap.state.pods.len(), 11);
    assert_eq!(snap.state.nodes.len(), 3);
    assert!(
        metas(&mut snap.state.clone())
            .iter()
            .all(|m| m.origin == Origin::default()),
        "live objects carry no file origin"
    );
    assert_eq!(snap.server_version, Some(KubeVersion::new(1, 35)));
    assert_eq!(snap.server_git_version.as_deref(), Some("v1.35.0"));
    assert!(!snap.simulated, "a release's gitVersion is not the simulated one");
    assert_eq!(snap.kube_proxy_version, Some(KubeVersion::new(1, 35)));
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(Some(ProxyMode::Iptables)));
    assert!(
        snap.data_plane_source
            .contains("ConfigMap kube-system/kube-proxy config.conf")
            && snap.data_plane_source.contains("iptables"),
        "{}",
        snap.data_plane_source
    );
    assert!(snap.forbidden.is_empty());
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    assert_eq!(snap.target.server, env.server.url());
    assert_eq!(snap.target.context.as_deref(), Some("fake"));
    assert_eq!(snap.target.namespace, None);
    assert_eq!(snap.pages, 10, "one page per kind");
    assert!(snap.bytes_read > 10_000);
    // Cluster-wide lists, one request each, then the data plane.
    let paths: Vec<String> = env.server.log().iter().map(|l| l.path.clone()).collect();
    assert_eq!(
        paths,
        [
            "/version",
            "/api/v1/nodes",
            "/api/v1/namespaces",
            "/api/v1/services",
            "/apis/discovery.k8s.io/v1/endpointslices",
            "/api/v1/pods",
            "/apis/apps/v1/daemonsets",
            "/apis/apps/v1/deployments",
            "/apis/apps/v1/replicasets",
            "/apis/apps/v1/statefulsets",
            "/apis/policy/v1/poddisruptionbudgets",
            "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
            "/api/v1/namespaces/kube-system/configmaps/kube-proxy",
        ]
    );
    assert_only_get_list(&env.server);
}

#[tokio::test]
async fn pagination_fetches_every_page_and_reports_progress() {
    let api = FakeApi::cluster();
    let want = expected(api.objects(), everything);
    let env = Env::start(api);
    let opts = LiveOptions {
        page_size: 2,
        ..env.all()
    };
    let seen: Mutex<Vec<(String, usize)>> = Mutex::new(Vec::new());
    let progress = |kind: &str, n: usize| seen.lock().unwrap().push((kind.to_owned(), n));
    let snap = snapshot(&opts, Some(&progress)).await.unwrap();
    assert_eq!(normalize(snap.state.clone()), want);
    let pods = env.server.requests_to("/api/v1/pods");
    assert_eq!(pods.len(), 6, "11 pods in pages of 2: {pods:?}");
    assert!(pods.iter().all(|l| l.status == 200 && l.query["limit"] == "2"));
    assert!(!pods[0].query.contains_key("continue"));
    for (i, l) in pods.iter().enumerate().skip(1) {
        // The fake decodes the query: a token with `+`, `/`, `=` survived the round trip.
        assert_eq!(l.query["continue"], format!("eyJ2+{}/12==", 2 * i), "{l:?}");
    }
    let pod_progress: Vec<usize> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(k, _)| k == "Pod")
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(pod_progress, [2, 4, 6, 8, 10, 11]);
    // 3 nodes (2 pages), 3 namespaces (2), 3 services (2), 3 slices (2), 11 pods (6),
    // 1 DaemonSet, 2 Deployments, 2 ReplicaSets, 1 StatefulSet, no PodDisruptionBudget (an
    // empty list is one page too).
    assert_eq!(snap.pages, 2 + 2 + 2 + 2 + 6 + 1 + 1 + 1 + 1 + 1);
}

#[tokio::test]
async fn context_namespace_and_flags_resolve_as_kubectl_does() {
    let api = FakeApi::cluster();
    let want = expected(api.objects(), |o| {
        matches!(o["kind"].as_str(), Some("Node"))
            || ns_of(o) == "internal-acceptance"
            || (o["kind"] == "Namespace" && o["metadata"]["name"] == "internal-acceptance")
    });
    let env = Env::start(api);
    // The context `fake-app` carries namespace internal-acceptance.
    let opts = LiveOptions {
        kubeconfig: Some(env.kubeconfig.clone()),
        context: Some("fake-app".into()),
        ..Default::default()
    };
    let snap = take(&opts).await;
    assert_eq!(snap.target.namespace.as_deref(), Some("internal-acceptance"));
    assert_eq!(snap.target.context.as_deref(), Some("fake-app"));
    let mut got = normalize(snap.state.clone());
    // The kube-system DaemonSet is not in the namespace: only the data plane reads it.
    got.workloads
        .retain(|w| w.meta.namespace == "internal-acceptance");
    assert_eq!(got, want);
    let paths: Vec<String> = env.server.log().iter().map(|l| l.path.clone()).collect();
    assert!(paths.contains(&"/api/v1/nodes".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/api/v1/namespaces/internal-acceptance".to_owned()));
    assert!(paths.contains(&"/api/v1/namespaces/internal-acceptance/pods".to_owned()));
    assert!(!paths.contains(&"/api/v1/pods".to_owned()));
    // -n wins over the context's namespace.
    let opts = LiveOptions {
        namespace: Some("kube-system".into()),
        ..opts
    };
    let snap = take(&opts).await;
    assert_eq!(snap.target.namespace.as_deref(), Some("kube-system"));
    assert!(snap.state.pods.iter().all(|p| p.meta.namespace == "kube-system"));
    assert_eq!(snap.state.pods.len(), 5);
    // Without either: the current context (no namespace) → default.
    let opts = LiveOptions {
        kubeconfig: Some(env.kubeconfig.clone()),
        ..Default::default()
    };
    let snap = take(&opts).await;
    assert_eq!(snap.target.namespace.as_deref(), Some("default"));
    assert_eq!(snap.state.services.len(), 1);
    // A namespace that does not exist is a warning, not an error.
    let opts = LiveOptions {
        kubeconfig: Some(env.kubeconfig.clone()),
        namespace: Some("nope".into()),
        ..Default::default()
    };
    let snap = take(&opts).await;
    assert!(
        snap.warnings
            .iter()
            .any(|w| w.contains("namespace \"nope\" not found"))
    );
}

#[tokio::test]
async fn kubeconfig_errors_are_clear() {
    let dir = TempDir::new("badcfg");
    let kubeconfig = write_kubeconfig(&dir.0, "http://127.0.0.1:9", "t");
    let err = snapshot(
        &LiveOptions {
            kubeconfig: Some(kubeconfig),
            context: Some("prod".into()),
            ..Default::default()
        },
        None,
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("context \"prod\" not found"), "{text}");
    assert!(text.contains("known contexts: fake, fake-app"), "{text}");
    assert!(matches!(err, LiveError::Kubeconfig { .. }), "{err:?}");

    let missing = dir.0.join("missing");
    let err = snapshot(
        &LiveOptions {
            kubeconfig: Some(missing.clone()),
            ..Default::default()
        },
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LiveError::Kubeconfig { .. }), "{err:?}");
    assert!(err.to_string().contains(&missing.display().to_string()), "{err}");

    let garbage = dir.0.join("garbage");
    std::fs::write(&garbage, "clusters: [ {").unwrap();
    let err = snapshot(
        &LiveOptions {
            kubeconfig: Some(garbage),
            ..Default::default()
        },
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LiveError::Kubeconfig { .. }), "{err:?}");
}

#[test]
fn the_contexts_user_names_the_owner_without_touching_credentials() {
    let dir = TempDir::new("user");
    // The current context's user, and --context's.
    let kubeconfig = write_kubeconfig(&dir.0, "http://127.0.0.1:9", "t");
    let opts = LiveOptions {
        kubeconfig: Some(kubeconfig.clone()),
        ..Default::default()
    };
    assert_eq!(kubeconfig_user(&opts).unwrap().as_deref(), Some("tester"));
    // Per context; an exec plugin and a token file are never run or opened (the plugin would
    // leave a marker), and a context without a user names nobody.
    let marker = dir.0.join("exec-ran");
    let path = dir.0.join("users");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:9\n\
             users:\n- name: alice@example.com\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      \
             command: sh\n      args: [\"-c\", \"touch {}\"]\n\
             - name: bob\n  user:\n    tokenFile: /nonexistent/token\n\
             contexts:\n- name: a\n  context:\n    cluster: c\n    user: alice@example.com\n\
             - name: b\n  context:\n    cluster: c\n    user: bob\n\
             - name: nobody\n  context:\n    cluster: c\n\
             current-context: b\n",
            marker.display()
        ),
    )
    .unwrap();
    let at = |context: Option<&str>| LiveOptions {
        kubeconfig: Some(path.clone()),
        context: context.map(str::to_owned),
        ..Default::default()
    };
    assert_eq!(kubeconfig_user(&at(None)).unwrap().as_deref(), Some("bob"));
    assert_eq!(
        kubeconfig_user(&at(Some("a"))).unwrap().as_deref(),
        Some("alice@example.com")
    );
    assert_eq!(kubeconfig_user(&at(Some("nobody"))).unwrap(), None);
    assert!(!marker.exists(), "the exec plugin ran");
    let err = kubeconfig_user(&at(Some("prod"))).unwrap_err();
    assert!(err.to_string().contains("context \"prod\" not found"), "{err}");
    assert!(matches!(err, LiveError::Kubeconfig { .. }), "{err:?}");
}

#[test]
fn snapshot_blocking_runs_without_a_runtime() {
    let api = FakeApi::cluster();
    let want = expected(api.objects(), everything);
    let env = Env::start(api);
    let snap = snapshot_blocking(&env.all(), None).unwrap();
    assert_eq!(normalize(snap.state), want);
}

#[test]
fn the_snapshot_future_is_send() {
    // So that async callers (verify, the simulated cluster) can spawn it on any runtime.
    fn assert_send<T: Send>(_: &T) {}
    let opts = LiveOptions::default();
    let progress = |_: &str, _: usize| {};
    let fut = snapshot(&opts, Some(&progress));
    assert_send(&fut);
}
