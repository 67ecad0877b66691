//! A route: the verdict for one (service port, family, node, source, destination), with its
//! reason, confidence and trace, and the [`RouteQuery`] that asks for it. Computed by
//! [`super::verdict::route`]; adjusted by [`super::firewall`] and [`super::winkernel`].

use serde::Serialize;

use super::codes::{Destination, ProxyMode, Reason, Source, VerdictKind};
use super::confidence::{Assessment, Confidence, MissingFact, MissingFacts};
use super::topology::TopologyMode;

/// The fallback a route used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Fallback {
    /// Serving-terminating endpoints were used because no ready one qualified.
    #[serde(rename = "servingTerminating")]
    ServingTerminating,
}

/// One step of the reasoning that produced a verdict, in order (printed by `explain`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    /// Stable step code (kebab-case).
    pub step: &'static str,
    /// Plain-words description with the data that decided it.
    pub detail: String,
}

impl TraceStep {
    pub(crate) fn new(step: &'static str, detail: impl Into<String>) -> Self {
        TraceStep {
            step,
            detail: detail.into(),
        }
    }
}

/// The verdict for one (service port, family, node, source, destination).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Source.
    pub source: Source,
    /// Destination.
    pub destination: Destination,
    /// Verdict.
    pub verdict: VerdictKind,
    /// Endpoint indices (into the service port's endpoint list) when delivered.
    pub endpoints: Vec<usize>,
    /// Hint mode applied to the endpoints used (`none` for local sets).
    pub topology: TopologyMode,
    /// Fallback used, if any.
    pub fallback: Option<Fallback>,
    /// Whether the client's source address is masqueraded (SNAT to the node).
    pub masquerade: bool,
    /// Why.
    pub reason: Reason,
    /// How sure the model is (capped at `inferred` when `missing` is not empty).
    pub confidence: Confidence,
    /// Facts the verdict depends on that the input does not give.
    pub missing: MissingFacts,
    /// `sessionAffinity: ClientIP` on a delivered route: each client address sticks to one of
    /// `endpoints` for this many seconds after its last new connection, instead of a uniform
    /// spread ([`super::affinity`]).
    pub session_affinity: Option<u32>,
    /// The destination is a load balancer VIP behind `loadBalancerSourceRanges` and the
    /// verdict holds only for clients whose address is inside a range: kube-proxy's firewall
    /// drops the others ([`super::firewall`]).
    pub source_ranges: bool,
    /// How the verdict was reached.
    pub trace: Vec<TraceStep>,
}

impl Route {
    /// Its confidence with the facts that lowered it.
    pub fn assessment(&self) -> Assessment {
        Assessment {
            level: self.confidence,
            missing: self.missing,
        }
    }
    /// Records that the verdict depends on `fact`, which the input does not give.
    pub fn lacking(&mut self, fact: MissingFact) {
        let a = self.assessment().lacking(fact);
        self.confidence = a.level;
        self.missing = a.missing;
    }
}

/// Everything [`super::verdict::route`] needs besides the categorized endpoints.
#[derive(Debug, Clone, Copy)]
pub struct RouteQuery {
    /// Traffic source.
    pub source: Source,
    /// Destination.
    pub destination: Destination,
    /// kube-proxy mode.
    pub mode: ProxyMode,
    /// kube-proxy's node IP of the port's family (`proxier.nodeIP`: the Node's first
    /// InternalIP of that family), when known; decides `loadBalancerSourceRanges` for the
    /// node's own traffic.
    pub node_ip: Option<std::net::IpAddr>,
}
