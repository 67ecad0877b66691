//! Voluntary disruptions: the simulated eviction subresource, the disruption controller's
//! arithmetic for PodDisruptionBudgets, and `kubectl drain`.
//!
//! - **PodDisruptionBudgets** are stored, not simulated by a controller of their own
//!   ([`Kind::PodDisruptionBudget`] is one of [`Kind::STORED`]): their `spec` is kept as
//!   k8s-openapi's `policy/v1` `PodDisruptionBudgetSpec`, and their status is computed when an
//!   eviction asks for it, as the disruption controller (k8s.io/kubernetes
//!   `pkg/controller/disruption/disruption.go`) would have written it with no lag:
//!   `getExpectedPodCount` (`maxUnavailable` or a percentage `minAvailable`: the expected
//!   count is the sum of the pods' controllers' scale, `getExpectedScale`, a Deployment's
//!   `replicas` for its ReplicaSets' pods; an integer `minAvailable`: the number of pods
//!   selected), `countHealthyPods` (Ready and not being deleted) and `updatePdbStatus`
//!   (`disruptionsAllowed = currentHealthy - desiredHealthy`, 0 when negative or when no pod
//!   is expected). A controller with no scale (a DaemonSet) or a value that does not parse
//!   fails the sync, and `failSafe` leaves `disruptionsAllowed` 0.
//! - **Eviction** (`pkg/registry/core/pod/storage/eviction.go` `EvictionREST.Create`): a pod
//!   that is Pending, finished or already being deleted is deleted without looking at budgets
//!   (`canIgnorePDB`); otherwise the budgets of its namespace whose non-empty selector matches
//!   it (`getPodDisruptionBudgets`): more than one is refused (500), none deletes it; with one,
//!   a pod that is not Ready is deleted when the budget's `unhealthyPodEvictionPolicy` is
//!   `AlwaysAllow` or when `currentHealthy >= desiredHealthy > 0`, and otherwise
//!   `checkAndDecrement` refuses it with 429 when `disruptionsAllowed` is 0. The delete is a
//!   graceful one with the pod's own grace period.
//! - **`kubectl drain`** (k8s.io/kubectl `pkg/drain/drain.go` `evictPods`, as
//!   `kubectl drain --ignore-daemonsets --delete-emptydir-data --force`): cordon, then evict
//!   every pod on the node except DaemonSet pods (`daemonSetFilter`) and static pods' mirror
//!   pods (`mirrorPodFilter`), all at once, each refused eviction retried 5 s later ("will
//!   retry after 5s"); a refusal other than 429 fails that pod's eviction for good. The drain
//!   has finished once every such pod is gone from the store (`waitForDelete`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as ApiSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use locality_model::objects::{LabelSelector, PodDisruptionBudget, PodPhase, SelectorRequirement};
use serde_json::{Map, Value};

pub(crate) mod drain;

pub use self::drain::Drain;
use crate::engine::{Engine, SimError};
use crate::objects::{Kind, Object, ObjectKey, SimPod, StoredObject};
use crate::tasks::Task;
use crate::time::Millis;

/// kubectl drain's wait before it retries a refused eviction (`evictPods`: "will retry after
/// 5s").
pub const EVICTION_RETRY_MS: Millis = 5_000;

/// How often kubectl drain checks whether the evicted pods are gone (`waitForDelete` polls
/// every second).
pub const DELETE_POLL_MS: Millis = 1_000;

/// The annotation of a static pod's mirror pod (`kubernetes.io/config.mirror`), which drain
/// leaves alone.
pub const ANNOTATION_MIRROR_POD: &str = "kubernetes.io/config.mirror";

/// A PodDisruptionBudget's status as the disruption controller computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisruptionStatus {
    /// `status.expectedPods`.
    pub expected_pods: i64,
    /// `status.desiredHealthy`.
    pub desired_healthy: i64,
    /// `status.currentHealthy`.
    pub current_healthy: i64,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i64,
}

/// Why the eviction subresource refused to evict a pod.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvictionRefused {
    /// 429 Too Many Requests: the budget allows no disruption now (kubectl retries).
    #[error(
        "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget {budget} needs {desired} healthy pods and has {current} currently"
    )]
    TooManyRequests {
        /// The budget's name.
        budget: String,
        /// Its `desiredHealthy`.
        desired: i64,
        /// Its `currentHealthy`.
        current: i64,
    },
    /// 500: the pod is selected by more than one budget (kubectl gives up on it).
    #[error(
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )]
    MultipleBudgets,
}

/// The model's selector as the API writes it.
fn api_selector(s: &LabelSelector) -> ApiSelector {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    ApiSelector {
        match_labels: (!s.match_labels.is_empty()).then(|| {
            s.match_labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }),
        match_expressions: (!s.match_expressions.is_empty()).then(|| {
            s.match_expressions
                .iter()
                .map(|r| LabelSelectorRequirement {
                    key: r.key.clone(),
                    operator: r.operator.clone(),
                    values: (!r.values.is_empty()).then(|| r.values.clone()),
                })
                .collect()
        }),
    }
}

/// The API's selector in the model's terms.
fn model_selector(s: &ApiSelector) -> LabelSelector {
    LabelSelector {
        match_labels: s.match_labels.clone().unwrap_or_default().into_iter().collect(),
        match_expressions: s
            .match_expressions
            .iter()
            .flatten()
            .map(|r| SelectorRequirement {
                key: r.key.clone(),
                operator: r.operator.clone(),
                values: r.values.clone().unwrap_or_default(),
            })
            .collect(),
    }
}

/// `"1"` → an integer, anything else (`"50%"`) → a string, as the API reads an IntOrString.
fn int_or_string(v: &str) -> IntOrString {
    v.parse::<i32>()
        .map_or_else(|_| IntOrString::String(v.to_string()), IntOrString::Int)
}

/// A budget of the input as the simulated store keeps it: its metadata, and its `spec` as
/// k8s-openapi's `PodDisruptionBudgetSpec` writes it.
pub fn stored_budget(pdb: &PodDisruptionBudget) -> Object {
    let spec = PodDisruptionBudgetSpec {
        selector: pdb.selector.as_ref().map(api_selector),
        min_available: pdb.min_available.as_deref().map(int_or_string),
        max_unavailable: pdb.max_unavailable.as_deref().map(int_or_string),
        unhealthy_pod_eviction_policy: pdb.unhealthy_pod_eviction_policy.clone(),
    };
    let mut fields = Map::new();
    fields.insert("spec".into(), serde_json::to_value(spec).unwrap_or(Value::Null));
    let mut meta = pdb.meta.clone();
    meta.uid = String::new();
    Object::Stored(StoredObject {
        kind: Kind::PodDisruptionBudget,
        meta,
        fields,
    })
}

/// The `spec` of a stored budget (`None` when it does not read as one).
fn spec_of(o: &StoredObject) -> Option<PodDisruptionBudgetSpec> {
    serde_json::from_value(o.fields.get("spec")?.clone()).ok()
}

/// `intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)`.
fn scaled(v: &IntOrString, total: i64) -> Option<i64> {
    match v {
        IntOrString::Int(i) => Some(i64::from(*i)),
        IntOrString::String(s) => {
            let p: i64 = s.strip_suffix('%')?.parse().ok()?;
            Some((p * total + 99).div_euclid(100))
        }
    }
}

fn is_being_deleted(p: &SimPod) -> bool {
    p.pod.meta.deletion_timestamp.is_some()
}

impl Engine {
    /// The pods of `namespace` that `selector` matches (the disruption controller's
    /// `getPodsForPdb`: a missing selector matches nothing, an empty one everything).
    fn pods_selected<'a>(&'a self, namespace: &'a str, selector: Option<&ApiSelector>) -> Vec<&'a SimPod> {
        let Some(sel) = selector.map(model_selector) else {
            return Vec::new();
        };
        self.store
            .list_namespace(Kind::Pod, namespace)
            .filter_map(|(_, s)| s.object.as_pod())
            .filter(|p| sel.matches(&p.pod.meta.labels))
            .collect()
    }

    /// The scale of a pod's controller (`getExpectedScale`'s finders): a ReplicaSet's
    /// Deployment's `replicas`, or the ReplicaSet's own; `None` for a controller with no
    /// finder (a DaemonSet) or one missing from the store.
    fn controller_scale(
        &self,
        namespace: &str,
        owner: &locality_model::objects::OwnerReference,
    ) -> Option<(String, i64)> {
        if owner.kind != "ReplicaSet" {
            return None;
        }
        let rs = self.get(&ObjectKey::new(Kind::ReplicaSet, namespace, owner.name.as_str()))?;
        let rs = rs.as_workload()?;
        if let Some(d) = rs
            .workload
            .meta
            .owner_references
            .iter()
            .find(|o| o.controller && o.kind == "Deployment")
        {
            let dep = self.get(&ObjectKey::new(Kind::Deployment, namespace, d.name.as_str()))?;
            let dep = dep.as_workload()?;
            return Some((
                format!("Deployment/{}", d.name),
                i64::from(dep.workload.replicas.unwrap_or(1)),
            ));
        }
        Some((
            format!("ReplicaSet/{}", owner.name),
            i64::from(rs.workload.replicas.unwrap_or(1)),
        ))
    }

    /// A stored PodDisruptionBudget's status as the disruption controller computes it now
    /// (`trySync`); `None` when there is no such budget.
    pub fn disruption_status(&self, key: &ObjectKey) -> Option<DisruptionStatus> {
        let o = self.get(key)?.as_stored()?;
        let spec = spec_of(o)?;
        Some(self.status_of(&key.namespace, &spec))
    }

    fn status_of(&self, namespace: &str, spec: &PodDisruptionBudgetSpec) -> DisruptionStatus {
        let pods = self.pods_selected(namespace, spec.selector.as_ref());
        let current = pods
            .iter()
            .filter(|p| !is_being_deleted(p) && p.pod.ready)
            .count() as i64;
        let fail_safe = DisruptionStatus {
            expected_pods: 0,
            desired_healthy: 0,
            current_healthy: current,
            disruptions_allowed: 0,
        };
        // `getExpectedScale`: unmanaged pods are left out; a controller without a scale
        // fails the sync.
        let expected_scale = || -> Option<i64> {
            let mut scales: BTreeMap<String, i64> = BTreeMap::new();
            for p in &pods {
                let Some(owner) = p.pod.meta.owner_references.iter().find(|o| o.controller) else {
                    continue;
                };
                let (id, scale) = self.controller_scale(namespace, owner)?;
                scales.insert(id, scale);
            }
            Some(scales.values().sum())
        };
        let (expected, desired) = match (&spec.max_unavailable, &spec.min_available) {
            (Some(max), _) => {
                let Some(expected) = expected_scale() else {
                    return fail_safe;
                };
                let Some(max) = scaled(max, expected) else {
                    return fail_safe;
                };
                (expected, (expected - max).max(0))
            }
            (None, Some(IntOrString::Int(min))) => (pods.len() as i64, i64::from(*min)),
            (None, Some(min)) => {
                let Some(expected) = expected_scale() else {
                    return fail_safe;
                };
                let Some(min) = scaled(min, expected) else {
                    return fail_safe;
                };
                (expected, min)
            }
            (None, None) => (0, 0),
        };
        let allowed = current - desired;
        DisruptionStatus {
            expected_pods: expected,
            desired_healthy: desired,
            current_healthy: current,
            disruptions_allowed: if expected <= 0 || allowed <= 0 { 0 } else { allowed },
        }
    }

    /// The budgets of the pod's namespace whose selector matches it
    /// (`getPodDisruptionBudgets`: a missing or empty selector matches nothing here).
    fn budgets_of(&self, pod: &SimPod) -> Vec<(String, PodDisruptionBudgetSpec)> {
        self.store
            .list_namespace(Kind::PodDisruptionBudget, &pod.pod.meta.namespace)
            .filter_map(|(k, s)| Some((k.name.to_string(), spec_of(s.object.as_stored()?)?)))
            .filter(|(_, spec)| {
                spec.selector.as_ref().is_some_and(|s| {
                    let sel = model_selector(s);
                    !(sel.match_labels.is_empty() && sel.match_expressions.is_empty())
                        && sel.matches(&pod.pod.meta.labels)
                })
            })
            .collect()
    }

    /// Evicts a pod through the simulated eviction subresource (see the module docs).
    /// `Ok(false)`: no such pod.
    ///
    /// # Errors
    /// [`EvictionRefused`] as the API server refuses the eviction.
    pub fn evict(&mut self, key: &ObjectKey) -> Result<bool, EvictionRefused> {
        let Some(pod) = self.get(key).and_then(Object::as_pod).cloned() else {
            return Ok(false);
        };
        let ignore_budgets = matches!(
            pod.pod.phase,
            PodPhase::Pending | PodPhase::Succeeded | PodPhase::Failed
        ) || is_being_deleted(&pod);
        if !ignore_budgets {
            let budgets = self.budgets_of(&pod);
            if budgets.len() > 1 {
                return Err(EvictionRefused::MultipleBudgets);
            }
            if let Some((name, spec)) = budgets.first() {
                let status = self.status_of(&pod.pod.meta.namespace, spec);
                let unhealthy_may_go = !pod.pod.ready
                    && (spec.unhealthy_pod_eviction_policy.as_deref() == Some("AlwaysAllow")
                        || (status.current_healthy >= status.desired_healthy && status.desired_healthy > 0));
                if !unhealthy_may_go && status.disruptions_allowed == 0 {
                    return Err(EvictionRefused::TooManyRequests {
                        budget: name.clone(),
                        desired: status.desired_healthy,
                        current: status.current_healthy,
                    });
                }
            }
        }
        Ok(self.delete(key).is_ok())
    }

    /// The pods a drain of `node` evicts and waits for: every pod bound there but DaemonSet
    /// pods and mirror pods.
    fn drain_targets(&self, node: &str) -> Vec<ObjectKey> {
        self.store
            .list(Kind::Pod)
            .filter_map(|(k, s)| Some((k, s.object.as_pod()?)))
            .filter(|(_, p)| {
                p.pod.spec.node_name == node
                    && !p.pod.meta.annotations.contains_key(ANNOTATION_MIRROR_POD)
                    && !p
                        .pod
                        .meta
                        .owner_references
                        .iter()
                        .any(|o| o.controller && o.kind == "DaemonSet")
            })
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// `kubectl drain NODE`: cordons it and starts evicting its pods (see the module docs).
    ///
    /// # Errors
    /// The node does not exist.
    pub fn drain(&mut self, node: &str) -> Result<(), SimError> {
        let key = ObjectKey::new(Kind::Node, "", node);
        let mut n = self
            .get(&key)
            .and_then(Object::as_node)
            .cloned()
            .ok_or_else(|| SimError::UnknownNode(node.to_string()))?;
        n.unschedulable = true;
        self.update(Object::Node(n), None)?;
        self.drains.insert(
            node.to_string(),
            Drain {
                started_at: self.now,
                ..Drain::default()
            },
        );
        self.drain_pass(node);
        Ok(())
    }

    /// The drain of `node`, if one was started.
    pub fn drain_status(&self, node: &str) -> Option<&Drain> {
        self.drains.get(node)
    }

    /// One pass of a drain: evict what is due, note when everything is gone, and come back
    /// when a retry is due or to look for the deletions again.
    pub(crate) fn drain_pass(&mut self, node: &str) {
        let now = self.now;
        let Some(drain) = self.drains.get(node) else {
            return;
        };
        if drain.finished_at.is_some() {
            return;
        }
        let targets = self.drain_targets(node);
        if targets.is_empty() {
            if let Some(d) = self.drains.get_mut(node) {
                d.finished_at = Some(now);
                d.refused.clear();
            }
            return;
        }
        let evicted: BTreeSet<ObjectKey> = drain.evicted.iter().map(|(_, k)| k.clone()).collect();
        let refused = drain.refused.clone();
        for key in targets.iter().filter(|k| !evicted.contains(*k)) {
            let due = refused
                .get(key)
                .is_none_or(|(_, retry)| retry.is_some_and(|t| t <= now));
            if !due {
                continue;
            }
            let outcome = self.evict(key);
            let Some(d) = self.drains.get_mut(node) else {
                return;
            };
            match outcome {
                Ok(_) => {
                    d.refused.remove(key);
                    d.evicted.push((now, key.clone()));
                }
                Err(e) => {
                    let retry = matches!(e, EvictionRefused::TooManyRequests { .. })
                        .then_some(now + EVICTION_RETRY_MS);
                    d.refused.insert(key.clone(), (e.to_string(), retry));
                }
            }
        }
        let d = &self.drains[node];
        let next_retry = d.refused.values().filter_map(|(_, r)| *r).min();
        // Evicted (or already deleting) pods not gone yet: look again after a poll.
        let waiting = targets.iter().any(|k| !d.refused.contains_key(k));
        let next = match (next_retry, waiting) {
            (Some(r), true) => Some(r.min(now + DELETE_POLL_MS)),
            (Some(r), false) => Some(r),
            (None, true) => Some(now + DELETE_POLL_MS),
            (None, false) => None,
        };
        if let Some(at) = next {
            self.schedule(at, Task::Drain(node.to_string()));
        }
    }
}
