//! Opt-in: snapshots a real cluster. `#[ignore]`d: it runs under the nextest profile
//! `real-cluster` (`cargo nextest run --profile real-cluster --run-ignored only`) with
//! `LOCALITY_TEST_KUBECONFIG` naming a kubeconfig (optionally `LOCALITY_TEST_CONTEXT` a
//! context), and fails when it is not set. Recipe (kind, three zoned workers) in the crate's
//! README.

use std::sync::atomic::{AtomicUsize, Ordering};

use locality_live::{LiveOptions, snapshot_blocking};
use locality_model::matrix::DataPlane;

#[test]
#[ignore = "needs a real cluster: LOCALITY_TEST_KUBECONFIG=PATH, nextest profile real-cluster"]
fn snapshot_of_a_real_cluster() {
    let kubeconfig = std::env::var_os("LOCALITY_TEST_KUBECONFIG").expect(
        "set LOCALITY_TEST_KUBECONFIG=PATH (and optionally LOCALITY_TEST_CONTEXT) to snapshot a \
         real cluster; see crates/locality-live/README.md",
    );
    let opts = LiveOptions {
        kubeconfig: Some(kubeconfig.into()),
        context: std::env::var("LOCALITY_TEST_CONTEXT").ok(),
        all_namespaces: true,
        // Small pages so that even a kind cluster paginates.
        page_size: 5,
        ..Default::default()
    };
    let pages = AtomicUsize::new(0);
    let progress = |_: &str, _: usize| {
        pages.fetch_add(1, Ordering::Relaxed);
    };
    let snap = match snapshot_blocking(&opts, Some(&progress)) {
        Ok(s) => s,
        Err(e) => panic!("snapshot of {:?} failed: {e}", opts.kubeconfig),
    };
    eprintln!(
        "{} ({}): {} nodes, {} pods, {} services, {} slices, {} workloads in {} pages; server {:?}, \
         kube-proxy {:?}, data plane {:?} ({})",
        snap.target.server,
        snap.target.context.as_deref().unwrap_or("in-cluster"),
        snap.state.nodes.len(),
        snap.state.pods.len(),
        snap.state.services.len(),
        snap.state.endpoint_slices.len(),
        snap.state.workloads.len(),
        snap.pages,
        snap.server_version,
        snap.kube_proxy_version,
        snap.data_plane,
        snap.data_plane_source
    );
    for w in &snap.warnings {
        eprintln!("warning: {w}");
    }
    assert!(!snap.state.nodes.is_empty(), "a cluster has nodes");
    assert!(snap.server_version.is_some(), "/version is public");
    assert!(pages.load(Ordering::Relaxed) >= snap.pages);
    assert!(
        snap.state
            .services
            .iter()
            .any(|s| s.meta.namespace == "default" && s.meta.name == "kubernetes"),
        "default/kubernetes exists in every cluster"
    );
    if let DataPlane::KubeProxy(_) = snap.data_plane {
        // kube-proxy may lag the API server by up to three minors, never lead it.
        if let (Some(p), Some(s)) = (snap.kube_proxy_version, snap.server_version) {
            assert!(p <= s, "kube-proxy {p} newer than the API server {s}");
        }
    }
    // The kind recipe labels three workers with zones.
    if let Ok(n) = std::env::var("LOCALITY_TEST_EXPECT_ZONES") {
        let zones: std::collections::BTreeSet<&str> =
            snap.state.nodes.iter().filter_map(|n| n.zone()).collect();
        assert_eq!(zones.len().to_string(), n, "zones {zones:?}");
    }
}
