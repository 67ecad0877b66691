//! The simulated controllers' invariants: the in-place EndpointSlice controller agrees with
//! the model's derivation and writes only what changed; DaemonSet rolling updates respect
//! `maxUnavailable` / `maxSurge`; the event log is compacted.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};

use locality_model::endpointslice::{TopologyCache, derive_endpoint_slices};
use locality_model::features::ControlPlaneFeatures;
use locality_model::objects::{Endpoint, EndpointSlice, Node, Pod, TargetPort, WorkloadKind};
use locality_model::selector::service_selects;
use locality_sim::EventType;
use locality_sim::builders::{self, container_port, labels, netexec_behaviour};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig};

const NS: &str = "default";

/// `n` worker nodes over three zones.
fn cluster(n: usize, config: SimConfig) -> Engine {
    let mut e = Engine::new(config);
    for i in 0..n {
        let zone = ["zone-a", "zone-b", "zone-c"][i % 3];
        let ip = IpAddr::V4(Ipv4Addr::from(
            u32::from(Ipv4Addr::new(172, 16, 0, 10)) + i as u32,
        ));
        e.create(Object::Node(builders::node(
            &format!("w-{i:03}"),
            Some(zone),
            8000,
            ip,
        )))
        .unwrap();
    }
    e
}

fn web(e: &mut Engine, replicas: u32, traffic_distribution: Option<&str>) {
    let spec = locality_model::objects::PodSpec {
        ports: vec![container_port("http", 8080)],
        ..Default::default()
    };
    e.create(builders::workload(
        WorkloadKind::Deployment,
        NS,
        "web",
        labels(&[("app", "web")]),
        spec,
        Some(replicas),
        netexec_behaviour(8080),
    ))
    .unwrap();
    let mut svc = builders::service(
        NS,
        "web",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    );
    svc.traffic_distribution = traffic_distribution.map(str::to_string);
    e.create(Object::Service(svc)).unwrap();
}

fn slices(e: &Engine, service: &str) -> Vec<EndpointSlice> {
    e.store()
        .list_namespace(Kind::EndpointSlice, NS)
        .filter_map(|(_, s)| s.object.as_endpoint_slice().cloned())
        .filter(|s| s.service_name() == Some(service))
        .collect()
}

/// Endpoints by pod name, in a canonical form.
fn endpoints(slices: &[EndpointSlice]) -> BTreeMap<String, Endpoint> {
    slices
        .iter()
        .flat_map(|s| s.endpoints.iter())
        .map(|e| (e.target_ref.clone().unwrap().2, e.clone()))
        .collect()
}

/// What the model derives from the engine's current pods and nodes.
fn derived(e: &Engine, service: &str) -> BTreeMap<String, Endpoint> {
    let svc = e
        .get(&ObjectKey::new(Kind::Service, NS, service))
        .and_then(|o| o.as_service())
        .unwrap()
        .clone();
    let nodes: BTreeMap<String, Node> = e
        .store()
        .list(Kind::Node)
        .filter_map(|(_, s)| s.object.as_node().cloned())
        .map(|n| (n.meta.name.clone(), n))
        .collect();
    let pods: Vec<Pod> = e
        .store()
        .list_namespace(Kind::Pod, NS)
        .filter_map(|(_, s)| s.object.as_pod().map(|p| p.pod.clone()))
        .filter(|p| service_selects(svc.selector.as_ref().unwrap(), &p.meta.labels))
        .collect();
    let refs: Vec<&Pod> = pods.iter().collect();
    let topology = TopologyCache::from_nodes(nodes.values());
    let features = ControlPlaneFeatures::at(e.config().kube_version);
    endpoints(&derive_endpoint_slices(&svc, &refs, &nodes, &topology, &features).slices)
}

#[test]
fn in_place_slices_hold_what_the_model_derives() {
    for td in [None, Some("PreferSameZone"), Some("PreferSameNode")] {
        let mut e = cluster(9, SimConfig::default());
        web(&mut e, 230, td);
        e.run_until(30_000);
        assert_eq!(endpoints(&slices(&e, "web")).len(), 230, "{td:?}");
        assert_eq!(
            endpoints(&slices(&e, "web")),
            derived(&e, "web"),
            "{td:?}: settled"
        );
        // Mid-change: delete a few pods and compare while they terminate and are replaced.
        let victims: Vec<String> = e
            .store()
            .list_namespace(Kind::Pod, NS)
            .map(|(k, _)| k.name.to_string())
            .take(7)
            .collect();
        for v in &victims {
            e.delete(&ObjectKey::new(Kind::Pod, NS, v.as_str())).unwrap();
        }
        for t in [100, 1_500, 4_000, 40_000] {
            e.run_for(t);
            assert_eq!(
                endpoints(&slices(&e, "web")),
                derived(&e, "web"),
                "{td:?}: after {t} ms"
            );
        }
        assert!(
            slices(&e, "web").iter().all(|s| s.endpoints.len() <= 100),
            "{td:?}: a slice over 100 endpoints"
        );
    }
}

#[test]
fn one_pod_change_rewrites_one_slice() {
    let mut e = cluster(6, SimConfig::default());
    web(&mut e, 250, None);
    e.run_until(30_000);
    let names_before: BTreeSet<String> = slices(&e, "web").into_iter().map(|s| s.meta.name).collect();
    assert_eq!(
        names_before.len(),
        3,
        "250 endpoints in 3 slices: {names_before:?}"
    );
    let victim = slices(&e, "web")[1].endpoints[17].target_ref.clone().unwrap().2;
    let holder = slices(&e, "web")[1].meta.name.clone();
    let rv = e.store().resource_version();
    e.delete(&ObjectKey::new(Kind::Pod, NS, victim.as_str())).unwrap();
    e.run_for(200);
    let touched: Vec<(EventType, String)> = e
        .events_since(rv)
        .unwrap()
        .iter()
        .filter(|ev| ev.key.kind == Kind::EndpointSlice)
        .map(|ev| (ev.event_type, ev.key.name.to_string()))
        .collect();
    assert!(!touched.is_empty(), "the terminating endpoint must be written");
    assert!(
        touched
            .iter()
            .all(|(t, n)| *t == EventType::Modified && *n == holder),
        "only {holder} may change while {victim} terminates: {touched:?}"
    );
    e.run_for(30_000);
    let names_after: BTreeSet<String> = slices(&e, "web").into_iter().map(|s| s.meta.name).collect();
    assert_eq!(names_before, names_after, "slice names are stable");
    assert_eq!(endpoints(&slices(&e, "web")).len(), 250);
}

#[test]
fn scaling_to_zero_leaves_a_placeholder_and_back() {
    let mut e = cluster(3, SimConfig::default());
    web(&mut e, 120, None);
    e.run_until(30_000);
    assert_eq!(slices(&e, "web").len(), 2);
    let key = ObjectKey::new(Kind::Deployment, NS, "web");
    let mut w = e.get(&key).unwrap().as_workload().unwrap().clone();
    w.workload.replicas = Some(0);
    e.update(Object::Workload(w.clone()), None).unwrap();
    e.run_for(120_000);
    let s = slices(&e, "web");
    assert_eq!(s.len(), 1, "one placeholder: {s:?}");
    assert!(s[0].endpoints.is_empty() && s[0].ports.is_empty());
    w.workload.replicas = Some(3);
    e.update(Object::Workload(w), None).unwrap();
    e.run_for(30_000);
    assert_eq!(endpoints(&slices(&e, "web")), derived(&e, "web"));
    assert_eq!(
        slices(&e, "web").len(),
        1,
        "the placeholder is filled, not kept beside"
    );
}

/// Agent pods: (new template, Ready, terminating).
fn agents(e: &Engine) -> Vec<(bool, bool, bool)> {
    e.store()
        .list_namespace(Kind::Pod, "telemetry")
        .filter_map(|(_, s)| s.object.as_pod())
        .filter(|p| p.pod.meta.labels.get("app").map(String::as_str) == Some("agent"))
        .map(|p| {
            (
                p.pod.meta.labels.contains_key("rev"),
                p.pod.ready,
                p.pod.meta.deletion_timestamp.is_some(),
            )
        })
        .collect()
}

fn daemonset_rollout(max_surge: &str, max_unavailable: &str) -> (usize, usize) {
    let mut e = cluster(30, SimConfig::default());
    e.create(builders::namespace("telemetry")).unwrap();
    let (agent, svc) = builders::telemetry_agent("telemetry", max_unavailable);
    e.create(Object::Service(svc)).unwrap();
    e.create(agent).unwrap();
    e.run_until(60_000);
    assert_eq!(agents(&e).iter().filter(|a| a.1).count(), 30, "settled");
    let key = ObjectKey::new(Kind::DaemonSet, "telemetry", "agent");
    let mut w = e.get(&key).unwrap().as_workload().unwrap().clone();
    w.workload.template_labels.insert("rev".into(), "2".into());
    w.workload.max_surge = Some(max_surge.into());
    e.update(Object::Workload(w), None).unwrap();
    let (mut most_unready, mut most_pods) = (0, 0);
    for _ in 0..6_000 {
        e.run_for(100);
        let a = agents(&e);
        let live: Vec<_> = a.iter().filter(|x| !x.2).collect();
        // Nodes without a Ready, non-terminating pod.
        let serving = live.iter().filter(|x| x.1).count().min(30);
        most_unready = most_unready.max(30 - serving);
        most_pods = most_pods.max(live.len());
        if a.iter().all(|x| x.0 && x.1 && !x.2) && a.len() == 30 {
            return (most_unready, most_pods);
        }
    }
    panic!("rollout maxSurge {max_surge} maxUnavailable {max_unavailable} did not finish");
}

#[test]
fn daemonset_rollouts_respect_max_unavailable_and_max_surge() {
    let (unready, pods) = daemonset_rollout("0", "3");
    assert_eq!(unready, 3, "maxUnavailable 3 is used and not exceeded");
    assert!(pods <= 30, "no surge: {pods}");
    let (unready, pods) = daemonset_rollout("10%", "0");
    assert_eq!(unready, 0, "surge keeps every node served");
    assert!(
        pods > 30 && pods <= 33,
        "surge of 10% of 30 → at most 33 pods: {pods}"
    );
}

#[test]
fn the_event_log_is_compacted_and_old_watches_get_gone() {
    let mut e = cluster(
        3,
        SimConfig {
            event_history: 50,
            ..SimConfig::default()
        },
    );
    web(&mut e, 40, None);
    e.run_until(60_000);
    assert!(e.store().resource_version() > 200, "enough events happened");
    assert!(
        e.store().events().len() <= 100,
        "log cut back: {}",
        e.store().events().len()
    );
    assert!(e.events_since(1).is_err(), "a watch from rv 1 gets 410 Gone");
    assert_eq!(
        endpoints(&slices(&e, "web")),
        derived(&e, "web"),
        "controllers unaffected"
    );
    assert_eq!(
        endpoints(&slices(&e, "web"))
            .values()
            .filter(|x| x.conditions.ready == Some(true))
            .count(),
        40
    );
}

/// `--feature-gates` reach the simulated components: with kube-controller-manager's
/// `PreferSameTrafficDistribution` off, the EndpointSlice controller writes no node hints
/// for a PreferSameNode Service (upstream `endpointslice_controller.go` gives the reconciler
/// the gate); with kube-proxy's off, the simulated kube-proxies do not read them. At 1.34,
/// where the gate is beta and can be switched off.
#[test]
fn feature_gates_reach_the_simulated_controllers_and_kube_proxies() {
    let v1_34 = locality_model::version::KubeVersion::new(1, 34);
    let node_hints = |gates: &[&str]| {
        let config = SimConfig {
            feature_gates: locality_model::featuregate::FeatureGates::from_flags(gates).unwrap(),
            kube_version: v1_34,
            kube_proxy_version: v1_34,
            ..SimConfig::default()
        };
        config.check_feature_gates().unwrap();
        let mut e = cluster(3, config);
        web(&mut e, 6, Some("PreferSameNode"));
        e.run_until(30_000);
        let written = endpoints(&slices(&e, "web"))
            .values()
            .filter(|x| x.hints.as_ref().is_some_and(|h| !h.for_nodes.is_empty()))
            .count();
        let read = e.kube_proxy("w-000").unwrap().features.node_hints;
        (written, read)
    };
    assert_eq!(node_hints(&[]), (6, true), "the release's defaults");
    assert_eq!(
        node_hints(&["kube-controller-manager:PreferSameTrafficDistribution=false"]),
        (0, true)
    );
    assert_eq!(
        node_hints(&["kube-proxy:PreferSameTrafficDistribution=false"]),
        (6, false)
    );
    // Refused as the release refuses it: a gate locked on at 1.35.
    let locked = SimConfig {
        feature_gates: locality_model::featuregate::FeatureGates::from_flags(&[
            "ServiceTrafficDistribution=false",
        ])
        .unwrap(),
        ..SimConfig::default()
    };
    assert!(locked.check_feature_gates().is_err());
}

/// Pods of `web` that exist.
fn web_pods(e: &Engine) -> usize {
    e.store()
        .list_namespace(Kind::Pod, NS)
        .filter(|(_, s)| {
            s.object
                .as_pod()
                .is_some_and(|p| p.pod.meta.labels.get("app").map(String::as_str) == Some("web"))
        })
        .count()
}

/// A ReplicaSet makes at most 500 pods per sync (`BurstReplicas`) and the next burst once its
/// API client has sent the last (500 requests at kube-controller-manager's 20 per second: 25
/// virtual seconds), so a Deployment of 1,200 has 500 pods first, 1,000 after 25 s, all
/// after 50 s; scaled down it deletes likewise.
#[test]
fn replica_sets_make_pods_in_bursts_of_500() {
    let mut e = cluster(3, SimConfig::default());
    web(&mut e, 1_200, None);
    e.run_for(1_000);
    assert_eq!(web_pods(&e), 500, "the first burst");
    e.run_for(20_000);
    assert_eq!(web_pods(&e), 500, "the burst is still being sent");
    e.run_for(5_000);
    assert_eq!(web_pods(&e), 1_000, "the second burst, 25 s later");
    e.run_for(25_000);
    assert_eq!(web_pods(&e), 1_200, "the rest");
    // A small Deployment is made at once, as before.
    let mut small = cluster(3, SimConfig::default());
    web(&mut small, 40, None);
    small.run_for(1_000);
    assert_eq!(web_pods(&small), 40);
}
