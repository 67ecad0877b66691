//! `Engine::delete_with`: a delete request's grace period (`DeleteOptions.gracePeriodSeconds`)
//! for pods: 0 removes at once, `n` kills the process within `n` s, a later shorter one wins.

use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};

const NS: &str = "default";

/// three-zones with `web-a` on node-a: agnhost netexec with `--delay-shutdown=20`, grace 30 s.
fn engine() -> Engine {
    let mut e = Engine::new(SimConfig::default());
    for n in &Topology::builtin("three-zones").unwrap().nodes {
        e.create(Object::Node(n.node.clone())).unwrap();
    }
    let mut behaviour = netexec_behaviour(8080);
    behaviour.shutdown_delay_seconds = 20;
    behaviour.termination_grace_period_seconds = 30;
    e.create(builders::pod(
        NS,
        "web-a",
        labels(&[("app", "web")]),
        vec![container_port("http", 8080)],
        Some("node-a"),
        behaviour,
    ))
    .unwrap();
    e.run_until(10_000);
    e
}

fn web_a() -> ObjectKey {
    ObjectKey::new(Kind::Pod, NS, "web-a")
}

fn running_ip(e: &Engine) -> std::net::IpAddr {
    let p = e.get(&web_a()).unwrap().as_pod().unwrap();
    assert!(p.pod.ready, "web-a is ready before the delete");
    p.pod.pod_ips[0]
}

#[test]
fn grace_zero_removes_the_pod_at_once() {
    let mut e = engine();
    let _ = running_ip(&e);
    let rv = e.store().resource_version();
    e.delete_with(&web_a(), Some(0)).unwrap();
    assert!(
        e.get(&web_a()).is_none(),
        "force delete: gone from the store at once"
    );
    let events = e.events_since(rv).unwrap();
    assert_eq!(
        events.len(),
        1,
        "one DELETED event, no MODIFIED with deletionTimestamp"
    );
    assert_eq!(events[0].event_type.as_str(), "DELETED");
    // The kubelet forgot it: the name can be reused at once and runs again.
    e.create(builders::pod(
        NS,
        "web-a",
        labels(&[("app", "web")]),
        vec![container_port("http", 8080)],
        Some("node-a"),
        netexec_behaviour(8080),
    ))
    .unwrap();
    e.run_for(5_000);
    assert!(e.get(&web_a()).unwrap().as_pod().unwrap().pod.ready);
}

#[test]
fn a_grace_period_bounds_the_shutdown_delay() {
    let mut e = engine();
    let _ = running_ip(&e);
    let t0 = e.now();
    e.delete_with(&web_a(), Some(3)).unwrap();
    assert_eq!(e.deletion_grace_period_seconds(&web_a()), Some(3));
    e.run_until(t0 + 2_900);
    let p = e.get(&web_a()).expect("still terminating");
    assert!(p.meta().deletion_timestamp.is_some());
    e.run_until(t0 + 3_000 + 500);
    assert!(
        e.get(&web_a()).is_none(),
        "killed after 3 s, not after the 20 s delay"
    );
}

#[test]
fn a_later_shorter_grace_period_shortens_a_pending_one() {
    let mut e = engine();
    let t0 = e.now();
    e.delete(&web_a()).unwrap();
    e.run_until(t0 + 5_000);
    assert!(e.get(&web_a()).is_some(), "20 s shutdown delay");
    e.delete_with(&web_a(), Some(1)).unwrap();
    assert_eq!(e.deletion_grace_period_seconds(&web_a()), Some(1));
    e.run_until(t0 + 6_500);
    assert!(e.get(&web_a()).is_none());
}

#[test]
fn delete_without_a_grace_period_is_unchanged() {
    let mut e = engine();
    let t0 = e.now();
    e.delete_with(&web_a(), None).unwrap();
    assert_eq!(e.deletion_grace_period_seconds(&web_a()), None);
    e.run_until(t0 + 19_000);
    assert!(e.get(&web_a()).is_some(), "the 20 s shutdown delay runs");
    e.run_until(t0 + 21_000);
    assert!(e.get(&web_a()).is_none());
}

/// Deleting a Namespace (the namespace controller and NamespaceLifecycle admission): it is
/// Terminating, refuses new content, its Service goes at once, its pods terminate gracefully,
/// and it is removed once empty.
#[test]
fn deleting_a_namespace_deletes_its_contents_then_itself() {
    let mut e = engine();
    e.create(builders::namespace("shop")).unwrap();
    let mut behaviour = netexec_behaviour(8080);
    behaviour.shutdown_delay_seconds = 10;
    behaviour.termination_grace_period_seconds = 30;
    e.create(builders::pod(
        "shop",
        "cart",
        labels(&[("app", "cart")]),
        vec![container_port("http", 8080)],
        Some("node-a"),
        behaviour,
    ))
    .unwrap();
    let svc = builders::service(
        "shop",
        "cart",
        labels(&[("app", "cart")]),
        80,
        locality_model::objects::TargetPort::Number(8080),
    );
    e.create(Object::Service(svc)).unwrap();
    e.run_for(10_000);
    let ns = ObjectKey::new(Kind::Namespace, "", "shop");
    e.delete(&ns).unwrap();
    assert!(e.store().get(&ns).unwrap().deletion.is_some(), "Terminating");
    assert!(e.get(&ObjectKey::new(Kind::Service, "shop", "cart")).is_none());
    let pod = ObjectKey::new(Kind::Pod, "shop", "cart");
    assert!(
        e.store().get(&pod).unwrap().deletion.is_some(),
        "the pod terminates gracefully"
    );
    let refused = e.create(builders::client_pod("shop", "late", "node-a"));
    assert!(
        refused
            .as_ref()
            .is_err_and(|err| err.to_string().contains("being terminated")),
        "{refused:?}"
    );
    e.run_for(60_000);
    assert!(e.get(&pod).is_none(), "the pod is gone");
    assert!(e.store().get(&ns).is_none(), "the namespace is gone once empty");
}
