//! Cross-check: the simulated kube-proxy (an independent implementation) against the model's
//! verdicts (`locality_model::matrix::Matrix`) on random small simulated clusters.
//!
//! For every (service port, node, source, destination): model `deliver` ⇒ the simulated
//! connection is answered by one of the model's endpoints (and, over many tries, by each of
//! them); `drop` ⇒ timeout; `reject` ⇒ refused.

use std::collections::BTreeSet;
use std::net::IpAddr;

use locality_model::matrix::{DataPlane, Matrix, MatrixConfig};
use locality_model::objects::{ClusterState, Protocol, ServiceType, TargetPort, TrafficPolicy};
use locality_model::proxy::{Destination, ProxyMode as ModelMode, Source, VerdictKind};
use locality_model::version::KubeVersion;
use locality_sim::SplitMix64;
use locality_sim::builders::{self, container_port, labels};
use locality_sim::{
    Client, DataPlaneProfile, Engine, Kind, Object, ObjectKey, Outcome, PodBehaviour, ProbeHandler,
    ProxyMode, ReadinessProbe, SimConfig, Target,
};
use proptest::prelude::*;

const NS: &str = "default";

/// A random small cluster, built from a seed.
fn random_cluster(seed: u64, mode: ProxyMode) -> Engine {
    let mut r = SplitMix64::new(seed);
    let mut e = Engine::new(SimConfig {
        seed,
        ..SimConfig::default()
    });
    let n_nodes = 2 + r.below(3) as usize;
    let zones = ["zone-a", "zone-b"];
    let mut nodes = Vec::new();
    for i in 0..n_nodes {
        let name = format!("node-{}", (b'a' + i as u8) as char);
        let zone = if r.chance(0.1) {
            None
        } else {
            Some(zones[r.below(2) as usize])
        };
        let ip: IpAddr = format!("172.18.0.{}", i + 2).parse().unwrap();
        e.set_profile(&name, DataPlaneProfile { mode, fault: None });
        e.create(Object::Node(builders::node(&name, zone, 4000, ip)))
            .unwrap();
        e.create(builders::client_pod(NS, &format!("client-{name}"), &name))
            .unwrap();
        nodes.push(name);
    }
    let n_backends = r.below(5);
    for i in 0..n_backends {
        let node = &nodes[r.below(n_nodes as u64) as usize];
        // A quarter never become ready (their probe fails: nothing listens on the probe port).
        let never_ready = r.chance(0.25);
        let behaviour = PodBehaviour {
            readiness: Some(ReadinessProbe {
                handler: if never_ready {
                    ProbeHandler::HttpGet {
                        path: "/readyz".into(),
                        port: 8080,
                    }
                } else {
                    ProbeHandler::TcpSocket { port: 8080 }
                },
                initial_delay_seconds: 1,
                period_seconds: 1,
                failure_threshold: 1,
            }),
            shutdown_delay_seconds: 10_000,
            termination_grace_period_seconds: 10_000,
            ..PodBehaviour::default()
        };
        let name = format!("web-{i}");
        e.create(builders::pod(
            NS,
            &name,
            labels(&[("app", "web")]),
            vec![container_port("http", 8080)],
            Some(node),
            behaviour,
        ))
        .unwrap();
        if never_ready {
            // Mark it never-ready by failing its /readyz at once (SIGTERM-free way: no listener).
            let key = ObjectKey::new(Kind::Pod, NS, &name);
            let mut p = e.get(&key).unwrap().as_pod().unwrap().clone();
            p.behaviour.listens = false;
            e.update(Object::Pod(p), None).unwrap();
        }
    }
    let mut s = builders::service(
        NS,
        "web",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    );
    if r.chance(0.5) {
        s.internal_traffic_policy = Some(TrafficPolicy::Local);
    }
    if r.chance(0.5) {
        s.type_ = ServiceType::NodePort;
        if r.chance(0.5) {
            s.external_traffic_policy = Some(TrafficPolicy::Local);
        }
    }
    s.traffic_distribution = match r.below(4) {
        0 => Some("PreferClose".into()),
        1 => Some("PreferSameNode".into()),
        _ => None,
    };
    e.create(Object::Service(s)).unwrap();
    e.run_until(8_000);
    // Some ready backends start terminating (they keep serving: long shutdown delay).
    for i in 0..n_backends {
        if r.chance(0.3) {
            let _ = e.delete(&ObjectKey::new(Kind::Pod, NS, format!("web-{i}")));
        }
    }
    e.run_until(20_000);
    e
}

fn state_of(e: &Engine) -> ClusterState {
    let mut st = ClusterState::default();
    for (_, s) in e.store().list(Kind::Node) {
        st.nodes.extend(s.object.as_node().cloned());
    }
    for (_, s) in e.store().list(Kind::Pod) {
        st.pods.extend(s.object.as_pod().map(|p| p.pod.clone()));
    }
    for (_, s) in e.store().list(Kind::Service) {
        st.services.extend(s.object.as_service().cloned());
    }
    for (_, s) in e.store().list(Kind::EndpointSlice) {
        st.endpoint_slices.extend(s.object.as_endpoint_slice().cloned());
    }
    st
}

fn check(seed: u64, mode: ProxyMode) -> Result<std::collections::BTreeMap<String, usize>, String> {
    let mut e = random_cluster(seed, mode);
    let state = state_of(&e);
    let model_mode = match mode {
        ProxyMode::Iptables => ModelMode::Iptables,
        ProxyMode::Nftables => ModelMode::Nftables,
        ProxyMode::Ipvs => ModelMode::Ipvs,
    };
    let matrix = Matrix::new(
        &state,
        MatrixConfig {
            kube_version: KubeVersion::new(1, 35),
            kube_proxy_version: KubeVersion::new(1, 35),
            data_plane: DataPlane::KubeProxy(Some(model_mode)),
            ..MatrixConfig::default()
        },
    );
    let pod_ip = |e: &Engine, name: &str| -> Option<IpAddr> {
        e.get(&ObjectKey::new(Kind::Pod, NS, name))
            .and_then(|o| o.as_pod())
            .and_then(|p| p.pod.pod_ips.first().copied())
    };
    let mut checked = std::collections::BTreeMap::new();
    for (pi, entry) in matrix.ports.iter().enumerate() {
        for (ni, node) in matrix.nodes.iter().enumerate() {
            let routes = matrix.node_routes(pi, ni);
            for r in &routes.routes {
                let route = &r.route;
                if route.verdict == VerdictKind::NotProxied {
                    continue;
                }
                let target = match route.destination {
                    Destination::ClusterIp => {
                        Target::Addr(entry.info.cluster_ip.unwrap(), entry.info.port.port)
                    }
                    Destination::NodePort => {
                        Target::Addr(node.node.internal_ips[0], entry.info.port.node_port)
                    }
                    _ => continue,
                };
                let client = match route.source {
                    Source::Pod => Client::pod(NS, &format!("client-{}", node.name())),
                    Source::Host => Client::host(node.name()),
                    Source::External => Client::external(node.name()),
                };
                let allowed: BTreeSet<IpAddr> =
                    route.endpoints.iter().map(|&i| entry.endpoints[i].ip).collect();
                let mut responders = BTreeSet::new();
                for _ in 0..60 {
                    let got = e
                        .connect(&client, &target, Protocol::TCP, 1_000)
                        .map_err(|x| x.to_string())?;
                    let ok = match (&got, route.verdict) {
                        (Outcome::Response { pod, .. }, VerdictKind::Deliver) => {
                            let ip = pod_ip(&e, pod).unwrap();
                            responders.insert(ip);
                            allowed.contains(&ip)
                        }
                        (Outcome::Timeout, VerdictKind::Drop) | (Outcome::Refused, VerdictKind::Reject) => {
                            true
                        }
                        _ => false,
                    };
                    if !ok {
                        return Err(format!(
                            "seed {seed} {mode:?}: {} node {} {:?}->{:?}: model {:?} {:?} ({:?}), simulated {got:?}\n{}",
                            entry.info.name,
                            node.name(),
                            route.source,
                            route.destination,
                            route.verdict,
                            allowed,
                            route.reason,
                            e.rules_text(node.name()).unwrap()
                        ));
                    }
                }
                if route.verdict == VerdictKind::Deliver && responders != allowed {
                    return Err(format!(
                        "seed {seed} {mode:?}: node {} {:?}->{:?}: model endpoints {allowed:?}, simulated answered from {responders:?}",
                        node.name(),
                        route.source,
                        route.destination
                    ));
                }
                *checked
                    .entry(format!(
                        "{:?} {:?} {:?}",
                        route.verdict, route.source, route.destination
                    ))
                    .or_insert(0) += 1;
            }
        }
    }
    Ok(checked)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn simulated_kube_proxy_agrees_with_the_model_iptables(seed in any::<u64>()) {
        check(seed, ProxyMode::Iptables).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn simulated_kube_proxy_agrees_with_the_model_nftables(seed in any::<u64>()) {
        check(seed, ProxyMode::Nftables).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn simulated_kube_proxy_agrees_with_the_model_ipvs(seed in any::<u64>()) {
        check(seed, ProxyMode::Ipvs).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn crosscheck_covers_every_verdict() {
    for mode in [ProxyMode::Iptables, ProxyMode::Nftables, ProxyMode::Ipvs] {
        let mut total = std::collections::BTreeMap::new();
        for seed in 0..40 {
            for (k, v) in check(seed, mode).unwrap() {
                *total.entry(k).or_insert(0) += v;
            }
        }
        eprintln!("{mode:?}: {total:#?}");
        for verdict in ["Deliver", "Reject"] {
            assert!(
                total.keys().any(|k| k.starts_with(verdict)),
                "{mode:?}: no {verdict} compared: {total:?}"
            );
        }
        if mode != ProxyMode::Ipvs {
            assert!(
                total.keys().any(|k| k.starts_with("Drop")),
                "{mode:?}: no Drop compared: {total:?}"
            );
        }
    }
}
