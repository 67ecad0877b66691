//! [`LiveError`]: why a live snapshot could not be taken.

use locality_ingest::IngestError;

/// Why a live snapshot failed. A forbidden list of one kind is **not** an error (it becomes
/// a warning in [`LiveSnapshot`](crate::LiveSnapshot)); these are the failures after which
/// no useful snapshot exists.
///
/// Every variant displays as one line that carries the API server's own message when
/// there is one. The binary maps the variants to exit codes (docs/exit-codes.md).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// No kubeconfig was found (no `--kubeconfig`, no usable `KUBECONFIG`, no
    /// `~/.kube/config`, not running in a pod).
    #[error(
        "no kubeconfig: {detail}; pass -f FILE to read objects from files, or --kubeconfig PATH \
         (or set KUBECONFIG) to read a cluster"
    )]
    NoKubeconfig {
        /// Where it looked.
        detail: String,
    },
    /// The kubeconfig exists but cannot be used: unreadable, invalid YAML, unknown context,
    /// no current-context, a cluster without a server URL, bad certificate data.
    #[error("kubeconfig {source_name}: {message}")]
    Kubeconfig {
        /// The kubeconfig file(s) or `in-cluster`.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// The API server could not be reached or talked to: connection refused, DNS, TLS,
    /// timeouts, a failing credential plugin.
    #[error("cannot talk to the API server at {server}: {message}")]
    Transport {
        /// The API server URL.
        server: String,
        /// The chain of causes, outermost first.
        message: String,
    },
    /// The API server refused the credentials (401 Unauthorized).
    #[error("the API server at {server} rejected the credentials of {context} (401 Unauthorized): {message}")]
    Unauthorized {
        /// The API server URL.
        server: String,
        /// The kubeconfig context (or `in-cluster`).
        context: String,
        /// The server's message.
        message: String,
    },
    /// A request failed with an HTTP error that cannot be degraded around (a 5xx after
    /// retries, a 400, a second `410 Gone`…).
    #[error("GET {url} failed: {code} {reason}: {message}")]
    Api {
        /// The URL requested (server, path and query).
        url: String,
        /// HTTP status code.
        code: u16,
        /// The server's reason (`InternalError`, `Expired`…) or the HTTP reason phrase.
        reason: String,
        /// The server's message.
        message: String,
    },
    /// A response could not be read as Kubernetes objects (the error names the page, e.g.
    /// `https://h:6443/api/v1/pods (page 2)`, and the object and field).
    #[error("reading the API server's response: {0}")]
    Ingest(#[from] IngestError),
    /// A one-shot read did not finish within its deadline (`LiveOptions::deadline`,
    /// `--live-timeout`): a server that answers slowly, or a list that does not end.
    #[error(
        "the read of the cluster did not finish within {limit:?} (--live-timeout): a server that answers \
         slowly, or a list that does not end"
    )]
    Deadline {
        /// The deadline.
        limit: std::time::Duration,
    },
    /// The async runtime could not be started ([`snapshot_blocking`](crate::snapshot_blocking)).
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
}

/// The error and its causes on one line, outermost first, without repeats (kube's errors
/// often repeat their source in their own message).
pub(crate) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    if let Some(text) = plugin_failure(err) {
        return text;
    }
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        let text = scrub(&e.to_string());
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = e.source();
    }
    parts.join(": ")
}

/// kube-rs reports a failing credential plugin (`AuthExecRun`) with a `Debug` dump of all
/// it printed, in its own message and in every error around it: when `err` or one of its
/// sources is one, the plugin's failure as [`crate::exec`] reports it (command, status, its
/// stderr shortened, escaped and masked) instead of the whole chain.
pub(crate) fn plugin_failure(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(kube::client::AuthError::AuthExecRun { cmd, out }) =
            e.downcast_ref::<kube::client::AuthError>()
        {
            return Some(crate::exec::failed(cmd, out.status, &out.stderr, &[]));
        }
        cur = e.source();
    }
    None
}

/// An error text with no secret left in it. Parsers of kubeconfigs and of exec-plugin output
/// render the input around an error (`7 |     client-key-data: …`, `1 | {"token": …}`):
/// only the first line of each cause is kept (the message and its line and column), and in
/// it every run of 20 or more characters that could be a token, key or certificate
/// (base64, base64url, JWT) is replaced by `[redacted]`.
pub(crate) fn scrub(text: &str) -> String {
    let first = without_userinfo(text.lines().next().unwrap_or_default());
    let first = first.as_str();
    let secretish = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_' | '.');
    let mut out = String::with_capacity(first.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        // Paths and words are not secrets: a long run needs digits and letters both.
        let mixed = run.chars().any(|c| c.is_ascii_digit()) && run.chars().any(|c| c.is_ascii_alphabetic());
        if run.len() >= 20 && mixed && !run.contains('/') {
            out.push_str("[redacted]");
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in first.chars() {
        if secretish(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// `text` with the user information of every URL in it (`https://user:pass@host`, a
/// kubeconfig's `server` or `proxy-url`) dropped: `https://host`.
pub(crate) fn without_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends at the path, the query, the fragment or anything a URL
        // cannot hold unescaped.
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(userinfo) => out.push_str(&authority[userinfo + 1..]),
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod scrub_tests {
    use super::scrub;

    /// The exec plugin's output and the kubeconfig's key data never survive (the messages
    /// kube renders for them, verbatim).
    #[test]
    fn rendered_inputs_and_token_like_runs_are_dropped() {
        let exec = "failed to parse auth exec output: error: line 1 column 1: expected mapping start\n --> <input>:1:1\n  |\n1 | garbage token=SuperSecretTokenValue1234567890\n  | ^ expected mapping start";
        assert_eq!(
            scrub(exec),
            "failed to parse auth exec output: error: line 1 column 1: expected mapping start"
        );
        let yaml = "failed to parse kubeconfig YAML: error: line 8 column 30: expected string scalar\n --> <input>:8:30\n7 |     client-key-data: SECRETKEYDATAabcdefghijklmnopqrstuvwxyz0123456789";
        assert!(!scrub(yaml).contains("SECRETKEYDATA"));
        assert_eq!(
            scrub("bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJzdWIiOiJ4In0.c2ln rejected"),
            "bearer [redacted] rejected"
        );
        // Credentials in URLs go, the rest of the URL stays.
        assert_eq!(
            scrub("cannot talk to the API server at https://admin:hunter2@10.0.0.1:6443/api: refused"),
            "cannot talk to the API server at https://10.0.0.1:6443/api: refused"
        );
        assert_eq!(
            scrub("proxy \"http://u:p@proxy:3128\" and socks5://only-user@p failed"),
            "proxy \"http://proxy:3128\" and socks5://p failed"
        );
        // Ordinary messages are kept.
        let plain = "context \"kind-kind\" not found (known contexts: a, b) at /home/u/.kube/config";
        assert_eq!(scrub(plain), plain);
    }
}
