//! The kinds the model reads, where they live in the API, and what is lost without them.

/// One listed kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindSpec {
    /// Kind (`Pod`), used in warnings and [`LiveSnapshot::forbidden`](crate::LiveSnapshot::forbidden).
    pub kind: &'static str,
    /// Resource as RBAC names it (`pods`, `endpointslices`).
    pub resource: &'static str,
    /// API group (`""` for core, `apps`, `discovery.k8s.io`).
    pub group: &'static str,
    /// Path prefix of the group version (`/api/v1`, `/apis/apps/v1`).
    pub prefix: &'static str,
    /// Namespaced (listed per namespace with `-n`) or cluster-scoped.
    pub namespaced: bool,
    /// What the model cannot conclude without this kind (said in the warning).
    pub without: &'static str,
}

impl KindSpec {
    /// `pods`, `endpointslices.discovery.k8s.io`, `daemonsets.apps`: the name `kubectl`
    /// and RBAC messages use.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_owned()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    /// The collection path: cluster-wide, or in `namespace` for namespaced kinds.
    pub fn path(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced => format!("{}/namespaces/{ns}/{}", self.prefix, self.resource),
            _ => format!("{}/{}", self.prefix, self.resource),
        }
    }
}

/// Every kind read, in listing order. Namespaces are listed with `-A` and read one by one
/// (`GET /api/v1/namespaces/NS`) with `-n`.
pub const KINDS: &[KindSpec] = &[
    KindSpec {
        kind: "Node",
        resource: "nodes",
        group: "",
        prefix: "/api/v1",
        namespaced: false,
        without: "no nodes, zones or node readiness: the matrix has no rows and every rule that \
                  names nodes (LOC001, LOC003, LOC008, LOC015, LOC016) finds nothing",
    },
    KindSpec {
        kind: "Namespace",
        resource: "namespaces",
        group: "",
        prefix: "/api/v1",
        namespaced: false,
        without: "namespace metadata unknown (routing does not depend on it)",
    },
    KindSpec {
        kind: "Service",
        resource: "services",
        group: "",
        prefix: "/api/v1",
        namespaced: true,
        without: "no Services: there is nothing to evaluate",
    },
    KindSpec {
        kind: "EndpointSlice",
        resource: "endpointslices",
        group: "discovery.k8s.io",
        prefix: "/apis/discovery.k8s.io/v1",
        namespaced: true,
        without: "EndpointSlices are derived from pods instead of observed (endpointSource: derived; \
                  LOC014 skipped, LOC007/LOC009/LOC020 judge the derived slices)",
    },
    KindSpec {
        kind: "Pod",
        resource: "pods",
        group: "",
        prefix: "/api/v1",
        namespaced: true,
        without: "client nodes unknown (LOC001/LOC002/LOC003 cannot weigh nodes by pods), and \
                  EndpointSlices can be neither derived nor compared (LOC014 skipped)",
    },
    KindSpec {
        kind: "DaemonSet",
        resource: "daemonsets",
        group: "apps",
        prefix: "/apis/apps/v1",
        namespaced: true,
        without: "DaemonSet backends unknown (LOC003/LOC004 skipped), and the kube-proxy version \
                  and mode cannot be read from its DaemonSet",
    },
    KindSpec {
        kind: "Deployment",
        resource: "deployments",
        group: "apps",
        prefix: "/apis/apps/v1",
        namespaced: true,
        without: "Deployment backends unknown (LOC002 skipped for them)",
    },
    KindSpec {
        kind: "ReplicaSet",
        resource: "replicasets",
        group: "apps",
        prefix: "/apis/apps/v1",
        namespaced: true,
        without: "pods cannot be traced to their Deployment through ReplicaSets (LOC002 may miss \
                  Deployment-backed Services)",
    },
    KindSpec {
        kind: "StatefulSet",
        resource: "statefulsets",
        group: "apps",
        prefix: "/apis/apps/v1",
        namespaced: true,
        without: "StatefulSet backends unknown (LOC002 skipped for them)",
    },
    KindSpec {
        kind: "PodDisruptionBudget",
        resource: "poddisruptionbudgets",
        group: "policy",
        prefix: "/apis/policy/v1",
        namespaced: true,
        without: "PodDisruptionBudgets unknown: `simulate --drain` evicts as if none limited it",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let pods = KINDS.iter().find(|k| k.kind == "Pod").unwrap();
        assert_eq!(pods.path(None), "/api/v1/pods");
        assert_eq!(pods.path(Some("web")), "/api/v1/namespaces/web/pods");
        let nodes = KINDS.iter().find(|k| k.kind == "Node").unwrap();
        assert_eq!(nodes.path(Some("web")), "/api/v1/nodes");
        let eps = KINDS.iter().find(|k| k.kind == "EndpointSlice").unwrap();
        assert_eq!(eps.qualified(), "endpointslices.discovery.k8s.io");
        assert_eq!(
            eps.path(Some("a")),
            "/apis/discovery.k8s.io/v1/namespaces/a/endpointslices"
        );
    }
}
