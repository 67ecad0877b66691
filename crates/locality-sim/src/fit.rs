//! Whether a pod may run on a node, as the scheduler's filters and the DaemonSet controller
//! decide it (node name, node selector and required affinity, taints and tolerations, host
//! ports), and the tolerations the DaemonSet controller adds. Pure functions of the objects.

use locality_model::objects::{Labels, Node, NodeSelectorTerm, PodSpec, Taint, Toleration};
use locality_model::selector::requirement_matches;

/// Whether a pod with `spec` may run on `node`: `Ok`, or the scheduler's reason.
/// `daemon`: the DaemonSet controller's check (it ignores Ready and cordons through its
/// tolerations).
pub fn node_fits(spec: &PodSpec, node: &Node, daemon: bool) -> Result<(), String> {
    if !spec.node_name.is_empty() && spec.node_name != node.meta.name {
        return Err("didn't match the requested node name".into());
    }
    if !spec
        .node_selector
        .iter()
        .all(|(k, v)| node.meta.labels.get(k) == Some(v))
    {
        return Err("didn't match Pod's node affinity/selector".into());
    }
    if !spec.required_node_affinity.is_empty() {
        let fields: Labels = [("metadata.name".to_string(), node.meta.name.clone())].into();
        let term_ok = |t: &NodeSelectorTerm| {
            (!t.match_expressions.is_empty() || !t.match_fields.is_empty())
                && t.match_expressions
                    .iter()
                    .all(|r| requirement_matches(r, &node.meta.labels))
                && t.match_fields.iter().all(|r| requirement_matches(r, &fields))
        };
        if !spec.required_node_affinity.iter().any(term_ok) {
            return Err("didn't match Pod's node affinity/selector".into());
        }
    }
    let mut taints: Vec<Taint> = node.taints.clone();
    if node.unschedulable {
        taints.push(Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            value: String::new(),
            effect: "NoSchedule".into(),
        });
    }
    // The node lifecycle controller's NoSchedule taints for the Ready condition (upstream
    // `doNoScheduleTaintingPass`: False → not-ready, Unknown → unreachable), applied here rather
    // than written to the Node.
    let condition_taint = match node.ready {
        Some(false) => Some(crate::nodelifecycle::TAINT_NOT_READY),
        None => Some(crate::nodelifecycle::TAINT_UNREACHABLE),
        Some(true) => None,
    };
    if let Some(key) = condition_taint.filter(|_| !daemon) {
        taints.push(Taint {
            key: key.into(),
            value: String::new(),
            effect: "NoSchedule".into(),
        });
    }
    for t in taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        // Admission (DefaultTolerationSeconds) gives every pod a toleration of the not-ready and
        // unreachable NoExecute taints, so they never keep a pod from a node.
        .filter(|t| !(t.effect == "NoExecute" && crate::nodelifecycle::is_condition_taint(&t.key)))
    {
        if !tolerates(&spec.tolerations, t) {
            return Err(if t.value.is_empty() {
                format!("had untolerated taint {{{}: }}", t.key)
            } else {
                format!("had untolerated taint {{{}: {}}}", t.key, t.value)
            });
        }
    }
    Ok(())
}

/// Whether some toleration tolerates `taint` (upstream `Toleration.ToleratesTaint`).
pub(crate) fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    matching_toleration(tolerations, taint).is_some()
}

/// The first toleration that tolerates `taint`, as k8s.io/kubernetes
/// `pkg/apis/core/v1/helper/helpers.go` `GetMatchingTolerations` picks it for each taint.
pub(crate) fn matching_toleration<'a>(
    tolerations: &'a [Toleration],
    taint: &Taint,
) -> Option<&'a Toleration> {
    tolerations.iter().find(|t| {
        (t.effect.is_empty() || t.effect == taint.effect)
            && match t.operator.as_str() {
                "Exists" => t.key.is_empty() || t.key == taint.key,
                _ => t.key == taint.key && t.value == taint.value,
            }
    })
}

/// The DaemonSet controller's own tolerations (`AddOrUpdateDaemonPodTolerations`), each put
/// in place of the template's tolerations with the same key, operator, value and effect, or
/// added (k8s.io/kubernetes `pkg/apis/core/v1/helper/helpers.go`
/// `AddOrUpdateTolerationInPodSpec`, k8s.io/api `core/v1/toleration.go` `MatchToleration`), so
/// a template's `tolerationSeconds` for the not-ready and unreachable taints gives way to
/// tolerating them forever.
pub(crate) fn add_daemon_tolerations(spec: &mut PodSpec) {
    let mut add = |key: &str, effect: &str| {
        let t = Toleration {
            key: key.into(),
            operator: "Exists".into(),
            value: String::new(),
            effect: effect.into(),
            toleration_seconds: None,
        };
        let mut found = false;
        for o in &mut spec.tolerations {
            if o.key == t.key && o.operator == t.operator && o.value == t.value && o.effect == t.effect {
                *o = t.clone();
                found = true;
            }
        }
        if !found {
            spec.tolerations.push(t);
        }
    };
    add("node.kubernetes.io/not-ready", "NoExecute");
    add("node.kubernetes.io/unreachable", "NoExecute");
    add("node.kubernetes.io/disk-pressure", "NoSchedule");
    add("node.kubernetes.io/memory-pressure", "NoSchedule");
    add("node.kubernetes.io/pid-pressure", "NoSchedule");
    add("node.kubernetes.io/unschedulable", "NoSchedule");
    if spec.host_network {
        add("node.kubernetes.io/network-unavailable", "NoSchedule");
    }
}

pub(crate) fn affinity_node(spec: &PodSpec) -> Option<String> {
    spec.required_node_affinity
        .iter()
        .flat_map(|t| &t.match_fields)
        .find(|r| r.key == "metadata.name" && r.operator == "In" && r.values.len() == 1)
        .map(|r| r.values[0].clone())
}

/// The one node a pod's required node affinity allows by name: every term has a
/// `matchFields` requirement `metadata.name In [node]` for the same single node.
pub(crate) fn pinned_node(spec: &PodSpec) -> Option<String> {
    let mut pinned: Option<&String> = None;
    for term in &spec.required_node_affinity {
        let node = term
            .match_fields
            .iter()
            .find(|r| r.key == "metadata.name" && r.operator == "In" && r.values.len() == 1)
            .map(|r| &r.values[0])?;
        if pinned.is_some_and(|p| p != node) {
            return None;
        }
        pinned = Some(node);
    }
    pinned.cloned()
}

/// The (host port, protocol) pairs a pod spec holds on its node: `hostPort`s, and with
/// `hostNetwork` every container port.
pub(crate) fn host_ports(spec: &PodSpec) -> Vec<(u16, locality_model::objects::Protocol)> {
    spec.ports
        .iter()
        .filter_map(|p| {
            let port = if spec.host_network {
                Some(p.container_port)
            } else {
                p.host_port
            };
            port.map(|h| (h, p.protocol))
        })
        .collect()
}
