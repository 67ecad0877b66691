//! Property tests of the routing model's invariants (docs/design.md §9 "Fidelity").

use crate::support;

use std::collections::BTreeMap;

use locality_model::matrix::{Assumed, DataPlane, Matrix, MatrixConfig, NodeTable, VerdictCounts};
use locality_model::objects::*;
use locality_model::proxy::{Destination, ProxyMode, Source, VerdictKind};
use locality_model::version::KubeVersion;
use proptest::prelude::*;
use support::*;

const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];

fn arb_conditions() -> impl Strategy<Value = (Option<bool>, Option<bool>, Option<bool>)> {
    let opt = || prop_oneof![Just(None), Just(Some(true)), Just(Some(false))];
    (opt(), opt(), opt())
}

#[derive(Debug, Clone)]
struct EpSpec {
    node: usize,
    cond: (Option<bool>, Option<bool>, Option<bool>),
    zone_hint: Option<usize>,
    node_hint: Option<usize>,
}

#[derive(Debug, Clone)]
struct SvcSpec {
    itp_local: bool,
    etp_local: bool,
    kind: u8, // 0 ClusterIP, 1 NodePort, 2 LoadBalancer
    td: Option<&'static str>,
    observed: bool,
    endpoints: Vec<EpSpec>,
}

fn arb_service(nodes: usize) -> impl Strategy<Value = SvcSpec> {
    let ep = (
        0..nodes + 1,
        arb_conditions(),
        proptest::option::of(0..3usize),
        proptest::option::of(0..nodes + 1),
    )
        .prop_map(|(node, cond, zone_hint, node_hint)| EpSpec {
            node,
            cond,
            zone_hint,
            node_hint,
        });
    (
        any::<bool>(),
        any::<bool>(),
        0u8..3,
        prop_oneof![
            Just(None),
            Just(Some("PreferClose")),
            Just(Some("PreferSameZone")),
            Just(Some("PreferSameNode"))
        ],
        any::<bool>(),
        proptest::collection::vec(ep, 0..6),
    )
        .prop_map(|(itp_local, etp_local, kind, td, observed, endpoints)| SvcSpec {
            itp_local,
            etp_local,
            kind,
            td,
            observed,
            endpoints,
        })
}

fn arb_cluster() -> impl Strategy<Value = (Vec<Option<usize>>, Vec<SvcSpec>)> {
    (1usize..6).prop_flat_map(|n| {
        (
            proptest::collection::vec(proptest::option::weighted(0.85, 0..3usize), n),
            proptest::collection::vec(arb_service(n), 1..4),
        )
    })
}

fn node_name(i: usize) -> String {
    format!("node-{i}")
}

/// Builds a state: observed services get slices with the given endpoints; the others get
/// pods (ready per the `ready` condition, terminating per `terminating`) for derivation.
fn build(nodes: &[Option<usize>], services: &[SvcSpec]) -> ClusterState {
    let mut state = ClusterState::default();
    for (i, z) in nodes.iter().enumerate() {
        state.nodes.push(node(&node_name(i), z.map(|z| ZONES[z])));
    }
    for (s, spec) in services.iter().enumerate() {
        let name = format!("svc-{s}");
        let np = if spec.kind > 0 { 30000 + s as u16 } else { 0 };
        let mut svc = service(
            "default",
            &name,
            &format!("10.96.0.{}", s + 1),
            vec![port("http", 80, np)],
        );
        svc.type_ = match spec.kind {
            0 => ServiceType::ClusterIP,
            1 => ServiceType::NodePort,
            _ => ServiceType::LoadBalancer,
        };
        if spec.kind == 2 {
            svc.load_balancer_ingress = vec![LoadBalancerIngress {
                ip: Some(format!("1.2.3.{}", s + 1).parse().unwrap()),
                ..Default::default()
            }];
        }
        svc.internal_traffic_policy = spec.itp_local.then_some(TrafficPolicy::Local);
        svc.external_traffic_policy = spec.etp_local.then_some(TrafficPolicy::Local);
        svc.traffic_distribution = spec.td.map(str::to_string);
        if spec.observed {
            let eps = spec
                .endpoints
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let mut ep = endpoint(&format!("10.{s}.0.{}", i + 1), &node_name(e.node), e.cond);
                    if e.zone_hint.is_some() || e.node_hint.is_some() {
                        ep.hints = Some(EndpointHints {
                            for_zones: e
                                .zone_hint
                                .map(|z| vec![ZONES[z].to_string()])
                                .unwrap_or_default(),
                            for_nodes: e.node_hint.map(|n| vec![node_name(n)]).unwrap_or_default(),
                        });
                    }
                    ep
                })
                .collect();
            state
                .endpoint_slices
                .push(slice(&svc, &format!("{name}-abc"), "http", 8080, eps));
        } else {
            for (i, e) in spec.endpoints.iter().enumerate() {
                let mut meta = meta("default", &format!("{name}-pod-{i}"));
                meta.labels.insert("app".into(), name.clone());
                if e.cond.2 == Some(true) {
                    meta.deletion_timestamp = Some("2026-12-01T00:00:00Z".into());
                }
                state.pods.push(Pod {
                    meta,
                    spec: PodSpec {
                        node_name: node_name(e.node),
                        ..Default::default()
                    },
                    phase: PodPhase::Running,
                    ready: e.cond.0 != Some(false),
                    pod_ips: vec![format!("10.{s}.1.{}", i + 1).parse().unwrap()],
                });
            }
        }
        state.services.push(svc);
    }
    state
}

fn matrix_config(mode: ProxyMode) -> MatrixConfig {
    MatrixConfig {
        data_plane: DataPlane::KubeProxy(Some(mode)),
        ..Default::default()
    }
}

/// Every route of every (port, node) as text, for comparisons.
fn dump(m: &Matrix<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for p in 0..m.ports.len() {
        for (n, routes) in m.port_routes(p, None) {
            for r in routes.routes {
                let eps: Vec<String> = r
                    .route
                    .endpoints
                    .iter()
                    .map(|i| m.ports[p].endpoints[*i].to_string())
                    .collect();
                out.push(format!(
                    "{}/{} {} {} {:?}->{:?} {:?} {:?} {:?} masq={}",
                    m.ports[p].service.meta.name,
                    m.ports[p].info.port.port,
                    m.nodes[n].name(),
                    m.ports[p].info.family.as_str(),
                    r.route.source,
                    r.route.destination,
                    r.route.verdict,
                    eps,
                    r.route.reason,
                    r.route.masquerade
                ));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// ITP Local never delivers ClusterIP traffic to a remote endpoint on iptables/nftables,
    /// and a node with a ready local endpoint is never blind under ITP Local.
    #[test]
    fn itp_local_is_node_local((nodes, services) in arb_cluster()) {
        let state = build(&nodes, &services);
        for mode in [ProxyMode::Iptables, ProxyMode::Nftables] {
            let m = Matrix::new(&state, matrix_config(mode));
            for p in 0..m.ports.len() {
                let entry = &m.ports[p];
                if !entry.info.internal_policy_local { continue; }
                for (n, routes) in m.port_routes(p, None) {
                    let node = m.nodes[n].name();
                    let has_local_ready = entry.endpoints.iter().any(|e| e.ready && e.is_local(node));
                    for r in routes.routes.iter().filter(|r| r.route.destination == Destination::ClusterIp) {
                        for i in &r.route.endpoints {
                            prop_assert!(entry.endpoints[*i].is_local(node), "remote endpoint delivered on {node}");
                        }
                        if has_local_ready {
                            prop_assert_eq!(r.route.verdict, VerdictKind::Deliver, "ready local endpoint but {:?} on {}", r.route.verdict, node);
                        }
                    }
                }
            }
        }
    }

    /// A preference (trafficDistribution, hints) never yields drop or reject while a usable
    /// endpoint exists, when no Local policy applies.
    #[test]
    fn preferences_never_drop((nodes, services) in arb_cluster()) {
        let state = build(&nodes, &services);
        for mode in ProxyMode::ALL {
            let m = Matrix::new(&state, matrix_config(mode));
            for p in 0..m.ports.len() {
                let entry = &m.ports[p];
                let usable = entry.endpoints.iter().any(|e| e.ready || (e.serving && e.terminating));
                for (_, routes) in m.port_routes(p, None) {
                    for r in &routes.routes {
                        let local_policy = match r.route.destination {
                            Destination::ClusterIp => entry.info.internal_policy_local,
                            _ => entry.info.external_policy_local,
                        };
                        if usable && !local_policy {
                            prop_assert_eq!(r.route.verdict, VerdictKind::Deliver);
                            prop_assert!(!r.route.endpoints.is_empty());
                        }
                        if !usable {
                            prop_assert_eq!(r.route.verdict, VerdictKind::Reject);
                        }
                    }
                }
            }
        }
    }

    /// The summary (computed per zone group) counts exactly what the full matrix shows, and
    /// lists exactly its blind nodes.
    #[test]
    fn summary_matches_full_matrix((nodes, services) in arb_cluster(), unknown_mode in any::<bool>()) {
        let state = build(&nodes, &services);
        let config = if unknown_mode { MatrixConfig { data_plane: DataPlane::KubeProxy(None), ..Default::default() } } else { matrix_config(ProxyMode::Iptables) };
        let m = Matrix::new(&state, config);
        for p in 0..m.ports.len() {
            let s = m.summary(p, usize::MAX);
            let mut counts: BTreeMap<(Source, Destination), VerdictCounts> = BTreeMap::new();
            let mut blind = Vec::new();
            for (n, routes) in m.port_routes(p, None) {
                for r in &routes.routes {
                    let c = counts.entry((r.route.source, r.route.destination)).or_default();
                    if r.by_mode.is_some() { c.mode_dependent += 1; continue; }
                    match r.route.verdict {
                        VerdictKind::Deliver => c.deliver += 1,
                        VerdictKind::Drop => c.drop += 1,
                        VerdictKind::Reject => c.reject += 1,
                        VerdictKind::NotProxied => c.not_proxied += 1,
                    }
                }
                let first = &routes.routes[0];
                if first.by_mode.is_none() && first.route.verdict == VerdictKind::Drop { blind.push(m.nodes[n].name().to_string()); }
            }
            for (source, dest, c) in &s.counts {
                prop_assert_eq!(Some(c), counts.get(&(*source, *dest)));
            }
            prop_assert_eq!(&s.blind_nodes, &blind);
            prop_assert_eq!(s.blind_count, blind.len());
        }
    }

    /// Results do not depend on the order of objects in the input.
    #[test]
    fn input_order_does_not_matter((nodes, services) in arb_cluster(), seed in any::<u64>()) {
        let state = build(&nodes, &services);
        let mut shuffled = state.clone();
        let mut rng = seed;
        let mut next = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
        fn shuffle<T>(v: &mut [T], next: &mut dyn FnMut() -> u64) {
            for i in (1..v.len()).rev() { let j = (next() % (i as u64 + 1)) as usize; v.swap(i, j); }
        }
        shuffle(&mut shuffled.nodes, &mut next);
        shuffle(&mut shuffled.pods, &mut next);
        shuffle(&mut shuffled.services, &mut next);
        shuffle(&mut shuffled.endpoint_slices, &mut next);
        for s in &mut shuffled.endpoint_slices { shuffle(&mut s.endpoints, &mut next); }
        let a = dump(&Matrix::new(&state, matrix_config(ProxyMode::Iptables)));
        let b = dump(&Matrix::new(&shuffled, matrix_config(ProxyMode::Iptables)));
        prop_assert_eq!(a, b);
    }

    /// `port_route` (one source and destination, no trace: what a simulation reads) gives
    /// exactly the route `port_routes` gives for them, trace aside, whatever the data plane
    /// and whatever was assumed.
    #[test]
    fn port_route_is_the_full_route_untraced((nodes, services) in arb_cluster(), mode in 0..4usize, assumed in any::<(bool, bool, bool)>()) {
        let state = build(&nodes, &services);
        let data_plane = match mode {
            3 => DataPlane::KubeProxy(None),
            m => DataPlane::KubeProxy(Some(ProxyMode::ALL[m])),
        };
        let m = Matrix::new(&state, MatrixConfig { data_plane, ..Default::default() }).assuming(Assumed {
            kube_proxy_version: assumed.0,
            kube_version: assumed.1,
            proxy_mode: assumed.2,
        });
        let untraced = |mut r: locality_model::proxy::Route| { r.trace.clear(); r };
        for p in 0..m.ports.len() {
            let full = m.port_routes(p, None);
            for source in Source::ALL {
                for destination in Destination::ALL {
                    let only = m.port_route(p, None, source, destination);
                    prop_assert_eq!(only.len(), full.len());
                    for ((n, one), (fnode, all)) in only.into_iter().zip(&full) {
                        prop_assert_eq!(n, *fnode);
                        let want = all.routes.iter().find(|r| r.route.source == source && r.route.destination == destination);
                        match (one, want) {
                            (None, None) => {}
                            (Some(one), Some(want)) => {
                                prop_assert!(one.route.trace.is_empty());
                                prop_assert_eq!(&one.route, &untraced(want.route.clone()));
                                let modes = |b: &Option<Vec<(ProxyMode, locality_model::proxy::Route)>>| b.clone().map(|v| v.into_iter().map(|(m, r)| (m, untraced(r))).collect::<Vec<_>>());
                                prop_assert_eq!(modes(&one.by_mode), modes(&want.by_mode));
                            }
                            (one, want) => prop_assert!(false, "port_route {:?}, port_routes {:?}", one.map(|r| r.route), want.map(|r| &r.route)),
                        }
                    }
                }
            }
        }
    }

    /// A matrix built with a [`NodeTable`] of its Nodes (what a simulation keeps from one
    /// step to the next) is the matrix built without one: the same nodes in the same order,
    /// the same routes and the same summaries, whatever each node's OS and kube-proxy version.
    #[test]
    fn a_node_table_changes_nothing((nodes, services) in arb_cluster(), windows in any::<u8>(), old_proxy in any::<u8>(), unknown_mode in any::<bool>()) {
        let mut state = build(&nodes, &services);
        let mut config = if unknown_mode { MatrixConfig { data_plane: DataPlane::KubeProxy(None), ..Default::default() } } else { matrix_config(ProxyMode::Iptables) };
        for i in 0..nodes.len() {
            if windows >> i & 1 == 1 {
                state.nodes[i].meta.labels.insert(LABEL_OS.into(), "windows".into());
            }
            if old_proxy >> i & 1 == 1 {
                config.node_proxy_versions.insert(node_name(i), KubeVersion::new(1, 30));
            }
        }
        let table = NodeTable::new(&state.nodes, config.clone());
        let plain = Matrix::new(&state, config);
        let tabled = Matrix::with_nodes(&state, &table);
        let names = |m: &Matrix<'_>| m.nodes.iter().map(|n| (n.name().to_string(), n.zone.to_string(), n.windows, n.proxy)).collect::<Vec<_>>();
        prop_assert_eq!(names(&plain), names(&tabled));
        prop_assert_eq!(dump(&plain), dump(&tabled));
        for p in 0..plain.ports.len() {
            prop_assert_eq!(format!("{:?}", plain.summary(p, usize::MAX)), format!("{:?}", tabled.summary(p, usize::MAX)));
        }
    }
}
