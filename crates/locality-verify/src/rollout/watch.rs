//! N1's EndpointSlices watched through a rollout case: every change the API server
//! delivers, in order, kept as the slices' current state, so a phase too short for the
//! polls (a readiness flap) is still seen. A watch the server ends is resumed from the last
//! resourceVersion; one that fails (an error, a 410 after compaction) leaves a gap, and the
//! case's timeline then comes from the polls alone.

use std::collections::BTreeMap;

use futures_util::StreamExt;
use kube::core::WatchEvent;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::cluster::Cluster;

/// How long the server keeps one watch open before the task resumes it (s).
const WATCH_TIMEOUT_S: u64 = 60;

/// What the watch task hands over.
#[derive(Debug)]
pub(super) enum SliceEvent {
    /// A slice added or modified: its new state.
    Upsert(Value),
    /// A slice deleted: its name.
    Delete(String),
    /// The watch stopped with a gap: why.
    Gap(String),
}

/// Watches `path` (a collection with its selector) from `resource_version` until the
/// receiver is dropped or the watch fails; the task ends when its [`Watch`] is dropped.
pub(super) fn spawn(
    cluster: Cluster,
    path: String,
    resource_version: String,
) -> (mpsc::UnboundedReceiver<SliceEvent>, Watch) {
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut rv = resource_version;
        while !tx.is_closed() {
            let stream = match cluster.watch(&path, &rv, WATCH_TIMEOUT_S).await {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx.send(SliceEvent::Gap(e.to_string()));
                    return;
                }
            };
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                let sent = match event {
                    Ok(WatchEvent::Added(o) | WatchEvent::Modified(o)) => {
                        rv = resource_version_of(&o);
                        tx.send(SliceEvent::Upsert(o))
                    }
                    Ok(WatchEvent::Deleted(o)) => {
                        rv = resource_version_of(&o);
                        tx.send(SliceEvent::Delete(name_of(&o)))
                    }
                    Ok(WatchEvent::Bookmark(b)) => {
                        rv = b.metadata.resource_version;
                        Ok(())
                    }
                    Ok(WatchEvent::Error(e)) => {
                        let _ = tx.send(SliceEvent::Gap(format!("{} {}", e.code, e.message)));
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(SliceEvent::Gap(e));
                        return;
                    }
                };
                if sent.is_err() {
                    return;
                }
            }
            // Ended by the server: resumed from the last resourceVersion.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    });
    (rx, Watch(task))
}

/// The watch task, aborted when dropped (on every exit path of the case).
#[derive(Debug)]
pub(super) struct Watch(tokio::task::JoinHandle<()>);

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn resource_version_of(o: &Value) -> String {
    o["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn name_of(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

/// The watched slices, by name.
#[derive(Debug, Default)]
pub(super) struct Slices(BTreeMap<String, Value>);

impl Slices {
    /// The slices of a list.
    pub(super) fn of_list(list: &Value) -> Self {
        Slices(
            list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| (name_of(s), s.clone()))
                .collect(),
        )
    }

    /// One event applied; `Err(why)` for a gap.
    pub(super) fn apply(&mut self, event: SliceEvent) -> Result<(), String> {
        match event {
            SliceEvent::Upsert(o) => {
                self.0.insert(name_of(&o), o);
            }
            SliceEvent::Delete(name) => {
                self.0.remove(&name);
            }
            SliceEvent::Gap(why) => return Err(why),
        }
        Ok(())
    }

    /// The slices as a list (for [`super::judge::phase_of`]).
    pub(super) fn as_list(&self) -> Value {
        json!({"items": self.0.values().collect::<Vec<_>>()})
    }
}
