//! Node failures and load balancers in the **simulated** cluster: a kubelet that stops
//! reporting (node lifecycle controller, taint eviction), a deleted Node (pod GC), and
//! LoadBalancer ingress IPs as connection targets (the simulated cloud load balancer).
//!
//! Timings are those of the simulated controllers (src/nodelifecycle.rs): health passes on
//! multiples of 5 s, `--node-monitor-grace-period` 50 s (1.35), the unreachable taint one pass
//! after the Unknown condition, evictions 300 s after the taint, orphaned pods removed on the
//! pod GC's first 20 s pass after the deletion plus its 40 s quarantine.

mod load_balancers;
mod taints;

use load_balancers::{lb_service, vip};

use std::collections::BTreeSet;
use std::net::IpAddr;

use locality_model::objects::{Protocol, TargetPort};
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{
    Client, ConnectError, DataPlaneProfile, Engine, Kind, KubeletState, Object, ObjectKey, Outcome,
    PodBehaviour, SimConfig, Target, Topology,
};
use locality_sim::{ReadyConditionTimes, TAINT_NOT_READY, TAINT_UNREACHABLE};

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
    let on_a: Vec<String> = e
        .pods_on_node("node-a")
        .into_iter()
        .map(|k| k.name.to_string())
        .collect();
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
        .filter(|ev| ev.key.kind == Kind::Pod && on_a.iter().any(|n| *n == ev.key.name))
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
