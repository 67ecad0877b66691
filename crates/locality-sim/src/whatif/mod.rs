//! What-if over virtual time (docs/simulate.md): apply a change to a **simulated** cluster
//! (built from a topology, or seeded from a real cluster's state by [`crate::seed`]), run it as
//! fast as possible, and at every step ask the model which nodes are blind (a pod there
//! dialling the Service's cluster IP is dropped), for each Service port the change can touch.
//!
//! The verdicts are the model's (`Matrix::port_route`) on the state the simulated controllers
//! write, **as kube-proxy has programmed it**: every node's rules follow the store
//! `proxy_sync_delay_ms` late, so a node is also blind while its rules send only to endpoints
//! whose process has already exited (`observe`). The simulated kube-proxies' own tables are
//! not consulted: this is the oracle's view of the change, not a measurement.

pub mod apply;
pub mod delete;
mod observe;
pub mod rollout;
mod settle;
pub mod strategy;
mod track;

use std::collections::BTreeSet;

use locality_model::matrix::MatrixConfig;
use locality_model::objects::{ANNOTATION_TOPOLOGY_MODE, ServiceType, TrafficPolicy};

use crate::engine::{Engine, SimError};
use crate::nodelifecycle::KubeletState;
use crate::objects::{Kind, Object, ObjectKey};
use crate::time::Millis;

pub use track::{Cause, NodeTimeline, PortTimeline, WhatIf, Window};

/// The fields `--set` changes on a Service.
pub const SERVICE_FIELDS: [&str; 4] = [
    "internalTrafficPolicy",
    "externalTrafficPolicy",
    "trafficDistribution",
    "topology-mode",
];

/// A change to apply.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Roll a DaemonSet, Deployment or StatefulSet: a new template (an annotation),
    /// optionally with another `maxSurge` / `maxUnavailable` (validated by
    /// [`strategy::effective`], for a StatefulSet by [`strategy::stateful_max_unavailable`]).
    Rollout {
        /// `Kind::DaemonSet`, `Kind::Deployment` or `Kind::StatefulSet`, namespace, name.
        workload: ObjectKey,
        /// New `maxSurge`, if given.
        max_surge: Option<String>,
        /// New `maxUnavailable`, if given.
        max_unavailable: Option<String>,
    },
    /// Set a field of a Service (one of [`SERVICE_FIELDS`]; an empty value removes it).
    SetService {
        /// The Service.
        service: ObjectKey,
        /// The field.
        field: String,
        /// The new value.
        value: String,
    },
    /// `kubectl drain NODE`: cordon it, then evict every pod on it but DaemonSet and mirror
    /// pods through the eviction subresource, which honours PodDisruptionBudgets
    /// (`disruption`).
    Drain {
        /// The node.
        node: String,
    },
    /// The node goes down: its kubelet stops reporting and its containers stop; the node
    /// lifecycle controller marks it NotReady and evicts its pods after their
    /// `tolerationSeconds`.
    NodeDown {
        /// The node.
        node: String,
    },
    /// `kubectl apply` of manifests: their objects ([`apply::objects_of`]) replace or create
    /// objects; a workload whose template changes rolls ([`apply::apply_objects`]).
    Apply {
        /// The files they were read from (for the report).
        files: Vec<String>,
        /// The objects.
        objects: Vec<Object>,
    },
    /// `kubectl delete pod` (graceful: SIGTERM, the shutdown delay within the grace period,
    /// then the kubelet removes the pod; its controller, if any, recreates it), or with a
    /// `replacement`, `kubectl replace --force -f FILE`: the replacement is created once the
    /// old pod is gone ([`delete::Deletion`]).
    DeletePod {
        /// The pod.
        pod: ObjectKey,
        /// `--grace-period` (`None`: the pod's `terminationGracePeriodSeconds`).
        grace_period_seconds: Option<u64>,
        /// The file the replacement was read from and the replacement Pod (same key).
        replacement: Option<(String, Box<Object>)>,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Rollout {
                workload,
                max_surge,
                max_unavailable,
            } => {
                write!(
                    f,
                    "rollout of {} {}/{}",
                    workload.kind.as_str(),
                    workload.namespace,
                    workload.name
                )?;
                if let Some(s) = max_surge {
                    write!(f, ", maxSurge {s}")?;
                }
                if let Some(u) = max_unavailable {
                    write!(f, ", maxUnavailable {u}")?;
                }
                Ok(())
            }
            Change::SetService {
                service,
                field,
                value,
            } => write!(
                f,
                "{field}={value} on Service {}/{}",
                service.namespace, service.name
            ),
            Change::Drain { node } => write!(f, "drain of node {node}"),
            Change::NodeDown { node } => write!(f, "node {node} down"),
            Change::Apply { files, objects } => {
                let keys: Vec<String> = objects
                    .iter()
                    .filter_map(Object::key)
                    .map(|k| k.to_string())
                    .collect();
                write!(f, "apply of {} ({})", files.join(", "), keys.join(", "))
            }
            Change::DeletePod {
                pod,
                grace_period_seconds,
                replacement,
            } => {
                match replacement {
                    Some((file, _)) => write!(
                        f,
                        "replacement of pod {}/{} by {file} (kubectl replace --force)",
                        pod.namespace, pod.name
                    )?,
                    None => write!(f, "deletion of pod {}/{}", pod.namespace, pod.name)?,
                }
                if let Some(g) = grace_period_seconds {
                    write!(f, ", grace period {g} s")?;
                }
                Ok(())
            }
        }
    }
}

/// How a run proceeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// Virtual ms between two observations.
    pub step_ms: Millis,
    /// Give up after this many virtual ms.
    pub limit_ms: Millis,
    /// Keep observing this long after the change settled (kube-proxy catching up).
    pub after_ms: Millis,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            step_ms: 250,
            limit_ms: 3_600_000,
            after_ms: 5_000,
        }
    }
}

/// The template annotation a what-if rollout sets (its value: the virtual time of the change).
pub const WHAT_IF_ANNOTATION: &str = "locality.dev/what-if-rollout";

/// The Services a change can touch: those selecting the rolled workload's pods, the Service
/// changed, or every Service (node events).
fn scope(engine: &Engine, change: &Change) -> observe::Scope {
    match change {
        Change::Rollout { workload, .. } => {
            let labels = engine
                .get(workload)
                .and_then(Object::as_workload)
                .map(|w| w.workload.template_labels.clone())
                .unwrap_or_default();
            Some(apply::selecting(engine, &workload.namespace, &labels))
        }
        Change::Apply { objects, .. } => apply::scope(engine, objects),
        Change::SetService { service, .. } => Some(BTreeSet::from([(
            service.namespace.to_string(),
            service.name.to_string(),
        )])),
        Change::Drain { .. } | Change::NodeDown { .. } => None,
        Change::DeletePod { pod, replacement, .. } => {
            let labels = |o: Option<&Object>| {
                o.and_then(Object::as_pod)
                    .map(|p| p.pod.meta.labels.clone())
                    .unwrap_or_default()
            };
            let mut set = apply::selecting(engine, &pod.namespace, &labels(engine.get(pod)));
            if let Some((_, r)) = replacement {
                let r: &Object = r;
                set.extend(apply::selecting(engine, &pod.namespace, &labels(Some(r))));
            }
            Some(set)
        }
    }
}

/// The union of the changes' scopes.
fn scope_of(engine: &Engine, changes: &[Change]) -> observe::Scope {
    let mut all = BTreeSet::new();
    for c in changes {
        all.extend(scope(engine, c)?);
    }
    Some(all)
}

/// The Services (`namespace`, `name`) the changes can touch (`None`: every Service).
pub fn services_in_scope(engine: &Engine, changes: &[Change]) -> Option<BTreeSet<(String, String)>> {
    scope_of(engine, changes)
}

fn policy(field: &str, v: &str) -> Result<Option<TrafficPolicy>, SimError> {
    match v {
        "Local" => Ok(Some(TrafficPolicy::Local)),
        "Cluster" => Ok(Some(TrafficPolicy::Cluster)),
        "" => Ok(None),
        v => Err(SimError::Topology(format!(
            "{field} {v:?}: expected Local or Cluster"
        ))),
    }
}

/// Applies `change` now; returns the rollout's marker (empty for other changes).
///
/// # Errors
/// The object is missing or is not of the kind the change needs, or the value is not valid
/// (as the API server would refuse it).
pub fn apply(engine: &mut Engine, change: &Change) -> Result<String, SimError> {
    let missing = |k: &ObjectKey| SimError::Topology(format!("the simulated cluster has no {k}"));
    match change {
        Change::Rollout {
            workload,
            max_surge,
            max_unavailable,
        } => {
            let mut w = engine
                .get(workload)
                .and_then(Object::as_workload)
                .cloned()
                .ok_or_else(|| missing(workload))?;
            if workload.kind == Kind::StatefulSet {
                let gate = engine.max_unavailable_stateful_set();
                let unavailable = strategy::stateful_max_unavailable(
                    &w.workload,
                    max_surge.as_deref(),
                    max_unavailable.as_deref(),
                    gate,
                )
                .map_err(|e| SimError::Topology(format!("{workload}: {e}")))?;
                let marker = engine.now().to_string();
                w.template_annotations
                    .insert(WHAT_IF_ANNOTATION.into(), marker.clone());
                if unavailable.is_some() {
                    w.workload.max_unavailable = unavailable;
                }
                engine.update(Object::Workload(w), None)?;
                return Ok(marker);
            }
            let (surge, unavailable) =
                strategy::effective(&w.workload, max_surge.as_deref(), max_unavailable.as_deref())
                    .map_err(|e| SimError::Topology(format!("{workload}: {e}")))?;
            let marker = engine.now().to_string();
            w.template_annotations
                .insert(WHAT_IF_ANNOTATION.into(), marker.clone());
            w.workload.max_surge = Some(surge);
            w.workload.max_unavailable = Some(unavailable);
            engine.update(Object::Workload(w), None)?;
            Ok(marker)
        }
        Change::SetService {
            service,
            field,
            value,
        } => {
            let mut s = engine
                .get(service)
                .and_then(Object::as_service)
                .cloned()
                .ok_or_else(|| missing(service))?;
            if s.type_ == ServiceType::ExternalName {
                return Err(SimError::Topology(format!(
                    "{service} is an ExternalName Service"
                )));
            }
            match field.as_str() {
                "internalTrafficPolicy" => s.internal_traffic_policy = policy(field, value)?,
                "externalTrafficPolicy" => s.external_traffic_policy = policy(field, value)?,
                "trafficDistribution" => {
                    s.traffic_distribution = (!value.is_empty()).then(|| value.clone());
                }
                "topology-mode" => {
                    if value.is_empty() {
                        s.meta.annotations.remove(ANNOTATION_TOPOLOGY_MODE);
                    } else {
                        s.meta
                            .annotations
                            .insert(ANNOTATION_TOPOLOGY_MODE.into(), value.clone());
                    }
                }
                f => {
                    return Err(SimError::Topology(format!(
                        "--set {f}: expected one of {}",
                        SERVICE_FIELDS.join(", ")
                    )));
                }
            }
            engine.update(Object::Service(s), None)?;
            Ok(String::new())
        }
        Change::Drain { node } => {
            engine.drain(node)?;
            Ok(String::new())
        }
        Change::NodeDown { node } => {
            engine.set_kubelet_state(node, KubeletState::Stopped)?;
            engine.stop_containers(node);
            Ok(String::new())
        }
        Change::Apply { objects, .. } => {
            apply::apply_objects(engine, objects)?;
            Ok(String::new())
        }
        Change::DeletePod {
            pod,
            grace_period_seconds,
            replacement,
        } => {
            let mut d = delete::Deletion::start(
                engine,
                pod,
                *grace_period_seconds,
                replacement.as_ref().map(|(_, o)| &**o),
            )?;
            // Applied on its own (not measured by [`run`]): the replacement once the pod is
            // gone, waiting at most its grace period and a minute more.
            let grace = grace_period_seconds.unwrap_or(3_600);
            let deadline = engine.now() + grace.saturating_mul(1000) + 60_000;
            while d.waiting() && engine.next_event_time().is_some_and(|t| t <= deadline) {
                engine.step();
                d.create_replacement(engine)?;
            }
            Ok(String::new())
        }
    }
}

impl Engine {
    /// Every container on `node` stops (the node lost power): its pods' processes no longer
    /// serve, though the store still shows them until the control plane notices.
    pub(crate) fn stop_containers(&mut self, node: &str) {
        let mut stopped = Vec::new();
        for rt in self.pods.values_mut().filter(|rt| rt.node == node) {
            rt.running = false;
            stopped.extend(rt.ips.iter().copied());
        }
        self.serving_changed(&stopped);
    }
}

/// Runs the engine `step_ms` on; while a replacement waits for its old pod to go, task by
/// task, so that it is created the instant the old pod leaves the store (as `kubectl replace
/// --force` creates it on the watch's DELETED event), not at the next step.
fn run_step(
    engine: &mut Engine,
    step_ms: Millis,
    deletions: &mut [delete::Deletion],
) -> Result<(), SimError> {
    let until = engine.now() + step_ms;
    while deletions.iter().any(delete::Deletion::waiting)
        && engine.next_event_time().is_some_and(|t| t <= until)
    {
        engine.step();
        for d in deletions.iter_mut() {
            d.create_replacement(engine)?;
        }
    }
    engine.run_until(until);
    Ok(())
}

/// How many of the drains among `changes` have not finished.
fn unfinished_drains(engine: &Engine, changes: &[Change]) -> usize {
    changes
        .iter()
        .filter(|c| match c {
            Change::Drain { node } => engine.drain_status(node).is_none_or(|d| d.finished_at.is_none()),
            _ => false,
        })
        .count()
}

/// Applies `changes` together, runs the engine in steps of `options.step_ms` until they
/// settle (every rolled workload new and Ready; a Service change after 30 s; a drain or a node
/// down once its evictions are done and the evicted pods replaced: `settle`) and
/// `options.after_ms` more, or until `options.limit_ms` passes, and reports every Service port
/// in the changes' scope, with what kept the changes from settling when they did not. `progress` is called after every step with the virtual ms since
/// the change.
///
/// # Errors
/// As [`apply()`].
pub fn run(
    engine: &mut Engine,
    changes: &[Change],
    config: &MatrixConfig,
    options: &RunOptions,
    progress: &mut dyn FnMut(Millis),
) -> Result<WhatIf, SimError> {
    let step_ms = options.step_ms.max(1);
    let scope = scope_of(engine, changes);
    let start = engine.now();
    let mut nodes = observe::NodeCache::default();
    let before = observe::snapshot(engine, config, &scope, 0, &mut nodes);
    let mut last_input = observe::fingerprint(engine, &scope);
    let mut tracker = track::Tracker::new(
        engine,
        before,
        (
            engine.config().proxy_sync_delay_ms,
            engine.config().proxy_min_sync_period_ms,
        ),
        &scope,
    );
    let settle = settle::Settle::new(engine, changes);
    let mut node_events_pending = Vec::new();
    // An applied manifest may change Services too: it settles as a Service change does.
    let service_changes = changes
        .iter()
        .any(|c| matches!(c, Change::SetService { .. } | Change::Apply { .. }));
    let mut last_unfinished = usize::MAX;
    let mut rollouts = Vec::new();
    let mut deletions = Vec::new();
    for c in changes {
        if let Change::DeletePod {
            pod,
            grace_period_seconds,
            replacement,
        } = c
        {
            deletions.push(delete::Deletion::start(
                engine,
                pod,
                *grace_period_seconds,
                replacement.as_ref().map(|(_, o)| &**o),
            )?);
            continue;
        }
        if let Change::Apply { objects, .. } = c {
            for (workload, marker) in apply::apply_objects(engine, objects)? {
                rollouts.push(rollout::RolloutWatch::new(engine, &workload, &marker));
            }
            continue;
        }
        let marker = apply(engine, c)?;
        if let Change::Rollout { workload, .. } = c {
            rollouts.push(rollout::RolloutWatch::new(engine, workload, &marker));
        }
    }
    let mut settled_at: Option<Millis> = None;
    let mut last_rv = 0;
    // The addresses whose processes started or stopped between two looks.
    engine.serving_log = Some(Vec::new());
    let mut done = false;
    // After settling, long enough for every node's rules to catch up.
    let after = options
        .after_ms
        .max(2 * engine.config().proxy_sync_delay_ms + step_ms);
    loop {
        let now = engine.now() - start;
        let rv = engine.store().resource_version();
        if rv != last_rv {
            let input = observe::fingerprint(engine, &scope);
            if input != last_input {
                tracker.push(observe::snapshot(engine, config, &scope, now, &mut nodes));
                last_input = input;
            }
            // Whether the rollouts and node events are done changes only with the store.
            done =
                rollouts.iter_mut().all(|w| w.done(engine)) && deletions.iter_mut().all(|d| d.done(engine));
            node_events_pending = settle.node_events_pending(engine, changes);
            last_rv = rv;
        }
        let changed = engine
            .serving_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        tracker.observe(engine, now, &changed);
        // A drain notices its pods are gone without a write of its own.
        let unfinished = unfinished_drains(engine, changes);
        if unfinished != last_unfinished {
            node_events_pending = settle.node_events_pending(engine, changes);
            last_unfinished = unfinished;
        }
        let done =
            done && node_events_pending.is_empty() && (!service_changes || now >= settle::SERVICE_SETTLE_MS);
        if done && settled_at.is_none() {
            settled_at = Some(now);
        }
        if settled_at.is_some_and(|t| now >= t + after) || now >= options.limit_ms {
            break;
        }
        progress(now);
        run_step(engine, step_ms, &mut deletions)?;
    }
    engine.serving_log = None;
    let end = engine.now() - start;
    let mut r = tracker.finish(end, settled_at.is_some(), step_ms);
    for d in &mut deletions {
        d.observe(engine);
        let pod = d.pod_name();
        r.pod_events.extend(
            d.events
                .iter()
                .map(|(t, e)| (t.saturating_sub(start), pod.clone(), *e)),
        );
    }
    if !r.settled {
        for w in &mut rollouts {
            if !w.done(engine) {
                r.unsettled.push(format!("the {} did not finish", w.describe()));
            }
        }
        r.unsettled.extend(settle.node_events_pending(engine, changes));
        for d in &mut deletions {
            if !d.done(engine) {
                r.unsettled.push(format!("the {} did not finish", d.describe()));
            }
        }
        if service_changes && r.duration_ms < settle::SERVICE_SETTLE_MS {
            r.unsettled.push("a Service change settles after 30 s".into());
        }
    }
    Ok(r)
}
