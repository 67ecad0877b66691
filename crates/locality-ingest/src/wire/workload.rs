//! Workload `spec` (DaemonSet, Deployment, ReplicaSet, StatefulSet).

#[allow(unused_imports)]
use super::*;

/// `spec` of a DaemonSet, Deployment, ReplicaSet or StatefulSet.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkloadSpecW {
    #[serde(default)]
    pub(super) replicas: Option<Count>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) selector: M<LabelSelectorW>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) template: M<TemplateW>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) strategy: M<StrategyW>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) update_strategy: M<StrategyW>,
    #[serde(default)]
    pub(super) min_ready_seconds: Option<Count>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) pod_management_policy: Option<String>,
}

/// A `metav1.LabelSelector`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct LabelSelectorW {
    #[serde(default, deserialize_with = "labels")]
    pub(super) match_labels: m::Labels,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) match_expressions: Vec<M<RequirementW>>,
}

#[derive(Deserialize, Default)]
pub(super) struct TemplateW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) metadata: M<TemplateMetaW>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) spec: M<PodSpecW<ContainerW>>,
}

#[derive(Deserialize, Default)]
pub(super) struct TemplateMetaW {
    #[serde(default, deserialize_with = "labels")]
    pub(super) labels: m::Labels,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct StrategyW {
    #[serde(default, rename = "type", deserialize_with = "opt_nonempty")]
    pub(super) type_: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) rolling_update: M<RollingW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct RollingW {
    #[serde(default)]
    pub(super) max_surge: Option<IntOrText>,
    #[serde(default)]
    pub(super) max_unavailable: Option<IntOrText>,
    /// A StatefulSet's `partition`.
    #[serde(default)]
    pub(super) partition: Option<Count>,
}

pub(crate) fn build_workload(
    kind: m::WorkloadKind,
    meta: m::ObjectMeta,
    spec: Option<WorkloadSpecW>,
) -> m::Workload {
    let spec = spec.unwrap_or_default();
    let M(selector) = spec.selector;
    let M(TemplateW {
        metadata: M(template_meta),
        spec: M(template_spec),
    }) = spec.template;
    // Deployments use `strategy`; DaemonSets and StatefulSets `updateStrategy`.
    let M(strategy) = if kind == m::WorkloadKind::Deployment {
        spec.strategy
    } else {
        spec.update_strategy
    };
    let M(rolling) = strategy.rolling_update;
    let containers = template_spec.containers.iter().map(|M(c)| c.facts()).collect();
    m::Workload {
        kind,
        meta,
        selector: m::LabelSelector {
            match_labels: selector.match_labels,
            match_expressions: selector
                .match_expressions
                .into_iter()
                .map(|x| x.0.into_model())
                .collect(),
        },
        template_labels: template_meta.labels,
        template: template_spec.into_model(),
        replicas: if kind == m::WorkloadKind::DaemonSet {
            None
        } else {
            Some(spec.replicas.map_or(1, |c| c.0))
        },
        max_surge: rolling.max_surge.map(|v| v.0),
        max_unavailable: rolling.max_unavailable.map(|v| v.0),
        update_strategy: strategy.type_,
        containers,
        min_ready_seconds: spec.min_ready_seconds.map_or(0, |c| c.0),
        partition: rolling.partition.map(|c| c.0),
        pod_management_policy: if spec.pod_management_policy.as_deref() == Some("Parallel") {
            m::PodManagementPolicy::Parallel
        } else {
            m::PodManagementPolicy::OrderedReady
        },
    }
}
