//! What [`Matrix::new`] reads per Service: its pods (indexed by label), the slices the
//! mirroring controller writes for a selector-less Service, and its destinations.

use std::collections::HashMap;

use super::*;

/// Whether [`Matrix::new`] reads any Pod of `state`: only to derive the EndpointSlices of a
/// Service with a selector that has none in the input (all of them with `derive`, the
/// `MatrixConfig` field of `--derive`). A selector-less Service's slices come from its
/// Endpoints object or are empty, whatever the pods. A caller that loaded the input without
/// decoding its Pods reads it again when this is true.
pub fn reads_pods(state: &ClusterState, derive: bool) -> bool {
    let observed = slices_by_service(state);
    state.services.iter().any(|svc| {
        svc.selector.is_some()
            && (derive || !observed.contains_key(&(svc.meta.namespace.as_str(), svc.meta.name.as_str())))
    })
}

/// The input's EndpointSlices by the (namespace, name) of the Service they name in their
/// `kubernetes.io/service-name` label.
pub(super) fn slices_by_service(state: &ClusterState) -> HashMap<(&str, &str), Vec<&EndpointSlice>> {
    let mut by: HashMap<(&str, &str), Vec<&EndpointSlice>> = HashMap::new();
    for slice in &state.endpoint_slices {
        if let Some(svc) = slice.service_name() {
            by.entry((slice.meta.namespace.as_str(), svc))
                .or_default()
                .push(slice);
        }
    }
    by
}

/// The slices the mirroring controller writes for `endpoints`, the Endpoints object of the
/// same name as `svc`; `None` when it mirrors nothing ([`mirroring::should_mirror`]: skip-mirror
/// label, leader-election annotation, a Service with a selector, or the Endpoints being
/// deleted). What is worth saying goes to `notes`: why it is not mirrored (except for a
/// selector, where the Endpoints controller owns the object and the slices come from pods),
/// and the addresses left out and the Events recorded.
pub(super) fn mirror_endpoints(
    svc: &Service,
    endpoints: &Endpoints,
    notes: &mut MatrixNotes,
) -> Option<Vec<EndpointSlice>> {
    if mirroring::should_mirror(Some(svc), endpoints) == Err(NotMirrored::ServiceHasSelector) {
        return None;
    }
    let m = mirroring::mirror(svc, endpoints, mirroring::DEFAULT_MAX_ENDPOINTS_PER_SUBSET);
    let note = MirroringNote {
        not_mirrored: m.not_mirrored,
        skipped: m.skipped,
        events: m.events,
    };
    if note != MirroringNote::default() {
        let name = format!("{}/{}", endpoints.meta.namespace, endpoints.meta.name);
        notes.mirroring.push((name, note));
    }
    m.not_mirrored.is_none().then_some(m.slices)
}

/// The destinations a service port has in a family (docs/design.md §4.1: routes for nodePort,
/// loadBalancer and externalIP appear only when the Service has them; hostname-only and
/// `ipMode: Proxy` ingresses go through the NodePort path).
pub(super) fn destinations(info: &ServicePortInfo) -> Vec<Destination> {
    let mut d = vec![Destination::ClusterIp];
    if info.has_node_port {
        d.push(Destination::NodePort);
    }
    if !info.load_balancer_vips.is_empty() {
        d.push(Destination::LoadBalancer);
    }
    if !info.external_ips.is_empty() {
        d.push(Destination::ExternalIp);
    }
    d
}

/// Pods indexed by namespace and label pair, so that selecting a Service's pods costs its
/// smallest posting list rather than every pod.
pub(super) struct PodIndex<'s> {
    by_label: HashMap<(&'s str, &'s str, &'s str), Vec<&'s Pod>>,
}

impl<'s> PodIndex<'s> {
    pub(super) fn new(pods: &'s [Pod]) -> Self {
        let mut by_label: HashMap<(&str, &str, &str), Vec<&Pod>> = HashMap::new();
        for p in pods {
            for (k, v) in &p.meta.labels {
                by_label
                    .entry((p.meta.namespace.as_str(), k.as_str(), v.as_str()))
                    .or_default()
                    .push(p);
            }
        }
        PodIndex { by_label }
    }

    /// Pods selected by the Service's selector in its namespace, in input-independent order.
    pub(super) fn select(&self, svc: &Service) -> Vec<&'s Pod> {
        let Some(selector) = svc.selector.as_ref().filter(|s| !s.is_empty()) else {
            return Vec::new();
        };
        let ns = svc.meta.namespace.as_str();
        let smallest = selector
            .iter()
            .map(|(k, v)| {
                self.by_label
                    .get(&(ns, k.as_str(), v.as_str()))
                    .map_or(&[][..], |v| v.as_slice())
            })
            .min_by_key(|l| l.len())
            .unwrap_or(&[]);
        let mut out: Vec<&Pod> = smallest
            .iter()
            .copied()
            .filter(|p| service_selects(selector, &p.meta.labels))
            .collect();
        out.sort_by(|a, b| a.meta.name.cmp(&b.meta.name));
        out
    }
}
