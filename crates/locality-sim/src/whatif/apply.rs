//! `--apply`: objects read from manifests (already defaulted by the model's admission, as the
//! API server defaults what `kubectl apply` sends) replacing or creating objects of the
//! simulated cluster. A workload whose pod template differs from the stored one is rolled by
//! its simulated controller, as `kubectl apply` of a new template rolls it.

use std::collections::BTreeSet;

use locality_model::objects::{CONTROLLER_NAME, ClusterState, LABEL_MANAGED_BY, Labels, Pod, PodPhase};

use crate::engine::{Engine, SimError};
use crate::objects::{Kind, Object, ObjectKey, SimPod, SimWorkload};
use crate::seed::{SeedOptions, behaviour, fresh_meta, sim_workload};
use crate::templates::template_hash;

use super::WHAT_IF_ANNOTATION;

/// The objects of `state` as the simulated cluster stores them, Namespaces and Nodes first
/// (the order `kubectl apply` of one manifest needs), with the pod behaviour `options` gives
/// (as for a seeded cluster). Controller-managed EndpointSlices are left out: the simulated
/// EndpointSlice controller writes its own.
pub fn objects_of(state: &ClusterState, options: &SeedOptions) -> Vec<Object> {
    let mut out = Vec::new();
    let mut unknown = false;
    for n in &state.namespaces {
        let mut ns = n.clone();
        ns.meta = fresh_meta(&n.meta);
        out.push(Object::Namespace(ns));
    }
    for n in &state.nodes {
        let mut node = n.clone();
        node.meta = fresh_meta(&n.meta);
        out.push(Object::Node(node));
    }
    for p in &state.pod_disruption_budgets {
        let mut pdb = p.clone();
        pdb.meta = fresh_meta(&p.meta);
        out.push(crate::disruption::stored_budget(&pdb));
    }
    for s in &state.services {
        let mut svc = s.clone();
        svc.meta = fresh_meta(&s.meta);
        out.push(Object::Service(svc));
    }
    for s in &state.endpoint_slices {
        if s.meta.labels.get(LABEL_MANAGED_BY).map(String::as_str) != Some(CONTROLLER_NAME) {
            let mut slice = s.clone();
            slice.meta = fresh_meta(&s.meta);
            out.push(Object::EndpointSlice(slice));
        }
    }
    for w in &state.workloads {
        let mut sim = sim_workload(w, behaviour(&w.template, options, &mut unknown));
        sim.workload.meta.owner_references.clear();
        out.push(Object::Workload(sim));
    }
    for p in &state.pods {
        out.push(Object::Pod(SimPod {
            pod: Pod {
                meta: fresh_meta(&p.meta),
                spec: p.spec.clone(),
                phase: PodPhase::Pending,
                ready: false,
                pod_ips: Vec::new(),
            },
            behaviour: behaviour(&p.spec, options, &mut unknown),
            restart_count: 0,
        }));
    }
    out
}

/// A workload's template hash without the what-if marker (the template as the user wrote it).
fn plain_hash(w: &SimWorkload) -> String {
    let mut w = w.clone();
    w.template_annotations.remove(WHAT_IF_ANNOTATION);
    template_hash(&w)
}

/// Applies `objects` now: each replaces the stored object of its key (a Service keeps the
/// cluster IPs and NodePorts allocated to it unless it names its own, as the API server keeps
/// them on an update that leaves them out) or is created. Returns the workloads whose template
/// changed, each with the marker of its new template (their rollouts).
///
/// # Errors
/// The simulated API refused an object (its Namespace does not exist, a Pod that exists
/// already: a pod's spec cannot be replaced).
pub fn apply_objects(engine: &mut Engine, objects: &[Object]) -> Result<Vec<(ObjectKey, String)>, SimError> {
    let mut rollouts = Vec::new();
    for o in objects {
        let mut o = o.clone();
        let Some(key) = o.key() else { continue };
        let Some(old) = engine.get(&key).cloned() else {
            engine
                .create(o)
                .map_err(|e| SimError::Topology(format!("--apply {key}: {e}")))?;
            continue;
        };
        match (&mut o, &old) {
            (Object::Pod(_), _) => {
                return Err(SimError::Topology(format!(
                    "--apply {key}: the Pod exists; a pod's spec cannot be replaced (apply its workload)"
                )));
            }
            (Object::Service(new), Object::Service(old)) => {
                if new.cluster_ips.is_empty() {
                    new.cluster_ips = old.cluster_ips.clone();
                }
                for p in &mut new.ports {
                    if p.node_port == 0
                        && let Some(q) = old
                            .ports
                            .iter()
                            .find(|q| q.port == p.port && q.protocol == p.protocol)
                    {
                        p.node_port = q.node_port;
                    }
                }
            }
            (Object::Workload(new), Object::Workload(old)) => {
                if plain_hash(new) != plain_hash(old) {
                    let marker = engine.now().to_string();
                    new.template_annotations
                        .insert(WHAT_IF_ANNOTATION.into(), marker.clone());
                    rollouts.push((key.clone(), marker));
                } else if let Some(m) = old.template_annotations.get(WHAT_IF_ANNOTATION) {
                    // The same template: keep the marker, so that nothing rolls.
                    new.template_annotations
                        .insert(WHAT_IF_ANNOTATION.into(), m.clone());
                }
            }
            _ => {}
        }
        engine
            .update(o, None)
            .map_err(|e| SimError::Topology(format!("--apply {key}: {e}")))?;
    }
    Ok(rollouts)
}

/// The Services in `namespace` whose selector matches `labels`.
pub(super) fn selecting(engine: &Engine, namespace: &str, labels: &Labels) -> BTreeSet<(String, String)> {
    engine
        .store()
        .list_namespace(Kind::Service, namespace)
        .filter_map(|(_, s)| s.object.as_service())
        .filter(|s| {
            s.selector
                .as_ref()
                .is_some_and(|sel| !sel.is_empty() && sel.iter().all(|(k, v)| labels.get(k) == Some(v)))
        })
        .map(|s| (s.meta.namespace.clone(), s.meta.name.clone()))
        .collect()
}

/// The Services applying `objects` can touch: those selecting an applied workload's pods
/// (by its new or its stored template), the applied Services; every Service when a Node,
/// Pod or EndpointSlice is applied.
pub(super) fn scope(engine: &Engine, objects: &[Object]) -> super::observe::Scope {
    let mut set = BTreeSet::new();
    for o in objects {
        match o {
            Object::Workload(w) => {
                let ns = &w.workload.meta.namespace;
                set.extend(selecting(engine, ns, &w.workload.template_labels));
                if let Some(old) = o
                    .key()
                    .and_then(|k| engine.get(&k).and_then(Object::as_workload).cloned())
                {
                    set.extend(selecting(engine, ns, &old.workload.template_labels));
                }
            }
            Object::Service(s) => {
                set.insert((s.meta.namespace.clone(), s.meta.name.clone()));
            }
            Object::Namespace(_) | Object::Stored(_) => {}
            Object::Node(_) | Object::Pod(_) | Object::EndpointSlice(_) => return None,
        }
    }
    Some(set)
}
