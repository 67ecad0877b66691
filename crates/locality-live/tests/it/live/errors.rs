//! Errors and degradation of a live read: forbidden kinds, retried and persistent 500s, expired continue
//! tokens, an unreachable server, a 401.

use super::{Env, everything, expected, normalize, take};
use locality_live::{LiveError, LiveOptions, snapshot};
use locality_model::matrix::DataPlane;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_testkit::fake_api::FakeApi;
use locality_testkit::files::{TempDir, write_kubeconfig};

#[tokio::test]
async fn forbidden_kind_degrades_with_a_warning_naming_it() {
    let mut api = FakeApi::cluster();
    api.faults
        .forbid
        .insert("/apis/discovery.k8s.io/v1/endpointslices".into());
    let want = expected(api.objects(), |o| o["kind"] != "EndpointSlice");
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.forbidden, ["EndpointSlice"]);
    assert!(snap.state.endpoint_slices.is_empty());
    assert_eq!(normalize(snap.state.clone()), want);
    let w = snap
        .warnings
        .iter()
        .find(|w| w.contains("endpointslices.discovery.k8s.io"))
        .expect("a warning naming the kind");
    assert!(w.starts_with("forbidden: cannot list EndpointSlices"), "{w}");
    assert!(w.contains("derived from pods"), "{w}");
    assert!(w.contains("is forbidden: User"), "the server's message: {w}");
    // The data plane is still found.
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(Some(ProxyMode::Iptables)));
}

#[tokio::test]
async fn forbidden_pods_and_daemonsets_name_what_they_disable() {
    let mut api = FakeApi::cluster();
    api.faults.forbid.insert("/api/v1/pods".into());
    api.faults.forbid.insert("/daemonsets".into());
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.forbidden, ["Pod", "DaemonSet"]);
    let joined = snap.warnings.join("\n");
    assert!(joined.contains("client nodes unknown"), "{joined}");
    assert!(joined.contains("LOC003/LOC004 skipped"), "{joined}");
    // Without the DaemonSet, neither mode nor kube-proxy version can be read.
    assert_eq!(snap.data_plane, DataPlane::Unknown);
    assert_eq!(snap.kube_proxy_version, None);
    assert!(
        joined.contains("cannot read DaemonSet kube-system/kube-proxy (403"),
        "{joined}"
    );
    assert_eq!(snap.state.nodes.len(), 3);
    assert!(snap.state.pods.is_empty());
}

#[tokio::test]
async fn a_500_that_succeeds_on_retry_is_retried() {
    let mut api = FakeApi::cluster();
    api.faults.fail_once.insert("/api/v1/pods".into());
    api.faults.fail_once.insert("/version".into());
    let want = expected(api.objects(), everything);
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(normalize(snap.state.clone()), want);
    let statuses: Vec<u16> = env
        .server
        .requests_to("/api/v1/pods")
        .iter()
        .map(|l| l.status)
        .collect();
    assert_eq!(statuses, [500, 200]);
    assert_eq!(snap.server_version, Some(KubeVersion::new(1, 35)));
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
}

#[tokio::test]
async fn a_persistent_500_is_an_error_with_the_servers_message() {
    let mut api = FakeApi::cluster();
    api.faults.fail_always.insert("/api/v1/services".into());
    let env = Env::start(api);
    let err = snapshot(&env.all(), None).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LiveError::Api { code: 500, .. }), "{err:?}");
    assert!(text.contains("etcdserver: request timed out"), "{text}");
    assert!(text.contains("/api/v1/services"), "{text}");
    assert!(text.contains("after 4 attempts"), "{text}");
    assert_eq!(env.server.requests_to("/api/v1/services").len(), 4);
}

#[tokio::test]
async fn an_expired_continue_token_restarts_the_list_once() {
    let mut api = FakeApi::cluster();
    api.faults.expire_continue_once.insert("/api/v1/pods".into());
    let want = expected(api.objects(), everything);
    let env = Env::start(api);
    let opts = LiveOptions {
        page_size: 4,
        ..env.all()
    };
    let snap = take(&opts).await;
    // No pod twice, none missing: the partial list was discarded.
    assert_eq!(normalize(snap.state.clone()), want);
    let pods = env.server.requests_to("/api/v1/pods");
    let shape: Vec<(u16, bool)> = pods
        .iter()
        .map(|l| (l.status, l.query.contains_key("continue")))
        .collect();
    assert_eq!(
        shape,
        [(200, false), (410, true), (200, false), (200, true), (200, true)]
    );
    assert!(
        snap.warnings
            .iter()
            .any(|w| w.contains("/api/v1/pods") && w.contains("expired")),
        "{:?}",
        snap.warnings
    );
}

#[tokio::test]
async fn a_continue_token_that_keeps_expiring_is_an_error() {
    let mut api = FakeApi::cluster();
    api.faults.expire_continue_always.insert("/api/v1/pods".into());
    let env = Env::start(api);
    let opts = LiveOptions {
        page_size: 4,
        ..env.all()
    };
    let err = snapshot(&opts, None).await.unwrap_err();
    assert!(matches!(err, LiveError::Api { code: 410, .. }), "{err:?}");
    assert!(err.to_string().contains("too old"), "{err}");
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = TempDir::new("closed");
    let server = format!("http://127.0.0.1:{port}");
    let kubeconfig = write_kubeconfig(&dir.0, &server, "t");
    let opts = LiveOptions {
        kubeconfig: Some(kubeconfig),
        ..Default::default()
    };
    let err = snapshot(&opts, None).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LiveError::Transport { .. }), "{err:?}");
    assert!(
        text.starts_with(&format!("cannot talk to the API server at {server}: ")),
        "{text}"
    );
    assert!(text.to_lowercase().contains("connection refused"), "{text}");
    assert!(matches!(err, LiveError::Transport { .. }), "{err:?}");
}

#[tokio::test]
async fn a_401_is_an_error_with_the_servers_message() {
    let api = FakeApi::cluster();
    let server = api.start();
    let dir = TempDir::new("401");
    let kubeconfig = write_kubeconfig(&dir.0, &server.url(), "wrong-token");
    let opts = LiveOptions {
        kubeconfig: Some(kubeconfig),
        ..Default::default()
    };
    let err = snapshot(&opts, None).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LiveError::Unauthorized { .. }), "{err:?}");
    assert!(
        text.contains("the fake API server rejects this bearer token"),
        "{text}"
    );
    assert!(text.contains("context \"fake\""), "{text}");
    assert!(text.contains("401 Unauthorized"), "{text}");
    assert!(matches!(err, LiveError::Unauthorized { .. }), "{err:?}");
    // It stopped at the first request.
    assert_eq!(server.log().len(), 1);
}
