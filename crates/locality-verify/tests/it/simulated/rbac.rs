//! Every request a full simulated run makes is granted by deploy/rbac-verify.yaml.

use super::{Sim, summary};
use locality_verify::Decision;

/// The RBAC attributes of a request, as the API server's request info gives them: (verb,
/// API group, resource[/subresource]); `None` for a non-resource URL (`/version`, discovery).
fn rbac_attributes(method: &str, uri: &str) -> Option<(String, String, String)> {
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest) = match segs.first() {
        Some(&"api") if segs.len() > 2 => ("", &segs[2..]),
        Some(&"apis") if segs.len() > 3 => (segs[1], &segs[3..]),
        _ => return None,
    };
    let rest = if rest[0] == "namespaces" && rest.len() >= 3 {
        &rest[2..]
    } else {
        rest
    };
    let name = rest.get(1);
    let resource = match rest.get(2) {
        Some(sub) => format!("{}/{sub}", rest[0]),
        None => rest[0].to_string(),
    };
    let watch = query.split('&').any(|kv| kv == "watch=true" || kv == "watch=1");
    let verb = match (method, name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if watch => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        _ => "unknown",
    };
    Some((verb.to_string(), group.to_string(), resource))
}

/// The rules of the ClusterRole `name` in a YAML file of RBAC objects: (apiGroups,
/// resources, verbs) each.
fn cluster_role_rules(text: &str, name: &str) -> Vec<(Vec<String>, Vec<String>, Vec<String>)> {
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).expect("RBAC YAML");
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    docs.iter()
        .filter(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == name)
        .flat_map(|d| d["rules"].as_array().cloned().unwrap_or_default())
        .map(|r| (list(&r["apiGroups"]), list(&r["resources"]), list(&r["verbs"])))
        .collect()
}

/// The requests `rules` do not grant, as `verb group/resource` lines.
fn refused(
    requests: &[(String, String)],
    rules: &[(Vec<String>, Vec<String>, Vec<String>)],
) -> std::collections::BTreeSet<String> {
    let any = |v: &[String], x: &str| v.iter().any(|e| e == "*" || e == x);
    requests
        .iter()
        .filter_map(|(m, uri)| rbac_attributes(m, uri))
        .filter(|(verb, group, resource)| {
            !rules
                .iter()
                .any(|(g, r, v)| any(g, group) && any(r, resource) && any(v, verb))
        })
        .map(|(verb, group, resource)| format!("{verb} {group}/{resource}"))
        .collect()
}

/// deploy/rbac-verify.yaml grants every request a full run sends, and nothing the run does
/// not need goes unnoticed: without its `pods/proxy` rule the same requests are refused.
#[test]
fn every_request_of_a_full_run_is_granted_by_the_verify_rbac_file() {
    let (o, _, requests) = Sim::default().verify_recording("rbac");
    assert_eq!(o.decision, Decision::Accept, "{}", summary("rbac", &o));
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/rbac-verify.yaml"),
    )
    .unwrap();
    let rules = cluster_role_rules(&text, "locality-verify");
    assert!(!rules.is_empty());
    assert!(requests.len() > 100, "{} requests recorded", requests.len());
    assert_eq!(refused(&requests, &rules), Default::default());
    // The control: a rule less, and the run's probes are refused.
    let narrower: Vec<_> = rules
        .iter()
        .cloned()
        .map(|(g, r, v)| (g, r.into_iter().filter(|r| r != "pods/proxy").collect(), v))
        .collect();
    assert!(refused(&requests, &narrower).contains("get /pods/proxy"));
}
