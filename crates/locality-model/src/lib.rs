//! `locality-model`: a pure model of what Kubernetes does with a Service's traffic on each node.
//!
//! It mirrors two upstream components, without I/O and without async:
//! - the EndpointSlice controller (`k8s.io/endpointslice`): endpoint conditions from pods,
//!   zone, and hints for `trafficDistribution` and `topology-mode: Auto` ([`endpointslice`]);
//! - kube-proxy (`pkg/proxy/topology.go` `CategorizeEndpoints` and the iptables, nftables and
//!   ipvs proxiers): the endpoint sets per node and the verdict per traffic source and
//!   destination ([`proxy`]).
//!
//! [`matrix`] puts them together for a whole [`objects::ClusterState`]. Everything else in
//! `locality` (ingest, audit, explain, verify, the simulated cluster) calls this crate; it is
//! the independent oracle.

pub mod admission;
pub mod dataplane;
pub mod endpointslice;
pub mod explain;
pub mod featuregate;
pub mod features;
pub mod matrix;
pub mod objects;
pub mod proxy;
pub mod selector;
pub mod version;
