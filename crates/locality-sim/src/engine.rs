//! The simulated cluster's discrete-event engine: a virtual clock, a task queue, the store, and
//! the simulated controllers, kubelets and kube-proxies that act through the store.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;

use locality_model::featuregate::FeatureGates;
use locality_model::version::KubeVersion;

use crate::fasthash::{FastMap, FastSet};
use crate::informer::ProxyInformer;
use crate::kubeproxy::{DataPlaneProfile, SimKubeProxy};
use crate::objects::{Object, ObjectKey};
use crate::rng::SplitMix64;
use crate::store::{Store, StoreError, WatchEvent};
use crate::tasks::{Task, TaskQueue};
use crate::time::Millis;
use compact_str::CompactString;

/// The shared informer forgets versions no kube-proxy reads after every this many events.
pub(crate) const PRUNE_EVERY: usize = 4096;

/// Parameters of a simulated run.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Version of the simulated API server and controller manager.
    pub kube_version: KubeVersion,
    /// Default version of the simulated kube-proxies.
    pub kube_proxy_version: KubeVersion,
    /// Delay from a change in the store to its programming by a conformant kube-proxy (ms).
    pub proxy_sync_delay_ms: Millis,
    /// kube-proxy's `--iptables-min-sync-period` / `--nftables-min-sync-period`: at most one
    /// sync per this many ms (changes in between are batched).
    pub proxy_min_sync_period_ms: Millis,
    /// Delay from a change to the simulated controllers reacting (ms).
    pub controller_delay_ms: Millis,
    /// Random extra container start time, uniform in `0..=start_jitter_ms`.
    pub start_jitter_ms: Millis,
    /// Delay from a container's exit to the kubelet removing the deleted pod (ms).
    pub kubelet_cleanup_delay_ms: Millis,
    /// Give pods an IPv6 address too (dual-stack pod network).
    pub dual_stack: bool,
    /// Store events kept for watches (etcd's compaction): once the log holds twice this many,
    /// it is cut back to the newest `event_history`, and a watch from an older
    /// resourceVersion gets `410 Gone`. 0 keeps everything.
    pub event_history: usize,
    /// kube-controller-manager's `--node-monitor-grace-period` (ms): how long a node's kubelet
    /// may stay silent before the simulated node lifecycle controller sets its Ready condition
    /// to Unknown. `None`: the default of `kube_version` (see
    /// [`crate::default_node_monitor_grace_period_ms`]).
    pub node_monitor_grace_period_ms: Option<Millis>,
    /// Run a simulated kube-proxy on every node (default). Off, nothing is programmed: the
    /// store, the controllers and the kubelets behave exactly as with them (kube-proxies only
    /// read the store), but [`Engine::kube_proxy`] tables stay empty and simulated connections
    /// through Services fail. `locality simulate`, whose what-if runs (`crate::whatif`) ask
    /// the model rather than the kube-proxies, turns them off: every EndpointSlice change
    /// wakes every node's kube-proxy, work nothing there reads.
    pub kube_proxies: bool,
    /// `--feature-gates` overrides, per component, as the simulated components honour them:
    /// the EndpointSlice controller (kube-controller-manager's gates, through
    /// `ControlPlaneFeatures::applying`) and every simulated kube-proxy (kube-proxy's, through
    /// `ProxyFeatures::applying`). The simulated API server keeps every field whatever its
    /// gates (upstream `dropServiceDisabledFields` is not simulated). Check them with
    /// [`SimConfig::check_feature_gates`] first: overrides a component would refuse have no
    /// effect here.
    pub feature_gates: FeatureGates,
}

impl SimConfig {
    /// Refuses the overrides the simulated components' releases would refuse (a gate that
    /// does not exist, is locked or was removed at `kube_version` for the control plane, at
    /// `kube_proxy_version` for kube-proxy), as `locality matrix` does for the model.
    pub fn check_feature_gates(&self) -> Result<(), locality_model::featuregate::GateError> {
        locality_model::features::ControlPlaneFeatures::with_gates(self.kube_version, &self.feature_gates)?;
        locality_model::features::ProxyFeatures::with_gates(self.kube_proxy_version, &self.feature_gates)?;
        Ok(())
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            kube_version: KubeVersion::new(1, 35),
            kube_proxy_version: KubeVersion::new(1, 35),
            proxy_sync_delay_ms: 1_000,
            proxy_min_sync_period_ms: 1_000,
            controller_delay_ms: 10,
            start_jitter_ms: 250,
            kubelet_cleanup_delay_ms: 200,
            dual_stack: false,
            event_history: 100_000,
            node_monitor_grace_period_ms: None,
            kube_proxies: true,
            feature_gates: FeatureGates::default(),
        }
    }
}

/// Errors of the simulated cluster.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The simulated API refused the request.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An unknown node was named.
    #[error("simulated cluster has no node {0:?}")]
    UnknownNode(String),
    /// A topology could not be built.
    #[error("simulated topology: {0}")]
    Topology(String),
}

/// Node-local runtime state of a simulated pod (the kubelet's view, not in the store).
#[derive(Debug, Clone, Default)]
pub(crate) struct PodRuntime {
    pub uid: String,
    pub node: String,
    pub started: bool,
    /// When the container started running.
    pub started_at: Millis,
    pub running: bool,
    pub sigterm: Option<Millis>,
    pub probe_failures: u32,
    pub ips: Vec<IpAddr>,
    /// The grace period a delete request gave (`DeleteOptions.gracePeriodSeconds`), if any.
    pub deletion_grace: Option<u64>,
    /// The kubelet's own view of the pod's readiness (its prober's last result); the store's
    /// `ready` can differ while the node lifecycle controller has marked the pod not ready.
    pub ready: bool,
    /// When the pending readiness probe of the current probe chain is due (a restarted
    /// kubelet starts a new chain; tasks of an older one are dropped).
    pub probe_due: Option<Millis>,
}

/// A set of host numbers `0..=255` (the last octet of a node's pod addresses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HostSet([u64; 4]);

impl HostSet {
    pub fn contains(&self, host: u32) -> bool {
        host < 256 && self.0[(host / 64) as usize] & (1 << (host % 64)) != 0
    }
    pub fn insert(&mut self, host: u32) {
        if host < 256 {
            self.0[(host / 64) as usize] |= 1 << (host % 64);
        }
    }
    pub fn remove(&mut self, host: u32) {
        if host < 256 {
            self.0[(host / 64) as usize] &= !(1 << (host % 64));
        }
    }
}

/// Per-node runtime: pod CIDRs and IP allocation, and the node's simulated kube-proxy.
#[derive(Debug, Clone)]
pub(crate) struct NodeRuntime {
    pub index: u32,
    pub next_host: u32,
    /// The host numbers (the last octet) in use.
    pub used: HostSet,
    pub proxy: SimKubeProxy,
}

/// The simulated cluster.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(crate) now: Millis,
    pub(crate) config: SimConfig,
    pub(crate) rng: SplitMix64,
    pub(crate) store: Store,
    pub(crate) tasks: TaskQueue,
    pub(crate) controller_cursor: u64,
    pub(crate) reconcile_pending: bool,
    pub(crate) proxy_cursor: u64,
    /// Service, EndpointSlice and Node events: the kube-proxies' shared, versioned informers.
    pub(crate) informer: ProxyInformer,
    /// Nodes whose kube-proxy has no sync pending (woken by the next event they watch).
    pub(crate) idle_proxies: BTreeSet<String>,
    /// Informer length at the last pruning.
    pub(crate) pruned: usize,
    /// Hashed, not ordered: every pod event looks its node up ([`Engine::node_names`] sorts).
    pub(crate) nodes: FastMap<CompactString, NodeRuntime>,
    pub(crate) node_count: u32,
    pub(crate) pods: FastMap<ObjectKey, PodRuntime>,
    pub(crate) pod_by_ip: FastMap<IpAddr, ObjectKey>,
    /// Pod addresses whose pod is gone (a what-if's rules may still send to them).
    pub(crate) retired_ips: FastSet<IpAddr>,
    /// Bumped whenever what `ip_serving` answers may change (a pod runtime added or removed,
    /// a process started or stopped): a what-if re-checks its routes only then.
    pub(crate) serving_generation: u64,
    /// While a what-if runs: the pod addresses whose `ip_serving` answer may have changed
    /// since the what-if last looked (taken by it at every step; `None`: not kept).
    pub(crate) serving_log: Option<Vec<IpAddr>>,
    pub(crate) next_cluster_ip: u32,
    pub(crate) next_node_port: u16,
    pub(crate) profiles: BTreeMap<String, DataPlaneProfile>,
    pub(crate) proxy_versions: BTreeMap<String, KubeVersion>,
    pub(crate) unschedulable: BTreeMap<ObjectKey, String>,
    pub(crate) endpoint_cache: crate::kubeproxy::EndpointCache,
    /// The simulated EndpointSlice controller's placement of endpoints in slices.
    pub(crate) slice_tracker: crate::endpointslices::SliceTracker,
    /// The simulated DaemonSet controller's per-node view of each DaemonSet.
    pub(crate) daemon_states: BTreeMap<ObjectKey, crate::daemonsets::state::DaemonState>,
    /// When each pod was first seen Ready (for the `minReadySeconds` of DaemonSets and
    /// Deployments).
    pub(crate) ready_since: crate::availability::ReadySince,
    /// The instant a sync of each Deployment is scheduled for (a pod's `minReadySeconds`).
    pub(crate) deployment_wakes: BTreeMap<ObjectKey, Millis>,
    /// The instant each ReplicaSet that made a full burst of pods may make the next
    /// (`workloads::BURST_REPLICAS`).
    pub(crate) replica_set_wakes: BTreeMap<ObjectKey, Millis>,
    /// The simulated StatefulSet controller's view of each StatefulSet.
    pub(crate) stateful_sets: BTreeMap<ObjectKey, crate::statefulsets::state::StatefulState>,
    /// The simulated scheduler's cache.
    pub(crate) scheduler: crate::scheduler_cache::SchedulerCache,
    /// Active pods per controller owner (the ReplicaSet controller's count).
    pub(crate) owners: crate::owners::OwnerIndex,
    /// The simulated node lifecycle, taint-eviction and pod GC controllers' state, and each
    /// node's simulated kubelet state.
    pub(crate) lifecycle: crate::nodelifecycle::NodeLifecycle,
    /// The simulated cloud load-balancer controller's allocations.
    pub(crate) cloud_lb: crate::cloudlb::pool::CloudLoadBalancers,
    /// The drains started, by node (`disruption`).
    pub(crate) drains: BTreeMap<String, crate::disruption::drain::Drain>,
}

impl Engine {
    /// Sizes the engine's per-pod maps and the store's event log for about `pods` pods, as a
    /// seed knows before it creates them: growing a map of 100,000 entries step by step
    /// copies it and faults in fresh pages at each doubling.
    pub(crate) fn expect_pods(&mut self, pods: usize) {
        self.pods.reserve(pods);
        self.pod_by_ip.reserve(pods);
        self.ready_since.reserve(pods);
        self.owners.reserve(pods);
        self.lifecycle.reserve(pods);
        self.store.reserve(pods);
    }

    /// An empty simulated cluster with the namespaces every cluster has (`default`,
    /// `kube-system`, `kube-public`, `kube-node-lease`).
    pub fn new(config: SimConfig) -> Self {
        let mut e = Engine {
            now: 0,
            rng: SplitMix64::new(config.seed),
            config,
            store: Store::new(),
            tasks: Default::default(),
            controller_cursor: 0,
            reconcile_pending: false,
            proxy_cursor: 0,
            informer: ProxyInformer::default(),
            idle_proxies: BTreeSet::new(),
            pruned: 0,
            nodes: FastMap::default(),
            node_count: 0,
            pods: Default::default(),
            pod_by_ip: Default::default(),
            retired_ips: Default::default(),
            serving_generation: 0,
            serving_log: None,
            next_cluster_ip: 10,
            next_node_port: 30000,
            profiles: BTreeMap::new(),
            proxy_versions: BTreeMap::new(),
            unschedulable: BTreeMap::new(),
            endpoint_cache: Default::default(),
            slice_tracker: Default::default(),
            daemon_states: BTreeMap::new(),
            ready_since: Default::default(),
            deployment_wakes: BTreeMap::new(),
            replica_set_wakes: BTreeMap::new(),
            stateful_sets: BTreeMap::new(),
            scheduler: Default::default(),
            owners: Default::default(),
            lifecycle: Default::default(),
            cloud_lb: Default::default(),
            drains: BTreeMap::new(),
        };
        for ns in ["default", "kube-node-lease", "kube-public", "kube-system"] {
            let _ = e.store.create(crate::builders::namespace(ns), 0);
        }
        e.controller_cursor = e.store.resource_version();
        e.proxy_cursor = e.store.resource_version();
        e.lifecycle.cursor = e.store.resource_version();
        e.owners.cursor = e.store.resource_version();
        e
    }

    /// The store's object quota (`Store::set_quota`): past it, creates are refused as etcd
    /// refuses writes past `--quota-backend-bytes`. `None` (the default): no quota.
    pub fn set_object_quota(&mut self, max_objects: Option<usize>) {
        self.store.set_quota(max_objects);
    }

    /// Current virtual time (ms since the simulated epoch).
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The simulated API's store (read-only: write through [`Engine::create`] and friends).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// An object by key.
    pub fn get(&self, key: &ObjectKey) -> Option<&Object> {
        self.store.get(key).map(|s| &*s.object)
    }

    /// Why a pending pod is not scheduled, if the simulated scheduler gave up on it.
    pub fn unschedulable_reason(&self, key: &ObjectKey) -> Option<&str> {
        self.unschedulable.get(key).map(String::as_str)
    }

    /// Names of the simulated nodes with a kubelet and kube-proxy.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        let mut names: Vec<&str> = self.nodes.keys().map(CompactString::as_str).collect();
        names.sort_unstable();
        names.into_iter()
    }

    // ----- driver -----

    /// Virtual time of the next task, if any.
    pub fn next_event_time(&self) -> Option<Millis> {
        self.tasks.next_instant()
    }

    /// Runs the next task; false when nothing is scheduled.
    pub fn step(&mut self) -> bool {
        let Some((t, task)) = self.tasks.pop() else {
            return false;
        };
        self.now = self.now.max(t);
        self.run_task(task);
        self.kick();
        true
    }

    /// Runs every task due up to `t`, as fast as possible, then sets the clock to `t`.
    pub fn run_until(&mut self, t: Millis) {
        while self.next_event_time().is_some_and(|n| n <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// Runs for `d` ms of virtual time.
    pub fn run_for(&mut self, d: Millis) {
        self.run_until(self.now + d);
    }

    pub(crate) fn schedule(&mut self, at: Millis, task: Task) {
        self.tasks.push(at.max(self.now), task);
    }

    fn run_task(&mut self, task: Task) {
        match task {
            Task::Reconcile => self.reconcile(),
            Task::ContainerStarted(key, uid) => self.container_started(&key, &uid),
            Task::Probe(key, uid) => self.probe(&key, &uid),
            Task::ProcessExit(key, uid) => self.process_exit(&key, &uid),
            Task::RemovePod(key, uid) => self.remove_pod(&key, &uid),
            Task::ProxySync(node) => self.proxy_sync(&node),
            Task::NodeMonitor(node) => self.node_monitor(&node),
            Task::TaintEviction(key, uid, token) => self.taint_evict(&key, &uid, token),
            Task::PodGcOrphans(node) => self.pod_gc_orphans(&node),
            Task::Drain(node) => self.drain_pass(&node),
            Task::SyncStatefulSet(key) => self.sync_stateful_set(&key),
            Task::SyncDaemonSet(key) => self.sync_daemon_set(&key),
            Task::SyncDeployment(key) => self.sync_deployment(&key),
            Task::SyncReplicaSet(key) => self.sync_replica_set(&key),
        }
    }

    /// After any change: wake the controllers, and feed kube-proxies the events they watch.
    pub(crate) fn kick(&mut self) {
        let rv = self.store.resource_version();
        if rv > self.controller_cursor && !self.reconcile_pending {
            self.reconcile_pending = true;
            self.schedule(self.now + self.config.controller_delay_ms, Task::Reconcile);
        }
        if rv > self.proxy_cursor && !self.config.kube_proxies {
            self.proxy_cursor = rv;
            self.compact_events();
        } else if rv > self.proxy_cursor {
            self.feed_proxies(rv);
        }
    }

    /// Cuts the store's event log back to the newest `event_history` events once it holds
    /// twice as many, never past what the simulated controllers have read.
    pub(crate) fn compact_events(&mut self) {
        let history = self.config.event_history;
        if history == 0 || self.store.events().len() <= 2 * history {
            return;
        }
        let newest_dropped = self.store.resource_version().saturating_sub(history as u64);
        let read = self
            .controller_cursor
            .min(self.proxy_cursor)
            .min(self.scheduler.cursor)
            .min(self.lifecycle.cursor);
        self.store.compact(newest_dropped.min(read));
    }

    /// Renders the store's event log, one line per event (`rv time TYPE kind/ns/name`), for
    /// comparisons (same seed, same log).
    pub fn event_log_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        for e in self.store.events() {
            let _ = writeln!(
                s,
                "{} {} {} {} {:?}",
                e.resource_version,
                e.time,
                e.event_type.as_str(),
                e.key,
                digest(&e.object)
            );
        }
        s
    }

    /// The store's events (for a watch replay).
    pub fn events_since(&self, resource_version: u64) -> Result<&[WatchEvent], StoreError> {
        self.store.events_since(resource_version)
    }

    pub(crate) fn stored_pod(&self, key: &ObjectKey) -> Option<(&crate::objects::SimPod, Arc<Object>)> {
        let s = self.store.get(key)?;
        let obj = s.object.clone();
        s.object.as_pod().map(|p| (p, obj))
    }
}

/// A short content digest of an object for the event log (pod IPs, readiness, node).
fn digest(o: &Object) -> String {
    match o {
        Object::Pod(p) => format!(
            "node={} ips={:?} ready={} phase={:?} deleting={}",
            p.pod.spec.node_name,
            p.pod.pod_ips,
            p.pod.ready,
            p.pod.phase,
            p.pod.meta.deletion_timestamp.is_some()
        ),
        Object::EndpointSlice(s) => s
            .endpoints
            .iter()
            .map(|e| {
                format!(
                    "{:?}/{:?}{:?}{:?}",
                    e.addresses.first(),
                    e.conditions.ready,
                    e.conditions.serving,
                    e.conditions.terminating
                )
            })
            .collect::<Vec<_>>()
            .join(","),
        Object::Service(s) => format!(
            "{:?} {:?}",
            s.cluster_ips,
            s.ports.iter().map(|p| p.node_port).collect::<Vec<_>>()
        ),
        Object::Workload(w) => format!("replicas={:?}", w.workload.replicas),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::HostSet;

    #[test]
    fn a_host_set_holds_each_host_number_on_its_own() {
        let mut s = HostSet::default();
        for h in [0, 1, 63, 64, 127, 128, 254, 255] {
            assert!(!s.contains(h));
            s.insert(h);
            assert!(s.contains(h), "{h}");
        }
        for h in [2, 62, 65, 129, 253] {
            assert!(!s.contains(h), "{h} was never inserted");
        }
        s.remove(64);
        assert!(!s.contains(64));
        assert!(s.contains(63) && s.contains(127));
        // Past the last octet: never held.
        s.insert(256);
        assert!(!s.contains(256));
    }
}
