//! The Kubernetes API calls a run makes, through kube-rs: create, get, delete by path, and
//! the `pods/proxy` GET the probes use. Nothing here is specific to the simulated cluster.
//!
//! Every call survives a flaky API server: bounded retries with exponential backoff and
//! jitter, decided per verb by one pure function ([`policy`], then [`resolve_conflict`] for a
//! create's 409), a per-request timeout and a limit on the requests in flight.
//!
//! | verb | retried on | final answers |
//! |---|---|---|
//! | GET / LIST (`pods/log` too) | 429, 5xx, dropped or timed-out connection | anything else (404 is an answer) |
//! | `pods/proxy` GET | 429, dropped or timed-out connection | a 5xx is the probe's evidence, not retried here |
//! | POST (create) | 429, 5xx, dropped connection; a 409 `Conflict` when the object does not exist | a 409 `AlreadyExists` after a lost answer is success when the object carries the run's label ([`fixture::RUN_LABEL`]); on the first attempt it is the caller's 409 |
//! | DELETE | 429, 5xx, dropped connection | 404 (already gone) is success for [`Cluster::delete`] |
//! | PUT / PATCH (unused by a run) | 429 only (a 409 needs the caller to re-read) | anything else |
//!
//! The kube client must not retry by itself: `locality_live::client` turns kube's default
//! retry layer off (`Config::default_retry = false`), so a request is retried here only.
//! hyper's own pool retries only requests it never sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::{Method, Request};
use kube::client::Body;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::error::VerifyError;
use crate::fixture;

/// Attempts of one call at most (the first and four retries).
pub const MAX_ATTEMPTS: u32 = 5;
/// The delay before the first retry; doubled before each next one (then jittered).
pub const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// No retry starts once this much time has passed since a call's first attempt (so a call
/// lasts at most this plus one [`DEFAULT_REQUEST_TIMEOUT`]).
pub const RETRY_BUDGET: Duration = Duration::from_secs(5);
/// The longest `Retry-After` honoured (a longer one is waited this long).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3);
/// The time budget of [`Cluster::delete_namespace_or_explain`].
pub const NAMESPACE_DELETE_BUDGET: Duration = Duration::from_secs(30);
/// Attempts of [`Cluster::delete_namespace_or_explain`] at most.
pub const NAMESPACE_DELETE_ATTEMPTS: u32 = 12;
/// The longest one backoff delay grows to.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long one request (send and read the whole answer) may take by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Requests in flight at most, by default.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 8;

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
    /// PUT or PATCH (and any other method).
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
fn transient(code: u16) -> bool {
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
        (Verb::Read | Verb::Create | Verb::Delete, Answer::Status(code)) if transient(code) => Action::Retry,
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

/// `e` and its sources, `: `-separated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// A number in `[0, 1)` for jitter (no need for a good generator: only spread).
fn jitter() -> f64 {
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

/// `arg` quoted for a POSIX shell when it needs it.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// A client of one API server.
#[derive(Clone)]
pub struct Cluster {
    client: kube::Client,
    /// The server's URL (for messages).
    pub server: String,
    request_timeout: Duration,
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    /// `--kubeconfig` and `--context` for the kubectl commands messages give.
    kubectl: Vec<String>,
}

/// An API answer that was not a success.
#[derive(Debug, Clone)]
pub struct ApiFailure {
    /// HTTP status.
    pub code: u16,
    /// `Status.message`, or the body.
    pub message: String,
}

/// One attempt's answer.
struct Reply {
    code: u16,
    body: Vec<u8>,
    retry_after: Option<Duration>,
}

/// A call's final answer.
struct Final {
    code: u16,
    body: Vec<u8>,
    attempts: u32,
}

/// A call that got no answer.
struct NoAnswer {
    message: String,
    attempts: u32,
}

impl Cluster {
    /// A cluster reached through `client`, with [`DEFAULT_REQUEST_TIMEOUT`] and
    /// [`DEFAULT_MAX_IN_FLIGHT`]. `client` should not retry by itself (see the module).
    pub fn new(client: kube::Client, server: String) -> Self {
        Cluster {
            client,
            server,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            in_flight: Arc::new(Semaphore::new(DEFAULT_MAX_IN_FLIGHT)),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            kubectl: Vec::new(),
        }
    }

    /// Each request (sending it and reading the whole answer) gets at most `timeout`; one
    /// that takes longer counts as a dropped connection (retried as such).
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// At most `n` (at least 1) requests in flight at once over this cluster and its clones.
    pub fn with_max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self.in_flight = Arc::new(Semaphore::new(self.max_in_flight));
        self
    }

    /// The kubeconfig file and context the kubectl commands in messages name (`None`:
    /// kubectl's defaults, as this run's when it used them).
    pub fn with_kubectl_target(
        mut self,
        kubeconfig: Option<&std::path::Path>,
        context: Option<&str>,
    ) -> Self {
        self.kubectl.clear();
        if let Some(k) = kubeconfig {
            self.kubectl.push("--kubeconfig".into());
            self.kubectl.push(k.display().to_string());
        }
        if let Some(c) = context {
            self.kubectl.push("--context".into());
            self.kubectl.push(c.to_string());
        }
        self
    }

    /// The per-request timeout.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The limit of requests in flight.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// The kubectl command that deletes namespace `ns` of this cluster.
    pub fn delete_namespace_command(&self, ns: &str) -> String {
        let mut words = vec!["kubectl".to_string()];
        words.extend(self.kubectl.iter().map(|w| shell_quote(w)));
        words.extend(["delete".into(), "namespace".into(), shell_quote(ns)]);
        words.join(" ")
    }

    /// One request, retried as [`policy`] says within [`RetryBudget::CALL`]: the final status
    /// code and body, or the transport error of the last attempt.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Vec<u8>), VerifyError> {
        self.call_with(method.clone(), path, body, RetryBudget::CALL)
            .await
            .map(|f| (f.code, f.body))
            .map_err(|e| self.transport_error(&method, path, &e))
    }

    fn transport_error(&self, method: &Method, path: &str, e: &NoAnswer) -> VerifyError {
        VerifyError::Api {
            what: format!("{method} {}{path}", self.server),
            message: if e.attempts > 1 {
                format!("{} (after {} attempts)", e.message, e.attempts)
            } else {
                e.message.clone()
            },
        }
    }

    /// One attempt, within the in-flight limit and the request timeout.
    async fn attempt(
        &self,
        method: &Method,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Reply, (bool, String)> {
        let mut req = Request::builder()
            .method(method.clone())
            .uri(path)
            .header(http::header::ACCEPT, "application/json");
        let body = match body {
            Some(bytes) => {
                req = req.header(http::header::CONTENT_TYPE, "application/json");
                Body::from(bytes.to_vec())
            }
            None => Body::empty(),
        };
        let req = req.body(body).map_err(|e| (false, e.to_string()))?;
        let _permit = self
            .in_flight
            .acquire()
            .await
            .map_err(|e| (false, e.to_string()))?;
        let exchange = async {
            let resp = self
                .client
                .send(req)
                .await
                .map_err(|e| (transport_retryable(&e), chain(&e)))?;
            let code = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let bytes = resp
                .into_body()
                .collect_bytes()
                .await
                .map_err(|e| (transport_retryable(&e), chain(&e)))?;
            Ok(Reply {
                code,
                body: bytes.to_vec(),
                retry_after,
            })
        };
        match tokio::time::timeout(self.request_timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err((
                true,
                format!("no answer within {:?} (request timeout)", self.request_timeout),
            )),
        }
    }

    /// `method path` with `body`, retried as [`policy`] says within `budget`.
    async fn call_with(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        budget: RetryBudget,
    ) -> Result<Final, NoAnswer> {
        let verb = Verb::of(&method, path);
        let bytes = body.map(|v| serde_json::to_vec(v).unwrap_or_default());
        let start = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let result = self.attempt(&method, path, bytes.as_deref()).await;
            let answer = match &result {
                Ok(r) if r.code == 409 && status_reason(&r.body) == "AlreadyExists" => Answer::AlreadyExists,
                Ok(r) => Answer::Status(r.code),
                Err((retryable, _)) => Answer::Transport {
                    retryable: *retryable,
                },
            };
            let mut action = policy(verb, attempt, answer);
            if action == Action::CheckOwned {
                let (existing, object) = self.existing(path, body.unwrap_or(&Value::Null)).await;
                match resolve_conflict(attempt, answer == Answer::AlreadyExists, existing) {
                    Resolution::Created => {
                        return Ok(Final {
                            code: 200,
                            body: object,
                            attempts: attempt,
                        });
                    }
                    Resolution::Retry => action = Action::Retry,
                    Resolution::Conflict => action = Action::Done,
                }
            }
            let retry_after = result.as_ref().ok().and_then(|r| r.retry_after);
            let delay = (action == Action::Retry)
                .then(|| budget.next_delay(attempt, start.elapsed(), retry_after, jitter()))
                .flatten();
            match (result, delay) {
                (_, Some(delay)) => tokio::time::sleep(delay).await,
                (Ok(r), None) => {
                    return Ok(Final {
                        code: r.code,
                        body: r.body,
                        attempts: attempt,
                    });
                }
                (Err((_, message)), None) => {
                    return Err(NoAnswer {
                        message,
                        attempts: attempt,
                    });
                }
            }
        }
    }

    /// Whether the object a create of `sent` at `path` got a 409 for exists, and is ours:
    /// it carries [`fixture::RUN_LABEL`] valued as `sent` does (an object sent without the
    /// label is never ours); with the object read. It is absent only when the read (itself
    /// retried) said 404; an object that cannot be read is not ours.
    async fn existing(&self, path: &str, sent: &Value) -> (Existing, Vec<u8>) {
        let Some(name) = sent["metadata"]["name"].as_str().filter(|n| !n.is_empty()) else {
            // generateName: there is nothing to read back.
            return (Existing::Other, Vec::new());
        };
        let collection = path.split('?').next().unwrap_or_default().trim_end_matches('/');
        let object = format!("{collection}/{name}");
        let run = sent["metadata"]["labels"][fixture::RUN_LABEL]
            .as_str()
            .filter(|r| !r.is_empty());
        match Box::pin(self.call_with(Method::GET, &object, None, RetryBudget::CALL)).await {
            Ok(f) if f.code == 404 => (Existing::Absent, Vec::new()),
            Ok(f) if (200..300).contains(&f.code) => {
                let got: Value = serde_json::from_slice(&f.body).unwrap_or(Value::Null);
                let existing = match (run, got["metadata"]["labels"][fixture::RUN_LABEL].as_str()) {
                    (Some(want), Some(have)) if want == have => Existing::Ours,
                    _ => Existing::Other,
                };
                (existing, f.body)
            }
            // Unreadable: the 409 stands.
            _ => (Existing::Other, Vec::new()),
        }
    }

    /// Like [`call`](Self::call), with a non-2xx answer as an [`ApiFailure`] (its message
    /// says how many attempts were made when more than one).
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Result<Value, ApiFailure>, VerifyError> {
        let f = self
            .call_with(method.clone(), path, body, RetryBudget::CALL)
            .await
            .map_err(|e| self.transport_error(&method, path, &e))?;
        Ok(as_json(f))
    }

    /// Creates an object at its collection `path`.
    pub async fn create(&self, path: &str, object: &Value) -> Result<Value, VerifyError> {
        self.json(Method::POST, path, Some(object))
            .await?
            .map_err(|f| VerifyError::Api {
                what: format!(
                    "create {} {}",
                    object["kind"].as_str().unwrap_or("object"),
                    object["metadata"]["name"].as_str().unwrap_or("")
                ),
                message: format!("{} {}", f.code, f.message),
            })
    }

    /// GETs an object; `None` when it does not exist.
    pub async fn get(&self, path: &str) -> Result<Option<Value>, VerifyError> {
        match self.json(Method::GET, path, None).await? {
            Ok(v) => Ok(Some(v)),
            Err(f) if f.code == 404 => Ok(None),
            Err(f) => Err(VerifyError::Api {
                what: format!("get {path}"),
                message: format!("{} {}", f.code, f.message),
            }),
        }
    }

    /// Deletes an object (absent is fine; so is a namespace already terminating, which the
    /// API server answers with 409).
    pub async fn delete(&self, path: &str) -> Result<(), VerifyError> {
        match self.json(Method::DELETE, path, None).await? {
            Ok(_) => Ok(()),
            Err(f) if f.code == 404 => Ok(()),
            Err(f) if f.code == 409 && is_namespace_path(path) => Ok(()),
            Err(f) => Err(VerifyError::Api {
                what: format!("delete {path}"),
                message: format!("{} {}", f.code, f.message),
            }),
        }
    }

    /// Deletes namespace `ns` (and so everything in it), retrying within
    /// [`RetryBudget::NAMESPACE_DELETE`] (30 s). Gone already or already terminating is
    /// success.
    ///
    /// # Errors
    /// When the namespace could not be deleted: why, and the exact command that deletes it
    /// ([`delete_namespace_command`](Self::delete_namespace_command)), for the user to run.
    pub async fn delete_namespace_or_explain(&self, ns: &str) -> Result<(), String> {
        let path = format!("/api/v1/namespaces/{ns}");
        let why = match self
            .call_with(Method::DELETE, &path, None, RetryBudget::NAMESPACE_DELETE)
            .await
        {
            Ok(f) if (200..300).contains(&f.code) || f.code == 404 || f.code == 409 => return Ok(()),
            Ok(f) => {
                let failure = as_json(f).err().unwrap_or(ApiFailure {
                    code: 0,
                    message: String::new(),
                });
                format!("{} {}", failure.code, failure.message)
            }
            Err(e) if e.attempts > 1 => format!("{} (after {} attempts)", e.message, e.attempts),
            Err(e) => e.message,
        };
        Err(format!(
            "namespace {ns} was not deleted ({why}); delete it with: {}",
            self.delete_namespace_command(ns)
        ))
    }

    /// Polls `check` every `every` until it returns `Some`, for at most `timeout`. Each poll's
    /// reads retry as [`policy`] says; an error that survives them ends the wait.
    pub async fn wait_for<T, F, Fut>(
        &self,
        timeout: Duration,
        every: Duration,
        mut check: F,
    ) -> Result<Option<T>, VerifyError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<Option<T>, VerifyError>>,
    {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(v) = check().await? {
                return Ok(Some(v));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(every).await;
        }
    }
}

/// A final answer as JSON, or as an [`ApiFailure`] for a non-2xx one.
fn as_json(f: Final) -> Result<Value, ApiFailure> {
    if (200..300).contains(&f.code) {
        return Ok(serde_json::from_slice(&f.body).unwrap_or(Value::Null));
    }
    let mut message = serde_json::from_slice::<Value>(&f.body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(&f.body).into_owned());
    if f.attempts > 1 {
        message = format!("{message} (after {} attempts)", f.attempts);
    }
    Err(ApiFailure {
        code: f.code,
        message,
    })
}

/// `Status.reason` of an error body (empty when there is none).
fn status_reason(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["reason"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `/api/v1/namespaces/NAME` (the namespace itself, not an object in it).
fn is_namespace_path(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches!(segs.as_slice(), ["api", "v1", "namespaces", _])
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
        assert_eq!(Verb::of(&Method::PATCH, "/api/v1/namespaces/x"), Verb::Write);
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
        // A PUT/PATCH whose answer was lost may have applied: never blindly resent.
        assert_eq!(policy(Verb::Write, 1, DROPPED), Action::Fail);
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

    #[test]
    fn only_the_namespace_itself_is_a_namespace_path() {
        assert!(is_namespace_path("/api/v1/namespaces/locality-verify-x"));
        assert!(!is_namespace_path("/api/v1/namespaces/x/pods/p"));
        assert!(!is_namespace_path("/api/v1/namespaces"));
    }

    #[test]
    fn the_kubectl_command_names_the_kubeconfig_and_context_quoted() {
        assert_eq!(shell_quote("locality-verify-ab12"), "locality-verify-ab12");
        assert_eq!(shell_quote("my ctx"), "'my ctx'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
