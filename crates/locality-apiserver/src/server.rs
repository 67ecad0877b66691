//! Serving: connections (the header-read timeout, the virtual-clock driver), fault
//! injection and the request timeout, in front of [`crate::router::route`].

use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;

use crate::Shared;
use crate::connections::{Connections, Tracked, accept_backoff, connection_limit};
use crate::http::{Body, Query, error_response, is_long_running};
use crate::status::ApiError;

/// Accepts connections until `stop`, and drives the virtual clock.
pub(crate) async fn run(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let driver = shared.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            let mut sim = driver.lock();
            sim.catch_up();
            driver.notify(&sim);
        }
    });
    if let Some(every) = shared.injector.faults.expire_watches.filter(|d| !d.is_zero()) {
        let expirer = shared.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            loop {
                tick.tick().await;
                expirer.expire_watches();
            }
        });
    }
    let connections = Connections::new(connection_limit());
    let mut failures = 0u32;
    let mut accepted_in_a_row = 0u64;
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                failures = 0;
                // Let the connections run between accepts (their heads read, closed ones
                // dropped): a flood of new connections must not starve the open ones.
                accepted_in_a_row += 1;
                if accepted_in_a_row.is_multiple_of(8) {
                    tokio::task::yield_now().await;
                }
                stream
            }
            Err(e) => {
                // Out of file descriptors (or another failed accept): pause as Go's
                // `Server.Serve` does instead of spinning, and close the connection idle
                // longest so that the next accept can succeed.
                if matches!(e.raw_os_error(), Some(EMFILE | ENFILE)) {
                    connections.evict_idle();
                }
                failures = failures.saturating_add(1);
                tokio::select! {
                    _ = &mut stop => break,
                    () = tokio::time::sleep(accept_backoff(failures)) => {}
                }
                continue;
            }
        };
        // At the bound with every connection busy: this one is closed at once.
        let Some(registration) = connections.admit() else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let connections = connections.clone();
        let header_timeout = shared.limits.header_read_timeout;
        tokio::spawn(async move {
            let conn = registration.conn().clone();
            let for_service = conn.clone();
            let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
                let shared = shared.clone();
                let in_flight = connections.begin(&for_service);
                req.extensions_mut().insert(for_service.clone());
                async move {
                    with_faults(shared, req)
                        .await
                        .map(|answer| answer.map(|body| Tracked::new(body, in_flight)))
                }
            });
            // A client that sends no request head in time is disconnected
            // (`HEADER_READ_TIMEOUT`; hyper also applies it between requests).
            let serving = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .max_buf_size(MAX_CONNECTION_BUFFER)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::select! {
                _ = serving => {}
                // Closed to make room for another, or a watcher too slow: dropping the
                // connection closes the socket and frees its buffers.
                () = conn.closed() => {}
            }
            drop(registration);
        });
    }
}

/// `EMFILE`: the process's file-descriptor limit (Linux, macOS and the BSDs).
const EMFILE: i32 = 24;
/// `ENFILE`: the system's file-descriptor limit.
const ENFILE: i32 = 23;

/// Most bytes hyper buffers per connection, each way: a request head larger than this is
/// answered `431 Request Header Fields Too Large`, and an answer the client does not read
/// waits with at most this much queued (plus the watch's own queue, [`crate::watch`]).
/// 64 KiB (the real server reads heads of up to 1 MiB, Go's `DefaultMaxHeaderBytes`).
pub const MAX_CONNECTION_BUFFER: usize = 64 << 10;

/// An injected dropped connection: hyper closes the connection without answering.
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by fault injection (simulated)")
    }
}

impl std::error::Error for Dropped {}

/// Applies the configured faults (latency, drops, 5xx, 409 on create), then [`handle`].
async fn with_faults(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, Dropped> {
    shared.requests.record(req.method(), req.uri());
    // A round trip: half the latency on the way in, half on the way out (so what a client
    // reads is already that old when it arrives, as over a real network).
    let half = shared.injector.faults.latency / 2;
    if !half.is_zero() {
        tokio::time::sleep(half).await;
    }
    let answer = faulted(shared, req).await;
    if !half.is_zero() {
        tokio::time::sleep(half).await;
    }
    answer
}

/// The injected fault's answer, else [`handle`]'s.
async fn faulted(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, Dropped> {
    let faults = &shared.injector.faults;
    let segs: Vec<&str> = req.uri().path().split('/').filter(|s| !s.is_empty()).collect();
    let watch = Query::parse(req.uri().query()).flag("watch");
    if let Some(verb) = crate::faults::classify(req.method(), &segs, watch) {
        match shared.injector.decide(verb) {
            crate::faults::Decision::Serve => {}
            crate::faults::Decision::Drop => return Err(Dropped),
            crate::faults::Decision::Error => {
                let (code, reason) = faults.code_and_reason();
                let message = faults.error_message.clone().unwrap_or_else(|| {
                    format!(
                        "Internal error occurred: injected fault: {code} for {} (simulated API server)",
                        verb.as_str()
                    )
                });
                return Ok(error_response(&ApiError::custom(code, reason, message)));
            }
            crate::faults::Decision::Conflict => {
                let plural = segs.last().copied().unwrap_or_default();
                return Ok(error_response(&ApiError::custom(
                    409,
                    "Conflict",
                    format!(
                        "Operation cannot be fulfilled on {plural}: the object has been modified; please apply your changes to the latest version and try again (injected fault, simulated API server)"
                    ),
                )));
            }
        }
    }
    Ok(handle(Arc::clone(&shared), req).await)
}

/// [`crate::router::route`] within the request timeout, unless the request is long-running (see
/// [`crate::limits::REQUEST_TIMEOUT`]).
pub(crate) async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let segs: Vec<&str> = req.uri().path().split('/').filter(|s| !s.is_empty()).collect();
    let long_running = is_long_running(req.method(), &segs, &Query::parse(req.uri().query()));
    let limit = shared.limits.request_timeout;
    if long_running {
        return crate::router::route(shared, req).await;
    }
    match tokio::time::timeout(limit, crate::router::route(shared, req)).await {
        Ok(r) => r,
        Err(_) => error_response(&crate::limits::request_timed_out()),
    }
}
