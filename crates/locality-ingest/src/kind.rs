//! Kinds and the top-level fields of an object that ingest reads.

use locality_model::objects as m;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Node,
    Pod,
    Service,
    EndpointSlice,
    Endpoints,
    Workload(m::WorkloadKind),
    Namespace,
    PodDisruptionBudget,
    List,
    Other,
}

impl Kind {
    pub(crate) fn of(kind: &str) -> Kind {
        match kind {
            "Node" => Kind::Node,
            "Pod" => Kind::Pod,
            "Service" => Kind::Service,
            "EndpointSlice" => Kind::EndpointSlice,
            "Endpoints" => Kind::Endpoints,
            "DaemonSet" => Kind::Workload(m::WorkloadKind::DaemonSet),
            "Deployment" => Kind::Workload(m::WorkloadKind::Deployment),
            "ReplicaSet" => Kind::Workload(m::WorkloadKind::ReplicaSet),
            "StatefulSet" => Kind::Workload(m::WorkloadKind::StatefulSet),
            "Namespace" => Kind::Namespace,
            "PodDisruptionBudget" => Kind::PodDisruptionBudget,
            k if k.ends_with("List") => Kind::List,
            _ => Kind::Other,
        }
    }

    /// Whether a top-level field matters for this kind.
    pub(crate) fn reads(self, field: Field) -> bool {
        match self {
            Kind::Node | Kind::Pod | Kind::Service => matches!(field, Field::Spec | Field::Status),
            Kind::Workload(_) | Kind::PodDisruptionBudget => field == Field::Spec,
            Kind::EndpointSlice => matches!(field, Field::AddressType | Field::Endpoints | Field::Ports),
            Kind::Endpoints => field == Field::Subsets,
            Kind::Namespace | Kind::List | Kind::Other => false,
        }
    }

    /// apiVersions served for this kind; `Err` explains why another one is refused.
    pub(crate) fn check_api_version(self, kind: &str, api: &str) -> Result<(), String> {
        let ok: &[&str] = match self {
            Kind::Node | Kind::Pod | Kind::Service | Kind::Endpoints | Kind::Namespace => &["v1"],
            Kind::EndpointSlice => &["discovery.k8s.io/v1", "discovery.k8s.io/v1beta1"],
            Kind::Workload(_) => &["apps/v1"],
            Kind::PodDisruptionBudget => &["policy/v1"],
            Kind::List | Kind::Other => return Ok(()),
        };
        if ok.contains(&api) {
            return Ok(());
        }
        if matches!(self, Kind::Workload(_))
            && matches!(api, "apps/v1beta1" | "apps/v1beta2" | "extensions/v1beta1")
        {
            return Err(format!(
                "apiVersion {api} for {kind} is no longer served (removed in Kubernetes 1.16); \
                 convert the manifest to apps/v1"
            ));
        }
        Err(format!(
            "unsupported apiVersion {api:?} for {kind} (expected {})",
            ok.join(" or ")
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Spec,
    Status,
    AddressType,
    Endpoints,
    Ports,
    Subsets,
}

impl Field {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Field::Spec => "spec",
            Field::Status => "status",
            Field::AddressType => "addressType",
            Field::Endpoints => "endpoints",
            Field::Ports => "ports",
            Field::Subsets => "subsets",
        }
    }
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(field_identifier, rename_all = "camelCase")]
pub(crate) enum ObjKey {
    ApiVersion,
    Kind,
    Metadata,
    Items,
    Spec,
    Status,
    AddressType,
    Endpoints,
    Ports,
    Subsets,
    #[serde(other)]
    Other,
}

impl ObjKey {
    /// The JSON name, for errors (`None` for keys not read).
    pub(crate) fn name(self) -> Option<&'static str> {
        Some(match self {
            ObjKey::ApiVersion => "apiVersion",
            ObjKey::Kind => "kind",
            ObjKey::Metadata => "metadata",
            ObjKey::Items => "items",
            ObjKey::Spec => "spec",
            ObjKey::Status => "status",
            ObjKey::AddressType => "addressType",
            ObjKey::Endpoints => "endpoints",
            ObjKey::Ports => "ports",
            ObjKey::Subsets => "subsets",
            ObjKey::Other => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Kind;

    /// The kind of a `kubectl get` resource name of [`DUMP_COMMAND`](m::DUMP_COMMAND).
    fn kind_of_resource(resource: &str) -> &'static str {
        match resource {
            "namespaces" => "Namespace",
            "nodes" => "Node",
            "pods" => "Pod",
            "services" => "Service",
            "endpointslices" => "EndpointSlice",
            "endpoints" => "Endpoints",
            "daemonsets" => "DaemonSet",
            "deployments" => "Deployment",
            "replicasets" => "ReplicaSet",
            "statefulsets" => "StatefulSet",
            "poddisruptionbudgets" => "PodDisruptionBudget",
            other => panic!("unknown resource {other}"),
        }
    }

    /// The one dump command lists every kind ingest reads but Endpoints (mirrored into
    /// slices by the cluster), and nothing ingest skips.
    #[test]
    fn the_dump_command_lists_every_kind_read() {
        use super::m;
        let resources = m::DUMP_COMMAND
            .strip_prefix("kubectl get ")
            .and_then(|r| r.split_whitespace().next())
            .expect("kubectl get RESOURCES …");
        let listed: Vec<&str> = resources.split(',').map(kind_of_resource).collect();
        for kind in listed.iter() {
            assert!(
                !matches!(Kind::of(kind), Kind::Other | Kind::List),
                "{kind} is not read"
            );
        }
        let all = [
            "Namespace",
            "Node",
            "Pod",
            "Service",
            "EndpointSlice",
            "Endpoints",
            "DaemonSet",
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
            "PodDisruptionBudget",
        ];
        for kind in all {
            assert!(!matches!(Kind::of(kind), Kind::Other), "{kind}");
            assert!(
                listed.contains(&kind) || kind == "Endpoints",
                "the dump command lacks {kind}"
            );
        }
        assert!(m::DUMP_COMMAND.ends_with(" -A -o json > dump.json"));
    }
}
