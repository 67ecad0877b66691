//! One pass of the simulated control plane over the store's new events: which objects each
//! controller must look at (the informers' handlers), then the garbage collector (`gc`), the
//! Deployment and ReplicaSet controllers (`workloads`), the DaemonSet controller
//! (`daemonsets`), the StatefulSet controller (`statefulsets`), the scheduler (`scheduler`), the kubelets (`kubelet`), the EndpointSlice
//! controller (`endpointslices`, the model's `endpointslice::derive_endpoint_slices`) and the
//! cloud load-balancer controller (`cloudlb`). All of them read and write only the store.

use std::collections::{BTreeMap, BTreeSet};

use locality_model::features::ControlPlaneFeatures;
use locality_model::selector::service_selects;

use crate::endpointslices::{SliceSync, Write};
use crate::engine::Engine;
use crate::objects::{Kind, Object, ObjectKey};
use crate::store::EventType;

#[derive(Default)]
struct Dirty {
    /// Services whose EndpointSlices need a sync, and what changed.
    slices: BTreeMap<ObjectKey, SliceSync>,
    all_services: bool,
    workloads: BTreeSet<ObjectKey>,
    all_daemonsets: bool,
    schedule: bool,
    /// Pods with events, sorted and deduplicated before use (a pass over a cluster's start
    /// sees every pod: a sort costs less than a tree).
    pods: Vec<ObjectKey>,
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
                    d.pods.push(k.clone());
                    let alive = ev.event_type != EventType::Deleted;
                    self.ready_since
                        .observe(k, ev.object.as_pod().filter(|_| alive), self.now);
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
                                "StatefulSet" => Kind::StatefulSet,
                                _ => continue,
                            };
                            let owner = ObjectKey::new(kind, &k.namespace, &o.name);
                            if kind == Kind::DaemonSet {
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
                Kind::Deployment | Kind::DaemonSet | Kind::StatefulSet => {
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
        // Deployments first (they scale ReplicaSets), then ReplicaSets, DaemonSets and
        // StatefulSets.
        for kind in [
            Kind::Deployment,
            Kind::ReplicaSet,
            Kind::DaemonSet,
            Kind::StatefulSet,
        ] {
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
                    Kind::StatefulSet => self.sync_stateful_set(&key),
                    _ => self.sync_daemon_set(&key),
                }
            }
        }
        self.scheduler_catch_up();
        if d.schedule || self.scheduler_has_work() {
            self.schedule_pending();
        }
        d.pods.sort_unstable();
        d.pods.dedup();
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
}

impl Engine {
    /// The simulated EndpointSlice controller (`endpointslices::reconcile`): syncs the
    /// EndpointSlices of each Service in `syncs` and writes the result through the store.
    pub(crate) fn sync_endpoint_slices(&mut self, syncs: BTreeMap<ObjectKey, SliceSync>) {
        let features = ControlPlaneFeatures::applying(self.config.kube_version, &self.config.feature_gates);
        let writes = crate::endpointslices::reconcile(&self.store, &mut self.slice_tracker, &features, syncs);
        for w in writes {
            let _ = match w {
                Write::Create(s) => self.create(Object::EndpointSlice(s)).map(drop),
                Write::Update(s) => self.update(Object::EndpointSlice(s), None).map(drop),
                Write::Delete(k) => self.delete(&k),
            };
        }
    }
}
