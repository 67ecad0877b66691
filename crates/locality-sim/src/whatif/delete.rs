//! `--delete` and `--replace`: one pod deleted as `kubectl delete pod` deletes it, and, for a
//! replacement, created again once it is gone, as `kubectl replace --force -f FILE` does.
//!
//! The deletion is graceful (k8s.io/kubernetes `pkg/registry/core/pod/strategy.go`
//! `CheckGracefulDelete`): the pod gets a deletion timestamp, the kubelet sends SIGTERM, the
//! process keeps serving its shutdown delay (a `preStop` sleep, agnhost's `--delay-shutdown`)
//! bounded by the grace period (the pod's `terminationGracePeriodSeconds`, or the one given),
//! exits, and the kubelet removes the pod. A pod owned by a controller (a ReplicaSet, a
//! DaemonSet, a StatefulSet) is then recreated by it; a bare pod is not. kubectl's
//! `--grace-period=0` without `--force` becomes 1 (k8s.io/kubectl `pkg/cmd/delete/delete.go`
//! `DeleteOptions.Complete`), which the caller applies.
//!
//! `kubectl replace --force` (k8s.io/kubectl `pkg/cmd/replace/replace.go` `forceReplace`)
//! deletes the object named in the file, waits until it is gone, and creates the file's object:
//! [`Deletion::create_replacement`] creates it the instant the old pod leaves the store.

use crate::engine::{Engine, SimError};
use crate::objects::{Kind, Object, ObjectKey, SimPod};
use crate::store::EventType;
use crate::time::Millis;

/// What happened to a deleted pod and its replacement, as the store recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PodEvent {
    /// The DELETE: a deletion timestamp, SIGTERM.
    Deleted,
    /// The old pod's Ready condition turned false while it was terminating (a readiness
    /// probe failing from SIGTERM on, or its process exiting): its endpoint stops serving.
    NotReady,
    /// The old pod left the store.
    Gone,
    /// The replacement was created (`--replace`, or its controller's new pod).
    Created,
    /// The replacement became Ready.
    Ready,
}

impl PodEvent {
    /// The event's name in the report (`deleted`, `notReady`, `gone`, `created`, `ready`).
    pub fn as_str(self) -> &'static str {
        match self {
            PodEvent::Deleted => "deleted",
            PodEvent::NotReady => "notReady",
            PodEvent::Gone => "gone",
            PodEvent::Created => "created",
            PodEvent::Ready => "ready",
        }
    }
}

/// The controller that owns a pod: (kind, uid).
fn controller_of(p: &SimPod) -> Option<(String, String)> {
    p.pod
        .meta
        .owner_references
        .iter()
        .find(|o| o.controller)
        .map(|o| (o.kind.clone(), o.uid.clone()))
}

/// Pods owned by `uid` that are Ready and not being deleted.
fn ready_owned(engine: &Engine, namespace: &str, uid: &str) -> usize {
    engine
        .store()
        .list_namespace(Kind::Pod, namespace)
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(|p| {
            p.pod.ready
                && p.pod.meta.deletion_timestamp.is_none()
                && p.pod
                    .meta
                    .owner_references
                    .iter()
                    .any(|o| o.controller && o.uid == uid)
        })
        .count()
}

/// The pod a change deletes, checked as the API server checks a DELETE (it exists) and, for a
/// replacement, as `kubectl replace` reads its file (one Pod, the same namespace and name).
///
/// # Errors
/// No such pod; a replacement that is not a Pod or names another pod.
pub fn check(engine: &Engine, pod: &ObjectKey, replacement: Option<&Object>) -> Result<SimPod, SimError> {
    if pod.kind != Kind::Pod {
        return Err(SimError::Topology(format!(
            "{pod}: only a Pod can be deleted this way"
        )));
    }
    let p = engine.get(pod).and_then(Object::as_pod).cloned().ok_or_else(|| {
        SimError::Topology(format!(
            "the simulated cluster has no pod {}/{}",
            pod.namespace, pod.name
        ))
    })?;
    if let Some(r) = replacement {
        match r.key() {
            Some(k) if k == *pod => {}
            Some(k) => {
                return Err(SimError::Topology(format!(
                    "--replace: the file holds {k}, not pod {}/{}",
                    pod.namespace, pod.name
                )));
            }
            None => return Err(SimError::Topology("--replace: the file holds no object".into())),
        }
    }
    Ok(p)
}

/// One deletion followed to its end: the old pod gone, and its replacement (the file's, or
/// the controller's) Ready.
#[derive(Debug, Clone)]
pub struct Deletion {
    pod: ObjectKey,
    /// The deleted pod's uid.
    uid: String,
    /// `kubectl replace --force`'s object, created once the old pod is gone (`None` once
    /// created, or for a plain delete).
    replacement: Option<Object>,
    /// Whether a replacement was given.
    replaced: bool,
    /// The owning controller's uid and how many of its pods were Ready before (not counting
    /// the deleted one if it was not Ready).
    owner: Option<(String, usize)>,
    /// The store's events read up to this resourceVersion.
    cursor: u64,
    /// The replacement's uid, once created.
    new_uid: Option<String>,
    /// What happened, at which virtual ms (each event once, in order).
    pub events: Vec<(Millis, PodEvent)>,
}

impl Deletion {
    /// Deletes `pod` now with `grace_period_seconds` (`None`: the pod's own), to be followed.
    ///
    /// # Errors
    /// As [`check`].
    pub fn start(
        engine: &mut Engine,
        pod: &ObjectKey,
        grace_period_seconds: Option<u64>,
        replacement: Option<&Object>,
    ) -> Result<Self, SimError> {
        let p = check(engine, pod, replacement)?;
        let owner = controller_of(&p).map(|(_, uid)| {
            let ready = ready_owned(engine, &pod.namespace, &uid);
            (uid, ready)
        });
        let cursor = engine.store().resource_version();
        engine.delete_with(pod, grace_period_seconds)?;
        let mut d = Deletion {
            pod: pod.clone(),
            uid: p.pod.meta.uid.clone(),
            replacement: replacement.cloned(),
            replaced: replacement.is_some(),
            owner,
            cursor,
            new_uid: None,
            events: Vec::new(),
        };
        d.observe(engine);
        Ok(d)
    }

    fn record(&mut self, at: Millis, e: PodEvent) {
        if !self.events.iter().any(|(_, x)| *x == e) {
            self.events.push((at, e));
        }
    }

    /// Reads the store's events since the last look: the old pod's deletion, readiness and
    /// removal; the replacement's creation and readiness (the file's pod of the same name, or
    /// a new pod of the same owner). Events compacted away before this look are recorded at
    /// the current instant.
    pub fn observe(&mut self, engine: &Engine) {
        let rv = engine.store().resource_version();
        if rv == self.cursor {
            return;
        }
        let owner_uid = self.owner.as_ref().map(|(u, _)| u.clone());
        let events: Vec<_> = match engine.events_since(self.cursor) {
            Ok(ev) => ev
                .iter()
                .filter(|e| e.key.kind == Kind::Pod && e.key.namespace == self.pod.namespace)
                .map(|e| (e.time, e.event_type, e.object.clone()))
                .collect(),
            Err(_) => {
                let now = engine.now();
                let current = engine.get(&self.pod).map(|o| std::sync::Arc::new(o.clone()));
                current
                    .map(|o| (now, EventType::Modified, o))
                    .into_iter()
                    .collect()
            }
        };
        self.cursor = rv;
        for (t, ty, o) in events {
            let Some(p) = o.as_pod() else { continue };
            let uid = &p.pod.meta.uid;
            if *uid == self.uid {
                match ty {
                    EventType::Deleted => self.record(t, PodEvent::Gone),
                    _ if p.pod.meta.deletion_timestamp.is_some() => {
                        self.record(t, PodEvent::Deleted);
                        if !p.pod.ready {
                            self.record(t, PodEvent::NotReady);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            let new = match &self.new_uid {
                Some(n) => n == uid,
                None => {
                    let ours = if self.replaced {
                        p.pod.meta.name == self.pod.name
                    } else {
                        owner_uid.as_ref().is_some_and(|o| {
                            p.pod
                                .meta
                                .owner_references
                                .iter()
                                .any(|r| r.controller && r.uid == *o)
                        }) && ty == EventType::Added
                    };
                    if ours && ty == EventType::Added {
                        self.new_uid = Some(uid.clone());
                        self.record(t, PodEvent::Created);
                    }
                    ours && ty == EventType::Added
                }
            };
            if new && p.pod.ready && ty != EventType::Deleted {
                self.record(t, PodEvent::Ready);
            }
        }
    }

    /// `namespace/name` of the pod deleted.
    pub fn pod_name(&self) -> String {
        format!("{}/{}", self.pod.namespace, self.pod.name)
    }

    /// The change followed, in words.
    pub fn describe(&self) -> String {
        let verb = if self.replaced { "replacement" } else { "deletion" };
        format!("{verb} of pod {}/{}", self.pod.namespace, self.pod.name)
    }

    /// True while the old pod (by uid) is still stored.
    fn old_present(&self, engine: &Engine) -> bool {
        engine.get(&self.pod).is_some_and(|o| o.meta().uid == self.uid)
    }

    /// Whether a replacement still waits for the old pod to go.
    pub fn waiting(&self) -> bool {
        self.replacement.is_some()
    }

    /// Creates the replacement once the old pod is gone (`kubectl replace --force`'s create
    /// after its wait); true when it did now.
    ///
    /// # Errors
    /// The simulated API refused the replacement (its namespace is gone).
    pub fn create_replacement(&mut self, engine: &mut Engine) -> Result<bool, SimError> {
        if self.replacement.is_none() || self.old_present(engine) {
            return Ok(false);
        }
        if let Some(r) = self.replacement.take() {
            engine
                .create(r)
                .map_err(|e| SimError::Topology(format!("--replace {}: {e}", self.pod)))?;
        }
        Ok(true)
    }

    /// Done: the old pod is gone, and the replacement (the file's) is Ready, or the owner has
    /// as many Ready pods as before; a bare pod deleted without replacement once it is gone.
    pub fn done(&mut self, engine: &Engine) -> bool {
        self.observe(engine);
        if self.old_present(engine) || self.replacement.is_some() {
            return false;
        }
        if self.replaced {
            return engine
                .get(&self.pod)
                .and_then(Object::as_pod)
                .is_some_and(|p| p.pod.ready && p.pod.meta.deletion_timestamp.is_none());
        }
        match &self.owner {
            Some((uid, before)) => ready_owned(engine, &self.pod.namespace, uid) >= (*before).max(1),
            None => true,
        }
    }
}
