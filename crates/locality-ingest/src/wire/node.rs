//! Node `spec` and `status`.

#[allow(unused_imports)]
use super::*;

/// Node `spec`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeSpecW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) taints: Vec<M<TaintW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) unschedulable: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TaintW {
    pub(super) key: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) value: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) effect: String,
}

/// Node `status`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeStatusW {
    #[serde(default)]
    pub(super) conditions: ReadyW,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) allocatable: M<AllocatableW>,
    #[serde(default, deserialize_with = "internal_ips")]
    pub(super) addresses: Vec<IpAddr>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) node_info: M<NodeInfoW>,
}

#[derive(Deserialize, Default)]
pub(super) struct AllocatableW {
    #[serde(default)]
    pub(super) cpu: Option<QuantityText>,
    #[serde(default)]
    pub(super) pods: Option<QuantityText>,
}

#[derive(Deserialize)]
pub(super) struct NodeAddressW<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) type_: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) address: Cow<'a, str>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct NodeInfoW {
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) kubelet_version: Option<String>,
}

/// Builds a Node; `warn` receives non-fatal problems (an unparsable CPU quantity).
pub(crate) fn build_node(
    meta: m::ObjectMeta,
    spec: Option<NodeSpecW>,
    status: Option<NodeStatusW>,
    warn: &mut dyn FnMut(String),
) -> m::Node {
    let spec = spec.unwrap_or_default();
    let status = status.unwrap_or_default();
    let internal_ips = status.addresses;
    let allocatable_cpu_millis = match &status.allocatable.cpu {
        None => None,
        Some(q) => {
            let v = crate::quantity::cpu_millis(&q.0);
            if v.is_none() {
                warn(format!(
                    "Node {}: status.allocatable.cpu {:?} is not a valid quantity; treated as unknown",
                    meta.name, q.0
                ));
            }
            v
        }
    };
    // A count, read as `Quantity.Value()` reads it (rounded up); an unparsable one is the
    // kubelet's default.
    let allocatable_pods = status
        .allocatable
        .pods
        .as_ref()
        .and_then(|q| crate::quantity::cpu_millis(&q.0))
        .map(|m| m.div_ceil(1000));
    m::Node {
        ready: status.conditions.0,
        allocatable_cpu_millis,
        allocatable_pods,
        taints: spec
            .taints
            .into_iter()
            .map(|M(t)| m::Taint {
                key: t.key,
                value: t.value,
                effect: t.effect,
            })
            .collect(),
        unschedulable: spec.unschedulable,
        internal_ips,
        kubelet_version: status.node_info.0.kubelet_version,
        meta,
    }
}
