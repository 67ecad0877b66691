//! What an update (PUT, any patch, an apply) may not change, answered `422 Invalid` as the
//! real API server words it (k8s.io/kubernetes `pkg/apis/core/validation/validation.go`
//! `ValidatePodUpdate`, `ValidateServiceUpdate`; `pkg/apis/apps/validation/validation.go`
//! `ValidateDeploymentUpdate`, `ValidateStatefulSetUpdate`; `pkg/apis/discovery/validation/validation.go`
//! `ValidateEndpointSliceUpdate`), and the workload check shared with create (a selector that
//! does not select its template's labels).
//!
//! Checked, for the fields the simulation carries: a Pod's spec except container images,
//! added tolerations and the `tolerationSeconds` of existing ones (node, host network, ports,
//! node selector, affinity, hostname, subdomain, container names, commands, args, env and
//! probes); a Service's cluster IPs once set; a workload's `spec.selector` (a StatefulSet's
//! `podManagementPolicy`, `serviceName` and `volumeClaimTemplates` too); an EndpointSlice's
//! `addressType`. On create and update, a pod's `tolerationSeconds` only with effect
//! `NoExecute` (`validateTolerations`). The kinds stored without simulating them are checked
//! by the `stored` module (a Job's `restartPolicy`, a binding's `roleRef`…).

use locality_model::objects::{Toleration, WorkloadKind};
use locality_sim::Object;
use serde_json::Value;

use crate::resources::Resource;
use crate::select;
use crate::status::ApiError;

/// `ValidatePodUpdate`'s message for a forbidden spec change.
const POD_UPDATE_FORBIDDEN: &str = "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// `ValidateStatefulSetUpdate`'s message for a change of a field other than those it lists.
const STATEFUL_SET_UPDATE_FORBIDDEN: &str = "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

/// The container fields compared for a pod update (everything the simulation reads except
/// the mutable image).
const CONTAINER_FIELDS: &[&str] = &[
    "name",
    "command",
    "args",
    "env",
    "readinessProbe",
    "livenessProbe",
    "startupProbe",
];

fn containers_view(spec: &Value) -> Vec<Vec<Value>> {
    spec["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| CONTAINER_FIELDS.iter().map(|f| c[*f].clone()).collect())
                .collect()
        })
        .unwrap_or_default()
}

/// Checks an update of `current` (served as `cur_doc`) to `new` (decoded from `new_doc`).
///
/// # Errors
/// 422 Invalid naming the first immutable field changed.
pub(crate) fn check_update(
    r: &Resource,
    name: &str,
    current: &Object,
    new: &Object,
    cur_doc: &Value,
    new_doc: &Value,
) -> Result<(), ApiError> {
    let invalid = |why: String| Err(ApiError::invalid(r.kind_name, r.group, name, &why));
    match (current, new) {
        (Object::Pod(c), Object::Pod(n)) => {
            let (cs, ns) = (&c.pod.spec, &n.pod.spec);
            let tolerations_kept = only_added_tolerations(&cs.tolerations, &ns.tolerations);
            let mut what = None;
            if cs.node_name != ns.node_name {
                what = Some(format!("spec.nodeName: {:?} -> {:?}", cs.node_name, ns.node_name));
            } else if cs.host_network != ns.host_network {
                what = Some("spec.hostNetwork".to_string());
            } else if cs.ports != ns.ports {
                what = Some("spec.containers[*].ports".to_string());
            } else if cs.node_selector != ns.node_selector {
                what = Some("spec.nodeSelector".to_string());
            } else if cs.required_node_affinity != ns.required_node_affinity {
                what = Some("spec.affinity".to_string());
            } else if cs.hostname != ns.hostname || cs.subdomain != ns.subdomain {
                what = Some("spec.hostname/spec.subdomain".to_string());
            } else if !tolerations_kept {
                what = Some("spec.tolerations (existing tolerations removed)".to_string());
            } else if containers_view(&cur_doc["spec"]) != containers_view(&new_doc["spec"]) {
                what = Some("spec.containers (other than image)".to_string());
            }
            if let Some(what) = what {
                return invalid(format!(
                    "{POD_UPDATE_FORBIDDEN}\n  changed: {what} (simulated API server)"
                ));
            }
        }
        (Object::Service(c), Object::Service(n)) => {
            let before: Vec<String> = if c.headless {
                vec!["None".into()]
            } else {
                c.cluster_ips.iter().map(ToString::to_string).collect()
            };
            let after: Vec<String> = if n.headless {
                vec!["None".into()]
            } else {
                n.cluster_ips.iter().map(ToString::to_string).collect()
            };
            let external = |s: &locality_model::objects::Service| {
                s.type_ == locality_model::objects::ServiceType::ExternalName
            };
            if !external(c)
                && !external(n)
                && !before.is_empty()
                && !after.is_empty()
                && before.first() != after.first()
            {
                let shown = after
                    .iter()
                    .map(|ip| format!("{ip:?}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                return invalid(format!(
                    "spec.clusterIPs[0]: Invalid value: []string{{{shown}}}: may not change once set"
                ));
            }
        }
        (Object::Workload(c), Object::Workload(n))
            if n.workload.kind == WorkloadKind::StatefulSet
                && (c.workload.selector != n.workload.selector
                    || c.workload.pod_management_policy != n.workload.pod_management_policy
                    || ["serviceName", "volumeClaimTemplates"]
                        .iter()
                        .any(|f| cur_doc["spec"][*f] != new_doc["spec"][*f])) =>
        {
            return invalid(STATEFUL_SET_UPDATE_FORBIDDEN.to_string());
        }
        (Object::Workload(c), Object::Workload(n)) if c.workload.selector != n.workload.selector => {
            return invalid(format!(
                "spec.selector: Invalid value: {}: field is immutable",
                new_doc["spec"]["selector"]
            ));
        }
        (Object::EndpointSlice(c), Object::EndpointSlice(n)) if c.address_type != n.address_type => {
            return invalid(format!(
                "addressType: Invalid value: {:?}: field is immutable",
                n.address_type.as_str()
            ));
        }
        (Object::Stored(_), Object::Stored(n)) => {
            let errs = crate::stored::update_errors(cur_doc, n);
            if !errs.is_empty() {
                return Err(ApiError::invalid_all(r.kind_name, r.group, name, &errs));
            }
        }
        _ => {}
    }
    check_object(r, name, new, new_doc)
}

/// `validateOnlyAddedTolerations` (`validation.go`): every existing toleration is still there,
/// its `tolerationSeconds` aside.
fn only_added_tolerations(old: &[Toleration], new: &[Toleration]) -> bool {
    old.iter().all(|o| {
        new.iter().any(|n| {
            Toleration {
                toleration_seconds: n.toleration_seconds,
                ..o.clone()
            } == *n
        })
    })
}

/// Checks what create and update share: a stored kind's validation (`crate::stored::errors`),
/// a workload's selector selects its template labels
/// (`ValidateDeploymentSpec`: "`selector` does not match template `labels`"), and a pod's
/// `tolerationSeconds` is set only with effect `NoExecute` (`validateTolerations`).
///
/// # Errors
/// 422 Invalid.
pub(crate) fn check_object(r: &Resource, name: &str, new: &Object, new_doc: &Value) -> Result<(), ApiError> {
    if let Object::Stored(o) = new {
        let errs = crate::stored::errors(o);
        if !errs.is_empty() {
            return Err(ApiError::invalid_all(r.kind_name, r.group, name, &errs));
        }
    }
    if let Object::Pod(p) = new
        && let Some((i, t)) = p
            .pod
            .spec
            .tolerations
            .iter()
            .enumerate()
            .find(|(_, t)| t.toleration_seconds.is_some() && t.effect != "NoExecute")
    {
        return Err(ApiError::invalid(
            r.kind_name,
            r.group,
            name,
            &format!(
                "spec.tolerations[{i}].effect: Invalid value: {:?}: effect must be 'NoExecute' when `tolerationSeconds` is set",
                t.effect
            ),
        ));
    }
    if let Object::Workload(w) = new {
        let sel = &w.workload.selector;
        let empty = sel.match_labels.is_empty() && sel.match_expressions.is_empty();
        if empty {
            return Err(ApiError::invalid(
                r.kind_name,
                r.group,
                name,
                "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
            ));
        }
        if !select::label_matches(sel, &w.workload.template_labels) {
            return Err(ApiError::invalid(
                r.kind_name,
                r.group,
                name,
                &format!(
                    "spec.template.metadata.labels: Invalid value: {}: `selector` does not match template `labels`",
                    new_doc["spec"]["template"]["metadata"]["labels"]
                ),
            ));
        }
    }
    Ok(())
}
