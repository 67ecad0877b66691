//! The proxy mode and data plane of a live cluster: kube-proxy's DaemonSet arguments and ConfigMap, a
//! simulated server, known kube-proxy replacements.

use super::{Env, take};
use locality_model::matrix::DataPlane;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_testkit::fake_api::FakeApi;
use serde_json::{Value, json};

pub(super) fn kube_proxy_ds(api: &mut FakeApi) -> &mut Value {
    api.object_mut("DaemonSet", "kube-system", "kube-proxy")
}

fn set_config_mode(api: &mut FakeApi, mode: &str) {
    let cm = api.object_mut("ConfigMap", "kube-system", "kube-proxy");
    let conf = cm["data"]["config.conf"]
        .as_str()
        .unwrap()
        .replace("mode: \"\"", mode);
    cm["data"]["config.conf"] = json!(conf);
}

#[tokio::test]
async fn proxy_mode_from_the_daemonset_args() {
    let mut api = FakeApi::cluster();
    let c = &mut kube_proxy_ds(&mut api)["spec"]["template"]["spec"]["containers"][0];
    c["args"] = json!(["--proxy-mode=ipvs", "--v=2"]);
    c["image"] = json!("registry.k8s.io/kube-proxy:v1.33.4");
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(Some(ProxyMode::Ipvs)));
    assert_eq!(snap.kube_proxy_version, Some(KubeVersion::new(1, 33)));
    assert!(
        snap.data_plane_source.contains("--proxy-mode"),
        "{}",
        snap.data_plane_source
    );
    assert!(
        env.server
            .requests_to("/api/v1/namespaces/kube-system/configmaps/kube-proxy")
            .is_empty(),
        "the flag decides; the ConfigMap is not read"
    );
}

#[tokio::test]
async fn proxy_mode_from_the_configmap() {
    let mut api = FakeApi::cluster();
    set_config_mode(&mut api, "mode: nftables");
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(Some(ProxyMode::Nftables)));
    assert_eq!(
        snap.data_plane_source,
        "ConfigMap kube-system/kube-proxy config.conf: mode nftables"
    );
}

#[tokio::test]
async fn an_empty_mode_on_kube_proxy_1_37_is_unknown() {
    let mut api = FakeApi::cluster();
    kube_proxy_ds(&mut api)["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("registry.k8s.io/kube-proxy:v1.37.0");
    api.git_version = "v1.37.1".into();
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.kube_proxy_version, Some(KubeVersion::new(1, 37)));
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(None));
    assert!(
        snap.warnings
            .iter()
            .any(|w| w.contains("mode \"\" on kube-proxy 1.37") && w.contains("nftables")),
        "{:?}",
        snap.warnings
    );
}

#[tokio::test]
async fn a_simulated_git_version_marks_the_snapshot_simulated() {
    let mut api = FakeApi::cluster();
    api.git_version = "v1.35.0+locality-simulated".into();
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert!(snap.simulated);
    // The version before the build metadata reads as the release's.
    assert_eq!(snap.server_version, Some(KubeVersion::new(1, 35)));
    assert!(
        !snap.warnings.iter().any(|w| w.contains("/version")),
        "{:?}",
        snap.warnings
    );
}

#[tokio::test]
async fn an_unreadable_configmap_leaves_the_mode_unknown() {
    let mut api = FakeApi::cluster();
    api.faults.forbid.insert("/configmaps".into());
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(None));
    assert_eq!(snap.kube_proxy_version, Some(KubeVersion::new(1, 35)));
    assert!(
        snap.warnings.iter().any(|w| w.contains("--proxy-mode")),
        "{:?}",
        snap.warnings
    );
}

pub(super) fn without_kube_proxy(api: &mut FakeApi) {
    api.remove("DaemonSet", "kube-system", "kube-proxy");
    api.remove("ConfigMap", "kube-system", "kube-proxy");
    for name in ["kube-proxy-x2l9q", "kube-proxy-m7d4k", "kube-proxy-p0w8z"] {
        api.remove("Pod", "kube-system", name);
    }
}

fn cilium_config(kpr: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "cilium-config", "namespace": "kube-system"},
           "data": {"kube-proxy-replacement": kpr, "routing-mode": "native"}})
}

#[tokio::test]
async fn a_cilium_kube_proxy_replacement_is_another_data_plane() {
    let mut api = FakeApi::cluster();
    without_kube_proxy(&mut api);
    api.put(cilium_config("true"));
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.data_plane, DataPlane::Other("cilium".into()));
    assert!(snap.data_plane_source.contains("kube-proxy-replacement: true"));
    assert_eq!(snap.kube_proxy_version, None);
}

#[tokio::test]
async fn no_kube_proxy_and_no_known_replacement_is_unknown() {
    let mut api = FakeApi::cluster();
    without_kube_proxy(&mut api);
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(snap.data_plane, DataPlane::Unknown);
    assert!(
        snap.warnings
            .iter()
            .any(|w| w.contains("no kube-proxy DaemonSet")),
        "{:?}",
        snap.warnings
    );
}
