//! Discovery (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}/{version}`) and the
//! OpenAPI documents kubectl reads before it validates a manifest.

use locality_model::version::KubeVersion;
use serde_json::{Map, Value, json};

use crate::resources::{self, GROUPS, Resource};

/// The semver build metadata of the simulated API server's `gitVersion`
/// (`v1.35.0+locality-simulated`): clients tell the simulated cluster from a real one by it
/// (`locality_live::is_simulated_version`), and parse the version before it as any release's.
pub const SIMULATED_BUILD_METADATA: &str = "locality-simulated";

/// `/version`, shaped like a real API server's, with a `gitVersion` whose build metadata
/// says simulated (`v1.35.0+locality-simulated`, see [`SIMULATED_BUILD_METADATA`]).
pub fn version(v: KubeVersion) -> Value {
    json!({
        "major": v.major.to_string(),
        "minor": v.minor.to_string(),
        "gitVersion": simulated_git_version(v),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "simulated",
        "compiler": "simulated",
        "platform": "linux/amd64",
    })
}

/// The simulated API server's `gitVersion` for `v`: `v1.MINOR.0+locality-simulated`.
pub fn simulated_git_version(v: KubeVersion) -> String {
    format!("v{}.{}.0+{SIMULATED_BUILD_METADATA}", v.major, v.minor)
}

/// `/api`.
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group(name: &str) -> Value {
    let gv = json!({"groupVersion": format!("{name}/v1"), "version": "v1"});
    json!({"name": name, "versions": [gv], "preferredVersion": gv})
}

/// `/apis`.
pub fn groups() -> Value {
    json!({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": GROUPS.iter().map(|g| group(g)).collect::<Vec<_>>(),
    })
}

/// `/apis/{group}`.
pub fn group_doc(name: &str) -> Option<Value> {
    GROUPS.contains(&name).then(|| {
        let mut g = group(name);
        g["kind"] = json!("APIGroup");
        g["apiVersion"] = json!("v1");
        g
    })
}

fn verbs(r: &Resource) -> Value {
    if r.kind.is_some() {
        json!(["create", "delete", "get", "list", "patch", "update", "watch"])
    } else {
        json!(["get", "list", "watch"])
    }
}

/// `/api/v1` or `/apis/{group}/{version}`: an `APIResourceList`, `None` for an unknown group.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    if !(group.is_empty() || GROUPS.contains(&group)) || version != "v1" {
        return None;
    }
    let gv = if group.is_empty() {
        "v1".to_string()
    } else {
        format!("{group}/{version}")
    };
    let mut list = Vec::new();
    for r in resources::in_group_version(group, version) {
        let mut o = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind_name,
            "verbs": verbs(r),
        });
        if !r.short_names.is_empty() {
            o["shortNames"] = json!(r.short_names);
        }
        if matches!(
            r.kind_name,
            "Pod" | "Service" | "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet" | "Job"
        ) {
            o["categories"] = json!(["all"]);
        }
        list.push(o);
        if matches!(r.kind_name, "Deployment" | "ReplicaSet" | "StatefulSet") {
            list.push(
                json!({"name": format!("{}/scale", r.plural), "singularName": "", "namespaced": true,
                             "group": "autoscaling", "version": "v1", "kind": "Scale",
                             "verbs": ["get", "patch", "update"]}),
            );
        }
        if r.kind_name == "Pod" {
            list.push(
                json!({"name": "pods/status", "singularName": "", "namespaced": true,
                             "kind": "Pod", "verbs": ["get"]}),
            );
            list.push(json!({"name": "pods/log", "singularName": "", "namespaced": true,
                             "kind": "Pod", "verbs": ["get"]}));
        }
    }
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}))
}

/// `/openapi/v3`: one path per group version, each document naming the `fieldValidation`
/// query parameter on PATCH of every kind, so kubectl leaves validation to the server.
pub fn openapi_v3_root() -> Value {
    let mut paths = Map::new();
    paths.insert(
        "api/v1".into(),
        json!({"serverRelativeURL": "/openapi/v3/api/v1?hash=SIMULATED"}),
    );
    for g in GROUPS {
        paths.insert(
            format!("apis/{g}/v1"),
            json!({"serverRelativeURL": format!("/openapi/v3/apis/{g}/v1?hash=SIMULATED")}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v3/{api/v1|apis/group/version}`.
pub fn openapi_v3_group_version(group: &str, version: &str) -> Option<Value> {
    if !(group.is_empty() || GROUPS.contains(&group)) || version != "v1" {
        return None;
    }
    let prefix = if group.is_empty() {
        "/api/v1".to_string()
    } else {
        format!("/apis/{group}/{version}")
    };
    let param =
        json!({"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}});
    let mut paths = Map::new();
    for r in resources::in_group_version(group, version) {
        let item = if r.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
        } else {
            format!("{prefix}/{}/{{name}}", r.plural)
        };
        let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind_name});
        let op = json!({
            "description": format!("partially update the specified {} (simulated)", r.kind_name),
            "operationId": format!("patch{}", r.kind_name),
            "parameters": [param],
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
        });
        let put = json!({
            "description": format!("replace the specified {} (simulated)", r.kind_name),
            "operationId": format!("replace{}", r.kind_name),
            "parameters": [param],
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "put",
            "x-kubernetes-group-version-kind": gvk,
        });
        paths.insert(item, json!({"patch": op, "put": put}));
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (locality simulated cluster)", "version": "v1.35.0-locality-sim"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
