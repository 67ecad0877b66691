//! The simulated API server's storage: objects keyed by (kind, namespace, name) with
//! monotonically increasing resourceVersions, and an event log a watch can replay.
//!
//! Controllers of the simulated cluster act only through this store, as real controllers act
//! only through the API server; an HTTP API server can sit directly on top of it (list =
//! [`Store::list`] + [`Store::resource_version`], watch = [`Store::events_since`]).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use crate::defaults::with_api_defaults;
use crate::fasthash::FastMap;
use crate::objects::{Kind, Object, ObjectKey, SimWorkload};
use crate::time::{Millis, rfc3339};

/// Type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `ADDED`.
    Added,
    /// `MODIFIED`.
    Modified,
    /// `DELETED`.
    Deleted,
}

impl EventType {
    /// Wire spelling (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One entry of the simulated event log.
#[derive(Debug, Clone)]
pub struct WatchEvent {
    /// The resourceVersion this change produced (strictly increasing over the log).
    pub resource_version: u64,
    /// Virtual time of the change.
    pub time: Millis,
    /// ADDED / MODIFIED / DELETED.
    pub event_type: EventType,
    /// The object's key.
    pub key: ObjectKey,
    /// The object after the change (for DELETED: its last state).
    pub object: Arc<Object>,
}

/// An object as stored, with the metadata the simulated API server manages.
#[derive(Debug, Clone)]
pub struct Stored {
    /// `metadata.resourceVersion`: the log position of its last change.
    pub resource_version: u64,
    /// `metadata.uid`.
    pub uid: String,
    /// Virtual creation time.
    pub created: Millis,
    /// Virtual deletion time (`metadata.deletionTimestamp`), once a graceful delete started.
    pub deletion: Option<Millis>,
    /// The resourceVersion of the write that set a workload's `metadata.generation` (its
    /// creation or its last spec change): once the controllers have read it, they have
    /// observed that generation.
    pub generation_rv: u64,
    /// The object (its `meta.uid`, `creation_timestamp`, `deletion_timestamp` are kept in sync).
    pub object: Arc<Object>,
}

/// Errors of the simulated store, named like the API server's `Status` reasons.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// 409 AlreadyExists.
    #[error("simulated API: {0} already exists")]
    AlreadyExists(ObjectKey),
    /// 404 NotFound.
    #[error("simulated API: {0} not found")]
    NotFound(ObjectKey),
    /// 409 Conflict (stale resourceVersion precondition).
    #[error("simulated API: conflict on {key}: resourceVersion {given} is not the current {current}")]
    Conflict {
        /// The object.
        key: ObjectKey,
        /// The precondition given.
        given: u64,
        /// The stored version.
        current: u64,
    },
    /// 422 Invalid.
    #[error("simulated API: invalid object: {0}")]
    Invalid(String),
    /// 403 Forbidden: a create in a Namespace being deleted (NamespaceLifecycle admission).
    #[error("simulated API: unable to create new content in namespace {0} because it is being terminated")]
    NamespaceTerminating(String),
    /// The store's quota is used up ([`Store::set_quota`]), as etcd's `--quota-backend-bytes`
    /// raises its `NOSPACE` alarm: the API server relays it as a `500` with etcd's message.
    #[error("etcdserver: mvcc: database space exceeded")]
    SpaceExceeded,
    /// 410 Gone (a watch from a compacted resourceVersion).
    #[error("simulated API: resourceVersion {given} is too old (oldest available is {oldest})")]
    Gone {
        /// The version asked for.
        given: u64,
        /// The oldest version still in the log.
        oldest: u64,
    },
}

/// The stored objects: in slots, found by key through a hash index (a point lookup reads one
/// key instead of comparing strings down a 100,000-object B-tree) and listed in key order
/// through an ordered index.
#[derive(Debug, Clone, Default)]
struct Objects {
    slots: Vec<Option<Stored>>,
    free: Vec<usize>,
    index: FastMap<ObjectKey, usize>,
    order: BTreeMap<ObjectKey, usize>,
}

impl Objects {
    fn reserve(&mut self, objects: usize) {
        self.slots.reserve(objects);
        self.index.reserve(objects);
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn contains_key(&self, key: &ObjectKey) -> bool {
        self.index.contains_key(key)
    }

    fn get(&self, key: &ObjectKey) -> Option<&Stored> {
        self.index.get(key).and_then(|&i| self.slots[i].as_ref())
    }

    fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut Stored> {
        self.index.get(key).and_then(|&i| self.slots[i].as_mut())
    }

    /// Stores a new object (the caller checked that `key` is free).
    fn insert(&mut self, key: ObjectKey, stored: Stored) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(stored);
                i
            }
            None => {
                self.slots.push(Some(stored));
                self.slots.len() - 1
            }
        };
        self.index.insert(key.clone(), slot);
        self.order.insert(key, slot);
    }

    fn remove(&mut self, key: &ObjectKey) -> Option<Stored> {
        let slot = self.index.remove(key)?;
        self.order.remove(key);
        self.free.push(slot);
        self.slots[slot].take()
    }

    /// The objects from `start` on, in key order.
    fn from(&self, start: ObjectKey) -> impl Iterator<Item = (&ObjectKey, &Stored)> {
        self.order
            .range((Bound::Included(start), Bound::Unbounded))
            .filter_map(|(k, &i)| Some((k, self.slots[i].as_ref()?)))
    }
}

/// The simulated object store and its event log.
#[derive(Debug, Clone, Default)]
pub struct Store {
    objects: Objects,
    log: Vec<WatchEvent>,
    /// Versions `<= compacted` are no longer in the log.
    compacted: u64,
    rv: u64,
    uids: u64,
    /// Most objects stored ([`Store::set_quota`]); `None`: no quota.
    quota: Option<usize>,
}

impl Store {
    /// An empty store at resourceVersion 0.
    pub fn new() -> Self {
        Store::default()
    }

    /// Room in the event log for about `objects` more changes.
    pub(crate) fn reserve(&mut self, objects: usize) {
        self.log.reserve(objects);
        self.objects.reserve(objects);
    }

    /// The current (latest) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// Sets the store's quota: at most `max_objects` objects (`None`: no bound). A create that
    /// would store more is refused with [`StoreError::SpaceExceeded`]; updates (which add no
    /// object), deletes and reads go through, as etcd keeps taking reads and deletes under its
    /// `NOSPACE` alarm. The simulated quota counts objects where etcd's counts bytes of its
    /// database.
    pub fn set_quota(&mut self, max_objects: Option<usize>) {
        self.quota = max_objects;
    }

    /// The quota [`Store::set_quota`] set.
    pub fn quota(&self) -> Option<usize> {
        self.quota
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.objects.len() == 0
    }

    /// The object at `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&Stored> {
        self.objects.get(key)
    }

    /// All objects of a kind, by namespace then name.
    pub fn list(&self, kind: Kind) -> impl Iterator<Item = (&ObjectKey, &Stored)> {
        self.objects
            .from(ObjectKey::new(kind, "", ""))
            .take_while(move |(k, _)| k.kind == kind)
    }

    /// All objects of a kind in one namespace, by name.
    pub fn list_namespace<'a>(
        &'a self,
        kind: Kind,
        namespace: &'a str,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Stored)> + 'a {
        self.objects
            .from(ObjectKey::new(kind, namespace, ""))
            .take_while(move |(k, _)| k.kind == kind && k.namespace == namespace)
    }

    /// Creates an object; the store assigns uid, creationTimestamp and resourceVersion.
    pub fn create(&mut self, mut object: Object, now: Millis) -> Result<u64, StoreError> {
        let key = object.key().ok_or_else(|| {
            StoreError::Invalid("an object of a kind the simulated cluster cannot store".into())
        })?;
        if key.name.is_empty() {
            return Err(StoreError::Invalid(format!(
                "{} without a name",
                key.kind.as_str()
            )));
        }
        if self.objects.contains_key(&key) {
            return Err(StoreError::AlreadyExists(key));
        }
        if self.quota.is_some_and(|max| self.objects.len() >= max) {
            return Err(StoreError::SpaceExceeded);
        }
        self.uids += 1;
        let uid = format!(
            "sim-{:08x}-{:04x}",
            self.uids,
            (self.uids * 2_654_435_761) & 0xffff
        );
        if let Object::Workload(w) = &mut object {
            w.generation = 1;
        }
        let meta = object.meta_mut();
        meta.uid = uid.clone();
        meta.creation_timestamp = Some(rfc3339(now));
        meta.deletion_timestamp = None;
        let object = Arc::new(object);
        let rv = self.append(now, EventType::Added, key.clone(), object.clone());
        self.objects.insert(
            key,
            Stored {
                resource_version: rv,
                uid,
                created: now,
                deletion: None,
                generation_rv: rv,
                object,
            },
        );
        Ok(rv)
    }

    /// Replaces an object (spec or status). uid, creation and deletion timestamps are kept
    /// from the stored object. A change-free update is a no-op (no new version, no event), as
    /// on a real API server. `precondition`: the resourceVersion the writer read.
    pub fn update(
        &mut self,
        mut object: Object,
        now: Millis,
        precondition: Option<u64>,
    ) -> Result<u64, StoreError> {
        let key = object.key().ok_or_else(|| {
            StoreError::Invalid("an object of a kind the simulated cluster cannot store".into())
        })?;
        let stored = self
            .objects
            .get(&key)
            .ok_or_else(|| StoreError::NotFound(key.clone()))?;
        if let Some(given) = precondition
            && given != stored.resource_version
        {
            return Err(StoreError::Conflict {
                key,
                given,
                current: stored.resource_version,
            });
        }
        {
            let old = stored.object.meta();
            let meta = object.meta_mut();
            meta.uid = old.uid.clone();
            meta.creation_timestamp = old.creation_timestamp.clone();
            meta.deletion_timestamp = old.deletion_timestamp.clone();
        }
        let mut new_generation = false;
        if let (Object::Workload(old), Object::Workload(new)) = (&*stored.object, &mut object) {
            new.generation = old.generation;
            if !same_but_metadata(old, new) {
                new.generation += 1;
                new_generation = true;
            }
        }
        if *stored.object == object {
            return Ok(stored.resource_version);
        }
        let object = Arc::new(object);
        let rv = self.append(now, EventType::Modified, key.clone(), object.clone());
        let stored = self.objects.get_mut(&key).expect("checked above");
        stored.resource_version = rv;
        if new_generation {
            stored.generation_rv = rv;
        }
        stored.object = object;
        Ok(rv)
    }

    /// Starts a graceful deletion: sets `deletionTimestamp` (a MODIFIED event). Idempotent.
    pub fn mark_deleting(&mut self, key: &ObjectKey, now: Millis) -> Result<u64, StoreError> {
        let stored = self
            .objects
            .get(key)
            .ok_or_else(|| StoreError::NotFound(key.clone()))?;
        if stored.deletion.is_some() {
            return Ok(stored.resource_version);
        }
        let mut object = (*stored.object).clone();
        object.meta_mut().deletion_timestamp = Some(rfc3339(now));
        let object = Arc::new(object);
        let rv = self.append(now, EventType::Modified, key.clone(), object.clone());
        let stored = self.objects.get_mut(key).expect("checked above");
        stored.resource_version = rv;
        stored.deletion = Some(now);
        stored.object = object;
        Ok(rv)
    }

    /// Removes an object (a DELETED event carrying its last state).
    pub fn remove(&mut self, key: &ObjectKey, now: Millis) -> Result<Arc<Object>, StoreError> {
        let stored = self
            .objects
            .remove(key)
            .ok_or_else(|| StoreError::NotFound(key.clone()))?;
        self.append(now, EventType::Deleted, key.clone(), stored.object.clone());
        Ok(stored.object)
    }

    /// The events after `resource_version` (a watch from that version), or 410 Gone when the
    /// log no longer reaches back that far.
    pub fn events_since(&self, resource_version: u64) -> Result<&[WatchEvent], StoreError> {
        if resource_version < self.compacted {
            return Err(StoreError::Gone {
                given: resource_version,
                oldest: self.compacted,
            });
        }
        let start = self
            .log
            .partition_point(|e| e.resource_version <= resource_version);
        Ok(&self.log[start..])
    }

    /// The whole retained event log.
    pub fn events(&self) -> &[WatchEvent] {
        &self.log
    }

    /// Drops log entries up to and including `resource_version` (watches from older versions
    /// then get 410 Gone).
    pub fn compact(&mut self, resource_version: u64) {
        let cut = self
            .log
            .partition_point(|e| e.resource_version <= resource_version);
        self.log.drain(..cut);
        self.compacted = self.compacted.max(resource_version.min(self.rv));
    }

    fn append(&mut self, time: Millis, event_type: EventType, key: ObjectKey, object: Arc<Object>) -> u64 {
        self.rv += 1;
        self.log.push(WatchEvent {
            resource_version: self.rv,
            time,
            event_type,
            key,
            object,
        });
        self.rv
    }
}

/// Equal apart from metadata, as the API server stores them (defaulted): a write between them
/// leaves `metadata.generation` as it is. A workload read back and written again carries the
/// defaults it was served with.
fn same_but_metadata(a: &SimWorkload, b: &SimWorkload) -> bool {
    let mut a = with_api_defaults(a);
    let b = with_api_defaults(b);
    a.workload.meta = b.workload.meta.clone();
    a.generation = b.generation;
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use locality_model::objects::{Namespace, ObjectMeta};

    fn ns(name: &str) -> Object {
        Object::Namespace(Namespace {
            meta: ObjectMeta {
                name: name.into(),
                ..ObjectMeta::default()
            },
        })
    }

    #[test]
    fn versions_events_and_errors() {
        let mut s = Store::new();
        assert_eq!(s.create(ns("a"), 0).unwrap(), 1);
        assert!(matches!(s.create(ns("a"), 0), Err(StoreError::AlreadyExists(_))));
        let key = ObjectKey::new(Kind::Namespace, "", "a");
        // No-op update: same version, no event.
        assert_eq!(s.update(ns("a"), 5, None).unwrap(), 1);
        let mut labelled = ns("a");
        labelled.meta_mut().labels.insert("x".into(), "y".into());
        assert!(matches!(
            s.update(labelled.clone(), 5, Some(0)),
            Err(StoreError::Conflict { .. })
        ));
        assert_eq!(s.update(labelled, 5, Some(1)).unwrap(), 2);
        assert_eq!(s.mark_deleting(&key, 6).unwrap(), 3);
        assert!(s.get(&key).unwrap().object.meta().deletion_timestamp.is_some());
        s.remove(&key, 7).unwrap();
        let types: Vec<_> = s.events_since(0).unwrap().iter().map(|e| e.event_type).collect();
        assert_eq!(
            types,
            [
                EventType::Added,
                EventType::Modified,
                EventType::Modified,
                EventType::Deleted
            ]
        );
        assert_eq!(s.events_since(2).unwrap().len(), 2);
        s.compact(2);
        assert!(matches!(s.events_since(1), Err(StoreError::Gone { .. })));
        assert_eq!(s.events_since(2).unwrap().len(), 2);
    }

    #[test]
    fn past_the_quota_creates_are_refused_and_deletes_go_through() {
        let mut s = Store::new();
        s.set_quota(Some(2));
        s.create(ns("a"), 0).unwrap();
        s.create(ns("b"), 0).unwrap();
        assert_eq!(s.create(ns("c"), 0), Err(StoreError::SpaceExceeded));
        assert_eq!(
            StoreError::SpaceExceeded.to_string(),
            "etcdserver: mvcc: database space exceeded"
        );
        let mut labelled = ns("a");
        labelled.meta_mut().labels.insert("x".into(), "y".into());
        s.update(labelled, 1, None).unwrap();
        s.remove(&ObjectKey::new(Kind::Namespace, "", "b"), 2).unwrap();
        s.create(ns("c"), 3).unwrap();
        assert_eq!(s.len(), 2);
    }
}
