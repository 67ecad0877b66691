//! The resources the simulated API server serves: plural names, kinds, groups, scope and
//! short names, as real discovery lists them.

use locality_sim::Kind;

/// One served resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    /// Plural (`pods`).
    pub plural: &'static str,
    /// Singular (`pod`).
    pub singular: &'static str,
    /// Kind (`Pod`).
    pub kind_name: &'static str,
    /// API group (`""` for core).
    pub group: &'static str,
    /// Version (`v1`).
    pub version: &'static str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// `kubectl` short names.
    pub short_names: &'static [&'static str],
    /// The simulated store's kind; `None` for a kind served read-only (ConfigMaps, the fixed
    /// set of the `configmaps` module).
    pub kind: Option<Kind>,
}

impl Resource {
    /// `apiVersion` of its objects (`v1`, `apps/v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `pods`, or `deployments.apps` (for messages, as the real API server writes them).
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

const fn res(
    plural: &'static str,
    singular: &'static str,
    kind_name: &'static str,
    group: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    kind: Option<Kind>,
) -> Resource {
    Resource {
        plural,
        singular,
        kind_name,
        group,
        version: "v1",
        namespaced,
        short_names,
        kind,
    }
}

/// Every served resource.
pub const RESOURCES: &[Resource] = &[
    res(
        "namespaces",
        "namespace",
        "Namespace",
        "",
        false,
        &["ns"],
        Some(Kind::Namespace),
    ),
    res("nodes", "node", "Node", "", false, &["no"], Some(Kind::Node)),
    // Read-only: kube-proxy's configuration, published at start (the `configmaps` module).
    res("configmaps", "configmap", "ConfigMap", "", true, &["cm"], None),
    res("pods", "pod", "Pod", "", true, &["po"], Some(Kind::Pod)),
    res(
        "services",
        "service",
        "Service",
        "",
        true,
        &["svc"],
        Some(Kind::Service),
    ),
    res(
        "endpointslices",
        "endpointslice",
        "EndpointSlice",
        "discovery.k8s.io",
        true,
        &[],
        Some(Kind::EndpointSlice),
    ),
    res(
        "deployments",
        "deployment",
        "Deployment",
        "apps",
        true,
        &["deploy"],
        Some(Kind::Deployment),
    ),
    res(
        "replicasets",
        "replicaset",
        "ReplicaSet",
        "apps",
        true,
        &["rs"],
        Some(Kind::ReplicaSet),
    ),
    res(
        "daemonsets",
        "daemonset",
        "DaemonSet",
        "apps",
        true,
        &["ds"],
        Some(Kind::DaemonSet),
    ),
    res(
        "statefulsets",
        "statefulset",
        "StatefulSet",
        "apps",
        true,
        &["sts"],
        Some(Kind::StatefulSet),
    ),
    // Stored, not simulated (`locality_sim::Kind::STORED`, the `stored` module): no Job
    // controller runs a Job, no authorizer reads the RBAC objects.
    res(
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        "",
        true,
        &["sa"],
        Some(Kind::ServiceAccount),
    ),
    res("jobs", "job", "Job", "batch", true, &[], Some(Kind::Job)),
    // Read by the simulated eviction (`locality_sim::disruption`), its status never written.
    res(
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        "policy",
        true,
        &["pdb"],
        Some(Kind::PodDisruptionBudget),
    ),
    res(
        "clusterrolebindings",
        "clusterrolebinding",
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io",
        false,
        &[],
        Some(Kind::ClusterRoleBinding),
    ),
    res(
        "clusterroles",
        "clusterrole",
        "ClusterRole",
        "rbac.authorization.k8s.io",
        false,
        &[],
        Some(Kind::ClusterRole),
    ),
    res(
        "rolebindings",
        "rolebinding",
        "RoleBinding",
        "rbac.authorization.k8s.io",
        true,
        &[],
        Some(Kind::RoleBinding),
    ),
    res(
        "roles",
        "role",
        "Role",
        "rbac.authorization.k8s.io",
        true,
        &[],
        Some(Kind::Role),
    ),
];

/// The API groups (besides core `v1`), in discovery order (a real API server's: `apps`,
/// `batch`, `rbac.authorization.k8s.io`, then `discovery.k8s.io`).
pub const GROUPS: &[&str] = &[
    "apps",
    "batch",
    "policy",
    "rbac.authorization.k8s.io",
    "discovery.k8s.io",
];

/// The resource `plural` of `group`/`version`.
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static Resource> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The resource serving a store kind.
pub fn for_kind(kind: Kind) -> &'static Resource {
    RESOURCES
        .iter()
        .find(|r| r.kind == Some(kind))
        .unwrap_or(&RESOURCES[0])
}

/// The resources of one group version.
pub fn in_group_version<'a>(
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'static Resource> + 'a {
    RESOURCES
        .iter()
        .filter(move |r| r.group == group && r.version == version)
}
