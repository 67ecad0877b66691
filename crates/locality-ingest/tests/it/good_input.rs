//! Inputs that must load, and what they load into.

use std::net::IpAddr;
use std::path::PathBuf;

use locality_ingest::{LoadOptions, Loaded, load_bytes, load_paths, locate};
use locality_model::objects::{
    AddressType, IpFamily, PodManagementPolicy, PodPhase, Protocol, ServiceType, TargetPort, TrafficPolicy,
    WorkloadKind,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn load(name: &str, text: &str) -> Loaded {
    match load_bytes(name, text.as_bytes(), &LoadOptions::default()) {
        Ok(l) => l,
        Err(e) => panic!("{name} should load: {e}"),
    }
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test IP")
}

#[test]
fn kubectl_list_json() {
    let path = fixture("kubectl-list.json");
    let l = load_paths(&[&path], &LoadOptions::default()).expect("loads");
    let s = &l.state;
    assert_eq!(
        (
            s.nodes.len(),
            s.pods.len(),
            s.services.len(),
            s.endpoint_slices.len()
        ),
        (1, 1, 1, 1)
    );
    assert_eq!((s.workloads.len(), s.namespaces.len()), (2, 1));
    assert_eq!(l.skipped_kinds.get("ConfigMap"), Some(&1));
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);

    let n = &s.nodes[0];
    assert_eq!(n.meta.name, "node-a");
    assert_eq!(n.zone(), Some("zone-a"));
    assert_eq!(n.ready, Some(true));
    assert_eq!(n.allocatable_cpu_millis, Some(3950));
    assert_eq!(n.internal_ips, vec![ip("172.18.0.2"), ip("fd00::2")]);
    assert_eq!(n.kubelet_version.as_deref(), Some("v1.35.1"));
    assert_eq!(n.taints.len(), 1);
    assert_eq!(n.taints[0].effect, "NoSchedule");
    assert!(n.meta.annotations.is_empty(), "unread annotations are dropped");
    assert_eq!(n.meta.origin.item, Some(0));
    assert_eq!(n.meta.uid, "6c0e1c9e-8f5b-4c55-9f4e-1a2b3c4d5e6f");

    let p = &s.pods[0];
    assert_eq!(p.meta.namespace, "default");
    assert_eq!(p.phase, PodPhase::Running);
    assert!(p.ready);
    assert_eq!(p.pod_ips, vec![ip("10.244.0.5"), ip("fd00:10:244::5")]);
    assert_eq!(p.spec.node_name, "node-a");
    assert_eq!(
        p.spec.ports.len(),
        2,
        "app container + sidecar, not the plain init container"
    );
    assert_eq!(p.spec.ports[0].name, "http");
    assert_eq!(p.spec.ports[1].host_port, Some(9901));
    assert_eq!(p.spec.tolerations[0].operator, "Exists");
    assert_eq!(p.spec.tolerations[0].toleration_seconds, Some(300));
    assert_eq!(
        p.spec.required_node_affinity[0].match_fields[0].values,
        vec!["node-a"]
    );
    assert_eq!(p.meta.owner_references[0].kind, "ReplicaSet");
    assert!(p.meta.owner_references[0].controller);

    let svc = &s.services[0];
    assert_eq!(svc.type_, ServiceType::LoadBalancer);
    assert_eq!(svc.cluster_ips, vec![ip("10.96.0.10"), ip("fd00:10:96::a")]);
    assert_eq!(svc.ip_families, vec![IpFamily::IPv4, IpFamily::IPv6]);
    assert_eq!(svc.internal_traffic_policy, Some(TrafficPolicy::Local));
    assert_eq!(svc.external_traffic_policy, Some(TrafficPolicy::Local));
    assert_eq!(svc.traffic_distribution.as_deref(), Some("PreferSameNode"));
    assert_eq!(svc.ports[0].target_port, TargetPort::Name("http".into()));
    assert_eq!(svc.ports[0].node_port, 30080);
    assert_eq!(svc.ports[1].protocol, Protocol::UDP);
    assert_eq!(
        svc.ports[1].target_port,
        TargetPort::Number(53),
        "targetPort defaults to port"
    );
    assert_eq!(svc.external_ips, vec![ip("192.0.2.10")]);
    assert_eq!(svc.load_balancer_source_ranges, vec!["203.0.113.0/24"]);
    assert_eq!(svc.load_balancer_ingress[0].ip, Some(ip("198.51.100.7")));
    assert_eq!(svc.load_balancer_ingress[0].ip_mode.as_deref(), Some("VIP"));
    assert_eq!(
        svc.load_balancer_ingress[1].hostname.as_deref(),
        Some("lb.example.com")
    );
    assert_eq!(
        svc.meta.annotations.len(),
        1,
        "only kept annotations: {:?}",
        svc.meta.annotations
    );
    assert_eq!(
        svc.selector
            .as_ref()
            .and_then(|s| s.get("app"))
            .map(String::as_str),
        Some("web")
    );

    let es = &s.endpoint_slices[0];
    assert_eq!(es.address_type, AddressType::IPv4);
    assert_eq!(es.service_name(), Some("web"));
    assert!(es.is_controller_managed());
    assert_eq!(es.endpoints[0].addresses, vec![ip("10.244.0.5")]);
    assert_eq!(es.endpoints[0].conditions.ready, Some(true));
    assert_eq!(es.endpoints[1].conditions.ready, None);
    assert_eq!(es.endpoints[1].conditions.terminating, Some(true));
    let hints = es.endpoints[0].hints.as_ref().expect("hints");
    assert_eq!(hints.for_nodes, vec!["node-a"]);
    assert_eq!(hints.for_zones, vec!["zone-a"]);
    assert_eq!(es.endpoints[0].zone.as_deref(), Some("zone-a"));
    assert_eq!(
        es.endpoints[0].target_ref,
        Some(("Pod".into(), "default".into(), "web-7d9c6b5f4-abcde".into()))
    );
    assert_eq!(es.ports[1].name.as_deref(), Some("dns"));
    assert_eq!(es.ports[1].port, Some(53));
    assert_eq!(es.ports[1].protocol, Some(Protocol::UDP));

    let d = s
        .workloads
        .iter()
        .find(|w| w.kind == WorkloadKind::Deployment)
        .expect("deployment");
    assert_eq!(d.replicas, Some(3));
    assert_eq!(d.max_surge.as_deref(), Some("25%"));
    assert_eq!(d.max_unavailable.as_deref(), Some("0"));
    assert_eq!(d.update_strategy.as_deref(), Some("RollingUpdate"));
    assert_eq!(d.selector.match_expressions[0].operator, "NotIn");
    assert_eq!(d.template.ports[0].container_port, 8080);
    let ds = s
        .workloads
        .iter()
        .find(|w| w.kind == WorkloadKind::DaemonSet)
        .expect("daemonset");
    assert_eq!(ds.replicas, None);
    assert_eq!(ds.max_surge.as_deref(), Some("1"));
    assert!(ds.template.host_network);

    // locate() finds each item again.
    let bytes = std::fs::read(&path).expect("fixture");
    assert_eq!(locate(&bytes, &s.nodes[0].meta.origin), Some((4, 9)));
    assert_eq!(locate(&bytes, &s.endpoint_slices[0].meta.origin), Some((152, 9)));
}

#[test]
fn multi_document_yaml_with_comments_and_octal() {
    let l = load_paths(&[fixture("multi-doc.yaml")], &LoadOptions::default()).expect("loads");
    let s = &l.state;
    assert_eq!((s.nodes.len(), s.pods.len(), s.services.len()), (1, 1, 1));
    assert_eq!(s.nodes[0].allocatable_cpu_millis, Some(2000));
    assert_eq!(s.nodes[0].zone(), Some("zone-b"));
    assert!(s.pods[0].spec.host_network, "YAML 1.1 `yes`");
    assert_eq!(s.pods[0].spec.ports[0].host_port, Some(9100));
    assert_eq!(s.pods[0].pod_ips, vec![ip("172.18.0.3")]);
    let svc = &s.services[0];
    assert!(svc.headless);
    assert!(svc.cluster_ips.is_empty());
    assert_eq!(svc.meta.annotations.len(), 1);
    // Origins: document index among non-empty documents, line of the document's start.
    assert_eq!(s.nodes[0].meta.origin.document, 0);
    assert_eq!(
        (s.nodes[0].meta.origin.line, s.nodes[0].meta.origin.column),
        (3, 1)
    );
    assert_eq!(s.pods[0].meta.origin.document, 1);
    assert_eq!(s.pods[0].meta.origin.line, 18);
    let bytes = std::fs::read(fixture("multi-doc.yaml")).expect("fixture");
    assert_eq!(locate(&bytes, &s.services[0].meta.origin), Some((44, 1)));
}

#[test]
fn yaml_octal_is_read_as_kubectl_reads_it() {
    let l = load(
        "ports.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports:\n  - port: 0100\n",
    );
    assert_eq!(l.state.services[0].ports[0].port, 64);
}

#[test]
fn typed_lists_default_the_item_kind() {
    let l = load_paths(&[fixture("podlist.yaml")], &LoadOptions::default()).expect("loads");
    assert_eq!(l.state.pods.len(), 2);
    assert_eq!(l.state.pods[1].phase, PodPhase::Succeeded);
    assert_eq!(l.state.pods[0].meta.origin.item, Some(0));
    let bytes = std::fs::read(fixture("podlist.yaml")).expect("fixture");
    assert_eq!(locate(&bytes, &l.state.pods[1].meta.origin), Some((13, 3)));

    let json = r#"{"kind":"ServiceList","apiVersion":"v1","metadata":{},"items":[
        {"metadata":{"name":"a","namespace":"n"},"spec":{"ports":[{"port":80}]}}]}"#;
    let l = load("svc.json", json);
    assert_eq!(l.state.services[0].meta.name, "a");
}

#[test]
fn unknown_fields_and_kinds() {
    let json = r#"[
      {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","extra":{"deep":[1,2,{"x":null}]}},
       "spec":{"unknownField":true,"containers":[{"name":"c","futureField":[1]}]},"somethingNew":1},
      {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"ports":"not checked"}},
      {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}},
      {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"}}
    ]"#;
    let l = load("mixed.json", json);
    assert_eq!(l.state.pods.len(), 1);
    assert_eq!(l.skipped_kinds.get("Widget"), Some(&1));
    assert_eq!(l.skipped_kinds.get("ConfigMap"), Some(&2));
    assert_eq!(l.state.pods[0].phase, PodPhase::Unknown);
}

#[test]
fn directory_tree_sorted_and_filtered() {
    let l = load_paths(&[fixture("tree")], &LoadOptions::default()).expect("loads");
    assert_eq!(l.files.len(), 2, "{:?}", l.files);
    assert!(l.files[0].ends_with("a-nodes.json"));
    assert!(l.files[1].ends_with("b-svc.yml"));
    assert_eq!(l.state.nodes[0].meta.name, "node-c");
    assert_eq!(
        l.state.services[0].internal_traffic_policy,
        Some(TrafficPolicy::Local)
    );
    assert!(l.bytes_read > 0);
}

#[test]
fn crlf_and_bom() {
    let yaml = "\u{feff}apiVersion: v1\r\nkind: Node\r\nmetadata:\r\n  name: n1\r\n---\r\napiVersion: v1\r\nkind: Node\r\nmetadata:\r\n  name: n2\r\n";
    let l = load("crlf.yaml", yaml);
    assert_eq!(l.state.nodes.len(), 2);
    assert_eq!(l.state.nodes[1].meta.name, "n2");
    let json = "\u{feff}{\"apiVersion\":\"v1\",\r\n\"kind\":\"Node\",\r\n\"metadata\":{\"name\":\"n\"}}\r\n";
    assert_eq!(load("bom.json", json).state.nodes[0].meta.name, "n");
}

#[test]
fn endpoint_slice_with_null_endpoints_and_kind_last() {
    let json = r#"{"addressType":"IPv6","endpoints":null,"ports":null,
        "metadata":{"name":"s-1","namespace":"n","labels":{"kubernetes.io/service-name":"s"}},
        "kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1"}"#;
    let l = load("es.json", json);
    let es = &l.state.endpoint_slices[0];
    assert!(es.endpoints.is_empty());
    assert_eq!(es.address_type, AddressType::IPv6);

    // Everything before `kind` is buffered and decoded after.
    let json = r#"{"endpoints":[{"addresses":["fd00::1"],"conditions":{"ready":false},"zone":"z"}],
        "ports":[{"port":80}],"addressType":"IPv6","metadata":{"name":"s-2","namespace":"n"},
        "apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice"}"#;
    let l = load("es2.json", json);
    let es = &l.state.endpoint_slices[0];
    assert_eq!(es.endpoints[0].addresses, vec![ip("fd00::1")]);
    assert_eq!(es.endpoints[0].conditions.ready, Some(false));
    assert_eq!(es.ports[0].port, Some(80));
    assert_eq!(es.ports[0].name, None);
}

#[test]
fn spec_before_kind_in_yaml() {
    let yaml = "spec:\n  ports:\n  - port: 80\n    targetPort: 8080\nstatus: {}\nmetadata: {name: s, namespace: n}\nkind: Service\napiVersion: v1\n";
    let l = load("late-kind.yaml", yaml);
    assert_eq!(l.state.services[0].ports[0].target_port, TargetPort::Number(8080));
}

#[test]
fn v1beta1_endpoint_slice_topology() {
    let yaml = "apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: IPv4\nendpoints:\n- addresses: [10.0.0.1]\n  topology:\n    topology.kubernetes.io/zone: zone-a\n    kubernetes.io/hostname: node-a\n";
    let l = load("beta.yaml", yaml);
    let e = &l.state.endpoint_slices[0].endpoints[0];
    assert_eq!(e.zone.as_deref(), Some("zone-a"));
    assert_eq!(e.node_name.as_deref(), Some("node-a"));
}

#[test]
fn fqdn_slices_keep_no_addresses() {
    let yaml = "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: FQDN\nendpoints:\n- addresses: [db.example.com]\n";
    let l = load("fqdn.yaml", yaml);
    assert_eq!(l.state.endpoint_slices[0].address_type, AddressType::Fqdn);
    assert!(l.state.endpoint_slices[0].endpoints[0].addresses.is_empty());
}

#[test]
fn quantities_and_warnings() {
    let json = r#"{"apiVersion":"v1","kind":"List","items":[
      {"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"status":{"allocatable":{"cpu":"0.5"}}},
      {"apiVersion":"v1","kind":"Node","metadata":{"name":"b"},"status":{"allocatable":{"cpu":"lots"}}}]}"#;
    let l = load("q.json", json);
    assert_eq!(l.state.nodes[0].allocatable_cpu_millis, Some(500));
    assert_eq!(l.state.nodes[1].allocatable_cpu_millis, None);
    assert_eq!(l.warnings.len(), 1);
    assert!(l.warnings[0].contains("lots"), "{:?}", l.warnings);
}

#[test]
fn empty_list_is_fine() {
    let l = load(
        "empty-list.json",
        r#"{"apiVersion":"v1","items":[],"kind":"List","metadata":{"resourceVersion":""}}"#,
    );
    assert!(l.state.pods.is_empty());
}

#[test]
fn same_name_in_other_namespace_or_kind_is_not_a_duplicate() {
    let yaml = "apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: x}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: y}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: x}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: x}\n---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: a, namespace: x}\n";
    let l = load("ok.yaml", yaml);
    assert_eq!(l.state.services.len(), 2);
    assert_eq!(l.state.workloads.len(), 2);
}

#[test]
fn toleration_seconds_negative_null_and_absent() {
    let l = load(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\nspec:\n  tolerations:\n  - {key: a, operator: Exists, effect: NoExecute, tolerationSeconds: -1}\n  - {key: b, operator: Exists, effect: NoExecute, tolerationSeconds: null}\n  - {key: c, operator: Exists, effect: NoExecute}\n  - {key: d, operator: Exists, effect: NoExecute, tolerationSeconds: 9223372036854775807}\n",
    );
    let seconds: Vec<Option<i64>> = l.state.pods[0]
        .spec
        .tolerations
        .iter()
        .map(|t| t.toleration_seconds)
        .collect();
    assert_eq!(seconds, vec![Some(-1), None, None, Some(i64::MAX)]);
}

/// `spec.sessionAffinity` and `sessionAffinityConfig.clientIP.timeoutSeconds` as written;
/// defaults are the admission step's (`SetDefaults_Service`).
#[test]
fn session_affinity_and_client_ip_timeout() {
    let l = load(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: n}\nspec: {sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {timeoutSeconds: 600}}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b, namespace: n}\nspec: {sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: null}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: c, namespace: n}\nspec: {sessionAffinityConfig: null}\n",
    );
    let read: Vec<(Option<&str>, Option<u32>)> = l
        .state
        .services
        .iter()
        .map(|s| (s.session_affinity.as_deref(), s.session_affinity_timeout_seconds))
        .collect();
    assert_eq!(
        read,
        vec![
            (Some("ClientIP"), Some(600)),
            (Some("ClientIP"), None),
            (None, None)
        ]
    );
    assert_eq!(l.state.services[1].client_ip_affinity_seconds(), Some(10800));
    assert_eq!(l.state.services[2].client_ip_affinity_seconds(), None);
}

#[test]
fn endpoints_core_v1() {
    let yaml = "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: db\n  namespace: n\n  labels: {endpointslice.kubernetes.io/skip-mirror: \"false\"}\n  annotations: {control-plane.alpha.kubernetes.io/leader: \"{}\", other: dropped}\nsubsets:\n- addresses:\n  - ip: 10.0.0.1\n    nodeName: n1\n    hostname: db-0\n    targetRef: {kind: Pod, namespace: n, name: db-0, uid: u-1}\n  - {ip: 010.000.000.002}\n  notReadyAddresses:\n  - {ip: \"fd00::3\", nodeName: \"\"}\n  ports:\n  - {name: sql, port: 5432}\n  - {port: 53, protocol: UDP}\n- addresses: null\n  ports: null\n";
    let l = load("ep.yaml", yaml);
    let ep = &l.state.endpoints[0];
    assert_eq!((ep.meta.namespace.as_str(), ep.meta.name.as_str()), ("n", "db"));
    assert_eq!(ep.meta.labels["endpointslice.kubernetes.io/skip-mirror"], "false");
    assert_eq!(
        ep.meta.annotations.keys().collect::<Vec<_>>(),
        ["control-plane.alpha.kubernetes.io/leader"],
        "the leader-election annotation is kept, others dropped"
    );
    assert_eq!(ep.subsets.len(), 2);
    let s = &ep.subsets[0];
    let a = &s.addresses[0];
    assert_eq!(a.ip, "10.0.0.1");
    assert_eq!(a.node_name.as_deref(), Some("n1"));
    assert_eq!(a.hostname.as_deref(), Some("db-0"));
    assert_eq!(a.target_ref, Some(("Pod".into(), "n".into(), "db-0".into())));
    assert_eq!(a.target_uid, "u-1");
    assert_eq!(
        s.addresses[1].ip, "010.000.000.002",
        "legacy form kept as written"
    );
    assert_eq!(s.not_ready_addresses[0].ip, "fd00::3");
    assert_eq!(s.not_ready_addresses[0].node_name, None);
    assert_eq!((s.ports[0].name.as_str(), s.ports[0].port), ("sql", 5432));
    assert_eq!(s.ports[0].protocol, Protocol::TCP, "protocol defaults to TCP");
    assert_eq!(
        (s.ports[1].name.as_str(), s.ports[1].protocol),
        ("", Protocol::UDP)
    );
    assert!(ep.subsets[1].addresses.is_empty() && ep.subsets[1].ports.is_empty());
    assert_eq!(locate(yaml.as_bytes(), &ep.meta.origin), Some((1, 1)));

    // kubectl's key order puts `subsets` last; buffered when it comes before `kind`, and
    // an EndpointsList's items default their kind.
    let json = r#"{"kind":"EndpointsList","apiVersion":"v1","items":[
        {"subsets":[{"addresses":[{"ip":"192.0.2.7"}],"ports":[{"port":80}]}],"metadata":{"name":"a","namespace":"n"}},
        {"metadata":{"name":"b","namespace":"n"}}]}"#;
    let l = load("eps.json", json);
    assert_eq!(l.state.endpoints.len(), 2);
    assert_eq!(l.state.endpoints[0].subsets[0].addresses[0].ip, "192.0.2.7");
    assert!(l.state.endpoints[1].subsets.is_empty());
    assert!(l.skipped_kinds.is_empty(), "{:?}", l.skipped_kinds);
}

/// `simulate` times rollouts with what a pod spec says about readiness and shutdown: the first
/// readiness probe (its port by name or number), the grace period, and the longest preStop
/// hook (`sleep`, an `exec` of `sleep N`, or an unknown duration).
#[test]
fn readiness_probes_grace_periods_and_pre_stop_hooks_are_read() {
    use locality_model::objects::{PreStop, ProbeHandler, TargetPort};
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"},
      "spec": {"terminationGracePeriodSeconds": 45, "nodeName": "a",
        "containers": [
          {"name": "app", "ports": [{"name": "http", "containerPort": 8080}],
           "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "initialDelaySeconds": 3, "periodSeconds": 2},
           "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 10"]}}}},
          {"name": "sidecar", "readinessProbe": {"tcpSocket": {"port": 9090}},
           "lifecycle": {"preStop": {"sleep": {"seconds": 15}}}}]}}"#;
    let loaded = load_bytes("pod.json", pod.as_bytes(), &LoadOptions::default()).unwrap();
    let l = &loaded.state.pods[0].spec.lifecycle;
    assert_eq!(l.termination_grace_period_seconds, Some(45));
    let probe = l.readiness_probe.as_ref().unwrap();
    assert_eq!(
        probe.handler,
        ProbeHandler::HttpGet {
            path: "/ready".into(),
            port: TargetPort::Name("http".into())
        }
    );
    assert_eq!(
        (probe.initial_delay_seconds, probe.period_seconds),
        (Some(3), Some(2))
    );
    assert_eq!(
        l.pre_stop,
        Some(PreStop::Sleep { seconds: 15 }),
        "the longer hook"
    );
    let unknown = pod.replace(
        r#"{"sleep": {"seconds": 15}}"#,
        r#"{"httpGet": {"path": "/drain", "port": 8080}}"#,
    );
    let loaded = load_bytes("pod.json", unknown.as_bytes(), &LoadOptions::default()).unwrap();
    assert_eq!(
        loaded.state.pods[0].spec.lifecycle.pre_stop,
        Some(PreStop::Unknown {
            handler: "httpGet".into()
        })
    );
}

/// policy/v1 PodDisruptionBudgets, YAML with the spec before the kind and JSON in a List: an
/// integer or percentage `minAvailable`/`maxUnavailable` is kept as written, a null selector
/// is none.
#[test]
fn pod_disruption_budgets() {
    let l = load(
        "pdb.yaml",
        "spec:\n  minAvailable: 1\n  selector:\n    matchLabels: {app: web}\n    matchExpressions:\n    - {key: tier, operator: In, values: [front]}\n  unhealthyPodEvictionPolicy: AlwaysAllow\n\
         kind: PodDisruptionBudget\napiVersion: policy/v1\nmetadata: {name: web, namespace: shop}\n",
    );
    let p = &l.state.pod_disruption_budgets[0];
    assert_eq!((p.meta.namespace.as_str(), p.meta.name.as_str()), ("shop", "web"));
    assert_eq!(p.min_available.as_deref(), Some("1"));
    assert_eq!(p.max_unavailable, None);
    let sel = p.selector.as_ref().expect("selector");
    assert_eq!(sel.match_labels.get("app").map(String::as_str), Some("web"));
    assert_eq!(sel.match_expressions[0].operator, "In");
    assert_eq!(p.unhealthy_pod_eviction_policy.as_deref(), Some("AlwaysAllow"));
    assert!(l.skipped_kinds.is_empty(), "{:?}", l.skipped_kinds);

    let l = load(
        "pdbs.json",
        r#"{"apiVersion":"v1","kind":"List","items":[
            {"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"a","namespace":"x"},
             "spec":{"maxUnavailable":"25%","selector":null}}]}"#,
    );
    let p = &l.state.pod_disruption_budgets[0];
    assert_eq!(p.max_unavailable.as_deref(), Some("25%"));
    assert_eq!(p.selector, None);

    let e = load_bytes(
        "old.yaml",
        b"apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: a}\n",
        &LoadOptions::default(),
    )
    .expect_err("policy/v1beta1 is not served");
    assert!(e.to_string().contains("policy/v1"), "{e}");
}

#[test]
fn stateful_set_rollout_fields() {
    let l = load(
        "sts.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: store}\n\
         spec:\n  replicas: 3\n  minReadySeconds: 10\n  podManagementPolicy: Parallel\n\
         \x20 selector: {matchLabels: {app: db}}\n  template: {metadata: {labels: {app: db}}}\n\
         \x20 updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2, maxUnavailable: 50%}}\n\
         ---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: plain, namespace: store}\n\
         spec: {selector: {matchLabels: {app: p}}}\n",
    );
    let db = &l.state.workloads[0];
    assert_eq!(db.kind, WorkloadKind::StatefulSet);
    assert_eq!(db.min_ready_seconds, 10);
    assert_eq!(db.pod_management_policy, PodManagementPolicy::Parallel);
    assert_eq!(db.partition, Some(2));
    assert_eq!(db.max_unavailable.as_deref(), Some("50%"));
    let plain = &l.state.workloads[1];
    assert_eq!(plain.min_ready_seconds, 0);
    assert_eq!(plain.pod_management_policy, PodManagementPolicy::OrderedReady);
    assert_eq!(plain.partition, None);
}
