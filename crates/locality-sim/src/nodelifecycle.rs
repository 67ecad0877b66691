//! The simulated node lifecycle: each node's simulated kubelet state, and the controllers that
//! react when a kubelet stops reporting or a Node goes away.
//!
//! - The **node lifecycle controller** (k8s.io/kubernetes
//!   `pkg/controller/nodelifecycle/node_lifecycle_controller.go`): a health pass per node,
//!   driven by timers and Node events rather than a scan of every node every
//!   `--node-monitor-period` (5 s). A pass runs on the first monitor tick (a multiple of 5 s of
//!   virtual time) after something changed. `tryUpdateNodeHealth`: a kubelet silent for longer
//!   than `--node-monitor-grace-period` gets its Ready condition set to Unknown (`ready: None`
//!   in the model). `processTaintBaseEviction` on the condition the pass *read*: False → the
//!   taint `node.kubernetes.io/not-ready:NoExecute`, Unknown → `node.kubernetes.io/unreachable:
//!   NoExecute` (each swapped for the other), True → both removed (`markNodeAsReachable`); so
//!   the unreachable taint follows the Unknown condition one pass (5 s) later, as upstream.
//!   `MarkPodsNotReady` when a pass moves the condition away from True (the controller's own
//!   Unknown), and, as `processPod`, for every added or updated pod on a node whose condition the
//!   controller last saw not True. The matching NoSchedule taints (`doNoScheduleTaintingPass`)
//!   are applied by the simulated scheduler (`controllers::node_fits`), not written.
//! - The **taint-eviction controller** (`pkg/controller/tainteviction/taint_eviction.go`
//!   `processPodOnNode`): for each pod on a node with NoExecute taints (when the taints change,
//!   when the pod is bound there, when its tolerations change), a taint no toleration matches
//!   evicts it at once; otherwise it is deleted after the shortest `tolerationSeconds` of the
//!   tolerations used (the first matching one per taint, `GetMatchingTolerations`; zero or
//!   negative: at once), or never when none of them has `tolerationSeconds`
//!   (`getMinTolerationTime`). An eviction already scheduled keeps its time. Pods get their
//!   tolerations of `not-ready` and `unreachable` from the `DefaultTolerationSeconds` admission
//!   ([`admit_default_toleration_seconds`], run by [`Engine::create`] and [`Engine::update`]):
//!   300 s each unless they tolerate the taint already (DaemonSet pods tolerate both forever).
//!   An eviction is a graceful delete: a stopped kubelet cannot finish it, so the pod stays
//!   terminating while the ReplicaSet controller replaces it elsewhere.
//! - The **pod GC**'s orphan pass (`pkg/controller/podgc/gc_controller.go` `gcOrphaned`): pods
//!   bound to a node that no longer exists are marked Failed and force-deleted once the node has
//!   been missing for `quarantineTime` (40 s), on the first `gcCheckPeriod` (20 s) pass that
//!   notices it, then 40 s later.
//!
//! A **stopped** simulated kubelet posts no status and acts on nothing: containers keep
//! running and serving, but it starts no container, runs no probe, sends no SIGTERM and
//! finishes no deletion. When it is back it resyncs its pods: readiness comes back with the next
//! probe (its prober restarts from Failure, upstream `pkg/kubelet/prober/worker.go`), at once for
//! pods without a readiness probe. The node's simulated kube-proxy is left as it is: a node
//! whose kubelet is down is in practice often partitioned, but the simulation keeps its
//! kube-proxy syncing and its data plane working, so what changes is what the control plane
//! does (readiness, taints, evictions), not the node's own rules.

use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

use locality_model::objects::{Node, PodPhase, PodSpec, Taint, Toleration};
use locality_model::version::KubeVersion;

use crate::engine::{Engine, SimError, Task};
use crate::objects::{Kind, Object, ObjectKey};
use crate::time::Millis;

/// The taint for a Ready condition False (upstream `v1.TaintNodeNotReady`).
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// The taint for a Ready condition Unknown (upstream `v1.TaintNodeUnreachable`).
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// kube-controller-manager's `--node-monitor-period` default (5 s): the node lifecycle
/// controller's passes fall on multiples of it.
pub const NODE_MONITOR_PERIOD_MS: Millis = 5_000;
/// The `tolerationSeconds` the `DefaultTolerationSeconds` admission plugin gives pods for the
/// not-ready and unreachable NoExecute taints (`--default-not-ready-toleration-seconds`,
/// `--default-unreachable-toleration-seconds`, both 300).
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;
/// The pod GC's `gcCheckPeriod` (20 s).
pub const POD_GC_CHECK_PERIOD_MS: Millis = 20_000;
/// The pod GC's `quarantineTime` (40 s) before it deletes the pods of a missing node.
pub const POD_GC_QUARANTINE_MS: Millis = 40_000;

/// kube-controller-manager's default `--node-monitor-grace-period` for a version: 50 s from
/// 1.32 on (kubernetes/kubernetes#126287, "increased to 50s (earlier 40s)"), 40 s before.
pub fn default_node_monitor_grace_period_ms(version: KubeVersion) -> Millis {
    if version >= KubeVersion::new(1, 32) {
        50_000
    } else {
        40_000
    }
}

/// True for the taints the node lifecycle controller manages for the Ready condition.
pub fn is_condition_taint(key: &str) -> bool {
    key == TAINT_NOT_READY || key == TAINT_UNREACHABLE
}

/// The API server's `DefaultTolerationSeconds` admission for a pod (k8s.io/kubernetes
/// `plugin/pkg/admission/defaulttolerationseconds/admission.go` `Admit`, on create and update):
/// a pod with no toleration of [`TAINT_NOT_READY`] (or [`TAINT_UNREACHABLE`]) for `NoExecute`
/// (a toleration with that key or an empty key, and effect `NoExecute` or empty) gets
/// `{key, operator: Exists, effect: NoExecute, tolerationSeconds: 300}` appended. Idempotent.
pub fn admit_default_toleration_seconds(spec: &mut PodSpec) {
    let covers = |t: &Toleration, key: &str| {
        (t.key == key || t.key.is_empty()) && (t.effect == "NoExecute" || t.effect.is_empty())
    };
    for key in [TAINT_NOT_READY, TAINT_UNREACHABLE] {
        if !spec.tolerations.iter().any(|t| covers(t, key)) {
            spec.tolerations.push(Toleration {
                key: key.to_string(),
                operator: "Exists".into(),
                value: String::new(),
                effect: "NoExecute".into(),
                toleration_seconds: Some(DEFAULT_TOLERATION_SECONDS),
            });
        }
    }
}

/// When a node's Ready condition was last posted and last changed (upstream `NodeCondition`
/// `lastHeartbeatTime` and `lastTransitionTime`), as [`Engine::node_ready_condition_times`]
/// gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadyConditionTimes {
    /// When the simulated kubelet last posted the condition (it posts when its state changes,
    /// and its last post is the moment it stops); `None`: not since the Node was created.
    pub last_heartbeat: Option<Millis>,
    /// When the condition's status last changed (posted by the kubelet, or set to Unknown by
    /// the node lifecycle controller); `None`: not since the Node was created.
    pub last_transition: Option<Millis>,
}

/// What a node's simulated kubelet does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KubeletState {
    /// Posts node status with Ready=True and runs its pods (the default).
    #[default]
    Ready,
    /// Posts node status with Ready=False (a container runtime or network plugin that is not
    /// ready) and keeps running its pods.
    NotReady,
    /// Posts nothing and acts on nothing (a crashed or stopped kubelet, a node cut off from the
    /// API server); its containers keep running.
    Stopped,
}

impl KubeletState {
    /// `ready`, `not-ready` or `stopped`.
    pub fn as_str(self) -> &'static str {
        match self {
            KubeletState::Ready => "ready",
            KubeletState::NotReady => "not-ready",
            KubeletState::Stopped => "stopped",
        }
    }
}

/// The node lifecycle controller's view of one node, and its simulated kubelet's state.
#[derive(Debug, Clone)]
struct NodeHealth {
    kubelet: KubeletState,
    /// When the kubelet last posted status (for a stopped kubelet: when it stopped).
    heartbeat: Millis,
    /// The Ready condition after the controller's last pass (its `nodeHealthMap`).
    condition: Option<bool>,
    /// The stored Ready condition last seen, to notice changes.
    seen: Option<bool>,
    /// When the next health pass is due.
    monitor_at: Option<Millis>,
    /// The NoExecute taints the taint-eviction controller last acted on.
    no_execute: Vec<Taint>,
    /// The Ready condition's heartbeat and transition times.
    times: ReadyConditionTimes,
}

impl Default for NodeHealth {
    fn default() -> Self {
        NodeHealth {
            kubelet: KubeletState::Ready,
            heartbeat: 0,
            condition: Some(true),
            seen: Some(true),
            monitor_at: None,
            no_execute: Vec::new(),
            times: ReadyConditionTimes::default(),
        }
    }
}

/// A pending taint eviction.
#[derive(Debug, Clone)]
struct Eviction {
    uid: String,
    token: u64,
}

/// State of the simulated node lifecycle, taint-eviction and pod GC controllers: per node its
/// health, and the pods bound to each node (an index fed by store events, like upstream's pod
/// informer indexed by `spec.nodeName`).
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeLifecycle {
    /// Store events up to this resourceVersion are in the index.
    pub cursor: u64,
    health: HashMap<String, NodeHealth>,
    pods_on: HashMap<String, BTreeSet<ObjectKey>>,
    node_of: HashMap<ObjectKey, String>,
    evictions: HashMap<ObjectKey, Eviction>,
    /// A digest of each bound pod's tolerations, to notice changes (upstream `PodUpdated`
    /// processes a pod again when its tolerations change).
    tolerations_of: HashMap<ObjectKey, u64>,
    next_token: u64,
    /// Nodes with a pod GC orphan pass pending.
    gc_pending: BTreeSet<String>,
}

impl NodeLifecycle {
    /// Forgets the kubelet state and health of a deleted node.
    pub(crate) fn forget_kubelet(&mut self, node: &str) {
        self.health.remove(node);
    }

    fn pods_of(&self, node: &str) -> Vec<ObjectKey> {
        self.pods_on
            .get(node)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn file(&mut self, key: &ObjectKey, node: Option<&str>) -> bool {
        if self.node_of.get(key).map(String::as_str) == node {
            return false;
        }
        if let Some(old) = self.node_of.remove(key)
            && let Some(set) = self.pods_on.get_mut(&old)
        {
            set.remove(key);
            if set.is_empty() {
                self.pods_on.remove(&old);
            }
        }
        if let Some(n) = node {
            self.node_of.insert(key.clone(), n.to_string());
            self.pods_on.entry(n.to_string()).or_default().insert(key.clone());
            return true;
        }
        false
    }
}

/// The first multiple of `period` strictly after `t`.
fn tick_after(t: Millis, period: Millis) -> Millis {
    (t / period + 1) * period
}

fn tolerations_digest(tolerations: &[Toleration]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in tolerations {
        (&t.key, &t.operator, &t.value, &t.effect, t.toleration_seconds).hash(&mut h);
    }
    h.finish()
}

fn no_execute(node: &Node) -> Vec<Taint> {
    node.taints
        .iter()
        .filter(|t| t.effect == "NoExecute")
        .cloned()
        .collect()
}

/// Adds the NoExecute taint `add` (if any) and removes the NoExecute taints `remove`
/// (upstream `SwapNodeControllerTaint`).
fn swap_taints(taints: &mut Vec<Taint>, add: Option<&str>, remove: &[&str]) {
    taints.retain(|t| !(t.effect == "NoExecute" && remove.contains(&t.key.as_str())));
    if let Some(key) = add
        && !taints.iter().any(|t| t.effect == "NoExecute" && t.key == key)
    {
        taints.push(Taint {
            key: key.to_string(),
            value: String::new(),
            effect: "NoExecute".into(),
        });
    }
}

impl Engine {
    /// kube-controller-manager's `--node-monitor-grace-period` in this run (ms):
    /// [`crate::SimConfig::node_monitor_grace_period_ms`], else the default of the simulated
    /// version ([`default_node_monitor_grace_period_ms`]).
    pub fn node_monitor_grace_period_ms(&self) -> Millis {
        self.config
            .node_monitor_grace_period_ms
            .unwrap_or_else(|| default_node_monitor_grace_period_ms(self.config.kube_version))
    }

    /// The pods bound to `node` whose taint eviction is scheduled and not yet done.
    pub fn pending_taint_evictions(&self, node: &str) -> Vec<ObjectKey> {
        self.lifecycle
            .pods_of(node)
            .into_iter()
            .filter(|k| self.lifecycle.evictions.contains_key(k))
            .collect()
    }

    /// The state of a node's simulated kubelet (`None` for an unknown node).
    pub fn kubelet_state(&self, node: &str) -> Option<KubeletState> {
        self.nodes.contains_key(node).then(|| {
            self.lifecycle
                .health
                .get(node)
                .map_or(KubeletState::Ready, |h| h.kubelet)
        })
    }

    /// When a node's Ready condition was last posted and last changed (`None` for an unknown
    /// node); both `None` while nothing happened since the Node was created.
    pub fn node_ready_condition_times(&self, node: &str) -> Option<ReadyConditionTimes> {
        self.nodes.contains_key(node).then(|| {
            self.lifecycle
                .health
                .get(node)
                .map_or_else(ReadyConditionTimes::default, |h| h.times)
        })
    }

    /// Makes a node's simulated kubelet report Ready (`true`) or stop reporting (`false`):
    /// [`Engine::set_kubelet_state`] with [`KubeletState::Ready`] or [`KubeletState::Stopped`].
    pub fn set_node_ready(&mut self, node: &str, ready: bool) -> Result<(), SimError> {
        let state = if ready {
            KubeletState::Ready
        } else {
            KubeletState::Stopped
        };
        self.set_kubelet_state(node, state)
    }

    /// Sets what a node's simulated kubelet does from now on (see the module documentation for
    /// the consequences and their timing). `Ready` and `NotReady` post the node's Ready
    /// condition at once; `Stopped` posts nothing, and the simulated node lifecycle controller
    /// sets the condition to Unknown once [`Engine::node_monitor_grace_period_ms`] has passed.
    /// A kubelet that comes back from `Stopped`, or becomes `Ready`, resyncs its pods.
    pub fn set_kubelet_state(&mut self, node: &str, state: KubeletState) -> Result<(), SimError> {
        let key = ObjectKey::new(Kind::Node, "", node);
        if !self.nodes.contains_key(node) || self.store.get(&key).is_none() {
            return Err(SimError::UnknownNode(node.to_string()));
        }
        self.lifecycle_catch_up();
        let now = self.now;
        let grace = self.node_monitor_grace_period_ms();
        let h = self.lifecycle.health.entry(node.to_string()).or_default();
        let previous = h.kubelet;
        if previous == state {
            return Ok(());
        }
        h.kubelet = state;
        h.heartbeat = now;
        h.times.last_heartbeat = Some(now);
        match state {
            KubeletState::Stopped => {
                self.schedule_node_monitor(node, tick_after(now + grace, NODE_MONITOR_PERIOD_MS));
            }
            KubeletState::Ready | KubeletState::NotReady => {
                // The kubelet posts its status at once; the controller sees it on its next pass.
                if let Some(mut n) = self.store.get(&key).and_then(|s| s.object.as_node()).cloned() {
                    let ready = Some(state == KubeletState::Ready);
                    if n.ready != ready
                        && let Some(h) = self.lifecycle.health.get_mut(node)
                    {
                        h.times.last_transition = Some(now);
                    }
                    n.ready = ready;
                    let _ = self.update(Object::Node(n), None);
                }
                self.schedule_node_monitor(node, tick_after(now, NODE_MONITOR_PERIOD_MS));
                if previous == KubeletState::Stopped || state == KubeletState::Ready {
                    self.kubelet_resync(node);
                }
            }
        }
        self.kick();
        Ok(())
    }

    /// True when `node` exists and its simulated kubelet runs (not stopped).
    pub(crate) fn kubelet_running(&self, node: &str) -> bool {
        self.nodes.contains_key(node)
            && self
                .lifecycle
                .health
                .get(node)
                .is_none_or(|h| h.kubelet != KubeletState::Stopped)
    }

    fn schedule_node_monitor(&mut self, node: &str, at: Millis) {
        let Some(h) = self.lifecycle.health.get_mut(node) else {
            return;
        };
        if h.monitor_at.is_some_and(|t| t <= at && t >= self.now) {
            return;
        }
        h.monitor_at = Some(at);
        self.schedule(at, Task::NodeMonitor(node.to_string()));
    }

    /// Brings the pods-by-node index and the controllers' view of Nodes up to date with the
    /// store's events, and lets the controllers react (upstream: their informers' handlers).
    pub(crate) fn lifecycle_catch_up(&mut self) {
        let rv = self.store.resource_version();
        if rv <= self.lifecycle.cursor {
            return;
        }
        let mut nodes: BTreeSet<String> = BTreeSet::new();
        let mut pods: BTreeSet<ObjectKey> = BTreeSet::new();
        match self.store.events_since(self.lifecycle.cursor) {
            Ok(events) => {
                for ev in events {
                    match ev.key.kind {
                        Kind::Node => {
                            nodes.insert(ev.key.name.clone());
                        }
                        Kind::Pod => {
                            pods.insert(ev.key.clone());
                        }
                        _ => {}
                    }
                }
            }
            Err(_) => {
                // The log no longer reaches back: rebuild from the store.
                nodes.extend(self.store.list(Kind::Node).map(|(k, _)| k.name.clone()));
                nodes.extend(self.lifecycle.health.keys().cloned());
                pods.extend(self.store.list(Kind::Pod).map(|(k, _)| k.clone()));
                pods.extend(self.lifecycle.node_of.keys().cloned());
            }
        }
        self.lifecycle.cursor = rv;
        for node in nodes {
            self.lifecycle_node_changed(&node);
        }
        for key in pods {
            self.lifecycle_pod_changed(&key);
        }
    }

    fn lifecycle_node_changed(&mut self, name: &str) {
        let key = ObjectKey::new(Kind::Node, "", name);
        let Some(node) = self.store.get(&key).and_then(|s| s.object.as_node()).cloned() else {
            // Deleted: the controllers forget it; its pods wait for the pod GC.
            self.lifecycle.health.remove(name);
            for pod in self.lifecycle.pods_of(name) {
                self.lifecycle.evictions.remove(&pod);
            }
            if self.lifecycle.pods_on.contains_key(name) {
                self.schedule_pod_gc(name);
            }
            return;
        };
        let now = self.now;
        let h = self.lifecycle.health.entry(name.to_string()).or_default();
        let mut pass = false;
        if node.ready != h.seen {
            h.seen = node.ready;
            pass = true;
        }
        let taints = no_execute(&node);
        let retaint = taints != h.no_execute;
        if retaint {
            h.no_execute = taints;
        }
        if pass {
            self.schedule_node_monitor(name, tick_after(now, NODE_MONITOR_PERIOD_MS));
        }
        if retaint {
            for pod in self.lifecycle.pods_of(name) {
                self.process_pod_taints(&pod);
            }
        }
    }

    fn lifecycle_pod_changed(&mut self, key: &ObjectKey) {
        let current = self.stored_pod(key).map(|(p, _)| {
            (
                p.pod.spec.node_name.clone(),
                p.pod.ready,
                tolerations_digest(&p.pod.spec.tolerations),
            )
        });
        let node = current
            .as_ref()
            .map(|(n, _, _)| n.as_str())
            .filter(|n| !n.is_empty());
        let newly_bound = self.lifecycle.file(key, node);
        let Some((node, ready, tolerations)) = current else {
            self.lifecycle.evictions.remove(key);
            self.lifecycle.tolerations_of.remove(key);
            return;
        };
        if node.is_empty() {
            return;
        }
        let retolerated = self.lifecycle.tolerations_of.insert(key.clone(), tolerations) != Some(tolerations);
        // A node runtime exists exactly while its Node is stored.
        if !self.nodes.contains_key(&node) {
            self.schedule_pod_gc(&node);
            return;
        }
        let (condition, tainted) = self
            .lifecycle
            .health
            .get(&node)
            .map_or((Some(true), false), |h| (h.condition, !h.no_execute.is_empty()));
        // `processPod`: a pod on a node the controller sees not Ready is marked not ready. Not
        // once the kubelet has posted Ready again: upstream's kubelet would write its pods'
        // readiness back on its next status sync, which the simulation does not run.
        if condition != Some(true) && ready {
            let posted_ready = self
                .store
                .get(&ObjectKey::new(Kind::Node, "", &node))
                .and_then(|s| s.object.as_node())
                .is_some_and(|n| n.ready == Some(true));
            if !posted_ready {
                self.mark_pod_not_ready(key);
            }
        }
        if (newly_bound || retolerated) && tainted {
            self.process_pod_taints(key);
        }
    }

    /// `MarkPodsNotReady` for one pod: its Ready condition set to False.
    fn mark_pod_not_ready(&mut self, key: &ObjectKey) {
        if let Some((pod, _)) = self.stored_pod(key)
            && pod.pod.ready
        {
            let mut pod = pod.clone();
            pod.pod.ready = false;
            let _ = self.update(Object::Pod(pod), None);
        }
    }

    /// One health pass of the simulated node lifecycle controller over `node`
    /// (`monitorNodeHealth` for one node: `tryUpdateNodeHealth`, `processTaintBaseEviction`,
    /// `MarkPodsNotReady`).
    pub(crate) fn node_monitor(&mut self, name: &str) {
        let now = self.now;
        match self.lifecycle.health.get_mut(name) {
            Some(h) if h.monitor_at == Some(now) => h.monitor_at = None,
            _ => return,
        }
        self.lifecycle_catch_up();
        let key = ObjectKey::new(Kind::Node, "", name);
        let Some(node) = self.store.get(&key).and_then(|s| s.object.as_node()).cloned() else {
            return;
        };
        let grace = self.node_monitor_grace_period_ms();
        let Some(h) = self.lifecycle.health.get_mut(name) else {
            return;
        };
        let observed = node.ready;
        let stopped = h.kubelet == KubeletState::Stopped;
        let expired = stopped && now > h.heartbeat + grace;
        let mut updated = node.clone();
        if expired {
            // "Kubelet stopped posting node status."
            updated.ready = None;
        }
        let current = updated.ready;
        match observed {
            Some(false) => swap_taints(&mut updated.taints, Some(TAINT_NOT_READY), &[TAINT_UNREACHABLE]),
            None => swap_taints(&mut updated.taints, Some(TAINT_UNREACHABLE), &[TAINT_NOT_READY]),
            Some(true) => swap_taints(&mut updated.taints, None, &[TAINT_NOT_READY, TAINT_UNREACHABLE]),
        }
        h.condition = current;
        h.seen = current;
        if current != observed {
            h.times.last_transition = Some(now);
        }
        let heartbeat = h.heartbeat;
        if current != observed {
            // The taint for the new condition follows on the next pass.
            self.schedule_node_monitor(name, tick_after(now, NODE_MONITOR_PERIOD_MS));
        } else if stopped && !expired {
            self.schedule_node_monitor(name, tick_after(heartbeat + grace, NODE_MONITOR_PERIOD_MS));
        }
        if updated != node {
            let _ = self.update(Object::Node(updated), None);
        }
        if current != Some(true) && observed == Some(true) {
            for pod in self.lifecycle.pods_of(name) {
                self.mark_pod_not_ready(&pod);
            }
        }
    }

    /// The taint-eviction controller's `processPodOnNode` for one pod.
    fn process_pod_taints(&mut self, key: &ObjectKey) {
        let Some((pod, _)) = self.stored_pod(key) else {
            self.lifecycle.evictions.remove(key);
            return;
        };
        let uid = pod.pod.meta.uid.clone();
        let tolerations = pod.pod.spec.tolerations.clone();
        let node_key = ObjectKey::new(Kind::Node, "", pod.pod.spec.node_name.as_str());
        let taints = self
            .store
            .get(&node_key)
            .and_then(|s| s.object.as_node())
            .map(no_execute)
            .unwrap_or_default();
        if taints.is_empty() {
            self.lifecycle.evictions.remove(key);
            return;
        }
        // `GetMatchingTolerations`, then `getMinTolerationTime` over the tolerations used: the
        // shortest `tolerationSeconds` (zero or negative: at once), none of them set: forever.
        let mut min_seconds: Option<u64> = None;
        let mut untolerated = false;
        for t in &taints {
            match crate::controllers::matching_toleration(&tolerations, t) {
                None => {
                    untolerated = true;
                    break;
                }
                Some(used) => {
                    if let Some(s) = used.toleration_seconds {
                        let s = u64::try_from(s).unwrap_or(0);
                        min_seconds = Some(min_seconds.map_or(s, |m| m.min(s)));
                    }
                }
            }
        }
        if untolerated {
            self.lifecycle.evictions.remove(key);
            let _ = self.delete(key);
            return;
        }
        let Some(seconds) = min_seconds else {
            self.lifecycle.evictions.remove(key);
            return;
        };
        // An eviction already scheduled keeps its start (upstream keeps `CreatedAt`).
        if self.lifecycle.evictions.get(key).is_some_and(|e| e.uid == uid) {
            return;
        }
        self.lifecycle.next_token += 1;
        let token = self.lifecycle.next_token;
        self.lifecycle.evictions.insert(
            key.clone(),
            Eviction {
                uid: uid.clone(),
                token,
            },
        );
        self.schedule(
            self.now.saturating_add(seconds.saturating_mul(1000)),
            Task::TaintEviction(key.clone(), uid, token),
        );
    }

    /// A scheduled taint eviction is due: the pod is deleted (gracefully, as upstream's
    /// `deletePodHandler`), unless the eviction was cancelled since.
    pub(crate) fn taint_evict(&mut self, key: &ObjectKey, uid: &str, token: u64) {
        match self.lifecycle.evictions.get(key) {
            Some(e) if e.token == token && e.uid == uid => {
                self.lifecycle.evictions.remove(key);
            }
            _ => return,
        }
        if self.stored_pod(key).is_some_and(|(p, _)| p.pod.meta.uid == uid) {
            let _ = self.delete(key);
        }
    }

    fn schedule_pod_gc(&mut self, node: &str) {
        if !self.lifecycle.gc_pending.insert(node.to_string()) {
            return;
        }
        let at = tick_after(self.now, POD_GC_CHECK_PERIOD_MS) + POD_GC_QUARANTINE_MS;
        self.schedule(at, Task::PodGcOrphans(node.to_string()));
    }

    /// The pod GC's `gcOrphaned` for one missing node: its pods are marked Failed and
    /// force-deleted, unless the node exists again.
    pub(crate) fn pod_gc_orphans(&mut self, node: &str) {
        self.lifecycle.gc_pending.remove(node);
        self.lifecycle_catch_up();
        if self.store.get(&ObjectKey::new(Kind::Node, "", node)).is_some() {
            return;
        }
        for key in self.lifecycle.pods_of(node) {
            let Some((pod, _)) = self.stored_pod(&key) else {
                continue;
            };
            if !matches!(pod.pod.phase, PodPhase::Succeeded | PodPhase::Failed) {
                let mut pod = pod.clone();
                pod.pod.phase = PodPhase::Failed;
                pod.pod.ready = false;
                let _ = self.update(Object::Pod(pod), None);
            }
            let _ = self.delete_with(&key, Some(0));
        }
    }

    /// A kubelet back from `Stopped` (or becoming Ready) resyncs every pod bound to its node:
    /// containers it did not start, deletions it did not finish, SIGTERMs it did not send, and
    /// readiness (a new probe chain whose first success reports Ready; Ready at once without a
    /// readiness probe).
    fn kubelet_resync(&mut self, node: &str) {
        self.lifecycle_catch_up();
        let now = self.now;
        for key in self.lifecycle.pods_of(node) {
            let Some((pod, _)) = self.stored_pod(&key) else {
                continue;
            };
            let pod = pod.clone();
            let uid = pod.pod.meta.uid.clone();
            let deleting = pod.pod.meta.deletion_timestamp.is_some();
            let Some(rt) = self.pods.get_mut(&key).filter(|rt| rt.uid == uid) else {
                self.kubelet_sync(&key);
                continue;
            };
            let mut start = false;
            let mut probe_at = None;
            let mut report: Option<bool> = None;
            let mut remove = false;
            if !rt.started {
                start = !deleting;
            } else if rt.running {
                match &pod.behaviour.readiness {
                    Some(probe) => {
                        rt.ready = false;
                        rt.probe_failures = 0;
                        let at = now + probe.period_seconds.max(1) * 1000;
                        rt.probe_due = Some(at);
                        probe_at = Some(at);
                    }
                    None => {
                        rt.ready = true;
                        report = Some(true);
                    }
                }
            } else {
                // Exited while the kubelet was away: report it and finish the deletion.
                report = Some(false);
                remove = rt.sigterm.is_some();
            }
            let grace = rt.deletion_grace;
            if start {
                let jitter = self.rng.below(self.config.start_jitter_ms + 1);
                let at = now + pod.behaviour.start_delay_ms + jitter;
                self.schedule(at, Task::ContainerStarted(key.clone(), uid.clone()));
            }
            if let Some(at) = probe_at {
                self.schedule(at, Task::Probe(key.clone(), uid.clone()));
            }
            if let Some(ready) = report.filter(|r| *r != pod.pod.ready) {
                let mut p = pod.clone();
                p.pod.ready = ready;
                let _ = self.update(Object::Pod(p), None);
            }
            if remove {
                let at = now + self.config.kubelet_cleanup_delay_ms;
                self.schedule(at, Task::RemovePod(key.clone(), uid.clone()));
            }
            self.kubelet_sync(&key);
            if let Some(g) = grace.filter(|_| deleting) {
                self.terminate_within(&key, g);
            }
        }
    }

    /// The pods bound to `node` (`spec.nodeName`) as the simulated controllers index them, by
    /// key: pods of a deleted node stay listed until the simulated pod GC removes them.
    pub fn pods_on_node(&self, node: &str) -> Vec<ObjectKey> {
        self.lifecycle.pods_of(node)
    }
}
