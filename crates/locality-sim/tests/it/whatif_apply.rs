//! `whatif::apply::apply_objects` (`locality simulate --apply`): what replaces what, and which
//! applied workloads are rollouts.

use locality_model::objects::WorkloadKind;
use locality_sim::whatif::apply::apply_objects;
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};

fn telemetry() -> Engine {
    let t = Topology::builtin("telemetry").unwrap();
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    e.run_until(60_000);
    e
}

fn agent(e: &Engine) -> Object {
    e.get(&ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"))
        .unwrap()
        .clone()
}

#[test]
fn a_workload_with_a_new_template_is_a_rollout_and_one_with_the_stored_template_is_not() {
    let mut e = telemetry();
    let mut same = agent(&e);
    if let Object::Workload(w) = &mut same {
        assert_eq!(w.workload.kind, WorkloadKind::DaemonSet);
        w.workload.max_surge = Some("1".into());
        w.workload.max_unavailable = Some("0".into());
    }
    assert!(apply_objects(&mut e, &[same]).unwrap().is_empty());
    let stored = agent(&e);
    let w = stored.as_workload().unwrap();
    assert_eq!(
        w.workload.max_surge.as_deref(),
        Some("1"),
        "the strategy is replaced"
    );

    let mut new = agent(&e);
    if let Object::Workload(w) = &mut new {
        w.template_digest ^= 1;
    }
    let rolled = apply_objects(&mut e, &[new]).unwrap();
    assert_eq!(rolled.len(), 1);
    assert_eq!(rolled[0].0, ObjectKey::new(Kind::DaemonSet, "telemetry", "agent"));
}

#[test]
fn a_service_keeps_its_cluster_ips_unless_it_names_them() {
    let mut e = telemetry();
    let key = ObjectKey::new(Kind::Service, "telemetry", "agent");
    let before = e.get(&key).and_then(Object::as_service).unwrap().clone();
    assert!(!before.cluster_ips.is_empty());
    let mut svc = before.clone();
    svc.cluster_ips.clear();
    svc.traffic_distribution = Some("PreferSameNode".into());
    apply_objects(&mut e, &[Object::Service(svc)]).unwrap();
    let after = e.get(&key).and_then(Object::as_service).unwrap();
    assert_eq!(after.cluster_ips, before.cluster_ips);
    assert_eq!(after.traffic_distribution.as_deref(), Some("PreferSameNode"));
}

#[test]
fn an_existing_pod_is_not_replaced_and_a_new_object_is_created() {
    let mut e = telemetry();
    let pod = e
        .store()
        .list_namespace(Kind::Pod, "telemetry")
        .map(|(_, s)| (*s.object).clone())
        .next()
        .unwrap();
    let err = apply_objects(&mut e, &[pod]).unwrap_err().to_string();
    assert!(err.contains("cannot be replaced"), "{err}");
    let ns = locality_sim::builders::namespace("extra");
    apply_objects(&mut e, &[ns]).unwrap();
    assert!(e.get(&ObjectKey::new(Kind::Namespace, "", "extra")).is_some());
}
