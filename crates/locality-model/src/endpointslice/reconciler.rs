//! The reconciler: from a Service and its pods to EndpointSlices with hints.
//!
//! Mirrors `k8s.io/endpointslice` `reconciler.go` (`Reconcile`, `reconcileByAddressType`,
//! `reconcileByPortMapping`, `validTrafficDistribution`) and `utils.go` (`newEndpointSlice`,
//! `setEndpointSliceLabels`, `hintsEnabled`) for a fresh sync (no existing slices).

use std::collections::BTreeMap;

use crate::features::ControlPlaneFeatures;
use crate::objects::{
    ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE, AddressType, CONTROLLER_NAME, Endpoint,
    EndpointPort, EndpointSlice, IpFamily, LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, Labels,
    Node, ObjectMeta, OwnerReference, Pod, Service, ServiceType, TargetPort,
};

use super::conditions::{
    SkipReason, node_for_pod, pod_exclusion, pod_to_endpoint, port_mapping_key, ports_from_key,
};
use super::sliceinfo::SliceInfo;
use super::topologycache::{TopologyCache, remove_hints_from_slices};
use super::trafficdist::{PREFER_CLOSE, PREFER_SAME_NODE, PREFER_SAME_ZONE, reconcile_hints};
use super::{ControllerEvent, Derivation, NodeLookup, SkippedPod, address_type_for};

/// Endpoints per slice: the controller's default `--max-endpoints-per-slice`.
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;

/// A pod that becomes an endpoint, with its node (if known).
type Member<'a> = (&'a Pod, Option<&'a Node>);

/// True when the Service asks for `topology-mode: Auto`.
///
/// Mirrors `utils.go` `hintsEnabled`: the deprecated `service.kubernetes.io/topology-aware-hints`
/// key wins whenever it is present, else `service.kubernetes.io/topology-mode`; only the exact
/// values `Auto` and `auto` enable.
pub fn hints_enabled(annotations: &Labels) -> bool {
    let value = annotations
        .get(ANNOTATION_TOPOLOGY_AWARE_HINTS)
        .or_else(|| annotations.get(ANNOTATION_TOPOLOGY_MODE));
    matches!(value.map(String::as_str), Some("Auto" | "auto"))
}

/// True when `spec.trafficDistribution` is set to a value the control plane acts on.
///
/// Mirrors `reconciler.go` `validTrafficDistribution`: PreferClose needs the
/// `ServiceTrafficDistribution` behaviour (always on in current code), PreferSameZone and
/// PreferSameNode need `PreferSameTrafficDistribution`; any other value is treated as unset.
pub fn valid_traffic_distribution(
    traffic_distribution: Option<&str>,
    features: &ControlPlaneFeatures,
) -> bool {
    match traffic_distribution {
        Some(PREFER_CLOSE) => features.service_traffic_distribution,
        Some(PREFER_SAME_ZONE | PREFER_SAME_NODE) => features.prefer_same_traffic_distribution,
        _ => false,
    }
}

/// Runs the hint step of one address type on `info` and returns the events.
///
/// Mirrors the end of `reconciler.go` `reconcileByAddressType`: Auto (topology cache) when the
/// annotation enables it and `features.topology_aware_hints`; otherwise all hints are removed
/// unless `trafficDistribution` is valid (and the annotation does not enable Auto), in which
/// case [`reconcile_hints`] runs. The annotation wins over the field. The "Topology Aware
/// Hints has been disabled" event needs a controller that had populated hints and is never
/// produced here.
pub fn reconcile_slice_hints(
    service: &Service,
    info: &mut SliceInfo,
    address_type: AddressType,
    topology: &TopologyCache,
    features: &ControlPlaneFeatures,
) -> Vec<ControllerEvent> {
    let auto = hints_enabled(&service.meta.annotations);
    let td = service.traffic_distribution.as_deref();
    let use_traffic_distribution = valid_traffic_distribution(td, features) && !auto;
    let mut events = Vec::new();
    if features.topology_aware_hints && auto {
        events = topology.add_hints(info, address_type).events;
    } else if !use_traffic_distribution {
        remove_hints_from_slices(info);
    }
    if use_traffic_distribution {
        reconcile_hints(td, info, features);
    }
    events
}

/// Derives the EndpointSlices the controller writes for `service` on a fresh sync.
///
/// `pods` are the pods the Service's selector picks in its namespace (the caller indexes pods;
/// they are not re-checked here); their order does not matter. `nodes` resolves
/// `spec.nodeName` (see [`NodeLookup`]); `topology` is built once per cluster with
/// [`TopologyCache::from_nodes`].
///
/// - No slices for ExternalName Services, Services without (or with an empty) selector, and
///   Services being deleted (upstream `syncService` / `finalize`).
/// - One group of slices per address type ([`Service::families`]) and per port mapping
///   (resolved target ports, see [`port_mapping_key`](super::conditions::port_mapping_key)),
///   at most [`MAX_ENDPOINTS_PER_SLICE`] endpoints each; a placeholder slice (no endpoints,
///   no ports) when an address type has no endpoint at all.
/// - Endpoints are sorted by address then pod; groups by port mapping. Slice names are
///   `<service>-<ipv4|ipv6>-<n>` (real names are generated, `<service>-<random>`). Slice
///   `ports` follow the Service's port order (upstream sorts them by hash).
/// - Labels: the Service's labels except reserved keys, `kubernetes.io/service-name`,
///   `endpointslice.kubernetes.io/managed-by`, and `service.kubernetes.io/headless` for
///   headless Services; a controller owner reference to the Service.
/// - Then hints per address type ([`reconcile_slice_hints`]).
///
/// Cost: O(p log p) in the Service's own pods, plus O(zones) per allocation step.
pub fn derive_endpoint_slices<L: NodeLookup + ?Sized>(
    service: &Service,
    pods: &[&Pod],
    nodes: &L,
    topology: &TopologyCache,
    features: &ControlPlaneFeatures,
) -> Derivation {
    let mut out = Derivation::default();
    if service.type_ == ServiceType::ExternalName
        || service.selector.as_ref().is_none_or(|s| s.is_empty())
        || service.meta.deletion_timestamp.is_some()
    {
        return out;
    }

    // A canonical pod order makes the result independent of the caller's order.
    let mut sorted: Vec<&Pod> = pods.to_vec();
    sorted.sort_by(|a, b| {
        a.meta
            .name
            .cmp(&b.meta.name)
            .then_with(|| a.pod_ips.cmp(&b.pod_ips))
    });
    sorted.dedup_by(|a, b| std::ptr::eq(*a, *b) || *a == *b);

    // Group the eligible pods by port mapping (upstream: `NewPortMapKey(getEndpointPorts(..))`).
    let all_numeric = service
        .ports
        .iter()
        .all(|p| matches!(p.target_port, TargetPort::Number(_)));
    let no_pod = Pod::default();
    let shared_key = all_numeric.then(|| port_mapping_key(service, &no_pod));
    let mut groups: BTreeMap<Vec<Option<u16>>, Vec<Member<'_>>> = BTreeMap::new();
    for pod in sorted {
        if let Some(reason) = pod_exclusion(pod) {
            out.skipped.push(SkippedPod {
                pod: pod.meta.name.clone(),
                reason,
            });
            continue;
        }
        let node = match node_for_pod(pod, service, nodes) {
            Ok(node) => node,
            Err(reason) => {
                out.skipped.push(SkippedPod {
                    pod: pod.meta.name.clone(),
                    reason,
                });
                continue;
            }
        };
        let key = match &shared_key {
            Some(k) => k.clone(),
            None => port_mapping_key(service, pod),
        };
        groups.entry(key).or_default().push((pod, node));
    }

    for family in service.families() {
        let address_type = address_type_for(family);
        let tag = match family {
            IpFamily::IPv4 => "ipv4",
            IpFamily::IPv6 => "ipv6",
        };
        let mut info = SliceInfo::default();
        for (key, members) in &groups {
            let mut endpoints: Vec<Endpoint> = Vec::with_capacity(members.len());
            for (pod, node) in members {
                match pod_to_endpoint(pod, *node, service, family) {
                    Some(ep) => endpoints.push(ep),
                    None => out.skipped.push(SkippedPod {
                        pod: pod.meta.name.clone(),
                        reason: SkipReason::NoAddressForFamily(family),
                    }),
                }
            }
            if endpoints.is_empty() {
                continue;
            }
            endpoints.sort_by(|a, b| {
                a.addresses
                    .cmp(&b.addresses)
                    .then_with(|| a.target_ref.cmp(&b.target_ref))
            });
            let ports = ports_from_key(service, key);
            let mut rest = endpoints.into_iter();
            loop {
                let chunk: Vec<Endpoint> = rest.by_ref().take(MAX_ENDPOINTS_PER_SLICE).collect();
                if chunk.is_empty() {
                    break;
                }
                let name = format!("{}-{tag}-{}", service.meta.name, info.to_create.len());
                info.to_create.push(new_endpoint_slice(
                    service,
                    address_type,
                    name,
                    ports.clone(),
                    chunk,
                ));
            }
        }
        if info.to_create.is_empty() {
            // Upstream: "When no endpoint slices would usually exist, we need to add a placeholder."
            let name = format!("{}-{tag}-0", service.meta.name);
            info.to_create.push(new_endpoint_slice(
                service,
                address_type,
                name,
                Vec::new(),
                Vec::new(),
            ));
        }
        out.events.extend(reconcile_slice_hints(
            service,
            &mut info,
            address_type,
            topology,
            features,
        ));
        out.slices.extend(info.into_slices());
    }
    out
}

/// Re-runs the controller's hint step on observed slices of `service`, as its next sync would
/// if no endpoint changed: the slices labelled for this Service (same namespace, managed by the
/// controller) of each of the Service's address types are treated as unchanged, then
/// [`reconcile_slice_hints`] runs. Returns the resulting slices (per address type: rewritten
/// ones first, then untouched ones) and the events. Compare with [`hint_counts_by_zone`]
/// (LOC014).
///
/// [`hint_counts_by_zone`]: super::hint_counts_by_zone
pub fn recompute_hints(
    service: &Service,
    observed: &[EndpointSlice],
    topology: &TopologyCache,
    features: &ControlPlaneFeatures,
) -> (Vec<EndpointSlice>, Vec<ControllerEvent>) {
    let mut slices = Vec::new();
    let mut events = Vec::new();
    for family in service.families() {
        let address_type = address_type_for(family);
        let mut info = SliceInfo {
            unchanged: observed
                .iter()
                .filter(|s| {
                    s.address_type == address_type
                        && s.meta.namespace == service.meta.namespace
                        && s.service_name() == Some(service.meta.name.as_str())
                        && s.is_controller_managed()
                })
                .cloned()
                .collect(),
            ..SliceInfo::default()
        };
        events.extend(reconcile_slice_hints(
            service,
            &mut info,
            address_type,
            topology,
            features,
        ));
        slices.extend(info.into_slices());
    }
    (slices, events)
}

fn is_reserved_label(key: &str) -> bool {
    key == LABEL_SERVICE_NAME || key == LABEL_MANAGED_BY || key == LABEL_HEADLESS
}

/// A new controller-managed slice of `service`: its labels (the Service's, except reserved
/// keys, plus `kubernetes.io/service-name`, `endpointslice.kubernetes.io/managed-by` and the
/// headless label) and a controller owner reference to it. Mirrors `utils.go`
/// `newEndpointSlice` and `setEndpointSliceLabels`.
pub fn new_endpoint_slice(
    service: &Service,
    address_type: AddressType,
    name: String,
    ports: Vec<EndpointPort>,
    endpoints: Vec<Endpoint>,
) -> EndpointSlice {
    let mut labels: Labels = service
        .meta
        .labels
        .iter()
        .filter(|(k, _)| !is_reserved_label(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if service.headless {
        labels.insert(LABEL_HEADLESS.to_string(), String::new());
    }
    labels.insert(LABEL_SERVICE_NAME.to_string(), service.meta.name.clone());
    labels.insert(LABEL_MANAGED_BY.to_string(), CONTROLLER_NAME.to_string());
    EndpointSlice {
        meta: ObjectMeta {
            name,
            namespace: service.meta.namespace.clone(),
            labels,
            owner_references: vec![OwnerReference {
                kind: "Service".to_string(),
                name: service.meta.name.clone(),
                uid: service.meta.uid.clone(),
                controller: true,
            }],
            ..ObjectMeta::default()
        },
        address_type,
        endpoints,
        ports,
    }
}
