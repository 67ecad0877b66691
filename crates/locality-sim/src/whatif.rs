//! What-if over virtual time (docs/design.md §8.3): apply a change to a **simulated** cluster, run it
//! as fast as possible, and ask the model at every step which nodes are blind (a pod there
//! dialling the Service's cluster IP is dropped) for each Service port. The result is, per
//! Service port, each node's drop windows and the share of client traffic lost.
//!
//! The verdicts are the model's (`Matrix::summary`) on the state the simulated controllers
//! write; the simulated kube-proxies are not consulted, so this is the oracle's view of the
//! rollout, not a measurement.

use std::collections::BTreeMap;

use locality_model::matrix::{Matrix, MatrixConfig};
use locality_model::objects::{ServiceType, TrafficPolicy};

use crate::engine::{Engine, SimError};
use crate::objects::{Kind, Object, ObjectKey};
use crate::time::Millis;

/// A change to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Roll a DaemonSet or Deployment: a new template (an annotation), optionally with another
    /// `maxSurge` / `maxUnavailable`.
    Rollout {
        /// `Kind::DaemonSet` or `Kind::Deployment`, namespace, name.
        workload: ObjectKey,
        /// New `maxSurge`, if given.
        max_surge: Option<String>,
        /// New `maxUnavailable`, if given.
        max_unavailable: Option<String>,
    },
    /// Set a Service's `internalTrafficPolicy` (`Local`/`Cluster`) or `trafficDistribution`
    /// (a value, or empty to remove it).
    SetService {
        /// The Service.
        service: ObjectKey,
        /// `internalTrafficPolicy` or `trafficDistribution`.
        field: String,
        /// The new value.
        value: String,
    },
}

/// A span of virtual time a node was blind for a Service port.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Window {
    /// Start, virtual ms since the change.
    pub start_ms: Millis,
    /// End (exclusive), virtual ms since the change; the run's end when still open.
    pub end_ms: Millis,
}

/// One Service port over the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PortTimeline {
    /// `namespace/name`.
    pub service: String,
    /// `name:port/PROTOCOL`.
    pub port: String,
    /// IP family.
    pub family: String,
    /// Blind nodes before the change.
    pub blind_before: Vec<String>,
    /// Blind nodes at the end.
    pub blind_after: Vec<String>,
    /// Nodes blind from before the change to the end of the run (not the change's doing;
    /// left out of `windows` and of `lost_share`).
    pub blind_throughout: Vec<String>,
    /// Drop windows per node that the change opened (only nodes with at least one).
    pub windows: BTreeMap<String, Vec<Window>>,
    /// Client pods per node (`locality_audit::clients`: bound, unfinished pods of any
    /// namespace that the Service does not select, kube-proxy's excluded), the weights of
    /// the loss.
    pub clients: BTreeMap<String, usize>,
    /// Client-time the change cost: Σ clients × blind time in `windows` / (Σ clients ×
    /// duration), in [0, 1].
    pub lost_share: f64,
}

/// The outcome of a what-if run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhatIf {
    /// Virtual ms from the change to the end of the run.
    pub duration_ms: Millis,
    /// The change settled (a rollout: every pod of the workload new and Ready) before the limit.
    pub settled: bool,
    /// Steps at which the model was asked.
    pub steps: usize,
    /// Per Service port whose blind nodes changed at some step.
    pub ports: Vec<PortTimeline>,
}

type PortKey = (String, String, String);

fn blind(
    engine: &Engine,
    config: &MatrixConfig,
) -> BTreeMap<PortKey, (Vec<String>, BTreeMap<String, usize>)> {
    let state = engine.cluster_state();
    let matrix = Matrix::new(&state, config.clone());
    let mut out = BTreeMap::new();
    for (i, p) in matrix.ports.iter().enumerate() {
        let svc = p.service;
        let key = (
            format!("{}/{}", svc.meta.namespace, svc.meta.name),
            format!(
                "{}:{}/{}",
                p.info.port.name,
                p.info.port.port,
                p.info.port.protocol.as_str()
            ),
            p.info.family.as_str().to_string(),
        );
        let summary = matrix.summary(i, usize::MAX);
        // Who is a client is `audit`'s definition, so both commands count the same pods.
        let clients = locality_audit::clients::service_clients_per_node(&state, svc);
        out.insert(key, (summary.blind_nodes, clients));
    }
    out
}

/// True when every pod of the rolled workload carries the new template and is Ready.
fn rolled(engine: &Engine, workload: &ObjectKey, marker: &str) -> bool {
    let Some(uid) = engine.get(workload).map(|o| o.meta().uid.clone()) else {
        return true;
    };
    let rs_uids: Vec<String> = engine
        .store()
        .list_namespace(Kind::ReplicaSet, &workload.namespace)
        .filter(|(_, s)| s.object.meta().owner_references.iter().any(|o| o.uid == uid))
        .map(|(_, s)| s.object.meta().uid.clone())
        .collect();
    let pods: Vec<_> = engine
        .store()
        .list_namespace(Kind::Pod, &workload.namespace)
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(|p| {
            p.pod
                .meta
                .owner_references
                .iter()
                .any(|o| o.uid == uid || rs_uids.contains(&o.uid))
        })
        .collect();
    !pods.is_empty()
        && pods.iter().all(|p| {
            p.pod.ready
                && p.pod.meta.deletion_timestamp.is_none()
                && p.pod.meta.annotations.get(WHAT_IF_ANNOTATION).map(String::as_str) == Some(marker)
        })
}

/// The template annotation a what-if rollout sets (its value: the virtual time of the change).
pub const WHAT_IF_ANNOTATION: &str = "locality.dev/what-if-rollout";

/// Applies `change` now.
///
/// # Errors
/// The object is missing or is not of the kind the change needs, or the value is not valid.
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
            let marker = engine.now().to_string();
            w.template_annotations
                .insert(WHAT_IF_ANNOTATION.into(), marker.clone());
            if max_surge.is_some() {
                w.workload.max_surge = max_surge.clone();
            }
            if max_unavailable.is_some() {
                w.workload.max_unavailable = max_unavailable.clone();
            }
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
            match field.as_str() {
                "internalTrafficPolicy" => {
                    s.internal_traffic_policy = Some(match value.as_str() {
                        "Local" => TrafficPolicy::Local,
                        "Cluster" => TrafficPolicy::Cluster,
                        v => {
                            return Err(SimError::Topology(format!(
                                "internalTrafficPolicy {v:?}: expected Local or Cluster"
                            )));
                        }
                    })
                }
                "trafficDistribution" => {
                    s.traffic_distribution = (!value.is_empty()).then(|| value.clone());
                }
                f => {
                    return Err(SimError::Topology(format!(
                        "--set {f}: expected internalTrafficPolicy or trafficDistribution"
                    )));
                }
            }
            if s.type_ == ServiceType::ExternalName {
                return Err(SimError::Topology(format!(
                    "{service} is an ExternalName Service"
                )));
            }
            engine.update(Object::Service(s), None)?;
            Ok(String::new())
        }
    }
}

/// Applies `change`, runs the engine in steps of `step_ms` until the change settles (and
/// `settle_ms` more) or `limit_ms` passes, and reports every Service port whose blind nodes
/// changed at some step.
///
/// # Errors
/// As [`apply`].
pub fn run(
    engine: &mut Engine,
    change: &Change,
    config: &MatrixConfig,
    step_ms: Millis,
    limit_ms: Millis,
) -> Result<WhatIf, SimError> {
    let step_ms = step_ms.max(1);
    let before = blind(engine, config);
    let start = engine.now();
    let marker = apply(engine, change)?;
    let mut open: BTreeMap<(PortKey, String), Millis> = BTreeMap::new();
    let mut windows: BTreeMap<PortKey, BTreeMap<String, Vec<Window>>> = BTreeMap::new();
    let mut clients: BTreeMap<PortKey, BTreeMap<String, usize>> = BTreeMap::new();
    let mut changed: std::collections::BTreeSet<PortKey> = std::collections::BTreeSet::new();
    let mut steps = 0;
    let mut settled_at: Option<Millis> = None;
    let mut last;
    loop {
        let now = engine.now() - start;
        let state = blind(engine, config);
        steps += 1;
        for (key, (nodes, c)) in &state {
            if before.get(key).map(|b| &b.0) != Some(nodes) {
                changed.insert(key.clone());
            }
            let w = clients.entry(key.clone()).or_default();
            for (n, k) in c {
                let e = w.entry(n.clone()).or_default();
                *e = (*e).max(*k);
            }
            for n in nodes {
                open.entry((key.clone(), n.clone())).or_insert(now);
            }
        }
        // Close windows of nodes no longer blind.
        let still: Vec<(PortKey, String)> = open
            .keys()
            .filter(|(k, n)| !state.get(k).is_some_and(|(nodes, _)| nodes.contains(n)))
            .cloned()
            .collect();
        for k in still {
            if let Some(s) = open.remove(&k) {
                windows
                    .entry(k.0.clone())
                    .or_default()
                    .entry(k.1.clone())
                    .or_default()
                    .push(Window {
                        start_ms: s,
                        end_ms: now,
                    });
            }
        }
        last = state;
        let done = match change {
            Change::Rollout { workload, .. } => rolled(engine, workload, &marker),
            Change::SetService { .. } => now >= 30_000,
        };
        if done && settled_at.is_none() {
            settled_at = Some(now);
        }
        if settled_at.is_some_and(|t| now >= t + 5_000) || now >= limit_ms {
            break;
        }
        engine.run_for(step_ms);
    }
    let end = engine.now() - start;
    for ((key, node), s) in open {
        windows
            .entry(key)
            .or_default()
            .entry(node)
            .or_default()
            .push(Window {
                start_ms: s,
                end_ms: end,
            });
    }
    let ports = changed
        .into_iter()
        .map(|key| {
            let mut w = windows.remove(&key).unwrap_or_default();
            let throughout: Vec<String> = w
                .iter()
                .filter(|(_, ws)| ws.len() == 1 && ws[0].start_ms == 0 && ws[0].end_ms == end)
                .map(|(n, _)| n.clone())
                .filter(|n| before.get(&key).is_some_and(|b| b.0.contains(n)))
                .collect();
            for n in &throughout {
                w.remove(n);
            }
            let c = clients.remove(&key).unwrap_or_default();
            let total: f64 = c.values().map(|k| *k as f64).sum::<f64>() * end.max(1) as f64;
            let lost: f64 = w
                .iter()
                .map(|(n, ws)| {
                    let blind_ms: Millis = ws.iter().map(|x| x.end_ms - x.start_ms).sum();
                    c.get(n).copied().unwrap_or(0) as f64 * blind_ms as f64
                })
                .sum();
            PortTimeline {
                service: key.0.clone(),
                port: key.1.clone(),
                family: key.2.clone(),
                blind_before: before.get(&key).map(|b| b.0.clone()).unwrap_or_default(),
                blind_after: last.get(&key).map(|b| b.0.clone()).unwrap_or_default(),
                blind_throughout: throughout,
                windows: w,
                clients: c,
                lost_share: if total > 0.0 { lost / total } else { 0.0 },
            }
        })
        .collect();
    Ok(WhatIf {
        duration_ms: end,
        settled: settled_at.is_some(),
        steps,
        ports,
    })
}
