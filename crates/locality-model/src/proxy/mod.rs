//! kube-proxy model: endpoints per service port, `CategorizeEndpoints`, and verdicts.
//!
//! - [`endpoint`]: what kube-proxy reads from EndpointSlices and Services;
//! - [`duplicates`]: which copy of an address found in several slices it keeps, by version;
//! - [`topology`]: `CategorizeEndpoints` (cluster and local sets, hints, fallback);
//! - [`winkernel`]: the same on Windows nodes (HNS load balancers), inferred;
//! - [`verdict`]: deliver / drop / reject / not-proxied per source and destination and mode;
//! - [`firewall`]: `loadBalancerSourceRanges` in front of load balancer VIPs;
//! - [`affinity`]: `sessionAffinity: ClientIP` (one endpoint per client address);
//! - [`confidence`]: how sure an answer is, and the missing facts that lowered it.

pub mod affinity;
mod codes;
pub mod confidence;
pub mod duplicates;
pub mod endpoint;
mod endpointslicecache;
pub mod firewall;
mod route;
mod rule_text;
mod source_ranges;
pub mod topology;
pub mod verdict;
pub mod winkernel;

pub use endpoint::{NotProxiedReason, ProxyEndpoint, ServicePortInfo};
pub use endpointslicecache::{PortEndpoints, endpoints_for_port};
pub use topology::{
    CategorizeIndex, CategorizedEndpoints, CategorySignature, HintDecision, ProxyNode, TopologyMode,
    categorize_endpoints,
};
pub use verdict::{
    Assessment, Confidence, Destination, Fallback, MissingFact, MissingFacts, ProxyMode, Reason, Route,
    RouteQuery, Source, TraceStep, VerdictKind, route,
};
