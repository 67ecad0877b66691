//! The report as a whole: no false positives, rule selection, manifest-only inputs, the
//! assumed shape, the JSON shape, and properties (never panics, input order irrelevant).

use crate::support;

use std::collections::BTreeSet;

use locality_audit::{AuditOptions, RuleId, Severity};
use locality_model::objects::*;
use locality_model::proxy::ProxyMode;
use proptest::prelude::*;
use support::*;

fn healthy_cluster() -> ClusterState {
    let ns = nodes(6, &["zone-a", "zone-b", "zone-c"]);
    let mut pods = clients(&ns);
    let names: Vec<String> = ns.iter().map(|n| n.meta.name.clone()).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    pods.extend(backends("app", "web", &refs));
    let mut svc = service("app", "web", "web");
    svc.internal_traffic_policy = Some(TrafficPolicy::Cluster);
    let mut np = service("app", "web-np", "web");
    np.type_ = ServiceType::NodePort;
    np.ports[0].node_port = 30080;
    np.external_traffic_policy = Some(TrafficPolicy::Cluster);
    let mut dep = deployment("app", "web", "web", 6);
    dep.max_surge = Some("25%".into());
    ClusterState {
        nodes: ns,
        pods,
        services: vec![svc, np],
        workloads: vec![dep],
        ..Default::default()
    }
}

#[test]
fn no_false_positive_with_cluster_policy_and_ready_endpoints_everywhere() {
    for mode in [ProxyMode::Iptables, ProxyMode::Nftables, ProxyMode::Ipvs] {
        let r = run_with(&healthy_cluster(), config(mode), &AuditOptions::default());
        assert!(r.findings.is_empty(), "{mode:?}: {:#?}", r.findings);
        // Without observed slices only the slice rules are skipped.
        let skipped: Vec<RuleId> = r.skipped_rules.iter().map(|s| s.rule).collect();
        assert_eq!(skipped, vec![RuleId::Loc014, RuleId::Loc020]);
        assert_eq!(r.services.len(), 2);
        assert!(r.services.iter().all(|s| s.delivered == 6 && s.dropped == 0));
    }
}

#[test]
fn findings_are_sorted_errors_first() {
    let mut state = agent_cluster(5, &[1, 2, 3]);
    state.services.push(service("zz", "broken", "nothing"));
    let r = run(&state);
    let sev: Vec<Severity> = r.findings.iter().map(|f| f.severity).collect();
    let mut sorted = sev.clone();
    sorted.sort();
    assert_eq!(sev, sorted);
    assert_eq!(r.findings[0].severity, Severity::Error);
    assert_eq!(r.totals.findings, r.findings.len());
    assert!(r.fails_on(Severity::Error));
    assert_eq!(r.max_severity(), Some(Severity::Error));
}

#[test]
fn rule_selection() {
    let state = agent_cluster(5, &[1, 2, 3]);
    let opts = AuditOptions {
        only: BTreeSet::from([RuleId::Loc004]),
        ..Default::default()
    };
    let r = run_with(&state, config(ProxyMode::Iptables), &opts);
    assert!(r.findings.iter().all(|f| f.rule == RuleId::Loc004));
    assert_eq!(r.rules, vec![RuleId::Loc004]);
    let opts = AuditOptions {
        skip: BTreeSet::from([RuleId::Loc001]),
        ..Default::default()
    };
    let r = run_with(&state, config(ProxyMode::Iptables), &opts);
    none(&r, RuleId::Loc001);
    one(&r, RuleId::Loc004);
    assert_eq!("loc017".parse::<RuleId>().unwrap(), RuleId::Loc017);
    assert!("LOC022".parse::<RuleId>().is_err());
}

fn manifests_only() -> ClusterState {
    let mut agent = daemonset("telemetry", "agent", "agent");
    agent.template.node_selector = labels(&[("kubernetes.io/os", "linux")]);
    ClusterState {
        services: vec![
            itp_local(service("app", "cache", "cache")),
            itp_local(service("telemetry", "agent", "agent")),
        ],
        workloads: vec![deployment("app", "cache", "cache", 2), agent],
        ..Default::default()
    }
}

#[test]
fn manifest_only_input_skips_rules_that_need_cluster_state() {
    let r = run(&manifests_only());
    let skipped: Vec<RuleId> = r.skipped_rules.iter().map(|s| s.rule).collect();
    for rule in [
        RuleId::Loc001,
        RuleId::Loc002,
        RuleId::Loc003,
        RuleId::Loc013,
        RuleId::Loc014,
    ] {
        assert!(skipped.contains(&rule), "{rule} not skipped: {skipped:?}");
        assert!(!r.rules.contains(&rule));
    }
    let s = r.skipped_rules.iter().find(|s| s.rule == RuleId::Loc001).unwrap();
    assert!(s.reason.contains("--nodes"), "{}", s.reason);
    // Rules that read manifests still run.
    one(&r, RuleId::Loc004);
    none(&r, RuleId::Loc013);
}

#[test]
fn assumed_shape_predicts_blind_nodes() {
    let opts = AuditOptions {
        assumed_nodes: Some(30),
        assumed_zones: vec!["a".into(), "b".into(), "c".into()],
        ..Default::default()
    };
    let r = run_with(&manifests_only(), config(ProxyMode::Iptables), &opts);
    let shape = r.assumed_shape.as_ref().unwrap();
    assert_eq!(shape.nodes, 30);
    assert_eq!(r.node_count, 30);
    let blind: Vec<_> = fired(&r, RuleId::Loc001);
    assert_eq!(blind.len(), 1, "{blind:#?}");
    assert_eq!(blind[0].service.name, "cache");
    assert_eq!(blind[0].node_count, 28);
    let f = one(&r, RuleId::Loc002);
    assert!(
        f.message.contains("2 replicas for 30 client nodes"),
        "{}",
        f.message
    );
    assert!(r.skipped_rules.iter().any(|s| s.rule == RuleId::Loc003));
}

#[test]
fn node_limit_truncates_the_list_but_not_the_totals() {
    let opts = AuditOptions {
        node_limit: 2,
        ..Default::default()
    };
    let r = run_with(&agent_cluster(10, &[1]), config(ProxyMode::Iptables), &opts);
    let f = one(&r, RuleId::Loc001);
    assert_eq!(f.nodes.len(), 2);
    assert_eq!(f.node_count, 9);
    assert_eq!(f.pod_count, 9);
}

#[test]
fn json_shape() {
    let r = run(&agent_cluster(3, &[1]));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["apiVersion"], "locality/v1");
    assert_eq!(v["kind"], "AuditReport");
    assert_eq!(v["dataPlane"]["kind"], "kube-proxy");
    assert_eq!(v["dataPlane"]["mode"], "iptables");
    assert_eq!(v["input"], "files");
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "LOC001")
        .unwrap();
    assert_eq!(f["severity"], "error");
    assert_eq!(f["service"]["namespace"], "telemetry");
    assert_eq!(f["port"]["protocol"], "TCP");
    assert_eq!(f["ipFamily"], "IPv4");
    assert_eq!(f["nodeCount"], 2);
    assert_eq!(f["nodes"][0]["pods"], 1);
    assert!(
        f["docsUrl"]
            .as_str()
            .unwrap()
            .starts_with("https://kubernetes.io/")
    );
    assert!(f["objects"][0]["origin"].is_null());
    let s = &v["services"][0];
    assert_eq!(s["internalTrafficPolicy"], "Local");
    assert_eq!(s["dropped"], 2);
    assert_eq!(s["endpointSource"], "derived");
    assert_eq!(v["skippedRules"][0]["rule"], "LOC014");
    assert!(v["skippedRules"][0]["reason"].is_string());
}

/// A finding carries the least sure assessment of its port's routes. With the proxy mode
/// assumed (files without `--proxy-mode`), LOC001's blind nodes would be refused, not
/// dropped, under ipvs: the finding is `inferred` and names `proxy-mode`; with the mode
/// given, nothing is missing.
#[test]
fn findings_carry_the_confidence_of_their_routes_and_what_is_missing() {
    let state = agent_cluster(3, &[1]);
    let given = run(&state);
    let f = one(&given, RuleId::Loc001);
    assert!(f.confidence.is_some());
    assert!(f.missing_facts.is_empty());
    let v = serde_json::to_value(f).unwrap();
    assert!(v.get("missingFacts").is_none(), "omitted when nothing is missing");
    let m = locality_model::matrix::Matrix::new(&state, config(ProxyMode::Iptables)).assuming(
        locality_model::matrix::Assumed {
            proxy_mode: true,
            ..Default::default()
        },
    );
    let assumed = locality_audit::audit(&state, &m, &AuditOptions::default());
    let f = one(&assumed, RuleId::Loc001);
    assert_eq!(f.confidence, Some(locality_model::proxy::Confidence::Inferred));
    assert!(
        f.missing_facts
            .contains(locality_model::proxy::MissingFact::ProxyMode)
    );
    let v = serde_json::to_value(f).unwrap();
    assert_eq!(v["confidence"], "inferred");
    assert_eq!(v["missingFacts"], serde_json::json!(["proxy-mode"]));
}

#[test]
fn every_rule_has_metadata() {
    for r in RuleId::ALL {
        assert_eq!(r.as_str().parse::<RuleId>().unwrap(), r);
        assert!(r.docs_url().starts_with("https://kubernetes.io/docs/"));
        assert!(!r.title().is_empty());
    }
}

// ---- properties ----

#[derive(Debug, Clone)]
struct Gen {
    nodes: Vec<(Option<u8>, bool, bool)>,          // zone, cordoned, tainted
    pods: Vec<(u8, u8, bool, bool)>,               // node, app, ready, terminating
    services: Vec<(u8, u8, u8, Option<u8>, bool)>, // app, itp/etp flags, type, td, auto
    slices: bool,
    mode: u8,
}

fn arb_gen() -> impl Strategy<Value = Gen> {
    (
        proptest::collection::vec((proptest::option::of(0u8..3), any::<bool>(), any::<bool>()), 0..6),
        proptest::collection::vec((0u8..7, 0u8..3, any::<bool>(), any::<bool>()), 0..14),
        proptest::collection::vec(
            (
                0u8..4,
                0u8..4,
                0u8..4,
                proptest::option::of(0u8..4),
                any::<bool>(),
            ),
            0..5,
        ),
        any::<bool>(),
        0u8..4,
    )
        .prop_map(|(nodes, pods, services, slices, mode)| Gen {
            nodes,
            pods,
            services,
            slices,
            mode,
        })
}

fn build(g: &Gen) -> ClusterState {
    let zones = ["zone-a", "zone-b", "zone-c"];
    let mut state = ClusterState::default();
    for (i, (z, cordon, tainted)) in g.nodes.iter().enumerate() {
        let mut n = node(&format!("node-{i}"), z.map(|z| zones[z as usize]));
        n.unschedulable = *cordon;
        if *tainted {
            n.taints.push(taint("dedicated", "x", "NoSchedule"));
        }
        state.nodes.push(n);
    }
    for (i, (n, app, ready, term)) in g.pods.iter().enumerate() {
        let mut p = pod(
            "ns",
            &format!("pod-{i}"),
            &format!("app{app}"),
            &format!("node-{n}"),
            &format!("10.2.0.{}", i + 1),
        );
        p.ready = *ready;
        if *term {
            p.meta.deletion_timestamp = Some("2025-01-01T00:00:00Z".into());
        }
        state.pods.push(p);
    }
    for (i, (app, flags, ty, td, auto)) in g.services.iter().enumerate() {
        let mut s = service("ns", &format!("svc-{i}"), &format!("app{app}"));
        s.cluster_ips = vec![format!("10.96.1.{}", i + 1).parse().unwrap()];
        if flags & 1 == 1 {
            s.internal_traffic_policy = Some(TrafficPolicy::Local);
        }
        if flags & 2 == 2 {
            s.external_traffic_policy = Some(TrafficPolicy::Local);
        }
        match ty {
            1 => {
                s.type_ = ServiceType::NodePort;
                s.ports[0].node_port = 30000 + i as u16;
            }
            2 => {
                s.headless = true;
                s.cluster_ips.clear();
            }
            3 => s.selector = None,
            _ => {}
        }
        s.traffic_distribution =
            td.map(|t| ["PreferClose", "PreferSameZone", "PreferSameNode", "Bogus"][t as usize].to_string());
        if *auto {
            s.meta
                .annotations
                .insert(ANNOTATION_TOPOLOGY_MODE.into(), "Auto".into());
        }
        state.services.push(s);
        let mut w = if i % 2 == 0 {
            daemonset("ns", &format!("w-{i}"), &format!("app{app}"))
        } else {
            deployment("ns", &format!("w-{i}"), &format!("app{app}"), *flags as u32)
        };
        w.meta.uid = format!("uid-{i}");
        state.workloads.push(w);
    }
    if g.slices {
        // Observed slices = what the controller model derives (then audited as observed).
        let cfg = config(ProxyMode::Iptables);
        let m = locality_model::matrix::Matrix::new(&state, cfg);
        drop(m);
        let idx = locality_model::endpointslice::NodeIndex::new(&state.nodes);
        let topo = locality_model::endpointslice::TopologyCache::from_nodes(&state.nodes);
        let cp =
            locality_model::features::ControlPlaneFeatures::at(locality_model::version::KubeVersion::NEWEST);
        let mut slices = Vec::new();
        for s in &state.services {
            let pods: Vec<&Pod> = state
                .pods
                .iter()
                .filter(|p| {
                    s.selector
                        .as_ref()
                        .is_some_and(|sel| locality_model::selector::service_selects(sel, &p.meta.labels))
                })
                .collect();
            slices.extend(
                locality_model::endpointslice::derive_endpoint_slices(s, &pods, &idx, &topo, &cp).slices,
            );
        }
        state.endpoint_slices = slices;
    }
    state
}

fn mode_of(g: &Gen) -> locality_model::matrix::MatrixConfig {
    match g.mode {
        0 => config(ProxyMode::Iptables),
        1 => config(ProxyMode::Nftables),
        2 => config(ProxyMode::Ipvs),
        _ => locality_model::matrix::MatrixConfig {
            data_plane: locality_model::matrix::DataPlane::KubeProxy(None),
            ..Default::default()
        },
    }
}

fn reversed(mut s: ClusterState) -> ClusterState {
    s.nodes.reverse();
    s.pods.reverse();
    s.services.reverse();
    s.endpoint_slices.reverse();
    s.workloads.reverse();
    for sl in &mut s.endpoint_slices {
        sl.endpoints.reverse();
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn audit_never_panics_and_ignores_input_order(g in arb_gen()) {
        let state = build(&g);
        let opts = AuditOptions::default();
        let a = run_with(&state, mode_of(&g), &opts);
        let b = run_with(&reversed(state.clone()), mode_of(&g), &opts);
        let ja = serde_json::to_string(&a).unwrap();
        let jb = serde_json::to_string(&b).unwrap();
        prop_assert_eq!(ja, jb);
        // Observed slices equal to the derivation never differ from it.
        if g.slices {
            prop_assert!(a.findings.iter().all(|f| f.rule != RuleId::Loc014), "{:#?}", a.findings);
        }
    }

    #[test]
    fn assumed_shape_never_panics(g in arb_gen(), n in 0usize..40, z in 0usize..4) {
        let mut state = build(&g);
        state.nodes.clear();
        state.pods.clear();
        state.endpoint_slices.clear();
        let opts = AuditOptions {
            assumed_nodes: Some(n),
            assumed_zones: (0..z).map(|i| format!("z{i}")).collect(),
            ..Default::default()
        };
        let r = run_with(&state, mode_of(&g), &opts);
        prop_assert!(r.totals.findings == r.findings.len());
    }
}
