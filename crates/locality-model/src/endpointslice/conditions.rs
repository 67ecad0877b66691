//! From a Pod to an EndpointSlice endpoint: inclusion, conditions, topology fields and ports.
//!
//! Mirrors `k8s.io/endpointslice` `utils.go` (`podToEndpoint`, `getEndpointAddresses`,
//! `getEndpointPorts`, `FindPort`), `util/controller_utils.go` (`ShouldPodBeInEndpoints`,
//! `ShouldSetHostname`) and the node lookup of `reconciler.go` `reconcileByAddressType`.

use std::fmt;

use crate::objects::{
    Endpoint, EndpointConditions, EndpointPort, IpFamily, Node, Pod, PodPhase, Service, ServicePort,
    TargetPort,
};

use super::NodeLookup;

/// Why the controller model left a pod out of a Service's EndpointSlices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// The pod is terminal (`Succeeded` or `Failed`): `ShouldPodBeInEndpoints` is false.
    Terminal(PodPhase),
    /// The pod has no `status.podIPs`: `ShouldPodBeInEndpoints` is false.
    NoPodIp,
    /// `spec.nodeName` names no known node and the Service does not set
    /// `publishNotReadyAddresses` (upstream skips the pod and requeues the Service).
    NodeNotFound {
        /// The pod's `spec.nodeName` (may be empty).
        node: String,
    },
    /// The pod has no IP of this family, so it yields no endpoint in that family's slices.
    NoAddressForFamily(IpFamily),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Terminal(phase) => write!(f, "pod is terminal (phase {phase:?})"),
            SkipReason::NoPodIp => f.write_str("pod has no IP"),
            SkipReason::NodeNotFound { node } => write!(f, "Node {node} Not Found"),
            SkipReason::NoAddressForFamily(fam) => write!(f, "pod has no {} address", fam.as_str()),
        }
    }
}

/// True when the pod belongs in endpoints at all: not terminal and with an IP.
///
/// Mirrors `util/controller_utils.go` `ShouldPodBeInEndpoints(pod, includeTerminating=true)`
/// (terminating pods are included; the EndpointSlice controller always passes `true`).
pub fn should_pod_be_in_endpoints(pod: &Pod) -> bool {
    pod_exclusion(pod).is_none()
}

/// The reason [`should_pod_be_in_endpoints`] is false, if it is.
pub fn pod_exclusion(pod: &Pod) -> Option<SkipReason> {
    match pod.phase {
        PodPhase::Succeeded | PodPhase::Failed => Some(SkipReason::Terminal(pod.phase)),
        _ if pod.pod_ips.is_empty() => Some(SkipReason::NoPodIp),
        _ => None,
    }
}

/// The node a pod runs on, with the controller's rule for missing nodes.
///
/// Mirrors `reconciler.go` `reconcileByAddressType`: `nodeLister.Get(pod.Spec.NodeName)`;
/// when the node is not found the pod is skipped (and the Service requeued) unless the
/// Service sets `publishNotReadyAddresses`, in which case it is included with no node (so
/// no zone). A pod with an empty `nodeName` is looked up as `""` and therefore not found.
pub fn node_for_pod<'n, L: NodeLookup + ?Sized>(
    pod: &Pod,
    service: &Service,
    nodes: &'n L,
) -> Result<Option<&'n Node>, SkipReason> {
    match nodes.node(&pod.spec.node_name) {
        Some(node) => Ok(Some(node)),
        None if service.publish_not_ready_addresses => Ok(None),
        None => Err(SkipReason::NodeNotFound {
            node: pod.spec.node_name.clone(),
        }),
    }
}

/// The endpoint the controller writes for `pod` in the slices of `family`, or `None` when the
/// pod has no IP of that family (upstream only inserts endpoints with addresses).
///
/// Mirrors `utils.go` `podToEndpoint` and `getEndpointAddresses`:
/// - `addresses`: the pod IPs of that family, in `status.podIPs` order (one in practice);
/// - `serving` = pod Ready, `terminating` = deletionTimestamp set,
///   `ready` = `publishNotReadyAddresses || (serving && !terminating)`; all three are always
///   written (`Some`);
/// - `nodeName` when the pod's `spec.nodeName` is non-empty; `zone` from the node's
///   `topology.kubernetes.io/zone` label when the node is known and the label non-empty;
/// - `hostname` per `ShouldSetHostname` (hostname set, subdomain equals the Service name, same
///   namespace); `targetRef` is the Pod. No hints (they are added by the hint heuristics).
pub fn pod_to_endpoint(
    pod: &Pod,
    node: Option<&Node>,
    service: &Service,
    family: IpFamily,
) -> Option<Endpoint> {
    let addresses: Vec<_> = pod
        .pod_ips
        .iter()
        .copied()
        .filter(|ip| IpFamily::of(ip) == family)
        .collect();
    if addresses.is_empty() {
        return None;
    }
    let serving = pod.ready;
    let terminating = pod.meta.deletion_timestamp.is_some();
    let ready = service.publish_not_ready_addresses || (serving && !terminating);
    let node_name = (!pod.spec.node_name.is_empty()).then(|| pod.spec.node_name.clone());
    let zone = node.and_then(Node::zone).map(str::to_string);
    Some(Endpoint {
        addresses,
        conditions: EndpointConditions {
            ready: Some(ready),
            serving: Some(serving),
            terminating: Some(terminating),
        },
        node_name,
        zone,
        hints: None,
        target_ref: Some((
            "Pod".to_string(),
            pod.meta.namespace.clone(),
            pod.meta.name.clone(),
        )),
        hostname: should_set_hostname(pod, service).then(|| pod.spec.hostname.clone()),
    })
}

/// Mirrors `util/controller_utils.go` `ShouldSetHostname`.
pub fn should_set_hostname(pod: &Pod, service: &Service) -> bool {
    !pod.spec.hostname.is_empty()
        && pod.spec.subdomain == service.meta.name
        && service.meta.namespace == pod.meta.namespace
}

/// The container port a Service port sends to on this pod, `None` when it cannot be resolved.
///
/// Mirrors `utils.go` `FindPort`: a numeric `targetPort` is used as is (a `0` — unset in a
/// manifest — defaults to `port`, as API defaulting does); a named one is the first container
/// port with that name **and** the Service port's protocol.
pub fn find_port(pod: &Pod, port: &ServicePort) -> Option<u16> {
    match &port.target_port {
        TargetPort::Number(0) => Some(port.port),
        TargetPort::Number(n) => Some(*n),
        TargetPort::Name(name) => pod
            .spec
            .ports
            .iter()
            .find(|cp| &cp.name == name && cp.protocol == port.protocol)
            .map(|cp| cp.container_port),
    }
}

/// The resolved target port of every Service port, in `spec.ports` order (`None` where
/// [`find_port`] fails). Pods with equal keys share a port mapping, hence slices.
pub fn port_mapping_key(service: &Service, pod: &Pod) -> Vec<Option<u16>> {
    service.ports.iter().map(|p| find_port(pod, p)).collect()
}

/// The `ports` of the slice a pod's endpoint goes to.
///
/// Mirrors `utils.go` `getEndpointPorts`: one entry per Service port whose target port
/// resolves on this pod (unresolvable ports are skipped), with the Service port's name and
/// protocol and the resolved number.
pub fn endpoint_ports(service: &Service, pod: &Pod) -> Vec<EndpointPort> {
    ports_from_key(service, &port_mapping_key(service, pod))
}

/// The slice `ports` for a [`port_mapping_key`].
pub(crate) fn ports_from_key(service: &Service, key: &[Option<u16>]) -> Vec<EndpointPort> {
    service
        .ports
        .iter()
        .zip(key)
        .filter_map(|(sp, resolved)| {
            resolved.map(|n| EndpointPort {
                name: Some(sp.name.clone()),
                port: Some(n),
                protocol: Some(sp.protocol),
            })
        })
        .collect()
}
