//! LOC021: Services whose policy meets a known divergence of the detected data plane and
//! version (docs/dataplanes.md), detected from the input's DaemonSets or given by the caller.

use crate::support;

use std::collections::BTreeMap;

use locality_audit::{AuditOptions, RuleId};
use locality_model::dataplane::{Detection, Plane, PlaneVersion};
use locality_model::objects::{ClusterState, ContainerFacts, ServiceType, TrafficPolicy};
use locality_model::proxy::ProxyMode;
use support::*;

fn cluster() -> ClusterState {
    let nodes = nodes(3, &["a", "b", "c"]);
    let mut prefer = service("app", "web", "web");
    prefer.traffic_distribution = Some("PreferClose".into());
    let mut etp = service("app", "edge", "edge");
    etp.type_ = ServiceType::NodePort;
    etp.external_traffic_policy = Some(TrafficPolicy::Local);
    ClusterState {
        pods: clients(&nodes),
        nodes,
        services: vec![itp_local(service("app", "cache", "cache")), prefer, etp],
        workloads: vec![deployment("app", "cache", "cache", 1)],
        ..Default::default()
    }
}

fn with(plane: Plane, v: (u16, u16, u16), settings: &[(&str, &str)]) -> AuditOptions {
    AuditOptions {
        data_plane: Some(Detection {
            plane: Some(plane),
            version: Some(PlaneVersion::new(v.0, v.1, v.2)),
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            source: format!("DaemonSet kube-system/{plane} image x:v{}.{}.{}", v.0, v.1, v.2),
            looked_at: Vec::new(),
        }),
        only: [RuleId::Loc021].into(),
        ..Default::default()
    }
}

fn services(r: &locality_audit::AuditReport) -> Vec<(String, String)> {
    fired(r, RuleId::Loc021)
        .iter()
        .map(|f| (f.service.name.clone(), f.fix.clone()))
        .collect()
}

#[test]
fn kube_router_2_0_flags_itp_and_etp_local_services_2_1_does_not() {
    let state = cluster();
    let r = run_with(
        &state,
        config(ProxyMode::Iptables),
        &with(Plane::KubeRouter, (2, 0, 1), &[]),
    );
    let found = services(&r);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found
            .iter()
            .any(|(s, fix)| s == "cache" && fix.contains("#1598") && fix.contains("2.1.0"))
    );
    assert!(found.iter().any(|(s, _)| s == "edge"));
    let r = run_with(
        &state,
        config(ProxyMode::Iptables),
        &with(Plane::KubeRouter, (2, 1, 0), &[]),
    );
    assert!(services(&r).is_empty());
}

#[test]
fn cilium_topology_entries_follow_its_setting() {
    let state = cluster();
    let on = with(Plane::Cilium, (1, 18, 0), &[("enable-service-topology", "true")]);
    let r = run_with(&state, config(ProxyMode::Iptables), &on);
    let found = services(&r);
    assert!(
        found.iter().any(|(s, fix)| s == "web" && fix.contains("1.18.1")),
        "{found:?}"
    );
    let off = with(Plane::Cilium, (1, 18, 1), &[]);
    let r = run_with(&state, config(ProxyMode::Iptables), &off);
    let found = services(&r);
    assert!(
        found
            .iter()
            .any(|(s, fix)| s == "web" && fix.contains("enable-service-topology=true")),
        "{found:?}"
    );
}

#[test]
fn detected_from_a_kube_proxy_daemonset_nothing_is_flagged() {
    let mut state = cluster();
    let mut ds = daemonset("kube-system", "kube-proxy", "kube-proxy");
    ds.containers = vec![ContainerFacts {
        name: "kube-proxy".into(),
        image: "registry.k8s.io/kube-proxy:v1.35.0".into(),
        ..ContainerFacts::default()
    }];
    state.workloads.push(ds);
    let opts = AuditOptions {
        only: [RuleId::Loc021].into(),
        ..Default::default()
    };
    assert!(services(&run_with(&state, config(ProxyMode::Iptables), &opts)).is_empty());
}

/// kube-proxy in ipvs mode (its `--proxy-mode` flag, as a dump shows it): an ETP Local
/// Service of type LoadBalancer meets kubernetes#93456 (host-network clients of a node
/// without a local endpoint get no answer from its load-balancer IP); in iptables mode not.
#[test]
fn kube_proxy_in_ipvs_mode_flags_etp_local_load_balancers() {
    for (mode, flagged) in [("ipvs", true), ("iptables", false)] {
        let mut state = cluster();
        state.services[2].type_ = ServiceType::LoadBalancer;
        let mut ds = daemonset("kube-system", "kube-proxy", "kube-proxy");
        ds.containers = vec![ContainerFacts {
            name: "kube-proxy".into(),
            image: "registry.k8s.io/kube-proxy:v1.35.0".into(),
            args: vec!["/usr/local/bin/kube-proxy".into(), format!("--proxy-mode={mode}")],
            ..ContainerFacts::default()
        }];
        state.workloads.push(ds);
        let opts = AuditOptions {
            only: [RuleId::Loc021].into(),
            ..Default::default()
        };
        let found = services(&run_with(&state, config(ProxyMode::Ipvs), &opts));
        if flagged {
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].0, "edge");
            assert!(found[0].1.contains("nftables or iptables mode"), "{found:?}");
        } else {
            assert!(found.is_empty(), "{mode}: {found:?}");
        }
    }
}
