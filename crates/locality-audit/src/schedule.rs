//! Whether a DaemonSet's pod can run on a node (LOC003).
//!
//! Mirrors the DaemonSet controller's `predicates` (kubernetes `pkg/controller/daemon/
//! daemon_controller.go`): the node name, the required node affinity (`nodeSelector` ANDed with
//! `requiredDuringSchedulingIgnoredDuringExecution`, `component-helpers/scheduling/corev1/
//! nodeaffinity` `GetRequiredNodeAffinity(pod).Match(node)`), and the `NoSchedule` /
//! `NoExecute` taints the pod does not tolerate, after the controller added its own
//! tolerations (`pkg/controller/daemon/util/daemonset_util.go`
//! `AddOrUpdateDaemonPodTolerations`).

use locality_model::objects::{Labels, Node, NodeSelectorTerm, PodSpec, Taint, Toleration};
use locality_model::selector::requirement_matches;

/// `node.kubernetes.io/unschedulable`, the taint a cordoned node carries.
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// The tolerations the DaemonSet controller adds to every daemon pod (`Exists`, no value):
/// `not-ready` and `unreachable` with `NoExecute`, `disk-pressure`, `memory-pressure`,
/// `pid-pressure` and `unschedulable` with `NoSchedule`, and `network-unavailable:NoSchedule`
/// for hostNetwork pods (`daemonset_util.go` `AddOrUpdateDaemonPodTolerations`).
pub fn daemon_default_tolerations(host_network: bool) -> Vec<Toleration> {
    let t = |key: &str, effect: &str| Toleration {
        key: key.to_string(),
        operator: "Exists".to_string(),
        value: String::new(),
        effect: effect.to_string(),
        toleration_seconds: None,
    };
    let mut out = vec![
        t("node.kubernetes.io/not-ready", "NoExecute"),
        t("node.kubernetes.io/unreachable", "NoExecute"),
        t("node.kubernetes.io/disk-pressure", "NoSchedule"),
        t("node.kubernetes.io/memory-pressure", "NoSchedule"),
        t("node.kubernetes.io/pid-pressure", "NoSchedule"),
        t(TAINT_UNSCHEDULABLE, "NoSchedule"),
    ];
    if host_network {
        out.push(t("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    out
}

/// `Toleration.ToleratesTaint` (k8s.io/api core/v1 `toleration.go`): the effect matches
/// when the toleration's is empty or equal; the key when the toleration's is empty or
/// equal; then `Exists` matches any value and `Equal` (or empty) the same value.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if !toleration.effect.is_empty() && toleration.effect != taint.effect {
        return false;
    }
    if !toleration.key.is_empty() && toleration.key != taint.key {
        return false;
    }
    match toleration.operator.as_str() {
        "Exists" => true,
        "" | "Equal" => toleration.value == taint.value,
        _ => false,
    }
}

/// Why a daemon pod cannot run on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit {
    /// A `nodeSelector` entry the node's labels lack.
    NodeSelector(String),
    /// No required node affinity term matches.
    NodeAffinity,
    /// A `NoSchedule`/`NoExecute` taint no toleration matches (`key=value:Effect`).
    Taint(String),
}

impl Unfit {
    /// Short text for messages.
    pub fn describe(&self) -> String {
        match self {
            Unfit::NodeSelector(kv) => format!("nodeSelector {kv} does not match"),
            Unfit::NodeAffinity => "required node affinity does not match".to_string(),
            Unfit::Taint(t) => format!("untolerated taint {t}"),
        }
    }
}

/// True when a `nodeSelectorTerms[]` entry matches the node: a term with neither expressions
/// nor fields matches nothing; `matchFields` only knows `metadata.name`.
fn term_matches(term: &NodeSelectorTerm, node: &Node) -> bool {
    if term.match_expressions.is_empty() && term.match_fields.is_empty() {
        return false;
    }
    let fields: Labels = [("metadata.name".to_string(), node.meta.name.clone())]
        .into_iter()
        .collect();
    term.match_expressions
        .iter()
        .all(|r| requirement_matches(r, &node.meta.labels))
        && term.match_fields.iter().all(|r| {
            r.key == "metadata.name"
                && matches!(r.operator.as_str(), "In" | "NotIn")
                && requirement_matches(r, &fields)
        })
}

/// The first reason the daemon pod of `template` cannot run on `node`, `None` when it can.
///
/// Cordoned nodes (`spec.unschedulable`) are treated as tainted
/// `node.kubernetes.io/unschedulable:NoSchedule`, which the controller's own toleration
/// covers: DaemonSets still run on cordoned nodes.
pub fn daemon_unfit(template: &PodSpec, node: &Node) -> Option<Unfit> {
    if !template.node_name.is_empty() && template.node_name != node.meta.name {
        return Some(Unfit::NodeAffinity);
    }
    for (k, v) in &template.node_selector {
        if node.meta.labels.get(k) != Some(v) {
            return Some(Unfit::NodeSelector(format!("{k}={v}")));
        }
    }
    if !template.required_node_affinity.is_empty()
        && !template
            .required_node_affinity
            .iter()
            .any(|t| term_matches(t, node))
    {
        return Some(Unfit::NodeAffinity);
    }
    let mut tolerations = template.tolerations.clone();
    tolerations.extend(daemon_default_tolerations(template.host_network));
    let cordon = Taint {
        key: TAINT_UNSCHEDULABLE.to_string(),
        value: String::new(),
        effect: "NoSchedule".to_string(),
    };
    let implied = node.unschedulable.then_some(&cordon);
    for taint in node.taints.iter().chain(implied) {
        if !matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute") {
            continue;
        }
        if !tolerations.iter().any(|t| tolerates(t, taint)) {
            let value = if taint.value.is_empty() {
                String::new()
            } else {
                format!("={}", taint.value)
            };
            return Some(Unfit::Taint(format!("{}{value}:{}", taint.key, taint.effect)));
        }
    }
    None
}
