//! The limits a real API server puts on what one request may cost, with the status code and
//! `Status` reason it answers when one is exceeded, plus the bounds of the simulated
//! workloads (netexec `/dial`, probe loops) that keep one request from holding the server.
//!
//! Every limit is a named constant citing the upstream constant it copies; the timeouts can be
//! shortened through [`Limits`] (tests), the sizes cannot.

use std::time::Duration;

use serde_json::Value;

use crate::status::ApiError;

/// Largest request body read: 3 MiB, k8s.io/apiserver `pkg/server/config.go`
/// `MaxRequestBodyBytes` (twice etcd's 1.5 MiB request limit, as JSON is larger than the
/// protobuf stored). Beyond it: `413 RequestEntityTooLarge` "Request entity too large: limit
/// is 3145728", as `pkg/endpoints/handlers/rest.go` `limitedReadBody` answers.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Time a client has to send a request's headers once the server waits for them (a new
/// connection, or a kept-alive one between requests): 32 s, k8s.io/apiserver
/// `pkg/server/secure_serving.go` `ReadHeaderTimeout` ("just shy of
/// requestTimeoutUpperBound"). The connection is then closed without an answer, as Go's
/// `http.Server` does. hyper starts this timer whenever it waits for a request head, so it
/// also closes a kept-alive connection left idle that long (Go's `IdleTimeout` there is 90 s;
/// clients open a new connection).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// Time a request that is not long-running has to complete, reading its body included: 60 s,
/// k8s.io/apiserver `pkg/server/config.go` `RequestTimeout`. Beyond it: `504 Timeout`
/// "request did not complete within requested timeout", as `pkg/server/filters/timeout.go`
/// answers. Long-running requests (watches, `pods/log`, `pods/proxy`, as kube-apiserver's
/// `LongRunningFunc`) are not bounded by it.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Most operations in one JSON patch: 10,000, k8s.io/apiserver
/// `pkg/endpoints/handlers/patch.go` `maxJSONPatchOperations`. Beyond it: `413
/// RequestEntityTooLarge` "The allowed maximum operations in a JSON patch is 10000, got N".
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// Most bytes the `copy` operations of one JSON patch may add, counted as the JSON size of
/// each copied value: 3 MiB, k8s.io/apiserver `pkg/server/config.go` `JSONPatchMaxCopyBytes`
/// (installed as evanphx/json-patch's `AccumulatedCopySizeLimit`). Beyond it the patch fails
/// like any failed operation: `422 Invalid`.
pub const JSON_PATCH_MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Largest object stored, as the JSON the server keeps for it: 1.5 MiB, etcd's
/// `DefaultMaxRequestBytes` (`server/embed/config.go`). A write whose object is larger is
/// refused as the real API server relays etcd's refusal: `500` with the message
/// `etcdserver: request is too large` and no reason (k8s.io/apiserver
/// `pkg/endpoints/handlers/responsewriters/status.go` `ErrorToAPIStatus` for an error that is
/// not a `Status`; kubernetes/kubernetes#112152). etcd measures the protobuf, which is
/// smaller than the JSON measured here, so the simulated limit is somewhat stricter.
pub const MAX_OBJECT_BYTES: usize = 1024 * 1024 * 3 / 2;

/// The simulated store's quota, in objects: a create past it is refused as etcd refuses
/// writes once its database reaches `--quota-backend-bytes` (2 GiB by default,
/// `DefaultQuotaBytes` in etcd's `server/storage/quota.go`): `500` "etcdserver: mvcc:
/// database space exceeded" (`StoreError::SpaceExceeded`). Updates, reads and deletes go
/// through, as etcd takes reads and deletes under its `NOSPACE` alarm. Sized so that a store
/// full of pods stays within the 300 MB the load tests allow: measured on the release binary,
/// `kubectl create deployment big --replicas=1000000` stops at the quota with the server's
/// RSS flat at 260 MB (about 3.4 kB per Pending pod).
pub const MAX_OBJECTS: usize = 75_000;

/// Most tries of one simulated netexec `/dial` (`tries=`). The real netexec has no bound (each
/// try is a real connection); the simulated one answers more with netexec's own `400` "tries
/// parameter is invalid" so that one request cannot occupy the simulated cluster for hours.
pub const MAX_DIAL_TRIES: i64 = 100;

/// Shortest interval of a probe-loop client pod (`LOCALITY_PROBE_INTERVAL_MS`), in virtual
/// ms: shorter ones are run at this interval. Not an upstream limit: the simulated pods run
/// inside the server, and this is what it sustains.
pub const MIN_PROBE_INTERVAL_MS: u64 = 20;

/// Most tries per virtual second of one probe-loop pod over all its loops: a pod asking for
/// more has its interval stretched to `LOOPS × 1000 / MAX_PROBE_TRIES_PER_SECOND` ms. (What
/// `locality verify`'s probe loops use: 5 loops every 100 ms. At `--speed 10` that is 500
/// simulated connections per wall second for one pod.)
pub const MAX_PROBE_TRIES_PER_SECOND: u64 = 50;

/// The server's timeouts; [`Limits::default`] has the upstream values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// See [`REQUEST_TIMEOUT`].
    pub request_timeout: Duration,
    /// The store's quota in objects; see [`MAX_OBJECTS`].
    pub max_objects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: HEADER_READ_TIMEOUT,
            request_timeout: REQUEST_TIMEOUT,
            max_objects: MAX_OBJECTS,
        }
    }
}

impl Limits {
    /// Checks the timeouts are usable (not zero).
    ///
    /// # Errors
    /// A zero timeout, named.
    pub fn validate(&self) -> Result<(), String> {
        if self.header_read_timeout.is_zero() {
            return Err("the header read timeout must be above 0".into());
        }
        if self.request_timeout.is_zero() {
            return Err("the request timeout must be above 0".into());
        }
        Ok(())
    }
}

/// `413 RequestEntityTooLarge` (k8s.io/apimachinery `pkg/api/errors`
/// `NewRequestEntityTooLargeError`).
pub(crate) fn too_large(why: &str) -> ApiError {
    ApiError::custom(
        413,
        "RequestEntityTooLarge",
        format!("Request entity too large: {why}"),
    )
}

/// The 413 of a body over [`MAX_REQUEST_BODY_BYTES`].
pub(crate) fn body_too_large() -> ApiError {
    too_large(&format!("limit is {MAX_REQUEST_BODY_BYTES}"))
}

/// `504 Timeout` of a request over the request timeout.
pub(crate) fn request_timed_out() -> ApiError {
    ApiError::custom(
        504,
        "Timeout",
        "request did not complete within requested timeout - context deadline exceeded",
    )
}

/// Bytes of `v` as compact JSON, counted without building the text.
pub(crate) fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Refuses an object to store larger than [`MAX_OBJECT_BYTES`], as etcd does.
pub(crate) fn check_object_size(v: &Value) -> Result<(), ApiError> {
    if json_len(v) > MAX_OBJECT_BYTES {
        return Err(ApiError::custom(500, "", "etcdserver: request is too large"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_len_is_the_compact_length() {
        let v = json!({"a": [1, "x\"y", null], "b": {"c": true}});
        assert_eq!(json_len(&v), serde_json::to_vec(&v).unwrap().len());
    }

    #[test]
    fn objects_over_the_etcd_limit_are_refused() {
        let small = json!({"data": "x".repeat(1000)});
        assert!(check_object_size(&small).is_ok());
        let big = json!({"data": "x".repeat(MAX_OBJECT_BYTES)});
        let e = check_object_size(&big).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (500, "etcdserver: request is too large")
        );
    }
}
