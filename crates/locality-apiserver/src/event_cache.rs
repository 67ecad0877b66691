//! Watch events encoded once for every watcher: the watchers woken by one change encode the
//! same events at the same instant, so each event is encoded once and its bytes shared
//! (reference-counted) by every watch queue that holds it, as the real watch cache shares a
//! `cachingObject`'s serialization between its watchers (k8s.io/apiserver
//! `pkg/storage/cacher/caching_object.go`).
//!
//! An object's encoding depends on the simulation's state beyond the object itself (a
//! workload's status is computed when read), so an entry is valid only while the store's
//! resourceVersion and the virtual clock stay where they were when it was encoded: the cache
//! is emptied when either moves.

use std::collections::HashMap;

use hyper::body::Bytes;
use locality_sim::{EventType, ObjectKey};

use crate::protobuf::Output;

/// Most bytes the cache holds; past them it is emptied (the next watchers encode again).
const MAX_CACHED_BYTES: usize = 32 << 20;

/// What identifies an encoded watch event.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct EventKey {
    /// The object.
    pub(crate) key: ObjectKey,
    /// Its resourceVersion.
    pub(crate) resource_version: u64,
    /// The event's type.
    pub(crate) event_type: EventType,
    /// The framing.
    pub(crate) output: Output,
}

/// The cache (one per server, behind the simulation's lock).
#[derive(Debug, Default)]
pub(crate) struct EventCache {
    /// (store resourceVersion, virtual ms) the entries were encoded at.
    at: (u64, u64),
    events: HashMap<EventKey, Bytes>,
    bytes: usize,
}

impl EventCache {
    /// The event `key` encoded at `at` (the store's resourceVersion and the virtual time), by
    /// `encode` unless a watcher encoded it already.
    pub(crate) fn get_or_encode(
        &mut self,
        at: (u64, u64),
        key: EventKey,
        encode: impl FnOnce() -> Bytes,
    ) -> Bytes {
        if self.at != at || self.bytes > MAX_CACHED_BYTES {
            self.events.clear();
            self.bytes = 0;
            self.at = at;
        }
        if let Some(b) = self.events.get(&key) {
            return b.clone();
        }
        let b = encode();
        self.bytes += b.len();
        self.events.insert(key, b.clone());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locality_sim::Kind;

    fn key(rv: u64) -> EventKey {
        EventKey {
            key: ObjectKey::new(Kind::Pod, "default", "web"),
            resource_version: rv,
            event_type: EventType::Modified,
            output: Output::Json,
        }
    }

    #[test]
    fn an_event_is_encoded_once_per_instant() {
        let mut cache = EventCache::default();
        let mut encoded = 0;
        for _ in 0..3 {
            cache.get_or_encode((7, 100), key(5), || {
                encoded += 1;
                Bytes::from_static(b"event")
            });
        }
        assert_eq!(encoded, 1);
        // Another object version, or another instant: encoded again.
        cache.get_or_encode((7, 100), key(6), || {
            encoded += 1;
            Bytes::new()
        });
        cache.get_or_encode((7, 120), key(5), || {
            encoded += 1;
            Bytes::new()
        });
        assert_eq!(encoded, 3);
    }
}
