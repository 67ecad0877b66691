//! A resource request's target (resource, namespace, name, subresource), what the client
//! wants back ([`Want`]), and the store's keys and errors in its terms: what the verb
//! handlers share with [`crate::router`], which dispatches to them.

use http::{HeaderMap, header};
use locality_sim::StoreError;
use locality_sim::{Kind, ObjectKey, SimError};

use serde_json::json;

use crate::http::Query;
use crate::resources::{self, Resource};
use crate::status::ApiError;

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
pub(crate) fn parse_target(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
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
        // The store's quota, as etcd's `NOSPACE` alarm (`rpctypes.ErrGRPCNoSpace`) reaches a
        // client: the etcd3 storage returns etcd's error as it is, and k8s.io/apiserver
        // `responsewriters.ErrorToAPIStatus` makes a `500` of an error that is not a
        // `Status`, its reason unknown (empty) and its message etcd's (kubernetes/kubernetes#94029:
        // `resp=500` on every write once the quota is used up; kubectl prints "Error from
        // server: etcdserver: mvcc: database space exceeded").
        SimError::Store(StoreError::SpaceExceeded) => {
            ApiError::custom(500, "", StoreError::SpaceExceeded.to_string())
        }
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
