//! Label and field selectors of list and watch requests, and what a filtered watch sees of
//! an event (objects entering and leaving the selection).

use std::collections::HashMap;
use std::sync::Arc;

use locality_sim::{EventType, Store, WatchEvent};
use locality_sim::{Kind, Object, ObjectKey};

use crate::http::Query;
use crate::select::{self, FieldTerm};
use crate::status::ApiError;
use crate::target::Target;

/// Label and field selectors of a request.
pub(crate) struct Filter {
    labels: locality_model::objects::LabelSelector,
    fields: Vec<FieldTerm>,
    pub(crate) namespace: Option<String>,
}

pub(crate) fn supported_fields(kind: Option<Kind>) -> &'static [&'static str] {
    match kind {
        Some(Kind::Pod) => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
        ],
        Some(Kind::Node) => &["metadata.name", "spec.unschedulable"],
        Some(Kind::Namespace) => &["metadata.name", "status.phase"],
        _ => &["metadata.name", "metadata.namespace"],
    }
}

fn field_value(o: &Object, field: &str) -> String {
    let m = o.meta();
    match (o, field) {
        (_, "metadata.name") => m.name.clone(),
        (_, "metadata.namespace") => m.namespace.clone(),
        (Object::Pod(p), "spec.nodeName") => p.pod.spec.node_name.clone(),
        (Object::Pod(_), "spec.restartPolicy") => "Always".into(),
        (Object::Pod(_), "spec.schedulerName") => "default-scheduler".into(),
        (Object::Pod(_), "spec.serviceAccountName") => String::new(),
        (Object::Pod(p), "spec.hostNetwork") => p.pod.spec.host_network.to_string(),
        (Object::Pod(p), "status.phase") => format!("{:?}", p.pod.phase),
        (Object::Pod(p), "status.podIP") => {
            p.pod.pod_ips.first().map(ToString::to_string).unwrap_or_default()
        }
        (Object::Node(n), "spec.unschedulable") => n.unschedulable.to_string(),
        (Object::Namespace(_), "status.phase") => if m.deletion_timestamp.is_some() {
            "Terminating"
        } else {
            "Active"
        }
        .into(),
        _ => String::new(),
    }
}

pub(crate) fn filter(t: &Target, q: &Query) -> Result<Filter, ApiError> {
    let labels = select::parse_label_selector(q.get("labelSelector").unwrap_or_default())?;
    let fields = select::parse_field_selector(
        q.get("fieldSelector").unwrap_or_default(),
        supported_fields(t.r.kind),
        t.r.plural,
    )?;
    Ok(Filter {
        labels,
        fields,
        namespace: if t.r.namespaced { t.namespace.clone() } else { None },
    })
}

/// The last state of each object a content-filtered watch has seen (`None`: deleted).
pub(crate) type LastSeen = HashMap<ObjectKey, Option<Arc<Object>>>;

impl Filter {
    pub(crate) fn matches(&self, key: &ObjectKey, o: &Object) -> bool {
        self.in_namespace(key) && self.content_matches(o)
    }

    fn in_namespace(&self, key: &ObjectKey) -> bool {
        self.namespace.as_ref().is_none_or(|ns| *ns == key.namespace)
    }

    pub(crate) fn content_matches(&self, o: &Object) -> bool {
        select::label_matches(&self.labels, &o.meta().labels)
            && select::fields_match(&self.fields, |f| field_value(o, f))
    }

    /// True when the filter reads labels or fields (an update can move an object in or out).
    fn by_content(&self) -> bool {
        !(self.labels.match_labels.is_empty()
            && self.labels.match_expressions.is_empty()
            && self.fields.is_empty())
    }

    /// What a watcher with this filter sees of `e` (k8s.io/apiserver
    /// `pkg/storage/cacher/cache_watcher.go` `convertToWatchEvent`): `ADDED` when the object
    /// starts matching, `MODIFIED` while it matches, `DELETED` carrying its previous state
    /// (at the event's resourceVersion) when an update makes it stop matching, nothing
    /// otherwise. `last` remembers the states seen; a state older than the retained event log
    /// is unknown, and then the event passes as it is if the object matches.
    pub(crate) fn convert(
        &self,
        e: &WatchEvent,
        last: &mut LastSeen,
        store: &Store,
    ) -> Option<(EventType, Arc<Object>, u64)> {
        if !self.in_namespace(&e.key) {
            return None;
        }
        if !self.by_content() {
            return Some((e.event_type, e.object.clone(), e.resource_version));
        }
        let prev = match last.get(&e.key) {
            Some(p) => Some(p.clone()),
            None => previous_state(store, e),
        };
        last.insert(
            e.key.clone(),
            (e.event_type != EventType::Deleted).then(|| e.object.clone()),
        );
        let cur = e.event_type != EventType::Deleted && self.content_matches(&e.object);
        let (old, old_obj) = match (e.event_type, prev) {
            (EventType::Deleted, _) => (self.content_matches(&e.object), e.object.clone()),
            (_, Some(Some(p))) => (self.content_matches(&p), p),
            (EventType::Modified, None) => (cur, e.object.clone()),
            (_, _) => (false, e.object.clone()),
        };
        let rv = e.resource_version;
        match (cur, old) {
            (true, false) => Some((EventType::Added, e.object.clone(), rv)),
            (true, true) => Some((EventType::Modified, e.object.clone(), rv)),
            (false, true) => Some((EventType::Deleted, old_obj, rv)),
            (false, false) => None,
        }
    }
}

/// The state of `e`'s object before `e`: `Some(None)` when it did not exist, `None` when the
/// retained event log does not reach back to its previous change.
fn previous_state(store: &Store, e: &WatchEvent) -> Option<Option<Arc<Object>>> {
    let log = store.events();
    let i = log.partition_point(|x| x.resource_version < e.resource_version);
    log[..i]
        .iter()
        .rev()
        .find(|x| x.key == e.key)
        .map(|x| (x.event_type != EventType::Deleted).then(|| x.object.clone()))
}
