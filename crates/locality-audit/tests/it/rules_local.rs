//! Local policies and reachability: LOC001–LOC004, LOC013, LOC015–LOC017, LOC019, LOC020.
//! Each rule: a case that fires it and the nearest case that must not.

use crate::support;

use locality_audit::{RuleId, Severity};
use locality_model::objects::*;
use locality_model::proxy::ProxyMode;
use support::*;

#[test]
fn loc001_fires_on_client_nodes_without_local_agent() {
    let mut state = agent_cluster(5, &[1, 2, 3]);
    // node-5 runs three client pods: it is listed first.
    state
        .pods
        .push(pod("clients", "extra-1", "client", "node-5", "10.99.9.1"));
    state
        .pods
        .push(pod("clients", "extra-2", "client", "node-5", "10.99.9.2"));
    let r = run(&state);
    let f = one(&r, RuleId::Loc001);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.node_count, 2);
    assert_eq!(f.pod_count, 4);
    let listed: Vec<(&str, usize)> = f.nodes.iter().map(|n| (n.node.as_str(), n.pods)).collect();
    assert_eq!(listed, vec![("node-5", 3), ("node-4", 1)]);
    assert!(
        f.objects
            .iter()
            .any(|o| o.kind == "DaemonSet" && o.name == "agent")
    );
    assert!(f.message.contains("time out"), "{}", f.message);
    assert_eq!(f.port.as_ref().map(|p| p.port), Some(80));
    assert_eq!(
        f.docs_url,
        "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/"
    );
}

#[test]
fn loc001_not_when_every_client_node_has_an_agent() {
    let r = run(&agent_cluster(5, &[1, 2, 3, 4, 5]));
    none(&r, RuleId::Loc001);
}

#[test]
fn loc001_ignores_nodes_without_pods_but_counts_cordoned_clients() {
    let mut state = agent_cluster(4, &[1, 2, 3]);
    // node-4 cordoned, still runs its client; node-5 exists but runs nothing.
    state.nodes[3].unschedulable = true;
    state.nodes.push(node("node-5", Some("zone-a")));
    let r = run(&state);
    let f = one(&r, RuleId::Loc001);
    assert_eq!(
        f.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>(),
        vec!["node-4"]
    );
}

#[test]
fn loc001_on_ipvs_clusterip_is_refused_not_loc017() {
    let r = run_with(
        &agent_cluster(4, &[1, 2]),
        config(ProxyMode::Ipvs),
        &Default::default(),
    );
    let f = one(&r, RuleId::Loc001);
    assert!(f.message.contains("connection refused"), "{}", f.message);
    none(&r, RuleId::Loc017);
}

fn deployment_cluster(replicas: u32, on: &[&str]) -> ClusterState {
    let ns = nodes(5, &["zone-a", "zone-b"]);
    let mut pods = clients(&ns);
    pods.extend(backends("app", "cache", on));
    ClusterState {
        nodes: ns,
        pods,
        services: vec![itp_local(service("app", "cache", "cache"))],
        workloads: vec![deployment("app", "cache", "cache", replicas)],
        ..Default::default()
    }
}

#[test]
fn loc002_fires_when_replicas_are_fewer_than_client_nodes() {
    let r = run(&deployment_cluster(2, &["node-1", "node-2"]));
    let f = one(&r, RuleId::Loc002);
    assert!(
        f.message.contains("2 replicas for 5 client nodes"),
        "{}",
        f.message
    );
    assert!(
        f.objects
            .iter()
            .any(|o| o.kind == "Deployment" && o.name == "cache")
    );
    assert_eq!(f.node_count, 3);
}

#[test]
fn loc002_not_when_replicas_cover_client_nodes() {
    let r = run(&deployment_cluster(
        5,
        &["node-1", "node-2", "node-3", "node-4", "node-5"],
    ));
    none(&r, RuleId::Loc002);
    none(&r, RuleId::Loc001);
}

#[test]
fn loc002_finds_backing_deployment_through_owner_references() {
    // The Deployment's template labels do not match the selector; the pods' owner chain does.
    let mut state = deployment_cluster(2, &["node-1", "node-2"]);
    state.workloads[0].template_labels = labels(&[("app", "other")]);
    let mut rs = workload(WorkloadKind::ReplicaSet, "app", "cache-5d8f", "other", Some(2));
    rs.meta.owner_references.push(OwnerReference {
        kind: "Deployment".into(),
        name: "cache".into(),
        uid: String::new(),
        controller: true,
    });
    state.workloads.push(rs);
    for p in state.pods.iter_mut().filter(|p| p.meta.namespace == "app") {
        p.meta.owner_references.push(OwnerReference {
            kind: "ReplicaSet".into(),
            name: "cache-5d8f".into(),
            uid: String::new(),
            controller: true,
        });
    }
    let r = run(&state);
    let f = one(&r, RuleId::Loc002);
    let kinds: Vec<(&str, &str)> = f
        .objects
        .iter()
        .map(|o| (o.kind.as_str(), o.name.as_str()))
        .collect();
    assert!(kinds.contains(&("Deployment", "cache")), "{kinds:?}");
    assert!(!kinds.iter().any(|(k, _)| *k == "ReplicaSet"), "{kinds:?}");
}

#[test]
fn loc003_fires_for_untolerated_taint() {
    let mut state = agent_cluster(5, &[1, 2, 3, 4]);
    state.nodes[4]
        .taints
        .push(taint("dedicated", "infra", "NoSchedule"));
    let r = run(&state);
    let f = one(&r, RuleId::Loc003);
    assert_eq!(
        f.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>(),
        vec!["node-5"]
    );
    assert!(
        f.message.contains("untolerated taint dedicated=infra:NoSchedule"),
        "{}",
        f.message
    );
}

#[test]
fn loc003_not_for_taints_the_daemonset_controller_tolerates() {
    let mut state = agent_cluster(5, &[1, 2, 3, 4, 5]);
    state.nodes[0].unschedulable = true;
    state.nodes[0]
        .taints
        .push(taint("node.kubernetes.io/unschedulable", "", "NoSchedule"));
    state.nodes[1]
        .taints
        .push(taint("node.kubernetes.io/memory-pressure", "", "NoSchedule"));
    state.nodes[2]
        .taints
        .push(taint("node.kubernetes.io/not-ready", "", "NoExecute"));
    state.nodes[3].taints.push(taint("soft", "x", "PreferNoSchedule"));
    state.nodes[4]
        .taints
        .push(taint("dedicated", "infra", "NoSchedule"));
    state.workloads[0].template.tolerations.push(Toleration {
        key: "dedicated".into(),
        operator: "Exists".into(),
        value: String::new(),
        effect: "NoSchedule".into(),
        toleration_seconds: None,
    });
    let r = run(&state);
    none(&r, RuleId::Loc003);
}

#[test]
fn loc003_network_unavailable_is_tolerated_only_for_host_network() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    state.nodes[2]
        .taints
        .push(taint("node.kubernetes.io/network-unavailable", "", "NoSchedule"));
    let r = run(&state);
    one(&r, RuleId::Loc003);
    state.workloads[0].template.host_network = true;
    let r = run(&state);
    none(&r, RuleId::Loc003);
}

#[test]
fn loc003_node_selector_and_match_fields_affinity() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    state.nodes[0].meta.labels.insert("role".into(), "agent".into());
    state.nodes[1].meta.labels.insert("role".into(), "agent".into());
    state.workloads[0].template.node_selector = labels(&[("role", "agent")]);
    let r = run(&state);
    let f = one(&r, RuleId::Loc003);
    assert_eq!(f.nodes[0].node, "node-3");
    assert!(f.message.contains("nodeSelector role=agent"), "{}", f.message);

    // The DaemonSet controller's own affinity form: matchFields metadata.name.
    state.workloads[0].template.node_selector.clear();
    state.workloads[0].template.required_node_affinity = vec![NodeSelectorTerm {
        match_expressions: vec![],
        match_fields: vec![SelectorRequirement {
            key: "metadata.name".into(),
            operator: "In".into(),
            values: vec!["node-1".into(), "node-2".into(), "node-3".into()],
        }],
    }];
    let r = run(&state);
    none(&r, RuleId::Loc003);
}

#[test]
fn loc004_fires_for_default_rolling_update() {
    let r = run(&agent_cluster(3, &[1, 2, 3]));
    let f = one(&r, RuleId::Loc004);
    assert!(f.fix.contains("maxSurge: 1"), "{}", f.fix);
    assert_eq!(f.node_count, 3);
}

#[test]
fn loc004_host_port_changes_the_advice() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    state.workloads[0].template.ports[0].host_port = Some(4317);
    let r = run(&state);
    let f = one(&r, RuleId::Loc004);
    assert!(f.message.contains("hostPort 4317"), "{}", f.message);
    assert!(!f.fix.contains("maxSurge: 1"), "{}", f.fix);
    assert!(f.fix.contains("PreferSameNode"), "{}", f.fix);
}

#[test]
fn loc004_not_with_max_surge() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    state.workloads[0].max_surge = Some("1".into());
    state.workloads[0].max_unavailable = Some("0".into());
    none(&run(&state), RuleId::Loc004);
    state.workloads[0].max_surge = Some("10%".into());
    none(&run(&state), RuleId::Loc004);
    state.workloads[0].max_surge = Some("0%".into());
    one(&run(&state), RuleId::Loc004);
}

#[test]
fn loc013_fires_when_selector_matches_no_pod() {
    let ns = nodes(2, &["zone-a"]);
    let state = ClusterState {
        pods: clients(&ns),
        nodes: ns,
        services: vec![service("app", "web", "web-typo")],
        ..Default::default()
    };
    let r = run(&state);
    let f = one(&r, RuleId::Loc013);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.message.contains("matches no running pod"), "{}", f.message);
}

#[test]
fn loc013_not_with_one_ready_pod_and_not_for_selectorless() {
    let ns = nodes(2, &["zone-a"]);
    let mut pods = clients(&ns);
    pods.extend(backends("app", "web", &["node-1"]));
    let mut selectorless = service("app", "external-db", "x");
    selectorless.selector = None;
    let state = ClusterState {
        pods,
        nodes: ns,
        services: vec![service("app", "web", "web"), selectorless],
        ..Default::default()
    };
    none(&run(&state), RuleId::Loc013);
}

#[test]
fn loc013_fires_when_pods_are_not_ready() {
    let ns = nodes(2, &["zone-a"]);
    let mut pods = clients(&ns);
    pods.extend(backends("app", "web", &["node-1", "node-2"]));
    for p in pods.iter_mut().filter(|p| p.meta.namespace == "app") {
        p.ready = false;
    }
    let state = ClusterState {
        pods,
        nodes: ns,
        services: vec![service("app", "web", "web")],
        ..Default::default()
    };
    let f = one(&run(&state), RuleId::Loc013).clone();
    assert!(f.message.contains("none is ready"), "{}", f.message);
}

fn nodeport_local(kind: ServiceType, etp: TrafficPolicy) -> ClusterState {
    let ns = nodes(5, &["zone-a"]);
    let mut pods = clients(&ns);
    pods.extend(backends("edge", "ingress", &["node-1", "node-2"]));
    let mut s = service("edge", "ingress", "ingress");
    s.type_ = kind;
    s.ports[0].node_port = 30080;
    s.external_traffic_policy = Some(etp);
    ClusterState {
        nodes: ns,
        pods,
        services: vec![s],
        ..Default::default()
    }
}

#[test]
fn loc015_fires_for_nodeport_with_etp_local() {
    let r = run(&nodeport_local(ServiceType::NodePort, TrafficPolicy::Local));
    let f = one(&r, RuleId::Loc015);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.node_count, 3);
}

#[test]
fn loc015_is_info_behind_a_load_balancer() {
    let r = run(&nodeport_local(ServiceType::LoadBalancer, TrafficPolicy::Local));
    let f = one(&r, RuleId::Loc015);
    assert_eq!(f.severity, Severity::Info);
    assert!(f.message.contains("health checks"), "{}", f.message);
}

#[test]
fn loc015_not_with_etp_cluster() {
    let r = run(&nodeport_local(ServiceType::NodePort, TrafficPolicy::Cluster));
    none(&r, RuleId::Loc015);
}

#[test]
fn loc016_fires_when_a_node_has_only_a_terminating_local_endpoint() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    let agent3 = state.pods.iter_mut().find(|p| p.meta.name == "agent-3").unwrap();
    agent3.meta.deletion_timestamp = Some("2025-01-01T00:00:00Z".into());
    let r = run(&state);
    let f = one(&r, RuleId::Loc016);
    assert_eq!(
        f.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>(),
        vec!["node-3"]
    );
    none(&r, RuleId::Loc001);
}

#[test]
fn loc016_not_when_a_ready_replacement_runs_beside_it() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    let agent3 = state.pods.iter_mut().find(|p| p.meta.name == "agent-3").unwrap();
    agent3.meta.deletion_timestamp = Some("2025-01-01T00:00:00Z".into());
    state
        .pods
        .push(pod("telemetry", "agent-3b", "agent", "node-3", "10.1.5.5"));
    none(&run(&state), RuleId::Loc016);
}

#[test]
fn loc016_cluster_wide_fallback_under_cluster_policy() {
    let ns = nodes(2, &["zone-a"]);
    let mut pods = clients(&ns);
    pods.extend(backends("app", "web", &["node-1"]));
    pods.last_mut().unwrap().meta.deletion_timestamp = Some("2025-01-01T00:00:00Z".into());
    let state = ClusterState {
        pods,
        nodes: ns,
        services: vec![service("app", "web", "web")],
        ..Default::default()
    };
    let f = one(&run(&state), RuleId::Loc016).clone();
    assert_eq!(f.node_count, 2);
    assert!(f.message.contains("no ready endpoint anywhere"), "{}", f.message);
}

fn externally_reachable_agent() -> ClusterState {
    let mut state = agent_cluster(4, &[1, 2]);
    state.services[0].type_ = ServiceType::NodePort;
    state.services[0].ports[0].node_port = 30111;
    state
}

#[test]
fn loc017_fires_on_ipvs_for_externally_reachable_itp_local() {
    let r = run_with(
        &externally_reachable_agent(),
        config(ProxyMode::Ipvs),
        &Default::default(),
    );
    let f = one(&r, RuleId::Loc017);
    assert_eq!(f.node_count, 2);
    none(&r, RuleId::Loc001);
}

#[test]
fn loc017_not_on_iptables() {
    let r = run(&externally_reachable_agent());
    none(&r, RuleId::Loc017);
    one(&r, RuleId::Loc001);
}

#[test]
fn loc019_fires_for_publish_not_ready_with_itp_local() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    state.services[0].publish_not_ready_addresses = true;
    state
        .pods
        .iter_mut()
        .find(|p| p.meta.name == "agent-2")
        .unwrap()
        .ready = false;
    let r = run(&state);
    let f = one(&r, RuleId::Loc019);
    assert_eq!(
        f.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>(),
        vec!["node-2"]
    );
}

#[test]
fn loc019_not_with_cluster_policy() {
    let mut state = agent_cluster(3, &[1, 2, 3]);
    state.services[0].publish_not_ready_addresses = true;
    state.services[0].internal_traffic_policy = Some(TrafficPolicy::Cluster);
    none(&run(&state), RuleId::Loc019);
}

fn selectorless(node_names: &[Option<&str>]) -> ClusterState {
    let ns = nodes(3, &["zone-a"]);
    let mut s = itp_local(service("app", "legacy", "x"));
    s.selector = None;
    let endpoints = node_names
        .iter()
        .enumerate()
        .map(|(i, n)| Endpoint {
            addresses: vec![format!("10.50.0.{}", i + 1).parse().unwrap()],
            conditions: EndpointConditions {
                ready: Some(true),
                serving: Some(true),
                terminating: Some(false),
            },
            node_name: n.map(str::to_string),
            ..Default::default()
        })
        .collect();
    let mut m = meta("app", "legacy-1");
    m.labels.insert(LABEL_SERVICE_NAME.into(), "legacy".into());
    ClusterState {
        pods: clients(&ns),
        nodes: ns,
        services: vec![s],
        endpoint_slices: vec![EndpointSlice {
            meta: m,
            address_type: AddressType::IPv4,
            endpoints,
            ports: vec![EndpointPort {
                name: Some("http".into()),
                port: Some(8080),
                protocol: Some(Protocol::TCP),
            }],
        }],
        ..Default::default()
    }
}

#[test]
fn loc020_fires_when_handmade_endpoints_lack_node_name() {
    let r = run(&selectorless(&[None, None]));
    let f = one(&r, RuleId::Loc020);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.node_count, 3);
    assert!(
        f.objects
            .iter()
            .any(|o| o.kind == "EndpointSlice" && o.name == "legacy-1")
    );
    none(&r, RuleId::Loc001);
}

#[test]
fn loc020_not_when_every_endpoint_has_a_node_name() {
    let r = run(&selectorless(&[Some("node-1"), Some("node-2"), Some("node-3")]));
    none(&r, RuleId::Loc020);
    none(&r, RuleId::Loc001);
}
