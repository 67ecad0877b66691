//! RBAC: deploy/rbac-audit.yaml grants everything the tool reads, and nothing is refused.

use super::kube_proxy_mode::{kube_proxy_ds, without_kube_proxy};
use super::{Env, assert_only_get_list, take};
use locality_live::LiveOptions;
use locality_model::matrix::DataPlane;
use locality_model::proxy::ProxyMode;
use locality_testkit::fake_api::{FakeApi, Rbac};
use locality_testkit::files::TempDir;
use serde_json::json;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------
// RBAC: deploy/rbac-audit.yaml grants everything the tool reads, and nothing is refused.
// ---------------------------------------------------------------------------------------

fn rbac_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/rbac-audit.yaml")
}

fn rbac() -> Rbac {
    Rbac::load(&rbac_file(), "locality", "locality")
}

#[tokio::test]
async fn rbac_audit_yaml_grants_everything_the_tool_reads() {
    // All namespaces, kube-proxy with its ConfigMap.
    let mut api = FakeApi::cluster();
    api.rbac = Some(rbac());
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(env.refused(), Vec::<String>::new());
    assert!(
        snap.forbidden.is_empty() && snap.warnings.is_empty(),
        "{:?}",
        snap.warnings
    );
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(Some(ProxyMode::Iptables)));
    assert_only_get_list(&env.server);

    // One namespace (get on the Namespace itself), via the context's namespace.
    let opts = LiveOptions {
        kubeconfig: Some(env.kubeconfig.clone()),
        context: Some("fake-app".into()),
        ..Default::default()
    };
    let snap = take(&opts).await;
    assert_eq!(env.refused(), Vec::<String>::new());
    assert!(
        snap.forbidden.is_empty() && snap.warnings.is_empty(),
        "{:?}",
        snap.warnings
    );
}

#[tokio::test]
async fn rbac_audit_yaml_covers_the_replacement_detection() {
    // No kube-proxy: cilium-config, then the cilium DaemonSet are read.
    let mut api = FakeApi::cluster();
    without_kube_proxy(&mut api);
    api.rbac = Some(rbac());
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(env.refused(), Vec::<String>::new());
    assert_eq!(snap.data_plane, DataPlane::Unknown);
    let paths: Vec<String> = env.server.log().iter().map(|l| l.path.clone()).collect();
    assert!(paths.contains(&"/api/v1/namespaces/kube-system/configmaps/cilium-config".to_owned()));
    assert!(paths.contains(&"/apis/apps/v1/namespaces/kube-system/daemonsets/cilium".to_owned()));

    // EKS layout: the configuration lives in ConfigMap kube-proxy-config, key `config`.
    let mut api = FakeApi::cluster();
    let ds = kube_proxy_ds(&mut api);
    ds["spec"]["template"]["spec"]["containers"][0]["command"] =
        json!(["kube-proxy", "--config=/var/lib/kube-proxy-config/config"]);
    ds["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] =
        json!([{"name": "config", "mountPath": "/var/lib/kube-proxy-config/"}]);
    ds["spec"]["template"]["spec"]["volumes"] =
        json!([{"name": "config", "configMap": {"name": "kube-proxy-config"}}]);
    api.put(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kube-proxy-config", "namespace": "kube-system"},
        "data": {"config": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"ipvs\"\n"}}));
    api.rbac = Some(rbac());
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(env.refused(), Vec::<String>::new());
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(Some(ProxyMode::Ipvs)));
    assert_eq!(
        snap.data_plane_source,
        "ConfigMap kube-system/kube-proxy-config config: mode ipvs"
    );
}

#[tokio::test]
async fn rbac_enforcement_refuses_what_the_rules_do_not_allow() {
    // Control: the same rules without the kube-system Role; the fake must refuse the
    // ConfigMap read (so the tests above would notice a missing rule), and the tool
    // degrades.
    let text = std::fs::read_to_string(rbac_file()).unwrap();
    let without_role: String = text
        .split("\n---\n")
        .filter(|doc| !doc.contains("kind: RoleBinding"))
        .collect::<Vec<_>>()
        .join("\n---\n");
    let dir = TempDir::new("rbac");
    let path = dir.0.join("narrow.yaml");
    std::fs::write(&path, without_role).unwrap();
    let narrow = Rbac::load(&path, "locality", "locality");
    let mut api = FakeApi::cluster();
    api.rbac = Some(narrow);
    // And one kind the test forbids on purpose.
    api.faults.forbid.insert("/api/v1/pods".into());
    let env = Env::start(api);
    let snap = take(&env.all()).await;
    assert_eq!(
        env.refused(),
        ["get configmaps/kube-proxy in kube-system"],
        "only the ConfigMap is outside the narrowed rules"
    );
    assert_eq!(snap.forbidden, ["Pod"]);
    assert_eq!(snap.data_plane, DataPlane::KubeProxy(None));
}
