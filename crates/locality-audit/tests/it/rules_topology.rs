//! Preferences, hints, versions and slices: LOC005–LOC012, LOC014, LOC018.
//! Each rule: a case that fires it and the nearest case that must not.

use crate::support;

use locality_audit::{RuleId, Severity};
use locality_model::endpointslice::{NodeIndex, TopologyCache, derive_endpoint_slices};
use locality_model::features::ControlPlaneFeatures;
use locality_model::objects::*;
use locality_model::version::KubeVersion;
use support::*;

/// Three zones, two nodes each, one client per node, `web` backends on the given nodes.
fn zoned(td: Option<&str>, on: &[&str]) -> ClusterState {
    let ns = nodes(6, &["zone-a", "zone-b", "zone-c"]);
    let mut pods = clients(&ns);
    pods.extend(backends("app", "web", on));
    let mut s = service("app", "web", "web");
    s.traffic_distribution = td.map(str::to_string);
    ClusterState {
        nodes: ns,
        pods,
        services: vec![s],
        workloads: vec![deployment("app", "web", "web", on.len() as u32)],
        ..Default::default()
    }
}

const ALL6: [&str; 6] = ["node-1", "node-2", "node-3", "node-4", "node-5", "node-6"];

#[test]
fn loc005_fires_for_prefer_close_on_134_plus() {
    let r = run(&zoned(Some("PreferClose"), &ALL6));
    let f = one(&r, RuleId::Loc005);
    assert_eq!(f.severity, Severity::Info);
    assert!(f.fix.contains("PreferSameZone"));
}

#[test]
fn loc005_not_before_134_or_for_prefer_same_zone() {
    let r = run_with(
        &zoned(Some("PreferClose"), &ALL6),
        versions((1, 33), (1, 33)),
        &Default::default(),
    );
    none(&r, RuleId::Loc005);
    none(&run(&zoned(Some("PreferSameZone"), &ALL6)), RuleId::Loc005);
}

#[test]
fn loc006_fires_for_preference_under_itp_local() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    state.services[0].internal_traffic_policy = Some(TrafficPolicy::Local);
    let f = one(&run(&state), RuleId::Loc006).clone();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.message.contains("no effect"), "{}", f.message);
}

#[test]
fn loc006_says_external_traffic_is_still_filtered() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    let s = &mut state.services[0];
    s.internal_traffic_policy = Some(TrafficPolicy::Local);
    s.type_ = ServiceType::NodePort;
    s.ports[0].node_port = 30001;
    let f = one(&run(&state), RuleId::Loc006).clone();
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.message.contains("only filters external traffic"),
        "{}",
        f.message
    );
}

#[test]
fn loc006_not_with_cluster_policy() {
    none(&run(&zoned(Some("PreferSameZone"), &ALL6)), RuleId::Loc006);
}

/// Observed slice for `web` with ready endpoints on node-1..3; zone hints on those listed.
fn hinted_slice(state: &mut ClusterState, hinted: &[bool]) {
    let svc = state.services[0].clone();
    let eps = hinted
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let n = &state.nodes[i];
            Endpoint {
                addresses: vec![format!("10.1.0.{}", i + 1).parse().unwrap()],
                conditions: EndpointConditions {
                    ready: Some(true),
                    serving: Some(true),
                    terminating: Some(false),
                },
                node_name: Some(n.meta.name.clone()),
                zone: n.zone().map(str::to_string),
                hints: h.then(|| EndpointHints {
                    for_zones: vec![n.zone().unwrap().to_string()],
                    for_nodes: vec![],
                }),
                ..Default::default()
            }
        })
        .collect();
    let mut m = meta("app", "web-abcde");
    m.labels.insert(LABEL_SERVICE_NAME.into(), svc.meta.name.clone());
    state.endpoint_slices.push(EndpointSlice {
        meta: m,
        address_type: AddressType::IPv4,
        endpoints: eps,
        ports: vec![EndpointPort {
            name: Some("http".into()),
            port: Some(8080),
            protocol: Some(Protocol::TCP),
        }],
    });
}

#[test]
fn loc007_fires_when_one_ready_endpoint_lacks_the_zone_hint() {
    let mut state = zoned(Some("PreferSameZone"), &[]);
    hinted_slice(&mut state, &[true, true, false]);
    let r = run(&state);
    let f = one(&r, RuleId::Loc007);
    assert!(f.message.contains("10.1.0.3:8080"), "{}", f.message);
    assert!(f.objects.iter().any(|o| o.name == "web-abcde"));
}

#[test]
fn loc007_not_when_all_are_hinted() {
    let mut state = zoned(Some("PreferSameZone"), &[]);
    hinted_slice(&mut state, &[true, true, true]);
    none(&run(&state), RuleId::Loc007);
}

#[test]
fn loc008_fires_for_endpoints_on_zoneless_nodes() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    state.nodes[5].meta.labels.remove(LABEL_ZONE);
    let r = run(&state);
    let f = one(&r, RuleId::Loc008);
    assert_eq!(f.nodes[0].node, "node-6");
    // The derived slices then lack that endpoint's hint: LOC007 explains the consequence.
    one(&r, RuleId::Loc007);
}

#[test]
fn loc008_not_when_every_node_has_a_zone_or_without_preference() {
    none(&run(&zoned(Some("PreferSameZone"), &ALL6)), RuleId::Loc008);
    let mut state = zoned(None, &ALL6);
    state.nodes[5].meta.labels.remove(LABEL_ZONE);
    none(&run(&state), RuleId::Loc008);
}

fn auto(on: &[&str]) -> ClusterState {
    let mut state = zoned(None, on);
    state.services[0]
        .meta
        .annotations
        .insert(ANNOTATION_TOPOLOGY_MODE.into(), "Auto".into());
    state
}

#[test]
fn loc009_recomputes_the_safeguard() {
    let r = run(&auto(&["node-1", "node-2"]));
    let f = one(&r, RuleId::Loc009);
    assert!(
        f.message
            .contains("Insufficient number of endpoints (2 endpoints, 3 zones)"),
        "{}",
        f.message
    );
}

#[test]
fn loc009_not_when_auto_hints_are_allocated() {
    let r = run(&auto(&ALL6));
    none(&r, RuleId::Loc009);
}

#[test]
fn loc009_on_observed_slices_without_hints() {
    // Observed slices with no hints and only two endpoints: recomputed from the slices.
    let mut state = auto(&[]);
    hinted_slice(&mut state, &[false, false]);
    state.endpoint_slices[0]
        .meta
        .labels
        .insert(LABEL_MANAGED_BY.into(), CONTROLLER_NAME.into());
    let f = one(&run(&state), RuleId::Loc009).clone();
    assert!(
        f.message.contains("Insufficient number of endpoints"),
        "{}",
        f.message
    );
}

#[test]
fn loc010_fires_when_annotation_and_field_are_both_set() {
    let mut state = auto(&ALL6);
    state.services[0].traffic_distribution = Some("PreferSameZone".into());
    one(&run(&state), RuleId::Loc010);
}

#[test]
fn loc010_not_when_annotation_is_disabled() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    state.services[0]
        .meta
        .annotations
        .insert(ANNOTATION_TOPOLOGY_MODE.into(), "Disabled".into());
    none(&run(&state), RuleId::Loc010);
}

#[test]
fn loc011_fires_when_a_zone_with_many_clients_has_one_endpoint() {
    // zone-a (node-1, node-4) has one endpoint and 20 client pods; zones b, c two endpoints each.
    let mut state = zoned(
        Some("PreferSameZone"),
        &["node-1", "node-2", "node-5", "node-3", "node-6"],
    );
    for i in 0..18 {
        state.pods.push(pod(
            "clients",
            &format!("busy-{i}"),
            "client",
            "node-4",
            &format!("10.98.0.{}", i + 1),
        ));
    }
    let r = run(&state);
    let f = one(&r, RuleId::Loc011);
    assert!(f.message.contains("10.1.0.1:8080"), "{}", f.message);
    assert_eq!(f.nodes[0].node, "node-1");
}

#[test]
fn loc011_not_when_clients_and_endpoints_are_even() {
    none(&run(&zoned(Some("PreferSameZone"), &ALL6)), RuleId::Loc011);
    // Same skew without a preference: the load is even.
    let mut state = zoned(None, &["node-1", "node-2", "node-5", "node-3", "node-6"]);
    for i in 0..18 {
        state.pods.push(pod(
            "clients",
            &format!("busy-{i}"),
            "client",
            "node-4",
            &format!("10.98.0.{}", i + 1),
        ));
    }
    none(&run(&state), RuleId::Loc011);
}

#[test]
fn loc012_prefer_same_node_with_old_kube_proxy() {
    let r = run_with(
        &zoned(Some("PreferSameNode"), &ALL6),
        versions((1, 35), (1, 33)),
        &Default::default(),
    );
    let f = fired(&r, RuleId::Loc012);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(f[0].message.contains("node hints"), "{}", f[0].message);
    assert_eq!(f[0].node_count, 6);
}

#[test]
fn loc012_prefer_close_with_old_control_plane_and_hint_annotation_skew() {
    let r = run_with(
        &zoned(Some("PreferClose"), &ALL6),
        versions((1, 30), (1, 30)),
        &Default::default(),
    );
    let f = one(&r, RuleId::Loc012);
    assert!(f.message.contains("1.31"), "{}", f.message);
    // Control plane 1.31 writes hints; kube-proxy 1.30 needs the annotation to use them.
    let r = run_with(
        &zoned(Some("PreferClose"), &ALL6),
        versions((1, 31), (1, 30)),
        &Default::default(),
    );
    let f = one(&r, RuleId::Loc012);
    assert!(f.message.contains("topology annotation"), "{}", f.message);
}

#[test]
fn loc012_not_on_supported_versions() {
    let r = run_with(
        &zoned(Some("PreferSameNode"), &ALL6),
        versions((1, 35), (1, 34)),
        &Default::default(),
    );
    none(&r, RuleId::Loc012);
}

fn controller_slices(state: &ClusterState) -> Vec<EndpointSlice> {
    let svc = &state.services[0];
    let pods: Vec<&Pod> = state
        .pods
        .iter()
        .filter(|p| {
            p.meta.namespace == svc.meta.namespace
                && p.meta.labels.get("app").map(String::as_str) == Some("web")
        })
        .collect();
    let idx = NodeIndex::new(&state.nodes);
    let topo = TopologyCache::from_nodes(&state.nodes);
    let cp = ControlPlaneFeatures::at(KubeVersion::NEWEST);
    let mut slices = derive_endpoint_slices(svc, &pods, &idx, &topo, &cp).slices;
    for s in &mut slices {
        s.meta.creation_timestamp = Some("2025-01-01T00:00:00Z".into());
    }
    slices
}

#[test]
fn loc014_not_when_observed_slices_match_the_controller() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    state.endpoint_slices = controller_slices(&state);
    none(&run(&state), RuleId::Loc014);
}

#[test]
fn loc014_fires_on_a_stale_condition_and_a_missing_endpoint() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    let mut slices = controller_slices(&state);
    slices[0].endpoints[0].conditions.ready = Some(false);
    slices[0].endpoints.pop();
    state.endpoint_slices = slices;
    let r = run(&state);
    let f = one(&r, RuleId::Loc014);
    assert!(f.message.contains("1 endpoint missing"), "{}", f.message);
    assert!(f.message.contains("different fields"), "{}", f.message);
}

#[test]
fn loc014_ignores_pods_newer_than_the_slices() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    let mut slices = controller_slices(&state);
    let dropped = slices[0].endpoints.pop().unwrap();
    let pod_name = dropped.target_ref.unwrap().2;
    state.endpoint_slices = slices;
    let p = state.pods.iter_mut().find(|p| p.meta.name == pod_name).unwrap();
    p.meta.creation_timestamp = Some("2025-01-01T00:00:05Z".into());
    none(&run(&state), RuleId::Loc014);
}

#[test]
fn loc014_ignores_slices_not_managed_by_the_controller() {
    let mut state = zoned(Some("PreferSameZone"), &ALL6);
    let mut slices = controller_slices(&state);
    slices[0].endpoints.pop();
    slices[0]
        .meta
        .labels
        .insert(LABEL_MANAGED_BY.into(), "my-operator".into());
    state.endpoint_slices = slices;
    none(&run(&state), RuleId::Loc014);
}

#[test]
fn loc018_fires_for_itp_local_on_headless() {
    let mut state = zoned(None, &ALL6);
    state.services[0].headless = true;
    state.services[0].cluster_ips.clear();
    state.services[0].internal_traffic_policy = Some(TrafficPolicy::Local);
    let f = one(&run(&state), RuleId::Loc018).clone();
    assert!(f.message.contains("headless"), "{}", f.message);
}

#[test]
fn loc018_not_for_explicit_cluster_policy_on_headless() {
    let mut state = zoned(None, &ALL6);
    state.services[0].headless = true;
    state.services[0].cluster_ips.clear();
    state.services[0].internal_traffic_policy = Some(TrafficPolicy::Cluster);
    none(&run(&state), RuleId::Loc018);
}

/// A selector-less Service asking for `topology-mode: Auto` whose slices are mirrored from an
/// Endpoints object: the mirroring controller writes no hints, and LOC009 says so.
#[test]
fn loc009_names_mirroring_when_the_slices_are_mirrored() {
    let mut state = zoned(None, &[]);
    let svc = &mut state.services[0];
    svc.selector = None;
    svc.meta
        .annotations
        .insert(ANNOTATION_TOPOLOGY_MODE.into(), "Auto".into());
    let node_names: Vec<String> = state.nodes.iter().map(|n| n.meta.name.clone()).collect();
    let address = |i: usize| EndpointAddress {
        ip: format!("10.9.0.{}", i + 1),
        hostname: None,
        node_name: Some(node_names[i].clone()),
        target_ref: None,
        target_uid: String::new(),
    };
    state.endpoints.push(Endpoints {
        meta: meta("app", &state.services[0].meta.name.clone()),
        subsets: vec![EndpointSubset {
            addresses: (0..6).map(address).collect(),
            not_ready_addresses: vec![],
            ports: vec![EndpointsPort {
                name: "http".into(),
                port: 8080,
                protocol: Protocol::TCP,
            }],
        }],
    });
    let r = run(&state);
    let f = one(&r, RuleId::Loc009);
    assert!(f.message.contains("mirrored"), "{}", f.message);
    assert!(f.fix.contains("selector"), "{}", f.fix);
}
