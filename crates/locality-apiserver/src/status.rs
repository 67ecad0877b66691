//! `metav1.Status` errors, worded as the real API server words them.

use serde_json::{Value, json};

/// An API error answer: HTTP code, `reason` and message.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason` (`NotFound`, `AlreadyExists`…).
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
    /// `Status.details` (name, group, kind), if any.
    pub details: Option<Value>,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    fn with_details(mut self, name: &str, group: &str, kind: &str) -> Self {
        self.details = Some(json!({"name": name, "group": group, "kind": kind}));
        self
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, "BadRequest", message)
    }

    /// 404 NotFound for `resource` (`pods`) named `name` in `group`.
    pub fn not_found(resource: &str, group: &str, name: &str) -> Self {
        let qualified = qualified(resource, group);
        ApiError::new(404, "NotFound", format!("{qualified} \"{name}\" not found"))
            .with_details(name, group, resource)
    }

    /// 404 NotFound for a path the server does not serve.
    pub fn no_route(path: &str) -> Self {
        ApiError::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource (simulated API: {path})"),
        )
    }

    /// 409 AlreadyExists.
    pub fn already_exists(resource: &str, group: &str, name: &str) -> Self {
        let qualified = qualified(resource, group);
        ApiError::new(
            409,
            "AlreadyExists",
            format!("{qualified} \"{name}\" already exists"),
        )
        .with_details(name, group, resource)
    }

    /// 409 Conflict.
    pub fn conflict(resource: &str, group: &str, name: &str, why: &str) -> Self {
        let qualified = qualified(resource, group);
        ApiError::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {qualified} \"{name}\": {why}"),
        )
        .with_details(name, group, resource)
    }

    /// 422 Invalid.
    pub fn invalid(kind: &str, group: &str, name: &str, why: &str) -> Self {
        let display = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        ApiError::new(422, "Invalid", format!("{display} \"{name}\" is invalid: {why}"))
            .with_details(name, group, kind)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        ApiError::new(
            405,
            "MethodNotAllowed",
            format!("the simulated API server does not allow {method} on {path}"),
        )
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/merge-patch+json, application/strategic-merge-patch+json (got {content_type:?})"
            ),
        )
    }

    /// 410 Expired (a watch from a resourceVersion too old).
    pub fn gone(message: impl Into<String>) -> Self {
        ApiError::new(410, "Expired", message)
    }

    /// 503 ServiceUnavailable (the proxy's "error trying to reach service: …").
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        ApiError::new(503, "ServiceUnavailable", message)
    }

    /// Any code and reason (fault injection).
    pub fn custom(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError::new(code, reason, message)
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(500, "InternalError", message)
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

/// A `Status` of success (what DELETE of a collection or some subresources answer).
pub fn success(details: Value) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}
