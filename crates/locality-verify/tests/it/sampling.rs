//! `--max-nodes` sampling keeps every distinct kube-proxy (issue #9 item 1), end to end: on
//! the simulated cluster (whose kube-proxy DaemonSets show each node's version and mode), a
//! node running an older kube-proxy and a node of another kube-proxy DaemonSet (ipvs) are
//! probed although the zones are covered without them and the limit is reached.

use crate::support;

use locality_apiserver::ServeOptions;
use locality_sim::{SimConfig, Topology};
use locality_testkit::files::TempDir;
use locality_verify::Status;
use locality_verify::{VerifyOptions, verify};

/// Six nodes in three zones: node-e's kube-proxy in ipvs mode (its own DaemonSet), node-f's
/// at 1.33 (the cluster's is 1.35). Roles take node-a..node-d; one node per zone is
/// node-a, node-b, node-c.
const TOPOLOGY: &str = "name: sampling
nodes:
  - {name: node-a, zone: zone-a}
  - {name: node-b, zone: zone-b}
  - {name: node-c, zone: zone-c}
  - {name: node-d, zone: zone-a}
  - {name: node-e, zone: zone-b, profile: \"kube-proxy:ipvs\"}
  - {name: node-f, zone: zone-c, kubeProxyVersion: \"1.33\"}
";

fn scratch(name: &str) -> TempDir {
    TempDir::new(&format!("verify-test-{name}"))
}

#[test]
fn max_nodes_keeps_every_distinct_kube_proxy() {
    let dir = scratch("sampling");
    let topology = Topology::from_yaml(TOPOLOGY, "sampling").unwrap();
    let mut serve = ServeOptions::from_topology(&topology, SimConfig::default()).unwrap();
    serve.speed = 50.0;
    serve.kubeconfig_out = Some(dir.join("kubeconfig"));
    let running = locality_apiserver::serve(serve).unwrap();
    let opts = VerifyOptions {
        only: vec!["P".into()],
        max_nodes: Some(3),
        ..support::options(running.kubeconfig_path(), dir.join("evidence"))
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let o = rt.block_on(verify(&opts)).expect("verify runs");
    let sampled = o.sampled.as_ref().expect("a sampled run: node-d is left out");
    // Zones: node-a, node-b, node-c (3, the limit); then node-e (DaemonSet kube-proxy-ipvs)
    // and node-f (image v1.33.0), each the only node of its kind, beyond the limit.
    assert_eq!(
        sampled.nodes,
        ["node-a", "node-b", "node-c", "node-e", "node-f"],
        "{:?}",
        o.advice
    );
    assert_eq!((sampled.probed, sampled.usable), (5, 6));
    let p = o.cases.iter().find(|c| c.id == "P").unwrap();
    assert!(p.why.contains("node-e") && p.why.contains("node-f"), "{}", p.why);
    assert!(
        o.cases.iter().all(|c| c.status != Status::Fail),
        "{:?}",
        o.cases
            .iter()
            .map(|c| format!("{} {}: {}", c.id, c.status.as_str(), c.why))
            .collect::<Vec<_>>()
    );
    // The evidence says why: each node's kube-proxy as its pod declares it.
    let nodes = std::fs::read_to_string(dir.join("evidence/01-nodes.yaml")).unwrap();
    assert!(nodes.contains("registry.k8s.io/kube-proxy:v1.33.0"), "{nodes}");
    assert!(nodes.contains("DaemonSet/kube-proxy-ipvs"), "{nodes}");
    let _ = std::fs::remove_dir_all(&dir);
}
