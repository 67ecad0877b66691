//! Patches over raw HTTP: merge, strategic and JSON patches reach every field and refuse
//! immutable ones; a JSON patch applies atomically; a label patch changes nothing else.

use super::{DEPLOYS, PODS, SVC, deployment, send, store_rv};
use crate::common;
use common::{get_json, start};
use serde_json::json;

#[test]
fn patches_reach_every_field_and_immutable_ones_are_refused() {
    let r = start(0.0);
    // A Service's routing fields, through the same decoding as create.
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/strategic-merge-patch+json",
        r#"{"spec":{"internalTrafficPolicy":"Cluster","trafficDistribution":"PreferClose","ports":[{"port":80,"name":"web"}]}}"#,
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["internalTrafficPolicy"], "Cluster");
    assert_eq!(v["spec"]["trafficDistribution"], "PreferClose");
    assert_eq!(
        v["spec"]["ports"].as_array().unwrap().len(),
        1,
        "merged by port: {v}"
    );
    assert_eq!(v["spec"]["ports"][0]["name"], "web");
    assert_eq!(v["spec"]["ports"][0]["targetPort"], "http", "kept by the merge");
    let (itp, td) = r.with_engine(|e| {
        let s = e
            .get(&locality_sim::ObjectKey::new(
                locality_sim::Kind::Service,
                "default",
                "myservice",
            ))
            .and_then(locality_sim::Object::as_service)
            .cloned()
            .unwrap();
        (s.itp(), s.traffic_distribution)
    });
    assert_eq!(itp, locality_model::objects::TrafficPolicy::Cluster);
    assert_eq!(td.as_deref(), Some("PreferClose"));
    // Immutable: a Service's cluster IP, a pod's node.
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/merge-patch+json",
        r#"{"spec":{"clusterIP":"10.96.0.99","clusterIPs":["10.96.0.99"]}}"#,
    );
    assert_eq!((code, v["reason"].as_str()), (422, Some("Invalid")), "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.99\"}: may not change once set"),
        "{v}"
    );
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/strategic-merge-patch+json",
        r#"{"spec":{"nodeName":"node-b"}}"#,
    );
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Forbidden: pod updates may not change fields other than"),
        "{v}"
    );
    // What a pod may change: labels (also of a pod the topology built), its image.
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/strategic-merge-patch+json",
        r#"{"metadata":{"labels":{"$patch":"replace","app":"web","only":"these"}}}"#,
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["labels"], json!({"app": "web", "only": "these"}));
    let container = v["spec"]["containers"][0]["name"].as_str().unwrap().to_string();
    let patch = json!({"spec": {"containers": [{"name": container, "image": "registry.k8s.io/e2e-test-images/agnhost:2.52"}]}});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{PODS}/web-a"),
        "application/strategic-merge-patch+json",
        &patch.to_string(),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["spec"]["containers"][0]["image"],
        "registry.k8s.io/e2e-test-images/agnhost:2.52"
    );
    assert_eq!(v["spec"]["nodeName"], "node-a");
    // A Deployment's template: container ports merged by containerPort, a rollout follows.
    let (code, _) = send(
        &r,
        "POST",
        DEPLOYS,
        "application/json",
        &deployment("gateway", 2).to_string(),
    );
    assert_eq!(code, 201);
    r.advance(10_000);
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "netexec",
        "ports": [{"containerPort": 9090, "name": "metrics"}]}]}}}});
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{DEPLOYS}/gateway"),
        "application/strategic-merge-patch+json",
        &patch.to_string(),
    );
    assert_eq!(code, 200, "{v}");
    let c = &v["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["args"][0], "netexec", "the container merged by name: {c}");
    let ports: Vec<u64> = c["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["containerPort"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [8080, 9090]);
    r.advance(30_000);
    let (_, rs) = get_json(&r, "/apis/apps/v1/namespaces/default/replicasets");
    assert_eq!(
        rs["items"].as_array().unwrap().len(),
        2,
        "a new ReplicaSet for the new template: {rs}"
    );
    let (_, pods) = get_json(&r, &format!("{PODS}?labelSelector=app%3Dgateway"));
    let pods = pods["items"].as_array().unwrap();
    assert!(
        pods.iter()
            .all(|p| p["spec"]["containers"][0]["ports"].as_array().unwrap().len() == 2),
        "the rollout replaced the pods: {pods:?}"
    );
    // A Deployment's selector is immutable.
    let (code, v) = send(
        &r,
        "PATCH",
        &format!("{DEPLOYS}/gateway"),
        "application/merge-patch+json",
        r#"{"spec":{"selector":{"matchLabels":{"app":"x"}}}}"#,
    );
    assert_eq!(code, 422, "{v}");
    assert!(v["message"].as_str().unwrap().contains("spec.selector"), "{v}");
    // A patch that names another object: 400, as checkName.
    let (code, _) = send(
        &r,
        "PATCH",
        SVC,
        "application/merge-patch+json",
        r#"{"metadata":{"name":"other"}}"#,
    );
    assert_eq!(code, 400);
    // A stale resourceVersion in the patch is a precondition: 409.
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/merge-patch+json",
        r#"{"metadata":{"resourceVersion":"1"}}"#,
    );
    assert_eq!((code, v["reason"].as_str()), (409, Some("Conflict")), "{v}");
}

#[test]
fn json_patches_apply_atomically_and_a_failed_test_is_422() {
    let r = start(0.0);
    let ops = json!([
        {"op": "test", "path": "/spec/internalTrafficPolicy", "value": "Local"},
        {"op": "replace", "path": "/spec/internalTrafficPolicy", "value": "Cluster"},
        {"op": "add", "path": "/metadata/labels", "value": {"tier": "front"}},
        {"op": "copy", "from": "/metadata/labels/tier", "path": "/metadata/labels/copied"},
        {"op": "move", "from": "/metadata/labels/copied", "path": "/metadata/labels/moved"},
        {"op": "remove", "path": "/metadata/labels/tier"}]);
    let (code, v) = send(&r, "PATCH", SVC, "application/json-patch+json", &ops.to_string());
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["internalTrafficPolicy"], "Cluster");
    assert_eq!(v["metadata"]["labels"], json!({"moved": "front"}));
    let rv = store_rv(&r);
    let failing = json!([
        {"op": "replace", "path": "/spec/internalTrafficPolicy", "value": "Local"},
        {"op": "test", "path": "/metadata/labels/moved", "value": "back"}]);
    let (code, v) = send(
        &r,
        "PATCH",
        SVC,
        "application/json-patch+json",
        &failing.to_string(),
    );
    assert_eq!((code, v["reason"].as_str()), (422, Some("Invalid")), "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("the server rejected our request due to an error in our request"),
        "{v}"
    );
    assert_eq!(store_rv(&r), rv, "nothing applied");
    assert_eq!(get_json(&r, SVC).1["spec"]["internalTrafficPolicy"], "Cluster");
    let (code, _) = send(&r, "PATCH", SVC, "application/json-patch+json", r#"{"op":"add"}"#);
    assert_eq!(code, 400, "not a list of operations");
    let (code, _) = send(
        &r,
        "PATCH",
        SVC,
        "application/json-patch+json",
        r#"[{"op":"remove","path":"/spec/nope"}]"#,
    );
    assert_eq!(code, 422);
}

#[test]
fn a_label_patch_of_any_kind_changes_nothing_else() {
    let r = start(0.0);
    assert_eq!(
        send(
            &r,
            "POST",
            DEPLOYS,
            "application/json",
            &deployment("gateway", 1).to_string()
        )
        .0,
        201
    );
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"tolerations": [{"operator": "Exists"}],
                                       "containers": [{"name": "agent", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                                       "args": ["netexec", "--http-port=4317"],
                                                       "ports": [{"name": "otlp", "containerPort": 4317}],
                                                       "readinessProbe": {"tcpSocket": {"port": 4317}, "periodSeconds": 1}}]}}}});
    assert_eq!(
        send(
            &r,
            "POST",
            "/apis/apps/v1/namespaces/default/daemonsets",
            "application/json",
            &ds.to_string()
        )
        .0,
        201
    );
    r.advance(10_000);
    let lists = [
        "/api/v1/namespaces",
        "/api/v1/nodes",
        "/api/v1/pods",
        "/api/v1/services",
        "/apis/discovery.k8s.io/v1/endpointslices",
        "/apis/apps/v1/deployments",
        "/apis/apps/v1/replicasets",
        "/apis/apps/v1/daemonsets",
    ];
    let strip = |mut v: serde_json::Value| {
        let m = v["metadata"].as_object_mut().unwrap();
        for k in ["labels", "resourceVersion", "managedFields"] {
            m.remove(k);
        }
        v
    };
    let mut patched = 0;
    for list in lists {
        let (_, items) = get_json(&r, list);
        for item in items["items"].as_array().unwrap() {
            let name = item["metadata"]["name"].as_str().unwrap();
            let path = match item["metadata"]["namespace"].as_str() {
                Some(ns) => list.replacen(
                    &format!("/{}", list.rsplit('/').next().unwrap()),
                    &format!("/namespaces/{ns}/{}/{name}", list.rsplit('/').next().unwrap()),
                    1,
                ),
                None => format!("{list}/{name}"),
            };
            let (_, before) = get_json(&r, &path);
            for ct in [
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
            ] {
                let (code, after) = send(
                    &r,
                    "PATCH",
                    &path,
                    ct,
                    r#"{"metadata":{"labels":{"patched":"yes"}}}"#,
                );
                assert_eq!(code, 200, "{path}: {after}");
                assert_eq!(after["metadata"]["labels"]["patched"], "yes", "{path}");
                assert_eq!(
                    strip(after),
                    strip(before.clone()),
                    "{path}: only the label changed"
                );
            }
            let (code, after) = send(
                &r,
                "PATCH",
                &path,
                "application/json-patch+json",
                r#"[{"op":"remove","path":"/metadata/labels/patched"}]"#,
            );
            assert_eq!(code, 200, "{path}: {after}");
            assert_eq!(strip(after), strip(before.clone()), "{path}");
            patched += 1;
        }
    }
    assert!(patched >= 20, "{patched} objects");
    // The cluster still works: the DaemonSet's pods are ready on every node.
    r.advance(10_000);
    let (_, pods) = get_json(&r, &format!("{PODS}?labelSelector=app%3Dagent"));
    assert_eq!(pods["items"].as_array().unwrap().len(), 3);
}
