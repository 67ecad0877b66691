//! The names people read in the matrix's table: an endpoint as `pod@node`, a route's hint
//! mode in words (`zone hints (topology-mode Auto)` when the hints come from the
//! annotation, not from `trafficDistribution`).

use locality_model::proxy::ProxyEndpoint;

use crate::matrix::{RouteDoc, ServicePortDoc};

/// `pod@node` (the slice entry's `targetRef` name and `nodeName`), `pod@?` without a node
/// name, else the address (`IP:port`) when the slice names no pod.
pub fn endpoint(ep: &ProxyEndpoint) -> String {
    match (&ep.target, &ep.node_name) {
        (Some(pod), Some(node)) => format!("{pod}@{node}"),
        (Some(pod), None) => format!("{pod}@?"),
        (None, _) => ep.to_string(),
    }
}

/// The hint mode a route used, `None` when none: the zone hints of a Service whose
/// `service.kubernetes.io/topology-mode` annotation asks for them (the EndpointSlice
/// controller then ignores `trafficDistribution`) are `zone hints (topology-mode Auto)`,
/// the others the `trafficDistribution` value they follow.
pub fn topology(doc: &ServicePortDoc<'_>, r: &RouteDoc) -> Option<String> {
    match (r.topology, doc.topology_mode) {
        ("none", _) => None,
        ("PreferSameZone", Some(mode)) if !mode.eq_ignore_ascii_case("disabled") => {
            Some(format!("zone hints (topology-mode {mode})"))
        }
        (t, _) => Some(t.to_string()),
    }
}
