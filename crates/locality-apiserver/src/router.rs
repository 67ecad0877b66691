//! Routing: the path of a request to discovery, OpenAPI, `pods/log`, `pods/proxy` or a
//! resource (group, version, namespace, name, subresource), and a resource request to its
//! verb's handler (`read`, `write`, `subresources`); simulation errors as API errors.

use std::sync::Arc;

use http::{HeaderMap, Method, Request, Response, header};
use hyper::body::{Bytes, Incoming};
use locality_sim::store::StoreError;
use locality_sim::{Kind, ObjectKey, SimError};
use serde_json::json;

use crate::http::{Body, Query, error_response, json_response, response};
use crate::resources::{self, Resource};
use crate::status::ApiError;
use crate::{Shared, discovery, read, write};

/// A request for a resource: which, where, what.
pub(crate) struct Target {
    /// The resource.
    pub(crate) r: &'static Resource,
    /// The namespace in the path, if any.
    pub(crate) namespace: Option<String>,
    /// The object's name, if any.
    pub(crate) name: Option<String>,
    /// The subresource, if any.
    pub(crate) sub: Option<String>,
}

/// `/api/v1/...` or `/apis/{g}/{v}/...` after the prefix.
fn parse_target(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let (namespace, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some((*ns).to_string()), tail),
        _ => (None, rest),
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some((*n).to_string()), None),
        [p, n, s] => (*p, Some((*n).to_string()), Some((*s).to_string())),
        _ => return None,
    };
    let r = resources::find(group, version, plural)?;
    if namespace.is_some() && !r.namespaced {
        return None;
    }
    Some(Target {
        r,
        namespace,
        name,
        sub,
    })
}

/// Reads the body and answers the request.
pub(crate) async fn route(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = Query::parse(parts.uri.query());
    let body = match crate::http::read_body(&parts.headers, body).await {
        Ok(b) => b,
        Err(e) => {
            // The rest of the body is not read: the connection cannot carry another request
            // (Go's server likewise closes it after a too-large body).
            let mut r = error_response(&e);
            r.headers_mut()
                .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
            return r;
        }
    };
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let method = parts.method.clone();
    let get = method == Method::GET;
    let result = match segs.as_slice() {
        ["version"] if get => Ok(json_response(
            200,
            &discovery::version(shared.lock().engine.config().kube_version),
        )),
        ["healthz" | "livez" | "readyz"] if get => Ok(response(200, "text/plain", Bytes::from_static(b"ok"))),
        ["api"] if get => Ok(json_response(
            200,
            &discovery::core_versions(&shared.addr.to_string()),
        )),
        ["apis"] if get => Ok(json_response(200, &discovery::groups())),
        ["apis", g] if get => discovery::group_doc(g)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["api", v] if get => discovery::resource_list("", v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["apis", g, v] if get => discovery::resource_list(g, v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["openapi", "v3"] if get => Ok(json_response(200, &discovery::openapi_v3_root())),
        ["openapi", "v3", "api", v] if get => discovery::openapi_v3_group_version("", v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        ["openapi", "v3", "apis", g, v] if get => discovery::openapi_v3_group_version(g, v)
            .map(|v| json_response(200, &v))
            .ok_or_else(|| ApiError::no_route(&path)),
        // An empty OpenAPI v2 document (protobuf of no fields): kubectl's fallback validation
        // finds no schema and skips client-side checks.
        ["openapi", "v2"] if get => Ok(response(
            200,
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
            Bytes::new(),
        )),
        // Not a Kubernetes path: the rule tables of a node's simulated kube-proxy, which a
        // real cluster shows only on the node (`iptables-save`), for `sim rules --kubeconfig`.
        ["simulated", "nodes", node, "kube-proxy-rules"] if get => {
            let sim = shared.lock();
            sim.engine
                .rules_text(node)
                .map(|text| response(200, "text/plain; charset=utf-8", Bytes::from(text)))
                .map_err(|_| ApiError::not_found("nodes", "", node))
        }
        ["api", "v1", "namespaces", ns, "pods", name, "log"] if get => {
            crate::logs::pods_log(&shared, ns, name, &query)
        }
        ["api", "v1", "namespaces", ns, "pods", id, "proxy", ..] => {
            let marker = format!("/{id}/proxy");
            let tail = path.find(&marker).map_or("", |i| &path[i + marker.len()..]);
            crate::proxy::pods_proxy(
                &shared,
                &method,
                ns,
                id,
                tail,
                parts.uri.query().unwrap_or_default(),
            )
            .await
        }
        ["api", v, rest @ ..] => match parse_target("", v, rest) {
            Some(t) => resource(&shared, &method, &parts.headers, &query, t, &body).await,
            None => Err(ApiError::no_route(&path)),
        },
        ["apis", g, v, rest @ ..] => match parse_target(g, v, rest) {
            Some(t) => resource(&shared, &method, &parts.headers, &query, t, &body).await,
            None => Err(ApiError::no_route(&path)),
        },
        _ => Err(ApiError::no_route(&path)),
    };
    let answer = result.unwrap_or_else(|e| error_response(&e));
    crate::http::in_form(crate::protobuf::negotiate(&parts.headers), answer)
}

/// How the client wants objects: plain JSON or a `Table`, and what rows carry.
#[derive(Clone, Copy)]
pub(crate) struct Want {
    pub(crate) table: bool,
    pub(crate) include: Include,
    /// JSON or protobuf (a watch's framing; whole answers are converted by [`crate::http::in_form`]).
    pub(crate) output: crate::protobuf::Output,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Include {
    None,
    Metadata,
    Object,
}

pub(crate) fn want(headers: &HeaderMap, q: &Query) -> Want {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let table = accept.split(',').any(|a| a.contains("as=Table"));
    let include = match q.get("includeObject") {
        Some("Object") => Include::Object,
        Some("None") => Include::None,
        _ => Include::Metadata,
    };
    let output = if table {
        crate::protobuf::Output::Json
    } else {
        crate::protobuf::negotiate(headers)
    };
    Want {
        table,
        include,
        output,
    }
}

async fn resource(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    q: &Query,
    t: Target,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let want = want(headers, q);
    if t.r.plural == "configmaps" {
        return crate::configmaps::request(shared, method, &t, q, want.table);
    }
    let body = crate::http::negotiate_body(method, headers, body.clone())?;
    let body = &crate::protobuf::json_body(method, headers, t.sub.as_deref(), t.r, &body)?;
    if t.sub.as_deref() == Some("scale") && matches!(t.r.kind, Some(Kind::Deployment | Kind::ReplicaSet)) {
        return crate::subresources::scale(shared, method, headers, &t, body);
    }
    if t.sub.as_deref().is_some_and(|s| s != "status") {
        return Err(ApiError::no_route(&format!(
            "{}/{}: subresource not served by the simulated API server",
            t.r.plural,
            t.sub.as_deref().unwrap_or_default()
        )));
    }
    match (method.as_str(), &t.name) {
        ("GET", None) if q.flag("watch") && q.get("watch").is_some() => {
            read::watch(shared, &t, q, want).await
        }
        ("GET", None) => read::list(shared, &t, q, want),
        ("GET", Some(name)) => read::get(shared, &t, name, want),
        ("POST", None) => write::create(shared, &t, q, body),
        ("PUT", Some(name)) if t.sub.is_none() => write::update(shared, &t, name, q, body),
        ("PATCH", Some(name)) if t.sub.is_none() => write::patch(shared, &t, name, headers, q, body),
        ("DELETE", Some(name)) if t.sub.is_none() => crate::delete::delete(shared, &t, name, q, body),
        _ => Err(ApiError::method_not_allowed(method.as_str(), t.r.plural)),
    }
}

pub(crate) fn store_kind(t: &Target) -> Option<Kind> {
    t.r.kind
}

pub(crate) fn key_of(t: &Target, kind: Kind, name: &str) -> ObjectKey {
    let ns = if t.r.namespaced {
        t.namespace.clone().unwrap_or_default()
    } else {
        String::new()
    };
    ObjectKey::new(kind, ns, name)
}

pub(crate) fn map_sim_error(t: &Target, name: &str, e: SimError) -> ApiError {
    let r = t.r;
    match e {
        SimError::Store(StoreError::AlreadyExists(_)) => ApiError::already_exists(r.plural, r.group, name),
        SimError::Store(StoreError::NotFound(k))
            if k.kind == Kind::Namespace && r.kind != Some(Kind::Namespace) =>
        {
            ApiError::not_found("namespaces", "", &k.name)
        }
        SimError::Store(StoreError::NotFound(_)) => ApiError::not_found(r.plural, r.group, name),
        SimError::Store(StoreError::Conflict { given, current, .. }) => ApiError::conflict(
            r.plural,
            r.group,
            name,
            &format!(
                "the object has been modified; please apply your changes to the latest version and try again (resourceVersion {given}, current {current})"
            ),
        ),
        SimError::Store(StoreError::Invalid(m)) => ApiError::invalid(r.kind_name, r.group, name, &m),
        SimError::Store(StoreError::Gone { .. }) => ApiError::gone(e.to_string()),
        SimError::Store(StoreError::NamespaceTerminating(ns)) => {
            // NamespaceLifecycle admission (k8s.io/apiserver
            // `pkg/admission/plugin/namespace/lifecycle/admission.go` `Admit`): Forbidden with
            // the cause `NamespaceTerminating`.
            let mut e = ApiError::custom(
                403,
                "Forbidden",
                format!(
                    "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                    r.qualified()
                ),
            );
            e.details = Some(json!({
                "name": name, "group": r.group, "kind": r.plural,
                "causes": [{"reason": "NamespaceTerminating",
                            "message": format!("namespace {ns} is being terminated"),
                            "field": "metadata.namespace"}],
            }));
            e
        }
        other => ApiError::invalid(r.kind_name, r.group, name, &other.to_string()),
    }
}
