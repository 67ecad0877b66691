//! The simulated node lifecycle controller's health passes and each node's simulated kubelet
//! state (see `crate::nodelifecycle` for what they do and when): the kubelet's state set and
//! read, the controllers' catch-up with the store's Node and pod events, a health pass over
//! one node (`monitorNodeHealth`), `MarkPodsNotReady`, and a kubelet's resync when it is back.

use compact_str::CompactString;

use crate::engine::{Engine, SimError};
use crate::nodelifecycle::{
    KubeletState, NODE_MONITOR_PERIOD_MS, ReadyConditionTimes, TAINT_NOT_READY, TAINT_UNREACHABLE,
    default_node_monitor_grace_period_ms, no_execute, swap_taints, tick_after, tolerations_digest,
};
use crate::objects::{Kind, Object, ObjectKey};
use crate::tasks::Task;
use crate::time::Millis;

impl Engine {
    /// kube-controller-manager's `--node-monitor-grace-period` in this run (ms):
    /// [`crate::SimConfig::node_monitor_grace_period_ms`], else the default of the simulated
    /// version ([`crate::default_node_monitor_grace_period_ms`]).
    pub fn node_monitor_grace_period_ms(&self) -> Millis {
        self.config
            .node_monitor_grace_period_ms
            .unwrap_or_else(|| default_node_monitor_grace_period_ms(self.config.kube_version))
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
        let h = self.lifecycle.health.entry(CompactString::new(node)).or_default();
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
        // Sorted and deduplicated below: a sort costs less than a tree when a pass sees every
        // pod (a cluster's start).
        let mut nodes: Vec<String> = Vec::new();
        let mut pods: Vec<ObjectKey> = Vec::new();
        match self.store.events_since(self.lifecycle.cursor) {
            Ok(events) => {
                for ev in events {
                    match ev.key.kind {
                        Kind::Node => nodes.push(ev.key.name.to_string()),
                        Kind::Pod => pods.push(ev.key.clone()),
                        _ => {}
                    }
                }
            }
            Err(_) => {
                // The log no longer reaches back: rebuild from the store.
                nodes.extend(self.store.list(Kind::Node).map(|(k, _)| k.name.to_string()));
                nodes.extend(self.lifecycle.health.keys().map(ToString::to_string));
                pods.extend(self.store.list(Kind::Pod).map(|(k, _)| k.clone()));
                pods.extend(self.lifecycle.node_of.keys().cloned());
            }
        }
        nodes.sort_unstable();
        nodes.dedup();
        pods.sort_unstable();
        pods.dedup();
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
        let h = self.lifecycle.health.entry(CompactString::new(name)).or_default();
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
        let retolerated = match self.lifecycle.tolerations_of.get_mut(key) {
            Some(t) => std::mem::replace(t, tolerations) != tolerations,
            None => {
                self.lifecycle.tolerations_of.insert(key.clone(), tolerations);
                true
            }
        };
        // A node runtime exists exactly while its Node is stored.
        if !self.nodes.contains_key(node.as_str()) {
            self.schedule_pod_gc(&node);
            return;
        }
        let (condition, tainted) = self
            .lifecycle
            .health
            .get(node.as_str())
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
