//! Routing: the path of a request to discovery, OpenAPI, `pods/log`, `pods/proxy` or a
//! resource (group, version, namespace, name, subresource), and a resource request to its
//! verb's handler (`read`, `write`, `subresources`); simulation errors as API errors.

use std::sync::Arc;

use http::{HeaderMap, Method, Request, Response, header};
use hyper::body::{Bytes, Incoming};
use locality_sim::Kind;

use crate::connections::Conn;
use crate::http::{Body, Query, error_response, json_response, response};
use crate::status::ApiError;
use crate::target::{Target, parse_target, want};
use crate::{Shared, discovery, list_options, read, write};

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
    // The connection answered on (a watcher too slow closes it).
    let conn = parts.extensions.get::<Arc<Conn>>().cloned();
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
        // Not a Kubernetes path: the simulated cluster's clock (unix ms, and how many virtual
        // seconds pass per wall second), so a client such as `verify` waits in cluster time.
        ["simulated", "clock"] if get => {
            let sim = shared.lock();
            Ok(json_response(200, &sim.clock.describe()))
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
            Some(t) => resource(&shared, &method, &parts.headers, &query, t, &body, conn.clone()).await,
            None => Err(ApiError::no_route(&path)),
        },
        ["apis", g, v, rest @ ..] => match parse_target(g, v, rest) {
            Some(t) => resource(&shared, &method, &parts.headers, &query, t, &body, conn.clone()).await,
            None => Err(ApiError::no_route(&path)),
        },
        _ => Err(ApiError::no_route(&path)),
    };
    let answer = result.unwrap_or_else(|e| error_response(&e));
    crate::http::in_form(crate::protobuf::negotiate(&parts.headers), answer)
}

async fn resource(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    q: &Query,
    t: Target,
    body: &Bytes,
    conn: Option<Arc<Conn>>,
) -> Result<Response<Body>, ApiError> {
    let want = want(headers, q);
    if t.r.plural == "configmaps" {
        return crate::configmaps::request(shared, method, &t, q, want.table);
    }
    let body = crate::http::negotiate_body(method, headers, body.clone())?;
    let body = &crate::protobuf::json_body(method, headers, t.sub.as_deref(), t.r, &body)?;
    if t.sub.as_deref() == Some("scale")
        && matches!(
            t.r.kind,
            Some(Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet)
        )
    {
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
            crate::watch::watch(shared, &t, q, want, conn).await
        }
        ("GET", None) => {
            list_options::check_list(q)?;
            fresh_enough(shared, q).await?;
            read::list(shared, &t, q, want).await
        }
        ("GET", Some(name)) => {
            fresh_enough(shared, q).await?;
            read::get(shared, &t, name, want)
        }
        ("POST", None) => write::create(shared, &t, q, body),
        ("PUT", Some(name)) if t.sub.is_none() => write::update(shared, &t, name, q, body),
        ("PATCH", Some(name)) if t.sub.is_none() => write::patch(shared, &t, name, headers, q, body),
        ("DELETE", Some(name)) if t.sub.is_none() => crate::delete::delete(shared, &t, name, q, body),
        _ => Err(ApiError::method_not_allowed(method.as_str(), t.r.plural)),
    }
}

/// A get or list at a `resourceVersion` (not `continue`d) waits for the store to reach it, as
/// the real watch cache does (see [`list_options::wait_until_fresh`]).
async fn fresh_enough(shared: &Arc<Shared>, q: &Query) -> Result<(), ApiError> {
    let continuing = q.get("continue").is_some_and(|c| !c.is_empty());
    match list_options::resource_version(q)? {
        Some(rv) if !continuing => {
            list_options::wait_until_fresh(shared, rv, list_options::RESOURCE_VERSION_WAIT).await
        }
        _ => Ok(()),
    }
}
