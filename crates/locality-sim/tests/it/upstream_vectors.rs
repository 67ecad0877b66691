//! Upstream packet-flow vectors replayed through the **simulated** kube-proxy.
//!
//! The vectors are kubernetes/kubernetes `pkg/proxy/nftables/proxier_test.go`
//! `TestInternalTrafficPolicy` (C1), `TestTerminatingEndpointsTrafficPolicyLocal` (C2),
//! `TestTerminatingEndpointsTrafficPolicyCluster` (C3) and `TestInternalExternalMasquerade`
//! (C4, configuration "base"), transcribed in docs/upstream.md §6 (§C). Upstream's
//! `pkg/proxy/iptables/proxier_test.go` has tests of the same names; the transcription is of
//! the nftables ones, whose flows hold in iptables mode too (the proxiers share the rule design,
//! docs/upstream.md §2.1–§2.2), so every vector runs against an iptables and an
//! nftables simulated kube-proxy. They are the vectors
//! `locality-model/tests/it/kube_proxy_packet_flows.rs` checks on the model, which checks both
//! modes against the same expectations.
//!
//! Each vector becomes a simulated cluster: upstream's node `testNodeName` (`test-node`, with
//! upstream's `testNodeIP`) and the other nodes the endpoints name; one pod per endpoint address,
//! pinned to the endpoint's node and listening on 80; upstream's Services **without a selector**
//! (clusterIP, nodePort, policies and LB ingress as upstream), and hand-made EndpointSlices
//! (managed by [`MANAGER`], which the simulated EndpointSlice controller leaves alone) carrying
//! upstream's conditions and nodeNames but the pods' real addresses. After the simulated
//! kube-proxies have synced, every flow is checked three ways against upstream's output:
//!
//! 1. the model's verdict (`Matrix::node_routes` on `test-node`, as the model's test does), and
//!    its masquerade bit against upstream's `masq`;
//! 2. the rule `test-node`'s simulated kube-proxy programmed for the flow (its endpoint set, or
//!    DROP / REJECT), read from [`locality_sim::RuleTable`];
//! 3. [`TRIES`] real simulated connections through `Engine::connect`: every answer comes from
//!    one of upstream's endpoints and each of them answers (DNAT targets), or every try times
//!    out (DROP), or every try is refused (REJECT).
//!
//! What the simulation cannot express, and how it is handled:
//! - Masquerade: a simulated response does not carry the source address the pod saw, so
//!   upstream's `masq` is checked on the model only.
//! - LoadBalancer VIPs: an LB flow is checked on the table (`external` from outside,
//!   `external_from_node` from a pod or the host, nftables' host `no-endpoint-services` drop) and
//!   exercised by real connections to upstream's ingress IP, which `Engine::connect` resolves
//!   through `test-node`'s rules for the VIP (`Client::external("test-node")`: the load balancer
//!   delivered the packets to `test-node`; the simulated cloud load balancer leaves Services that
//!   already have an ingress alone).
//! - Upstream's LoadBalancer Services in C2/C3 have no nodePort; the simulated API server
//!   allocates one, which changes no verdict.
//! - Pod and host sources: upstream's pod `10.0.0.2` is a pod on `test-node` (a client pod
//!   pinned there); upstream's node source is `Client::host("test-node")`; upstream's
//!   `testExternalClient` is `Client::external("test-node")`.

mod ipvs_and_lb;
mod nftables_and_iptables;

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use locality_model::matrix::{DataPlane, Matrix, MatrixConfig};
use locality_model::objects::{
    AddressType, ClusterState, Endpoint, EndpointConditions, EndpointPort, EndpointSlice, IpFamily,
    LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LoadBalancerIngress, ObjectMeta, Protocol, Service, ServicePort,
    ServiceType, TargetPort, TrafficPolicy,
};
use locality_model::proxy::{Destination, ProxyMode as ModelMode, Source, VerdictKind};
use locality_model::version::KubeVersion;
use locality_sim::builders::{self, container_port, labels};
use locality_sim::{
    Client, DataPlaneProfile, Engine, Kind, Object, ObjectKey, Outcome, PodBehaviour, ProxyMode, SimConfig,
    Target,
};
use locality_sim::{RuleTarget, ServicePortRules};
use locality_testkit::vectors::{Ep, NODE};

/// Upstream's `testNodeIP`.
const NODE_IP: &str = "192.168.0.2";
/// The manager of the hand-made slices (not `endpointslice-controller.k8s.io`).
const MANAGER: &str = "upstream-vectors.locality.invalid";
/// Namespace of the client pod.
const CLIENT_NS: &str = "default";
/// Connections per flow (delivery is uniform over at most three endpoints).
const TRIES: usize = 48;
/// Virtual time to let the pods start, and then to let the simulated kube-proxies sync.
const SETTLE_MS: u64 = 5_000;

/// A vector's Service (port 80/TCP, target port 80) and the endpoints of its one slice.
#[derive(Debug, Clone)]
struct Svc {
    ns: &'static str,
    name: &'static str,
    type_: ServiceType,
    cluster_ip: &'static str,
    port_name: &'static str,
    /// 0: none (the simulated API server allocates one for NodePort / LoadBalancer).
    node_port: u16,
    itp: Option<TrafficPolicy>,
    etp: Option<TrafficPolicy>,
    ingress: Option<&'static str>,
    endpoints: Vec<Ep>,
}

impl Svc {
    fn cluster_ip(ns: &'static str, name: &'static str, ip: &'static str, endpoints: Vec<Ep>) -> Self {
        Svc {
            ns,
            name,
            type_: ServiceType::ClusterIP,
            cluster_ip: ip,
            port_name: "",
            node_port: 0,
            itp: None,
            etp: None,
            ingress: None,
            endpoints,
        }
    }

    fn slice_name(&self) -> String {
        format!("{}-1", self.name)
    }
}

/// A flow of a vector, as upstream writes it.
#[derive(Debug, Clone, Copy)]
struct Flow {
    name: &'static str,
    ns: &'static str,
    svc: &'static str,
    source: Source,
    dest: Destination,
    /// Upstream's output: sorted `ip:port` list, `DROP` or `REJECT`.
    output: &'static str,
    /// Upstream's masquerade bit (`None`: upstream does not say, e.g. for DROP).
    masq: Option<bool>,
}

/// A built simulated cluster for one vector and one proxy mode.
struct Fixture {
    mode: ProxyMode,
    engine: Engine,
    node_ip: IpAddr,
    /// Real pod address → upstream's endpoint address.
    upstream_ip: BTreeMap<IpAddr, &'static str>,
    /// Backend pod (namespace, name) → upstream's endpoint address.
    upstream_of_pod: BTreeMap<(String, String), &'static str>,
    services: Vec<Svc>,
    failures: Vec<String>,
    checked: usize,
}

fn model_mode(mode: ProxyMode) -> ModelMode {
    match mode {
        ProxyMode::Iptables => ModelMode::Iptables,
        ProxyMode::Nftables => ModelMode::Nftables,
        ProxyMode::Ipvs => ModelMode::Ipvs,
    }
}

fn pod_name(upstream_ip: &str) -> String {
    format!("ep-{}", upstream_ip.replace('.', "-"))
}

impl Fixture {
    /// Nodes `test-node` plus `other_nodes`, the vector's Services and slices, every
    /// simulated kube-proxy in `mode`, settled.
    fn build(mode: ProxyMode, other_nodes: &[&str], services: Vec<Svc>) -> Fixture {
        let mut engine = Engine::new(SimConfig::default());
        let node_ip: IpAddr = NODE_IP.parse().unwrap();
        let mut nodes = vec![NODE];
        for n in other_nodes {
            if !nodes.contains(n) {
                nodes.push(n);
            }
        }
        for (i, name) in nodes.iter().enumerate() {
            let ip: IpAddr = format!("192.168.0.{}", i + 2).parse().unwrap();
            engine.set_profile(name, DataPlaneProfile { mode, fault: None });
            engine
                .create(Object::Node(builders::node(name, None, 4000, ip)))
                .unwrap();
        }
        let namespaces: BTreeSet<&str> = services.iter().map(|s| s.ns).collect();
        for ns in namespaces.iter().filter(|ns| **ns != "default") {
            engine.create(builders::namespace(ns)).unwrap();
        }
        engine
            .create(builders::client_pod(CLIENT_NS, "client", NODE))
            .unwrap();
        // One backend pod per (namespace, upstream address), on the first node it is named with.
        let mut pods: BTreeMap<(String, String), (&'static str, &'static str)> = BTreeMap::new();
        for s in &services {
            for e in &s.endpoints {
                pods.entry((s.ns.to_string(), pod_name(e.ip)))
                    .or_insert((e.ip, e.node));
            }
        }
        for ((ns, name), (_, node)) in &pods {
            engine
                .create(builders::pod(
                    ns,
                    name,
                    labels(&[("vector", "backend")]),
                    vec![container_port("http", 80)],
                    Some(node),
                    PodBehaviour::default(),
                ))
                .unwrap();
        }
        engine.run_until(SETTLE_MS);
        let mut real_ip: BTreeMap<(String, &'static str), IpAddr> = BTreeMap::new();
        let mut upstream_ip = BTreeMap::new();
        let mut upstream_of_pod = BTreeMap::new();
        for ((ns, name), (ip, node)) in &pods {
            let p = engine
                .get(&ObjectKey::new(Kind::Pod, ns, name))
                .and_then(|o| o.as_pod())
                .unwrap_or_else(|| panic!("pod {ns}/{name}"));
            assert_eq!(p.pod.spec.node_name, *node, "{ns}/{name} is pinned");
            let addr = *p
                .pod
                .pod_ips
                .first()
                .unwrap_or_else(|| panic!("{ns}/{name} has no address yet"));
            real_ip.insert((ns.clone(), *ip), addr);
            upstream_ip.insert(addr, *ip);
            upstream_of_pod.insert((ns.clone(), name.clone()), *ip);
        }
        for s in &services {
            let svc = Service {
                meta: ObjectMeta {
                    name: s.name.into(),
                    namespace: s.ns.into(),
                    ..ObjectMeta::default()
                },
                type_: s.type_,
                selector: None,
                ports: vec![ServicePort {
                    name: s.port_name.into(),
                    protocol: Protocol::TCP,
                    port: 80,
                    target_port: TargetPort::Number(80),
                    node_port: s.node_port,
                }],
                cluster_ips: vec![s.cluster_ip.parse().unwrap()],
                internal_traffic_policy: s.itp,
                external_traffic_policy: s.etp,
                load_balancer_ingress: s
                    .ingress
                    .map(|ip| LoadBalancerIngress {
                        ip: Some(ip.parse().unwrap()),
                        ..LoadBalancerIngress::default()
                    })
                    .into_iter()
                    .collect(),
                ..Service::default()
            };
            engine.create(Object::Service(svc)).unwrap();
            let slice = EndpointSlice {
                meta: ObjectMeta {
                    name: s.slice_name(),
                    namespace: s.ns.into(),
                    labels: labels(&[(LABEL_SERVICE_NAME, s.name), (LABEL_MANAGED_BY, MANAGER)]),
                    ..ObjectMeta::default()
                },
                address_type: AddressType::IPv4,
                endpoints: s
                    .endpoints
                    .iter()
                    .map(|e| Endpoint {
                        addresses: vec![real_ip[&(s.ns.to_string(), e.ip)]],
                        conditions: EndpointConditions {
                            ready: e.cond.0,
                            serving: e.cond.1,
                            terminating: e.cond.2,
                        },
                        node_name: Some(e.node.into()),
                        ..Endpoint::default()
                    })
                    .collect(),
                ports: vec![EndpointPort {
                    name: Some(s.port_name.into()),
                    port: Some(80),
                    protocol: Some(Protocol::TCP),
                }],
            };
            engine.create(Object::EndpointSlice(slice)).unwrap();
        }
        let mut fx = Fixture {
            mode,
            engine,
            node_ip,
            upstream_ip,
            upstream_of_pod,
            services,
            failures: Vec::new(),
            checked: 0,
        };
        fx.settle();
        // The hand-made slices are the only ones: the simulated EndpointSlice controller did not
        // touch them nor add its own for selector-less Services.
        for s in &fx.services {
            let slices: Vec<&EndpointSlice> = fx
                .engine
                .store()
                .list_namespace(Kind::EndpointSlice, s.ns)
                .filter_map(|(_, o)| o.object.as_endpoint_slice())
                .filter(|sl| sl.service_name() == Some(s.name))
                .collect();
            assert_eq!(slices.len(), 1, "{}/{}: {slices:?}", s.ns, s.name);
            assert_eq!(slices[0].endpoints.len(), s.endpoints.len());
        }
        fx
    }

    /// Lets the simulated kube-proxies apply every change.
    fn settle(&mut self) {
        let before = self.engine.now();
        self.engine.run_for(SETTLE_MS);
        let proxy = self.engine.kube_proxy(NODE).expect("kube-proxy on test-node");
        assert!(
            proxy.last_sync().is_some_and(|t| t > before),
            "the simulated kube-proxy on {NODE} synced"
        );
        assert_eq!(proxy.profile.mode, self.mode);
    }

    /// Upstream's "endpoints deleted" step: the Service's slice is deleted.
    fn delete_slices(&mut self) {
        for s in &self.services {
            self.engine
                .delete(&ObjectKey::new(Kind::EndpointSlice, s.ns, s.slice_name()))
                .unwrap();
        }
        self.settle();
    }

    fn state(&self) -> ClusterState {
        let mut st = ClusterState::default();
        let store = self.engine.store();
        for (_, s) in store.list(Kind::Node) {
            st.nodes.extend(s.object.as_node().cloned());
        }
        for (_, s) in store.list(Kind::Pod) {
            st.pods.extend(s.object.as_pod().map(|p| p.pod.clone()));
        }
        for (_, s) in store.list(Kind::Service) {
            st.services.extend(s.object.as_service().cloned());
        }
        for (_, s) in store.list(Kind::EndpointSlice) {
            st.endpoint_slices.extend(s.object.as_endpoint_slice().cloned());
        }
        st
    }

    /// An endpoint address and port in upstream's notation.
    fn label(&self, ip: IpAddr, port: u16) -> String {
        match self.upstream_ip.get(&ip) {
            Some(u) => format!("{u}:{port}"),
            None => format!("unexpected {ip}:{port}"),
        }
    }

    fn joined(mut eps: Vec<String>) -> String {
        eps.sort();
        eps.dedup();
        eps.join(", ")
    }

    /// The model's output and masquerade bit for the flow on `test-node`.
    fn model(&self, f: &Flow) -> Result<(String, bool), String> {
        let state = self.state();
        let m = Matrix::new(
            &state,
            MatrixConfig {
                kube_version: KubeVersion::new(1, 35),
                kube_proxy_version: KubeVersion::new(1, 35),
                data_plane: DataPlane::KubeProxy(Some(model_mode(self.mode))),
                ..MatrixConfig::default()
            },
        );
        let port = m
            .ports
            .iter()
            .position(|p| p.service.meta.namespace == f.ns && p.service.meta.name == f.svc)
            .ok_or("model: no service port")?;
        let node = m.node_position(NODE).ok_or("model: no node")?;
        let routes = m.node_routes(port, node);
        let r = routes
            .routes
            .iter()
            .find(|r| r.route.source == f.source && r.route.destination == f.dest)
            .ok_or("model: no route")?;
        let out = match r.route.verdict {
            VerdictKind::Deliver => Self::joined(
                r.route
                    .endpoints
                    .iter()
                    .map(|&i| {
                        let e = &m.ports[port].endpoints[i];
                        self.label(e.ip, e.port)
                    })
                    .collect(),
            ),
            VerdictKind::Drop => "DROP".into(),
            VerdictKind::Reject => "REJECT".into(),
            VerdictKind::NotProxied => "NOT-PROXIED".into(),
        };
        Ok((out, r.route.masquerade))
    }

    /// The rules `test-node`'s simulated kube-proxy programmed for the flow's service port.
    fn rules(&self, f: &Flow) -> Result<ServicePortRules, String> {
        let proxy = self.engine.kube_proxy(NODE).ok_or("no simulated kube-proxy")?;
        proxy
            .table()
            .services
            .get(&(f.ns.to_string(), f.svc.to_string()))
            .and_then(|ports| {
                ports
                    .iter()
                    .find(|e| e.port == 80 && e.protocol == Protocol::TCP && e.family == IpFamily::IPv4)
            })
            .cloned()
            .ok_or_else(|| "table: no rules for the service port".to_string())
    }

    /// The programmed target of the flow: the cluster IP's rule for any source; a NodePort's or
    /// LB VIP's external rule from outside, else the rule for this node's pods and host
    /// (`external_from_node`, the ETP Local short-circuit), and for an nftables host client to an
    /// LB VIP the host override when programmed (nftables' drop, ipvs' lost reply).
    fn table_target(&self, f: &Flow, e: &ServicePortRules) -> RuleTarget {
        match (f.dest, f.source) {
            (Destination::ClusterIp, _) => e.internal.clone(),
            (
                Destination::NodePort | Destination::LoadBalancer | Destination::ExternalIp,
                Source::External,
            ) => e.external.clone(),
            (Destination::LoadBalancer | Destination::ExternalIp, Source::Host)
                if e.host_external_ip.is_some() =>
            {
                e.host_external_ip.clone().expect("checked")
            }
            _ => e.external_from_node.clone(),
        }
    }

    fn render_target(&self, e: &ServicePortRules, t: &RuleTarget) -> String {
        match t {
            RuleTarget::Reject | RuleTarget::NoRealServers => "REJECT".into(),
            RuleTarget::Drop | RuleTarget::ReplyLost => "DROP".into(),
            RuleTarget::Endpoints { endpoints, .. } if endpoints.is_empty() => "REJECT".into(),
            RuleTarget::Endpoints { endpoints, .. } => Self::joined(
                endpoints
                    .iter()
                    .map(|&i| self.label(e.endpoints[i].ip, e.endpoints[i].port))
                    .collect(),
            ),
        }
    }

    /// Real simulated connections for the flow, in upstream's notation; `None` when the
    /// simulation cannot open this flow (see the module doc).
    fn connections(&mut self, f: &Flow) -> Result<Option<String>, String> {
        let svc = self
            .engine
            .get(&ObjectKey::new(Kind::Service, f.ns, f.svc))
            .and_then(|o| o.as_service())
            .ok_or("no Service")?
            .clone();
        let node_port = svc.ports[0].node_port;
        let target = match f.dest {
            Destination::ClusterIp => Target::Addr(svc.cluster_ips[0], 80),
            Destination::NodePort => Target::Addr(self.node_ip, node_port),
            Destination::LoadBalancer => match svc.load_balancer_ingress.first().and_then(|i| i.ip) {
                Some(vip) => Target::Addr(vip, 80),
                None => return Err("the Service has no load-balancer ingress IP".into()),
            },
            Destination::ExternalIp => return Ok(None),
        };
        if f.dest == Destination::NodePort && node_port == 0 {
            return Err("the Service has no nodePort".into());
        }
        let client = match f.source {
            Source::Pod => Client::pod(CLIENT_NS, "client"),
            Source::Host => Client::host(NODE),
            Source::External => Client::external(NODE),
        };
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut classes: BTreeSet<&'static str> = BTreeSet::new();
        for _ in 0..TRIES {
            let got = self
                .engine
                .connect(&client, &target, Protocol::TCP, 1_000)
                .map_err(|e| e.to_string())?;
            classes.insert(got.class());
            match got {
                Outcome::Response { namespace, pod, .. } => {
                    seen.insert(
                        match self.upstream_of_pod.get(&(namespace.clone(), pod.clone())) {
                            Some(ip) => format!("{ip}:80"),
                            None => format!("unexpected pod {namespace}/{pod}"),
                        },
                    );
                }
                Outcome::Timeout => {
                    seen.insert("DROP".into());
                }
                Outcome::Refused => {
                    seen.insert("REJECT".into());
                }
            }
        }
        if classes.len() > 1 {
            return Ok(Some(format!("MIXED {seen:?}")));
        }
        Ok(Some(Self::joined(seen.into_iter().collect())))
    }

    /// Checks one flow on the model, the programmed table and real connections; failures are
    /// collected, so that one disagreement does not hide the others.
    fn check(&mut self, case: &str, f: &Flow) {
        let ctx = format!(
            "{:?} [{case}] {}: {:?} -> {:?} of {}/{}",
            self.mode, f.name, f.source, f.dest, f.ns, f.svc
        );
        self.checked += 1;
        match self.model(f) {
            Ok((out, masq)) => {
                if out != f.output {
                    self.failures
                        .push(format!("{ctx}: model {out:?}, upstream {:?}", f.output));
                }
                if let Some(want) = f.masq
                    && masq != want
                {
                    self.failures
                        .push(format!("{ctx}: model masquerade {masq}, upstream {want}"));
                }
            }
            Err(e) => self.failures.push(format!("{ctx}: {e}")),
        }
        let rules = match self.rules(f) {
            Ok(r) => r,
            Err(e) => {
                self.failures.push(format!("{ctx}: {e}"));
                return;
            }
        };
        let target = self.table_target(f, &rules);
        let programmed = self.render_target(&rules, &target);
        if programmed != f.output {
            self.failures.push(format!(
                "{ctx}: simulated rule table {programmed:?} ({target:?}), upstream {:?}\n{}",
                f.output,
                self.engine.rules_text(NODE).unwrap_or_default()
            ));
        }
        match self.connections(f) {
            Ok(Some(got)) if got != f.output => self.failures.push(format!(
                "{ctx}: simulated connections {got}, upstream {:?}",
                f.output
            )),
            Ok(_) => {}
            Err(e) => self.failures.push(format!("{ctx}: {e}")),
        }
    }
}

/// Runs `flows` on a fresh fixture, then (when `after_delete` is given) deletes the slices
/// and runs those flows too.
fn run_case(
    mode: ProxyMode,
    case: &str,
    nodes: &[&str],
    services: Vec<Svc>,
    flows: &[Flow],
    after_delete: &[Flow],
) -> Vec<String> {
    let mut fx = Fixture::build(mode, nodes, services);
    for f in flows {
        fx.check(case, f);
    }
    if !after_delete.is_empty() {
        fx.delete_slices();
        for f in after_delete {
            fx.check(&format!("{case}, after deleting the slice"), f);
        }
    }
    assert_eq!(fx.checked, flows.len() + after_delete.len());
    fx.failures
}

fn assert_no_failures(mode: ProxyMode, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{mode:?}: {} flow checks disagree with upstream:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
