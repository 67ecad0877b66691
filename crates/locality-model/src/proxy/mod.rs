//! kube-proxy model: endpoints per service port, `CategorizeEndpoints`, and verdicts.
//!
//! - [`endpoint`]: what kube-proxy reads from EndpointSlices and Services;
//! - [`duplicates`]: which copy of an address found in several slices it keeps, by version;
//! - [`topology`]: `CategorizeEndpoints` (cluster and local sets, hints, fallback);
//! - [`winkernel`]: the same on Windows nodes (HNS load balancers), inferred;
//! - [`verdict`]: deliver / drop / reject / not-proxied per source and destination and mode.

pub mod duplicates;
pub mod endpoint;
pub mod topology;
pub mod verdict;
pub mod winkernel;

pub use endpoint::{NotProxiedReason, PortEndpoints, ProxyEndpoint, ServicePortInfo, endpoints_for_port};
pub use topology::{
    CategorizeIndex, CategorizedEndpoints, CategorySignature, HintDecision, ProxyNode, TopologyMode,
    categorize_endpoints,
};
pub use verdict::{
    Confidence, Destination, Fallback, ProxyMode, Reason, Route, RouteQuery, Source, TraceStep, VerdictKind,
    route,
};
