//! Pods and the workloads that own them (Deployments, ReplicaSets, DaemonSets, StatefulSets)
//! as JSON.

use super::*;
use crate::stored::pod_spec_defaults;

/// A pod spec: the raw one (containers, probes…) with the model's fields laid over it.
pub(super) fn pod_spec(spec: &PodSpec, raw: Option<&Value>, grace: u64, name_hint: &str) -> Value {
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
    pod_spec_defaults(&mut out, grace);
    Value::Object(out)
}

pub(super) fn phase_str(p: PodPhase) -> &'static str {
    match p {
        PodPhase::Pending => "Pending",
        PodPhase::Running => "Running",
        PodPhase::Succeeded => "Succeeded",
        PodPhase::Failed => "Failed",
        PodPhase::Unknown => "Unknown",
    }
}

pub(super) fn pod(ctx: &Ctx<'_>, p: &SimPod, v: &mut Value) {
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

pub(super) fn template(ctx: &Ctx<'_>, w: &SimWorkload) -> Value {
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

pub(super) fn workload(ctx: &Ctx<'_>, w: &SimWorkload, rv: u64, v: &mut Value) {
    let wl = &w.workload;
    let owned = ctx.owned().get(&wl.meta.uid).cloned().unwrap_or_default();
    let (total, ready, updated) = (owned.total, owned.ready, owned.updated);
    // The generation the simulated controllers have acted on: this one once they have read
    // the write that made it (`status.observedGeneration`; 0 before the first).
    let written = Kind::of_workload(wl.kind)
        .and_then(|k| {
            let key = ObjectKey::new(k, &wl.meta.namespace, &wl.meta.name);
            ctx.engine.store().get(&key)
        })
        .map_or(rv, |s| s.generation_rv.min(rv));
    let observed = if ctx.engine.controllers_have_read(written) {
        w.generation
    } else {
        w.generation - 1
    };
    // `availableReplicas`, `numberAvailable`: Ready for `minReadySeconds` (`IsPodAvailable`).
    let available = owned.available(wl.min_ready_seconds, ctx.engine.now());
    let mut spec = Map::new();
    spec.insert("selector".into(), label_selector(&wl.selector));
    spec.insert("template".into(), template(ctx, w));
    // Stored as the API server defaults them (`with_api_defaults`: 25% and 25% for a
    // Deployment, maxSurge 0 and maxUnavailable 1 for a DaemonSet), the values the simulated
    // controllers use.
    let defaulted = locality_sim::with_api_defaults(w);
    let d = &defaulted.workload;
    let rolling = || {
        json!({
            "maxSurge": int_or_string(d.max_surge.as_deref().unwrap_or("0")),
            "maxUnavailable": int_or_string(d.max_unavailable.as_deref().unwrap_or("1")),
        })
    };
    let strategy_type = d
        .update_strategy
        .clone()
        .unwrap_or_else(|| "RollingUpdate".into());
    let strategy = if strategy_type == "RollingUpdate" {
        json!({"type": strategy_type, "rollingUpdate": rolling()})
    } else {
        json!({"type": strategy_type})
    };
    let replicas = wl.replicas.unwrap_or(1);
    if wl.min_ready_seconds > 0 {
        spec.insert("minReadySeconds".into(), json!(wl.min_ready_seconds));
    }
    match wl.kind {
        WorkloadKind::Deployment => {
            spec.insert("replicas".into(), json!(replicas));
            spec.insert("strategy".into(), strategy);
            spec.insert("revisionHistoryLimit".into(), json!(10));
            spec.insert("progressDeadlineSeconds".into(), json!(600));
            let all_available = available == replicas && total == replicas;
            v["status"] = json!({
                "observedGeneration": observed,
                "replicas": total,
                "updatedReplicas": updated,
                "readyReplicas": ready,
                "availableReplicas": available,
                "conditions": [{
                    "type": "Available",
                    "status": if all_available { "True" } else { "False" },
                    "reason": if all_available { "MinimumReplicasAvailable" } else { "MinimumReplicasUnavailable" },
                    "message": "simulated Deployment controller",
                }],
            });
        }
        WorkloadKind::ReplicaSet => {
            spec.insert("replicas".into(), json!(replicas));
            v["status"] = json!({
                "observedGeneration": observed,
                "replicas": total,
                "fullyLabeledReplicas": total,
                "readyReplicas": ready,
                "availableReplicas": available,
            });
        }
        WorkloadKind::StatefulSet => stateful_set(ctx, w, observed, &mut spec, v),
        WorkloadKind::DaemonSet => {
            spec.insert("updateStrategy".into(), strategy);
            spec.insert("revisionHistoryLimit".into(), json!(10));
            v["status"] = json!({
                "observedGeneration": observed,
                "currentNumberScheduled": total,
                "desiredNumberScheduled": total,
                "numberMisscheduled": 0,
                "numberReady": ready,
                "numberAvailable": available,
                "updatedNumberScheduled": updated,
            });
        }
    }
    v["spec"] = Value::Object(spec);
}

/// A StatefulSet's `spec` and `status`: the spec as `SetDefaults_StatefulSet`
/// (pkg/apis/apps/v1/defaults.go) leaves it (`OrderedReady`, `RollingUpdate` with `partition:
/// 0`, and `maxUnavailable: 1` only while the `MaxUnavailableStatefulSet` gate is on; without
/// it the API server drops the field, `dropStatefulSetDisabledFields`), the fields the
/// simulation does not model (`serviceName`, `volumeClaimTemplates`, `ordinals`) as created;
/// the status as the simulated controller computes it (`computeReplicaStatus`).
fn stateful_set(ctx: &Ctx<'_>, w: &SimWorkload, observed: i64, spec: &mut Map<String, Value>, v: &mut Value) {
    let wl = &w.workload;
    let raw = ctx.raw.get(&wl.meta.uid).map(|r| &r["spec"]);
    spec.insert("replicas".into(), json!(wl.replicas.unwrap_or(1)));
    for field in ["serviceName", "volumeClaimTemplates", "ordinals"] {
        if let Some(x) = raw.and_then(|r| r.get(field)).filter(|x| !x.is_null()) {
            spec.insert(field.into(), x.clone());
        }
    }
    spec.insert(
        "podManagementPolicy".into(),
        json!(wl.pod_management_policy.as_str()),
    );
    let strategy_type = wl.update_strategy.as_deref().unwrap_or("RollingUpdate");
    let strategy = if strategy_type == "RollingUpdate" {
        let mut rolling = json!({"partition": wl.partition.unwrap_or(0)});
        if ctx.engine.max_unavailable_stateful_set() {
            rolling["maxUnavailable"] = int_or_string(wl.max_unavailable.as_deref().unwrap_or("1"));
        }
        json!({"type": strategy_type, "rollingUpdate": rolling})
    } else {
        json!({"type": strategy_type})
    };
    spec.insert("updateStrategy".into(), strategy);
    spec.insert("revisionHistoryLimit".into(), json!(10));
    let retention = raw
        .and_then(|r| r.get("persistentVolumeClaimRetentionPolicy"))
        .filter(|x| x.is_object())
        .cloned()
        .unwrap_or_else(|| json!({"whenDeleted": "Retain", "whenScaled": "Retain"}));
    spec.insert("persistentVolumeClaimRetentionPolicy".into(), retention);
    let key =
        locality_sim::ObjectKey::new(locality_sim::Kind::StatefulSet, &wl.meta.namespace, &wl.meta.name);
    let st = ctx.engine.stateful_set_status(&key).unwrap_or_default();
    v["status"] = json!({
        "observedGeneration": observed,
        "replicas": st.replicas,
        "readyReplicas": st.ready_replicas,
        "currentReplicas": st.current_replicas,
        "updatedReplicas": st.updated_replicas,
        "availableReplicas": st.available_replicas,
        "currentRevision": st.current_revision,
        "updateRevision": st.update_revision,
        "collisionCount": 0,
    });
}

pub(super) fn int_or_string(s: &str) -> Value {
    s.parse::<i64>().map_or_else(|_| json!(s), |n| json!(n))
}
