//! The API server's defaults for the workload fields the simulation keeps: what a workload
//! written without them reads back with (k8s.io/kubernetes `pkg/apis/apps/v1/defaults.go`
//! `SetDefaults_Deployment`, `SetDefaults_DaemonSet`, `SetDefaults_StatefulSet`, and
//! `pkg/apis/core/v1/defaults.go` `SetDefaults_PodSpec` for the template).

use locality_model::objects::WorkloadKind;

use crate::objects::SimWorkload;

/// `w` with the defaults filled in: `RollingUpdate` with `maxSurge`/`maxUnavailable` 25 %/25 %
/// for a Deployment, 0/1 for a DaemonSet, `maxUnavailable` 1 for a StatefulSet (the
/// `MaxUnavailableStatefulSet` field, kept whatever the gate), `replicas` 1 where it applies,
/// and the template's `terminationGracePeriodSeconds` 30.
pub fn with_api_defaults(w: &SimWorkload) -> SimWorkload {
    let mut w = w.clone();
    let wl = &mut w.workload;
    let (surge, unavailable) = match wl.kind {
        WorkloadKind::Deployment => (Some("25%"), Some("25%")),
        WorkloadKind::DaemonSet => (Some("0"), Some("1")),
        WorkloadKind::StatefulSet => (None, Some("1")),
        WorkloadKind::ReplicaSet => (None, None),
    };
    if wl.kind != WorkloadKind::ReplicaSet {
        let strategy = wl.update_strategy.get_or_insert_with(|| "RollingUpdate".into());
        if strategy == "RollingUpdate" {
            if wl.max_surge.is_none() {
                wl.max_surge = surge.map(String::from);
            }
            if wl.max_unavailable.is_none() {
                wl.max_unavailable = unavailable.map(String::from);
            }
        }
    }
    if wl.kind != WorkloadKind::DaemonSet && wl.replicas.is_none() {
        wl.replicas = Some(1);
    }
    wl.template
        .lifecycle
        .termination_grace_period_seconds
        .get_or_insert(30);
    w
}
