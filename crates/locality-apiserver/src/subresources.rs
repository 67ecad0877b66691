//! Subresources served beside `status`: `deployments/scale`, `replicasets/scale` and
//! `statefulsets/scale`. (`pods/log`
//! and `pods/proxy` have their own modules, `logs` and `proxy`.)

use std::sync::Arc;

use http::{HeaderMap, Method, Response, header};
use hyper::body::Bytes;
use locality_sim::{Kind, Object};
use serde_json::{Value, json};

use crate::Shared;
use crate::encode::{self, Ctx};
use crate::http::{Body, json_response};
use crate::status::ApiError;
use crate::target::{Target, key_of, map_sim_error};

/// `deployments/scale`, `replicasets/scale` and `statefulsets/scale` (`autoscaling/v1` Scale):
/// GET, PUT, PATCH.
pub(crate) fn scale(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    t: &Target,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let name = t.name.clone().unwrap_or_default();
    let kind = t.r.kind.unwrap_or(Kind::Deployment);
    let key = key_of(t, kind, &name);
    let mut sim = shared.lock();
    sim.catch_up();
    let sim = &mut *sim;
    let not_found = || ApiError::not_found(t.r.plural, t.r.group, &name);
    let (current, rv) = sim
        .engine
        .store()
        .get(&key)
        .map(|s| (s.object.clone(), s.resource_version))
        .ok_or_else(not_found)?;
    let scale_doc = |o: &Object, rv: u64, ctx: &Ctx<'_>| {
        let enc = encode::encode(ctx, o, rv);
        let w = o.as_workload();
        json!({
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": o.meta().name, "namespace": o.meta().namespace, "uid": o.meta().uid,
                         "resourceVersion": rv.to_string(), "creationTimestamp": o.meta().creation_timestamp},
            "spec": {"replicas": w.and_then(|w| w.workload.replicas).unwrap_or(1)},
            "status": {"replicas": enc["status"]["replicas"].clone(),
                       "selector": w.map(|w| w.workload.selector.match_labels.iter()
                           .map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")).unwrap_or_default()},
        })
    };
    let replicas = match method.as_str() {
        "GET" => None,
        "PUT" | "PATCH" => {
            let doc: Value = serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("the simulated API server could not decode the body: {e}"))
            })?;
            if method == Method::PATCH {
                let ct = headers
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                if !ct.contains("merge-patch+json") {
                    return Err(ApiError::unsupported_media_type(
                        ct,
                        &[
                            "application/merge-patch+json",
                            "application/strategic-merge-patch+json",
                        ],
                    ));
                }
            }
            let n = doc
                .pointer("/spec/replicas")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    ApiError::invalid("Scale", "autoscaling", &name, "spec.replicas: Required value")
                })?;
            Some(n)
        }
        m => {
            return Err(ApiError::method_not_allowed(
                m,
                &format!("{}/scale", t.r.qualified()),
            ));
        }
    };
    let (obj, rv) = if let Some(n) = replicas {
        let mut o = (*current).clone();
        if let Object::Workload(w) = &mut o {
            w.workload.replicas = Some(n);
        }
        sim.engine
            .update(o, None)
            .map_err(|e| map_sim_error(t, &name, e))?;
        shared.notify(sim);
        sim.engine
            .store()
            .get(&key)
            .map(|s| (s.object.clone(), s.resource_version))
            .ok_or_else(not_found)?
    } else {
        (current, rv)
    };
    let v = scale_doc(&obj, rv, &Ctx::new(&sim.engine, &sim.raw));
    Ok(json_response(200, &v))
}
