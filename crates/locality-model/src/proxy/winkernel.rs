//! kube-proxy on Windows nodes (`winkernel`, HNS load balancers), inferred.
//!
//! `pkg/proxy/winkernel/proxier.go` selects endpoints like the Linux proxiers (it shares
//! `CategorizeEndpoints`), but programs HNS load balancers instead of rules. Since 1.27
//! (upstream PR #114407, cherry-picked to 1.24.10) it uses only local endpoints for a Service
//! with `internalTrafficPolicy: Local` and creates **no** ClusterIP load balancer on a node
//! without one: traffic to the ClusterIP is then not serviced there. What the host does with
//! that traffic (silently dropped or refused) is not established upstream; the model answers
//! a drop, with confidence `inferred`. Before 1.27 winkernel did not honour the Local policy
//! at all. Every Windows route is `inferred`: no upstream test pins winkernel's behaviour.
//!
//! winkernel does not implement `loadBalancerSourceRanges` (upstream issues #107019 and
//! #120033: no check of the ranges in `syncProxyRules`), so no source is filtered on a
//! Windows node. `sessionAffinity: ClientIP` becomes HNS session affinity only where the
//! Windows version supports it (otherwise kube-proxy logs that it is not supported).

use super::codes::{Reason, VerdictKind};
use super::confidence::Confidence;
use super::endpoint::ServicePortInfo;
use super::route::{Route, RouteQuery, TraceStep};
use super::topology::CategorizedEndpoints;

/// The route on a Windows node: the Linux endpoint selection, the HNS consequence.
pub fn route(info: &ServicePortInfo, cat: &CategorizedEndpoints<'_>, total: usize, q: RouteQuery) -> Route {
    route_with(info, cat, total, q, true)
}

/// [`route`], with or without the trace (`explain`, as in [`super::verdict::route_with`]).
pub(crate) fn route_with(
    info: &ServicePortInfo,
    cat: &CategorizedEndpoints<'_>,
    total: usize,
    q: RouteQuery,
    explain: bool,
) -> Route {
    let mut r = super::verdict::route_with(info, cat, total, q, false, explain);
    // The Linux rule text does not apply.
    r.trace.retain(|t| t.step != "rule");
    r.confidence = Confidence::Inferred;
    if matches!(r.verdict, VerdictKind::Drop | VerdictKind::Reject) {
        r.verdict = VerdictKind::Drop;
        if r.reason == Reason::NoEndpoints {
            r.reason = Reason::NoUsableEndpoints;
        }
        r.trace.push(TraceStep::new(
            "winkernel",
            "Windows node (kube-proxy winkernel): no HNS load balancer is created for this Service without usable endpoints (since 1.27 also without local ones under internalTrafficPolicy: Local, upstream PR #114407); the traffic is not serviced — a timeout is assumed, not established upstream",
        ));
    } else {
        r.trace.push(TraceStep::new(
            "winkernel",
            "Windows node (kube-proxy winkernel): HNS load balancers over the same endpoints as on Linux; not pinned by an upstream test (before 1.27 winkernel ignored internalTrafficPolicy: Local)",
        ));
    }
    if r.session_affinity.is_some() {
        r.trace.push(TraceStep::new(
            "winkernel",
            "sessionAffinity: ClientIP is HNS session affinity only where this Windows version supports it; otherwise connections are spread as without it",
        ));
    }
    if q.destination == super::verdict::Destination::LoadBalancer
        && !info.load_balancer_source_ranges.is_empty()
    {
        r.trace.push(TraceStep::new(
            "winkernel",
            "winkernel does not apply loadBalancerSourceRanges (upstream issues #107019, #120033): no source is filtered on this node",
        ));
    }
    if !explain {
        r.trace.clear();
    }
    r
}
