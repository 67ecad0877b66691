//! `--delete` and `--replace` (`whatif::delete`): a pod deleted as `kubectl delete pod`
//! deletes it (graceful, honouring its shutdown delay within the grace period; an owned pod
//! recreated by its controller, a bare pod not), and `kubectl replace --force` (the file's pod
//! created the instant the old one is gone).

use locality_model::objects::{TargetPort, TrafficPolicy};
use locality_sim::builders::{container_port, itp_local, labels, namespace, netexec_behaviour, pod, service};
use locality_sim::whatif::delete::PodEvent;
use locality_sim::whatif::{Cause, Change, RunOptions, WhatIf, run};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};

use super::whatif::config;

const NS: &str = "shop";
const STEP_MS: u64 = 50;

/// four-nodes with a bare backend `web` on node-a and one on node-b (agnhost netexec,
/// `--delay-shutdown` `delay` s, grace 30 s, tcpSocket readiness) behind a Service whose
/// internalTrafficPolicy is `itp`.
fn cluster(delay: u64, itp: TrafficPolicy) -> Engine {
    let t = Topology::builtin("four-nodes").unwrap();
    // Every change programmed on its own, one sync after it: the edges below are exact. The
    // minimum sync period's hold-back is covered by the property tests.
    let config = SimConfig {
        proxy_min_sync_period_ms: 0,
        ..SimConfig::default()
    };
    let mut e = Engine::from_topology(&t, config).unwrap();
    e.create(namespace(NS)).unwrap();
    for (name, node) in [("web-a", "node-a"), ("web-b", "node-b")] {
        let mut behaviour = netexec_behaviour(8080);
        behaviour.shutdown_delay_seconds = delay;
        e.create(backend(name, node, behaviour)).unwrap();
    }
    let mut svc = service(NS, "web", labels(&[("app", "web")]), 80, TargetPort::Number(8080));
    if itp == TrafficPolicy::Local {
        svc = itp_local(svc);
    }
    e.create(Object::Service(svc)).unwrap();
    e.run_until(30_000);
    e
}

fn backend(name: &str, node: &str, behaviour: locality_sim::PodBehaviour) -> Object {
    pod(
        NS,
        name,
        labels(&[("app", "web")]),
        vec![container_port("http", 8080)],
        Some(node),
        behaviour,
    )
}

fn what_if(e: &mut Engine, change: Change) -> WhatIf {
    let options = RunOptions {
        step_ms: STEP_MS,
        limit_ms: 600_000,
        ..RunOptions::default()
    };
    run(e, std::slice::from_ref(&change), &config(), &options, &mut |_| {}).unwrap()
}

fn delete(grace: Option<u64>, replacement: Option<Object>) -> Change {
    Change::DeletePod {
        pod: ObjectKey::new(Kind::Pod, NS, "web-a"),
        grace_period_seconds: grace,
        replacement: replacement.map(|r| ("web-a.yaml".to_string(), Box::new(r))),
    }
}

/// The first step (of 50 ms) at or after `t`: when a run sees what happened at `t`.
fn step_after(t: u64) -> u64 {
    t.div_ceil(STEP_MS) * STEP_MS
}

fn at(r: &WhatIf, e: PodEvent) -> Option<u64> {
    r.pod_events.iter().find(|(_, _, x)| *x == e).map(|(t, _, _)| *t)
}

fn node_a_windows(r: &WhatIf) -> Vec<locality_sim::whatif::Window> {
    r.ports
        .iter()
        .flat_map(|p| p.nodes.get("node-a"))
        .flat_map(|n| n.windows.clone())
        .collect()
}

#[test]
fn a_bare_pod_serves_its_shutdown_delay_and_is_not_recreated() {
    let mut e = cluster(8, TrafficPolicy::Local);
    let r = what_if(&mut e, delete(None, None));
    assert!(r.settled, "{:?}", r.unsettled);
    // SIGTERM when the kubelet sees the deletion; the process serves 8 s (its delay, within
    // the 30 s grace), then exits.
    assert_eq!(at(&r, PodEvent::Deleted), Some(0));
    let kubelet = e.config().controller_delay_ms;
    assert_eq!(
        at(&r, PodEvent::NotReady),
        Some(8_000 + kubelet),
        "{:?}",
        r.pod_events
    );
    assert!(at(&r, PodEvent::Gone).is_some_and(|t| t > 8_000 + kubelet));
    assert_eq!(at(&r, PodEvent::Created), None, "a bare pod is not recreated");
    assert!(e.get(&ObjectKey::new(Kind::Pod, NS, "web-a")).is_none());
    // Local: node-a keeps its serving-terminating endpoint 8 s, then drops to the end.
    let w = node_a_windows(&r);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].start_ms, step_after(8_000 + kubelet), "{w:?}");
    assert_eq!(w[0].cause, Cause::EndpointGone);
    assert_eq!(w[0].end_ms, r.duration_ms, "blind to the end: {w:?}");
}

#[test]
fn a_grace_period_cuts_the_shutdown_delay_short() {
    let mut e = cluster(20, TrafficPolicy::Local);
    let r = what_if(&mut e, delete(Some(3), None));
    assert_eq!(at(&r, PodEvent::NotReady), Some(3_000), "{:?}", r.pod_events);
    assert_eq!(node_a_windows(&r)[0].start_ms, step_after(3_000));
}

#[test]
fn a_replacement_is_created_the_instant_the_old_pod_is_gone() {
    let mut e = cluster(5, TrafficPolicy::Local);
    let new = backend("web-a", "node-a", netexec_behaviour(8080));
    let r = what_if(&mut e, delete(None, Some(new)));
    assert!(r.settled, "{:?}", r.unsettled);
    let (gone, created, ready) = (
        at(&r, PodEvent::Gone).unwrap(),
        at(&r, PodEvent::Created).unwrap(),
        at(&r, PodEvent::Ready).unwrap(),
    );
    assert_eq!(created, gone, "{:?}", r.pod_events);
    assert!(ready > created);
    // The window runs from the old process's exit to one sync after the new pod is Ready.
    let w = node_a_windows(&r);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        w[0].start_ms,
        step_after(at(&r, PodEvent::NotReady).unwrap()),
        "{w:?}"
    );
    let sync = e.config().proxy_sync_delay_ms;
    assert!(
        w[0].end_ms > ready + sync && w[0].end_ms <= ready + sync + 100,
        "{w:?}, ready at {ready}"
    );
}

#[test]
fn with_policy_cluster_the_other_node_answers_throughout() {
    let mut e = cluster(0, TrafficPolicy::Cluster);
    let r = what_if(&mut e, delete(None, None));
    // The old process exits at SIGTERM, before kube-proxy programmed its removal; a node is
    // blind only when every endpoint its rules send to is gone, and node-b's answers.
    assert!(node_a_windows(&r).is_empty(), "{:?}", node_a_windows(&r));
}

#[test]
fn an_owned_pod_is_recreated_by_its_controller() {
    let t = Topology::builtin("telemetry").unwrap();
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    e.run_until(60_000);
    let victim = e
        .store()
        .list_namespace(Kind::Pod, "telemetry")
        .filter_map(|(_, s)| s.object.as_pod())
        .find(|p| p.pod.meta.owner_references.iter().any(|o| o.kind == "DaemonSet"))
        .map(|p| ObjectKey::new(Kind::Pod, "telemetry", p.pod.meta.name.as_str()))
        .unwrap();
    let r = what_if(
        &mut e,
        Change::DeletePod {
            pod: victim.clone(),
            grace_period_seconds: None,
            replacement: None,
        },
    );
    assert!(r.settled, "{:?}", r.unsettled);
    assert!(at(&r, PodEvent::Created).is_some(), "{:?}", r.pod_events);
    assert!(at(&r, PodEvent::Ready).is_some(), "{:?}", r.pod_events);
}

#[test]
fn a_missing_pod_or_a_replacement_of_another_is_refused() {
    let mut e = cluster(0, TrafficPolicy::Local);
    let missing = Change::DeletePod {
        pod: ObjectKey::new(Kind::Pod, NS, "nope"),
        grace_period_seconds: None,
        replacement: None,
    };
    let err = run(&mut e, &[missing], &config(), &RunOptions::default(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("no pod shop/nope"), "{err}");
    let other = backend("web-x", "node-a", netexec_behaviour(8080));
    let err = run(
        &mut e,
        &[delete(None, Some(other))],
        &config(),
        &RunOptions::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("not pod shop/web-a"), "{err}");
}
