//! An assumed cluster for manifest-only inputs (`--nodes N`, `--zones a,b,c`).
//!
//! The nodes are `assumed-node-1`… with zones dealt round-robin, Ready, 4 CPUs, no taints and
//! no labels but the zone. Each workload's pods are placed as a scheduler spreading them would:
//! a DaemonSet's pod on every node (the assumed nodes' real labels and taints are unknown, so
//! its nodeSelector and tolerations are not evaluated: LOC003 is skipped), a Deployment's or
//! StatefulSet's `replicas` (default 1) one per node in node order (zones interleaved), a
//! ReplicaSet's only when no known Deployment owns it. Pods are Running and Ready with one
//! IPv4 and one IPv6 address, so dual-stack Services get endpoints in both families.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use locality_model::objects::{
    ClusterState, LABEL_ZONE, Node, ObjectMeta, OwnerReference, Pod, PodPhase, WorkloadKind,
};

use crate::report::AssumedShape;

/// Upper bound on assumed nodes and on pods per workload (Kubernetes supports 5,000 nodes).
const MAX_ASSUMED: usize = 20_000;

/// The assumed state (the input plus assumed nodes and pods) and its description.
pub(crate) fn synthesize(
    state: &ClusterState,
    nodes: Option<usize>,
    zones: &[String],
) -> (ClusterState, AssumedShape) {
    let mut zones_seen = HashSet::new();
    let zones: Vec<String> = zones
        .iter()
        .filter(|z| !z.is_empty() && zones_seen.insert(z.as_str()))
        .cloned()
        .collect();
    // Bounded so that a typo (`--nodes 1000000000`) cannot exhaust memory.
    let n = nodes.unwrap_or(zones.len()).clamp(1, MAX_ASSUMED);
    let mut out = state.clone();
    for i in 0..n {
        let mut meta = ObjectMeta {
            name: format!("assumed-node-{}", i + 1),
            ..ObjectMeta::default()
        };
        if !zones.is_empty() {
            meta.labels
                .insert(LABEL_ZONE.to_string(), zones[i % zones.len()].clone());
        }
        out.nodes.push(Node {
            meta,
            ready: Some(true),
            allocatable_cpu_millis: Some(4000),
            allocatable_pods: None,
            internal_ips: vec![IpAddr::V4(Ipv4Addr::from(0xC000_0200u32.wrapping_add(i as u32)))],
            ..Node::default()
        });
    }
    let deployments: HashSet<(&str, &str)> = state
        .workloads
        .iter()
        .filter(|w| w.kind == WorkloadKind::Deployment)
        .map(|w| (w.meta.namespace.as_str(), w.meta.name.as_str()))
        .collect();
    let mut workloads: Vec<_> = state.workloads.iter().collect();
    workloads.sort_by(|a, b| {
        (&a.meta.namespace, a.kind, &a.meta.name).cmp(&(&b.meta.namespace, b.kind, &b.meta.name))
    });
    let mut next_ip: u32 = 0;
    for w in workloads {
        let owned_by_deployment = w.kind == WorkloadKind::ReplicaSet
            && w.meta.owner_references.iter().any(|o| {
                o.kind == "Deployment" && deployments.contains(&(w.meta.namespace.as_str(), o.name.as_str()))
            });
        if owned_by_deployment {
            continue;
        }
        let count = match w.kind {
            WorkloadKind::DaemonSet => n,
            _ => (w.replicas.unwrap_or(1) as usize).min(MAX_ASSUMED),
        };
        for j in 0..count {
            let node = j % n;
            next_ip = next_ip.wrapping_add(1);
            let mut spec = w.template.clone();
            spec.node_name = format!("assumed-node-{}", node + 1);
            let v4 = Ipv4Addr::from(0x0A00_0000u32 | (next_ip & 0x00FF_FFFF));
            let v6 = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, (next_ip >> 16) as u16, next_ip as u16);
            out.pods.push(Pod {
                meta: ObjectMeta {
                    name: format!("{}-assumed-{}", w.meta.name, j + 1),
                    namespace: w.meta.namespace.clone(),
                    labels: w.template_labels.clone(),
                    owner_references: vec![OwnerReference {
                        kind: w.kind.as_str().to_string(),
                        name: w.meta.name.clone(),
                        uid: w.meta.uid.clone(),
                        controller: true,
                    }],
                    ..ObjectMeta::default()
                },
                spec,
                phase: PodPhase::Running,
                ready: true,
                pod_ips: vec![IpAddr::V4(v4), IpAddr::V6(v6)],
            });
        }
    }
    (out, AssumedShape { nodes: n, zones })
}
