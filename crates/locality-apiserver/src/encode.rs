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
use locality_sim::objects::{SimPod, SimWorkload};
use locality_sim::time::{Millis, rfc3339};
use locality_sim::{Engine, Kind, Object, ObjectKey};
use serde_json::{Map, Value, json};

use crate::resources;

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
    /// Pods per controller uid: (total not terminating, ready), computed on first use.
    pub owned: std::cell::OnceCell<HashMap<String, (u32, u32)>>,
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

    fn owned(&self) -> &HashMap<String, (u32, u32)> {
        self.owned.get_or_init(|| {
            let mut m: HashMap<String, (u32, u32)> = HashMap::new();
            let mut rs_owner: HashMap<String, String> = HashMap::new();
            for (_, s) in self.engine.store().list(Kind::ReplicaSet) {
                let meta = s.object.meta();
                if let Some(o) = meta.owner_references.iter().find(|o| o.controller) {
                    rs_owner.insert(meta.uid.clone(), o.uid.clone());
                }
            }
            for (_, s) in self.engine.store().list(Kind::Pod) {
                let Some(p) = s.object.as_pod() else { continue };
                if p.pod.meta.deletion_timestamp.is_some() {
                    continue;
                }
                for o in p.pod.meta.owner_references.iter().filter(|o| o.controller) {
                    let mut add = |uid: &str| {
                        let e = m.entry(uid.to_string()).or_default();
                        e.0 += 1;
                        e.1 += u32::from(p.pod.ready);
                    };
                    add(&o.uid);
                    if let Some(dep) = rs_owner.get(&o.uid) {
                        add(dep);
                    }
                }
            }
            m
        })
    }

    /// The pod spec JSON an object was created with, following owners: the pod's own, else
    /// its ReplicaSet's or DaemonSet's template, else the Deployment's.
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
        Object::Workload(w) => workload(ctx, w, &mut v),
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
    m.insert("generation".into(), json!(1));
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
    let resources = json!({"cpu": cpu, "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"});
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

/// A pod spec: the raw one (containers, probes…) with the model's fields laid over it.
fn pod_spec(spec: &PodSpec, raw: Option<&Value>, grace: u64, name_hint: &str) -> Value {
    let mut out = match raw {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    if !out.contains_key("containers") {
        let ports: Vec<Value> = spec
            .ports
            .iter()
            .map(|p| {
                let mut o = json!({"containerPort": p.container_port, "protocol": p.protocol.as_str()});
                if !p.name.is_empty() {
                    o["name"] = json!(p.name);
                }
                if let Some(h) = p.host_port {
                    o["hostPort"] = json!(h);
                }
                o
            })
            .collect();
        let mut c = json!({"name": name_hint, "image": DEFAULT_IMAGE, "imagePullPolicy": "IfNotPresent"});
        if !ports.is_empty() {
            c["ports"] = Value::Array(ports);
        }
        out.insert("containers".into(), json!([c]));
    }
    let set = |out: &mut Map<String, Value>, k: &str, v: Value| {
        out.insert(k.to_string(), v);
    };
    if !spec.node_name.is_empty() {
        set(&mut out, "nodeName", json!(spec.node_name));
    } else {
        out.remove("nodeName");
    }
    if spec.host_network {
        set(&mut out, "hostNetwork", json!(true));
    }
    if !spec.hostname.is_empty() {
        set(&mut out, "hostname", json!(spec.hostname));
    }
    if !spec.subdomain.is_empty() {
        set(&mut out, "subdomain", json!(spec.subdomain));
    }
    if !spec.node_selector.is_empty() {
        set(&mut out, "nodeSelector", json!(spec.node_selector));
    }
    if !spec.tolerations.is_empty() {
        let t: Vec<Value> = spec
            .tolerations
            .iter()
            .map(|t| {
                let mut o = Map::new();
                for (k, v) in [
                    ("key", &t.key),
                    ("operator", &t.operator),
                    ("value", &t.value),
                    ("effect", &t.effect),
                ] {
                    if !v.is_empty() {
                        o.insert(k.into(), json!(v));
                    }
                }
                if let Some(s) = t.toleration_seconds {
                    o.insert("tolerationSeconds".into(), json!(s));
                }
                Value::Object(o)
            })
            .collect();
        set(&mut out, "tolerations", Value::Array(t));
    }
    if !spec.required_node_affinity.is_empty() && !out.contains_key("affinity") {
        let terms: Vec<Value> = spec
            .required_node_affinity
            .iter()
            .map(|t| {
                let mut o = Map::new();
                if !t.match_expressions.is_empty() {
                    o.insert("matchExpressions".into(), requirements(&t.match_expressions));
                }
                if !t.match_fields.is_empty() {
                    o.insert("matchFields".into(), requirements(&t.match_fields));
                }
                Value::Object(o)
            })
            .collect();
        set(
            &mut out,
            "affinity",
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}),
        );
    }
    for (k, v) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("terminationGracePeriodSeconds", json!(grace)),
        ("enableServiceLinks", json!(true)),
        ("securityContext", json!({})),
    ] {
        out.entry(k.to_string()).or_insert(v);
    }
    Value::Object(out)
}

fn phase_str(p: PodPhase) -> &'static str {
    match p {
        PodPhase::Pending => "Pending",
        PodPhase::Running => "Running",
        PodPhase::Succeeded => "Succeeded",
        PodPhase::Failed => "Failed",
        PodPhase::Unknown => "Unknown",
    }
}

fn pod(ctx: &Ctx<'_>, p: &SimPod, v: &mut Value) {
    let meta = &p.pod.meta;
    let raw = ctx.raw_pod_spec(meta, &meta.namespace, 0);
    let mut spec = pod_spec(
        &p.pod.spec,
        raw,
        p.behaviour.termination_grace_period_seconds,
        "main",
    );
    crate::kube_system::node_pod(ctx, p, &mut spec);
    let created = time_of(meta.creation_timestamp.as_ref());
    let scheduled = !p.pod.spec.node_name.is_empty();
    let running = p.pod.phase == PodPhase::Running;
    let key = ObjectKey::new(Kind::Pod, &meta.namespace, &meta.name);
    let cond = |t: &str, ok: bool| {
        json!({"type": t, "status": if ok { "True" } else { "False" }, "lastProbeTime": null,
               "lastTransitionTime": created})
    };
    let mut conditions = Vec::new();
    if scheduled {
        conditions.push(cond("PodReadyToStartContainers", !p.pod.pod_ips.is_empty()));
        conditions.push(cond("Initialized", true));
        conditions.push(cond("Ready", p.pod.ready));
        conditions.push(cond("ContainersReady", p.pod.ready));
        conditions.push(cond("PodScheduled", true));
    } else {
        let mut c = cond("PodScheduled", false);
        if let Some(why) = ctx.engine.unschedulable_reason(&key) {
            c["reason"] = json!("Unschedulable");
            c["message"] = json!(format!("simulated scheduler: {why}"));
        }
        conditions.push(c);
    }
    let mut status = Map::new();
    status.insert("phase".into(), json!(phase_str(p.pod.phase)));
    status.insert("conditions".into(), Value::Array(conditions));
    status.insert("qosClass".into(), json!("BestEffort"));
    if scheduled {
        let host_ip = ctx
            .engine
            .get(&ObjectKey::new(Kind::Node, "", &p.pod.spec.node_name))
            .and_then(Object::as_node)
            .and_then(|n| n.internal_ips.first().copied());
        if let Some(ip) = host_ip {
            status.insert("hostIP".into(), json!(ip.to_string()));
            status.insert("hostIPs".into(), json!([{"ip": ip.to_string()}]));
        }
        status.insert("startTime".into(), created.clone());
        if let Some(ip) = p.pod.pod_ips.first() {
            status.insert("podIP".into(), json!(ip.to_string()));
            let ips: Vec<Value> = p
                .pod
                .pod_ips
                .iter()
                .map(|ip| json!({"ip": ip.to_string()}))
                .collect();
            status.insert("podIPs".into(), Value::Array(ips));
        }
        let containers = spec
            .get("containers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let statuses: Vec<Value> = containers
            .iter()
            .map(|c| {
                let state = if running {
                    json!({"running": {"startedAt": created}})
                } else if matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed) {
                    {
                    let code = ctx
                        .raw
                        .get(&meta.uid)
                        .and_then(|v| v.get(crate::logs::EXIT_CODE_KEY))
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    let reason = if code == 0 { "Completed" } else { "Error" };
                    json!({"terminated": {"exitCode": code, "reason": reason, "startedAt": created, "finishedAt": created}})
                }
                } else {
                    json!({"waiting": {"reason": "ContainerCreating"}})
                };
                json!({
                    "name": c.get("name").cloned().unwrap_or(json!("main")),
                    "image": c.get("image").cloned().unwrap_or(json!(DEFAULT_IMAGE)),
                    "imageID": "",
                    "containerID": if running { json!(format!("simulated://{}", meta.uid)) } else { Value::Null },
                    "ready": p.pod.ready,
                    "started": running,
                    "restartCount": p.restart_count,
                    "state": state,
                })
            })
            .collect();
        status.insert("containerStatuses".into(), Value::Array(statuses));
    }
    v["spec"] = spec;
    v["status"] = Value::Object(status);
}

fn policy(p: TrafficPolicy) -> &'static str {
    match p {
        TrafficPolicy::Cluster => "Cluster",
        TrafficPolicy::Local => "Local",
    }
}

/// `spec.type` spelling.
pub fn service_type(t: ServiceType) -> &'static str {
    match t {
        ServiceType::ClusterIP => "ClusterIP",
        ServiceType::NodePort => "NodePort",
        ServiceType::LoadBalancer => "LoadBalancer",
        ServiceType::ExternalName => "ExternalName",
    }
}

fn target_port(t: &TargetPort, port: u16) -> Value {
    match t {
        TargetPort::Number(0) => json!(port),
        TargetPort::Number(n) => json!(n),
        TargetPort::Name(n) => json!(n),
    }
}

fn ips(v: &[IpAddr]) -> Value {
    Value::Array(v.iter().map(|ip| json!(ip.to_string())).collect())
}

fn service(s: &Service, v: &mut Value) {
    let mut spec = Map::new();
    spec.insert("type".into(), json!(service_type(s.type_)));
    if let Some(sel) = &s.selector {
        spec.insert("selector".into(), json!(sel));
    }
    let ports: Vec<Value> = s
        .ports
        .iter()
        .map(|p| {
            let mut o = json!({"protocol": p.protocol.as_str(), "port": p.port,
                               "targetPort": target_port(&p.target_port, p.port)});
            if !p.name.is_empty() {
                o["name"] = json!(p.name);
            }
            if p.node_port != 0 {
                o["nodePort"] = json!(p.node_port);
            }
            o
        })
        .collect();
    spec.insert("ports".into(), Value::Array(ports));
    if s.type_ != ServiceType::ExternalName {
        if s.headless {
            spec.insert("clusterIP".into(), json!("None"));
            spec.insert("clusterIPs".into(), json!(["None"]));
        } else if let Some(first) = s.cluster_ips.first() {
            spec.insert("clusterIP".into(), json!(first.to_string()));
            spec.insert("clusterIPs".into(), ips(&s.cluster_ips));
        }
        let fams: Vec<&str> = s.ip_families.iter().map(|f| f.as_str()).collect();
        if !fams.is_empty() {
            spec.insert("ipFamilies".into(), json!(fams));
            let policy = if fams.len() > 1 {
                "RequireDualStack"
            } else {
                "SingleStack"
            };
            spec.insert("ipFamilyPolicy".into(), json!(policy));
        }
        spec.insert("internalTrafficPolicy".into(), json!(policy(s.itp())));
        if matches!(s.type_, ServiceType::NodePort | ServiceType::LoadBalancer) {
            spec.insert("externalTrafficPolicy".into(), json!(policy(s.etp())));
        }
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    if let Some(td) = &s.traffic_distribution {
        spec.insert("trafficDistribution".into(), json!(td));
    }
    if s.publish_not_ready_addresses {
        spec.insert("publishNotReadyAddresses".into(), json!(true));
    }
    if !s.external_ips.is_empty() {
        spec.insert("externalIPs".into(), ips(&s.external_ips));
    }
    if !s.load_balancer_source_ranges.is_empty() {
        spec.insert(
            "loadBalancerSourceRanges".into(),
            json!(s.load_balancer_source_ranges),
        );
    }
    v["spec"] = Value::Object(spec);
    let ingress: Vec<Value> = s
        .load_balancer_ingress
        .iter()
        .map(|i| {
            let mut o = Map::new();
            if let Some(ip) = i.ip {
                o.insert("ip".into(), json!(ip.to_string()));
            }
            if let Some(h) = &i.hostname {
                o.insert("hostname".into(), json!(h));
            }
            if let Some(m) = &i.ip_mode {
                o.insert("ipMode".into(), json!(m));
            }
            Value::Object(o)
        })
        .collect();
    v["status"] = if ingress.is_empty() {
        json!({"loadBalancer": {}})
    } else {
        json!({"loadBalancer": {"ingress": ingress}})
    };
}

fn endpoint(e: &Endpoint) -> Value {
    let mut o = Map::new();
    o.insert("addresses".into(), ips(&e.addresses));
    let mut c = Map::new();
    for (k, val) in [
        ("ready", e.conditions.ready),
        ("serving", e.conditions.serving),
        ("terminating", e.conditions.terminating),
    ] {
        if let Some(b) = val {
            c.insert(k.into(), json!(b));
        }
    }
    o.insert("conditions".into(), Value::Object(c));
    if let Some(h) = &e.hostname {
        o.insert("hostname".into(), json!(h));
    }
    if let Some(n) = &e.node_name {
        o.insert("nodeName".into(), json!(n));
    }
    if let Some(z) = &e.zone {
        o.insert("zone".into(), json!(z));
    }
    if let Some(h) = &e.hints {
        let mut hints = Map::new();
        if !h.for_zones.is_empty() {
            let z: Vec<Value> = h.for_zones.iter().map(|z| json!({"name": z})).collect();
            hints.insert("forZones".into(), Value::Array(z));
        }
        if !h.for_nodes.is_empty() {
            let n: Vec<Value> = h.for_nodes.iter().map(|n| json!({"name": n})).collect();
            hints.insert("forNodes".into(), Value::Array(n));
        }
        o.insert("hints".into(), Value::Object(hints));
    }
    if let Some((kind, ns, name)) = &e.target_ref {
        o.insert(
            "targetRef".into(),
            json!({"kind": kind, "namespace": ns, "name": name}),
        );
    }
    Value::Object(o)
}

fn endpoint_slice(s: &EndpointSlice, v: &mut Value) {
    v["addressType"] = json!(s.address_type.as_str());
    v["endpoints"] = Value::Array(s.endpoints.iter().map(endpoint).collect());
    v["ports"] = Value::Array(
        s.ports
            .iter()
            .map(|p| {
                let mut o = Map::new();
                if let Some(n) = &p.name {
                    o.insert("name".into(), json!(n));
                }
                if let Some(port) = p.port {
                    o.insert("port".into(), json!(port));
                }
                if let Some(proto) = p.protocol {
                    o.insert("protocol".into(), json!(proto.as_str()));
                }
                Value::Object(o)
            })
            .collect(),
    );
}

fn template(ctx: &Ctx<'_>, w: &SimWorkload) -> Value {
    let raw = ctx.raw_pod_spec(&w.workload.meta, &w.workload.meta.namespace, 0);
    let mut labels: Labels = w.workload.template_labels.clone();
    labels.retain(|_, _| true);
    let mut metadata = json!({"labels": labels});
    if !w.template_annotations.is_empty() {
        metadata["annotations"] = json!(w.template_annotations);
    }
    json!({
        "metadata": metadata,
        "spec": pod_spec(&w.workload.template, raw, w.pod_behaviour.termination_grace_period_seconds,
                         &w.workload.meta.name),
    })
}

fn workload(ctx: &Ctx<'_>, w: &SimWorkload, v: &mut Value) {
    let wl = &w.workload;
    let (total, ready) = ctx.owned().get(&wl.meta.uid).copied().unwrap_or_default();
    let mut spec = Map::new();
    spec.insert("selector".into(), label_selector(&wl.selector));
    spec.insert("template".into(), template(ctx, w));
    // Stored as the API server defaults them (pkg/apis/apps/v1/defaults.go
    // `SetDefaults_Deployment`: 25% and 25%; `SetDefaults_DaemonSet`: maxUnavailable 1,
    // maxSurge 0), the values the simulated controllers use.
    let (surge, unavailable) = match wl.kind {
        WorkloadKind::Deployment => ("25%", "25%"),
        _ => ("0", "1"),
    };
    let rolling = || {
        json!({
            "maxSurge": int_or_string(wl.max_surge.as_deref().unwrap_or(surge)),
            "maxUnavailable": int_or_string(wl.max_unavailable.as_deref().unwrap_or(unavailable)),
        })
    };
    let strategy_type = wl
        .update_strategy
        .clone()
        .unwrap_or_else(|| "RollingUpdate".into());
    let strategy = if strategy_type == "RollingUpdate" {
        json!({"type": strategy_type, "rollingUpdate": rolling()})
    } else {
        json!({"type": strategy_type})
    };
    let replicas = wl.replicas.unwrap_or(1);
    match wl.kind {
        WorkloadKind::Deployment => {
            spec.insert("replicas".into(), json!(replicas));
            spec.insert("strategy".into(), strategy);
            spec.insert("revisionHistoryLimit".into(), json!(10));
            spec.insert("progressDeadlineSeconds".into(), json!(600));
            let available = ready == replicas && total == replicas;
            v["status"] = json!({
                "observedGeneration": 1,
                "replicas": total,
                "updatedReplicas": total.min(replicas),
                "readyReplicas": ready,
                "availableReplicas": ready,
                "conditions": [{
                    "type": "Available",
                    "status": if available { "True" } else { "False" },
                    "reason": if available { "MinimumReplicasAvailable" } else { "MinimumReplicasUnavailable" },
                    "message": "simulated Deployment controller",
                }],
            });
        }
        WorkloadKind::ReplicaSet => {
            spec.insert("replicas".into(), json!(replicas));
            v["status"] = json!({
                "observedGeneration": 1,
                "replicas": total,
                "fullyLabeledReplicas": total,
                "readyReplicas": ready,
                "availableReplicas": ready,
            });
        }
        _ => {
            spec.insert("updateStrategy".into(), strategy);
            spec.insert("revisionHistoryLimit".into(), json!(10));
            v["status"] = json!({
                "observedGeneration": 1,
                "currentNumberScheduled": total,
                "desiredNumberScheduled": total,
                "numberMisscheduled": 0,
                "numberReady": ready,
                "numberAvailable": ready,
                "updatedNumberScheduled": total,
            });
        }
    }
    v["spec"] = Value::Object(spec);
}

fn int_or_string(s: &str) -> Value {
    s.parse::<i64>().map_or_else(|_| json!(s), |n| json!(n))
}
