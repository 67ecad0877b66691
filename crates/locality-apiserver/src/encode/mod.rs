//! The simulated store's objects as real Kubernetes JSON (`v1`, `apps/v1`,
//! `discovery.k8s.io/v1`).
//!
//! The model keeps only what decides routing, so fields the model does not hold (container
//! images, commands, probes) come from the JSON the object was created with, when it was
//! created through this API server (its pods inherit them from their workload's template).

use std::collections::HashMap;
use std::net::IpAddr;

use locality_model::objects::{
    Endpoint, EndpointSlice, LabelSelector, Labels, Node, ObjectMeta, PodPhase, PodSpec, SelectorRequirement,
    Service, ServiceType, TargetPort, TrafficPolicy, WorkloadKind,
};
use locality_sim::time::{Millis, rfc3339};
use locality_sim::{Engine, Kind, Object, ObjectKey};
use locality_sim::{LABEL_CONTROLLER_REVISION_HASH, LABEL_POD_TEMPLATE_HASH, template_hash};
use locality_sim::{SimPod, SimWorkload};
use serde_json::{Map, Value, json};

use crate::resources;

mod network;
mod pods;

pub use network::service_type;
use network::{endpoint_slice, service};
use pods::{pod, workload};

/// Key in an object's raw JSON holding its server-side apply managers (`metadata.managedFields`
/// entries; keys starting with `x-` are the server's own and not served).
pub(crate) const MANAGED_FIELDS_KEY: &str = "x-locality-sim-managed-fields";

/// Image of a pod whose creator gave none (controller pods of topology workloads).
pub const DEFAULT_IMAGE: &str = "registry.k8s.io/e2e-test-images/agnhost:2.53";

/// What encoding needs beyond the object: the engine (owners, nodes, pod status) and the
/// JSON objects were created with, by uid.
pub struct Ctx<'a> {
    /// The engine.
    pub engine: &'a Engine,
    /// Objects as created through the API, by uid.
    pub raw: &'a HashMap<String, Value>,
    /// Pods per controller uid, computed on first use.
    pub owned: std::cell::OnceCell<HashMap<String, Owned>>,
}

/// The pods a controller owns (a Deployment's through its ReplicaSets), not terminating.
#[derive(Debug, Clone, Default)]
pub struct Owned {
    /// How many.
    pub total: u32,
    /// How many are Ready.
    pub ready: u32,
    /// How many run the workload's current template (a DaemonSet's pods with its current
    /// `controller-revision-hash`, a Deployment's in the ReplicaSet of its current
    /// `pod-template-hash`; every pod of the others).
    pub updated: u32,
    /// When each Ready one became Ready, as the simulated controllers saw it (`None`: not
    /// seen yet).
    pub ready_since: Vec<Option<Millis>>,
}

impl Owned {
    /// How many have been Ready for `min_ready_seconds` at `now` (`IsPodAvailable`).
    pub fn available(&self, min_ready_seconds: u32, now: Millis) -> u32 {
        if min_ready_seconds == 0 {
            return self.ready;
        }
        let min_ready_ms = u64::from(min_ready_seconds) * 1000;
        self.ready_since
            .iter()
            .filter(|t| t.is_some_and(|t| t + min_ready_ms <= now))
            .count() as u32
    }
}

impl<'a> Ctx<'a> {
    /// A context.
    pub fn new(engine: &'a Engine, raw: &'a HashMap<String, Value>) -> Self {
        Ctx {
            engine,
            raw,
            owned: std::cell::OnceCell::new(),
        }
    }

    fn owned(&self) -> &HashMap<String, Owned> {
        self.owned.get_or_init(|| {
            let mut m: HashMap<String, Owned> = HashMap::new();
            // Per ReplicaSet uid: its Deployment's uid, and whether it holds the Deployment's
            // current template.
            let mut rs_owner: HashMap<String, (String, bool)> = HashMap::new();
            // Per DaemonSet uid: the revision hash of its current template.
            let mut revision: HashMap<String, String> = HashMap::new();
            let current: HashMap<&str, String> = self
                .engine
                .store()
                .list(Kind::Deployment)
                .filter_map(|(_, s)| s.object.as_workload())
                .map(|d| (d.workload.meta.uid.as_str(), template_hash(d)))
                .collect();
            for (_, s) in self.engine.store().list(Kind::ReplicaSet) {
                let meta = s.object.meta();
                if let Some(o) = meta.owner_references.iter().find(|o| o.controller) {
                    let hash = meta.labels.get(LABEL_POD_TEMPLATE_HASH);
                    let now = current.get(o.uid.as_str()).is_some_and(|h| Some(h) == hash);
                    rs_owner.insert(meta.uid.clone(), (o.uid.clone(), now));
                }
            }
            for (_, s) in self.engine.store().list(Kind::DaemonSet) {
                if let Some(d) = s.object.as_workload() {
                    revision.insert(d.workload.meta.uid.clone(), template_hash(d));
                }
            }
            for (_, s) in self.engine.store().list(Kind::Pod) {
                let Some(p) = s.object.as_pod() else { continue };
                if p.pod.meta.deletion_timestamp.is_some() {
                    continue;
                }
                let since = p.pod.ready.then(|| {
                    self.engine.pod_ready_since(&ObjectKey::new(
                        Kind::Pod,
                        &p.pod.meta.namespace,
                        &p.pod.meta.name,
                    ))
                });
                for o in p.pod.meta.owner_references.iter().filter(|o| o.controller) {
                    let mut add = |uid: &str, updated: bool| {
                        let e = m.entry(uid.to_string()).or_default();
                        e.total += 1;
                        e.updated += u32::from(updated);
                        if let Some(t) = since {
                            e.ready += 1;
                            e.ready_since.push(t);
                        }
                    };
                    let revision_now = revision
                        .get(&o.uid)
                        .is_none_or(|h| p.pod.meta.labels.get(LABEL_CONTROLLER_REVISION_HASH) == Some(h));
                    add(&o.uid, revision_now);
                    if let Some((dep, now)) = rs_owner.get(&o.uid) {
                        add(dep, *now);
                    }
                }
            }
            m
        })
    }

    /// The pod spec JSON an object was created with, following owners: the pod's own, else
    /// its ReplicaSet's, DaemonSet's or StatefulSet's template, else the Deployment's.
    pub(crate) fn raw_pod_spec(&self, meta: &ObjectMeta, namespace: &str, depth: u8) -> Option<&'a Value> {
        if let Some(v) = self.raw.get(&meta.uid) {
            let spec = v.get("spec")?;
            return spec.get("template").and_then(|t| t.get("spec")).or(Some(spec));
        }
        if depth > 2 {
            return None;
        }
        let owner = meta.owner_references.iter().find(|o| o.controller)?;
        let kind = match owner.kind.as_str() {
            "ReplicaSet" => Kind::ReplicaSet,
            "Deployment" => Kind::Deployment,
            "DaemonSet" => Kind::DaemonSet,
            "StatefulSet" => Kind::StatefulSet,
            _ => return None,
        };
        let stored = self.engine.get(&ObjectKey::new(kind, namespace, &owner.name))?;
        let spec = self.raw_pod_spec(stored.meta(), namespace, depth + 1)?;
        Some(spec)
    }
}

/// The object's JSON with `metadata.resourceVersion` = `rv`.
pub fn encode(ctx: &Ctx<'_>, object: &Object, rv: u64) -> Value {
    let Some(kind) = object.kind() else {
        return Value::Null;
    };
    let r = resources::for_kind(kind);
    let mut v = json!({"kind": r.kind_name, "apiVersion": r.api_version()});
    v["metadata"] = metadata(object.meta(), rv, kind, object);
    if let Some(managed) = ctx
        .raw
        .get(&object.meta().uid)
        .and_then(|raw| raw.get(MANAGED_FIELDS_KEY))
        .and_then(Value::as_array)
    {
        let entries: Vec<Value> = managed
            .iter()
            .map(|e| {
                let mut e = e.clone();
                if let Some(m) = e.as_object_mut() {
                    m.retain(|k, _| !k.starts_with("x-"));
                }
                e
            })
            .collect();
        v["metadata"]["managedFields"] = Value::Array(entries);
    }
    if let Object::Pod(_) = object
        && object.meta().deletion_timestamp.is_some()
        && let Some(key) = object.key()
        && let Some(g) = ctx.engine.deletion_grace_period_seconds(&key)
    {
        v["metadata"]["deletionGracePeriodSeconds"] = json!(g);
    }
    match object {
        Object::Namespace(_) => {
            v["spec"] = json!({"finalizers": ["kubernetes"]});
            let phase = if object.meta().deletion_timestamp.is_some() {
                "Terminating"
            } else {
                "Active"
            };
            v["status"] = json!({"phase": phase});
        }
        Object::Node(n) => node(ctx, n, &mut v),
        Object::Pod(p) => pod(ctx, p, &mut v),
        Object::Service(s) => {
            service(s, &mut v);
            // The model does not keep `spec.externalName`: the JSON the Service was written with does.
            if s.type_ == ServiceType::ExternalName
                && let Some(name) = ctx
                    .raw
                    .get(&s.meta.uid)
                    .and_then(|raw| raw.pointer("/spec/externalName"))
                    .filter(|n| n.is_string())
            {
                v["spec"]["externalName"] = name.clone();
            }
        }
        Object::EndpointSlice(s) => endpoint_slice(s, &mut v),
        Object::Workload(w) => workload(ctx, w, rv, &mut v),
        Object::Stored(o) => crate::stored::encode(o, &mut v),
    }
    v
}

/// `metadata` (also for Table rows' `PartialObjectMetadata`).
pub fn metadata(meta: &ObjectMeta, rv: u64, kind: Kind, object: &Object) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(meta.name));
    if !kind.cluster_scoped() {
        m.insert("namespace".into(), json!(meta.namespace));
    }
    m.insert("uid".into(), json!(meta.uid));
    m.insert("resourceVersion".into(), json!(rv.to_string()));
    let generation = match object {
        Object::Workload(w) => w.generation,
        _ => 1,
    };
    m.insert("generation".into(), json!(generation));
    if let Some(t) = &meta.creation_timestamp {
        m.insert("creationTimestamp".into(), json!(t));
    }
    if let Some(t) = &meta.deletion_timestamp {
        m.insert("deletionTimestamp".into(), json!(t));
        if let Object::Pod(p) = object {
            m.insert(
                "deletionGracePeriodSeconds".into(),
                json!(p.behaviour.termination_grace_period_seconds),
            );
        }
        // A workload still there while deleting waits for its dependents (a foreground
        // deletion, `Engine::delete_foreground`), as the garbage collector's finalizer says.
        if let Object::Workload(_) = object {
            m.insert("finalizers".into(), json!(["foregroundDeletion"]));
        }
    }
    if !meta.labels.is_empty() {
        m.insert("labels".into(), json!(meta.labels));
    }
    if !meta.annotations.is_empty() {
        m.insert("annotations".into(), json!(meta.annotations));
    }
    if !meta.owner_references.is_empty() {
        let refs: Vec<Value> = meta
            .owner_references
            .iter()
            .map(|o| {
                let api = match o.kind.as_str() {
                    "ReplicaSet" | "Deployment" | "DaemonSet" | "StatefulSet" => "apps/v1",
                    _ => "v1",
                };
                json!({"apiVersion": api, "kind": o.kind, "name": o.name, "uid": o.uid,
                       "controller": o.controller, "blockOwnerDeletion": true})
            })
            .collect();
        m.insert("ownerReferences".into(), Value::Array(refs));
    }
    Value::Object(m)
}

/// CPU millis as a quantity (`4`, `3500m`).
pub fn cpu_quantity(millis: u64) -> String {
    if millis.is_multiple_of(1000) {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

fn time_of(t: Option<&String>) -> Value {
    t.map_or(Value::Null, |t| json!(t))
}

fn node(ctx: &Ctx<'_>, n: &Node, v: &mut Value) {
    let mut spec = Map::new();
    if let Some((v4, v6)) = ctx.engine.pod_cidrs(&n.meta.name) {
        spec.insert("podCIDR".into(), json!(v4));
        let cidrs = if ctx.engine.config().dual_stack {
            vec![v4, v6]
        } else {
            vec![v4]
        };
        spec.insert("podCIDRs".into(), json!(cidrs));
    }
    spec.insert(
        "providerID".into(),
        json!(format!("locality-sim://{}", n.meta.name)),
    );
    if !n.taints.is_empty() {
        let taints: Vec<Value> = n
            .taints
            .iter()
            .map(|t| {
                let mut o = json!({"key": t.key, "effect": t.effect});
                if !t.value.is_empty() {
                    o["value"] = json!(t.value);
                }
                o
            })
            .collect();
        spec.insert("taints".into(), Value::Array(taints));
    }
    if n.unschedulable {
        spec.insert("unschedulable".into(), json!(true));
    }
    v["spec"] = Value::Object(spec);
    let mut addresses: Vec<Value> = n
        .internal_ips
        .iter()
        .map(|ip| json!({"type": "InternalIP", "address": ip.to_string()}))
        .collect();
    addresses.push(json!({"type": "Hostname", "address": n.meta.name}));
    let cpu = cpu_quantity(n.allocatable_cpu_millis.unwrap_or(4000));
    let pods = n.max_pods().to_string();
    let resources = json!({"cpu": cpu, "memory": "16Gi", "pods": pods, "ephemeral-storage": "100Gi"});
    let times = ctx
        .engine
        .node_ready_condition_times(&n.meta.name)
        .unwrap_or_default();
    let at = |t: Option<Millis>| {
        t.map_or_else(
            || time_of(n.meta.creation_timestamp.as_ref()),
            |t| json!(rfc3339(t)),
        )
    };
    let ready = match n.ready {
        Some(true) => json!({"type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "simulated kubelet is posting ready status"}),
        Some(false) => json!({"type": "Ready", "status": "False", "reason": "KubeletNotReady",
            "message": "simulated node is not ready"}),
        None => json!({"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "simulated kubelet stopped posting node status"}),
    };
    // The simulated node lifecycle's times (`nodelifecycle::ReadyConditionTimes`), the Node's
    // creation while nothing happened since.
    let mut ready = ready;
    ready["lastHeartbeatTime"] = at(times.last_heartbeat);
    ready["lastTransitionTime"] = at(times.last_transition);
    let os = n
        .meta
        .labels
        .get("kubernetes.io/os")
        .map_or("linux", String::as_str);
    let arch = n
        .meta
        .labels
        .get("kubernetes.io/arch")
        .map_or("amd64", String::as_str);
    v["status"] = json!({
        "addresses": addresses,
        "allocatable": resources,
        "capacity": resources,
        "conditions": [ready],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": arch,
            "bootID": "",
            "containerRuntimeVersion": "simulated://1.0.0",
            "kernelVersion": "simulated",
            "kubeProxyVersion": "",
            "kubeletVersion": n.kubelet_version.clone().unwrap_or_else(|| "v1.35.0".into()),
            "machineID": "",
            "operatingSystem": os,
            "osImage": "locality simulated node",
            "systemUUID": "",
        },
    });
}

fn requirements(reqs: &[SelectorRequirement]) -> Value {
    Value::Array(
        reqs.iter()
            .map(|r| {
                let mut o = json!({"key": r.key, "operator": r.operator});
                if !r.values.is_empty() {
                    o["values"] = json!(r.values);
                }
                o
            })
            .collect(),
    )
}

/// `metav1.LabelSelector` JSON.
pub fn label_selector(s: &LabelSelector) -> Value {
    let mut o = Map::new();
    if !s.match_labels.is_empty() {
        o.insert("matchLabels".into(), json!(s.match_labels));
    }
    if !s.match_expressions.is_empty() {
        o.insert("matchExpressions".into(), requirements(&s.match_expressions));
    }
    Value::Object(o)
}
