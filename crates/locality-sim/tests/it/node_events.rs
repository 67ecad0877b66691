//! Node events of a what-if, on a Deployment with both its replicas on node-0:
//!
//! - `--drain NODE` honours PodDisruptionBudgets, as `kubectl drain` through the eviction
//!   subresource: with a budget of `minAvailable: 1` the second pod goes only once a
//!   replacement is Ready elsewhere; without the budget both go at once; a budget that never
//!   allows a disruption leaves the drain unfinished at the limit, and the report says why.
//! - `--node-down NODE`: NotReady after the node monitor grace period, the unreachable taint
//!   one monitor pass later, the pods evicted `tolerationSeconds` (300 s, admission's default)
//!   after the taint, their endpoints not Ready from NotReady on and terminating once evicted;
//!   the what-if settles only once the replacements are Ready.

use crate::whatif::config;
use locality_model::objects::{
    LabelSelector, ObjectMeta, PodDisruptionBudget, PodSpec, TargetPort, WorkloadKind,
};
use locality_sim::builders::{container_port, labels, namespace, netexec_behaviour, workload};
use locality_sim::whatif::{Change, RunOptions, WhatIf, run};
use locality_sim::{DEFAULT_TOLERATION_SECONDS, NODE_MONITOR_PERIOD_MS, TAINT_UNREACHABLE};
use locality_sim::{EVICTION_RETRY_MS, stored_budget};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};

fn set_unschedulable(e: &mut Engine, node: &str, unschedulable: bool) {
    let key = ObjectKey::new(Kind::Node, "", node);
    let mut n = e.get(&key).and_then(Object::as_node).cloned().unwrap();
    n.unschedulable = unschedulable;
    e.update(Object::Node(n), None).unwrap();
}

fn budget(min_available: &str) -> PodDisruptionBudget {
    PodDisruptionBudget {
        meta: ObjectMeta {
            name: "web".into(),
            namespace: "shop".into(),
            ..ObjectMeta::default()
        },
        selector: Some(LabelSelector {
            match_labels: labels(&[("app", "web")]),
            match_expressions: Vec::new(),
        }),
        min_available: Some(min_available.into()),
        ..PodDisruptionBudget::default()
    }
}

/// Three nodes; the Deployment `shop/web` (2 replicas) on node-0 only (the others cordoned
/// while it starts, then uncordoned) behind the Service `shop/web`; `pdb`, when given, selects
/// its pods.
fn cluster(pdb: Option<PodDisruptionBudget>) -> Engine {
    let t = Topology::from_yaml(
        "nodes:\n  - name: node-0\n  - name: node-1\n  - name: node-2\n",
        "drain",
    )
    .unwrap();
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    set_unschedulable(&mut e, "node-1", true);
    set_unschedulable(&mut e, "node-2", true);
    e.create(namespace("shop")).unwrap();
    let spec = PodSpec {
        ports: vec![container_port("http", 8080)],
        ..PodSpec::default()
    };
    e.create(workload(
        WorkloadKind::Deployment,
        "shop",
        "web",
        labels(&[("app", "web")]),
        spec,
        Some(2),
        netexec_behaviour(8080),
    ))
    .unwrap();
    e.create(Object::Service(locality_sim::builders::service(
        "shop",
        "web",
        labels(&[("app", "web")]),
        80,
        TargetPort::Number(8080),
    )))
    .unwrap();
    if let Some(p) = pdb {
        e.create(stored_budget(&p)).unwrap();
    }
    e.run_until(30_000);
    set_unschedulable(&mut e, "node-1", false);
    set_unschedulable(&mut e, "node-2", false);
    e.run_until(40_000);
    let ready_on_0 = web_pods(&e)
        .iter()
        .filter(|(node, ready, deleting)| node == "node-0" && *ready && !deleting)
        .count();
    assert_eq!(ready_on_0, 2, "both replicas run on node-0 before the drain");
    e
}

/// (node, ready, being deleted) of every pod of `shop/web`.
fn web_pods(e: &Engine) -> Vec<(String, bool, bool)> {
    e.store()
        .list_namespace(Kind::Pod, "shop")
        .filter_map(|(_, s)| s.object.as_pod())
        .map(|p| {
            (
                p.pod.spec.node_name.clone(),
                p.pod.ready,
                p.pod.meta.deletion_timestamp.is_some(),
            )
        })
        .collect()
}

fn what_if(e: &mut Engine, change: Change, limit_ms: u64) -> WhatIf {
    let options = RunOptions {
        limit_ms,
        ..RunOptions::default()
    };
    run(e, &[change], &config(), &options, &mut |_| {}).unwrap()
}

fn drain(e: &mut Engine, limit_ms: u64) -> WhatIf {
    let change = Change::Drain {
        node: "node-0".into(),
    };
    what_if(e, change, limit_ms)
}

/// The store's events: when a pod of `shop/web` off node-0 first turned Ready.
fn replacement_ready_times(e: &Engine) -> Vec<u64> {
    let mut seen = std::collections::BTreeSet::new();
    let mut times = Vec::new();
    for ev in e.store().events() {
        let Some(p) = ev.object.as_pod() else { continue };
        if ev.key.namespace == "shop"
            && p.pod.spec.node_name != "node-0"
            && p.pod.ready
            && seen.insert(ev.key.clone())
        {
            times.push(ev.time);
        }
    }
    times
}

#[test]
fn the_second_eviction_waits_for_a_ready_replacement() {
    let mut e = cluster(Some(budget("1")));
    let start = e.now();
    let r = drain(&mut e, 600_000);
    assert!(r.settled, "{:?}", r.unsettled);
    let d = e.drain_status("node-0").unwrap().clone();
    assert_eq!(d.evicted.len(), 2, "{d:?}");
    assert!(d.finished_at.is_some());
    let (first, second) = (d.evicted[0].0, d.evicted[1].0);
    assert_eq!(first, start, "the first eviction goes through at once");
    let ready = replacement_ready_times(&e);
    let replaced = *ready.first().expect("a replacement turned Ready");
    assert!(replaced > first, "{replaced} > {first}");
    // The second eviction was refused until the replacement was Ready, then went through at
    // the next retry, 5 s after the previous one.
    assert!(
        second >= replaced,
        "second eviction {second} before the replacement was Ready {replaced}"
    );
    assert!(second < replaced + EVICTION_RETRY_MS, "{second} {replaced}");
    assert_eq!((second - first) % EVICTION_RETRY_MS, 0, "{second} {first}");
    // Once the second pod is gone too, both replicas run elsewhere.
    let pods = web_pods(&e);
    assert_eq!(
        pods.iter()
            .filter(|(n, ready, _)| n != "node-0" && *ready)
            .count(),
        2,
        "{pods:?}"
    );
    assert!(pods.iter().all(|(n, _, _)| n != "node-0"), "{pods:?}");
}

#[test]
fn without_a_budget_both_pods_are_evicted_at_once() {
    let mut e = cluster(None);
    let start = e.now();
    let r = drain(&mut e, 600_000);
    assert!(r.settled, "{:?}", r.unsettled);
    let d = e.drain_status("node-0").unwrap();
    let times: Vec<u64> = d.evicted.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, [start, start]);
}

#[test]
fn a_budget_that_never_allows_a_disruption_leaves_the_drain_unfinished_at_the_limit() {
    let mut e = cluster(Some(budget("2")));
    let r = drain(&mut e, 120_000);
    assert!(!r.settled);
    assert_eq!(r.duration_ms, 120_000, "the run ends at the limit");
    let why = r.unsettled.join("; ");
    assert!(why.contains("the drain of node node-0 did not finish"), "{why}");
    assert!(
        why.contains("disruption budget web needs 2 healthy pods and has 2"),
        "{why}"
    );
    let d = e.drain_status("node-0").unwrap();
    assert!(d.evicted.is_empty() && d.finished_at.is_none(), "{d:?}");
    assert_eq!(d.refused.len(), 2);
}

#[test]
fn a_node_down_is_marked_tainted_evicted_and_replaced_before_the_what_if_settles() {
    let mut e = cluster(None);
    let start = e.now();
    let grace = e.node_monitor_grace_period_ms();
    let change = Change::NodeDown {
        node: "node-0".into(),
    };
    let r = what_if(&mut e, change, 3_600_000);
    assert!(r.settled, "{:?}", r.unsettled);

    // The timeline, from the store's events.
    let mut not_ready = None;
    let mut tainted = None;
    let mut evicted = Vec::new();
    let mut endpoint_not_ready = None;
    let mut endpoint_terminating = None;
    for ev in e.store().events().iter().filter(|ev| ev.time >= start) {
        match &*ev.object {
            Object::Node(n) if n.meta.name == "node-0" => {
                if n.ready != Some(true) && not_ready.is_none() {
                    not_ready = Some(ev.time);
                }
                if n.taints
                    .iter()
                    .any(|t| t.key == TAINT_UNREACHABLE && t.effect == "NoExecute")
                    && tainted.is_none()
                {
                    tainted = Some(ev.time);
                }
            }
            Object::Pod(p)
                if p.pod.spec.node_name == "node-0"
                    && p.pod.meta.deletion_timestamp.is_some()
                    && !evicted.iter().any(|(_, k)| k == &ev.key) =>
            {
                evicted.push((ev.time, ev.key.clone()));
            }
            Object::EndpointSlice(s) => {
                let on_0: Vec<_> = s
                    .endpoints
                    .iter()
                    .filter(|ep| ep.node_name.as_deref() == Some("node-0"))
                    .collect();
                if !on_0.is_empty()
                    && on_0.iter().all(|ep| ep.conditions.ready == Some(false))
                    && endpoint_not_ready.is_none()
                {
                    endpoint_not_ready = Some(ev.time);
                }
                if !on_0.is_empty()
                    && on_0.iter().all(|ep| ep.conditions.terminating == Some(true))
                    && endpoint_terminating.is_none()
                {
                    endpoint_terminating = Some(ev.time);
                }
            }
            _ => {}
        }
    }
    let not_ready = not_ready.expect("node-0 turned NotReady");
    // The first monitor pass after the kubelet was silent for longer than the grace period.
    assert!(not_ready > start + grace, "{not_ready} {start} {grace}");
    assert!(
        not_ready <= start + grace + NODE_MONITOR_PERIOD_MS,
        "{not_ready} {start} {grace}"
    );
    let tainted = tainted.expect("node-0 got the unreachable taint");
    assert_eq!(
        tainted,
        not_ready + NODE_MONITOR_PERIOD_MS,
        "one pass after NotReady"
    );
    let toleration_ms = DEFAULT_TOLERATION_SECONDS as u64 * 1000;
    assert_eq!(evicted.len(), 2, "{evicted:?}");
    // The taint-eviction controller sees the taint one controller delay after it was written.
    let delay = SimConfig::default().controller_delay_ms;
    assert!(
        evicted.iter().all(|(t, _)| *t == tainted + delay + toleration_ms),
        "{evicted:?} {tainted}"
    );
    // Their endpoints stop being Ready when the pods are marked not Ready, and are
    // terminating once evicted (the stopped kubelet never finishes the deletion).
    let endpoint_not_ready = endpoint_not_ready.expect("node-0's endpoints turned not Ready");
    assert!(
        endpoint_not_ready >= not_ready && endpoint_not_ready < tainted,
        "{endpoint_not_ready}"
    );
    let endpoint_terminating = endpoint_terminating.expect("node-0's endpoints turned terminating");
    assert!(
        endpoint_terminating >= tainted + toleration_ms,
        "{endpoint_terminating}"
    );
    // The what-if waited for the evictions and the replacements.
    let replaced = replacement_ready_times(&e);
    assert_eq!(replaced.len(), 2, "{replaced:?}");
    let last_ready = *replaced.iter().max().unwrap();
    assert!(last_ready > tainted + toleration_ms, "{last_ready}");
    assert!(
        start + r.duration_ms >= last_ready,
        "{} {last_ready}",
        start + r.duration_ms
    );
}
