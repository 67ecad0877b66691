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
//!   are applied by the simulated scheduler (`fit::node_fits`), not written.
//! - The **taint-eviction controller** (`pkg/controller/tainteviction/taint_eviction.go`
//!   `processPodOnNode`): for each pod on a node with NoExecute taints (when the taints change,
//!   when the pod is bound there, when its tolerations change), a taint no toleration matches
//!   evicts it at once; otherwise it is deleted after the shortest `tolerationSeconds` of the
//!   tolerations used (the first matching one per taint, `GetMatchingTolerations`; zero or
//!   negative: at once), or never when none of them has `tolerationSeconds`
//!   (`getMinTolerationTime`). An eviction already scheduled keeps its time. Pods get their
//!   tolerations of `not-ready` and `unreachable` from the `DefaultTolerationSeconds` admission
//!   ([`admit_default_toleration_seconds`], run by [`crate::Engine::create`] and [`crate::Engine::update`]):
//!   300 s each unless they tolerate the taint already (DaemonSet pods tolerate both forever).
//!   An eviction is a graceful delete: a stopped kubelet cannot finish it, so the pod stays
//!   terminating while the ReplicaSet controller replaces it elsewhere.
//! - The **pod GC**'s orphan pass (`pkg/controller/podgc/gc_controller.go` `gcOrphaned`): pods
//!   bound to a node that no longer exists are marked Failed and force-deleted once the node has
//!   been missing for `quarantineTime` (40 s), on the first `gcCheckPeriod` (20 s) pass that
//!   notices it, then 40 s later.
//!
//! The controllers' passes are in `nodemonitor` (health passes, kubelet state) and
//! `tainteviction` (taint eviction, pod GC); this module holds their state and rules.
//!
//! A **stopped** simulated kubelet posts no status and acts on nothing: containers keep
//! running and serving, but it starts no container, runs no probe, sends no SIGTERM and
//! finishes no deletion. When it is back it resyncs its pods: readiness comes back with the next
//! probe (its prober restarts from Failure, upstream `pkg/kubelet/prober/worker.go`), at once for
//! pods without a readiness probe. The node's simulated kube-proxy is left as it is: a node
//! whose kubelet is down is in practice often partitioned, but the simulation keeps its
//! kube-proxy syncing and its data plane working, so what changes is what the control plane
//! does (readiness, taints, evictions), not the node's own rules.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use locality_model::objects::{Node, PodSpec, Taint, Toleration};
use locality_model::version::KubeVersion;

use crate::fasthash::FastMap;
use crate::objects::ObjectKey;
use crate::time::Millis;
use compact_str::CompactString;

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
/// `lastHeartbeatTime` and `lastTransitionTime`), as [`crate::Engine::node_ready_condition_times`]
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
pub(crate) struct NodeHealth {
    pub(crate) kubelet: KubeletState,
    /// When the kubelet last posted status (for a stopped kubelet: when it stopped).
    pub(crate) heartbeat: Millis,
    /// The Ready condition after the controller's last pass (its `nodeHealthMap`).
    pub(crate) condition: Option<bool>,
    /// The stored Ready condition last seen, to notice changes.
    pub(crate) seen: Option<bool>,
    /// When the next health pass is due.
    pub(crate) monitor_at: Option<Millis>,
    /// The NoExecute taints the taint-eviction controller last acted on.
    pub(crate) no_execute: Vec<Taint>,
    /// The Ready condition's heartbeat and transition times.
    pub(crate) times: ReadyConditionTimes,
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
pub(crate) struct Eviction {
    pub(crate) uid: String,
    pub(crate) token: u64,
}

/// State of the simulated node lifecycle, taint-eviction and pod GC controllers: per node its
/// health, and the pods bound to each node (an index fed by store events, like upstream's pod
/// informer indexed by `spec.nodeName`).
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeLifecycle {
    /// Store events up to this resourceVersion are in the index.
    pub cursor: u64,
    pub(crate) health: FastMap<CompactString, NodeHealth>,
    pub(crate) pods_on: FastMap<CompactString, BTreeSet<ObjectKey>>,
    pub(crate) node_of: FastMap<ObjectKey, CompactString>,
    pub(crate) evictions: FastMap<ObjectKey, Eviction>,
    /// A digest of each bound pod's tolerations, to notice changes (upstream `PodUpdated`
    /// processes a pod again when its tolerations change).
    pub(crate) tolerations_of: FastMap<ObjectKey, u64>,
    pub(crate) next_token: u64,
    /// Nodes with a pod GC orphan pass pending.
    pub(crate) gc_pending: BTreeSet<String>,
}

impl NodeLifecycle {
    /// Room for about `pods` more pods.
    pub(crate) fn reserve(&mut self, pods: usize) {
        self.node_of.reserve(pods);
        self.tolerations_of.reserve(pods);
    }

    /// Forgets the kubelet state and health of a deleted node.
    pub(crate) fn forget_kubelet(&mut self, node: &str) {
        self.health.remove(node);
    }

    pub(crate) fn pods_of(&self, node: &str) -> Vec<ObjectKey> {
        self.pods_on
            .get(node)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn file(&mut self, key: &ObjectKey, node: Option<&str>) -> bool {
        if self.node_of.get(key).map(CompactString::as_str) == node {
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
            self.node_of.insert(key.clone(), CompactString::new(n));
            match self.pods_on.get_mut(n) {
                Some(set) => {
                    set.insert(key.clone());
                }
                None => {
                    self.pods_on
                        .insert(CompactString::new(n), BTreeSet::from([key.clone()]));
                }
            }
            return true;
        }
        false
    }
}

/// The first multiple of `period` strictly after `t`.
pub(crate) fn tick_after(t: Millis, period: Millis) -> Millis {
    (t / period + 1) * period
}

pub(crate) fn tolerations_digest(tolerations: &[Toleration]) -> u64 {
    let mut h = crate::fasthash::FastHasher::default();
    for t in tolerations {
        (&t.key, &t.operator, &t.value, &t.effect, t.toleration_seconds).hash(&mut h);
    }
    h.finish()
}

pub(crate) fn no_execute(node: &Node) -> Vec<Taint> {
    node.taints
        .iter()
        .filter(|t| t.effect == "NoExecute")
        .cloned()
        .collect()
}

/// Adds the NoExecute taint `add` (if any) and removes the NoExecute taints `remove`
/// (upstream `SwapNodeControllerTaint`).
pub(crate) fn swap_taints(taints: &mut Vec<Taint>, add: Option<&str>, remove: &[&str]) {
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
