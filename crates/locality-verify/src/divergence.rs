//! What the model predicts on a node whose data plane has a catalogue divergence
//! (`locality_model::dataplane::catalogue::Effect`): the same question asked of the model with
//! the inputs the divergence changes (the Service's policy as the data plane reads it, the
//! endpoints it would keep, the source it treats the connection as), or the answer the
//! divergence gives where the model's answer is the one it replaces. Pure.
//!
//! `diagnose` explains a failure by a catalogue entry only when the tries match this
//! prediction on every failing node, so a new entry explains every case its effect reaches,
//! not a list of case IDs.

use locality_model::dataplane::catalogue::Effect;
use locality_model::endpointslice::trafficdist::{PREFER_SAME_NODE, PREFER_SAME_ZONE};
use locality_model::matrix::MatrixConfig;
use locality_model::objects::{ClusterState, EndpointSlice, Service, ServiceType, TrafficPolicy};
use locality_model::proxy::{Destination, Source};

use crate::expect::{Expected, Query, for_route};

/// The model's verdict for `q` if `q.node`'s data plane has `effect`; `None` when the
/// divergence does not reach this connection (the Service, the destination or the node's
/// endpoints are not the ones it changes).
pub fn for_route_with(
    state: &ClusterState,
    config: MatrixConfig,
    q: Query<'_>,
    effect: Effect,
) -> Option<Expected> {
    let svc = state
        .services
        .iter()
        .find(|s| s.meta.namespace == q.namespace && s.meta.name == q.service)?;
    if !effect.applies_to(svc) {
        return None;
    }
    let (base, _) = for_route(state, config.clone(), q);
    let diverged = match effect {
        // Where the model drops (Local, nothing local), the data plane serves from every
        // ready endpoint: the Service as if its policy were Cluster.
        Effect::ItpLocalIgnored => {
            if base != Expected::Drop || q.destination.is_external() {
                return None;
            }
            let state = with_service(state, svc, |s| {
                s.internal_traffic_policy = Some(TrafficPolicy::Cluster)
            });
            for_route(&state, config, q).0
        }
        // A cluster-IP connection is treated as under `internalTrafficPolicy: Local`.
        Effect::EtpLocalRestrictsClusterIp => {
            if q.destination != Destination::ClusterIp || svc.itp() == TrafficPolicy::Local {
                return None;
            }
            let state = with_service(state, svc, |s| {
                s.internal_traffic_policy = Some(TrafficPolicy::Local)
            });
            for_route(&state, config, q).0
        }
        // Every ready endpoint hinted, none for the node's zone: no backend at all.
        Effect::ZoneHintsNoFallback => {
            let zone = node_zone(state, q.node)?;
            let mut ready = ready_endpoints(state, svc, Some(q.port)).peekable();
            ready.peek()?;
            let mut hinted = true;
            let mut for_zone = false;
            for e in ready {
                match &e.hints {
                    Some(h) if !h.for_zones.is_empty() => for_zone |= h.for_zones.iter().any(|z| z == zone),
                    _ => hinted = false,
                }
            }
            if !hinted || for_zone {
                return None;
            }
            Expected::Reject
        }
        // Committed to the node (or zone) when any endpoint of the Service is there, whatever
        // its port: a port without a ready endpoint there has no backend.
        Effect::PreferSameCommitsToIncompatibleLocal => {
            let zone = node_zone(state, q.node);
            let near = |e: &locality_model::objects::Endpoint| match svc.traffic_distribution.as_deref() {
                Some(PREFER_SAME_NODE) => e.node_name.as_deref() == Some(q.node),
                Some(PREFER_SAME_ZONE) => zone.is_some() && e.zone.as_deref() == zone,
                _ => false,
            };
            let any_near = ready_endpoints(state, svc, None).any(near);
            let port_near = ready_endpoints(state, svc, Some(q.port)).any(near);
            if !any_near || port_near {
                return None;
            }
            Expected::Reject
        }
        // Topology ignored: the data plane reads no hints of the Service's EndpointSlices
        // (kube-proxy itself reads them whatever the Service says).
        Effect::TopologyIgnoredWithoutSetting => {
            let mut state = state.clone();
            for s in state.endpoint_slices.iter_mut().filter(|s| of_service(s, svc)) {
                for e in &mut s.endpoints {
                    e.hints = None;
                }
            }
            for_route(&state, config, q).0
        }
        // In-cluster traffic to the load-balancer IP treated as external.
        Effect::EtpLocalAppliedToInClusterLbIp => {
            if q.destination != Destination::LoadBalancer || q.source == Source::External {
                return None;
            }
            for_route(
                state,
                config,
                Query {
                    source: Source::External,
                    ..q
                },
            )
            .0
        }
        // External traffic with ETP Local never uses the node's serving-terminating endpoints.
        Effect::EtpLocalNoTerminatingFallback => {
            if !q.destination.is_external() || svc.type_ == ServiceType::ClusterIP {
                return None;
            }
            let (_, reason) = for_route(state, config, q);
            if reason != locality_model::proxy::Reason::LocalServingTerminating.as_str() {
                return None;
            }
            Expected::Drop
        }
    };
    Some(diverged)
}

/// `state` with one Service changed.
fn with_service(state: &ClusterState, svc: &Service, change: impl FnOnce(&mut Service)) -> ClusterState {
    let mut state = state.clone();
    if let Some(s) = state
        .services
        .iter_mut()
        .find(|s| s.meta.namespace == svc.meta.namespace && s.meta.name == svc.meta.name)
    {
        change(s);
    }
    state
}

fn of_service(slice: &EndpointSlice, svc: &Service) -> bool {
    slice.meta.namespace == svc.meta.namespace && slice.service_name() == Some(svc.meta.name.as_str())
}

fn node_zone<'s>(state: &'s ClusterState, node: &str) -> Option<&'s str> {
    state.nodes.iter().find(|n| n.meta.name == node)?.zone()
}

/// The ready endpoints of the Service's slices that carry `port` (any port: `None`).
fn ready_endpoints<'s>(
    state: &'s ClusterState,
    svc: &'s Service,
    port: Option<&'s str>,
) -> impl Iterator<Item = &'s locality_model::objects::Endpoint> {
    state
        .endpoint_slices
        .iter()
        .filter(move |s| of_service(s, svc))
        .filter(move |s| port.is_none_or(|p| s.ports.iter().any(|sp| sp.name.as_deref().unwrap_or("") == p)))
        .flat_map(|s| s.endpoints.iter())
        .filter(|e| e.conditions.ready != Some(false))
}
