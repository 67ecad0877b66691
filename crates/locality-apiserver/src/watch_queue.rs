//! A watch's queue of encoded events, bounded in bytes: what a watcher has not yet taken
//! waits here, and a watcher that leaves it full longer than [`WATCH_STALL_TIMEOUT`] is
//! closed (its connection with it), as the real watch cache closes a watcher that cannot keep
//! up; the client re-lists or re-watches.
//!
//! Upstream: k8s.io/apiserver `pkg/storage/cacher/cache_watcher.go` `cacheWatcher.add` (a
//! buffered channel of 10 to 1000 events; when it is full past the dispatch budget the watcher
//! is stopped, "Forcing … watcher close due to unresponsiveness"). The real cache shares each
//! event between its watchers; the simulated server encodes per watcher, so its bound is in
//! bytes.

use std::sync::Arc;
use std::time::Duration;

use hyper::body::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Most bytes of events queued for one watch and not yet taken by the connection (an event
/// larger than that is sent alone): 32 KiB. Hyper's own buffer for the connection adds at most
/// [`crate::server::MAX_CONNECTION_BUFFER`].
pub const WATCH_QUEUE_BYTES: usize = 32 << 10;

/// How long a watch's queue may stay full before the watcher is closed: 1 s.
pub const WATCH_STALL_TIMEOUT: Duration = Duration::from_secs(1);

/// Why a watch stopped sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// The client went away (the answer was dropped).
    ClientGone,
    /// The queue stayed full past [`WATCH_STALL_TIMEOUT`].
    TooSlow,
}

/// The sending end, held by the watch's task.
#[derive(Debug)]
pub(crate) struct Sender {
    tx: mpsc::UnboundedSender<(Bytes, OwnedSemaphorePermit)>,
    room: Arc<Semaphore>,
    capacity: usize,
    stall: Duration,
}

/// The receiving end, the answer's body.
pub(crate) type Receiver = mpsc::UnboundedReceiver<(Bytes, OwnedSemaphorePermit)>;

/// A queue of `capacity` bytes whose sender gives up after `stall` without room.
pub(crate) fn channel(capacity: usize, stall: Duration) -> (Sender, Receiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let capacity = capacity.clamp(1, u32::MAX as usize);
    let sender = Sender {
        tx,
        room: Arc::new(Semaphore::new(capacity)),
        capacity,
        stall,
    };
    (sender, rx)
}

impl Sender {
    /// Queues `event`, waiting at most the stall timeout for room.
    ///
    /// # Errors
    /// The client left, or the queue stayed full.
    pub(crate) async fn send(&self, event: Bytes) -> Result<(), Stopped> {
        let want = u32::try_from(event.len().clamp(1, self.capacity)).unwrap_or(u32::MAX);
        let permit = match self.room.clone().try_acquire_many_owned(want) {
            Ok(p) => p,
            Err(_) => tokio::select! {
                p = self.room.clone().acquire_many_owned(want) => p.map_err(|_| Stopped::ClientGone)?,
                () = self.tx.closed() => return Err(Stopped::ClientGone),
                () = tokio::time::sleep(self.stall) => return Err(Stopped::TooSlow),
            },
        };
        self.tx.send((event, permit)).map_err(|_| Stopped::ClientGone)
    }

    /// Resolves when the client went away.
    pub(crate) async fn closed(&self) {
        self.tx.closed().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_watcher_that_does_not_take_its_events_is_stopped() {
        let (tx, mut rx) = channel(100, Duration::from_millis(50));
        let event = Bytes::from(vec![b'x'; 40]);
        tx.send(event.clone()).await.unwrap();
        tx.send(event.clone()).await.unwrap();
        // 80 of 100 bytes queued: a third event does not fit, and nobody takes one.
        assert_eq!(tx.send(event.clone()).await, Err(Stopped::TooSlow));
        // Taking one makes room again.
        drop(rx.recv().await);
        tx.send(event.clone()).await.unwrap();
        drop(rx);
        assert_eq!(tx.send(event).await, Err(Stopped::ClientGone));
    }

    #[tokio::test]
    async fn an_event_larger_than_the_queue_is_sent_alone() {
        let (tx, mut rx) = channel(WATCH_QUEUE_BYTES, Duration::from_millis(50));
        let big = Bytes::from(vec![b'x'; WATCH_QUEUE_BYTES * 3]);
        tx.send(big.clone()).await.unwrap();
        assert_eq!(tx.send(Bytes::from_static(b"y")).await, Err(Stopped::TooSlow));
        assert_eq!(rx.recv().await.map(|(b, _)| b.len()), Some(big.len()));
        tx.send(Bytes::from_static(b"y")).await.unwrap();
    }
}
