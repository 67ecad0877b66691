//! Rough wall-time checks of the simulated engine (ignored by default; run with
//! `cargo test --release -p locality-sim --test it perf:: -- --ignored --nocapture`).

use std::time::Instant;

use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};

fn rollout(e: &mut Engine, ns: &str, name: &str, until: u64) -> (u64, usize) {
    let key = ObjectKey::new(Kind::DaemonSet, ns, name);
    let mut w = e.get(&key).unwrap().as_workload().unwrap().clone();
    w.workload.template_labels.insert("rev".into(), "2".into());
    e.update(Object::Workload(w), None).unwrap();
    let start = e.now();
    let mut done_at = 0;
    while e.now() < start + until {
        e.run_for(1_000);
        let old = e
            .store()
            .list_namespace(Kind::Pod, ns)
            .filter_map(|(_, s)| s.object.as_pod())
            .filter(|p| p.pod.meta.labels.get("app").map(String::as_str) == Some(name))
            .filter(|p| !p.pod.meta.labels.contains_key("rev") || !p.pod.ready)
            .count();
        if old == 0 {
            done_at = e.now() - start;
            break;
        }
    }
    (done_at, e.store().events().len())
}

#[test]
#[ignore = "timing"]
fn telemetry_daemonset_rollout_wall_time() {
    let t0 = Instant::now();
    let mut e =
        Engine::from_topology(&Topology::builtin("telemetry").unwrap(), SimConfig::default()).unwrap();
    e.run_until(30_000);
    let (virtual_ms, events) = rollout(&mut e, "telemetry", "agent", 3_600_000);
    assert!(virtual_ms > 0, "rollout did not finish");
    println!(
        "telemetry: rollout of 24 agents took {virtual_ms} ms simulated, {events} events, {:?} wall",
        t0.elapsed()
    );
}

#[test]
#[ignore = "timing"]
fn synthetic_rollout_scaling() {
    for n in [100usize, 500] {
        let t0 = Instant::now();
        let mut topo = Topology::builtin("telemetry").unwrap();
        let template = topo.nodes[3].clone();
        topo.nodes.truncate(3);
        for i in 0..n {
            let mut spec = template.clone();
            spec.node.meta.name = format!("w-{i:05}");
            spec.node.taints.clear();
            spec.node.internal_ips = vec![std::net::IpAddr::V4(std::net::Ipv4Addr::from(
                0xac10_0000u32 + i as u32 + 10,
            ))];
            topo.nodes.push(spec);
        }
        let mut e = Engine::from_topology(&topo, SimConfig::default()).unwrap();
        e.run_until(30_000);
        // maxUnavailable 10% for a rollout of reasonable virtual length.
        let key = ObjectKey::new(Kind::DaemonSet, "telemetry", "agent");
        let mut w = e.get(&key).unwrap().as_workload().unwrap().clone();
        w.workload.max_unavailable = Some("10%".into());
        e.update(Object::Workload(w), None).unwrap();
        e.run_for(30_000);
        let (virtual_ms, events) = rollout(&mut e, "telemetry", "agent", 36_000_000);
        println!(
            "{n} nodes: rollout {virtual_ms} ms simulated, {events} events, {:?} wall",
            t0.elapsed()
        );
    }
}
