//! StatefulSets (`apps/v1`) over raw HTTP: discovery, create, the simulated controller's pods
//! and status read back (JSON through k8s-openapi's types, protobuf through k8s-pb's), lists,
//! watches, the server-side Table, `statefulsets/scale`, the update validation, and the
//! `MaxUnavailableStatefulSet` gate's field; and `minReadySeconds` in every workload's
//! available count.

use crate::common;
use crate::protobuf_bodies::{PREFERS_PROTOBUF, PROTOBUF, answer, exchange, unwrap_envelope, watch_frames};

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use common::{get_json, http, start};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use locality_apiserver::{Running, ServeOptions};
use locality_sim::{SimConfig, Topology};
use prost::Message as _;
use serde_json::{Value, json};

const STS: &str = "/apis/apps/v1/namespaces/default/statefulsets";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// A StatefulSet `db` of `replicas` agnhost netexec pods behind the headless Service `db`.
fn db(replicas: u32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "labels": {"tier": "data"}},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{
                    "name": "netexec",
                    "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                    "args": ["netexec", "--http-port=8080"],
                    "ports": [{"name": "http", "containerPort": 8080}],
                }]},
            },
        },
    })
}

/// Creates `db` and runs the cluster until its pods are up.
fn created(r: &Running, replicas: u32) {
    let (code, body) = http(r, "POST", STS, "application/json", &db(replicas).to_string());
    assert_eq!(code, 201, "{body}");
    r.advance(60_000);
}

/// `GET` of the StatefulSet as k8s-openapi reads it.
fn read(r: &Running) -> StatefulSet {
    let (code, v) = get_json(r, &format!("{STS}/db"));
    assert_eq!(code, 200, "{v}");
    serde_json::from_value(v).expect("a StatefulSet")
}

/// The names of the pods of `db`, sorted.
fn pods(r: &Running) -> Vec<String> {
    let (_, v) = get_json(r, "/api/v1/namespaces/default/pods?labelSelector=app%3Ddb");
    let mut names: Vec<String> = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .map(|p| p["metadata"]["name"].as_str().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn stateful_sets_are_discovered_created_and_read_back_with_their_controller_status() {
    let r = start(0.0);
    let (_, v) = get_json(&r, "/apis/apps/v1");
    let resources = v["resources"].as_array().expect("resources");
    let sts = resources
        .iter()
        .find(|x| x["name"] == "statefulsets")
        .expect("statefulsets discovered");
    assert_eq!(sts["shortNames"], json!(["sts"]));
    assert_eq!(sts["kind"], "StatefulSet");
    assert!(
        sts["verbs"].as_array().unwrap().contains(&json!("create")),
        "{sts}"
    );
    assert!(resources.iter().any(|x| x["name"] == "statefulsets/scale"), "{v}");

    created(&r, 3);
    assert_eq!(pods(&r), ["db-0", "db-1", "db-2"]);
    let s = read(&r);
    let spec = s.spec.expect("spec");
    assert_eq!(spec.replicas, Some(3));
    assert_eq!(spec.service_name.as_deref(), Some("db"));
    assert_eq!(spec.pod_management_policy.as_deref(), Some("OrderedReady"));
    assert_eq!(spec.revision_history_limit, Some(10));
    let strategy = spec.update_strategy.expect("updateStrategy");
    assert_eq!(strategy.type_.as_deref(), Some("RollingUpdate"));
    let rolling = strategy.rolling_update.expect("rollingUpdate");
    assert_eq!(rolling.partition, Some(0));
    assert_eq!(
        rolling.max_unavailable,
        Some(IntOrString::Int(1)),
        "defaulted while MaxUnavailableStatefulSet is on (1.35)"
    );
    let retention = spec
        .persistent_volume_claim_retention_policy
        .expect("retention policy");
    assert_eq!(retention.when_deleted.as_deref(), Some("Retain"));
    let template_labels = spec.template.metadata.and_then(|m| m.labels).unwrap_or_default();
    assert_eq!(template_labels.get("app").map(String::as_str), Some("db"));
    let status = s.status.expect("status");
    assert_eq!(
        (
            status.replicas,
            status.ready_replicas,
            status.available_replicas,
            status.current_replicas,
            status.updated_replicas,
        ),
        (3, Some(3), Some(3), Some(3), Some(3))
    );
    assert!(
        status
            .update_revision
            .as_deref()
            .is_some_and(|x| x.starts_with("db-"))
    );
    assert_eq!(status.current_revision, status.update_revision);

    // Its pods name it as their controller, and carry their ordinal.
    let (_, p) = get_json(&r, "/api/v1/namespaces/default/pods/db-1");
    assert_eq!(p["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
    assert_eq!(p["metadata"]["ownerReferences"][0]["apiVersion"], "apps/v1");
    assert_eq!(p["metadata"]["labels"]["apps.kubernetes.io/pod-index"], "1");
    assert_eq!(
        p["spec"]["containers"][0]["image"],
        "registry.k8s.io/e2e-test-images/agnhost:2.53"
    );

    // The list, cluster-wide, through k8s-openapi.
    let (code, v) = get_json(&r, "/apis/apps/v1/statefulsets");
    assert_eq!((code, v["kind"].as_str()), (200, Some("StatefulSetList")), "{v}");
    let list: k8s_openapi::List<StatefulSet> = serde_json::from_value(v).expect("a StatefulSetList");
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    assert_eq!(names, ["db"]);

    // The Table `kubectl get statefulsets` asks for: printStatefulSet's columns.
    let (code, _, body) = exchange(&r, "GET", STS, TABLE, b"");
    assert_eq!(code, 200);
    let t: Value = serde_json::from_slice(&body).expect("a Table");
    let columns: Vec<(&str, i64)> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["priority"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        columns,
        [
            ("Name", 0),
            ("Ready", 0),
            ("Age", 0),
            ("Containers", 1),
            ("Images", 1)
        ]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(
        (&cells[0], &cells[1], &cells[3]),
        (&json!("db"), &json!("3/3"), &json!("netexec"))
    );
    assert_eq!(cells[4], "registry.k8s.io/e2e-test-images/agnhost:2.53");
}

#[test]
fn stateful_sets_scale_update_within_the_allowed_fields_and_delete_with_their_pods() {
    let r = start(0.0);
    created(&r, 3);
    // statefulsets/scale: down to 1, from the highest ordinal.
    let (code, v) = http(
        &r,
        "PATCH",
        &format!("{STS}/db/scale"),
        "application/merge-patch+json",
        r#"{"spec":{"replicas":1}}"#,
    );
    assert_eq!(code, 200, "{v}");
    r.advance(120_000);
    assert_eq!(pods(&r), ["db-0"]);
    assert_eq!(read(&r).status.and_then(|s| s.ready_replicas), Some(1));

    // A new template rolls the pods; replicas and minReadySeconds may change.
    let (_, mut cur) = get_json(&r, &format!("{STS}/db"));
    cur["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("registry.k8s.io/e2e-test-images/agnhost:2.56");
    cur["spec"]["minReadySeconds"] = json!(5);
    let (code, v) = http(
        &r,
        "PUT",
        &format!("{STS}/db"),
        "application/json",
        &cur.to_string(),
    );
    assert_eq!(code, 200, "{v}");
    r.advance(120_000);
    let (_, p) = get_json(&r, "/api/v1/namespaces/default/pods/db-0");
    assert_eq!(
        p["spec"]["containers"][0]["image"],
        "registry.k8s.io/e2e-test-images/agnhost:2.56"
    );
    assert_eq!(read(&r).spec.and_then(|s| s.min_ready_seconds), Some(5));

    // Fields ValidateStatefulSetUpdate keeps immutable: 422.
    for (field, value) in [
        ("serviceName", json!("other")),
        ("podManagementPolicy", json!("Parallel")),
    ] {
        let (_, mut cur) = get_json(&r, &format!("{STS}/db"));
        cur["spec"][field] = value;
        let (code, body) = http(
            &r,
            "PUT",
            &format!("{STS}/db"),
            "application/json",
            &cur.to_string(),
        );
        assert_eq!(code, 422, "{field}: {body}");
        assert!(
            body.contains("updates to statefulset spec for fields other than"),
            "{field}: {body}"
        );
    }

    // Deleted, its pods go with it.
    let (code, v) = http(&r, "DELETE", &format!("{STS}/db"), "application/json", "");
    assert_eq!(code, 200, "{v}");
    r.advance(60_000);
    assert_eq!(get_json(&r, &format!("{STS}/db")).0, 404);
    assert!(pods(&r).is_empty(), "{:?}", pods(&r));
}

#[test]
fn stateful_sets_in_protobuf_and_watched_in_json_and_protobuf() {
    use k8s_pb::api::apps::v1 as apps;
    let r = start(0.0);
    // A JSON watch from the start sees the StatefulSet created.
    let (_, list) = get_json(&r, STS);
    let rv = list["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let json_watch = watch(&r, &rv, "application/json");
    created(&r, 2);
    let (head, body) = answer(json_watch);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    let events: Vec<Value> = String::from_utf8_lossy(&body)
        .lines()
        .filter_map(|l| serde_json::from_str(l.trim()).ok())
        .collect();
    let added = events
        .iter()
        .find(|e| e["type"] == "ADDED")
        .unwrap_or_else(|| panic!("{events:?}"));
    let s: StatefulSet = serde_json::from_value(added["object"].clone()).expect("a StatefulSet");
    assert_eq!(s.metadata.name.as_deref(), Some("db"));

    // The list in protobuf: the JSON list's StatefulSet, field by field.
    let (_, json) = get_json(&r, STS);
    let (code, ct, body) = exchange(&r, "GET", STS, PREFERS_PROTOBUF, b"");
    assert_eq!((code, ct.as_str()), (200, PROTOBUF));
    let (kind, raw) = unwrap_envelope(&body);
    assert_eq!(kind, ("apps/v1".to_string(), "StatefulSetList".to_string()));
    let list = apps::StatefulSetList::decode(raw.as_slice()).expect("StatefulSetList");
    assert_eq!(list.items.len(), 1);
    let item = &list.items[0];
    let want = &json["items"][0];
    let spec = item.spec.as_ref().expect("spec");
    let status = item.status.as_ref().expect("status");
    assert_eq!(item.metadata.as_ref().and_then(|m| m.name.as_deref()), Some("db"));
    assert_eq!(spec.replicas, Some(2));
    assert_eq!(spec.service_name.as_deref(), want["spec"]["serviceName"].as_str());
    assert_eq!(
        spec.update_strategy
            .as_ref()
            .and_then(|u| u.rolling_update.as_ref())
            .and_then(|u| u.partition),
        Some(0)
    );
    assert_eq!(status.ready_replicas, Some(2));
    assert_eq!(
        status.update_revision.as_deref(),
        want["status"]["updateRevision"].as_str()
    );

    // A protobuf watch from the list sees the scale-up as MODIFIED StatefulSets.
    let rv = json["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let pb_watch = watch(&r, &rv, PREFERS_PROTOBUF);
    std::thread::sleep(Duration::from_millis(300));
    let (code, v) = http(
        &r,
        "PATCH",
        &format!("{STS}/db"),
        "application/merge-patch+json",
        r#"{"spec":{"replicas":3}}"#,
    );
    assert_eq!(code, 200, "{v}");
    let (head, body) = answer(pb_watch);
    assert!(head.to_ascii_lowercase().contains(";stream=watch"), "{head}");
    let frames = watch_frames(&body);
    let modified: Vec<i32> = frames
        .iter()
        .filter(|(t, k, _)| t == "MODIFIED" && k.1 == "StatefulSet")
        .filter_map(|(_, _, raw)| apps::StatefulSet::decode(raw.as_slice()).ok())
        .filter_map(|s| s.spec.and_then(|s| s.replicas))
        .collect();
    assert_eq!(modified, [3], "{frames:?}");
}

/// A watch of the StatefulSets from `rv` for 2 s, answered in `accept`.
fn watch(r: &Running, rv: &str, accept: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let head = format!(
        "GET {STS}?watch=1&resourceVersion={rv}&timeoutSeconds=2 HTTP/1.0\r\nHost: localhost\r\nAccept: {accept}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).expect("write");
    s
}

#[test]
fn max_unavailable_is_dropped_and_not_defaulted_with_the_gate_off() {
    let topology = Topology::builtin("three-zones").expect("built-in topology");
    let config = SimConfig {
        feature_gates: locality_model::featuregate::FeatureGates::from_flags(&[
            "MaxUnavailableStatefulSet=false",
        ])
        .unwrap(),
        ..SimConfig::default()
    };
    let opts = ServeOptions::from_topology(&topology, config).expect("engine");
    let r = locality_apiserver::serve(opts).expect("serve");
    let mut body = db(1);
    body["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}});
    let (code, v) = http(&r, "POST", STS, "application/json", &body.to_string());
    assert_eq!(code, 201, "{v}");
    let rolling = read(&r)
        .spec
        .and_then(|s| s.update_strategy)
        .and_then(|u| u.rolling_update)
        .expect("rollingUpdate");
    assert_eq!((rolling.partition, rolling.max_unavailable), (Some(0), None));
}

/// `minReadySeconds` of a Deployment, a DaemonSet and a StatefulSet: kept in the spec, and
/// their pods count in `availableReplicas` / `numberAvailable` only once Ready that long
/// (`IsPodAvailable`), while `readyReplicas` / `numberReady` count them at once.
#[test]
fn min_ready_seconds_hold_back_the_available_count_of_every_workload() {
    let r = start(0.0);
    let container = json!([{"name": "netexec", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                            "args": ["netexec", "--http-port=8080"]}]);
    let spec = |app: &str| {
        json!({"minReadySeconds": 30, "selector": {"matchLabels": {"app": app}},
               "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": container}}})
    };
    let mut sts = spec("slow-db");
    sts["replicas"] = json!(1);
    sts["serviceName"] = json!("slow-db");
    let mut deploy = spec("slow-web");
    deploy["replicas"] = json!(1);
    let objects = [
        (
            "deployments",
            "Deployment",
            deploy,
            "readyReplicas",
            "availableReplicas",
        ),
        (
            "daemonsets",
            "DaemonSet",
            spec("slow-agent"),
            "numberReady",
            "numberAvailable",
        ),
        (
            "statefulsets",
            "StatefulSet",
            sts,
            "readyReplicas",
            "availableReplicas",
        ),
    ];
    for (plural, kind, spec, _, _) in &objects {
        let body = json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "slow"}, "spec": spec});
        let path = format!("/apis/apps/v1/namespaces/default/{plural}");
        let (code, text) = http(&r, "POST", &path, "application/json", &body.to_string());
        assert_eq!(code, 201, "{kind}: {text}");
    }
    let counts = |r: &Running| -> Vec<(u64, u64)> {
        objects
            .iter()
            .map(|(plural, kind, _, ready, available)| {
                let (_, v) = get_json(r, &format!("/apis/apps/v1/namespaces/default/{plural}/slow"));
                assert_eq!(v["spec"]["minReadySeconds"], 30, "{kind}: {v}");
                let n = |k: &str| v["status"][k].as_u64().unwrap_or(0);
                (n(ready).min(1), n(available).min(1))
            })
            .collect()
    };
    // Ready within seconds, available only 30 s later.
    r.advance(15_000);
    assert_eq!(counts(&r), [(1, 0); 3]);
    r.advance(30_000);
    assert_eq!(counts(&r), [(1, 1); 3]);
}
