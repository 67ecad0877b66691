//! The Kubernetes API calls a run makes, through kube-rs: create, get, delete by path, and
//! the `pods/proxy` GET the probes use. Nothing here is specific to the simulated cluster.
//!
//! Every call survives a flaky API server: bounded retries with backoff and jitter, decided
//! per verb by `retry`, a per-request timeout and a limit on the requests in flight.
//!
//! The kube client must not retry by itself: `locality_live::client` turns kube's default
//! retry layer off (`Config::default_retry = false`), so a request is retried here only.
//! hyper's own pool retries only requests it never sent.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request};
use kube::client::Body;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::clock::{ClusterClock, Deadline};
use crate::error::VerifyError;
use crate::fixture;
use crate::retry::jitter;
pub use crate::retry::{
    Action, Answer, Existing, FIRST_BACKOFF, MAX_ATTEMPTS, MAX_BACKOFF, MAX_RETRY_AFTER,
    NAMESPACE_DELETE_ATTEMPTS, NAMESPACE_DELETE_BUDGET, RETRY_BUDGET, Resolution, RetryBudget, Verb, policy,
    resolve_conflict, transport_retryable,
};

/// How long one request (send and read the whole answer) may take by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The simulated API server's clock (not a Kubernetes path: see [`ClusterClock`]).
const SIMULATED_CLOCK: &str = "/simulated/clock";
/// Requests in flight at most, by default.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 8;

/// The most of one answer a run reads (as `locality-live`'s one-shot reads: a page of 500
/// objects is far less); a larger one is an error, not read further.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// The body of an answer, frame by frame, refused past `max` bytes (the connection is dropped
/// there: nothing more is read). An error is `(retryable, message)`.
async fn read_capped(mut body: Body, max: usize) -> Result<Vec<u8>, (bool, String)> {
    use http_body_util::BodyExt as _;
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| (transport_retryable(&e), chain(&e)))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > max {
                return Err((
                    false,
                    format!(
                        "the answer is larger than {} MiB; it was not read further",
                        max >> 20
                    ),
                ));
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// `e` and its sources, `: `-separated (a failing credential plugin as `locality_live`
/// reports it, never kube-rs's dump of its output).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    if let Some(text) = locality_live::credential_plugin_failure(e) {
        return text;
    }
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

/// `arg` quoted for a POSIX shell when it needs it.
pub(crate) fn shell_quote(arg: &str) -> String {
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
    /// The cluster's clock, which every wait of a run is in.
    clock: Arc<ClusterClock>,
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
            clock: Arc::new(ClusterClock::wall()),
        }
    }

    /// Waits in the simulated cluster's own time when `simulated` and its API server tells
    /// its clock (`GET /simulated/clock`); otherwise, and on a real cluster, in wall time.
    pub async fn with_cluster_clock(mut self, simulated: bool) -> Self {
        if simulated
            && let Ok(Some(c)) = self.get(SIMULATED_CLOCK).await
            && let (Some(ms), Some(speed)) = (c["unixMs"].as_f64(), c["speed"].as_f64())
            && speed > 0.0
        {
            self.clock = Arc::new(ClusterClock::simulated(ms, speed));
        }
        self
    }

    /// The cluster's clock.
    pub fn clock(&self) -> &ClusterClock {
        &self.clock
    }

    /// Sleeps `d` of the cluster's time.
    pub async fn sleep(&self, d: Duration) {
        self.clock.sleep(d).await;
    }

    /// The deadline `d` of the cluster's time from now.
    pub fn deadline(&self, d: Duration) -> Deadline {
        self.clock.deadline(d)
    }

    /// Whether `d` has passed in the cluster's time (a simulated server's clock is read to
    /// confirm it; when it cannot be read, the estimate decides).
    pub async fn passed(&self, d: &Deadline) -> bool {
        if !self.clock.maybe_passed(d) {
            return false;
        }
        if !self.clock.is_simulated() {
            return true;
        }
        match self.get(SIMULATED_CLOCK).await {
            Ok(Some(c)) if c["unixMs"].is_f64() || c["unixMs"].is_u64() => {
                self.clock.observe(c["unixMs"].as_f64().unwrap_or_default());
                self.clock.confirmed(d)
            }
            _ => true,
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
                format!(
                    "{} (after {} attempts)",
                    crate::quote::server(&e.message),
                    e.attempts
                )
            } else {
                crate::quote::server(&e.message)
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
                // A PATCH is server-side apply: JSON is YAML, so the manifest goes as is.
                let content_type = if *method == Method::PATCH {
                    "application/apply-patch+yaml"
                } else {
                    "application/json"
                };
                req = req.header(http::header::CONTENT_TYPE, content_type);
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
            let body = read_capped(resp.into_body(), MAX_ANSWER_BYTES).await?;
            Ok(Reply {
                code,
                body,
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

    /// Applies `object` at its own `path` with server-side apply (field manager `locality`,
    /// `force`: the run owns what it created), as `kubectl apply --server-side` does.
    pub async fn apply(&self, path: &str, object: &Value) -> Result<Value, VerifyError> {
        self.json(
            Method::PATCH,
            &format!("{path}?fieldManager=locality&force=true"),
            Some(object),
        )
        .await?
        .map_err(|f| VerifyError::Api {
            what: format!(
                "apply {} {}",
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

    /// A watch of the collection at `path` (its query may select) from `resource_version`,
    /// ended by the server after `timeout_seconds`: the events, until the server ends the
    /// stream or it fails. Not retried here: the caller resumes from the last
    /// resourceVersion it saw, or knows its view has a gap.
    pub async fn watch(
        &self,
        path: &str,
        resource_version: &str,
        timeout_seconds: u64,
    ) -> Result<
        impl futures_util::Stream<Item = Result<kube::core::WatchEvent<Value>, String>> + use<>,
        VerifyError,
    > {
        use futures_util::StreamExt;
        let failed = |message: String| VerifyError::Api {
            what: format!("watch {path}"),
            message,
        };
        let sep = if path.contains('?') { '&' } else { '?' };
        let uri = format!(
            "{path}{sep}watch=true&allowWatchBookmarks=true&resourceVersion={resource_version}&timeoutSeconds={timeout_seconds}"
        );
        let req = Request::builder()
            .method(Method::GET)
            .uri(&uri)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| failed(e.to_string()))?;
        let events = tokio::time::timeout(self.request_timeout, self.client.request_events::<Value>(req))
            .await
            .map_err(|_| {
                failed(format!(
                    "no answer within {:?} (request timeout)",
                    self.request_timeout
                ))
            })?
            .map_err(|e| failed(chain(&e)))?;
        Ok(events.map(|e| e.map_err(|e| chain(&e))))
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
        let deadline = self.deadline(timeout);
        loop {
            if let Some(v) = check().await? {
                return Ok(Some(v));
            }
            if self.passed(&deadline).await {
                return Ok(None);
            }
            self.sleep(every).await;
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
    message = crate::quote::server(&message);
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
