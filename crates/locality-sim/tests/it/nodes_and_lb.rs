//! Node failures and load balancers in the **simulated** cluster: a kubelet that stops
//! reporting (node lifecycle controller, taint eviction), a deleted Node (pod GC), and
//! LoadBalancer ingress IPs as connection targets (the simulated cloud load balancer).
//!
//! Timings are those of the simulated controllers (src/nodelifecycle.rs): health passes on
//! multiples of 5 s, `--node-monitor-grace-period` 50 s (1.35), the unreachable taint one pass
//! after the Unknown condition, evictions 300 s after the taint, orphaned pods removed on the
//! pod GC's first 20 s pass after the deletion plus its 40 s quarantine.

use std::collections::BTreeSet;
use std::net::IpAddr;

use locality_model::objects::{
    IpFamily, LoadBalancerIngress, PodSpec, Protocol, ServiceType, TargetPort, Toleration, TrafficPolicy,
    WorkloadKind,
};
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::cloudlb::LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS;
use locality_sim::nodelifecycle::{ReadyConditionTimes, TAINT_NOT_READY, TAINT_UNREACHABLE};
use locality_sim::{
    Client, ConnectError, DataPlaneProfile, Engine, Kind, KubeletState, Object, ObjectKey, Outcome,
    PodBehaviour, SimConfig, Target, Topology,
};

const NS: &str = "default";
const TRIES: usize = 60;

/// three-zones with netexec backends `web-a` (node-a) and `web-b` (node-b) behind the
/// ClusterIP Service `web`, a client pod per node (no readiness probe), profiles per node.
fn cluster(seed: u64, profiles: &[(&str, &str)]) -> Engine {
    let mut e = Engine::new(SimConfig {
        seed,
        ..SimConfig::default()
    });
    for (node, p) in profiles {
        e.set_profile(node, p.parse::<DataPlaneProfile>().unwrap());
    }
    for n in &Topology::builtin("three-zones").unwrap().nodes {
        e.create(Object::Node(n.node.clone())).unwrap();
    }
    for (name, node) in [("web-a", "node-a"), ("web-b", "node-b")] {
        e.create(builders::pod(
            NS,
            name,
            labels(&[("app", "web")]),
            vec![container_port("http", 8080)],
            Some(node),
            netexec_behaviour(8080),
        ))
        .unwrap();
    }
    for node in ["node-a", "node-b", "node-c"] {
        e.create(builders::client_pod(NS, &format!("client-{node}"), node))
            .unwrap();
    }
    e.create(Object::Service(builders::service(
        NS,
        "web",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    )))
    .unwrap();
    e
}

fn node(e: &Engine, name: &str) -> locality_model::objects::Node {
    e.get(&ObjectKey::new(Kind::Node, "", name))
        .unwrap()
        .as_node()
        .unwrap()
        .clone()
}

fn has_taint(e: &Engine, node_name: &str, key: &str) -> bool {
    node(e, node_name)
        .taints
        .iter()
        .any(|t| t.key == key && t.effect == "NoExecute")
}

fn pod(e: &Engine, name: &str) -> Option<locality_sim::SimPod> {
    e.get(&ObjectKey::new(Kind::Pod, NS, name))
        .and_then(|o| o.as_pod())
        .cloned()
}

fn pod_ready(e: &Engine, name: &str) -> bool {
    pod(e, name).unwrap().pod.ready
}

/// `ready` of the endpoint of `pod_name` in the slices of `service`, `None` when absent.
fn endpoint_ready(e: &Engine, service: &str, pod_name: &str) -> Option<bool> {
    e.store()
        .list_namespace(Kind::EndpointSlice, NS)
        .filter_map(|(_, s)| s.object.as_endpoint_slice())
        .filter(|s| s.service_name() == Some(service))
        .flat_map(|s| s.endpoints.iter())
        .find(|ep| ep.target_ref.as_ref().is_some_and(|t| t.2 == pod_name))
        .map(|ep| ep.conditions.ready.unwrap_or(true))
}

fn service_ip(e: &Engine, name: &str) -> IpAddr {
    e.get(&ObjectKey::new(Kind::Service, NS, name))
        .unwrap()
        .as_service()
        .unwrap()
        .cluster_ips[0]
}

/// The pods that answer `TRIES` connections, by name (`timeout` / `refused` for failures).
fn answers(e: &mut Engine, client: &Client, target: &Target) -> BTreeSet<String> {
    (0..TRIES)
        .map(
            |_| match e.connect(client, target, Protocol::TCP, 1_000).unwrap() {
                Outcome::Response { pod, .. } => pod,
                o => o.class().to_string(),
            },
        )
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A kubelet that stops posting: Ready stays True for the grace period, then Unknown with the
/// pods marked not ready (their endpoints too, so traffic stops), and the unreachable taint one
/// health pass later. New pods are kept off the node.
#[test]
fn stopped_kubelet_goes_unknown_after_the_grace_period_and_traffic_moves_away() {
    let mut e = cluster(7, &[]);
    e.run_until(20_000);
    assert_eq!(e.node_monitor_grace_period_ms(), 50_000);
    let to_web = Target::Addr(service_ip(&e, "web"), 80);
    let client = Client::pod(NS, "client-node-c");
    assert_eq!(answers(&mut e, &client, &to_web), set(&["web-a", "web-b"]));

    e.set_node_ready("node-a", false).unwrap();
    assert_eq!(e.kubelet_state("node-a"), Some(KubeletState::Stopped));
    // 20 s + 50 s of grace: the first health pass strictly after 70 s is at 75 s.
    e.run_until(74_999);
    assert_eq!(
        node(&e, "node-a").ready,
        Some(true),
        "still within the grace period"
    );
    assert!(pod_ready(&e, "web-a"));
    // The node's pods still serve while the control plane does not know.
    assert_eq!(answers(&mut e, &client, &to_web), set(&["web-a", "web-b"]));
    e.run_until(75_000);
    assert_eq!(node(&e, "node-a").ready, None, "Ready condition Unknown");
    assert!(!pod_ready(&e, "web-a"), "MarkPodsNotReady");
    assert!(
        !pod_ready(&e, "client-node-a"),
        "MarkPodsNotReady, pod without probe"
    );
    assert!(pod_ready(&e, "web-b"), "other nodes untouched");
    assert!(
        !has_taint(&e, "node-a", TAINT_UNREACHABLE),
        "the taint follows one pass later"
    );
    e.run_until(79_999);
    assert!(!has_taint(&e, "node-a", TAINT_UNREACHABLE));
    e.run_until(80_000);
    assert!(has_taint(&e, "node-a", TAINT_UNREACHABLE));
    assert!(!has_taint(&e, "node-a", TAINT_NOT_READY));
    assert_eq!(endpoint_ready(&e, "web", "web-a"), Some(false));
    assert_eq!(endpoint_ready(&e, "web", "web-b"), Some(true));
    // Once node-c's kube-proxy has synced, only web-b answers.
    e.run_until(82_000);
    assert_eq!(answers(&mut e, &client, &to_web), set(&["web-b"]));

    // The scheduler keeps new pods off the node, pinned or not.
    e.create(builders::pod(
        NS,
        "pinned-a",
        labels(&[("app", "other")]),
        Vec::new(),
        Some("node-a"),
        PodBehaviour::default(),
    ))
    .unwrap();
    for i in 0..6 {
        e.create(builders::pod(
            NS,
            &format!("free-{i}"),
            labels(&[("app", "other")]),
            Vec::new(),
            None,
            PodBehaviour::default(),
        ))
        .unwrap();
    }
    e.run_for(5_000);
    let pinned = ObjectKey::new(Kind::Pod, NS, "pinned-a");
    assert_eq!(pod(&e, "pinned-a").unwrap().pod.spec.node_name, "");
    let why = e.unschedulable_reason(&pinned).unwrap();
    assert!(why.contains(TAINT_UNREACHABLE), "{why}");
    for i in 0..6 {
        let n = pod(&e, &format!("free-{i}")).unwrap().pod.spec.node_name;
        assert!(n == "node-b" || n == "node-c", "free-{i} on {n:?}");
    }
}

/// 300 s after the unreachable taint, the taint-eviction controller deletes the pods that only
/// have the admission's default toleration; the stopped kubelet cannot finish the deletion, the
/// ReplicaSet replaces the pod elsewhere, and DaemonSet pods (tolerating forever) stay.
#[test]
fn taint_eviction_after_the_default_toleration_spares_daemonset_pods() {
    let mut e = cluster(3, &[]);
    let (agent, agent_svc) = builders::telemetry_agent(NS, "1");
    e.create(agent).unwrap();
    e.create(Object::Service(agent_svc)).unwrap();
    e.create(builders::workload(
        WorkloadKind::Deployment,
        NS,
        "api",
        labels(&[("app", "api")]),
        PodSpec {
            ports: vec![container_port("http", 8080)],
            ..PodSpec::default()
        },
        Some(6),
        netexec_behaviour(8080),
    ))
    .unwrap();
    e.run_until(20_000);
    let on_a = |e: &Engine, prefix: &str| -> Vec<String> {
        e.pods_on_node("node-a")
            .into_iter()
            .map(|k| k.name)
            .filter(|n| n.starts_with(prefix))
            .collect()
    };
    let api_a = on_a(&e, "api-");
    let agent_a = on_a(&e, "agent-");
    // The least-loaded scheduler spreads six replicas over the three nodes.
    assert!(
        !api_a.is_empty(),
        "an api pod on node-a: {:?}",
        e.pods_on_node("node-a")
    );
    assert_eq!(agent_a.len(), 1);
    let (api_a, agent_a) = (api_a[0].clone(), agent_a[0].clone());

    e.set_node_ready("node-a", false).unwrap();
    // Unknown at 75 s, taint at 80 s, evictions 300 s after the taint-eviction controller
    // saw it (one controller delay later).
    e.run_until(80_000);
    assert!(has_taint(&e, "node-a", TAINT_UNREACHABLE));
    e.run_until(379_999);
    for p in [&api_a, &agent_a, &"web-a".to_string()] {
        assert!(
            pod(&e, p).unwrap().pod.meta.deletion_timestamp.is_none(),
            "{p} evicted early"
        );
    }
    e.run_until(380_100);
    for p in [&api_a, &"web-a".to_string(), &"client-node-a".to_string()] {
        let got = pod(&e, p).unwrap_or_else(|| panic!("{p} removed: the kubelet is stopped"));
        assert!(got.pod.meta.deletion_timestamp.is_some(), "{p} not evicted");
    }
    e.run_until(700_000);
    // Still terminating (nobody finishes it), the DaemonSet pod untouched.
    assert!(pod(&e, &api_a).unwrap().pod.meta.deletion_timestamp.is_some());
    assert!(pod(&e, &agent_a).unwrap().pod.meta.deletion_timestamp.is_none());
    // The ReplicaSet replaced the evicted pod on another node.
    let api_live: Vec<(String, String)> = e
        .store()
        .list_namespace(Kind::Pod, NS)
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(|p| p.pod.meta.name.starts_with("api-") && p.pod.meta.deletion_timestamp.is_none())
        .map(|p| (p.pod.meta.name.clone(), p.pod.spec.node_name.clone()))
        .collect();
    assert_eq!(api_live.len(), 6, "{api_live:?}");
    assert!(api_live.iter().all(|(_, n)| n != "node-a"), "{api_live:?}");

    // The kubelet comes back: it finishes the deletions it missed.
    e.set_node_ready("node-a", true).unwrap();
    e.run_for(5_000);
    assert!(pod(&e, &api_a).is_none(), "deletion finished by the kubelet");
    assert!(pod(&e, "web-a").is_none());
    assert!(pod(&e, &agent_a).is_some());
}

fn toleration(key: &str, effect: &str, seconds: Option<i64>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: "Exists".into(),
        value: String::new(),
        effect: effect.into(),
        toleration_seconds: seconds,
    }
}

/// A pod pinned to node-a (no readiness probe) with `tolerations` in its spec.
fn tolerating_pod(name: &str, tolerations: Vec<Toleration>) -> Object {
    let mut o = builders::pod(
        NS,
        name,
        labels(&[("app", "tolerant")]),
        Vec::new(),
        Some("node-a"),
        PodBehaviour::default(),
    );
    if let Object::Pod(p) = &mut o {
        p.pod.spec.tolerations = tolerations;
    }
    o
}

/// The `DefaultTolerationSeconds` admission adds 300 s tolerations of the not-ready and
/// unreachable NoExecute taints only to pods that do not tolerate them already, on create and
/// on update.
#[test]
fn default_toleration_seconds_admission() {
    let mut e = cluster(3, &[]);
    let defaults = vec![
        toleration(TAINT_NOT_READY, "NoExecute", Some(300)),
        toleration(TAINT_UNREACHABLE, "NoExecute", Some(300)),
    ];
    assert_eq!(pod(&e, "web-a").unwrap().pod.spec.tolerations, defaults);
    let own = toleration(TAINT_UNREACHABLE, "NoExecute", Some(30));
    e.create(tolerating_pod("own-unreachable", vec![own.clone()]))
        .unwrap();
    assert_eq!(
        pod(&e, "own-unreachable").unwrap().pod.spec.tolerations,
        vec![own, toleration(TAINT_NOT_READY, "NoExecute", Some(300))]
    );
    // An empty key or an empty effect covers both.
    let everything = toleration("", "", None);
    e.create(tolerating_pod("everything", vec![everything.clone()]))
        .unwrap();
    assert_eq!(
        pod(&e, "everything").unwrap().pod.spec.tolerations,
        vec![everything]
    );
    let all_no_execute = toleration("", "NoExecute", None);
    e.create(tolerating_pod("all-no-execute", vec![all_no_execute.clone()]))
        .unwrap();
    assert_eq!(
        pod(&e, "all-no-execute").unwrap().pod.spec.tolerations,
        vec![all_no_execute]
    );
    // An update that drops them gets them back.
    let mut web_a = pod(&e, "web-a").unwrap();
    web_a.pod.spec.tolerations.clear();
    e.update(Object::Pod(web_a), None).unwrap();
    assert_eq!(pod(&e, "web-a").unwrap().pod.spec.tolerations, defaults);
    // DaemonSet pods: the controller's own tolerations (forever) take the place of the
    // template's same tolerations, so the admission adds nothing.
    let (mut agent, _) = builders::telemetry_agent(NS, "1");
    if let Object::Workload(w) = &mut agent {
        w.workload.template.tolerations = vec![toleration(TAINT_UNREACHABLE, "NoExecute", Some(30))];
    }
    e.create(agent).unwrap();
    e.run_for(2_000);
    let on_a = e
        .pods_on_node("node-a")
        .into_iter()
        .find(|k| k.name.starts_with("agent-"))
        .expect("an agent pod on node-a");
    let condition_tolerations: Vec<Toleration> = pod(&e, &on_a.name)
        .unwrap()
        .pod
        .spec
        .tolerations
        .into_iter()
        .filter(|t| t.effect == "NoExecute")
        .collect();
    assert_eq!(
        condition_tolerations,
        vec![
            toleration(TAINT_UNREACHABLE, "NoExecute", None),
            toleration(TAINT_NOT_READY, "NoExecute", None),
        ]
    );
}

/// The taint-eviction controller honours each pod's own `tolerationSeconds` (the shortest of
/// the tolerations used; zero or negative: at once; none: forever) and processes a pod again
/// when its tolerations change.
#[test]
fn taint_eviction_honours_toleration_seconds() {
    let mut e = cluster(3, &[]);
    let pods = [
        (
            "short",
            vec![toleration(TAINT_UNREACHABLE, "NoExecute", Some(30))],
        ),
        ("zero", vec![toleration(TAINT_UNREACHABLE, "NoExecute", Some(0))]),
        (
            "negative",
            vec![toleration(TAINT_UNREACHABLE, "NoExecute", Some(-5))],
        ),
        ("forever", vec![toleration(TAINT_UNREACHABLE, "NoExecute", None)]),
        (
            "huge",
            vec![toleration(TAINT_UNREACHABLE, "NoExecute", Some(i64::MAX))],
        ),
        ("changed", vec![toleration(TAINT_UNREACHABLE, "NoExecute", None)]),
        // The first toleration matching the taint is the one used.
        (
            "first-match",
            vec![
                toleration("", "NoExecute", Some(60)),
                toleration(TAINT_UNREACHABLE, "NoExecute", Some(10)),
            ],
        ),
    ];
    for (name, tolerations) in pods {
        e.create(tolerating_pod(name, tolerations)).unwrap();
    }
    e.run_until(20_000);
    e.set_node_ready("node-a", false).unwrap();
    // Unknown at 75 s, the unreachable taint at 80 s.
    e.run_until(80_000);
    assert!(has_taint(&e, "node-a", TAINT_UNREACHABLE));
    let evicted = |e: &Engine, name: &str| {
        pod(e, name)
            .unwrap_or_else(|| panic!("{name} removed: the kubelet is stopped"))
            .pod
            .meta
            .deletion_timestamp
            .is_some()
    };
    e.run_until(80_100);
    assert!(evicted(&e, "zero") && evicted(&e, "negative"));
    assert!(!evicted(&e, "short") && !evicted(&e, "first-match"));
    // Tolerating forever, then 10 s from now (an update may change tolerationSeconds).
    e.run_until(90_000);
    let mut changed = pod(&e, "changed").unwrap();
    changed.pod.spec.tolerations[0].toleration_seconds = Some(10);
    e.update(Object::Pod(changed), None).unwrap();
    e.run_until(109_999);
    assert!(!evicted(&e, "short"));
    e.run_until(110_100);
    assert!(evicted(&e, "short"));
    assert!(evicted(&e, "changed"), "10 s after the update at 90 s");
    e.run_until(139_999);
    assert!(!evicted(&e, "first-match"));
    e.run_until(140_100);
    assert!(evicted(&e, "first-match"), "60 s, the first match");
    e.run_until(1_000_000);
    assert!(!evicted(&e, "forever") && !evicted(&e, "huge"));
}

/// The Ready condition's times: the kubelet's last post and the condition's last change.
#[test]
fn ready_condition_times_follow_the_simulated_transitions() {
    let mut e = cluster(3, &[]);
    assert_eq!(
        e.node_ready_condition_times("node-a"),
        Some(ReadyConditionTimes::default()),
        "nothing since the Node was created"
    );
    assert_eq!(e.node_ready_condition_times("nope"), None);
    e.run_until(20_000);
    e.set_node_ready("node-a", false).unwrap();
    let stopped = ReadyConditionTimes {
        last_heartbeat: Some(20_000),
        last_transition: None,
    };
    assert_eq!(e.node_ready_condition_times("node-a"), Some(stopped));
    // Unknown on the first pass after 70 s: the controller's transition, no heartbeat.
    e.run_until(100_000);
    assert_eq!(node(&e, "node-a").ready, None);
    let unknown = ReadyConditionTimes {
        last_heartbeat: Some(20_000),
        last_transition: Some(75_000),
    };
    assert_eq!(e.node_ready_condition_times("node-a"), Some(unknown));
    e.set_kubelet_state("node-a", KubeletState::NotReady).unwrap();
    e.run_until(120_000);
    e.set_kubelet_state("node-a", KubeletState::Ready).unwrap();
    assert_eq!(
        e.node_ready_condition_times("node-a"),
        Some(ReadyConditionTimes {
            last_heartbeat: Some(120_000),
            last_transition: Some(120_000),
        })
    );
    e.set_kubelet_state("node-a", KubeletState::Stopped).unwrap();
    e.run_until(130_000);
    e.set_kubelet_state("node-a", KubeletState::Ready).unwrap();
    assert_eq!(
        e.node_ready_condition_times("node-a"),
        Some(ReadyConditionTimes {
            last_heartbeat: Some(130_000),
            last_transition: Some(120_000),
        }),
        "back before the grace period: no transition"
    );
}

/// The kubelet comes back before the evictions: the taint goes on the next pass, the pods'
/// readiness comes back (with the next probe, or at once without a readiness probe), traffic
/// returns, and nothing is evicted later.
#[test]
fn node_ready_again_removes_the_taint_and_readiness_returns() {
    let mut e = cluster(11, &[]);
    e.run_until(20_000);
    e.set_node_ready("node-a", false).unwrap();
    e.run_until(90_000);
    assert!(has_taint(&e, "node-a", TAINT_UNREACHABLE));
    assert!(!pod_ready(&e, "web-a"));

    e.set_node_ready("node-a", true).unwrap();
    assert_eq!(
        node(&e, "node-a").ready,
        Some(true),
        "the kubelet posts Ready at once"
    );
    assert!(
        pod_ready(&e, "client-node-a"),
        "no readiness probe: Ready at once"
    );
    assert!(
        !pod_ready(&e, "web-a"),
        "readiness comes back with the next probe"
    );
    e.run_until(91_000);
    assert!(pod_ready(&e, "web-a"), "netexec probes every second");
    assert!(
        has_taint(&e, "node-a", TAINT_UNREACHABLE),
        "removed on the next pass"
    );
    e.run_until(95_000);
    assert!(!has_taint(&e, "node-a", TAINT_UNREACHABLE));
    assert_eq!(endpoint_ready(&e, "web", "web-a"), Some(true));
    e.run_until(97_000);
    let to_web = Target::Addr(service_ip(&e, "web"), 80);
    assert_eq!(
        answers(&mut e, &Client::pod(NS, "client-node-c"), &to_web),
        set(&["web-a", "web-b"])
    );
    // Past the eviction time the taint would have set: nothing was deleted.
    e.run_until(500_000);
    for p in ["web-a", "client-node-a"] {
        assert!(pod(&e, p).unwrap().pod.meta.deletion_timestamp.is_none(), "{p}");
    }
    // New pods may go to node-a again.
    e.create(builders::pod(
        NS,
        "pinned-a",
        labels(&[("app", "other")]),
        Vec::new(),
        Some("node-a"),
        PodBehaviour::default(),
    ))
    .unwrap();
    e.run_for(3_000);
    assert_eq!(pod(&e, "pinned-a").unwrap().pod.spec.node_name, "node-a");
    assert!(pod_ready(&e, "pinned-a"));
}

/// A kubelet that posts NotReady: Ready False at once, the not-ready taint on the next pass;
/// upstream's health pass marks pods not ready only when it sets Unknown itself, so the pods
/// keep their readiness until they change. When it then stops posting, the condition becomes
/// Unknown and the taint is swapped for the unreachable one.
#[test]
fn kubelet_posting_not_ready_gets_the_not_ready_taint() {
    let mut e = cluster(5, &[]);
    e.run_until(20_000);
    e.set_kubelet_state("node-a", KubeletState::NotReady).unwrap();
    assert_eq!(node(&e, "node-a").ready, Some(false));
    e.run_until(24_999);
    assert!(!has_taint(&e, "node-a", TAINT_NOT_READY));
    e.run_until(25_000);
    assert!(has_taint(&e, "node-a", TAINT_NOT_READY));
    assert!(!has_taint(&e, "node-a", TAINT_UNREACHABLE));
    assert!(
        pod_ready(&e, "web-a"),
        "no MarkPodsNotReady for a condition the kubelet posted"
    );
    // New pods go elsewhere (the not-ready NoSchedule taint of the condition).
    e.create(builders::pod(
        NS,
        "late-a",
        labels(&[("app", "web")]),
        vec![container_port("http", 8080)],
        None,
        netexec_behaviour(8080),
    ))
    .unwrap();
    e.run_for(1_000);
    assert_ne!(
        pod(&e, "late-a").unwrap().pod.spec.node_name,
        "node-a",
        "kept off a NotReady node"
    );

    e.set_kubelet_state("node-a", KubeletState::Stopped).unwrap();
    // Stopped at 26 s: Unknown on the first pass after 76 s, the taint swapped on the next.
    e.run_until(80_000);
    assert_eq!(node(&e, "node-a").ready, None);
    e.run_until(85_000);
    assert!(has_taint(&e, "node-a", TAINT_UNREACHABLE));
    assert!(!has_taint(&e, "node-a", TAINT_NOT_READY));
}

/// Deleting a Node: its kube-proxy goes at once, its pods' endpoints leave the slices at once
/// (the EndpointSlice controller skips pods whose node is missing), the pods themselves stay
/// until the pod GC force-deletes them, and the DaemonSet does not recreate its pod.
#[test]
fn deleting_a_node_garbage_collects_its_pods() {
    let mut e = cluster(9, &[]);
    let (agent, agent_svc) = builders::telemetry_agent(NS, "1");
    e.create(agent).unwrap();
    e.create(Object::Service(agent_svc)).unwrap();
    e.run_until(20_000);
    let agents = |e: &Engine| -> Vec<(String, String)> {
        e.store()
            .list_namespace(Kind::Pod, NS)
            .filter_map(|(_, s)| s.object.as_pod())
            .filter(|p| p.pod.meta.name.starts_with("agent-"))
            .map(|p| (p.pod.meta.name.clone(), p.pod.spec.node_name.clone()))
            .collect()
    };
    assert_eq!(agents(&e).len(), 3);
    assert_eq!(endpoint_ready(&e, "web", "web-a"), Some(true));
    let on_a: Vec<String> = e.pods_on_node("node-a").into_iter().map(|k| k.name).collect();
    assert_eq!(on_a.len(), 3, "{on_a:?}");

    e.delete(&ObjectKey::new(Kind::Node, "", "node-a")).unwrap();
    assert!(e.kube_proxy("node-a").is_none(), "its kube-proxy goes with it");
    assert_eq!(e.kubelet_state("node-a"), None);
    let err = e
        .connect(
            &Client::pod(NS, "client-node-a"),
            &Target::Addr(service_ip(&e, "web"), 80),
            Protocol::TCP,
            1_000,
        )
        .unwrap_err();
    assert!(matches!(err, ConnectError::ClientNodeDeleted { .. }), "{err:?}");
    assert!(
        err.to_string().contains("simulated") && err.to_string().contains("deleted"),
        "{err}"
    );
    e.run_for(100);
    assert_eq!(
        endpoint_ready(&e, "web", "web-a"),
        None,
        "endpoint gone from the slices"
    );
    // Deleted at 20 s: the pod GC notices on its pass at 40 s and deletes 40 s later.
    e.run_until(79_999);
    for p in &on_a {
        let got = pod(&e, p).unwrap_or_else(|| panic!("{p} removed before the quarantine"));
        assert!(
            got.pod.meta.deletion_timestamp.is_none(),
            "{p}: left to the pod GC"
        );
    }
    // Traffic from elsewhere never reaches the deleted node.
    let to_web = Target::Addr(service_ip(&e, "web"), 80);
    assert_eq!(
        answers(&mut e, &Client::pod(NS, "client-node-c"), &to_web),
        set(&["web-b"])
    );
    e.run_until(80_000);
    for p in &on_a {
        assert!(pod(&e, p).is_none(), "{p} not garbage-collected");
    }
    e.run_for(100);
    assert!(e.pods_on_node("node-a").is_empty());
    // The pod GC marked them Failed before the force delete.
    let failed = e
        .store()
        .events()
        .iter()
        .filter(|ev| ev.key.kind == Kind::Pod && on_a.contains(&ev.key.name))
        .filter_map(|ev| ev.object.as_pod())
        .filter(|p| p.pod.phase == locality_model::objects::PodPhase::Failed)
        .count();
    assert!(failed >= on_a.len(), "{failed}");
    assert!(matches!(
        e.connect(&Client::pod(NS, "client-node-a"), &to_web, Protocol::TCP, 1_000),
        Err(ConnectError::UnknownClient(_))
    ));
    // No DaemonSet pod for the deleted node.
    e.run_until(200_000);
    let now = agents(&e);
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(now.iter().all(|(_, n)| n != "node-a"), "{now:?}");
}

fn lb_service(name: &str, etp: Option<TrafficPolicy>) -> locality_model::objects::Service {
    let mut s = builders::service(
        NS,
        name,
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    );
    s.type_ = ServiceType::LoadBalancer;
    s.external_traffic_policy = etp;
    s
}

fn ingress(e: &Engine, name: &str) -> Vec<LoadBalancerIngress> {
    e.get(&ObjectKey::new(Kind::Service, NS, name))
        .unwrap()
        .as_service()
        .unwrap()
        .load_balancer_ingress
        .clone()
}

fn vip(e: &Engine, name: &str) -> IpAddr {
    ingress(e, name)[0].ip.unwrap()
}

/// The simulated cloud load-balancer controller hands out TEST-NET-3 addresses (`ipMode:
/// VIP`), one per family, leaves Services with ingress alone, reclaims addresses.
#[test]
fn load_balancer_services_get_ingress_ips_from_the_simulated_pool() {
    let mut e = Engine::new(SimConfig {
        dual_stack: true,
        ..SimConfig::default()
    });
    for n in &Topology::builtin("three-zones").unwrap().nodes {
        e.create(Object::Node(n.node.clone())).unwrap();
    }
    e.create(Object::Service(lb_service("lb1", None))).unwrap();
    e.create(Object::Service(lb_service("lb2", None))).unwrap();
    e.create(Object::Service(builders::service(
        NS,
        "plain",
        labels(&[("app", "web")]),
        80,
        TargetPort::Number(80),
    )))
    .unwrap();
    let mut preset = lb_service("preset", None);
    preset.load_balancer_ingress = vec![LoadBalancerIngress {
        ip: Some("198.51.100.7".parse().unwrap()),
        ..LoadBalancerIngress::default()
    }];
    e.create(Object::Service(preset)).unwrap();
    let mut dual = lb_service("dual", None);
    dual.ip_families = vec![IpFamily::IPv4, IpFamily::IPv6];
    e.create(Object::Service(dual)).unwrap();
    e.run_for(100);
    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    assert_eq!(
        ingress(&e, "lb1"),
        vec![LoadBalancerIngress {
            ip: Some(ip("203.0.113.1")),
            hostname: None,
            ip_mode: Some("VIP".into()),
        }]
    );
    assert_eq!(vip(&e, "lb2"), ip("203.0.113.2"));
    assert!(ingress(&e, "plain").is_empty());
    assert_eq!(ingress(&e, "preset").len(), 1);
    assert_eq!(vip(&e, "preset"), ip("198.51.100.7"));
    let dual: Vec<IpAddr> = ingress(&e, "dual").iter().filter_map(|i| i.ip).collect();
    assert_eq!(dual, vec![ip("203.0.113.3"), ip("2001:db8:203:113::1")]);

    // Freed on deletion and reused; cleared when the Service stops being a LoadBalancer.
    e.delete(&ObjectKey::new(Kind::Service, NS, "lb1")).unwrap();
    e.run_for(100);
    e.create(Object::Service(lb_service("lb3", None))).unwrap();
    e.run_for(100);
    assert_eq!(vip(&e, "lb3"), ip("203.0.113.1"));
    let mut lb2 = e
        .get(&ObjectKey::new(Kind::Service, NS, "lb2"))
        .unwrap()
        .as_service()
        .unwrap()
        .clone();
    lb2.type_ = ServiceType::ClusterIP;
    e.update(Object::Service(lb2.clone()), None).unwrap();
    e.run_for(100);
    assert!(ingress(&e, "lb2").is_empty());
    // A replace that drops the status gets the same address back.
    let mut lb3 = e
        .get(&ObjectKey::new(Kind::Service, NS, "lb3"))
        .unwrap()
        .as_service()
        .unwrap()
        .clone();
    lb3.load_balancer_ingress.clear();
    e.update(Object::Service(lb3), None).unwrap();
    e.run_for(100);
    assert_eq!(vip(&e, "lb3"), ip("203.0.113.1"));
    assert_eq!(
        e.load_balancer_service(&ip("203.0.113.1"))
            .map(|(k, _)| k.name.clone()),
        Some("lb3".to_string())
    );
    assert!(e.load_balancer_service(&ip("203.0.113.2")).is_none());
}

/// In-cluster clients to an LB VIP: kube-proxy short-circuits them (ETP Local does not apply
/// to pods and, in iptables mode, the host); nftables drops the host client when the node has
/// no local endpoint. The VIP is in the rules text.
#[test]
fn in_cluster_clients_to_a_load_balancer_vip_short_circuit() {
    let mut e = cluster(2, &[("node-c", "kube-proxy:nftables")]);
    e.create(Object::Service(lb_service("web-lb", Some(TrafficPolicy::Local))))
        .unwrap();
    e.run_until(10_000);
    let target = Target::Addr(vip(&e, "web-lb"), 80);
    let rules = e.rules_text("node-a").unwrap();
    assert!(
        rules.contains("203.0.113.1/32") && rules.contains("loadbalancer IP"),
        "{rules}"
    );
    // Pod on node-c (no local endpoint): cluster-wide.
    assert_eq!(
        answers(&mut e, &Client::pod(NS, "client-node-c"), &target),
        set(&["web-a", "web-b"])
    );
    // iptables host on node-a: short-circuited to the cluster chain.
    assert_eq!(
        answers(&mut e, &Client::host("node-a"), &target),
        set(&["web-a", "web-b"])
    );
    // nftables host on node-c without a local endpoint: the no-endpoint-services drop.
    assert_eq!(
        answers(&mut e, &Client::host("node-c"), &target),
        set(&["timeout"])
    );
    // From outside, arriving at node-c: ETP Local, no local endpoint, DROP.
    assert_eq!(
        answers(&mut e, &Client::external("node-c"), &target),
        set(&["timeout"])
    );
    // Arriving at node-b: its own endpoint only.
    assert_eq!(
        answers(&mut e, &Client::external("node-b"), &target),
        set(&["web-b"])
    );
}

/// Outside clients through the simulated cloud load balancer: every node with ETP Cluster,
/// only health-checked nodes with ETP Local (so no timeouts while some endpoint is ready), none
/// when no endpoint is ready; excluded nodes never; `ipMode: Proxy` through the NodePort.
#[test]
fn outside_clients_reach_lb_vips_through_healthy_nodes() {
    let mut e = cluster(4, &[]);
    // A second backend on node-a that keeps serving 30 s after SIGTERM.
    e.create(builders::pod(
        NS,
        "web-a-slow",
        labels(&[("app", "web")]),
        vec![container_port("http", 8080)],
        Some("node-a"),
        PodBehaviour {
            shutdown_delay_seconds: 30,
            ..netexec_behaviour(8080)
        },
    ))
    .unwrap();
    e.create(Object::Service(lb_service("web-cluster", None)))
        .unwrap();
    e.create(Object::Service(lb_service(
        "web-local",
        Some(TrafficPolicy::Local),
    )))
    .unwrap();
    e.run_until(10_000);
    let outside = Client::external_via_load_balancer();
    let key = |n: &str| ObjectKey::new(Kind::Service, NS, n);
    assert_eq!(
        e.load_balancer_backends(&key("web-cluster")),
        vec!["node-a", "node-b", "node-c"]
    );
    assert_eq!(
        e.load_balancer_backends(&key("web-local")),
        vec!["node-a", "node-b"]
    );
    assert!(
        e.load_balancer_backends(&key("web")).is_empty(),
        "not a LoadBalancer"
    );
    let cluster_vip = Target::Addr(vip(&e, "web-cluster"), 80);
    let local_vip = Target::Addr(vip(&e, "web-local"), 80);
    let all = set(&["web-a", "web-a-slow", "web-b"]);
    assert_eq!(answers(&mut e, &outside, &cluster_vip), all);
    // Only nodes with a local ready endpoint: never node-c's DROP.
    assert_eq!(answers(&mut e, &outside, &local_vip), all);
    // No listener on another port; cluster-internal addresses and names are not reachable.
    assert_eq!(
        e.connect(
            &outside,
            &Target::Addr(vip(&e, "web-local"), 81),
            Protocol::TCP,
            1_000
        )
        .unwrap(),
        Outcome::Timeout
    );
    assert_eq!(
        e.connect(
            &outside,
            &Target::Addr(service_ip(&e, "web"), 80),
            Protocol::TCP,
            1_000
        )
        .unwrap(),
        Outcome::Timeout
    );
    assert!(matches!(
        e.connect(&outside, &Target::Dns("web".into(), 80), Protocol::TCP, 1_000),
        Err(ConnectError::NoSuchHost(_))
    ));

    // Only a terminating (still serving) endpoint left on node-a: it fails the health check,
    // which counts ready endpoints only, though node-a would still serve what reaches it.
    e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a")).unwrap();
    e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a-slow")).unwrap();
    e.run_for(4_000);
    assert!(pod(&e, "web-a").is_none());
    assert_eq!(endpoint_ready(&e, "web-local", "web-a-slow"), Some(false));
    assert_eq!(e.load_balancer_backends(&key("web-local")), vec!["node-b"]);
    assert_eq!(answers(&mut e, &outside, &local_vip), set(&["web-b"]));
    assert_eq!(
        answers(&mut e, &Client::external("node-a"), &local_vip),
        set(&["web-a-slow"])
    );

    // An excluded node is not a backend.
    let mut b = node(&e, "node-b");
    b.meta
        .labels
        .insert(LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS.into(), String::new());
    e.update(Object::Node(b), None).unwrap();
    e.run_for(100);
    assert!(e.load_balancer_backends(&key("web-local")).is_empty());
    assert_eq!(answers(&mut e, &outside, &local_vip), set(&["timeout"]));
    assert_eq!(
        e.load_balancer_backends(&key("web-cluster")),
        vec!["node-a", "node-c"]
    );
    assert_eq!(answers(&mut e, &outside, &cluster_vip), set(&["web-b"]));

    // ipMode Proxy: not programmed as a VIP; the load balancer goes through a NodePort, and
    // in-cluster clients go out through it too.
    let mut proxied = lb_service("web-proxied", Some(TrafficPolicy::Local));
    proxied.load_balancer_ingress = vec![LoadBalancerIngress {
        ip: Some("198.51.100.20".parse().unwrap()),
        hostname: None,
        ip_mode: Some("Proxy".into()),
    }];
    e.create(Object::Service(proxied)).unwrap();
    let mut b = node(&e, "node-b");
    b.meta.labels.remove(LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS);
    e.update(Object::Node(b), None).unwrap();
    e.run_for(3_000);
    let proxied_vip = Target::Addr("198.51.100.20".parse().unwrap(), 80);
    assert!(!e.rules_text("node-b").unwrap().contains("198.51.100.20"));
    assert_eq!(answers(&mut e, &outside, &proxied_vip), set(&["web-b"]));
    assert_eq!(
        answers(&mut e, &Client::pod(NS, "client-node-c"), &proxied_vip),
        set(&["web-b"])
    );
}

/// Same seed, same run: node failure, eviction, deletion and load-balancer choices included.
#[test]
fn node_failures_and_load_balancers_are_deterministic() {
    let run = |seed: u64| -> (String, Vec<String>) {
        let mut e = cluster(seed, &[]);
        e.create(Object::Service(lb_service("web-lb", None))).unwrap();
        e.run_until(20_000);
        let target = Target::Addr(vip(&e, "web-lb"), 80);
        let mut seen = Vec::new();
        for _ in 0..20 {
            let o = e
                .connect(
                    &Client::external_via_load_balancer(),
                    &target,
                    Protocol::TCP,
                    1_000,
                )
                .unwrap();
            seen.push(format!("{o:?}"));
        }
        e.set_node_ready("node-b", false).unwrap();
        e.run_until(100_000);
        e.set_node_ready("node-b", true).unwrap();
        e.run_until(120_000);
        e.delete(&ObjectKey::new(Kind::Node, "", "node-c")).unwrap();
        e.run_until(200_000);
        (e.event_log_text(), seen)
    };
    let (log1, seen1) = run(21);
    let (log2, seen2) = run(21);
    assert_eq!(log1, log2);
    assert_eq!(seen1, seen2);
    let (_, seen3) = run(22);
    assert_ne!(seen1, seen3, "different seeds choose differently");
}
