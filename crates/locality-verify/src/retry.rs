//! How a run's API calls are retried: one pure decision per verb and answer ([`policy`],
//! then [`resolve_conflict`] for a create's 409) within a [`RetryBudget`] of attempts and
//! time, with exponential backoff and jitter. [`crate::cluster::Cluster`] applies it.
//!
//! | verb | retried on | final answers |
//! |---|---|---|
//! | GET / LIST (`pods/log` too) | 429, 5xx, dropped or timed-out connection | anything else (404 is an answer) |
//! | `pods/proxy` GET | 429, dropped or timed-out connection | a 5xx is the probe's evidence, not retried here |
//! | POST (create) | 429, 5xx, dropped connection; a 409 `Conflict` when the object does not exist | a 409 `AlreadyExists` after a lost answer is success when the object carries the run's label ([`crate::fixture::RUN_LABEL`]); on the first attempt it is the caller's 409 |
//! | DELETE | 429, 5xx, dropped connection | 404 (already gone) is success for [`crate::cluster::Cluster::delete`] |
//! | PATCH with server-side apply (`R` applies its manifests again) | 429, 5xx, dropped connection (applying the same object twice is the same as once) | anything else |
//! | PUT / other PATCH (unused by a run) | 429 only (a 409 needs the caller to re-read) | anything else |

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::Method;

/// Attempts of one call at most (the first and four retries).
pub const MAX_ATTEMPTS: u32 = 5;
/// The delay before the first retry; doubled before each next one (then jittered).
pub const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// No retry starts once this much time has passed since a call's first attempt (so a call
/// lasts at most this plus one [`crate::cluster::DEFAULT_REQUEST_TIMEOUT`]).
pub const RETRY_BUDGET: Duration = Duration::from_secs(5);
/// The longest `Retry-After` honoured (a longer one is waited this long).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3);
/// The time budget of [`crate::cluster::Cluster::delete_namespace_or_explain`].
pub const NAMESPACE_DELETE_BUDGET: Duration = Duration::from_secs(30);
/// Attempts of [`crate::cluster::Cluster::delete_namespace_or_explain`] at most.
pub const NAMESPACE_DELETE_ATTEMPTS: u32 = 12;
/// The longest one backoff delay grows to.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How many times and how long a call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryBudget {
    /// Attempts at most (the first included).
    pub attempts: u32,
    /// Delay before the first retry, doubled before each next one.
    pub first: Duration,
    /// The longest one delay.
    pub max_delay: Duration,
    /// No retry starts after this much time since the first attempt.
    pub total: Duration,
}

impl RetryBudget {
    /// Every call's budget: [`MAX_ATTEMPTS`], [`FIRST_BACKOFF`], [`RETRY_BUDGET`].
    pub const CALL: RetryBudget = RetryBudget {
        attempts: MAX_ATTEMPTS,
        first: FIRST_BACKOFF,
        max_delay: MAX_BACKOFF,
        total: RETRY_BUDGET,
    };
    /// The namespace's final delete: [`NAMESPACE_DELETE_ATTEMPTS`] within
    /// [`NAMESPACE_DELETE_BUDGET`].
    pub const NAMESPACE_DELETE: RetryBudget = RetryBudget {
        attempts: NAMESPACE_DELETE_ATTEMPTS,
        first: FIRST_BACKOFF,
        max_delay: MAX_BACKOFF,
        total: NAMESPACE_DELETE_BUDGET,
    };

    /// The delay before retry number `retry` (1 for the first retry): `first · 2^(retry-1)`
    /// capped at `max_delay`, jittered into its upper half by `jitter` in `[0, 1)`
    /// ("equal jitter": never less than half the nominal delay).
    pub fn backoff(&self, retry: u32, jitter: f64) -> Duration {
        let nominal = self
            .first
            .saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)))
            .min(self.max_delay);
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.0
        };
        nominal / 2 + nominal.mul_f64(jitter / 2.0)
    }

    /// The delay before retry number `retry` after an answer that asked for `retry_after`
    /// (honoured up to [`MAX_RETRY_AFTER`]; the backoff when there was none), or `None` when
    /// no retry is left: the attempts are spent, or the delay would end after the budget
    /// (`elapsed`: the time since the first attempt).
    pub fn next_delay(
        &self,
        retry: u32,
        elapsed: Duration,
        retry_after: Option<Duration>,
        jitter: f64,
    ) -> Option<Duration> {
        if retry >= self.attempts {
            return None;
        }
        let delay = retry_after.map_or_else(|| self.backoff(retry, jitter), |d| d.min(MAX_RETRY_AFTER));
        (elapsed + delay <= self.total).then_some(delay)
    }
}

/// A request as the retry policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET of an object or a collection, `pods/log` included.
    Read,
    /// GET through `pods/NAME/proxy` (a probe: the answer is about the data plane).
    Proxy,
    /// POST.
    Create,
    /// DELETE.
    Delete,
    /// PATCH: server-side apply, the only PATCH a run sends (idempotent).
    Apply,
    /// PUT (and any other method).
    Write,
}

impl Verb {
    /// The verb of `method` on `path`.
    pub fn of(method: &Method, path: &str) -> Verb {
        if *method == Method::GET {
            let path = path.split('?').next().unwrap_or_default();
            let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
            let proxied = segs
                .windows(3)
                .any(|w| w[0] == "pods" && w[2] == "proxy" && !w[1].is_empty());
            if proxied { Verb::Proxy } else { Verb::Read }
        } else if *method == Method::POST {
            Verb::Create
        } else if *method == Method::DELETE {
            Verb::Delete
        } else if *method == Method::PATCH {
            Verb::Apply
        } else {
            Verb::Write
        }
    }
}

/// What one attempt got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// An HTTP answer (409 `AlreadyExists` is [`Answer::AlreadyExists`]).
    Status(u16),
    /// 409 with `Status.reason` `AlreadyExists`.
    AlreadyExists,
    /// No answer: the connection failed, was dropped or timed out (`retryable`), or the
    /// request could not be made at all (TLS, credentials: not `retryable`). The server may
    /// or may not have acted on it.
    Transport {
        /// A dropped, reset, refused or timed-out connection.
        retryable: bool,
    },
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The answer is final: the caller judges its status.
    Done,
    /// Try again after a backoff (if the budget allows; else the answer is final).
    Retry,
    /// A create's 409: read the object and [`resolve_conflict`].
    CheckOwned,
    /// No answer and none to expect: the call fails.
    Fail,
}

/// 429 and the 5xx that may pass (not 501 Not Implemented, 505 HTTP Version Not Supported).
pub(crate) fn transient(code: u16) -> bool {
    code == 429 || ((500..600).contains(&code) && code != 501 && code != 505)
}

/// The retry policy: after attempt number `attempt` (1 for the first) of `verb` got
/// `answer`, what to do.
pub fn policy(verb: Verb, attempt: u32, answer: Answer) -> Action {
    match (verb, answer) {
        (_, Answer::Transport { retryable: false }) => Action::Fail,
        (Verb::Write, Answer::Transport { .. }) => Action::Fail,
        (_, Answer::Transport { retryable: true }) => Action::Retry,
        (Verb::Create, Answer::AlreadyExists) if attempt > 1 => Action::CheckOwned,
        (Verb::Create, Answer::Status(409)) => Action::CheckOwned,
        (_, Answer::AlreadyExists) => Action::Done,
        (_, Answer::Status(429)) => Action::Retry,
        (Verb::Read | Verb::Create | Verb::Delete | Verb::Apply, Answer::Status(code)) if transient(code) => {
            Action::Retry
        }
        (_, Answer::Status(_)) => Action::Done,
    }
}

/// The object a create got a 409 for, read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// It does not exist (or could not be read).
    Absent,
    /// It exists with the run's label valued as in the object sent.
    Ours,
    /// It exists without it.
    Other,
}

/// How a create's 409 ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// The object is the one an earlier attempt created (its answer was lost): success.
    Created,
    /// A transient conflict (`Conflict`, not `AlreadyExists`) and nothing exists: try again.
    Retry,
    /// The 409 stands.
    Conflict,
}

/// A create's 409 after attempt number `attempt`: `already_exists` when its reason is
/// `AlreadyExists`, `existing` what a GET of the object found. Only a retried create can
/// find its own object: on the first attempt an existing object is never taken as created.
pub fn resolve_conflict(attempt: u32, already_exists: bool, existing: Existing) -> Resolution {
    match existing {
        Existing::Ours if attempt > 1 => Resolution::Created,
        Existing::Absent if !already_exists => Resolution::Retry,
        _ => Resolution::Conflict,
    }
}

/// Whether a kube client error is a connection that failed, dropped or timed out (worth a
/// retry), rather than a request that cannot be made (TLS, credentials, a bad request).
pub fn transport_retryable(e: &kube::Error) -> bool {
    match e {
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => {
            // A certificate problem surfaces as an I/O error of kind InvalidData (rustls)
            // inside the chain: it will not pass by retrying.
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
            while let Some(s) = source {
                if let Some(io) = s.downcast_ref::<std::io::Error>()
                    && matches!(
                        io.kind(),
                        std::io::ErrorKind::InvalidData | std::io::ErrorKind::PermissionDenied
                    )
                {
                    return false;
                }
                if s.to_string().to_ascii_lowercase().contains("certificate") {
                    return false;
                }
                source = s.source();
            }
            true
        }
        _ => false,
    }
}

/// A number in `[0, 1)` for jitter (no need for a good generator: only spread).
pub(crate) fn jitter() -> f64 {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    let mut z = SEQ
        .fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
        .wrapping_add(nanos);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: Answer = Answer::Status(200);
    const DROPPED: Answer = Answer::Transport { retryable: true };
    const TLS: Answer = Answer::Transport { retryable: false };

    #[test]
    fn verbs_are_read_from_method_and_path() {
        assert_eq!(Verb::of(&Method::GET, "/api/v1/namespaces/x/pods"), Verb::Read);
        assert_eq!(
            Verb::of(&Method::GET, "/api/v1/namespaces/x/pods/p/log?tailLines=1"),
            Verb::Read
        );
        assert_eq!(
            Verb::of(
                &Method::GET,
                "/api/v1/namespaces/x/pods/c:8080/proxy/dial?request=hostname"
            ),
            Verb::Proxy
        );
        // A pod named "proxy" is an object, not the subresource.
        assert_eq!(
            Verb::of(&Method::GET, "/api/v1/namespaces/x/pods/proxy"),
            Verb::Read
        );
        assert_eq!(Verb::of(&Method::POST, "/api/v1/namespaces"), Verb::Create);
        assert_eq!(Verb::of(&Method::DELETE, "/api/v1/namespaces/x"), Verb::Delete);
        assert_eq!(Verb::of(&Method::PUT, "/api/v1/namespaces/x"), Verb::Write);
        assert_eq!(Verb::of(&Method::PATCH, "/api/v1/namespaces/x"), Verb::Apply);
        assert_eq!(Verb::of(&Method::PUT, "/api/v1/namespaces/x"), Verb::Write);
    }

    #[test]
    fn reads_retry_429_5xx_and_dropped_connections_and_take_404_as_an_answer() {
        for code in [429, 500, 502, 503, 504] {
            assert_eq!(
                policy(Verb::Read, 1, Answer::Status(code)),
                Action::Retry,
                "{code}"
            );
        }
        for code in [200, 400, 401, 403, 404, 410, 501] {
            assert_eq!(
                policy(Verb::Read, 1, Answer::Status(code)),
                Action::Done,
                "{code}"
            );
        }
        assert_eq!(policy(Verb::Read, 3, DROPPED), Action::Retry);
        assert_eq!(policy(Verb::Read, 1, TLS), Action::Fail);
    }

    #[test]
    fn probes_retry_only_what_says_nothing_about_the_data_plane() {
        assert_eq!(policy(Verb::Proxy, 1, DROPPED), Action::Retry);
        assert_eq!(policy(Verb::Proxy, 1, Answer::Status(429)), Action::Retry);
        // The API server could not reach the client pod: that is the probe's answer.
        for code in [500, 502, 503] {
            assert_eq!(
                policy(Verb::Proxy, 1, Answer::Status(code)),
                Action::Done,
                "{code}"
            );
        }
        assert_eq!(policy(Verb::Proxy, 1, OK), Action::Done);
    }

    #[test]
    fn creates_retry_transient_failures_and_check_their_409s() {
        for code in [429, 500, 503, 504] {
            assert_eq!(
                policy(Verb::Create, 1, Answer::Status(code)),
                Action::Retry,
                "{code}"
            );
        }
        assert_eq!(policy(Verb::Create, 1, DROPPED), Action::Retry);
        assert_eq!(policy(Verb::Create, 1, TLS), Action::Fail);
        assert_eq!(policy(Verb::Create, 1, Answer::Status(201)), Action::Done);
        for code in [400, 403, 422] {
            assert_eq!(
                policy(Verb::Create, 1, Answer::Status(code)),
                Action::Done,
                "{code}"
            );
        }
        // AlreadyExists on the first attempt: not ours to take, the caller's 409.
        assert_eq!(policy(Verb::Create, 1, Answer::AlreadyExists), Action::Done);
        // After a lost answer: maybe our own object.
        assert_eq!(policy(Verb::Create, 2, Answer::AlreadyExists), Action::CheckOwned);
        // A Conflict (not AlreadyExists): check whether anything was created.
        assert_eq!(policy(Verb::Create, 1, Answer::Status(409)), Action::CheckOwned);
    }

    #[test]
    fn a_409_on_create_is_success_only_for_our_own_object_after_a_retry() {
        assert_eq!(resolve_conflict(2, true, Existing::Ours), Resolution::Created);
        assert_eq!(resolve_conflict(5, false, Existing::Ours), Resolution::Created);
        assert_eq!(resolve_conflict(1, true, Existing::Ours), Resolution::Conflict);
        assert_eq!(resolve_conflict(1, false, Existing::Ours), Resolution::Conflict);
        assert_eq!(resolve_conflict(2, true, Existing::Other), Resolution::Conflict);
        assert_eq!(resolve_conflict(1, false, Existing::Other), Resolution::Conflict);
        // A transient Conflict that created nothing: try again.
        assert_eq!(resolve_conflict(1, false, Existing::Absent), Resolution::Retry);
        // AlreadyExists, yet gone: the 409 stands.
        assert_eq!(resolve_conflict(2, true, Existing::Absent), Resolution::Conflict);
    }

    #[test]
    fn deletes_retry_transient_failures_and_404_is_an_answer() {
        for code in [429, 500, 503] {
            assert_eq!(
                policy(Verb::Delete, 1, Answer::Status(code)),
                Action::Retry,
                "{code}"
            );
        }
        assert_eq!(policy(Verb::Delete, 2, DROPPED), Action::Retry);
        for code in [200, 202, 404, 409, 403] {
            assert_eq!(
                policy(Verb::Delete, 1, Answer::Status(code)),
                Action::Done,
                "{code}"
            );
        }
    }

    #[test]
    fn updates_retry_only_429() {
        assert_eq!(policy(Verb::Write, 1, Answer::Status(429)), Action::Retry);
        for code in [409, 500, 503] {
            assert_eq!(
                policy(Verb::Write, 1, Answer::Status(code)),
                Action::Done,
                "{code}"
            );
        }
        // A PUT whose answer was lost may have applied: never blindly resent.
        assert_eq!(policy(Verb::Write, 1, DROPPED), Action::Fail);
        // Server-side apply of the same object is idempotent: resent.
        for code in [429, 500, 503] {
            assert_eq!(
                policy(Verb::Apply, 1, Answer::Status(code)),
                Action::Retry,
                "{code}"
            );
        }
        assert_eq!(policy(Verb::Apply, 1, DROPPED), Action::Retry);
        assert_eq!(policy(Verb::Apply, 1, Answer::Status(409)), Action::Done);
    }

    #[test]
    fn backoff_doubles_with_jitter_within_the_budget() {
        let b = RetryBudget::CALL;
        assert_eq!(b.backoff(1, 0.0), Duration::from_millis(100));
        assert_eq!(b.backoff(1, 1.0), Duration::from_millis(200));
        assert_eq!(b.backoff(2, 1.0), Duration::from_millis(400));
        assert_eq!(b.backoff(3, 0.5), Duration::from_millis(600));
        assert_eq!(b.backoff(30, 1.0), MAX_BACKOFF, "capped");
        // Attempts: retry number MAX_ATTEMPTS - 1 is the last.
        assert!(
            b.next_delay(MAX_ATTEMPTS - 1, Duration::ZERO, None, 0.5)
                .is_some()
        );
        assert_eq!(b.next_delay(MAX_ATTEMPTS, Duration::ZERO, None, 0.5), None);
        // Time: no delay may end after the budget.
        assert_eq!(
            b.next_delay(1, RETRY_BUDGET - Duration::from_millis(50), None, 1.0),
            None
        );
        assert!(
            b.next_delay(1, RETRY_BUDGET - Duration::from_millis(300), None, 1.0)
                .is_some()
        );
        // Retry-After is honoured, capped.
        assert_eq!(
            b.next_delay(1, Duration::ZERO, Some(Duration::from_secs(2)), 0.0),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            b.next_delay(1, Duration::ZERO, Some(Duration::from_secs(600)), 0.0),
            Some(MAX_RETRY_AFTER)
        );
        assert_eq!(
            b.next_delay(1, Duration::from_secs(3), Some(Duration::from_secs(3)), 0.0),
            None
        );
        // The sum of the nominal delays of every retry fits the budget.
        let worst: Duration = (1..MAX_ATTEMPTS).map(|r| b.backoff(r, 1.0)).sum();
        assert!(worst <= RETRY_BUDGET, "{worst:?}");
    }

    #[test]
    fn jitter_is_within_the_unit_interval_and_varies() {
        let draws: Vec<f64> = (0..64).map(|_| jitter()).collect();
        assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
        assert!(draws.windows(2).any(|w| w[0] != w[1]));
    }
}
