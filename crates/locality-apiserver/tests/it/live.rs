//! The repo's own live-read path (`locality_live::snapshot_blocking`, kube-rs) against the
//! simulated API server.

use crate::common;

use locality_live::LiveOptions;

#[test]
fn live_snapshot_reads_service_and_endpointslice() {
    let r = common::start(10.0);
    let opts = LiveOptions {
        kubeconfig: Some(r.kubeconfig_path().to_path_buf()),
        all_namespaces: true,
        page_size: 2,
        ..LiveOptions::default()
    };
    let snap = locality_live::snapshot_blocking(&opts, None).expect("snapshot of the simulated cluster");
    // Every kind must be served and readable.
    assert!(
        !snap
            .warnings
            .iter()
            .any(|w| w.contains("does not serve") || w.contains("forbidden")),
        "{:?}",
        snap.warnings
    );
    let st = &snap.state;
    assert_eq!(st.nodes.len(), 3);
    // The fixture's 5 pods and one kube-proxy per node.
    assert_eq!(st.pods.len(), 8);
    // kube-proxy is found as on a kubeadm cluster: version from the DaemonSet's image, mode
    // from its ConfigMap.
    assert_eq!(
        snap.data_plane,
        locality_model::matrix::DataPlane::KubeProxy(Some(locality_model::proxy::ProxyMode::Iptables)),
        "{}",
        snap.data_plane_source
    );
    assert_eq!(
        snap.kube_proxy_version,
        Some(locality_model::version::KubeVersion::new(1, 35))
    );
    let svc = st
        .services
        .iter()
        .find(|s| s.meta.name == "myservice")
        .expect("myservice");
    assert_eq!(svc.itp(), locality_model::objects::TrafficPolicy::Local);
    let slice = st
        .endpoint_slices
        .iter()
        .find(|s| s.service_name() == Some("myservice"))
        .expect("its EndpointSlice");
    assert_eq!(slice.endpoints.len(), 2);
    assert!(slice.endpoints.iter().all(|e| e.conditions.ready == Some(true)));
    assert_eq!(
        snap.server_git_version.as_deref(),
        Some("v1.35.0+locality-simulated")
    );
    assert!(snap.simulated, "the simulated API server is told apart");
    assert_eq!(snap.target.context.as_deref(), Some("locality-sim"));
}

#[test]
fn the_default_kubeconfig_is_removed_when_the_server_stops_and_a_given_one_stays() {
    let r = common::start(0.0);
    let default = r.kubeconfig_path().to_path_buf();
    assert!(default.starts_with(std::env::temp_dir()), "{}", default.display());
    assert!(default.exists(), "{}", default.display());
    drop(r);
    assert!(!default.exists(), "left behind: {}", default.display());

    let dir = common::scratch();
    let given = dir.join("kubeconfig");
    let topology = locality_sim::Topology::builtin("three-zones").expect("built-in topology");
    let mut opts =
        locality_apiserver::ServeOptions::from_topology(&topology, locality_sim::SimConfig::default())
            .expect("engine");
    opts.speed = 0.0;
    opts.kubeconfig_out = Some(given.clone());
    locality_apiserver::serve(opts).expect("serve").shutdown();
    assert!(
        given.exists(),
        "the caller's kubeconfig was removed: {}",
        given.display()
    );
}

/// A PodDisruptionBudget created over the API is served (policy/v1) and read back by the live
/// path, as `simulate --drain` on a live cluster needs it.
#[test]
fn a_pod_disruption_budget_is_served_and_read_live() {
    let r = common::start(0.0);
    let (code, body) = common::http(
        &r,
        "POST",
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        "application/json",
        r#"{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"web"}}}}"#,
    );
    assert_eq!(code, 201, "{body}");
    let opts = LiveOptions {
        kubeconfig: Some(r.kubeconfig_path().to_path_buf()),
        all_namespaces: true,
        ..LiveOptions::default()
    };
    let snap = locality_live::snapshot_blocking(&opts, None).expect("snapshot");
    let pdbs = &snap.state.pod_disruption_budgets;
    assert_eq!(pdbs.len(), 1, "{pdbs:?}");
    assert_eq!(pdbs[0].meta.name, "web");
    assert_eq!(pdbs[0].meta.namespace, "default");
}

/// A StatefulSet created over the API, with its pods, is read back by the live path with
/// what `simulate --rollout statefulset/…` seeds from: replicas, policy, strategy, partition,
/// `minReadySeconds`, and its ordinal pods owned by it.
#[test]
fn a_stateful_set_and_its_pods_are_read_live() {
    let r = common::start(0.0);
    let body = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 2, "serviceName": "db", "podManagementPolicy": "Parallel",
            "minReadySeconds": 7,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                         "spec": {"containers": [{"name": "db", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                                  "args": ["netexec"]}]}},
        },
    });
    let (code, text) = common::http(
        &r,
        "POST",
        "/apis/apps/v1/namespaces/default/statefulsets",
        "application/json",
        &body.to_string(),
    );
    assert_eq!(code, 201, "{text}");
    r.advance(60_000);
    let opts = LiveOptions {
        kubeconfig: Some(r.kubeconfig_path().to_path_buf()),
        all_namespaces: true,
        ..LiveOptions::default()
    };
    let snap = locality_live::snapshot_blocking(&opts, None).expect("snapshot");
    let st = &snap.state;
    let w = st
        .workloads
        .iter()
        .find(|w| w.kind == locality_model::objects::WorkloadKind::StatefulSet)
        .expect("the StatefulSet");
    assert_eq!(w.meta.name, "db");
    assert_eq!(w.replicas, Some(2));
    assert_eq!(
        w.pod_management_policy,
        locality_model::objects::PodManagementPolicy::Parallel
    );
    assert_eq!((w.partition, w.min_ready_seconds), (Some(1), 7));
    assert_eq!(w.update_strategy.as_deref(), Some("RollingUpdate"));
    let mut pods: Vec<&str> = st
        .pods
        .iter()
        .filter(|p| {
            p.meta
                .owner_references
                .iter()
                .any(|o| o.kind == "StatefulSet" && o.name == "db")
        })
        .map(|p| p.meta.name.as_str())
        .collect();
    pods.sort_unstable();
    assert_eq!(pods, ["db-0", "db-1"]);
}
