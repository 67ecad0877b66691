//! Open connections: how many the simulated server keeps, which one makes room for a new one,
//! the accept loop's back-off when the process runs out of file descriptors, and the requests
//! in flight on each (an idle connection is one waiting for a request head).
//!
//! A real kube-apiserver has no bound of its own on connections (a goroutine each, its file
//! descriptors bounded by the process's limit), and Go's `net/http` `Server.Serve` sleeps after
//! a failed accept, 5 ms doubling to 1 s, instead of spinning. The simulated server runs on one
//! thread and keeps its connections in one process beside the simulation, so it bounds them
//! ([`MAX_CONNECTIONS`], fewer when the file-descriptor limit is lower) and, at the bound,
//! closes the connection that has waited longest for a request head (a client holding a
//! partial header, or an idle kept-alive connection) to make room: a slow client cannot lock
//! a working one out. With every connection busy, a new one is closed at once.

use std::collections::{BTreeSet, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Bytes, Frame};
use tokio::sync::Notify;

use crate::http::Body;

/// Most connections kept open at once (fewer when the file-descriptor limit is lower; see
/// [`connection_limit`]). Not an upstream limit (the real server has none of its own).
pub const MAX_CONNECTIONS: usize = 4096;

/// File descriptors kept for everything but client connections (the listener, the
/// kubeconfig, logs, a margin).
const RESERVED_DESCRIPTORS: usize = 64;

/// The first pause after a failed accept: 5 ms, Go's `net/http` `Server.Serve`.
pub const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);

/// The longest pause after failed accepts in a row: 1 s, Go's `net/http` `Server.Serve`.
pub const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Connections waiting to be accepted that the kernel keeps: 4096, what Go's `net.Listen`
/// asks on Linux (`/proc/sys/net/core/somaxconn`, 4096 since Linux 5.4); the kernel caps it at
/// that setting. (Rust's standard library asks 128: a burst of connections then waits a SYN
/// retransmission, a second, for a place.)
pub const LISTEN_BACKLOG: i32 = 4096;

/// A listening socket on `addr`, non-blocking, with [`LISTEN_BACKLOG`].
///
/// # Errors
/// The OS's, binding or listening.
pub(crate) fn listen(addr: std::net::SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    // As the standard library's `TcpListener::bind` on Unix: a restarted server can bind the
    // port at once.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// The pause after `failures` failed accepts in a row (at least 1): 5 ms doubling to 1 s.
pub(crate) fn accept_backoff(failures: u32) -> Duration {
    let doubled = ACCEPT_BACKOFF_MIN.saturating_mul(1u32 << failures.saturating_sub(1).min(16));
    doubled.min(ACCEPT_BACKOFF_MAX)
}

/// The connection bound: [`MAX_CONNECTIONS`], or the soft file-descriptor limit less
/// [`RESERVED_DESCRIPTORS`] when that is lower (read from `/proc/self/limits`; elsewhere the
/// bound is [`MAX_CONNECTIONS`]).
pub(crate) fn connection_limit() -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.parse::<usize>().ok())
        });
    soft.map_or(MAX_CONNECTIONS, |n| {
        MAX_CONNECTIONS.min(n.saturating_sub(RESERVED_DESCRIPTORS).max(1))
    })
}

/// One open connection, as the registry sees it.
#[derive(Debug)]
pub(crate) struct Conn {
    id: u64,
    /// Told when the connection must close (made room for another, or a watcher too slow).
    close: Notify,
    /// Requests whose answer is not yet fully handed to hyper (changed under the registry's
    /// lock).
    in_flight: AtomicUsize,
    /// When the connection last became idle (opened, or its last request finished), in ms
    /// since the registry started: its key in the idle set.
    idle_since_ms: AtomicU64,
}

impl Conn {
    /// Closes the connection (its task drops it: the socket closes, its buffers are freed).
    pub(crate) fn close(&self) {
        self.close.notify_one();
    }

    /// Resolves once [`Conn::close`] was called.
    pub(crate) async fn closed(&self) {
        self.close.notified().await;
    }
}

/// The open connections.
#[derive(Debug)]
pub(crate) struct Connections {
    limit: usize,
    start: Instant,
    next_id: AtomicU64,
    open: Mutex<Open>,
}

/// The open connections, and the idle ones by the instant they became idle (the first is the
/// one idle longest), so that making room costs O(log n).
#[derive(Debug, Default)]
struct Open {
    all: HashMap<u64, Arc<Conn>>,
    idle: BTreeSet<(u64, u64)>,
}

impl Open {
    fn remove(&mut self, conn: &Conn) {
        if self.all.remove(&conn.id).is_some() {
            self.idle
                .remove(&(conn.idle_since_ms.load(Ordering::Relaxed), conn.id));
        }
    }
}

/// A connection's place in the registry, given up when dropped.
#[derive(Debug)]
pub(crate) struct Registration {
    registry: Arc<Connections>,
    conn: Arc<Conn>,
}

impl Registration {
    /// The connection.
    pub(crate) fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.conn);
    }
}

impl Connections {
    /// A registry keeping at most `limit` connections.
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Connections {
            limit: limit.max(1),
            start: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::new(Open::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// How many connections are open.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().all.len()
    }

    /// Registers a new connection, closing the one idle longest when at the limit; `None` when
    /// every open connection is busy (the new one is then closed).
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Registration> {
        let mut open = self.lock();
        if open.all.len() >= self.limit && !Self::evict_locked(&mut open) {
            return None;
        }
        let now = self.now_ms();
        let conn = Arc::new(Conn {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            close: Notify::new(),
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(now),
        });
        open.all.insert(conn.id, conn.clone());
        open.idle.insert((now, conn.id));
        Some(Registration {
            registry: self.clone(),
            conn,
        })
    }

    /// Closes the connection idle longest (file descriptors ran out); whether there was one.
    pub(crate) fn evict_idle(&self) -> bool {
        Self::evict_locked(&mut self.lock())
    }

    fn evict_locked(open: &mut Open) -> bool {
        let Some((_, id)) = open.idle.pop_first() else {
            return false;
        };
        if let Some(conn) = open.all.remove(&id) {
            conn.close();
        }
        true
    }

    /// Marks a request started on `conn`; finished when the returned guard drops.
    pub(crate) fn begin(self: &Arc<Self>, conn: &Arc<Conn>) -> InFlight {
        let mut open = self.lock();
        if conn.in_flight.fetch_add(1, Ordering::Relaxed) == 0 {
            open.idle
                .remove(&(conn.idle_since_ms.load(Ordering::Relaxed), conn.id));
        }
        drop(open);
        InFlight {
            registry: self.clone(),
            conn: conn.clone(),
        }
    }
}

/// A request in flight on a connection (see [`Connections::begin`]).
#[derive(Debug)]
pub(crate) struct InFlight {
    registry: Arc<Connections>,
    conn: Arc<Conn>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut open = self.registry.lock();
        if self.conn.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 && open.all.contains_key(&self.conn.id) {
            let now = self.registry.now_ms();
            self.conn.idle_since_ms.store(now, Ordering::Relaxed);
            open.idle.insert((now, self.conn.id));
        }
    }
}

/// An answer's body that keeps its request in flight until hyper has taken all of it.
pub(crate) struct Tracked {
    body: Body,
    in_flight: Option<InFlight>,
}

impl Tracked {
    /// `body`, its request in flight until it ends or is dropped.
    pub(crate) fn new(body: Body, in_flight: InFlight) -> Self {
        Tracked {
            body,
            in_flight: Some(in_flight),
        }
    }
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let polled = hyper::body::Body::poll_frame(Pin::new(&mut self.body), cx);
        if matches!(polled, Poll::Ready(None)) {
            self.in_flight = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        hyper::body::Body::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::Body::size_hint(&self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_backoff_doubles_from_5ms_to_1s() {
        let pauses: Vec<u64> = (1..=10).map(|n| accept_backoff(n).as_millis() as u64).collect();
        assert_eq!(pauses, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        assert_eq!(accept_backoff(u32::MAX), ACCEPT_BACKOFF_MAX);
    }

    #[test]
    fn at_the_limit_the_connection_idle_longest_makes_room() {
        let reg = Connections::new(2);
        let a = reg.admit().expect("room");
        let b = reg.admit().expect("room");
        // `a` is busy; `b` idle: a third connection closes `b`.
        let busy = reg.begin(a.conn());
        let c = reg.admit().expect("b makes room");
        assert_eq!(reg.len(), 2);
        let closed = b.conn().clone();
        drop(b);
        assert!(futures_ready(closed.closed()), "b was told to close");
        // Every connection busy: the next one is refused.
        let _busy_c = reg.begin(c.conn());
        assert!(reg.admit().is_none());
        drop(busy);
        assert!(reg.admit().is_some(), "a is idle again and makes room");
    }

    #[test]
    fn the_limit_follows_the_descriptor_limit() {
        assert!(connection_limit() <= MAX_CONNECTIONS);
        assert!(connection_limit() >= 1);
    }

    /// Whether `f` is ready at its first poll.
    fn futures_ready(f: impl std::future::Future<Output = ()>) -> bool {
        let mut f = std::pin::pin!(f);
        let waker = std::task::Waker::noop();
        f.as_mut().poll(&mut Context::from_waker(waker)).is_ready()
    }
}
