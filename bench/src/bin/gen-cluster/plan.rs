//! The cluster plan: compact records for every node, pod set, pod and Service, built
//! before anything is written (EndpointSlices need the pods' IPs, nodes and states).
//!
//! Everything that decides *how many* pods, Services and endpoints there are depends
//! only on `--pods`, `--services` and `--seed` (and `--ref-nodes`, which defaults to
//! `--pods / 20`), never on `--nodes`: the scaling study varies `--nodes` with the same
//! endpoints. `--nodes` only decides where pods run (and so their IPs, nodeName and zone).

use crate::rng::Rng;

/// Stream identifiers for [`Rng::stream`].
pub mod stream {
    pub const NODE: u64 = 1;
    pub const SET: u64 = 2;
    pub const POD: u64 = 3;
    pub const SERVICE: u64 = 4;
    pub const SLICE: u64 = 5;
    pub const NAMESPACE: u64 = 6;
    pub const LAYOUT: u64 = 7;
}

/// Generator parameters.
#[derive(Clone, Debug)]
pub struct Config {
    pub nodes: usize,
    pub zones: usize,
    pub pods: usize,
    pub services: usize,
    pub seed: u64,
    /// The node count DaemonSet sizes are computed from (default `pods / 20`).
    pub ref_nodes: usize,
    /// How many Deployments (each with its ReplicaSet) are written as objects; the pods
    /// of the others still name their ReplicaSet in `ownerReferences`, as in a dump
    /// filtered by namespace or label.
    pub workload_objects: usize,
    /// How much of each object is written (`--detail`); never changes the plan.
    pub detail: Detail,
}

/// `--detail`: how heavy the objects are. Only the JSON of each object depends on it,
/// never which objects exist, their names, states, IPs or endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// A typical small-pod cluster as `kubectl get -o json` prints it: few env vars and
    /// volumes, probes on some containers, managedFields on about 3% of objects.
    Typical,
    /// Heavier objects: more env vars, config volumes and probes, managedFields on every
    /// object but 90% of pods (the generator's output before `--detail` existed).
    Full,
}

/// Epoch of the synthetic cluster's "now" (2026-12-01T12:00:00Z).
pub const NOW: i64 = 1_796_126_400;

pub const REGION: &str = "us-east-1";

/// (instance type, cpu cores, memory GiB)
pub const INSTANCE_TYPES: &[(&str, u32, u32)] = &[
    ("m6i.2xlarge", 8, 32),
    ("m6i.4xlarge", 16, 64),
    ("c6i.4xlarge", 16, 32),
    ("r6i.2xlarge", 8, 64),
    ("m6i.8xlarge", 32, 128),
];

pub struct Node {
    pub name: String,
    pub zone: usize,
    pub control_plane: bool,
    pub ready: bool,
    pub instance: usize,
    pub ipv4: String,
    pub ipv6: String,
    pub pod_cidr4: String,
    pub pod_cidr6: String,
    pub kubelet: &'static str,
    pub created: i64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SetKind {
    DaemonSet,
    Deployment,
}

#[derive(Clone, Debug)]
pub struct ContainerPort {
    pub name: &'static str,
    pub port: u16,
    pub protocol: &'static str,
}

pub struct PodSet {
    pub kind: SetKind,
    pub name: String,
    pub namespace: usize,
    pub replicas: usize,
    pub image: String,
    pub ports: Vec<ContainerPort>,
    pub host_network: bool,
    pub on_control_plane: bool,
    pub sidecar: bool,
    pub template_hash: String,
    pub uid: String,
    pub rs_uid: String,
    pub created: i64,
    /// First pod index; pods of a set are contiguous.
    pub first_pod: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PodState {
    Ready,
    NotReady,
    /// deletionTimestamp set; `ready` is the pod's Ready condition.
    Terminating {
        ready: bool,
    },
    /// Scheduled, containers being created, no IP yet.
    Pending,
}

pub struct Pod {
    pub set: usize,
    pub name: String,
    pub node: usize,
    pub ipv4: Option<String>,
    pub ipv6: Option<String>,
    pub state: PodState,
    pub uid: String,
    pub created: i64,
}

impl Pod {
    pub fn ready(&self) -> bool {
        matches!(
            self.state,
            PodState::Ready | PodState::Terminating { ready: true }
        )
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    V4,
    V6,
}

pub struct ServicePort {
    pub name: String,
    pub port: u16,
    pub protocol: &'static str,
    /// Container port number the slice carries.
    pub target: u16,
    /// Named targetPort, if the Service refers to the container port by name.
    pub target_name: Option<&'static str>,
    pub node_port: Option<u16>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SvcType {
    ClusterIP,
    NodePort,
    LoadBalancer,
}

pub struct Service {
    pub name: String,
    pub namespace: usize,
    /// The pod set selected; `None` selects nothing (an empty placeholder slice).
    pub set: Option<usize>,
    pub selector_value: String,
    pub svc_type: SvcType,
    pub headless: bool,
    pub itp_local: bool,
    pub etp_local: bool,
    pub traffic_distribution: Option<&'static str>,
    /// (annotation key, value): `service.kubernetes.io/topology-mode: Auto` or the
    /// deprecated `service.kubernetes.io/topology-aware-hints: auto`.
    pub topology_annotation: Option<(&'static str, &'static str)>,
    pub families: Vec<Family>,
    pub family_policy: &'static str,
    pub ports: Vec<ServicePort>,
    pub cluster_ips: Vec<String>,
    pub external_ip: Option<String>,
    pub lb_ingress: Option<String>,
    pub health_check_node_port: Option<u16>,
    pub last_applied: bool,
    pub uid: String,
    pub created: i64,
}

pub struct Namespace {
    pub name: String,
    pub uid: String,
    pub created: i64,
}

/// One item of the output List, in output order.
#[derive(Clone, Copy, Debug)]
pub enum Item {
    Namespace(usize),
    Node(usize),
    DaemonSet(usize),
    Deployment(usize),
    ReplicaSet(usize),
    Pod(usize),
    Service(usize),
    /// (service, family index, chunk index)
    Slice(usize, usize, usize),
}

pub struct Plan {
    pub cfg: Config,
    pub zones: Vec<String>,
    pub namespaces: Vec<Namespace>,
    pub nodes: Vec<Node>,
    pub sets: Vec<PodSet>,
    pub pods: Vec<Pod>,
    pub services: Vec<Service>,
    /// Per service and family: the endpoint pod indices, in slice order.
    pub endpoints: Vec<Vec<Vec<usize>>>,
    /// Per service: the name suffixes of its slices, in item order (unique per service).
    pub slice_suffixes: Vec<Vec<String>>,
    pub items: Vec<Item>,
}

/// Maximum endpoints per EndpointSlice (the controller's default `--max-endpoints-per-slice`).
pub const MAX_PER_SLICE: usize = 100;

const SYSTEM_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "monitoring",
    "logging",
    "observability",
    "ingress-nginx",
    "platform",
];

const TEAMS: &[&str] = &[
    "payments",
    "checkout",
    "catalog",
    "search",
    "identity",
    "billing",
    "orders",
    "shipping",
    "inventory",
    "pricing",
    "reviews",
    "media",
    "notify",
    "ledger",
    "risk",
    "ads",
    "growth",
    "support",
    "analytics",
    "recs",
    "maps",
    "chat",
    "auth",
    "edge",
];

const COMPONENTS: &[&str] = &[
    "api",
    "worker",
    "frontend",
    "gateway",
    "cache",
    "indexer",
    "scheduler",
    "consumer",
    "producer",
    "backend",
    "grpc",
    "web",
    "sync",
    "proxy",
    "store",
    "resolver",
];

/// DaemonSet profiles: name, namespace, coverage of `ref_nodes`, on control-plane,
/// hostNetwork, image, ports.
#[allow(clippy::type_complexity)]
const DAEMONSETS: &[(&str, &str, f64, bool, bool, &str, &[(&str, u16, &str)])] = &[
    (
        "node-exporter",
        "monitoring",
        1.0,
        true,
        true,
        "quay.io/prometheus/node-exporter:v1.9.1",
        &[("metrics", 9100, "TCP")],
    ),
    (
        "fluent-bit",
        "logging",
        1.0,
        true,
        false,
        "cr.fluentbit.io/fluent/fluent-bit:4.0.3",
        &[("http", 2020, "TCP"), ("forward", 24224, "TCP")],
    ),
    (
        "node-local-dns",
        "kube-system",
        0.95,
        false,
        false,
        "registry.k8s.io/dns/k8s-dns-node-cache:1.26.4",
        &[
            ("dns", 53, "UDP"),
            ("dns-tcp", 53, "TCP"),
            ("metrics", 9253, "TCP"),
        ],
    ),
    (
        "otel-agent",
        "observability",
        0.9,
        false,
        false,
        "otel/opentelemetry-collector-contrib:0.128.0",
        &[("otlp-grpc", 4317, "TCP"), ("otlp-http", 4318, "TCP")],
    ),
    (
        "metrics-agent",
        "monitoring",
        0.9,
        false,
        false,
        "gcr.io/datadoghq/agent:7.67.0",
        &[("dogstatsd", 8125, "UDP"), ("apm", 8126, "TCP")],
    ),
    (
        "ingress-nginx-controller",
        "ingress-nginx",
        0.6,
        false,
        false,
        "registry.k8s.io/ingress-nginx/controller:v1.13.0",
        &[("http", 80, "TCP"), ("https", 443, "TCP")],
    ),
    (
        "csi-node",
        "kube-system",
        0.8,
        false,
        false,
        "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.14.0",
        &[("healthz", 9808, "TCP")],
    ),
    (
        "cache-agent",
        "platform",
        0.5,
        false,
        false,
        "registry.example.com/platform/cache-agent:v3.2.1",
        &[("http", 8080, "TCP")],
    ),
];

/// Services on DaemonSets: (daemonset index, name suffix, flavor, port names).
const DS_SERVICES: &[(usize, &str, DsFlavor, &[&str])] = &[
    (0, "", DsFlavor::ItpLocal, &["metrics"]),
    (1, "", DsFlavor::ItpLocal, &["http"]),
    (2, "", DsFlavor::ItpLocal, &["dns", "dns-tcp"]),
    (2, "-metrics", DsFlavor::Cluster, &["metrics"]),
    (3, "", DsFlavor::ItpLocalDual, &["otlp-grpc", "otlp-http"]),
    (4, "", DsFlavor::ItpLocal, &["dogstatsd", "apm"]),
    (5, "", DsFlavor::LbLocal, &["http", "https"]),
    (6, "-metrics", DsFlavor::Cluster, &["healthz"]),
    (7, "", DsFlavor::PreferSameNode, &["http"]),
];

#[derive(Clone, Copy)]
enum DsFlavor {
    ItpLocal,
    ItpLocalDual,
    Cluster,
    LbLocal,
    PreferSameNode,
}

fn v4(a: u32) -> String {
    format!("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)
}

impl Plan {
    #[allow(clippy::needless_range_loop)]
    pub fn new(cfg: Config) -> Plan {
        let seed = cfg.seed;
        let zones: Vec<String> = (0..cfg.zones)
            .map(|z| {
                let letter = (b'a' + (z % 26) as u8) as char;
                if z < 26 {
                    format!("{REGION}{letter}")
                } else {
                    format!("{REGION}{letter}{}", z / 26)
                }
            })
            .collect();

        // Namespaces.
        let mut namespaces: Vec<Namespace> = SYSTEM_NAMESPACES
            .iter()
            .map(|n| n.to_string())
            .chain(TEAMS.iter().map(|t| format!("team-{t}")))
            .enumerate()
            .map(|(i, name)| {
                let mut r = Rng::stream(seed, stream::NAMESPACE, i as u64);
                Namespace {
                    name,
                    uid: r.uuid(),
                    created: NOW - 400 * 86_400 + i as i64 * 60 + r.below(60) as i64,
                }
            })
            .collect();
        let ns_index =
            |name: &str, nss: &[Namespace]| nss.iter().position(|n| n.name == name).expect("namespace");
        let first_team_ns = SYSTEM_NAMESPACES.len();
        namespaces.shrink_to_fit();

        // Nodes. Three control-plane nodes (when there are at least 6 nodes), one per zone.
        let n_cp = if cfg.nodes >= 6 { 3 } else { 0 };
        let nodes: Vec<Node> = (0..cfg.nodes)
            .map(|i| {
                let mut r = Rng::stream(seed, stream::NODE, i as u64);
                let control_plane = i < n_cp;
                let name = if control_plane {
                    format!("control-plane-{}", i + 1)
                } else {
                    format!("node-{:05}", i - n_cp + 1)
                };
                let ip = (10u32 << 24) + 10 + i as u32; // 10.0.0.10 + i
                let cidr = (10u32 << 24) + (64 << 16) + ((i as u32) << 8); // 10.64.0.0/10, /24 each
                let instance = if control_plane {
                    0
                } else {
                    r.below(INSTANCE_TYPES.len() as u64) as usize
                };
                let kubelet = *r.pick(&["v1.35.1", "v1.35.1", "v1.35.1", "v1.35.2", "v1.35.0"]);
                Node {
                    name,
                    zone: i % cfg.zones,
                    control_plane,
                    ready: control_plane || !r.chance(0.002),
                    instance,
                    ipv4: v4(ip),
                    ipv6: format!("fd00:10:0:{:x}::{:x}", i >> 8, (i & 255) + 10),
                    pod_cidr4: format!("{}/24", v4(cidr)),
                    pod_cidr6: format!("fd00:10:64:{i:x}::/64"),
                    kubelet,
                    created: NOW - 200 * 86_400 + r.below(190 * 86_400) as i64,
                }
            })
            .collect();

        // Pod sets: DaemonSets sized from ref_nodes, then Deployments sharing the rest.
        let mut sets: Vec<PodSet> = Vec::new();
        let mut ds_sizes: Vec<usize> = DAEMONSETS
            .iter()
            .map(|d| ((d.2 * cfg.ref_nodes as f64).round() as usize).max(1))
            .collect();
        let ds_total: usize = ds_sizes.iter().sum();
        let ds_budget = cfg.pods * 6 / 10;
        if ds_total > ds_budget {
            for s in &mut ds_sizes {
                *s = (*s * ds_budget / ds_total).max(1);
            }
        }
        let mut next_pod = 0usize;
        for (i, d) in DAEMONSETS.iter().enumerate() {
            let mut r = Rng::stream(seed, stream::SET, i as u64);
            sets.push(PodSet {
                kind: SetKind::DaemonSet,
                name: d.0.to_string(),
                namespace: ns_index(d.1, &namespaces),
                replicas: ds_sizes[i],
                image: d.5.to_string(),
                ports: d
                    .6
                    .iter()
                    .map(|p| ContainerPort {
                        name: p.0,
                        port: p.1,
                        protocol: p.2,
                    })
                    .collect(),
                host_network: d.4,
                on_control_plane: d.3,
                sidecar: false,
                template_hash: r.suffix(10),
                uid: r.uuid(),
                rs_uid: String::new(),
                created: NOW - 300 * 86_400 + r.below(86_400) as i64,
                first_pod: next_pod,
            });
            next_pod += ds_sizes[i];
        }
        let ds_pods = next_pod;
        let pods_left = cfg.pods.saturating_sub(ds_pods);
        let ds_services = DS_SERVICES.len().min(cfg.services);
        let dep_services = cfg.services - ds_services;
        let n_dep = ((dep_services as f64 * 0.9).round() as usize)
            .clamp(1, pods_left.max(1))
            .min(pods_left);
        // Replica counts: mostly small, a long tail; scaled to use exactly pods_left.
        let mut layout = Rng::stream(seed, stream::LAYOUT, 0);
        let mut replicas: Vec<usize> = (0..n_dep)
            .map(|_| {
                let u = layout.unit();
                if u < 0.40 {
                    layout.range(1, 3) as usize
                } else if u < 0.75 {
                    layout.range(4, 10) as usize
                } else if u < 0.95 {
                    layout.range(11, 40) as usize
                } else {
                    layout.range(41, 200) as usize
                }
            })
            .collect();
        if n_dep > 0 {
            let sum: usize = replicas.iter().sum();
            for r in &mut replicas {
                *r = (*r * pods_left / sum).max(1);
            }
            let mut sum: usize = replicas.iter().sum();
            let mut i = 0;
            while sum < pods_left {
                replicas[i % n_dep] += 1;
                sum += 1;
                i += 1;
            }
            while sum > pods_left {
                let (j, _) = replicas
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, r)| **r)
                    .expect("non-empty");
                replicas[j] -= 1;
                sum -= 1;
            }
        }
        for (k, &n) in replicas.iter().enumerate() {
            let i = sets.len();
            let mut r = Rng::stream(seed, stream::SET, i as u64);
            let team = r.below(TEAMS.len() as u64) as usize;
            let comp = r.pick(COMPONENTS);
            let dns_like = r.chance(0.01);
            let ports = if dns_like {
                vec![
                    ContainerPort {
                        name: "dns",
                        port: 5353,
                        protocol: "UDP",
                    },
                    ContainerPort {
                        name: "dns-tcp",
                        port: 5353,
                        protocol: "TCP",
                    },
                    ContainerPort {
                        name: "metrics",
                        port: 9153,
                        protocol: "TCP",
                    },
                ]
            } else {
                let (pn, pp) = *r.pick(&[("http", 8080u16), ("http", 8080), ("grpc", 9090), ("https", 8443)]);
                vec![
                    ContainerPort {
                        name: pn,
                        port: pp,
                        protocol: "TCP",
                    },
                    ContainerPort {
                        name: "metrics",
                        port: 9102,
                        protocol: "TCP",
                    },
                ]
            };
            let name = if dns_like {
                format!("{}-dns-{k:04}", TEAMS[team])
            } else {
                format!("{}-{comp}-{k:04}", TEAMS[team])
            };
            sets.push(PodSet {
                kind: SetKind::Deployment,
                image: format!(
                    "registry.example.com/{}/{}:v{}.{}.{}",
                    TEAMS[team],
                    comp,
                    r.range(1, 4),
                    r.below(30),
                    r.below(10)
                ),
                name,
                namespace: first_team_ns + team,
                replicas: n,
                ports,
                host_network: false,
                on_control_plane: false,
                sidecar: r.chance(0.1),
                template_hash: r.suffix(10),
                uid: r.uuid(),
                rs_uid: r.uuid(),
                created: NOW - 120 * 86_400 + r.below(115 * 86_400) as i64,
                first_pod: next_pod,
            });
            next_pod += n;
        }

        // Pods.
        let workers: Vec<usize> = (0..nodes.len()).filter(|&i| !nodes[i].control_plane).collect();
        let all_nodes: Vec<usize> = (0..nodes.len()).collect();
        let mut pods_on_node = vec![0u32; nodes.len()];
        let mut overflow = 0u32;
        let mut pods: Vec<Pod> = Vec::with_capacity(next_pod);
        // Generated name suffixes collide (27^5 values, thousands of pods per set): draw
        // again on a collision, as the API server's generateName retry effectively does.
        let mut names: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (si, set) in sets.iter().enumerate() {
            let eligible: &[usize] = if set.on_control_plane || workers.is_empty() {
                &all_nodes
            } else {
                &workers
            };
            for j in 0..set.replicas {
                let pi = set.first_pod + j;
                let mut r = Rng::stream(seed, stream::POD, pi as u64);
                let n = eligible.len();
                let node = match set.kind {
                    SetKind::DaemonSet if set.replicas <= n => eligible[j * n / set.replicas],
                    SetKind::DaemonSet => eligible[j % n],
                    SetKind::Deployment => eligible[r.below(n as u64) as usize],
                };
                let u = r.unit();
                let state = if u < 0.003 {
                    PodState::Pending
                } else if u < 0.033 {
                    PodState::NotReady
                } else if u < 0.043 {
                    PodState::Terminating { ready: r.chance(0.7) }
                } else {
                    PodState::Ready
                };
                let name = loop {
                    let candidate = match set.kind {
                        SetKind::DaemonSet => format!("{}-{}", set.name, r.suffix(5)),
                        SetKind::Deployment => {
                            format!("{}-{}-{}", set.name, set.template_hash, r.suffix(5))
                        }
                    };
                    if names.insert(candidate.clone()) {
                        break candidate;
                    }
                };
                let (ipv4, ipv6) = if state == PodState::Pending {
                    (None, None)
                } else if set.host_network {
                    (Some(nodes[node].ipv4.clone()), Some(nodes[node].ipv6.clone()))
                } else {
                    let k = pods_on_node[node];
                    pods_on_node[node] += 1;
                    if k < 250 {
                        let a = (10u32 << 24) + (64 << 16) + ((node as u32) << 8) + 2 + k;
                        (Some(v4(a)), Some(format!("fd00:10:64:{node:x}::{:x}", k + 2)))
                    } else {
                        // More pods on a node than its /24 holds (only with very few
                        // nodes): take addresses from an overflow pool.
                        overflow += 1;
                        let a = (172u32 << 24) + (16 << 16) + overflow;
                        (Some(v4(a)), Some(format!("fd00:172:16::{overflow:x}")))
                    }
                };
                let created = set.created.max(nodes[node].created) + r.below(86_400 * 5) as i64;
                pods.push(Pod {
                    set: si,
                    name,
                    node,
                    ipv4,
                    ipv6,
                    state,
                    uid: r.uuid(),
                    created: created.min(NOW - 600),
                });
            }
        }

        // Services.
        let mut services: Vec<Service> = Vec::with_capacity(cfg.services);
        let mut node_port = 30000u16;
        let mut next_node_port = || {
            node_port = if node_port >= 32767 { 30000 } else { node_port + 1 };
            node_port
        };
        let mut dep_cursor = 0usize;
        for si in 0..cfg.services {
            let mut r = Rng::stream(seed, stream::SERVICE, si as u64);
            let mut svc;
            if si < ds_services {
                let (ds, suffix, flavor, port_names) = DS_SERVICES[si];
                let set = &sets[ds];
                let ports = port_names
                    .iter()
                    .map(|pn| {
                        let cp = set.ports.iter().find(|p| p.name == *pn).expect("port");
                        ServicePort {
                            name: pn.to_string(),
                            port: cp.port,
                            protocol: cp.protocol,
                            target: cp.port,
                            target_name: None,
                            node_port: None,
                        }
                    })
                    .collect();
                svc = Service::base(format!("{}{suffix}", set.name), set, ds, ports, &mut r);
                match flavor {
                    DsFlavor::ItpLocal => svc.itp_local = true,
                    DsFlavor::ItpLocalDual => {
                        svc.itp_local = true;
                        svc.families = vec![Family::V4, Family::V6];
                        svc.family_policy = "PreferDualStack";
                    }
                    DsFlavor::Cluster => {}
                    DsFlavor::LbLocal => {
                        svc.svc_type = SvcType::LoadBalancer;
                        svc.etp_local = true;
                    }
                    DsFlavor::PreferSameNode => {
                        svc.traffic_distribution = Some("PreferSameNode");
                    }
                }
            } else {
                let k = si - ds_services;
                let (set_idx, sibling) = if r.chance(0.003) || n_dep == 0 {
                    (None, 0)
                } else if k < n_dep {
                    (Some(DAEMONSETS.len() + k), 0)
                } else {
                    dep_cursor += 1;
                    (
                        Some(DAEMONSETS.len() + r.below(n_dep as u64) as usize),
                        dep_cursor,
                    )
                };
                let set = &sets[set_idx.unwrap_or(DAEMONSETS.len().min(sets.len() - 1))];
                let main = &set.ports[0];
                let named = r.chance(0.5);
                let mut ports = Vec::new();
                let name;
                if set.ports[0].protocol == "UDP" && sibling == 0 {
                    name = set.name.clone();
                    for cp in &set.ports[..2] {
                        ports.push(ServicePort {
                            name: cp.name.to_string(),
                            port: 53,
                            protocol: cp.protocol,
                            target: cp.port,
                            target_name: named.then_some(cp.name),
                            node_port: None,
                        });
                    }
                } else if sibling == 0 || r.chance(0.4) {
                    name = if sibling == 0 {
                        set.name.clone()
                    } else {
                        format!(
                            "{}-{}-{sibling}",
                            set.name,
                            r.pick(&["internal", "v2", "canary", "grpc"])
                        )
                    };
                    let svc_port = match main.name {
                        "https" => 443,
                        "grpc" => 9090,
                        _ => 80,
                    };
                    ports.push(ServicePort {
                        name: main.name.to_string(),
                        port: svc_port,
                        protocol: "TCP",
                        target: main.port,
                        target_name: named.then_some(main.name),
                        node_port: None,
                    });
                    if r.chance(0.3) {
                        let m = set.ports.last().expect("ports");
                        ports.push(ServicePort {
                            name: m.name.to_string(),
                            port: m.port,
                            protocol: "TCP",
                            target: m.port,
                            target_name: named.then_some(m.name),
                            node_port: None,
                        });
                    }
                } else {
                    name = format!("{}-metrics-{sibling}", set.name);
                    let m = set.ports.last().expect("ports");
                    ports.push(ServicePort {
                        name: m.name.to_string(),
                        port: m.port,
                        protocol: "TCP",
                        target: m.port,
                        target_name: None,
                        node_port: None,
                    });
                }
                let name = if set_idx.is_none() {
                    format!("{}-orphan-{k}", set.name)
                } else {
                    name
                };
                svc = Service::base(name, set, set_idx.unwrap_or(usize::MAX), ports, &mut r);
                svc.set = set_idx;
                if set_idx.is_none() {
                    svc.selector_value = format!("{}-retired", set.name);
                }
                let u = r.unit() * 100.0;
                if u < 52.0 {
                    // Cluster
                } else if u < 56.0 {
                    svc.itp_local = true;
                } else if u < 64.0 {
                    svc.traffic_distribution = Some("PreferClose");
                } else if u < 71.0 {
                    svc.traffic_distribution = Some("PreferSameZone");
                } else if u < 74.0 {
                    svc.traffic_distribution = Some("PreferSameNode");
                } else if u < 79.5 {
                    svc.topology_annotation = Some(("service.kubernetes.io/topology-mode", "Auto"));
                    if r.chance(0.1) {
                        // Annotation wins over the field.
                        svc.traffic_distribution = Some("PreferClose");
                    }
                } else if u < 80.0 {
                    svc.topology_annotation = Some(("service.kubernetes.io/topology-aware-hints", "auto"));
                } else if u < 84.0 {
                    svc.svc_type = SvcType::NodePort;
                    svc.etp_local = true;
                } else if u < 86.0 {
                    svc.svc_type = SvcType::NodePort;
                } else if u < 91.0 {
                    svc.svc_type = SvcType::LoadBalancer;
                    svc.etp_local = true;
                } else if u < 94.0 {
                    svc.svc_type = SvcType::LoadBalancer;
                } else if u < 98.0 {
                    svc.headless = true;
                } else {
                    svc.external_ip = Some(format!("203.0.113.{}", 1 + si % 250));
                }
                let f = r.unit();
                if f < 0.03 {
                    svc.families = vec![Family::V4, Family::V6];
                    svc.family_policy = "PreferDualStack";
                } else if f < 0.05 {
                    svc.families = vec![Family::V4, Family::V6];
                    svc.family_policy = "RequireDualStack";
                } else if f < 0.06 {
                    svc.families = vec![Family::V6];
                }
            }
            // Addresses.
            if svc.headless {
                svc.cluster_ips = vec!["None".to_string()];
            } else {
                svc.cluster_ips = svc
                    .families
                    .iter()
                    .map(|f| match f {
                        Family::V4 => v4((10u32 << 24) + (96 << 16) + 10 + si as u32),
                        Family::V6 => format!("fd00:10:96::{:x}", si + 10),
                    })
                    .collect();
            }
            if svc.svc_type != SvcType::ClusterIP {
                for p in &mut svc.ports {
                    p.node_port = Some(next_node_port());
                }
            }
            if svc.svc_type == SvcType::LoadBalancer {
                svc.lb_ingress = Some(v4((198u32 << 24) + (18 << 16) + 1 + si as u32));
                if svc.etp_local {
                    svc.health_check_node_port = Some(next_node_port());
                }
            }
            svc.last_applied = r.chance(0.3);
            services.push(svc);
        }

        // Endpoints: the controller's inclusion rule (pod has an IP, not terminal;
        // terminating pods stay, with ready=false).
        let endpoints: Vec<Vec<Vec<usize>>> = services
            .iter()
            .map(|svc| {
                svc.families
                    .iter()
                    .map(|f| match svc.set {
                        None => Vec::new(),
                        Some(s) => {
                            let set = &sets[s];
                            (set.first_pod..set.first_pod + set.replicas)
                                .filter(|&p| match f {
                                    Family::V4 => pods[p].ipv4.is_some(),
                                    Family::V6 => pods[p].ipv6.is_some(),
                                })
                                .collect()
                        }
                    })
                    .collect()
            })
            .collect();

        // Output order: as `kubectl get ns,nodes,ds,deploy,rs,pods,svc,endpointslices -A -o json`.
        let mut items = Vec::new();
        items.extend((0..namespaces.len()).map(Item::Namespace));
        items.extend((0..nodes.len()).map(Item::Node));
        let ds: Vec<usize> = (0..sets.len())
            .filter(|&s| sets[s].kind == SetKind::DaemonSet)
            .collect();
        let dep: Vec<usize> = (0..sets.len())
            .filter(|&s| sets[s].kind == SetKind::Deployment)
            .take(cfg.workload_objects)
            .collect();
        items.extend(ds.iter().map(|&s| Item::DaemonSet(s)));
        items.extend(dep.iter().map(|&s| Item::Deployment(s)));
        items.extend(dep.iter().map(|&s| Item::ReplicaSet(s)));
        items.extend((0..pods.len()).map(Item::Pod));
        items.extend((0..services.len()).map(Item::Service));
        for (s, fams) in endpoints.iter().enumerate() {
            for (f, eps) in fams.iter().enumerate() {
                let chunks = eps.len().div_ceil(MAX_PER_SLICE).max(1);
                items.extend((0..chunks).map(|c| Item::Slice(s, f, c)));
            }
        }

        let slice_suffixes = endpoints
            .iter()
            .enumerate()
            .map(|(s, fams)| {
                let mut r = Rng::stream(seed, stream::SLICE, s as u64);
                let n: usize = fams
                    .iter()
                    .map(|eps| eps.len().div_ceil(MAX_PER_SLICE).max(1))
                    .sum();
                let mut out: Vec<String> = Vec::with_capacity(n);
                while out.len() < n {
                    let x = r.suffix(5);
                    if !out.contains(&x) {
                        out.push(x);
                    }
                }
                out
            })
            .collect();

        Plan {
            cfg,
            slice_suffixes,
            zones,
            namespaces,
            nodes,
            sets,
            pods,
            services,
            endpoints,
            items,
        }
    }
}

impl Service {
    fn base(name: String, set: &PodSet, _set_idx: usize, ports: Vec<ServicePort>, r: &mut Rng) -> Service {
        Service {
            name,
            namespace: set.namespace,
            set: Some(_set_idx),
            selector_value: set.name.clone(),
            svc_type: SvcType::ClusterIP,
            headless: false,
            itp_local: false,
            etp_local: false,
            traffic_distribution: None,
            topology_annotation: None,
            families: vec![Family::V4],
            family_policy: "SingleStack",
            ports,
            cluster_ips: Vec::new(),
            external_ip: None,
            lb_ingress: None,
            health_check_node_port: None,
            last_applied: false,
            uid: r.uuid(),
            created: set.created + r.below(3600) as i64,
        }
    }
}
