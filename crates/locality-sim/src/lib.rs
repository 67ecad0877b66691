//! `locality-sim`: the **simulated** cluster.
//!
//! A deterministic discrete-event engine on a virtual clock ([`Engine`]) with:
//! - a store of objects keyed by (kind, namespace, name), with resourceVersions and a
//!   replayable event log (`store`), through which every simulated controller acts, so that
//!   an API server can sit on top;
//! - simulated controllers, run by one pass over the store's new events (`controllers`):
//!   garbage collector (`gc`), Deployment/ReplicaSet (`workloads`) and DaemonSet
//!   (`daemonsets`) with RollingUpdate, StatefulSet (`statefulsets`, its decisions in
//!   `statefulsets::state`) with ordered pods, partition and OnDelete, a scheduler (`scheduler`, its cache and the filters of
//!   `fit`), and the EndpointSlice controller (`endpointslices`), which is the model's
//!   `endpointslice::derive_endpoint_slices`; the simulated API's writes with admission
//!   (`api`);
//! - a simulated kubelet per node (`kubelet`): pod IPs, container start, readiness probes,
//!   graceful termination with a shutdown delay; it can report NotReady or stop reporting
//!   ([`Engine::set_kubelet_state`]);
//! - the node lifecycle, taint-eviction and pod GC controllers (`nodelifecycle`, run by
//!   `nodemonitor` and `tainteviction`): Ready
//!   Unknown after the grace period, not-ready / unreachable NoExecute taints, pods marked not
//!   ready and evicted, pods of deleted Nodes force-deleted;
//! - a simulated cloud load balancer (`cloudlb`): ingress IPs for LoadBalancer Services from
//!   TEST-NET-3, and outside connections to them sent to a (health-checked) node;
//! - a simulated kube-proxy per node (`kubeproxy`, run by `proxies`), an implementation **independent of the
//!   model's `proxy` module**, so that comparing the two is a real cross-check;
//! - simulated traffic (`traffic`): [`Engine::connect`] resolves a connection by traversing
//!   the rule table of the node that first processes it (the client's, a NodePort's, or the one
//!   the load balancer picked);
//! - topologies (`topology`): `three-zones`, `four-nodes`, `telemetry`, and YAML files;
//! - kinds it stores without simulating ([`Kind::STORED`]: ServiceAccounts, Jobs, the RBAC
//!   kinds and PodDisruptionBudgets), kept as JSON ([`StoredObject`]) so an API server can
//!   serve them: no Job controller runs a Job and no authorizer reads a Role;
//! - voluntary disruptions (`disruption`): the eviction subresource honouring
//!   PodDisruptionBudgets, and `kubectl drain`.
//!
//! Everything here is simulated and says so; same seed, same run.

mod api;
mod availability;
pub mod builders;
mod cloudlb;
mod controllers;
mod daemonsets;
mod defaults;
mod disruption;
mod endpointslices;
mod engine;
mod fasthash;
mod fit;
mod gc;
mod informer;
mod kubelet;
mod kubeproxy;
mod namespaces;
mod nodelifecycle;
mod nodemonitor;
mod objects;
mod owners;
mod proxies;
mod rng;
mod scheduler;
mod scheduler_cache;
mod seed;
mod snapshot;
mod statefulsets;
mod store;
mod tainteviction;
mod tasks;
mod templates;
pub mod time;
mod topology;
mod traffic;
pub mod whatif;
mod workloads;

pub use cloudlb::LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS;
pub use defaults::with_api_defaults;
pub use disruption::{
    DELETE_POLL_MS, DisruptionStatus, Drain, EVICTION_RETRY_MS, EvictionRefused, stored_budget,
};
pub use engine::{Engine, SimConfig, SimError};
pub use kubeproxy::{
    ChainKind, ProfileError, RuleTable, RuleTarget, ServicePortRules, SimEndpoint, SimKubeProxy,
};
pub use kubeproxy::{DataPlaneProfile, Fault, PlaneProfile, ProxyMode};
pub use nodelifecycle::KubeletState;
pub use nodelifecycle::{
    DEFAULT_TOLERATION_SECONDS, NODE_MONITOR_PERIOD_MS, ReadyConditionTimes, TAINT_NOT_READY,
    TAINT_UNREACHABLE, admit_default_toleration_seconds, default_node_monitor_grace_period_ms,
};
pub use objects::{
    Kind, Object, ObjectKey, PodBehaviour, ProbeHandler, ReadinessProbe, SimPod, SimWorkload, StoredObject,
};
pub use rng::SplitMix64;
pub use seed::{Assumption, SeedOptions, Seeded, seed};
pub use statefulsets::StatefulSetStatus;
pub use store::{EventType, Store, StoreError, Stored, WatchEvent};
pub use templates::{LABEL_CONTROLLER_REVISION_HASH, LABEL_POD_TEMPLATE_HASH, template_hash};
pub use topology::Topology;
pub use topology::{BUILTIN as BUILTIN_TOPOLOGIES, NodeSpec, TopologyError};
pub use traffic::{Client, ConnectError, Outcome, Target};

/// Renders a node's simulated kube-proxy rule table (`locality sim rules NODE`), after running
/// `topology` for `settle_ms` of virtual time.
pub fn rules_for_topology(
    topology: &Topology,
    config: SimConfig,
    node: &str,
    settle_ms: u64,
) -> Result<String, SimError> {
    let mut engine = Engine::from_topology(topology, config)?;
    engine.run_until(settle_ms);
    engine
        .rules_text(node)
        .map_err(|_| SimError::UnknownNode(node.to_string()))
}
