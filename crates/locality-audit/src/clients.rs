//! Who is a **client**: the one definition shared by `audit` (client nodes, LOC004's pod
//! counts, the HTML report's nodes) and `simulate` (its CLIENTS column and the share of
//! client traffic a change lost).
//!
//! A pod is a client of the cluster's Services when it is bound to a node
//! (`spec.nodeName` set), has not finished (phase neither `Succeeded` nor `Failed`), and
//! is not part of the data plane itself: kube-proxy's pods in `kube-system` (label
//! `k8s-app=kube-proxy` as kubeadm and most distributions set it, or owned by a DaemonSet
//! whose name starts with `kube-proxy`) program the rules, and the CNI's node agents
//! ([`CNI_AGENTS`]: `aws-node`, `calico-node`, `cilium`, …) run the pod network; they do
//! not call Services through them. hostNetwork pods count: `internalTrafficPolicy` governs traffic a node
//! sends to a ClusterIP too.
//!
//! A pod is a client **of a given Service** when it is a client and the Service does not
//! select it: a Service's own backends (the pods of its DaemonSet, say) are what is
//! called, not who calls. Clients in every namespace count.

use std::collections::{BTreeMap, HashMap};

use locality_model::objects::{ClusterState, Pod, PodPhase, Service};

use locality_model::selector::service_selects;

/// The namespace kube-proxy runs in.
const KUBE_SYSTEM: &str = "kube-system";

/// True when `pod` is one of kube-proxy's pods (see the module documentation).
pub fn is_kube_proxy_pod(pod: &Pod) -> bool {
    pod.meta.namespace == KUBE_SYSTEM
        && (pod.meta.labels.get("k8s-app").is_some_and(|v| v == "kube-proxy")
            || pod
                .meta
                .owner_references
                .iter()
                .any(|o| o.kind == "DaemonSet" && o.name.starts_with("kube-proxy")))
}

/// The DaemonSets of the CNIs' node agents, by the names their manifests give them (EKS's
/// VPC CNI, Calico, Canal, Cilium, Flannel, kube-router, Weave Net, Antrea, kind's kindnet,
/// OVN-Kubernetes, Multus).
pub const CNI_AGENTS: [&str; 12] = [
    "aws-node",
    "calico-node",
    "canal",
    "cilium",
    "cilium-envoy",
    "kube-flannel-ds",
    "kube-router",
    "weave-net",
    "antrea-agent",
    "kindnet",
    "ovnkube-node",
    "kube-multus-ds",
];

/// True when `pod` is one of the CNI's node agents: owned by a DaemonSet named as one of
/// [`CNI_AGENTS`] (in any namespace: Calico runs in `calico-system`, Flannel in
/// `kube-flannel`).
pub fn is_cni_agent_pod(pod: &Pod) -> bool {
    pod.meta
        .owner_references
        .iter()
        .any(|o| o.controller && o.kind == "DaemonSet" && CNI_AGENTS.contains(&o.name.as_str()))
}

/// True when `pod` is a client of the cluster's Services (see the module documentation).
pub fn is_client_pod(pod: &Pod) -> bool {
    !pod.spec.node_name.is_empty()
        && !matches!(pod.phase, PodPhase::Succeeded | PodPhase::Failed)
        && !is_kube_proxy_pod(pod)
        && !is_cni_agent_pod(pod)
}

/// True when `pod` is a client of `service`: a client the Service does not select.
pub fn is_client_of(pod: &Pod, service: &Service) -> bool {
    is_client_pod(pod)
        && !(pod.meta.namespace == service.meta.namespace
            && service
                .selector
                .as_ref()
                .is_some_and(|s| !s.is_empty() && service_selects(s, &pod.meta.labels)))
}

/// Client pods per node name, over the whole state.
pub fn clients_per_node(state: &ClusterState) -> HashMap<&str, usize> {
    let mut out: HashMap<&str, usize> = HashMap::new();
    for pod in state.pods.iter().filter(|p| is_client_pod(p)) {
        *out.entry(pod.spec.node_name.as_str()).or_default() += 1;
    }
    out
}

/// Client pods of `service` per node name (nodes without one are absent), sorted by name.
pub fn service_clients_per_node(state: &ClusterState, service: &Service) -> BTreeMap<String, usize> {
    service_clients_per_node_among(&state.pods, service)
}

/// [`service_clients_per_node`] over `pods` (for a caller that keeps its pods elsewhere than
/// in a [`ClusterState`], e.g. a simulation's store, without copying them).
pub fn service_clients_per_node_among<'p>(
    pods: impl IntoIterator<Item = &'p Pod>,
    service: &Service,
) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for pod in pods.into_iter().filter(|p| is_client_of(p, service)) {
        *out.entry(pod.spec.node_name.clone()).or_default() += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use locality_model::objects::{ObjectMeta, OwnerReference};

    fn pod(ns: &str, name: &str, node: &str, labels: &[(&str, &str)]) -> Pod {
        Pod {
            meta: ObjectMeta {
                name: name.into(),
                namespace: ns.into(),
                labels: labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..ObjectMeta::default()
            },
            spec: locality_model::objects::PodSpec {
                node_name: node.into(),
                ..Default::default()
            },
            phase: PodPhase::Running,
            ready: true,
            ..Default::default()
        }
    }

    #[test]
    fn kube_proxy_backends_and_finished_pods_are_not_clients() {
        let mut proxy_by_owner = pod("kube-system", "kube-proxy-x", "n1", &[]);
        proxy_by_owner.meta.owner_references.push(OwnerReference {
            kind: "DaemonSet".into(),
            name: "kube-proxy-nftables".into(),
            ..Default::default()
        });
        let mut done = pod("default", "job", "n1", &[]);
        done.phase = PodPhase::Succeeded;
        let state = ClusterState {
            pods: vec![
                pod("kube-system", "kube-proxy-a", "n1", &[("k8s-app", "kube-proxy")]),
                proxy_by_owner,
                done,
                pod("monitoring", "agent-a", "n1", &[("app", "agent")]),
                pod("monitoring", "agent-b", "n2", &[("app", "agent")]),
                pod("default", "web", "n1", &[("app", "agent")]),
                pod("kube-system", "coredns", "n2", &[("k8s-app", "kube-dns")]),
                pod("default", "pending", "", &[]),
            ],
            ..ClusterState::default()
        };
        let per_node = clients_per_node(&state);
        assert_eq!(per_node.get("n1"), Some(&2), "{per_node:?}");
        assert_eq!(per_node.get("n2"), Some(&2), "{per_node:?}");
        let svc = Service {
            meta: ObjectMeta {
                name: "agent".into(),
                namespace: "monitoring".into(),
                ..ObjectMeta::default()
            },
            selector: Some([("app".to_string(), "agent".to_string())].into_iter().collect()),
            ..Service::default()
        };
        // The agent's own pods are not its clients; a pod of another namespace with the
        // same label is.
        let of_svc = service_clients_per_node(&state, &svc);
        assert_eq!(
            of_svc,
            BTreeMap::from([("n1".to_string(), 1), ("n2".to_string(), 1)])
        );
    }
}
