//! Simulated topologies: the built-in `three-zones`, `four-nodes` and `telemetry`, and YAML
//! topology files.
//!
//! # YAML topology format
//!
//! ```yaml
//! # A simulated cluster for `locality sim` (every field but `nodes[].name` is optional).
//! name: my-cluster
//! nodes:
//!   - name: node-a                  # unique; a DNS-1123 label
//!     zone: zone-a                  # topology.kubernetes.io/zone
//!     cpu: "4"                      # allocatable CPU: "4", "3.5" or "3500m" (default "4")
//!     maxPods: 110                  # kubelet maxPods, allocatable pods (default 110)
//!     controlPlane: false           # control-plane role label + NoSchedule taint
//!     ready: true                   # Ready condition (default true)
//!     internalIP: 172.18.0.2        # default 172.18.0.<position + 2>
//!     labels: {disktype: ssd}
//!     taints:
//!       - {key: dedicated, value: gpu, effect: NoSchedule}   # NoSchedule|PreferNoSchedule|NoExecute
//!     profile: kube-proxy:iptables  # simulated data plane: kube-proxy[:iptables|nftables|ipvs],
//!                                   # ignores-local-policy[:always], stale-rules[:S], hostname-mismatch,
//!                                   # no-terminating-fallback, masquerades-external,
//!                                   # lossy[:F], other[:NAME] (a fault may add +MODE)
//!     kubeProxyVersion: "1.35"
//! ```
//!
//! Workloads and Services are created through the simulated API, not in this file.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use locality_model::objects::{LabelSelector, Labels, Node, PodSpec, Taint, Toleration, WorkloadKind};
use locality_model::version::KubeVersion;
use serde::Deserialize;

use crate::builders::{self, container_port, labels};
use crate::engine::{Engine, SimConfig, SimError};
use crate::kubeproxy::DataPlaneProfile;
use crate::objects::Object;

/// Names of the built-in topologies.
pub const BUILTIN: [&str; 3] = ["three-zones", "four-nodes", "telemetry"];

/// A node of a topology.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    /// The Node object.
    pub node: Node,
    /// Its data-plane profile.
    pub profile: DataPlaneProfile,
    /// Its kube-proxy version, when not the cluster default.
    pub kube_proxy_version: Option<KubeVersion>,
}

/// A simulated cluster to start from: nodes with profiles, then other objects.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Name (`three-zones`, a file's `name`…).
    pub name: String,
    /// Nodes.
    pub nodes: Vec<NodeSpec>,
    /// Namespaces, Services, workloads and pods created after the nodes, in order.
    pub objects: Vec<Object>,
}

/// Why a topology could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// Not a built-in name.
    #[error(
        "unknown simulated topology {name:?}: built-in topologies are three-zones, four-nodes, telemetry (or give a YAML file)"
    )]
    Unknown {
        /// The name given.
        name: String,
    },
    /// YAML syntax or shape error (with line and column when known).
    #[error("{source_name}: invalid simulated topology: {message}")]
    Syntax {
        /// File name.
        source_name: String,
        /// The parser's message.
        message: String,
    },
    /// A field has a value the simulation cannot use.
    #[error("{source_name}: invalid simulated topology: nodes[{index}] ({node}): {message}")]
    Invalid {
        /// File name.
        source_name: String,
        /// Node position.
        index: usize,
        /// Node name.
        node: String,
        /// What is wrong.
        message: String,
    },
    /// The file has no node.
    #[error("{source_name}: a simulated topology needs at least one node")]
    Empty {
        /// File name.
        source_name: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileTopology {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    nodes: Vec<FileNode>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileNode {
    name: String,
    #[serde(default)]
    zone: Option<String>,
    #[serde(default)]
    cpu: Option<String>,
    #[serde(default)]
    max_pods: Option<u64>,
    #[serde(default)]
    control_plane: bool,
    #[serde(default)]
    ready: Option<bool>,
    #[serde(default, rename = "internalIP")]
    internal_ip: Option<String>,
    #[serde(default)]
    labels: Labels,
    #[serde(default)]
    taints: Vec<FileTaint>,
    #[serde(default)]
    profile: Option<String>,
    #[serde(default)]
    kube_proxy_version: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTaint {
    key: String,
    #[serde(default)]
    value: String,
    effect: String,
}

fn default_ip(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(u32::from(Ipv4Addr::new(172, 18, 0, 2)) + i as u32))
}

fn parse_cpu(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(m) = s.strip_suffix('m') {
        return m.parse().ok();
    }
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * 1000.0).round() as u64)
}

fn dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && !s.starts_with(['-', '.'])
        && !s.ends_with(['-', '.'])
}

impl Topology {
    /// A built-in topology by name.
    pub fn builtin(name: &str) -> Result<Topology, TopologyError> {
        match name {
            "three-zones" => Ok(zones_topology(
                name,
                &[("node-a", "zone-a"), ("node-b", "zone-b"), ("node-c", "zone-c")],
            )),
            "four-nodes" => Ok(zones_topology(
                name,
                &[
                    ("node-a", "zone-a"),
                    ("node-b", "zone-b"),
                    ("node-c", "zone-c"),
                    ("node-d", "zone-a"),
                ],
            )),
            "telemetry" => Ok(telemetry()),
            _ => Err(TopologyError::Unknown { name: name.into() }),
        }
    }

    /// Reads a YAML topology (format in the module docs); `source_name` names it in errors.
    pub fn from_yaml(text: &str, source_name: &str) -> Result<Topology, TopologyError> {
        let file: FileTopology = serde_saphyr::from_str(text).map_err(|e| TopologyError::Syntax {
            source_name: source_name.into(),
            message: e.to_string(),
        })?;
        if file.nodes.is_empty() {
            return Err(TopologyError::Empty {
                source_name: source_name.into(),
            });
        }
        let mut seen = BTreeSet::new();
        let mut nodes = Vec::new();
        for (i, f) in file.nodes.into_iter().enumerate() {
            let bad = |message: String| TopologyError::Invalid {
                source_name: source_name.into(),
                index: i,
                node: f.name.clone(),
                message,
            };
            if !dns_label(&f.name) {
                return Err(bad(
                    "name must be a lower-case DNS name (a-z, 0-9, '-', '.')".into()
                ));
            }
            if !seen.insert(f.name.clone()) {
                return Err(bad("duplicate node name".into()));
            }
            let cpu = match &f.cpu {
                None => 4000,
                Some(c) => parse_cpu(c)
                    .ok_or_else(|| bad(format!("cpu {c:?} is not a quantity like \"4\" or \"3500m\"")))?,
            };
            let ip = match &f.internal_ip {
                None => default_ip(i),
                Some(s) => s
                    .parse()
                    .map_err(|_| bad(format!("internalIP {s:?} is not an IP address")))?,
            };
            let mut n = builders::node(&f.name, f.zone.as_deref(), cpu, ip);
            n.allocatable_pods = f.max_pods;
            if f.zone.as_deref() == Some("") {
                return Err(bad("zone is empty (omit it for a node without zone)".into()));
            }
            n.meta.labels.extend(f.labels.clone());
            if f.control_plane {
                n = builders::control_plane(n);
            }
            n.ready = Some(f.ready.unwrap_or(true));
            for t in &f.taints {
                if !matches!(t.effect.as_str(), "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
                    return Err(bad(format!(
                        "taint {}: effect {:?} must be NoSchedule, PreferNoSchedule or NoExecute",
                        t.key, t.effect
                    )));
                }
                n.taints.push(Taint {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                });
            }
            let profile = match &f.profile {
                None => DataPlaneProfile::default(),
                Some(p) => p
                    .parse()
                    .map_err(|e: crate::kubeproxy::ProfileError| bad(e.to_string()))?,
            };
            let kube_proxy_version = match &f.kube_proxy_version {
                None => None,
                Some(v) => Some(v.parse::<KubeVersion>().map_err(|e| bad(e.to_string()))?),
            };
            nodes.push(NodeSpec {
                node: n,
                profile,
                kube_proxy_version,
            });
        }
        Ok(Topology {
            name: file.name.unwrap_or_else(|| source_name.to_string()),
            nodes,
            objects: Vec::new(),
        })
    }
}

fn zones_topology(name: &str, nodes: &[(&str, &str)]) -> Topology {
    Topology {
        name: name.into(),
        nodes: nodes
            .iter()
            .enumerate()
            .map(|(i, (n, z))| NodeSpec {
                node: builders::node(n, Some(z), 4000, default_ip(i)),
                profile: DataPlaneProfile::default(),
                kube_proxy_version: None,
            })
            .collect(),
        objects: Vec::new(),
    }
}

/// 3 control-plane nodes and 27 workers over 3 zones; workers 25–27 carry
/// `dedicated=gpu:NoSchedule`, which keeps the `agent` DaemonSet (behind the ITP Local Service
/// `telemetry/agent`) off them, while the `gateway` Deployment tolerates it.
fn telemetry() -> Topology {
    let zones = ["zone-a", "zone-b", "zone-c"];
    let mut nodes = Vec::new();
    for (i, zone) in zones.iter().enumerate() {
        let n = builders::node(&format!("cp-{}", i + 1), Some(zone), 4000, default_ip(i));
        nodes.push(builders::control_plane(n));
    }
    for i in 0..27 {
        let mut n = builders::node(
            &format!("worker-{:02}", i + 1),
            Some(zones[i % 3]),
            8000,
            default_ip(i + 3),
        );
        if i >= 24 {
            n.taints.push(Taint {
                key: "dedicated".into(),
                value: "gpu".into(),
                effect: "NoSchedule".into(),
            });
        }
        nodes.push(n);
    }
    let nodes = nodes
        .into_iter()
        .map(|node| NodeSpec {
            node,
            profile: DataPlaneProfile::default(),
            kube_proxy_version: None,
        })
        .collect();
    let (agent, svc) = builders::telemetry_agent("telemetry", "1");
    let gateway_labels = labels(&[("app", "gateway")]);
    let gateway_spec = PodSpec {
        ports: vec![container_port("http", 8080)],
        tolerations: vec![Toleration {
            key: "dedicated".into(),
            operator: "Equal".into(),
            value: "gpu".into(),
            effect: "NoSchedule".into(),
            toleration_seconds: None,
        }],
        ..PodSpec::default()
    };
    let mut gateway = builders::workload(
        WorkloadKind::Deployment,
        "telemetry",
        "gateway",
        gateway_labels.clone(),
        gateway_spec,
        Some(9),
        builders::netexec_behaviour(8080),
    );
    if let Object::Workload(w) = &mut gateway {
        w.workload.selector = LabelSelector {
            match_labels: gateway_labels,
            match_expressions: Vec::new(),
        };
    }
    Topology {
        name: "telemetry".into(),
        nodes,
        objects: vec![
            builders::namespace("telemetry"),
            Object::Service(svc),
            agent,
            gateway,
        ],
    }
}

impl Engine {
    /// A simulated cluster started from a topology at virtual time 0 (nodes, their profiles,
    /// then the topology's objects); run it to let the controllers act.
    pub fn from_topology(topology: &Topology, config: SimConfig) -> Result<Engine, SimError> {
        let mut e = Engine::new(config);
        for n in &topology.nodes {
            e.set_profile(&n.node.meta.name, n.profile.clone());
            if let Some(v) = n.kube_proxy_version {
                e.set_proxy_version(&n.node.meta.name, v);
            }
            e.create(Object::Node(n.node.clone()))?;
        }
        for o in &topology.objects {
            e.create(o.clone())?;
        }
        Ok(e)
    }
}
