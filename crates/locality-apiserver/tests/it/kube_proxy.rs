//! The simulated cluster publishes kube-proxy in `kube-system` as a kubeadm cluster does
//! (issue #11): a DaemonSet with one Running, Ready, hostNetwork pod per node whose image tag
//! is that node's simulated kube-proxy version, its ConfigMap with the mode, nothing on a node
//! whose data plane is a replacement; and the repo's live reader (kube-rs) finds kube-proxy's
//! version and mode from them.

use crate::common;

use std::collections::BTreeMap;

use locality_apiserver::{Running, ServeOptions};
use locality_model::matrix::DataPlane;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_sim::{DataPlaneProfile, SimConfig, Topology};
use serde_json::Value;

/// four-nodes with kube-proxy 1.34 (the API server is 1.35), node-b's kube-proxy at 1.32,
/// node-c in ipvs mode, node-d with a replacement data plane; the clock frozen at the start.
fn serve() -> Running {
    let topology = Topology::builtin("four-nodes").unwrap();
    let config = SimConfig {
        kube_proxy_version: KubeVersion::new(1, 34),
        ..SimConfig::default()
    };
    let mut opts = ServeOptions::from_topology(&topology, config).unwrap();
    opts.engine.set_proxy_version("node-b", KubeVersion::new(1, 32));
    for (node, profile) in [("node-c", "kube-proxy:ipvs"), ("node-d", "other:cilium")] {
        opts.engine
            .set_profile(node, profile.parse::<DataPlaneProfile>().unwrap());
    }
    opts.speed = 0.0;
    locality_apiserver::serve(opts).unwrap()
}

fn get(r: &Running, path: &str) -> Value {
    let (code, v) = common::get_json(r, path);
    assert_eq!(code, 200, "{path}: {v}");
    v
}

#[test]
fn kube_proxy_is_a_daemonset_with_one_pod_per_node_tagged_with_its_version() {
    let r = serve();
    let ds = get(&r, "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy");
    assert_eq!(ds["metadata"]["labels"]["k8s-app"], "kube-proxy");
    assert_eq!(ds["metadata"]["annotations"]["locality.dev/simulated"], "true");
    let spec = &ds["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    assert_eq!(c["name"], "kube-proxy");
    assert_eq!(c["image"], "registry.k8s.io/kube-proxy:v1.34.0");
    assert_eq!(
        c["command"],
        serde_json::json!([
            "/usr/local/bin/kube-proxy",
            "--config=/var/lib/kube-proxy/config.conf",
            "--hostname-override=$(NODE_NAME)"
        ])
    );
    assert_eq!(spec["hostNetwork"], true);
    assert!(
        spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["configMap"]["name"] == "kube-proxy")
    );

    // One pod per node, up before the (frozen) clock started, tagged with its node's version;
    // node-c's from the ipvs DaemonSet, none on node-d (a replacement data plane).
    let pods = get(&r, "/api/v1/namespaces/kube-system/pods");
    let mut by_node: BTreeMap<String, (String, String)> = BTreeMap::new();
    for p in pods["items"].as_array().unwrap() {
        let node = p["spec"]["nodeName"].as_str().unwrap().to_string();
        assert_eq!(p["status"]["phase"], "Running", "{p}");
        let ready = p["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap();
        assert_eq!(ready["status"], "True", "{p}");
        assert_eq!(p["spec"]["hostNetwork"], true, "{p}");
        let owner = &p["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "DaemonSet");
        let image = p["spec"]["containers"][0]["image"].as_str().unwrap().to_string();
        assert_eq!(
            p["status"]["containerStatuses"][0]["image"], image,
            "the status shows the image the node runs"
        );
        // The DaemonSet controller's affinity: the pod's own node.
        assert_eq!(
            p.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchFields/0/values/0")
                .and_then(Value::as_str),
            Some(node.as_str()),
            "{p}"
        );
        let previous = by_node.insert(node, (owner["name"].as_str().unwrap().to_string(), image));
        assert!(previous.is_none(), "one kube-proxy per node");
    }
    let want = |ds: &str, tag: &str| (ds.to_string(), format!("registry.k8s.io/kube-proxy:{tag}"));
    assert_eq!(
        by_node,
        BTreeMap::from([
            ("node-a".to_string(), want("kube-proxy", "v1.34.0")),
            ("node-b".to_string(), want("kube-proxy", "v1.32.0")),
            ("node-c".to_string(), want("kube-proxy-ipvs", "v1.34.0")),
        ])
    );
    let labelled = get(
        &r,
        "/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-proxy",
    );
    assert_eq!(labelled["items"].as_array().unwrap().len(), 2);
}

#[test]
fn its_configmaps_name_the_modes_and_are_read_only() {
    let r = serve();
    let cm = get(&r, "/api/v1/namespaces/kube-system/configmaps/kube-proxy");
    assert_eq!(cm["kind"], "ConfigMap");
    let conf = cm["data"]["config.conf"].as_str().unwrap();
    assert!(conf.contains("kind: KubeProxyConfiguration\n"), "{conf}");
    assert!(conf.contains("\nmode: iptables\n"), "{conf}");
    let ipvs = get(&r, "/api/v1/namespaces/kube-system/configmaps/kube-proxy-ipvs");
    assert!(
        ipvs["data"]["config.conf"]
            .as_str()
            .unwrap()
            .contains("\nmode: ipvs\n")
    );
    let list = get(&r, "/api/v1/configmaps?fieldSelector=metadata.name%3Dkube-proxy");
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(
        get(&r, "/api/v1/namespaces/default/configmaps")["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let (code, v) = common::get_json(&r, "/api/v1/namespaces/default/configmaps/kube-proxy");
    assert_eq!((code, v["reason"].as_str()), (404, Some("NotFound")));
    let (code, _) = common::http(
        &r,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#,
    );
    assert_eq!(code, 405);
    let discovery = get(&r, "/api/v1");
    let cms = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "configmaps")
        .expect("configmaps in discovery");
    assert_eq!(cms["verbs"], serde_json::json!(["get", "list", "watch"]));
}

/// `locality_live` (kube-rs, the path of `matrix`, `audit` and `verify`) finds kube-proxy's
/// version in the DaemonSet's image (1.34, not the API server's 1.35) and its mode in the
/// ConfigMap, where it found neither before.
#[test]
fn the_live_reader_finds_kube_proxys_version_and_mode() {
    let r = serve();
    let opts = locality_live::LiveOptions {
        kubeconfig: Some(r.kubeconfig_path().to_path_buf()),
        all_namespaces: true,
        ..locality_live::LiveOptions::default()
    };
    let snap = locality_live::snapshot_blocking(&opts, None).unwrap();
    assert_eq!(snap.server_version, Some(KubeVersion::new(1, 35)));
    assert_eq!(snap.kube_proxy_version, Some(KubeVersion::new(1, 34)));
    assert_eq!(
        snap.data_plane,
        DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        "{}",
        snap.data_plane_source
    );
    assert!(
        snap.data_plane_source
            .contains("ConfigMap kube-system/kube-proxy config.conf"),
        "{}",
        snap.data_plane_source
    );
    assert!(snap.simulated);
}
