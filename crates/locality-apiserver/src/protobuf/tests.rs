//! Protobuf decoding: the bodies kubectl 1.32 and 1.33 send (captured once; their bytes are
//! identical) against the JSON kubectl 1.31 sends for the same command, and bodies encoded
//! here from JSON through the schema (the encoder of the server's protobuf answers) that must
//! decode back to it.

use serde_json::{Value, json};

use super::encode::{field_bytes, field_varint};
use super::schema::{Card, Schema};
use super::{MAGIC, to_json, wire};

macro_rules! fixture {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/protobuf/",
                $name,
                ".kubectl-1.32-1.33.pb"
            ))
            .as_slice(),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/protobuf/",
                $name,
                ".kubectl-1.31.json"
            )),
        )
    };
}

/// (name, kubectl 1.32/1.33 protobuf body, kubectl 1.31 JSON body) of the same commands:
/// `create namespace fixture`, `create deployment web --image=… --replicas=0 --port=8080 --
/// /agnhost netexec`, `create service nodeport web --tcp=80:http --node-port=30080`, `create
/// configmap settings --from-literal=a=b`, `create secret generic token --from-literal=a=b`,
/// `create job once --image=busybox -- echo hi`, `create pdb web --selector=app=web
/// --max-unavailable=25%`, `create quota small --hard=pods=3,cpu=500m,memory=1Gi`, `create
/// serviceaccount robot`, and the `DeleteOptions` of `drain --grace-period=0`.
const FIXTURES: &[(&str, &[u8], &str)] = &[
    fixture!("namespace"),
    fixture!("deployment"),
    fixture!("service"),
    fixture!("configmap"),
    fixture!("secret"),
    fixture!("job"),
    fixture!("pdb"),
    fixture!("quota"),
    fixture!("serviceaccount"),
    fixture!("deleteoptions"),
];

/// Where `got` differs from `want`: `(path, got, want)`.
fn diff(path: &str, got: &Value, want: &Value, out: &mut Vec<(String, Value, Value)>) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for k in g.keys().chain(w.keys().filter(|k| !g.contains_key(*k))) {
                let (gv, wv) = (g.get(k).unwrap_or(&Value::Null), w.get(k).unwrap_or(&Value::Null));
                if g.contains_key(k) != w.contains_key(k) && (gv.is_null() || wv.is_null()) {
                    out.push((format!("{path}.{k}"), gv.clone(), wv.clone()));
                } else {
                    diff(&format!("{path}.{k}"), gv, wv, out);
                }
            }
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => {
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                diff(&format!("{path}[{i}]"), g, w, out);
            }
        }
        _ if got != want => out.push((path.to_string(), got.clone(), want.clone())),
        _ => {}
    }
}

#[test]
fn kubectl_protobuf_bodies_decode_to_the_json_kubectl_1_31_sends() {
    for (name, pb, json) in FIXTURES {
        let want: Value = serde_json::from_str(json).unwrap();
        let expected = (
            want["apiVersion"].as_str().unwrap(),
            want["kind"].as_str().unwrap(),
        );
        let got = to_json(pb, expected).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let mut d = Vec::new();
        diff("", &got, &want, &mut d);
        // The only differences: zero numbers and `false` of non-pointer fields, which upstream's
        // Marshal writes and Go's JSON `omitempty` leaves out (see the module docs).
        let unexpected: Vec<_> = d
            .iter()
            .filter(|(_, g, w)| !(w.is_null() && (g == &json!(0) || g == &json!(false))))
            .collect();
        assert!(unexpected.is_empty(), "{name}: {unexpected:#?}\ndecoded: {got:#}");
    }
}

#[test]
fn kubectl_bodies_keep_explicit_zeros_and_read_special_types() {
    let decode = |name: &str| {
        let (_, pb, json) = FIXTURES.iter().find(|f| f.0 == name).unwrap();
        let want: Value = serde_json::from_str(json).unwrap();
        to_json(
            pb,
            (
                want["apiVersion"].as_str().unwrap(),
                want["kind"].as_str().unwrap(),
            ),
        )
        .unwrap()
    };
    let deploy = decode("deployment");
    assert_eq!(deploy["spec"]["replicas"], json!(0), "a pointer's zero is kept");
    assert_eq!(
        deploy["metadata"]["creationTimestamp"],
        Value::Null,
        "a zero Time is null"
    );
    assert!(
        deploy["metadata"].get("namespace").is_none(),
        "empty strings are dropped"
    );
    assert_eq!(decode("deleteoptions")["gracePeriodSeconds"], json!(0));
    let svc = decode("service");
    assert_eq!(
        svc["spec"]["ports"][0]["targetPort"],
        json!("http"),
        "IntOrString string"
    );
    assert_eq!(svc["spec"]["ports"][0]["nodePort"], json!(30080));
    assert_eq!(decode("pdb")["spec"]["maxUnavailable"], json!("25%"));
    assert_eq!(
        decode("quota")["spec"]["hard"],
        json!({"cpu": "500m", "memory": "1Gi", "pods": "3"}),
        "Quantity maps"
    );
    assert_eq!(decode("secret")["data"], json!({"a": "Yg=="}), "bytes are base64");
}

#[test]
fn every_list_has_its_items_under_the_json_name_items() {
    // Upstream's `Items []T json:"items"` on every `*List`; the generator's doc-comment
    // fallback once named them `Items` ("Items is the list of …"), so those lists encoded
    // no items.
    let schema = Schema::parse(super::schema::SCHEMA).unwrap();
    let mut lists = 0;
    for m in schema.messages.iter().filter(|m| m.name.ends_with("List")) {
        if let Some(f) = m.fields.iter().find(|f| f.json.eq_ignore_ascii_case("items")) {
            assert_eq!(f.json, "items", "{}", m.name);
            lists += 1;
        }
    }
    assert!(lists >= 30, "{lists}");
}

#[test]
fn the_schema_has_the_kinds_the_server_and_kubectl_use() {
    let schema = Schema::parse(super::schema::SCHEMA).unwrap();
    for (api, kind) in [
        ("v1", "Namespace"),
        ("v1", "Pod"),
        ("v1", "Service"),
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "ServiceAccount"),
        ("v1", "Node"),
        ("v1", "Endpoints"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("discovery.k8s.io/v1", "EndpointSlice"),
        ("batch/v1", "Job"),
        ("policy/v1", "PodDisruptionBudget"),
        ("policy/v1", "Eviction"),
        ("autoscaling/v1", "Scale"),
        ("v1", "DeleteOptions"),
        ("apps/v1", "DeleteOptions"),
    ] {
        assert!(schema.kind(api, kind).is_some(), "{api} {kind}");
    }
    assert!(schema.kinds().count() >= 40);
    let probe = &schema.messages[schema.message("k8s.io.api.core.v1.Probe").unwrap()];
    assert_eq!(
        probe.field(1).unwrap().card,
        Card::Inline,
        "a probe's handler is inline"
    );
    let spec = &schema.messages[schema.message("k8s.io.api.core.v1.PodStatus").unwrap()];
    assert_eq!(
        spec.field(12).unwrap().json,
        "podIPs",
        "JSON names, not snake_case"
    );
    assert!(
        Schema::parse("message a\n1 x opt b\n").is_err(),
        "unknown message"
    );
    assert!(
        Schema::parse("1 x opt string\n").is_err(),
        "field outside a message"
    );
}

/// The envelope of `v` (its own `apiVersion` and `kind`), written by the server's encoder.
fn envelope(v: &Value) -> Vec<u8> {
    super::envelope(v)
        .expect("a kind of the schema")
        .expect("the object fits its message")
}

fn round_trip(v: Value) {
    let kind = (v["apiVersion"].as_str().unwrap(), v["kind"].as_str().unwrap());
    let got = to_json(&envelope(&v), kind).unwrap();
    assert_eq!(got, v, "decoded:\n{got:#}\nsent:\n{v:#}");
}

#[test]
fn a_deployment_with_int_or_string_quantities_probes_and_volumes_round_trips() {
    round_trip(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web", "empty": ""},
                     "creationTimestamp": "2025-03-04T05:06:07Z"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{
                        "name": "app", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                        "args": ["netexec", "--http-port=8080", ""],
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                      "limits": {"cpu": "1", "memory": "128Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"},
                                           "periodSeconds": 5, "failureThreshold": 1},
                        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": true}]
                    }],
                    "volumes": [{"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}}],
                    "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                     "effect": "NoExecute", "tolerationSeconds": 0}]
                }
            }
        }
    }));
}

#[test]
fn services_pods_endpoint_slices_and_nodes_round_trip() {
    round_trip(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"type": "NodePort", "selector": {"app": "web"}, "clusterIPs": ["10.96.0.10"],
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080, "nodePort": 30080}],
                 "internalTrafficPolicy": "Local", "trafficDistribution": "PreferClose",
                 "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}}
    }));
    round_trip(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                          "uid": "u1", "controller": true, "blockOwnerDeletion": false}]},
        "spec": {"nodeName": "node-a", "hostNetwork": true,
                 "containers": [{"name": "c", "image": "x",
                                 "livenessProbe": {"tcpSocket": {"port": 8080}},
                                 "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}}],
                 "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                     "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                              "values": ["node-a"]}]}]}}}},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.244.1.2"}],
                   "startTime": "2025-01-01T00:00:00Z"}
    }));
    round_trip(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "namespace": "default",
                     "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.1.2"], "nodeName": "node-a", "zone": "a",
                       "conditions": {"ready": false, "serving": true, "terminating": true},
                       "hints": {"forZones": [{"name": "a"}]}}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]
    }));
    round_trip(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-a", "labels": {"topology.kubernetes.io/zone": "a"}},
        "spec": {"podCIDR": "10.244.1.0/24", "unschedulable": true,
                 "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "pods": "110"},
                   "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}
    }));
}

#[test]
fn unknown_kinds_are_415_and_broken_bodies_400() {
    let mut type_meta = Vec::new();
    field_bytes(&mut type_meta, 1, b"example.com/v1");
    field_bytes(&mut type_meta, 2, b"Widget");
    let mut body = MAGIC.to_vec();
    field_bytes(&mut body, 1, &type_meta);
    field_bytes(&mut body, 2, b"");
    let e = to_json(&body, ("v1", "Namespace")).unwrap_err();
    assert_eq!((e.code, e.reason), (415, "UnsupportedMediaType"));
    assert!(
        e.message.contains("kind Widget (apiVersion example.com/v1)"),
        "{}",
        e.message
    );

    let e = to_json(br#"{"kind":"Namespace"}"#, ("v1", "Namespace")).unwrap_err();
    assert_eq!(e.code, 400);
    assert!(
        e.message.contains("does not appear to be a protobuf message"),
        "{}",
        e.message
    );
    assert_eq!(to_json(MAGIC, ("v1", "Namespace")).unwrap_err().code, 400);
    let ns = envelope(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}));
    assert_eq!(
        to_json(&ns[..ns.len() - 6], ("v1", "Namespace"))
            .unwrap_err()
            .code,
        400,
        "truncated"
    );
}

#[test]
fn envelopes_without_a_kind_take_the_requests() {
    let schema = Schema::get();
    let m = schema.kind("v1", "Namespace").unwrap();
    let mut body = MAGIC.to_vec();
    field_bytes(&mut body, 1, b"");
    field_bytes(
        &mut body,
        2,
        &super::encode::encode(schema, m, &json!({"metadata": {"name": "x"}})).unwrap(),
    );
    assert_eq!(
        to_json(&body, ("v1", "Namespace")).unwrap(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
    );
}

#[test]
fn wire_details() {
    let schema = Schema::get();
    let m = schema.kind("v1", "Namespace").unwrap();
    let mut meta = Vec::new();
    field_bytes(&mut meta, 1, b"x");
    field_bytes(&mut meta, 999, b"a field this schema does not know");
    field_varint(&mut meta, 7, 5); // generation
    field_bytes(&mut meta, 5, b""); // uid: empty, dropped
    let mut ns = Vec::new();
    field_bytes(&mut ns, 1, &meta);
    let v = wire::decode(schema, m, &ns).unwrap();
    assert_eq!(v, json!({"metadata": {"name": "x", "generation": 5}}));
    // A negative int32 is a 10-byte varint.
    let cond = schema
        .message("k8s.io.api.core.v1.ContainerStateTerminated")
        .unwrap();
    let mut t = Vec::new();
    field_varint(&mut t, 1, -1);
    assert_eq!(wire::decode(schema, cond, &t).unwrap(), json!({"exitCode": -1}));
    // A string field sent as a varint is an error naming the field.
    let mut bad = Vec::new();
    field_varint(&mut bad, 1, 3);
    let e = wire::decode(schema, m, &bad).unwrap_err();
    assert!(e.contains("Namespace.metadata"), "{e}");
    assert_eq!(wire::base64(b""), "");
    assert_eq!(wire::base64(b"b"), "Yg==");
    assert_eq!(wire::base64(b"hello!"), "aGVsbG8h");
    assert_eq!(wire::base64(b"hi"), "aGk=");
}

#[test]
fn times_and_durations() {
    assert_eq!(wire::rfc3339(0, 1, false), "1970-01-01T00:00:00Z");
    assert_eq!(wire::rfc3339(1_735_689_600, 0, false), "2025-01-01T00:00:00Z");
    assert_eq!(wire::rfc3339(951_782_400, 0, false), "2000-02-29T00:00:00Z");
    assert_eq!(
        wire::rfc3339(1_735_689_661, 123_456_789, true),
        "2025-01-01T00:01:01.123456Z"
    );
    for (ns, s) in [
        (0, "0s"),
        (999, "999ns"),
        (1_500, "1.5µs"),
        (1_500_000, "1.5ms"),
        (1_000_000_000, "1s"),
        (90_500_000_000, "1m30.5s"),
        (3_600_000_000_000, "1h0m0s"),
        (-61_000_000_000, "-1m1s"),
    ] {
        assert_eq!(wire::go_duration(ns), s);
    }
    let t = Schema::get()
        .message("k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime")
        .unwrap();
    let mut b = Vec::new();
    field_varint(&mut b, 1, 1_735_689_600);
    field_varint(&mut b, 2, 5_000);
    assert_eq!(
        wire::decode(Schema::get(), t, &b).unwrap(),
        json!("2025-01-01T00:00:00.000005Z")
    );
    assert_eq!(wire::decode(Schema::get(), t, &[]).unwrap(), Value::Null);
}

#[test]
fn zero_probe_settings_sent_by_protobuf_clients_take_the_defaults() {
    // A non-pointer zero arrives as sent (see the module docs); SetDefaults_Probe makes it the
    // default.
    let b = crate::decode::behaviour(&json!({"containers": [{"name": "c", "readinessProbe": {
        "httpGet": {"path": "/", "port": 8080}, "periodSeconds": 0, "failureThreshold": 0,
        "initialDelaySeconds": 0}}]}));
    let p = b.readiness.expect("a readiness probe");
    assert_eq!(
        (p.period_seconds, p.failure_threshold, p.initial_delay_seconds),
        (10, 3, 0)
    );
}
