//! Taints in the simulated cluster: taint eviction and tolerationSeconds, the DefaultTolerationSeconds
//! admission, the not-ready taint of a kubelet posting NotReady.

use super::{NS, cluster, has_taint, node, pod, pod_ready};
use locality_model::objects::{PodSpec, Toleration, WorkloadKind};
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{Engine, Kind, KubeletState, Object, PodBehaviour};
use locality_sim::{TAINT_NOT_READY, TAINT_UNREACHABLE};

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
            .map(|k| k.name.to_string())
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
