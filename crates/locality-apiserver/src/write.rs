//! The writing verbs: create (POST), update (PUT), patch (PATCH: JSON, merge, strategic merge,
//! server-side apply) and delete (DELETE with `DeleteOptions`), each with `dryRun=All`.
//!
//! Mirrors k8s.io/apiserver `pkg/endpoints/handlers/{create,update,patch,delete}.go`: options
//! are validated first (`CreateOptions`/`UpdateOptions`/`PatchOptions`/`DeleteOptions`,
//! `422 Invalid` for an unsupported `dryRun` value, as `ValidateDryRun`), a patch is applied to
//! the object's served JSON and the result goes through the same decoding and validation as
//! an update (`pkg/endpoints/handlers/rest.go` `checkName`, then the immutable-field checks
//! of the `validate` module).
//!
//! **Dry runs** (`dryRun=All`) run the request against a copy of the engine, so they validate,
//! allocate (a Service's cluster IP) and answer exactly as the write would, and change
//! nothing: the store, its resourceVersion and watches are untouched. The answer of a dry-run
//! create has no `resourceVersion`, as upstream's; a dry-run update keeps the current one.
//!
//! **Server-side apply** (`application/apply-patch+yaml`, YAML or JSON body, `fieldManager`
//! required, `force`), simplified from sigs.k8s.io/structured-merge-diff: an apply to a
//! missing object creates it; otherwise the fields the manager applied last time and no longer
//! applies are removed (unless another apply manager owns them too), then the applied
//! configuration is merged as a strategic merge patch (lists with a merge key merge by it,
//! other lists are replaced). Only apply managers own fields: one `managedFields` entry per
//! manager (`operation: Apply`), and updates (PUT, other patches) neither own fields nor take
//! ownership. A conflict is an applied leaf whose value differs from the object's and that
//! another apply manager owns: `409 Conflict` ("Apply failed with N conflict(s): conflict with
//! "M": .spec.replicas") unless `force=true`, which moves the ownership.
//!
//! **Delete options** (body, else query, as upstream): `gracePeriodSeconds` for Pods (0 removes
//! at once, as `kubectl delete --grace-period=0 --force`; an unscheduled or terminated pod is
//! removed at once, as `pkg/registry/core/pod/strategy.go` `CheckGracefulDelete`),
//! `preconditions` (uid, resourceVersion), `propagationPolicy` `Background` (the owner is
//! removed at once, then its dependents), `Orphan` (the dependents' owner references to the
//! object are removed first, so the garbage collector keeps them) and `Foreground` (a
//! Deployment, ReplicaSet or DaemonSet stays, with a `deletionTimestamp` and the
//! `foregroundDeletion` finalizer, until its dependents are gone: `Engine::delete_foreground`;
//! other kinds as `Background`), and the legacy `orphanDependents`.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderMap, Response, header};
use hyper::body::Bytes;
use locality_sim::{Engine, Kind, Object, ObjectKey};
use serde_json::{Value, json};

use crate::encode::{self, Ctx, MANAGED_FIELDS_KEY};
use crate::http::{Body, Query, json_response};
use crate::patch;
use crate::status::ApiError;
use crate::target::{Target, key_of, map_sim_error};
use crate::{Shared, Sim, decode, validate};

/// The patch types served, as `PatchOptions` and the 415 answer list them.
const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// 422 Invalid for request options (`CreateOptions.meta.k8s.io "" is invalid: …`).
pub(crate) fn invalid_options(kind: &str, why: &str) -> ApiError {
    ApiError::invalid(kind, "meta.k8s.io", "", why)
}

/// `ValidateDryRun`: only `All` (k8s.io/apimachinery `pkg/apis/meta/v1/validation`).
pub(crate) fn check_dry_run(values: &[String], options_kind: &str) -> Result<bool, ApiError> {
    if values.iter().any(|v| v != "All") {
        let shown = values
            .iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(invalid_options(
            options_kind,
            &format!("dryRun: Unsupported value: []string{{{shown}}}: supported values: \"All\""),
        ));
    }
    Ok(!values.is_empty())
}

/// The `dryRun` query parameter of a create, update or patch.
fn dry_run_query(q: &Query, options_kind: &str) -> Result<bool, ApiError> {
    let values: Vec<String> = q.get("dryRun").map(|v| vec![v.to_string()]).unwrap_or_default();
    check_dry_run(&values, options_kind)
}

/// The stored object a write starts from.
pub(crate) struct Current {
    pub(crate) obj: Arc<Object>,
    pub(crate) rv: u64,
    pub(crate) uid: String,
}

pub(crate) fn current(sim: &Sim, key: &ObjectKey) -> Option<Current> {
    sim.engine.store().get(key).map(|s| Current {
        obj: s.object.clone(),
        rv: s.resource_version,
        uid: s.uid.clone(),
    })
}

/// Encodes with `raw` temporarily holding `doc` for `uid` (a dry run's answer shows the
/// request's containers and managers without keeping them).
fn encode_with_raw(
    engine: &Engine,
    raw: &mut HashMap<String, Value>,
    uid: &str,
    doc: Value,
    obj: &Object,
    rv: u64,
) -> Value {
    let old = raw.insert(uid.to_string(), doc);
    let v = encode::encode(&Ctx::new(engine, raw), obj, rv);
    match old {
        Some(o) => {
            raw.insert(uid.to_string(), o);
        }
        None => {
            raw.remove(uid);
        }
    }
    v
}

/// The raw JSON to keep for an object written as `doc`: the document without `status`, with
/// the server's own `x-` keys of the previous raw JSON (exit code, managers).
fn raw_doc(sim: &Sim, uid: &str, mut doc: Value, managed: Option<Vec<Value>>) -> Value {
    if let Some(m) = doc.as_object_mut() {
        m.remove("status");
        if let Some(old) = sim.raw.get(uid).and_then(Value::as_object) {
            for (k, v) in old.iter().filter(|(k, _)| k.starts_with("x-")) {
                m.insert(k.clone(), v.clone());
            }
        }
        if let Some(managed) = managed {
            if managed.is_empty() {
                m.remove(MANAGED_FIELDS_KEY);
            } else {
                m.insert(MANAGED_FIELDS_KEY.into(), Value::Array(managed));
            }
        }
    }
    doc
}

// ----- create -----

/// `POST` a new object (`create.go`).
pub(crate) fn create(
    shared: &Arc<Shared>,
    t: &Target,
    q: &Query,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let Some(kind) = t.r.kind else {
        return Err(ApiError::method_not_allowed("POST", &t.r.qualified()));
    };
    let dry = dry_run_query(q, "CreateOptions")?;
    let mut sim = shared.lock();
    sim.catch_up();
    sim.name_seq += 1;
    let suffix = generated_suffix(sim.name_seq);
    let ns = t.namespace.clone().unwrap_or_default();
    if t.r.namespaced && ns.is_empty() {
        return Err(ApiError::bad_request(
            "a namespaced resource must be created in a namespace (simulated API server)",
        ));
    }
    let value = decode::prepare(t.r, &ns, body, &suffix)?;
    let v = create_value(shared, &mut sim, t, kind, value, None, dry)?;
    Ok(json_response(201, &v))
}

/// Creates `value` (prepared) with its managers (an apply that creates), or dry-runs it.
fn create_value(
    shared: &Shared,
    sim: &mut Sim,
    t: &Target,
    kind: Kind,
    value: Value,
    managed: Option<Vec<Value>>,
    dry: bool,
) -> Result<Value, ApiError> {
    crate::limits::check_object_size(&value)?;
    let object = decode::to_object(t.r, &value)?;
    let name = object.meta().name.clone();
    validate::check_object(t.r, &name, &object, &value)?;
    let key = key_of(t, kind, &name);
    let mut stored_value = value.clone();
    if let (Some(m), Some(o)) = (managed, stored_value.as_object_mut())
        && !m.is_empty()
    {
        o.insert(MANAGED_FIELDS_KEY.into(), Value::Array(m));
    }
    if let Some(o) = stored_value.as_object_mut() {
        o.remove("status");
    }
    if dry {
        let mut engine = sim.engine.clone();
        engine.create(object).map_err(|e| map_sim_error(t, &name, e))?;
        let stored = engine
            .store()
            .get(&key)
            .ok_or_else(|| ApiError::internal("created object vanished"))?;
        let (uid, obj, rv) = (stored.uid.clone(), stored.object.clone(), stored.resource_version);
        let mut v = encode_with_raw(&engine, &mut sim.raw, &uid, stored_value, &obj, rv);
        if let Some(m) = v["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        return Ok(v);
    }
    sim.engine
        .create(object)
        .map_err(|e| map_sim_error(t, &name, e))?;
    let stored = sim
        .engine
        .store()
        .get(&key)
        .ok_or_else(|| ApiError::internal("created object vanished"))?;
    let uid = stored.uid.clone();
    let (obj, rv) = (stored.object.clone(), stored.resource_version);
    if kind == Kind::Pod {
        crate::logs::register(sim, &key, &uid, &value);
    }
    sim.raw.insert(uid, stored_value);
    let v = encode::encode(&Ctx::new(&sim.engine, &sim.raw), &obj, rv);
    shared.notify(sim);
    Ok(v)
}

fn generated_suffix(n: u64) -> String {
    const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995;
    (0..5)
        .map(|_| {
            let c = ALPHA[(x % ALPHA.len() as u64) as usize] as char;
            x /= ALPHA.len() as u64;
            c
        })
        .collect()
}

// ----- update -----

/// `PUT` a whole object (`update.go`); `metadata.resourceVersion` is a precondition.
pub(crate) fn update(
    shared: &Arc<Shared>,
    t: &Target,
    name: &str,
    q: &Query,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let Some(kind) = t.r.kind else {
        return Err(ApiError::method_not_allowed("PUT", &t.r.qualified()));
    };
    let dry = dry_run_query(q, "UpdateOptions")?;
    let mut sim = shared.lock();
    sim.catch_up();
    let ns = t.namespace.clone().unwrap_or_default();
    let precondition = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| resource_version_of(&v));
    let value = decode::prepare(t.r, &ns, body, "")?;
    check_name(&value, name)?;
    let key = key_of(t, kind, name);
    let cur = current(&sim, &key).ok_or_else(|| ApiError::not_found(t.r.plural, t.r.group, name))?;
    let v = write_update(
        shared,
        &mut sim,
        t,
        &key,
        name,
        &cur,
        value,
        precondition,
        dry,
        true,
        None,
    )?;
    Ok(json_response(200, &v))
}

fn resource_version_of(v: &Value) -> Option<u64> {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<u64>().ok())
}

/// `checkName` (k8s.io/apiserver `pkg/endpoints/handlers/rest.go`).
fn check_name(value: &Value, name: &str) -> Result<(), ApiError> {
    let got = value["metadata"]["name"].as_str().unwrap_or_default();
    if got != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({got}) does not match the name on the URL ({name})"
        )));
    }
    Ok(())
}

/// Writes `doc` (prepared) over `cur`: decode, immutable-field checks, the engine's update
/// (or a dry run of it), the raw JSON kept. Returns the object's JSON as served.
#[allow(clippy::too_many_arguments)]
fn write_update(
    shared: &Shared,
    sim: &mut Sim,
    t: &Target,
    key: &ObjectKey,
    name: &str,
    cur: &Current,
    doc: Value,
    precondition: Option<u64>,
    dry: bool,
    put: bool,
    managed: Option<Vec<Value>>,
) -> Result<Value, ApiError> {
    // The precondition is checked before validation, as upstream's registry store
    // (`pkg/registry/generic/registry/store.go` `Update`) compares resourceVersions first.
    if let Some(given) = precondition.filter(|p| *p != cur.rv) {
        return Err(map_sim_error(
            t,
            name,
            locality_sim::SimError::Store(locality_sim::StoreError::Conflict {
                key: key.clone(),
                given,
                current: cur.rv,
            }),
        ));
    }
    crate::limits::check_object_size(&doc)?;
    let cur_doc = encode::encode(&Ctx::new(&sim.engine, &sim.raw), &cur.obj, cur.rv);
    let mut doc = doc;
    if t.r.kind == Some(Kind::Service) {
        normalize_cluster_ips(&cur_doc, &mut doc);
    }
    let new = decode::to_object(t.r, &doc)?;
    validate::check_update(t.r, name, &cur.obj, &new, &cur_doc, &doc)?;
    let merged = merge_update(&cur.obj, new, &cur_doc, &doc, put);
    let raw = raw_doc(sim, &cur.uid, doc, managed);
    if dry {
        let mut engine = sim.engine.clone();
        engine
            .update(merged, precondition)
            .map_err(|e| map_sim_error(t, name, e))?;
        let obj = engine
            .store()
            .get(key)
            .map(|s| s.object.clone())
            .ok_or_else(|| ApiError::not_found(t.r.plural, t.r.group, name))?;
        return Ok(encode_with_raw(
            &engine,
            &mut sim.raw,
            &cur.uid,
            raw,
            &obj,
            cur.rv,
        ));
    }
    sim.engine
        .update(merged, precondition)
        .map_err(|e| map_sim_error(t, name, e))?;
    let stored = sim
        .engine
        .store()
        .get(key)
        .ok_or_else(|| ApiError::not_found(t.r.plural, t.r.group, name))?;
    let (obj, rv) = (stored.object.clone(), stored.resource_version);
    sim.raw.insert(cur.uid.clone(), raw);
    let v = encode::encode(&Ctx::new(&sim.engine, &sim.raw), &obj, rv);
    shared.notify(sim);
    Ok(v)
}

/// A Service's `clusterIP` changed alone (an older client's patch) changes `clusterIPs[0]`
/// too, and `clusterIPs` left out keeps the current ones (k8s.io/kubernetes
/// `pkg/registry/core/service/storage/alloc.go` `normalizeClusterIPs`).
fn normalize_cluster_ips(cur_doc: &Value, doc: &mut Value) {
    let (old_ip, old_ips) = (&cur_doc["spec"]["clusterIP"], &cur_doc["spec"]["clusterIPs"]);
    let Some(spec) = doc.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let new_ip = spec.get("clusterIP").cloned().unwrap_or(Value::Null);
    let new_ips = spec.get("clusterIPs").cloned().unwrap_or(Value::Null);
    if new_ips.as_array().is_none_or(Vec::is_empty) && old_ips.is_array() && new_ip == *old_ip {
        spec.insert("clusterIPs".into(), old_ips.clone());
    } else if new_ip != *old_ip && new_ip.as_str().is_some_and(|ip| !ip.is_empty()) && new_ips == *old_ips {
        spec.insert("clusterIPs".into(), json!([new_ip]));
    }
}

/// What an update may change: pods only their labels, annotations, tolerations and owner
/// references (the rest of their spec is immutable, checked before, and their status is the
/// simulated kubelet's); Services keep allocated IPs and node ports; workloads keep their pods'
/// declared behaviour unless the template declares a different one (probes, grace period,
/// `--delay-shutdown`). A PUT without owner references keeps the current ones (`put`); a
/// patch's document is taken as it is.
///
/// An update of the main resource never changes the status, whatever `status` the client
/// sent (or left out), as the registry strategies' `PrepareForUpdate` copy the old status
/// over the new object (k8s.io/kubernetes `pkg/registry/core/service/strategy.go`,
/// `pkg/registry/core/pod/strategy.go`, `pkg/registry/core/node/strategy.go`): a Service keeps
/// the `status.loadBalancer.ingress` the simulated cloud load-balancer controller gave it, a
/// Pod its phase, readiness and IPs, a Node its Ready condition, addresses, allocatable CPU
/// and pods and kubelet version. The status subresource is not writable here.
fn merge_update(current: &Object, mut new: Object, cur_doc: &Value, new_doc: &Value, put: bool) -> Object {
    let cur_meta = current.meta().clone();
    let keep_owners = put && new.meta().owner_references.is_empty();
    match (current, &mut new) {
        (Object::Pod(p), Object::Pod(n)) => {
            let mut kept = p.clone();
            kept.pod.meta.labels = n.pod.meta.labels.clone();
            kept.pod.meta.annotations = n.pod.meta.annotations.clone();
            kept.pod.spec.tolerations = n.pod.spec.tolerations.clone();
            if !keep_owners {
                kept.pod.meta.owner_references = n.pod.meta.owner_references.clone();
            }
            return Object::Pod(kept);
        }
        (Object::Service(s), Object::Service(n)) => {
            n.load_balancer_ingress = s.load_balancer_ingress.clone();
            if n.cluster_ips.is_empty() && !n.headless {
                n.cluster_ips = s.cluster_ips.clone();
                n.ip_families = s.ip_families.clone();
            }
            for p in &mut n.ports {
                if p.node_port == 0
                    && let Some(old) = s
                        .ports
                        .iter()
                        .find(|o| o.port == p.port && o.protocol == p.protocol)
                {
                    p.node_port = old.node_port;
                }
            }
        }
        (Object::Node(o), Object::Node(n)) => {
            n.ready = o.ready;
            n.internal_ips = o.internal_ips.clone();
            n.allocatable_cpu_millis = o.allocatable_cpu_millis;
            n.allocatable_pods = o.allocatable_pods;
            n.kubelet_version = o.kubelet_version.clone();
        }
        (Object::Workload(o), Object::Workload(n)) => {
            let template = |d: &Value| decode::behaviour(&d["spec"]["template"]["spec"]);
            if template(cur_doc) == template(new_doc) {
                n.pod_behaviour = o.pod_behaviour.clone();
            } else {
                n.pod_behaviour.start_delay_ms = o.pod_behaviour.start_delay_ms;
            }
        }
        _ => {}
    }
    if keep_owners {
        new.meta_mut().owner_references = cur_meta.owner_references;
    }
    new
}

// ----- patch -----

#[derive(Clone, Copy, PartialEq, Eq)]
enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

/// `PATCH` (`patch.go`): the patch is applied to the object as served, and the result is
/// written as an update; an apply patch to a missing object creates it.
pub(crate) fn patch(
    shared: &Arc<Shared>,
    t: &Target,
    name: &str,
    headers: &HeaderMap,
    q: &Query,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let Some(kind) = t.r.kind else {
        return Err(ApiError::method_not_allowed("PATCH", &t.r.qualified()));
    };
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let media = ct.split(';').next().unwrap_or_default().trim();
    let pt = match media {
        "application/json-patch+json" => PatchType::Json,
        "application/merge-patch+json" => PatchType::Merge,
        "application/strategic-merge-patch+json" => PatchType::Strategic,
        "application/apply-patch+yaml" => PatchType::Apply,
        _ => return Err(ApiError::unsupported_media_type(&ct, PATCH_TYPES)),
    };
    // ValidatePatchOptions.
    let dry = dry_run_query(q, "PatchOptions")?;
    let manager = q.get("fieldManager").unwrap_or_default().to_string();
    if pt != PatchType::Apply && q.get("force").is_some() {
        return Err(invalid_options(
            "PatchOptions",
            "force: Forbidden: may not be specified for non-apply patch",
        ));
    }
    if pt == PatchType::Apply && manager.is_empty() {
        return Err(invalid_options(
            "PatchOptions",
            "fieldManager: Required value: is required for apply patch",
        ));
    }
    let force = q.flag("force");
    let applied = match pt {
        PatchType::Apply => Some(crate::apply::apply_body(body)?),
        _ => None,
    };
    let mut sim = shared.lock();
    sim.catch_up();
    let ns = t.namespace.clone().unwrap_or_default();
    let key = key_of(t, kind, name);
    let Some(cur) = current(&sim, &key) else {
        let Some(applied) = applied else {
            return Err(ApiError::not_found(t.r.plural, t.r.group, name));
        };
        // Apply creates (`applyPatcher.createNewObject`).
        let value = decode::prepare_value(t.r, &ns, applied.clone(), "")?;
        check_name(&value, name)?;
        let set = patch::field_set(&applied);
        let entry = crate::apply::manager_entry(&sim, t, &manager, &set);
        let v = create_value(shared, &mut sim, t, kind, value, Some(vec![entry]), dry)?;
        return Ok(json_response(201, &v));
    };
    let mut doc = encode::encode(&Ctx::new(&sim.engine, &sim.raw), &cur.obj, cur.rv);
    let mut managed = None;
    match pt {
        PatchType::Json => patch::json_patch(&mut doc, body)?,
        PatchType::Merge | PatchType::Strategic => {
            let p: Value = serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "the simulated API server could not decode the patch: {e}"
                ))
            })?;
            if !p.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            if pt == PatchType::Merge {
                patch::merge_patch(&mut doc, &p);
            } else {
                patch::strategic_merge(&mut doc, &p)?;
            }
        }
        PatchType::Apply => {
            let applied = applied.unwrap_or_default();
            let mut managers = crate::apply::managers_of(&sim, &cur.uid);
            doc = crate::apply::apply(t, name, doc, &applied, &manager, force, &mut managers)?;
            let set = patch::field_set(&applied);
            managers.retain(|m| m["manager"].as_str() != Some(manager.as_str()));
            managers.push(crate::apply::manager_entry(&sim, t, &manager, &set));
            managed = Some(managers);
        }
    }
    let precondition = resource_version_of(&doc);
    let value = decode::prepare_value(t.r, &ns, doc, "")?;
    check_name(&value, name)?;
    let v = write_update(
        shared,
        &mut sim,
        t,
        &key,
        name,
        &cur,
        value,
        precondition,
        dry,
        false,
        managed,
    )?;
    Ok(json_response(200, &v))
}
