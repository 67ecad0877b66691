//! The query parameters of get, list and watch that name a point in the store's history or a
//! time (`resourceVersion`, `continue`, `limit`, `timeoutSeconds`), parsed and checked as the
//! real API server does, and the wait for a `resourceVersion` the store has not reached yet.
//!
//! Upstream: the parameters are decoded by k8s.io/apiserver `pkg/endpoints/handlers/get.go`
//! `ListResource` (`ParameterCodec.DecodeParameters`, a value that does not parse is `400
//! BadRequest`); `resourceVersion` by `pkg/storage/etcd3` `store.GetList` ("invalid resource
//! version: …"); `continue` with a `resourceVersion` by `pkg/storage/interfaces.go`
//! `ValidateListOptions`; a `resourceVersion` from the future by `pkg/storage/cacher`
//! `watchCache.waitUntilFreshAndBlock` (3 s, then `storage.NewTooLargeResourceVersionError`).

use std::time::Duration;

use serde_json::json;

use crate::Shared;
use crate::http::Query;
use crate::status::ApiError;

/// How long a get or list at a `resourceVersion` newer than the store's waits for the store
/// to reach it: 3 s, k8s.io/apiserver `pkg/storage/cacher/watch_cache.go` `blockTimeout`.
pub const RESOURCE_VERSION_WAIT: Duration = Duration::from_secs(3);

/// The `retryAfterSeconds` of that refusal: 1, `pkg/storage/cacher/cacher.go`
/// `resourceVersionTooHighRetrySeconds`.
const TOO_LARGE_RETRY_SECONDS: u64 = 1;

/// A watch's lifetime when `timeoutSeconds` is absent or 0: 1800 s, kube-apiserver's
/// `--min-request-timeout` (upstream draws it in [1800 s, 3600 s) at random; the simulated
/// server takes the lower end, so runs repeat).
pub const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

/// The longest watch the simulated server serves, whatever `timeoutSeconds` asks: 3600 s, the
/// upper end of upstream's random default. (The real server takes a larger `timeoutSeconds`
/// as it is; the simulated one bounds every watch, and the client re-watches.)
pub const MAX_WATCH_TIMEOUT: Duration = Duration::from_secs(3600);

/// `resourceVersion` as a get, list or watch asks it: `None` for none (`""`) or any (`"0"`).
///
/// # Errors
/// A value that is not an unsigned 64-bit integer: `400 BadRequest` "invalid resource version:
/// …", worded as `etcd3.store.GetList` over `APIObjectVersioner.ParseResourceVersion`.
pub(crate) fn resource_version(q: &Query) -> Result<Option<u64>, ApiError> {
    match q.get("resourceVersion") {
        None | Some("" | "0") => Ok(None),
        Some(v) => v.parse::<u64>().map(Some).map_err(|e| {
            let why = match e.kind() {
                std::num::IntErrorKind::PosOverflow => "value out of range",
                _ => "invalid syntax",
            };
            ApiError::bad_request(format!(
                "invalid resource version: resourceVersion: Invalid value: {v:?}: strconv.ParseUint: parsing {v:?}: {why}"
            ))
        }),
    }
}

/// An int64 query parameter, `None` when absent or empty.
///
/// # Errors
/// A value that does not parse as an int64: `400 BadRequest` with Go's `strconv.ParseInt`
/// wording, as `DecodeParameters` answers.
fn int64(q: &Query, name: &str) -> Result<Option<i64>, ApiError> {
    match q.get(name) {
        None | Some("") => Ok(None),
        Some(v) => v.parse::<i64>().map(Some).map_err(|e| {
            let why = match e.kind() {
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                    "value out of range"
                }
                _ => "invalid syntax",
            };
            ApiError::bad_request(format!("strconv.ParseInt: parsing {v:?}: {why}"))
        }),
    }
}

/// `limit`: 0 (none) when absent, empty or not above 0, as upstream treats a limit ≤ 0.
///
/// # Errors
/// Not an int64: `400`.
pub(crate) fn limit(q: &Query) -> Result<usize, ApiError> {
    Ok(int64(q, "limit")?.map_or(0, |l| usize::try_from(l.max(0)).unwrap_or(usize::MAX)))
}

/// How long a watch runs: `timeoutSeconds` (a negative value ends it at once, as Go's timer
/// fires at once), [`DEFAULT_WATCH_TIMEOUT`] when absent or 0, never more than
/// [`MAX_WATCH_TIMEOUT`].
///
/// # Errors
/// Not an int64 (`abc`, `18446744073709551615`): `400 BadRequest`.
pub(crate) fn watch_timeout(q: &Query) -> Result<Duration, ApiError> {
    Ok(match int64(q, "timeoutSeconds")? {
        None | Some(0) => DEFAULT_WATCH_TIMEOUT,
        Some(s) if s < 0 => Duration::ZERO,
        Some(s) => Duration::from_secs(s.unsigned_abs()).min(MAX_WATCH_TIMEOUT),
    })
}

/// Checks the list parameters that do not depend on the store: `limit` and `timeoutSeconds`
/// parse, and `continue` comes without a `resourceVersion` other than `"0"`.
///
/// # Errors
/// `400 BadRequest`, as upstream: "specifying resource version is not allowed when using
/// continue" (`storage.ValidateListOptions`).
pub(crate) fn check_list(q: &Query) -> Result<(), ApiError> {
    limit(q)?;
    int64(q, "timeoutSeconds")?;
    let continuing = q.get("continue").is_some_and(|c| !c.is_empty());
    let rv = q.get("resourceVersion").unwrap_or_default();
    if continuing && !rv.is_empty() && rv != "0" {
        return Err(ApiError::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    Ok(())
}

/// `504 Timeout` "Too large resource version" with its cause, as
/// `storage.NewTooLargeResourceVersionError` (k8s.io/apimachinery `errors.NewTimeoutError`:
/// "Timeout: " before the message, `retryAfterSeconds`; the cause
/// `metav1.CauseTypeResourceVersionTooLarge`).
pub(crate) fn too_large_resource_version(asked: u64, current: u64) -> ApiError {
    let mut e = ApiError::custom(
        504,
        "Timeout",
        format!("Timeout: Too large resource version: {asked}, current: {current}"),
    );
    e.details = Some(json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": TOO_LARGE_RETRY_SECONDS,
    }));
    e
}

/// Waits (without holding the simulation) until the store's resourceVersion reaches `rv`, at
/// most `within`.
///
/// # Errors
/// Not reached in time: [`too_large_resource_version`].
pub(crate) async fn wait_until_fresh(shared: &Shared, rv: u64, within: Duration) -> Result<(), ApiError> {
    let mut changed = shared.changed.subscribe();
    let current = || {
        let mut sim = shared.lock();
        sim.catch_up();
        shared.notify(&sim);
        sim.engine.store().resource_version()
    };
    if current() >= rv {
        return Ok(());
    }
    let deadline = tokio::time::Instant::now() + within;
    loop {
        tokio::select! {
            r = changed.changed() => if r.is_err() { break },
            () = tokio::time::sleep_until(deadline) => break,
        }
        if current() >= rv {
            return Ok(());
        }
    }
    Err(too_large_resource_version(rv, current()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Query {
        Query::parse(Some(s))
    }

    #[test]
    fn resource_versions_that_do_not_parse_are_bad_requests() {
        assert_eq!(resource_version(&q("")).unwrap(), None);
        assert_eq!(resource_version(&q("resourceVersion=0")).unwrap(), None);
        assert_eq!(resource_version(&q("resourceVersion=42")).unwrap(), Some(42));
        for bad in ["abc", "-1", "1.5", "18446744073709551616"] {
            let e = resource_version(&q(&format!("resourceVersion={bad}"))).unwrap_err();
            assert_eq!((e.code, e.reason), (400, "BadRequest"), "{bad}");
            assert!(
                e.message.starts_with("invalid resource version: "),
                "{}",
                e.message
            );
        }
        let e = resource_version(&q("resourceVersion=18446744073709551616")).unwrap_err();
        assert!(e.message.ends_with("value out of range"), "{}", e.message);
    }

    #[test]
    fn watch_timeouts_are_int64_and_bounded() {
        assert_eq!(watch_timeout(&q("")).unwrap(), DEFAULT_WATCH_TIMEOUT);
        assert_eq!(
            watch_timeout(&q("timeoutSeconds=0")).unwrap(),
            DEFAULT_WATCH_TIMEOUT
        );
        assert_eq!(
            watch_timeout(&q("timeoutSeconds=5")).unwrap(),
            Duration::from_secs(5)
        );
        assert_eq!(watch_timeout(&q("timeoutSeconds=-5")).unwrap(), Duration::ZERO);
        assert_eq!(
            watch_timeout(&q("timeoutSeconds=9223372036854775807")).unwrap(),
            MAX_WATCH_TIMEOUT
        );
        for bad in ["abc", "18446744073709551615", "1e3"] {
            let e = watch_timeout(&q(&format!("timeoutSeconds={bad}"))).unwrap_err();
            assert_eq!((e.code, e.reason), (400, "BadRequest"), "{bad}");
        }
        let e = watch_timeout(&q("timeoutSeconds=18446744073709551615")).unwrap_err();
        assert_eq!(
            e.message,
            "strconv.ParseInt: parsing \"18446744073709551615\": value out of range"
        );
    }

    #[test]
    fn continue_with_a_resource_version_is_refused() {
        assert!(check_list(&q("continue=x")).is_ok());
        assert!(check_list(&q("continue=x&resourceVersion=0")).is_ok());
        assert!(check_list(&q("resourceVersion=7")).is_ok());
        let e = check_list(&q("continue=x&resourceVersion=7")).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "specifying resource version is not allowed when using continue"
            )
        );
        assert_eq!(check_list(&q("limit=abc")).unwrap_err().code, 400);
        assert_eq!(limit(&q("limit=-3")).unwrap(), 0);
    }

    #[test]
    fn a_too_large_resource_version_is_a_timeout_with_its_cause() {
        let s = too_large_resource_version(900, 12).to_status();
        assert_eq!(s["code"], 504);
        assert_eq!(s["reason"], "Timeout");
        assert_eq!(
            s["message"],
            "Timeout: Too large resource version: 900, current: 12"
        );
        assert_eq!(s["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
        assert_eq!(s["details"]["causes"][0]["message"], "Too large resource version");
        assert_eq!(s["details"]["retryAfterSeconds"], 1);
    }
}
