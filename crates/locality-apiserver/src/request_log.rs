//! The record of requests served, kept only when [`crate::ServeOptions::record_requests`]
//! asks for it (tests that check what a client asked), and bounded in entries and in bytes.

use std::sync::Mutex;

/// Most requests recorded (the first ones).
pub const MAX_REQUEST_LOG: usize = 100_000;

/// Most bytes of methods and paths recorded (the first ones): 16 MiB, so that a client
/// sending long query strings cannot grow the record without bound.
pub const MAX_REQUEST_LOG_BYTES: usize = 16 << 20;

/// The record: method and path with its query per request, in order.
#[derive(Debug, Default)]
pub(crate) struct RequestLog {
    enabled: bool,
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    requests: Vec<(String, String)>,
    bytes: usize,
}

impl RequestLog {
    /// A record that keeps requests when `enabled`, and nothing otherwise.
    pub(crate) fn new(enabled: bool) -> Self {
        RequestLog {
            enabled,
            inner: Mutex::default(),
        }
    }

    /// Records one request, unless disabled or full.
    pub(crate) fn record(&self, method: &http::Method, uri: &http::Uri) {
        if !self.enabled {
            return;
        }
        let mut e = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
        let size = method.as_str().len() + path.len();
        if e.requests.len() >= MAX_REQUEST_LOG || e.bytes + size > MAX_REQUEST_LOG_BYTES {
            return;
        }
        e.bytes += size;
        e.requests.push((method.to_string(), path.to_string()));
    }

    /// A copy of what was recorded.
    pub(crate) fn snapshot(&self) -> Vec<(String, String)> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .requests
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disabled_record_keeps_nothing() {
        let log = RequestLog::new(false);
        log.record(&http::Method::GET, &"/version".parse().unwrap());
        assert!(log.snapshot().is_empty());
    }

    #[test]
    fn the_record_is_bounded_in_bytes() {
        let log = RequestLog::new(true);
        let long: http::Uri = format!("/version?{}", "x".repeat(60_000)).parse().unwrap();
        for _ in 0..1_000 {
            log.record(&http::Method::GET, &long);
        }
        let kept = log.snapshot();
        let bytes: usize = kept.iter().map(|(m, p)| m.len() + p.len()).sum();
        assert!(bytes <= MAX_REQUEST_LOG_BYTES, "{bytes}");
        assert_eq!(kept.len(), MAX_REQUEST_LOG_BYTES / (3 + 60_009));
        assert_eq!(kept[0].1.len(), 60_009);
    }
}
