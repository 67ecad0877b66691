//! Nodes: taints, readiness, zone and OS.

use std::net::IpAddr;

use super::*;

/// A node taint (`spec.taints[]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Taint value (may be empty).
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// A Node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// Metadata (labels carry zone, OS and role).
    pub meta: ObjectMeta,
    /// `status.conditions[type=Ready].status == "True"`; `None` when the condition is absent.
    pub ready: Option<bool>,
    /// `status.allocatable.cpu` in millicores, `None` when absent or unparsable.
    pub allocatable_cpu_millis: Option<u64>,
    /// `status.allocatable.pods`: how many pods the kubelet runs (its `maxPods`), `None` when
    /// absent or unparsable (kubelet's default is 110: [`DEFAULT_MAX_PODS`]).
    pub allocatable_pods: Option<u64>,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// `status.addresses[type=InternalIP]`, in order.
    pub internal_ips: Vec<IpAddr>,
    /// `status.nodeInfo.kubeletVersion` (e.g. `v1.35.1`), if present.
    pub kubelet_version: Option<String>,
}

/// The kubelet's default `maxPods` (`KubeletConfiguration.maxPods`), a Node's
/// `status.allocatable.pods` unless configured otherwise.
pub const DEFAULT_MAX_PODS: u64 = 110;

impl Node {
    /// How many pods the scheduler places on the node: `status.allocatable.pods`, else the
    /// kubelet's default [`DEFAULT_MAX_PODS`].
    pub fn max_pods(&self) -> u64 {
        self.allocatable_pods.unwrap_or(DEFAULT_MAX_PODS)
    }
    /// The node's zone from `topology.kubernetes.io/zone` (`None` when absent or empty).
    pub fn zone(&self) -> Option<&str> {
        self.meta
            .labels
            .get(LABEL_ZONE)
            .map(String::as_str)
            .filter(|z| !z.is_empty())
    }
    /// True for nodes labelled `kubernetes.io/os=windows` (kube-proxy `winkernel`, modelled with
    /// inferred confidence: [`crate::proxy::winkernel`]).
    pub fn is_windows(&self) -> bool {
        self.meta.labels.get(LABEL_OS).is_some_and(|os| os == "windows")
    }
    /// True when the node carries a control-plane (or legacy master) role label.
    pub fn is_control_plane(&self) -> bool {
        self.meta.labels.contains_key(LABEL_CONTROL_PLANE) || self.meta.labels.contains_key(LABEL_MASTER)
    }
}
