//! A simulated cluster seeded from a real cluster's state (a `kubectl get -o json` dump or a
//! live read): its Nodes (zones, readiness, taints), Namespaces, Services, DaemonSets,
//! Deployments, ReplicaSets and StatefulSets with their rollout strategy, PodDisruptionBudgets, and every
//! bound Pod on its node with its readiness probe, grace period and `preStop` delay. What the
//! state does not say (how long an image pull takes, when the application answers its probe,
//! how fast kube-proxy programs a change) comes from [`SeedOptions`], and every such choice is
//! listed as an [`Assumption`].
//!
//! The pods of the seeded workloads are adopted by the simulated controllers (their owner
//! references and template-hash labels point at the simulated objects), so a rollout replaces
//! exactly the pods the dump has, where it has them. Pods of kinds the simulation does not run
//! (Jobs, bare pods) stay on their nodes as bare pods.

use std::collections::{BTreeMap, BTreeSet};

use locality_model::objects::{
    CONTROLLER_NAME, ClusterState, LABEL_MANAGED_BY, Namespace, ObjectMeta, OwnerReference, Pod,
    PodLifecycle, PodPhase, PreStop, ProbeHandler as ModelProbe, TargetPort, Workload, WorkloadKind,
};

use crate::engine::{Engine, SimConfig, SimError};
use crate::objects::{
    Kind, Object, ObjectKey, PodBehaviour, ProbeHandler, ReadinessProbe, SimPod, SimWorkload,
};
use crate::templates::{LABEL_CONTROLLER_REVISION_HASH, LABEL_POD_TEMPLATE_HASH, template_hash, with};
use crate::time::Millis;

/// What the input does not state, chosen by the caller (flags of `locality simulate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedOptions {
    /// Image pull and container start of every new pod, ms.
    pub pull_ms: Millis,
    /// From the container running to the application answering its readiness probe, ms.
    pub ready_after_ms: Millis,
}

impl Default for SeedOptions {
    fn default() -> Self {
        SeedOptions {
            pull_ms: DEFAULT_PULL_MS,
            ready_after_ms: DEFAULT_READY_AFTER_MS,
        }
    }
}

/// Default image pull and container start (`--pull`): 5 s.
pub const DEFAULT_PULL_MS: Millis = 5_000;
/// Default application start-up before its readiness probe passes (`--ready-after`): 2 s.
pub const DEFAULT_READY_AFTER_MS: Millis = 2_000;

/// Something the simulation assumed because the input does not state it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assumption {
    /// What it is about (`kube-proxy`, `image pull`, `DaemonSet monitoring/node-agent`…).
    pub subject: String,
    /// The value assumed (`1s`, `0s`…).
    pub value: String,
    /// Why, and how to change it.
    pub reason: String,
}

/// A seeded simulated cluster.
#[derive(Debug)]
pub struct Seeded {
    /// The engine at virtual time 0 (run it to let the pods start).
    pub engine: Engine,
    /// Every assumption made, sorted.
    pub assumptions: Vec<Assumption>,
}

pub(crate) fn fresh_meta(m: &ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        name: m.name.clone(),
        namespace: m.namespace.clone(),
        labels: m.labels.clone(),
        annotations: m.annotations.clone(),
        ..ObjectMeta::default()
    }
}

fn secs(ms: Millis) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}ms", ms)
    }
}

/// The pod behaviour the simulated kubelet runs for a pod spec's lifecycle.
pub(crate) fn behaviour(
    spec: &locality_model::objects::PodSpec,
    options: &SeedOptions,
    unknown_pre_stop: &mut bool,
) -> PodBehaviour {
    let l: &PodLifecycle = &spec.lifecycle;
    let port = |p: &TargetPort| -> Option<u16> {
        match p {
            TargetPort::Number(n) => Some(*n),
            TargetPort::Name(name) => spec
                .ports
                .iter()
                .find(|c| &c.name == name)
                .map(|c| c.container_port),
        }
    };
    let readiness = l.readiness_probe.as_ref().map(|p| {
        let handler = match &p.handler {
            ModelProbe::TcpSocket { port: tp } => port(tp).map(|port| ProbeHandler::TcpSocket { port }),
            ModelProbe::HttpGet { path, port: tp } => port(tp).map(|port| ProbeHandler::HttpGet {
                path: path.clone(),
                port,
            }),
            ModelProbe::Grpc { .. } | ModelProbe::Exec => None,
        };
        let positive = |v: Option<i64>, d: u64| {
            v.and_then(|v| u64::try_from(v).ok())
                .filter(|v| *v > 0)
                .unwrap_or(d)
        };
        ReadinessProbe {
            // A port the container does not declare, grpc and exec: passes while the process
            // runs (after --ready-after).
            handler: handler
                .filter(|h| match h {
                    ProbeHandler::TcpSocket { port } | ProbeHandler::HttpGet { port, .. } => {
                        spec.ports.iter().any(|c| c.container_port == *port)
                    }
                    ProbeHandler::Exec => true,
                })
                .unwrap_or(ProbeHandler::Exec),
            initial_delay_seconds: p
                .initial_delay_seconds
                .and_then(|v| u64::try_from(v).ok())
                .unwrap_or(0),
            period_seconds: positive(p.period_seconds, 10),
            failure_threshold: u32::try_from(positive(p.failure_threshold, 3)).unwrap_or(3),
        }
    });
    let grace = l
        .termination_grace_period_seconds
        .and_then(|g| u64::try_from(g).ok())
        .unwrap_or(30);
    let shutdown = match &l.pre_stop {
        Some(PreStop::Sleep { seconds }) => u64::try_from(*seconds).unwrap_or(0),
        Some(PreStop::Unknown { .. }) => {
            *unknown_pre_stop = true;
            0
        }
        None => 0,
    };
    // agnhost's `--delay-shutdown` serves after SIGTERM, which follows the preStop hook.
    let delay = l
        .shutdown_delay_seconds
        .and_then(|d| u64::try_from(d).ok())
        .unwrap_or(0);
    PodBehaviour {
        start_delay_ms: options.pull_ms,
        readiness,
        termination_grace_period_seconds: grace,
        shutdown_delay_seconds: (shutdown + delay).min(grace),
        listens: true,
        ready_after_ms: options.ready_after_ms,
    }
}

pub(crate) fn sim_workload(w: &Workload, behaviour: PodBehaviour) -> SimWorkload {
    let mut workload = w.clone();
    workload.meta = fresh_meta(&w.meta);
    // The containers' images, commands and environment are part of the template: a new
    // image rolls the workload (`--apply`).
    let digest = format!("{:?}", w.containers)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    SimWorkload {
        workload,
        pod_behaviour: behaviour,
        template_annotations: Default::default(),
        template_digest: if w.containers.is_empty() { 0 } else { digest },
        generation: 1,
    }
}

fn controller_of(p: &Pod) -> Option<&OwnerReference> {
    p.meta.owner_references.iter().find(|o| o.controller)
}

/// Builds a simulated cluster from `state` (see the module docs). The engine is at virtual
/// time 0: run it until the pods have started (their containers start after
/// `options.pull_ms`).
///
/// # Errors
/// The simulated API refused an object (a name it cannot store).
pub fn seed(state: &ClusterState, config: SimConfig, options: &SeedOptions) -> Result<Seeded, SimError> {
    let mut a: BTreeSet<Assumption> = BTreeSet::new();
    let (sync, min_sync) = (config.proxy_sync_delay_ms, config.proxy_min_sync_period_ms);
    let mut e = Engine::new(config);
    a.insert(Assumption {
        subject: "kube-proxy".into(),
        value: secs(sync),
        reason: "every node's kube-proxy programs a change this long after it is written (--proxy-sync)"
            .into(),
    });
    a.insert(Assumption {
        subject: "kube-proxy minSyncPeriod".into(),
        value: secs(min_sync),
        reason: "kube-proxy syncs at most this often: a change written sooner after its last sync waits for the next one, so the rules can hold a change --proxy-sync plus this long (--proxy-min-sync; kube-proxy's own default)".into(),
    });
    a.insert(Assumption {
        subject: "image pull".into(),
        value: secs(options.pull_ms),
        reason: "a new pod's image pull and container start take this long (--pull)".into(),
    });
    a.insert(Assumption {
        subject: "application start".into(),
        value: secs(options.ready_after_ms),
        reason: "a started container answers its readiness probe after this long; a pod without a readiness probe is Ready when its container runs (--ready-after)".into(),
    });
    a.insert(Assumption {
        subject: "shutdown".into(),
        value: "at once after preStop".into(),
        reason: "on SIGTERM a process stops serving when its preStop hook ends (within terminationGracePeriodSeconds); how it handles SIGTERM is not in the objects".into(),
    });
    a.insert(Assumption {
        subject: "pod IPs and EndpointSlices".into(),
        value: "the simulation's own".into(),
        reason: "pods get simulated IPs; the simulated EndpointSlice controller rewrites the slices of Services with a selector from the pods".into(),
    });

    e.expect_pods(state.pods.len());
    // Nodes.
    for n in &state.nodes {
        let mut node = n.clone();
        node.meta = fresh_meta(&n.meta);
        e.create(Object::Node(node))?;
    }
    // Namespaces: the dump's, and those its objects name.
    let mut namespaces: BTreeSet<String> = state.namespaces.iter().map(|n| n.meta.name.clone()).collect();
    namespaces.extend(state.services.iter().map(|s| s.meta.namespace.clone()));
    namespaces.extend(state.pods.iter().map(|p| p.meta.namespace.clone()));
    namespaces.extend(state.workloads.iter().map(|w| w.meta.namespace.clone()));
    namespaces.extend(
        state
            .pod_disruption_budgets
            .iter()
            .map(|p| p.meta.namespace.clone()),
    );
    for ns in namespaces.into_iter().filter(|n| !n.is_empty()) {
        if e.get(&ObjectKey::new(Kind::Namespace, "", ns.as_str())).is_none() {
            e.create(Object::Namespace(Namespace {
                meta: ObjectMeta {
                    name: ns,
                    ..ObjectMeta::default()
                },
            }))?;
        }
    }
    // PodDisruptionBudgets, read by drains.
    for p in &state.pod_disruption_budgets {
        let mut pdb = p.clone();
        pdb.meta = fresh_meta(&p.meta);
        e.create(crate::disruption::stored_budget(&pdb))?;
    }
    // Services, and the slices nothing in the simulation would write (selector-less Services).
    for s in &state.services {
        let mut svc = s.clone();
        svc.meta = fresh_meta(&s.meta);
        e.create(Object::Service(svc))?;
    }
    for s in &state.endpoint_slices {
        if s.meta.labels.get(LABEL_MANAGED_BY).map(String::as_str) == Some(CONTROLLER_NAME) {
            continue;
        }
        let mut slice = s.clone();
        slice.meta = fresh_meta(&s.meta);
        e.create(Object::EndpointSlice(slice))?;
    }

    // Workloads: DaemonSets and Deployments, and ReplicaSets no Deployment owns. The uid in
    // the dump maps to (the simulated owner key, its uid, the hash label to set on pods).
    let mut unknown_pre_stop: BTreeSet<String> = BTreeSet::new();
    let mut owners: BTreeMap<String, (String, String, String, &'static str, String)> = BTreeMap::new();
    let by_uid: BTreeMap<&str, &Workload> = state
        .workloads
        .iter()
        .filter(|w| !w.meta.uid.is_empty())
        .map(|w| (w.meta.uid.as_str(), w))
        .collect();
    for w in &state.workloads {
        let mut unknown = false;
        let b = behaviour(&w.template, options, &mut unknown);
        let label = format!("{} {}/{}", w.kind.as_str(), w.meta.namespace, w.meta.name);
        if unknown {
            unknown_pre_stop.insert(label.clone());
        }
        match w.kind {
            WorkloadKind::DaemonSet => {
                let sim = sim_workload(w, b);
                e.create(Object::Workload(sim))?;
                let key = ObjectKey::new(Kind::DaemonSet, w.meta.namespace.as_str(), w.meta.name.as_str());
                let stored = e.get(&key).and_then(Object::as_workload).cloned();
                if let Some(stored) = stored {
                    let hash = template_hash(&stored);
                    owners.insert(
                        w.meta.uid.clone(),
                        (
                            "DaemonSet".into(),
                            w.meta.name.clone(),
                            stored.workload.meta.uid.clone(),
                            LABEL_CONTROLLER_REVISION_HASH,
                            hash,
                        ),
                    );
                }
            }
            WorkloadKind::Deployment => {
                let sim = sim_workload(w, b);
                e.create(Object::Workload(sim))?;
                let key = ObjectKey::new(Kind::Deployment, w.meta.namespace.as_str(), w.meta.name.as_str());
                let Some(dep) = e.get(&key).and_then(Object::as_workload).cloned() else {
                    continue;
                };
                // The ReplicaSet the simulated Deployment controller would make for this
                // template, created now so that it adopts the dump's current pods.
                let hash = template_hash(&dep);
                let mut rs = dep.clone();
                rs.workload.kind = WorkloadKind::ReplicaSet;
                rs.workload.meta = ObjectMeta {
                    name: format!("{}-{hash}", w.meta.name),
                    namespace: w.meta.namespace.clone(),
                    labels: with(&dep.workload.template_labels, LABEL_POD_TEMPLATE_HASH, &hash),
                    owner_references: vec![OwnerReference {
                        kind: "Deployment".into(),
                        name: dep.workload.meta.name.clone(),
                        uid: dep.workload.meta.uid.clone(),
                        controller: true,
                    }],
                    ..ObjectMeta::default()
                };
                rs.workload.template_labels =
                    with(&dep.workload.template_labels, LABEL_POD_TEMPLATE_HASH, &hash);
                rs.workload
                    .selector
                    .match_labels
                    .insert(LABEL_POD_TEMPLATE_HASH.into(), hash.clone());
                rs.workload.replicas = Some(dep.workload.replicas.unwrap_or(1));
                rs.workload.max_surge = None;
                rs.workload.max_unavailable = None;
                rs.workload.update_strategy = None;
                let rs_name = rs.workload.meta.name.clone();
                e.create(Object::Workload(rs))?;
                let rs_key = ObjectKey::new(Kind::ReplicaSet, w.meta.namespace.as_str(), rs_name.as_str());
                let rs_uid = e.get(&rs_key).map(|o| o.meta().uid.clone()).unwrap_or_default();
                // The dump's ReplicaSets of this Deployment: their pods are the new one's.
                for (uid, other) in &by_uid {
                    if other.kind == WorkloadKind::ReplicaSet
                        && other
                            .meta
                            .owner_references
                            .iter()
                            .any(|o| o.controller && o.uid == w.meta.uid)
                    {
                        owners.insert(
                            (*uid).to_string(),
                            (
                                "ReplicaSet".into(),
                                rs_name.clone(),
                                rs_uid.clone(),
                                LABEL_POD_TEMPLATE_HASH,
                                hash.clone(),
                            ),
                        );
                    }
                }
            }
            WorkloadKind::ReplicaSet => {
                let owned = w
                    .meta
                    .owner_references
                    .iter()
                    .any(|o| o.controller && by_uid.contains_key(o.uid.as_str()));
                if !owned {
                    let mut sim = sim_workload(w, b);
                    sim.workload.meta.owner_references.clear();
                    e.create(Object::Workload(sim))?;
                    let key =
                        ObjectKey::new(Kind::ReplicaSet, w.meta.namespace.as_str(), w.meta.name.as_str());
                    let uid = e.get(&key).map(|o| o.meta().uid.clone()).unwrap_or_default();
                    owners.insert(
                        w.meta.uid.clone(),
                        ("ReplicaSet".into(), w.meta.name.clone(), uid, "", String::new()),
                    );
                }
            }
            WorkloadKind::StatefulSet => {
                // Its pods keep their ordinal names; labelled with the simulated revision,
                // the simulated StatefulSet controller owns and replaces them.
                let sim = sim_workload(w, b);
                e.create(Object::Workload(sim))?;
                let key = ObjectKey::new(Kind::StatefulSet, w.meta.namespace.as_str(), w.meta.name.as_str());
                if let Some(stored) = e.get(&key).and_then(Object::as_workload).cloned() {
                    owners.insert(
                        w.meta.uid.clone(),
                        (
                            "StatefulSet".into(),
                            w.meta.name.clone(),
                            stored.workload.meta.uid.clone(),
                            LABEL_CONTROLLER_REVISION_HASH,
                            crate::statefulsets::revision_name(&stored),
                        ),
                    );
                }
            }
        }
    }

    // Pods: bound and unfinished ones, on their node; the simulated kubelet starts them.
    let mut bare = 0usize;
    let mut unbound = 0usize;
    for p in &state.pods {
        if matches!(p.phase, PodPhase::Succeeded | PodPhase::Failed) || p.meta.deletion_timestamp.is_some() {
            continue;
        }
        if p.spec.node_name.is_empty() {
            unbound += 1;
            continue;
        }
        let mut unknown = false;
        let b = behaviour(&p.spec, options, &mut unknown);
        let mut pod = Pod {
            meta: fresh_meta(&p.meta),
            spec: p.spec.clone(),
            phase: PodPhase::Pending,
            ready: false,
            pod_ips: Vec::new(),
        };
        match controller_of(p).and_then(|o| owners.get(&o.uid)) {
            Some((kind, name, uid, label, hash)) => {
                if !label.is_empty() {
                    pod.meta.labels.insert((*label).to_string(), hash.clone());
                }
                pod.meta.owner_references = vec![OwnerReference {
                    kind: kind.clone(),
                    name: name.clone(),
                    uid: uid.clone(),
                    controller: true,
                }];
            }
            None => {
                if controller_of(p).is_some() {
                    bare += 1;
                }
                if unknown {
                    unknown_pre_stop.insert(format!("Pod {}/{}", p.meta.namespace, p.meta.name));
                }
            }
        }
        e.create(Object::Pod(SimPod {
            pod,
            behaviour: b,
            restart_count: 0,
        }))?;
    }
    if !unknown_pre_stop.is_empty() {
        let n = unknown_pre_stop.len();
        let first: Vec<String> = unknown_pre_stop.iter().take(3).cloned().collect();
        a.insert(Assumption {
            subject: "preStop".into(),
            value: "0s".into(),
            reason: format!(
                "{n} object(s) run a preStop hook whose duration is not stated (exec or httpGet), e.g. {}; assumed to end at once",
                first.join(", ")
            ),
        });
    }
    if bare > 0 {
        a.insert(Assumption {
            subject: "other owners".into(),
            value: format!("{bare} pod(s)"),
            reason: "pods whose controller the simulation does not run (Jobs, owners missing from the input) stay on their nodes and are never replaced".into(),
        });
    }
    if unbound > 0 {
        a.insert(Assumption {
            subject: "pending pods".into(),
            value: format!("{unbound} pod(s)"),
            reason: "pods not bound to a node are left out; the simulated controllers recreate those their workload still wants".into(),
        });
    }
    Ok(Seeded {
        engine: e,
        assumptions: a.into_iter().collect(),
    })
}
