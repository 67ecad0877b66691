//! `DELETE` with its `DeleteOptions` (see the `write` module docs): grace periods,
//! preconditions, and background, foreground and orphan propagation.

use std::sync::Arc;

use http::Response;
use hyper::body::Bytes;
use locality_model::objects::PodPhase;
use locality_sim::{Kind, Object};
use serde_json::Value;

use crate::encode::{self, Ctx};
use crate::http::{Body, Query, json_response};
use crate::status::ApiError;
use crate::target::{Target, key_of, map_sim_error};
use crate::write::{check_dry_run, current, invalid_options};
use crate::{Shared, Sim};

/// `DeleteOptions`, from the body or else the query.
#[derive(Debug, Default)]
struct DeleteOptions {
    dry_run: bool,
    grace_period_seconds: Option<i64>,
    orphan: bool,
    foreground: bool,
    uid: Option<String>,
    resource_version: Option<String>,
}

fn delete_options(q: &Query, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let (dry, grace, policy, orphan_dependents, uid, rv) = if body.iter().any(|b| !b.is_ascii_whitespace()) {
        let v: Value = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the simulated API server could not decode DeleteOptions: {e}"
            ))
        })?;
        if !v.is_object() {
            return Err(ApiError::bad_request(
                "decoded object cannot be converted to DeleteOptions",
            ));
        }
        let dry: Vec<String> = v["dryRun"]
            .as_array()
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        (
            dry,
            v["gracePeriodSeconds"].as_i64(),
            v["propagationPolicy"].as_str().map(str::to_string),
            v["orphanDependents"].as_bool(),
            v.pointer("/preconditions/uid")
                .and_then(Value::as_str)
                .map(str::to_string),
            v.pointer("/preconditions/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string),
        )
    } else {
        let grace = match q.get("gracePeriodSeconds") {
            None => None,
            Some(s) => Some(
                s.parse::<i64>()
                    .map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds {s:?}")))?,
            ),
        };
        (
            q.get("dryRun").map(|v| vec![v.to_string()]).unwrap_or_default(),
            grace,
            q.get("propagationPolicy").map(str::to_string),
            q.get("orphanDependents").map(|v| v == "true"),
            None,
            None,
        )
    };
    // ValidateDeleteOptions.
    let dry_run = check_dry_run(&dry, "DeleteOptions")?;
    if let Some(p) = &policy
        && !matches!(p.as_str(), "Foreground" | "Background" | "Orphan")
    {
        return Err(invalid_options(
            "DeleteOptions",
            &format!(
                "propagationPolicy: Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
            ),
        ));
    }
    if let (Some(p), Some(_)) = (&policy, orphan_dependents) {
        return Err(invalid_options(
            "DeleteOptions",
            &format!(
                "propagationPolicy: Invalid value: {p:?}: orphanDependents and deletionPropagation cannot be both set"
            ),
        ));
    }
    Ok(DeleteOptions {
        dry_run,
        grace_period_seconds: grace,
        orphan: policy.as_deref() == Some("Orphan") || orphan_dependents == Some(true),
        foreground: policy.as_deref() == Some("Foreground"),
        uid,
        resource_version: rv,
    })
}

/// `DELETE` an object (`delete.go`), with its `DeleteOptions` (see the module docs).
pub(crate) fn delete(
    shared: &Arc<Shared>,
    t: &Target,
    name: &str,
    q: &Query,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let Some(kind) = t.r.kind else {
        return Err(ApiError::not_found(t.r.plural, t.r.group, name));
    };
    let opts = delete_options(q, body)?;
    let mut sim = shared.lock();
    sim.catch_up();
    let key = key_of(t, kind, name);
    let sim = &mut *sim;
    let cur = current(sim, &key).ok_or_else(|| ApiError::not_found(t.r.plural, t.r.group, name))?;
    let failed = |what: &str, given: &str, actual: &str| {
        ApiError::conflict(
            t.r.plural,
            t.r.group,
            name,
            &format!("Precondition failed: {what} in precondition: {given}, {what} in object meta: {actual}"),
        )
    };
    if let Some(uid) = opts.uid.as_deref().filter(|u| *u != cur.uid) {
        return Err(failed("UID", uid, &cur.uid));
    }
    if let Some(rv) = opts
        .resource_version
        .as_deref()
        .filter(|rv| *rv != cur.rv.to_string())
    {
        return Err(failed("ResourceVersion", rv, &cur.rv.to_string()));
    }
    let grace = match (&*cur.obj, opts.grace_period_seconds) {
        // CheckGracefulDelete: unscheduled and terminated pods go at once; negative is 1.
        (Object::Pod(p), _)
            if p.pod.spec.node_name.is_empty()
                || matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed) =>
        {
            Some(0)
        }
        (Object::Pod(_), Some(g)) => Some(u64::try_from(g).unwrap_or(1)),
        _ => None,
    };
    let delete = |engine: &mut locality_sim::Engine| {
        if opts.foreground {
            engine.delete_foreground(&key, grace)
        } else {
            engine.delete_with(&key, grace)
        }
    };
    if opts.dry_run {
        let mut engine = sim.engine.clone();
        delete(&mut engine).map_err(|e| map_sim_error(t, name, e))?;
        let (obj, rv) = engine
            .store()
            .get(&key)
            .map_or((cur.obj.clone(), cur.rv), |s| (s.object.clone(), cur.rv));
        let v = encode::encode(&Ctx::new(&engine, &sim.raw), &obj, rv);
        return Ok(json_response(200, &v));
    }
    if opts.orphan {
        orphan_dependents(sim, &cur.uid);
    }
    delete(&mut sim.engine).map_err(|e| map_sim_error(t, name, e))?;
    let (obj, rv) = sim
        .engine
        .store()
        .get(&key)
        .map_or((cur.obj.clone(), cur.rv), |s| {
            (s.object.clone(), s.resource_version)
        });
    let v = encode::encode(&Ctx::new(&sim.engine, &sim.raw), &obj, rv);
    shared.notify(sim);
    Ok(json_response(200, &v))
}

/// `propagationPolicy: Orphan`: removes the owner references to `owner_uid` from the objects
/// the simulated garbage collector would delete with it (ReplicaSets, Pods, EndpointSlices),
/// as the garbage collector's `orphanDependents` does before the owner goes.
fn orphan_dependents(sim: &mut Sim, owner_uid: &str) {
    let mut dependents = Vec::new();
    for kind in [Kind::ReplicaSet, Kind::Pod, Kind::EndpointSlice] {
        for (_, s) in sim.engine.store().list(kind) {
            if s.object
                .meta()
                .owner_references
                .iter()
                .any(|o| o.uid == owner_uid)
            {
                let mut o = (*s.object).clone();
                o.meta_mut().owner_references.retain(|r| r.uid != owner_uid);
                dependents.push(o);
            }
        }
    }
    for o in dependents {
        // A dependent that changed meanwhile cannot conflict: no precondition.
        let _ = sim.engine.update(o, None);
    }
}
