//! The simulated control plane: garbage collector, Deployment, ReplicaSet and DaemonSet
//! controllers, scheduler, and the EndpointSlice controller (the model's
//! `endpointslice::derive_endpoint_slices`). All of them read and write only the store.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use locality_model::objects::{
    Labels, Node, NodeSelectorTerm, ObjectMeta, OwnerReference, Pod, PodPhase, PodSpec, SelectorRequirement,
    Taint, Toleration, WorkloadKind,
};
use locality_model::selector::{requirement_matches, service_selects};

use crate::endpointslices::SliceSync;
use crate::engine::{Engine, Task};
use crate::objects::{Kind, Object, ObjectKey, SimPod, SimWorkload};
use crate::store::EventType;

/// Label the simulated Deployment controller puts on ReplicaSets and pods.
pub const LABEL_POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// Label the simulated DaemonSet controller puts on its pods.
pub const LABEL_CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";

#[derive(Default)]
struct Dirty {
    /// Services whose EndpointSlices need a sync, and what changed.
    slices: BTreeMap<ObjectKey, SliceSync>,
    all_services: bool,
    workloads: BTreeSet<ObjectKey>,
    all_daemonsets: bool,
    schedule: bool,
    pods: BTreeSet<ObjectKey>,
    deleted_owners: Vec<String>,
}

impl Engine {
    /// One pass of every simulated controller over the store's new events.
    pub(crate) fn reconcile(&mut self) {
        self.reconcile_pending = false;
        // Workloads deleted in the foreground whose last dependent is gone, then terminating
        // Namespaces whose last object is gone.
        self.finish_foreground();
        self.finish_namespaces();
        let events = match self.store.events_since(self.controller_cursor) {
            Ok(e) => e.to_vec(),
            Err(_) => Vec::new(),
        };
        self.controller_cursor = self.store.resource_version();
        // Node lifecycle, taint eviction and pod GC follow pods and Nodes by their own cursor.
        self.lifecycle_catch_up();
        let mut load_balancers: Vec<ObjectKey> = Vec::new();
        let mut d = Dirty::default();
        for ev in &events {
            let k = &ev.key;
            match k.kind {
                Kind::Pod => {
                    d.pods.insert(k.clone());
                    if let Some(p) = ev.object.as_pod() {
                        // The Services that select it now, or held its endpoint before.
                        for (svc_key, s) in self.store.list_namespace(Kind::Service, &k.namespace) {
                            let selects = s.object.as_service().is_some_and(|svc| {
                                svc.selector
                                    .as_ref()
                                    .is_some_and(|sel| service_selects(sel, &p.pod.meta.labels))
                            });
                            if selects || self.slice_tracker.holds(svc_key, &k.name) {
                                d.slices
                                    .entry(svc_key.clone())
                                    .or_insert_with(|| SliceSync::Pods(BTreeSet::new()))
                                    .add_pod(&k.name);
                            }
                        }
                        if p.pod.spec.node_name.is_empty() {
                            d.schedule = true;
                        }
                        for o in p.pod.meta.owner_references.iter().filter(|o| o.controller) {
                            let kind = match o.kind.as_str() {
                                "ReplicaSet" => Kind::ReplicaSet,
                                "DaemonSet" => Kind::DaemonSet,
                                _ => continue,
                            };
                            let owner = ObjectKey::new(kind, &k.namespace, &o.name);
                            if kind == Kind::DaemonSet {
                                let alive = ev.event_type != EventType::Deleted;
                                self.daemon_pod_event(&owner, &k.name, alive.then_some(p));
                            }
                            if kind == Kind::ReplicaSet
                                && let Some(dep) = self.owner_of(&owner, "Deployment")
                            {
                                d.workloads.insert(dep);
                            }
                            d.workloads.insert(owner);
                        }
                    }
                    if ev.event_type == EventType::Deleted {
                        d.schedule = true;
                    }
                }
                Kind::Node => {
                    self.daemon_node_event(&k.name);
                    d.all_services = true;
                    d.all_daemonsets = true;
                    d.schedule = true;
                }
                Kind::Service => {
                    d.slices.insert(k.clone(), SliceSync::Full);
                    load_balancers.push(k.clone());
                }
                Kind::Deployment | Kind::DaemonSet => {
                    d.workloads.insert(k.clone());
                }
                Kind::ReplicaSet => {
                    if let Some(dep) = self.owner_of(k, "Deployment") {
                        d.workloads.insert(dep);
                    } else if let Some(w) = ev.object.as_workload() {
                        for o in w.workload.meta.owner_references.iter().filter(|o| o.controller) {
                            d.workloads
                                .insert(ObjectKey::new(Kind::Deployment, &k.namespace, &o.name));
                        }
                    }
                    d.workloads.insert(k.clone());
                }
                Kind::Namespace
                | Kind::EndpointSlice
                | Kind::ServiceAccount
                | Kind::Job
                | Kind::Role
                | Kind::RoleBinding
                | Kind::ClusterRole
                | Kind::ClusterRoleBinding
                | Kind::PodDisruptionBudget => {}
            }
            if ev.event_type == EventType::Deleted && k.kind != Kind::Pod {
                d.deleted_owners.push(ev.object.meta().uid.clone());
            }
        }

        self.garbage_collect(&d.deleted_owners);
        if d.all_daemonsets {
            let all: Vec<ObjectKey> = self.store.list(Kind::DaemonSet).map(|(k, _)| k.clone()).collect();
            d.workloads.extend(all);
        }
        // Deployments first (they scale ReplicaSets), then ReplicaSets, then DaemonSets.
        for kind in [Kind::Deployment, Kind::ReplicaSet, Kind::DaemonSet] {
            for key in d
                .workloads
                .iter()
                .filter(|k| k.kind == kind)
                .cloned()
                .collect::<Vec<_>>()
            {
                match kind {
                    Kind::Deployment => self.sync_deployment(&key),
                    Kind::ReplicaSet => self.sync_replica_set(&key),
                    _ => self.sync_daemon_set(&key),
                }
            }
        }
        if d.schedule {
            self.schedule_pending();
        } else {
            self.scheduler_catch_up();
        }
        for key in &d.pods {
            self.kubelet_sync(key);
        }
        if d.all_services {
            for (k, _) in self.store.list(Kind::Service) {
                d.slices.insert(k.clone(), SliceSync::Full);
            }
        }
        if !d.slices.is_empty() {
            self.sync_endpoint_slices(d.slices);
        }
        load_balancers.dedup();
        for key in load_balancers {
            self.cloud_lb_sync(&key);
        }
    }

    /// The controller owner of `key` of kind `owner_kind`, if any.
    fn owner_of(&self, key: &ObjectKey, owner_kind: &str) -> Option<ObjectKey> {
        let o = self.store.get(key)?;
        let kind = match owner_kind {
            "Deployment" => Kind::Deployment,
            _ => return None,
        };
        o.object
            .meta()
            .owner_references
            .iter()
            .find(|r| r.controller && r.kind == owner_kind)
            .map(|r| ObjectKey::new(kind, &key.namespace, &r.name))
    }

    /// Deletes objects whose controller owner was deleted (foreground GC is not simulated).
    fn garbage_collect(&mut self, deleted: &[String]) {
        if deleted.is_empty() {
            return;
        }
        let gone: BTreeSet<&str> = deleted.iter().map(String::as_str).collect();
        let mut victims = Vec::new();
        for kind in [Kind::ReplicaSet, Kind::Pod, Kind::EndpointSlice] {
            for (k, s) in self.store.list(kind) {
                if s.object
                    .meta()
                    .owner_references
                    .iter()
                    .any(|o| gone.contains(o.uid.as_str()))
                {
                    victims.push(k.clone());
                }
            }
        }
        for k in victims {
            let _ = self.delete(&k);
        }
    }

    // ----- Deployment -----

    fn sync_deployment(&mut self, key: &ObjectKey) {
        let Some(s) = self.store.get(key) else { return };
        let Some(dep) = s.object.as_workload().cloned() else {
            return;
        };
        if dep.workload.meta.deletion_timestamp.is_some() {
            return;
        }
        let replicas = i64::from(dep.workload.replicas.unwrap_or(1));
        let hash = template_hash(&dep);
        let uid = dep.workload.meta.uid.clone();
        let rses: Vec<SimWorkload> = self
            .store
            .list_namespace(Kind::ReplicaSet, &key.namespace)
            .filter_map(|(_, s)| s.object.as_workload().cloned())
            .filter(|w| {
                w.workload
                    .meta
                    .owner_references
                    .iter()
                    .any(|o| o.controller && o.uid == uid)
            })
            .collect();
        let new_name = format!("{}-{hash}", key.name);
        let mut new = rses.iter().find(|w| w.workload.meta.name == new_name).cloned();
        let mut olds: Vec<SimWorkload> = rses
            .iter()
            .filter(|w| w.workload.meta.name != new_name)
            .cloned()
            .collect();
        olds.sort_by(|a, b| {
            a.workload
                .meta
                .creation_timestamp
                .cmp(&b.workload.meta.creation_timestamp)
        });
        if new.is_none() {
            let mut w = dep.clone();
            w.workload.kind = WorkloadKind::ReplicaSet;
            w.workload.meta = ObjectMeta {
                name: new_name.clone(),
                namespace: key.namespace.clone(),
                labels: with(&dep.workload.template_labels, LABEL_POD_TEMPLATE_HASH, &hash),
                owner_references: vec![owner_ref("Deployment", &dep.workload.meta)],
                ..ObjectMeta::default()
            };
            w.workload.template_labels = with(&dep.workload.template_labels, LABEL_POD_TEMPLATE_HASH, &hash);
            w.workload
                .selector
                .match_labels
                .insert(LABEL_POD_TEMPLATE_HASH.into(), hash.clone());
            w.workload.replicas = Some(0);
            w.workload.max_surge = None;
            w.workload.max_unavailable = None;
            w.workload.update_strategy = None;
            if self.create(Object::Workload(w.clone())).is_err() {
                return;
            }
            new = Some(w);
        }
        let Some(mut new) = new else { return };
        let available = |e: &Engine, w: &SimWorkload| -> i64 {
            e.owned_pods(&w.workload.meta.namespace, &w.workload.meta.uid)
                .iter()
                .filter_map(|o| o.as_pod())
                .filter(|p| p.pod.ready && p.pod.meta.deletion_timestamp.is_none())
                .count() as i64
        };
        let spec = |w: &SimWorkload| i64::from(w.workload.replicas.unwrap_or(0));
        let set = |e: &mut Engine, w: &mut SimWorkload, n: i64| {
            w.workload.replicas = Some(n.max(0) as u32);
            let _ = e.update(Object::Workload(w.clone()), None);
        };

        if dep.workload.update_strategy.as_deref() == Some("Recreate") {
            let mut any_old = false;
            for old in &mut olds {
                if spec(old) > 0 {
                    set(self, old, 0);
                }
                any_old |= !self.owned_pods(&key.namespace, &old.workload.meta.uid).is_empty();
            }
            if !any_old && spec(&new) != replicas {
                set(self, &mut new, replicas);
            }
            return;
        }

        let surge = scaled(dep.workload.max_surge.as_deref().unwrap_or("25%"), replicas, true);
        let mut unavailable = scaled(
            dep.workload.max_unavailable.as_deref().unwrap_or("25%"),
            replicas,
            false,
        );
        if surge == 0 && unavailable == 0 {
            unavailable = 1;
        }
        if olds.iter().all(|o| spec(o) == 0) {
            if spec(&new) != replicas {
                set(self, &mut new, replicas);
            }
            return;
        }
        // reconcileNewReplicaSet
        let all: i64 = olds.iter().map(spec).sum::<i64>() + spec(&new);
        let max_total = replicas + surge;
        if spec(&new) < replicas && all < max_total {
            let up = (max_total - all).min(replicas - spec(&new));
            let n = spec(&new) + up;
            set(self, &mut new, n);
            return;
        }
        // reconcileOldReplicaSets
        let min_available = replicas - unavailable;
        let new_unavailable = spec(&new) - available(self, &new);
        let mut max_down = all - min_available - new_unavailable;
        if max_down <= 0 {
            return;
        }
        // cleanupUnhealthyReplicas
        for old in &mut olds {
            if max_down <= 0 {
                break;
            }
            let unhealthy = spec(old) - available(self, old);
            let down = unhealthy.min(max_down).max(0);
            if down > 0 {
                let n = spec(old) - down;
                set(self, old, n);
                max_down -= down;
            }
        }
        // scaleDownOldReplicaSetsForRollingUpdate
        let total_available: i64 =
            olds.iter().map(|o| available(self, o)).sum::<i64>() + available(self, &new);
        if total_available <= min_available {
            return;
        }
        let mut remaining = total_available - min_available;
        for old in &mut olds {
            if remaining <= 0 {
                break;
            }
            let down = spec(old).min(remaining);
            if down > 0 {
                let n = spec(old) - down;
                set(self, old, n);
                remaining -= down;
            }
        }
    }

    /// Pods whose controller owner has `uid`.
    pub(crate) fn owned_pods(&self, namespace: &str, uid: &str) -> Vec<Arc<Object>> {
        self.store
            .list_namespace(Kind::Pod, namespace)
            .filter(|(_, s)| {
                s.object.as_pod().is_some_and(|p| {
                    p.pod
                        .meta
                        .owner_references
                        .iter()
                        .any(|o| o.controller && o.uid == uid)
                })
            })
            .map(|(_, s)| s.object.clone())
            .collect()
    }

    // ----- ReplicaSet -----

    fn sync_replica_set(&mut self, key: &ObjectKey) {
        let Some(s) = self.store.get(key) else { return };
        let Some(rs) = s.object.as_workload().cloned() else {
            return;
        };
        // A ReplicaSet being deleted manages no pods (`pkg/controller/replicaset`
        // `syncReplicaSet`: `manageReplicas` only when `DeletionTimestamp == nil`).
        if rs.workload.meta.deletion_timestamp.is_some() {
            return;
        }
        let want = i64::from(rs.workload.replicas.unwrap_or(1));
        let owned = self.owned_pods(&key.namespace, &rs.workload.meta.uid);
        let mut active: Vec<&SimPod> = owned
            .iter()
            .filter_map(|o| o.as_pod())
            .filter(|p| {
                p.pod.meta.deletion_timestamp.is_none()
                    && !matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed)
            })
            .collect();
        let diff = want - active.len() as i64;
        if diff > 0 {
            for _ in 0..diff {
                let name = self.generate_name(&key.namespace, &key.name);
                let pod = self.pod_from_template(&rs, name, None);
                let _ = self.create(Object::Pod(pod));
            }
        } else if diff < 0 {
            // Delete unscheduled, then not ready, then the newest first.
            active.sort_by(|a, b| {
                let rank = |p: &&SimPod| (!p.pod.spec.node_name.is_empty(), p.pod.ready);
                rank(a)
                    .cmp(&rank(b))
                    .then_with(|| b.pod.meta.creation_timestamp.cmp(&a.pod.meta.creation_timestamp))
                    .then_with(|| b.pod.meta.name.cmp(&a.pod.meta.name))
            });
            for p in active.iter().take((-diff) as usize) {
                let _ = self.delete(&ObjectKey::new(Kind::Pod, &key.namespace, &p.pod.meta.name));
            }
        }
    }

    /// A pod name `PREFIX-xxxxx` free in `namespace`, as the API server's `generateName`
    /// (`names.SimpleNameGenerator`) with the retry its clients do on a conflict: pods read
    /// from a dump may already hold a name the seeded generator draws.
    pub(crate) fn generate_name(&mut self, namespace: &str, prefix: &str) -> String {
        loop {
            let name = format!("{prefix}-{}", self.rng.suffix(5));
            if self
                .store
                .get(&ObjectKey::new(Kind::Pod, namespace, name.as_str()))
                .is_none()
            {
                return name;
            }
        }
    }

    pub(crate) fn pod_from_template(&self, w: &SimWorkload, name: String, node: Option<&str>) -> SimPod {
        let mut spec: PodSpec = w.workload.template.clone();
        spec.node_name = String::new();
        if let Some(node) = node {
            set_node_name_affinity(&mut spec, node);
        }
        let kind = w.workload.kind.as_str();
        SimPod {
            pod: Pod {
                meta: ObjectMeta {
                    name,
                    namespace: w.workload.meta.namespace.clone(),
                    labels: w.workload.template_labels.clone(),
                    annotations: w.template_annotations.clone(),
                    owner_references: vec![owner_ref(kind, &w.workload.meta)],
                    ..ObjectMeta::default()
                },
                spec,
                phase: PodPhase::Pending,
                ready: false,
                pod_ips: Vec::new(),
            },
            behaviour: w.pod_behaviour.clone(),
            restart_count: 0,
        }
    }

    // ----- scheduler -----

    /// Feeds the scheduler's cache the pod events since it last read the store.
    pub(crate) fn scheduler_catch_up(&mut self) {
        let events: Vec<(ObjectKey, u64, Option<Arc<Object>>)> = self
            .store
            .events_since(self.scheduler.cursor)
            .unwrap_or_default()
            .iter()
            .filter(|e| e.key.kind == Kind::Pod)
            .map(|e| {
                let created = self.store.get(&e.key).map_or(0, |s| s.created);
                let live = (e.event_type != EventType::Deleted).then(|| e.object.clone());
                (e.key.clone(), created, live)
            })
            .collect();
        self.scheduler.cursor = self.store.resource_version();
        for (key, created, object) in events {
            let pod = object.as_deref().and_then(Object::as_pod);
            self.scheduler.observe(&key, created, pod);
        }
    }

    /// Binds pending pods: feasible nodes (nodeName, nodeSelector, required node affinity,
    /// taints, Ready, cordon), then the least loaded, ties broken by the seeded PRNG.
    ///
    /// Like kube-scheduler, it keeps its own cache (pending pods, pods per node) fed by the
    /// pod events since its last run; a pod whose required affinity pins it to one node (the
    /// DaemonSet controller's `matchFields: metadata.name`) is checked against that node only.
    pub(crate) fn schedule_pending(&mut self) {
        self.scheduler_catch_up();
        let pending: Vec<(u64, ObjectKey)> = self.scheduler.pending.iter().cloned().collect();
        let mut all_nodes: Option<Vec<Arc<Object>>> = None;
        for (created, key) in pending {
            let Some(mut pod) = self.store.get(&key).and_then(|s| s.object.as_pod()).cloned() else {
                continue;
            };
            let pinned = pinned_node(&pod.pod.spec).and_then(|n| {
                let node = self.store.get(&ObjectKey::new(Kind::Node, "", n.as_str()))?;
                let fits = node
                    .object
                    .as_node()
                    .is_some_and(|n| node_fits(&pod.pod.spec, n, false).is_ok());
                fits.then(|| node.object.clone())
            });
            let candidates: Vec<Arc<Object>> = match pinned {
                Some(node) => vec![node],
                None => all_nodes
                    .get_or_insert_with(|| {
                        self.store
                            .list(Kind::Node)
                            .map(|(_, s)| s.object.clone())
                            .collect()
                    })
                    .clone(),
            };
            let nodes: Vec<&Node> = candidates.iter().filter_map(|o| o.as_node()).collect();
            let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
            let mut feasible: Vec<&Node> = Vec::new();
            for &n in &nodes {
                match node_fits(&pod.pod.spec, n, false).and_then(|()| self.host_ports_free(&pod.pod, n)) {
                    Ok(()) => feasible.push(n),
                    Err(r) => *reasons.entry(r).or_default() += 1,
                }
            }
            if feasible.is_empty() {
                let why = reasons
                    .iter()
                    .map(|(r, n)| format!("{n} {} {r}", if *n == 1 { "node" } else { "nodes" }))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.unschedulable.insert(
                    key,
                    format!(
                        "0/{} nodes are available: {why} (simulated scheduler)",
                        nodes.len()
                    ),
                );
                continue;
            }
            let load = |n: &Node| self.scheduler.load.get(&n.meta.name).copied().unwrap_or(0);
            let min = feasible.iter().map(|n| load(n)).min().unwrap_or(0);
            let best: Vec<&&Node> = feasible.iter().filter(|n| load(n) == min).collect();
            let pick = best[self.rng.below(best.len() as u64) as usize].meta.name.clone();
            self.unschedulable.remove(&key);
            pod.pod.spec.node_name = pick;
            self.scheduler.observe(&key, created, Some(&pod));
            let _ = self.update(Object::Pod(pod), None);
        }
    }

    /// The scheduler's `NodePorts` filter (k8s.io/kubernetes
    /// `pkg/scheduler/framework/plugins/nodeports/node_ports.go` `Filter`): a pod asking for a
    /// host port does not fit a node where another pod, terminating ones included, holds it.
    fn host_ports_free(&self, pod: &Pod, node: &Node) -> Result<(), String> {
        let wanted = host_ports(&pod.spec);
        if wanted.is_empty() {
            return Ok(());
        }
        let taken = self
            .store
            .list(Kind::Pod)
            .filter_map(|(_, s)| s.object.as_pod())
            .filter(|p| p.pod.spec.node_name == node.meta.name && p.pod.meta.uid != pod.meta.uid)
            .filter(|p| !matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed))
            .any(|p| host_ports(&p.pod.spec).iter().any(|h| wanted.contains(h)));
        if taken {
            Err("didn't have free ports for the requested pod ports".into())
        } else {
            Ok(())
        }
    }

    /// Kubelet reaction to a pod change on its node (admission, SIGTERM, cleanup).
    pub(crate) fn kubelet_sync(&mut self, key: &ObjectKey) {
        let Some((pod, _)) = self.stored_pod(key) else {
            self.forget_pod(key);
            return;
        };
        let uid = pod.pod.meta.uid.clone();
        let node = pod.pod.spec.node_name.clone();
        let deleting = pod.pod.meta.deletion_timestamp.is_some();
        let behaviour = pod.behaviour.clone();
        if node.is_empty() {
            // An unscheduled pod is deleted at once (upstream `CheckGracefulDelete`).
            if deleting {
                self.schedule(self.now, Task::RemovePod(key.clone(), uid));
            }
            return;
        }
        if !self.kubelet_running(&node) {
            // A stopped kubelet acts on nothing until it is back (it then resyncs its pods);
            // the pods of a deleted node are left to the simulated pod GC.
            return;
        }
        let known = self.pods.get(key).filter(|r| r.uid == uid).cloned();
        match known {
            None if !deleting => {
                self.serving_generation += 1;
                self.pods.insert(
                    key.clone(),
                    crate::engine::PodRuntime {
                        uid: uid.clone(),
                        node,
                        ..Default::default()
                    },
                );
                let jitter = self.rng.below(self.config.start_jitter_ms + 1);
                let at = self.now + behaviour.start_delay_ms + jitter;
                self.schedule(at, Task::ContainerStarted(key.clone(), uid));
            }
            None => self.schedule(self.now, Task::RemovePod(key.clone(), uid)),
            Some(rt) if deleting && rt.sigterm.is_none() => {
                if !rt.started {
                    self.schedule(self.now, Task::RemovePod(key.clone(), uid));
                    return;
                }
                if let Some(r) = self.pods.get_mut(key) {
                    r.sigterm = Some(self.now);
                }
                let secs = behaviour
                    .shutdown_delay_seconds
                    .min(behaviour.termination_grace_period_seconds);
                self.schedule(self.now + secs * 1000, Task::ProcessExit(key.clone(), uid));
            }
            Some(_) => {}
        }
    }
}

fn owner_ref(kind: &str, meta: &ObjectMeta) -> OwnerReference {
    OwnerReference {
        kind: kind.to_string(),
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        controller: true,
    }
}

pub(crate) fn with(labels: &Labels, k: &str, v: &str) -> Labels {
    let mut l = labels.clone();
    l.insert(k.to_string(), v.to_string());
    l
}

/// A stable hash of a workload's pod template (labels, spec, behaviour), in the
/// `pod-template-hash` alphabet.
pub fn template_hash(w: &SimWorkload) -> String {
    // The lifecycle read back (probe, grace period, preStop) is left out: a template read
    // back with the API server's defaults (`terminationGracePeriodSeconds: 30`) is the same
    // template, and what was written is in `template_digest`. A label on the Deployment
    // must not roll it.
    let mut template = w.workload.template.clone();
    template.lifecycle = Default::default();
    let text = format!(
        "{:?}{:?}{:?}{:?}{}",
        w.workload.template_labels, template, w.pod_behaviour, w.template_annotations, w.template_digest
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..10)
        .map(|i| ALPHABET[((h >> (i * 6)) % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

/// The (host port, protocol) pairs a pod spec holds on its node: `hostPort`s, and with
/// `hostNetwork` every container port.
fn host_ports(spec: &PodSpec) -> Vec<(u16, locality_model::objects::Protocol)> {
    spec.ports
        .iter()
        .filter_map(|p| {
            let port = if spec.host_network {
                Some(p.container_port)
            } else {
                p.host_port
            };
            port.map(|h| (h, p.protocol))
        })
        .collect()
}

/// An int-or-percent (`"1"`, `"25%"`) scaled against `total`.
pub fn scaled(value: &str, total: i64, round_up: bool) -> i64 {
    let v = value.trim();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.trim().parse().unwrap_or(0.0);
        let x = p * total as f64 / 100.0;
        (if round_up { x.ceil() } else { x.floor() }) as i64
    } else {
        v.parse().unwrap_or(0)
    }
}

/// Replaces the `metadata.name` field requirement of the required node affinity, as the
/// DaemonSet controller does (`ReplaceDaemonSetPodNodeNameNodeAffinity`).
fn set_node_name_affinity(spec: &mut PodSpec, node: &str) {
    let req = SelectorRequirement {
        key: "metadata.name".into(),
        operator: "In".into(),
        values: vec![node.to_string()],
    };
    if spec.required_node_affinity.is_empty() {
        spec.required_node_affinity.push(NodeSelectorTerm::default());
    }
    for term in &mut spec.required_node_affinity {
        term.match_fields = vec![req.clone()];
    }
}

/// The one node a pod's required node affinity allows by name: every term has a
/// `matchFields` requirement `metadata.name In [node]` for the same single node.
fn pinned_node(spec: &PodSpec) -> Option<String> {
    let mut pinned: Option<&String> = None;
    for term in &spec.required_node_affinity {
        let node = term
            .match_fields
            .iter()
            .find(|r| r.key == "metadata.name" && r.operator == "In" && r.values.len() == 1)
            .map(|r| &r.values[0])?;
        if pinned.is_some_and(|p| p != node) {
            return None;
        }
        pinned = Some(node);
    }
    pinned.cloned()
}

/// The simulated scheduler's cache: pending pods by creation, pods per node.
#[derive(Debug, Clone, Default)]
pub(crate) struct SchedulerCache {
    /// Store events up to this resourceVersion are in the cache.
    pub cursor: u64,
    pending: BTreeSet<(u64, ObjectKey)>,
    pending_since: HashMap<ObjectKey, u64>,
    node_of: HashMap<ObjectKey, String>,
    load: HashMap<String, usize>,
}

impl SchedulerCache {
    /// Records a pod's current state (`None`: deleted).
    fn observe(&mut self, key: &ObjectKey, created: u64, pod: Option<&SimPod>) {
        let node = pod
            .map(|p| p.pod.spec.node_name.as_str())
            .filter(|n| !n.is_empty());
        let waiting =
            pod.is_some_and(|p| p.pod.spec.node_name.is_empty() && p.pod.meta.deletion_timestamp.is_none());
        if let Some(c) = self.pending_since.remove(key) {
            self.pending.remove(&(c, key.clone()));
        }
        if waiting {
            self.pending.insert((created, key.clone()));
            self.pending_since.insert(key.clone(), created);
        }
        if self.node_of.get(key).map(String::as_str) != node {
            if let Some(old) = self.node_of.remove(key)
                && let Some(l) = self.load.get_mut(&old)
            {
                *l = l.saturating_sub(1);
            }
            if let Some(n) = node {
                self.node_of.insert(key.clone(), n.to_string());
                *self.load.entry(n.to_string()).or_default() += 1;
            }
        }
    }
}

pub(crate) fn affinity_node(spec: &PodSpec) -> Option<String> {
    spec.required_node_affinity
        .iter()
        .flat_map(|t| &t.match_fields)
        .find(|r| r.key == "metadata.name" && r.operator == "In" && r.values.len() == 1)
        .map(|r| r.values[0].clone())
}

/// The DaemonSet controller's own tolerations (`AddOrUpdateDaemonPodTolerations`), each put
/// in place of the template's tolerations with the same key, operator, value and effect, or
/// added (k8s.io/kubernetes `pkg/apis/core/v1/helper/helpers.go`
/// `AddOrUpdateTolerationInPodSpec`, k8s.io/api `core/v1/toleration.go` `MatchToleration`), so
/// a template's `tolerationSeconds` for the not-ready and unreachable taints gives way to
/// tolerating them forever.
pub(crate) fn add_daemon_tolerations(spec: &mut PodSpec) {
    let mut add = |key: &str, effect: &str| {
        let t = Toleration {
            key: key.into(),
            operator: "Exists".into(),
            value: String::new(),
            effect: effect.into(),
            toleration_seconds: None,
        };
        let mut found = false;
        for o in &mut spec.tolerations {
            if o.key == t.key && o.operator == t.operator && o.value == t.value && o.effect == t.effect {
                *o = t.clone();
                found = true;
            }
        }
        if !found {
            spec.tolerations.push(t);
        }
    };
    add("node.kubernetes.io/not-ready", "NoExecute");
    add("node.kubernetes.io/unreachable", "NoExecute");
    add("node.kubernetes.io/disk-pressure", "NoSchedule");
    add("node.kubernetes.io/memory-pressure", "NoSchedule");
    add("node.kubernetes.io/pid-pressure", "NoSchedule");
    add("node.kubernetes.io/unschedulable", "NoSchedule");
    if spec.host_network {
        add("node.kubernetes.io/network-unavailable", "NoSchedule");
    }
}

/// Whether some toleration tolerates `taint` (upstream `Toleration.ToleratesTaint`).
pub(crate) fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    matching_toleration(tolerations, taint).is_some()
}

/// The first toleration that tolerates `taint`, as k8s.io/kubernetes
/// `pkg/apis/core/v1/helper/helpers.go` `GetMatchingTolerations` picks it for each taint.
pub(crate) fn matching_toleration<'a>(
    tolerations: &'a [Toleration],
    taint: &Taint,
) -> Option<&'a Toleration> {
    tolerations.iter().find(|t| {
        (t.effect.is_empty() || t.effect == taint.effect)
            && match t.operator.as_str() {
                "Exists" => t.key.is_empty() || t.key == taint.key,
                _ => t.key == taint.key && t.value == taint.value,
            }
    })
}

/// Whether a pod with `spec` may run on `node`: `Ok`, or the scheduler's reason.
/// `daemon`: the DaemonSet controller's check (it ignores Ready and cordons through its
/// tolerations).
pub fn node_fits(spec: &PodSpec, node: &Node, daemon: bool) -> Result<(), String> {
    if !spec.node_name.is_empty() && spec.node_name != node.meta.name {
        return Err("didn't match the requested node name".into());
    }
    if !spec
        .node_selector
        .iter()
        .all(|(k, v)| node.meta.labels.get(k) == Some(v))
    {
        return Err("didn't match Pod's node affinity/selector".into());
    }
    if !spec.required_node_affinity.is_empty() {
        let fields: Labels = [("metadata.name".to_string(), node.meta.name.clone())].into();
        let term_ok = |t: &NodeSelectorTerm| {
            (!t.match_expressions.is_empty() || !t.match_fields.is_empty())
                && t.match_expressions
                    .iter()
                    .all(|r| requirement_matches(r, &node.meta.labels))
                && t.match_fields.iter().all(|r| requirement_matches(r, &fields))
        };
        if !spec.required_node_affinity.iter().any(term_ok) {
            return Err("didn't match Pod's node affinity/selector".into());
        }
    }
    let mut taints: Vec<Taint> = node.taints.clone();
    if node.unschedulable {
        taints.push(Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            value: String::new(),
            effect: "NoSchedule".into(),
        });
    }
    // The node lifecycle controller's NoSchedule taints for the Ready condition (upstream
    // `doNoScheduleTaintingPass`: False → not-ready, Unknown → unreachable), applied here rather
    // than written to the Node.
    let condition_taint = match node.ready {
        Some(false) => Some(crate::nodelifecycle::TAINT_NOT_READY),
        None => Some(crate::nodelifecycle::TAINT_UNREACHABLE),
        Some(true) => None,
    };
    if let Some(key) = condition_taint.filter(|_| !daemon) {
        taints.push(Taint {
            key: key.into(),
            value: String::new(),
            effect: "NoSchedule".into(),
        });
    }
    for t in taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        // Admission (DefaultTolerationSeconds) gives every pod a toleration of the not-ready and
        // unreachable NoExecute taints, so they never keep a pod from a node.
        .filter(|t| !(t.effect == "NoExecute" && crate::nodelifecycle::is_condition_taint(&t.key)))
    {
        if !tolerates(&spec.tolerations, t) {
            return Err(if t.value.is_empty() {
                format!("had untolerated taint {{{}: }}", t.key)
            } else {
                format!("had untolerated taint {{{}: {}}}", t.key, t.value)
            });
        }
    }
    Ok(())
}
