//! RBAC as the API server's authorizer applies it, for the fake API server: the bound
//! roles of one subject, read from a YAML file of RBAC objects.

use std::path::Path;

use serde_json::Value;

/// RBAC rules of one role.
#[derive(Debug, Clone, Default)]
struct Rule {
    api_groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
    resource_names: Vec<String>,
}

/// The bound roles of one subject, read from a YAML file of RBAC objects.
#[derive(Debug, Clone, Default)]
pub struct Rbac {
    /// Rules that apply in every namespace and at cluster scope (bound ClusterRoles).
    cluster: Vec<Rule>,
    /// Rules that apply in one namespace (bound Roles).
    namespaced: Vec<(String, Rule)>,
    /// The subject, as the API server names it (`system:serviceaccount:NS:NAME`).
    pub user: String,
}

impl Rbac {
    /// Loads ClusterRoles/Roles bound (ClusterRoleBinding/RoleBinding) to the
    /// ServiceAccount `namespace/name` in `path`.
    pub fn load(path: &Path, sa_namespace: &str, sa_name: &str) -> Rbac {
        let text = std::fs::read_to_string(path).expect("read the RBAC file");
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("RBAC YAML");
        let is_subject = |b: &Value| {
            b["subjects"].as_array().is_some_and(|s| {
                s.iter().any(|s| {
                    s["kind"] == "ServiceAccount" && s["name"] == sa_name && s["namespace"] == sa_namespace
                })
            })
        };
        let rules_of = |kind: &str, name: &str, ns: Option<&str>| -> Vec<Rule> {
            docs.iter()
                .filter(|d| {
                    d["kind"] == kind
                        && d["metadata"]["name"] == name
                        && ns.is_none_or(|ns| d["metadata"]["namespace"] == ns)
                })
                .flat_map(|d| d["rules"].as_array().cloned().unwrap_or_default())
                .map(|r| {
                    let list = |k: &str| -> Vec<String> {
                        r[k].as_array()
                            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                            .unwrap_or_default()
                    };
                    Rule {
                        api_groups: list("apiGroups"),
                        resources: list("resources"),
                        verbs: list("verbs"),
                        resource_names: list("resourceNames"),
                    }
                })
                .collect()
        };
        let mut rbac = Rbac {
            user: format!("system:serviceaccount:{sa_namespace}:{sa_name}"),
            ..Default::default()
        };
        for b in docs.iter().filter(|d| is_subject(d)) {
            let role_kind = b["roleRef"]["kind"].as_str().unwrap_or_default();
            let role_name = b["roleRef"]["name"].as_str().unwrap_or_default();
            match b["kind"].as_str() {
                Some("ClusterRoleBinding") => rbac.cluster.extend(rules_of("ClusterRole", role_name, None)),
                Some("RoleBinding") => {
                    let ns = b["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("default")
                        .to_owned();
                    let rules = if role_kind == "ClusterRole" {
                        rules_of("ClusterRole", role_name, None)
                    } else {
                        rules_of("Role", role_name, Some(&ns))
                    };
                    rbac.namespaced.extend(rules.into_iter().map(|r| (ns.clone(), r)));
                }
                _ => {}
            }
        }
        assert!(!rbac.cluster.is_empty(), "no ClusterRole bound to {}", rbac.user);
        rbac
    }

    pub(super) fn allows(
        &self,
        verb: &str,
        group: &str,
        resource: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> bool {
        let matches = |r: &Rule| {
            let any = |v: &[String], x: &str| v.iter().any(|e| e == "*" || e == x);
            any(&r.verbs, verb)
                && any(&r.api_groups, group)
                && any(&r.resources, resource)
                && (r.resource_names.is_empty()
                    || name.is_some_and(|n| r.resource_names.iter().any(|e| e == n)))
        };
        self.cluster.iter().any(matches)
            || namespace.is_some_and(|ns| self.namespaced.iter().any(|(rns, r)| rns == ns && matches(r)))
    }
}
