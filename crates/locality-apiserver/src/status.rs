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
        let mut e = ApiError::new(422, "Invalid", format!("{display} \"{name}\" is invalid: {why}"))
            .with_details(name, group, kind);
        if let Some(d) = &mut e.details {
            d["causes"] = json!([cause(why)]);
        }
        e
    }

    /// 422 Invalid for several field errors (`whys`, each `field: Type: detail`), worded as
    /// upstream's `NewInvalid`: one error as [`ApiError::invalid`], several in brackets
    /// (`... is invalid: [a, b]`), one cause each.
    pub fn invalid_all(kind: &str, group: &str, name: &str, whys: &[String]) -> Self {
        if let [why] = whys {
            return ApiError::invalid(kind, group, name, why);
        }
        let mut e = ApiError::invalid(kind, group, name, &format!("[{}]", whys.join(", ")));
        if let Some(d) = &mut e.details {
            d["causes"] = Value::Array(whys.iter().map(|w| cause(w)).collect());
        }
        e
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        ApiError::new(
            405,
            "MethodNotAllowed",
            format!("the simulated API server does not allow {method} on {path}"),
        )
    }

    /// 415 UnsupportedMediaType listing the `accepted` media types
    /// (k8s.io/apiserver `pkg/endpoints/handlers/negotiation/errors.go`).
    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {} (got {content_type:?})",
                accepted.join(", ")
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
            "code": self.code,
        });
        // `StatusReasonUnknown` is the empty reason, left out as upstream's `omitempty`.
        if !self.reason.is_empty() {
            s["reason"] = json!(self.reason);
        }
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

/// The `StatusCause` of a field error `field: Type: detail` (k8s.io/apimachinery
/// `pkg/api/errors` `NewInvalid`, which kubectl prints as `field: message`).
fn cause(why: &str) -> Value {
    let (field, message) = match why.split_once(": ") {
        Some((f, m)) if !f.is_empty() && !f.contains(' ') => (f, m),
        _ => ("", why),
    };
    let reason = [
        ("Invalid value", "FieldValueInvalid"),
        ("Forbidden", "FieldValueForbidden"),
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Duplicate value", "FieldValueDuplicate"),
    ]
    .iter()
    .find(|(prefix, _)| message.starts_with(prefix))
    .map_or("FieldValueInvalid", |(_, r)| r);
    json!({"reason": reason, "message": message, "field": field})
}

fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}
