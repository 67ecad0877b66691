//! PodDisruptionBudget `spec` (policy/v1).

#[allow(unused_imports)]
use super::*;

/// `spec` of a policy/v1 PodDisruptionBudget.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PdbSpecW {
    #[serde(default)]
    selector: Option<M<LabelSelectorW>>,
    #[serde(default)]
    min_available: Option<IntOrText>,
    #[serde(default)]
    max_unavailable: Option<IntOrText>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    unhealthy_pod_eviction_policy: Option<String>,
}

/// Builds a PodDisruptionBudget.
pub(crate) fn build_pod_disruption_budget(
    meta: m::ObjectMeta,
    spec: Option<PdbSpecW>,
) -> m::PodDisruptionBudget {
    let spec = spec.unwrap_or_default();
    m::PodDisruptionBudget {
        meta,
        selector: spec.selector.map(|M(s)| m::LabelSelector {
            match_labels: s.match_labels,
            match_expressions: s
                .match_expressions
                .into_iter()
                .map(|x| x.0.into_model())
                .collect(),
        }),
        min_available: spec.min_available.map(|v| v.0),
        max_unavailable: spec.max_unavailable.map(|v| v.0),
        unhealthy_pod_eviction_policy: spec.unhealthy_pod_eviction_policy,
    }
}
