//! GET requests through the kube [`Client`] with our own status handling and retries, and
//! paginated lists handed page by page to `locality_ingest`.

use std::time::Duration;

use http::StatusCode;
use kube::Client;
use kube::client::Body;
use locality_ingest::{LoadOptions, Loaded};
use locality_model::objects::{ClusterState, Origin};

use crate::error::{LiveError, chain};

/// Retries after the first attempt for a retryable status (429, 500, 502, 503, 504).
const MAX_RETRIES: u32 = 3;
/// First retry delay; doubled each retry (100, 200, 400 ms).
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);
/// The largest answer read for one request (a page of a list, `/version`, an error body):
/// past it the request fails, naming the limit, instead of holding the answer in memory. A
/// page of 500 objects is a few megabytes.
pub(crate) const MAX_PAGE_BYTES: usize = 64 << 20;

/// A response that was not a success and is not fatal by itself (the caller decides).
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// URL requested (server, path and query).
    pub url: String,
    /// HTTP status.
    pub code: u16,
    /// `Status.reason` or the HTTP reason phrase.
    pub reason: String,
    /// `Status.message` or the body's text.
    pub message: String,
}

impl Failure {
    /// Into a fatal [`LiveError::Api`].
    pub fn fatal(self) -> LiveError {
        LiveError::Api {
            url: self.url,
            code: self.code,
            reason: self.reason,
            message: self.message,
        }
    }
}

/// The outcome of a GET that reached the server and was not a 401.
pub(crate) type Reply = Result<Vec<u8>, Failure>;

/// The client plus what error messages need.
pub(crate) struct Api {
    pub client: Client,
    /// API server URL without a trailing slash.
    pub server: String,
    /// Context name for messages (`in-cluster` without one).
    pub context: String,
    /// The most one request may take to answer completely (`--request-timeout`).
    pub request_timeout: Option<Duration>,
    /// The credentials locality sends (a token, a password): masked wherever the server's
    /// text is quoted (`locality_report::display::server_text`).
    pub secrets: Vec<String>,
}

impl Api {
    /// The client of `target` (as [`crate::client`] resolved it) with `opts`' request timeout.
    pub fn new(
        opts: &crate::LiveOptions,
        client: Client,
        target: &crate::Target,
        secrets: Vec<String>,
    ) -> Self {
        Api {
            request_timeout: opts.request_timeout,
            secrets,
            client,
            server: target.server.clone(),
            context: target
                .context
                .as_ref()
                .map_or_else(|| "in-cluster".to_owned(), |c| format!("context {c:?}")),
        }
    }

    /// GETs `url` (path and query). Retries 429/5xx a few times with a short backoff
    /// (honouring a `Retry-After` of at most 10 s); a 401 and transport errors are fatal;
    /// any other non-success is returned as a [`Failure`] for the caller to judge.
    pub async fn get(&self, url: &str) -> Result<Reply, LiveError> {
        let mut attempt = 0u32;
        loop {
            let request = http::Request::get(url)
                .header(http::header::ACCEPT, "application/json")
                .body(Body::empty())
                .map_err(|e| LiveError::Api {
                    url: url.to_owned(),
                    code: 0,
                    reason: "BadRequest".into(),
                    message: format!("cannot build the request: {e}"),
                })?;
            let exchange = async {
                let response = self.client.send(request).await.map_err(|e| self.transport(&e))?;
                let status = response.status();
                let retry_after = response
                    .headers()
                    .get(http::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let body = self.read_body(url, response.into_body()).await?;
                Ok::<_, LiveError>((status, retry_after, body))
            };
            let (status, retry_after, body) = match self.request_timeout {
                None => exchange.await?,
                Some(limit) => {
                    tokio::time::timeout(limit, exchange)
                        .await
                        .map_err(|_| LiveError::Transport {
                            server: self.server.clone(),
                            message: format!(
                                "GET {url}: no complete answer within {limit:?} (--request-timeout)"
                            ),
                        })??
                }
            };
            if status.is_success() {
                return Ok(Ok(body));
            }
            if retryable(status) && attempt < MAX_RETRIES {
                let backoff = FIRST_BACKOFF * 2u32.pow(attempt);
                let delay = retry_after.map_or(backoff, |d| d.min(MAX_RETRY_AFTER));
                attempt += 1;
                tokio::time::sleep(delay).await;
                continue;
            }
            let (reason, mut message) = status_text(status, &body, &self.secrets);
            if attempt > 0 {
                message = format!("{message} (after {} attempts)", attempt + 1);
            }
            if status == StatusCode::UNAUTHORIZED {
                return Err(LiveError::Unauthorized {
                    server: self.server.clone(),
                    context: self.context.clone(),
                    message,
                });
            }
            return Ok(Err(Failure {
                url: format!("{}{url}", self.server),
                code: status.as_u16(),
                reason,
                message,
            }));
        }
    }

    /// The body of an answer, frame by frame, refused past [`MAX_PAGE_BYTES`] (the
    /// connection is dropped there: nothing more is read).
    async fn read_body(&self, url: &str, mut body: Body) -> Result<Vec<u8>, LiveError> {
        use http_body_util::BodyExt as _;
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| self.transport(&e))?;
            if let Ok(data) = frame.into_data() {
                if bytes.len() + data.len() > MAX_PAGE_BYTES {
                    return Err(LiveError::Transport {
                        server: self.server.clone(),
                        message: format!(
                            "GET {url}: the answer is larger than {} MiB, the most one answer (a page \
                             of {} objects at most) may be; it was not read further",
                            MAX_PAGE_BYTES >> 20,
                            crate::DEFAULT_PAGE_SIZE
                        ),
                    });
                }
                bytes.extend_from_slice(&data);
            }
        }
        Ok(bytes)
    }

    fn transport(&self, e: &kube::Error) -> LiveError {
        let message = chain(e);
        // kube's wrappers name its own layers, not the problem.
        let message = ["ServiceError: ", "HyperError: "]
            .iter()
            .find_map(|p| message.strip_prefix(p))
            .map_or_else(|| message.clone(), str::to_owned);
        let message = self.quote(&message);
        LiveError::Transport {
            server: self.server.clone(),
            message,
        }
    }

    /// Text of the server (or about it) ready to quote: the credentials sent masked,
    /// shortened and escaped (`locality_report::display::server_text`).
    pub fn quote(&self, text: &str) -> String {
        let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        locality_report::display::server_text(text, &secrets)
    }

    /// Lists `path` (a collection URL without query) page by page with `limit` and
    /// `continue`, parsing each page while the next is fetched. `label` names the kind in
    /// page names (`<server><path> (page N)`) and `progress` gets the items so far.
    ///
    /// A `410 Gone` on a continue token restarts the list from the start once; every other
    /// failure is returned as is (the caller degrades on 403/404).
    pub async fn list(
        &self,
        path: &str,
        page_size: u32,
        progress: &(dyn Fn(usize) + Sync),
        notes: &mut Vec<String>,
    ) -> Result<Result<Listed, Failure>, LiveError> {
        let mut restarted = false;
        loop {
            match self.list_once(path, page_size, progress).await? {
                Err(f) if f.code == 410 && !restarted => {
                    restarted = true;
                    notes.push(format!(
                        "{path}: the continue token expired during the list (410 Gone: {}); listed again \
                         from the start",
                        f.message
                    ));
                }
                other => return Ok(other),
            }
        }
    }

    async fn list_once(
        &self,
        path: &str,
        page_size: u32,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Result<Listed, Failure>, LiveError> {
        let mut listed = Listed::default();
        let mut token: Option<String> = None;
        // A server that hands back a token it gave before would be followed forever.
        let mut seen_tokens: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut parsing: Option<tokio::task::JoinHandle<Result<Loaded, locality_ingest::IngestError>>> = None;
        loop {
            let url = list_url(path, page_size, token.as_deref());
            // Fetch this page while the previous one parses.
            let (reply, parsed) = match parsing.take() {
                Some(handle) => {
                    let (r, p) = tokio::join!(self.get(&url), handle);
                    (r, Some(p))
                }
                None => (self.get(&url).await, None),
            };
            if let Some(p) = parsed {
                listed.absorb(joined(p)?);
                progress(listed.state.len());
            }
            let body = match reply? {
                Ok(body) => body,
                Err(f) => return Ok(Err(f)),
            };
            listed.pages += 1;
            listed.bytes += body.len() as u64;
            let next = continue_token(&body);
            let name = if listed.pages == 1 && next.is_none() {
                format!("{}{path}", self.server)
            } else {
                format!("{}{path} (page {})", self.server, listed.pages)
            };
            parsing = Some(tokio::task::spawn_blocking(move || {
                locality_ingest::load_bytes(&name, &body, &LoadOptions::default())
            }));
            match next {
                Some(t) if !seen_tokens.insert(t.clone()) => {
                    return Err(LiveError::Transport {
                        server: self.server.clone(),
                        message: format!(
                            "GET {}{path}: page {} repeats the continue token of an earlier page; the \
                             list would never end",
                            self.server, listed.pages
                        ),
                    });
                }
                Some(t) => token = Some(t),
                None => break,
            }
        }
        if let Some(handle) = parsing {
            listed.absorb(joined(handle.await)?);
            progress(listed.state.len());
        }
        Ok(Ok(listed))
    }
}

/// The result of a parse task.
fn joined(
    r: Result<Result<Loaded, locality_ingest::IngestError>, tokio::task::JoinError>,
) -> Result<Loaded, LiveError> {
    match r {
        Ok(loaded) => Ok(loaded?),
        Err(e) => Err(LiveError::Runtime(format!("the parser task failed: {e}"))),
    }
}

/// The objects of one kind's list.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    pub state: ClusterState,
    pub warnings: Vec<String>,
    pub pages: usize,
    pub bytes: u64,
}

impl Listed {
    fn absorb(&mut self, loaded: Loaded) {
        let mut state = loaded.state;
        clear_origins(&mut state);
        self.state.append(state);
        self.warnings.extend(loaded.warnings);
    }
}

/// Item count of a state (all kinds).
pub(crate) trait Count {
    fn len(&self) -> usize;
}

impl Count for ClusterState {
    fn len(&self) -> usize {
        self.nodes.len()
            + self.pods.len()
            + self.services.len()
            + self.endpoint_slices.len()
            + self.workloads.len()
            + self.namespaces.len()
    }
}

/// Live objects have no file: an empty [`Origin`] tells reports to locate them logically
/// (`namespace/kind/name`) rather than by file and line.
pub(crate) fn clear_origins(state: &mut ClusterState) {
    for meta in state.metas_mut() {
        meta.origin = Origin::default();
    }
}

fn retryable(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::INTERNAL_SERVER_ERROR
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

/// `(reason, message)` of an error response: from a `metav1.Status` body, else the HTTP
/// reason phrase and the body's text; either quoted with the credentials in `secrets`
/// masked, shortened and escaped (`locality_report::display::server_text`).
pub(crate) fn status_text(status: StatusCode, body: &[u8], secrets: &[String]) -> (String, String) {
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let quote = |t: &str| locality_report::display::server_text(t, &secrets);
    #[derive(serde::Deserialize)]
    struct Status {
        #[serde(default)]
        reason: String,
        #[serde(default)]
        message: String,
    }
    let phrase = status.canonical_reason().unwrap_or("error").to_owned();
    if let Ok(s) = serde_json::from_slice::<Status>(body)
        && !s.message.is_empty()
    {
        let reason = if s.reason.is_empty() {
            phrase
        } else {
            quote(&s.reason)
        };
        return (reason, quote(&s.message));
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let message = if text.is_empty() {
        "(empty response body)".to_owned()
    } else {
        quote(text)
    };
    (phrase, message)
}

/// `path?limit=N[&continue=TOKEN]`; a limit of 0 asks for everything in one response.
pub(crate) fn list_url(path: &str, limit: u32, token: Option<&str>) -> String {
    match (limit, token) {
        (0, _) => path.to_owned(),
        (_, Some(t)) => format!("{path}?limit={limit}&continue={}", encode_query(t)),
        (_, None) => format!("{path}?limit={limit}"),
    }
}

/// Percent-encodes a query value (continue tokens are base64: `+`, `/`, `=`).
fn encode_query(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `metadata.continue` of a List response, read cheaply: the API server writes `kind`,
/// `apiVersion` and `metadata` before `items`, so only the bytes before `"items"` are
/// parsed. Other layouts (a proxy that reorders keys) fall back to a full pass that skips
/// the items unread. `None` when absent, empty, or the body is not JSON (the parser then
/// reports the problem).
pub(crate) fn continue_token(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        metadata: Option<ListMeta>,
    }
    #[derive(serde::Deserialize)]
    struct ListMeta {
        #[serde(default, rename = "continue")]
        continue_: Option<String>,
    }
    let token = |h: Head| h.metadata.and_then(|m| m.continue_).filter(|t| !t.is_empty());
    const ITEMS: &[u8] = b"\"items\"";
    if let Some(pos) = body.windows(ITEMS.len()).position(|w| w == ITEMS) {
        let head = body[..pos].trim_ascii_end();
        if let Some(head) = head.strip_suffix(b",") {
            let mut prefix = Vec::with_capacity(head.len() + 1);
            prefix.extend_from_slice(head);
            prefix.push(b'}');
            // Without metadata before items (kubectl's order), fall through to a full pass.
            if let Ok(h) = serde_json::from_slice::<Head>(&prefix)
                && h.metadata.is_some()
            {
                return token(h);
            }
        }
    }
    serde_json::from_slice::<Head>(body).ok().and_then(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_token_from_server_order_and_other_orders() {
        let server = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"eyJ2+/="},"items":[{"metadata":{"name":"x"}}]}"#;
        assert_eq!(continue_token(server).as_deref(), Some("eyJ2+/="));
        let last = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}"#;
        assert_eq!(continue_token(last), None);
        let empty = br#"{"kind":"PodList","metadata":{"continue":""},"items":[]}"#;
        assert_eq!(continue_token(empty), None);
        let kubectl = br#"{"apiVersion":"v1","items":[{"metadata":{"name":"items"}}],"kind":"List","metadata":{"continue":"abc"}}"#;
        assert_eq!(continue_token(kubectl).as_deref(), Some("abc"));
        assert_eq!(continue_token(b"not json"), None);
        // "items" inside a string before the real items does not confuse it.
        let tricky = br#"{"kind":"PodList","metadata":{"continue":"\"items\""},"items":[]}"#;
        assert_eq!(continue_token(tricky).as_deref(), Some("\"items\""));
    }

    #[test]
    fn list_urls_encode_the_token() {
        assert_eq!(list_url("/api/v1/pods", 500, None), "/api/v1/pods?limit=500");
        assert_eq!(list_url("/api/v1/pods", 0, None), "/api/v1/pods");
        assert_eq!(
            list_url("/api/v1/pods", 2, Some("a+b/c=")),
            "/api/v1/pods?limit=2&continue=a%2Bb%2Fc%3D"
        );
    }

    #[test]
    fn status_messages() {
        let body = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods is forbidden: User \"x\" cannot list resource \"pods\"","reason":"Forbidden","code":403}"#;
        let (reason, message) = status_text(StatusCode::FORBIDDEN, body, &[]);
        assert_eq!(reason, "Forbidden");
        assert!(message.starts_with("pods is forbidden"));
        let (reason, message) = status_text(StatusCode::BAD_GATEWAY, b"<html>bad gateway</html>\n", &[]);
        assert_eq!(reason, "Bad Gateway");
        assert_eq!(message, "<html>bad gateway</html>");
        let (_, message) = status_text(StatusCode::INTERNAL_SERVER_ERROR, b"", &[]);
        assert_eq!(message, "(empty response body)");
    }
}
