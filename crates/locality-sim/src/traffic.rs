//! Simulated traffic: a connection resolved at one virtual instant by traversing the rule
//! table of the node that first processes it.

use std::net::IpAddr;

use locality_model::objects::Protocol;

use crate::engine::Engine;
use crate::kubeproxy::{Fault, ProxyMode, RuleTarget, ServicePortRules};
use crate::objects::{Kind, ObjectKey};
use crate::time::Millis;

/// Who opens a simulated connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Client {
    /// A pod (pod network, or hostNetwork: then it is the node itself).
    Pod {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// The node itself (a hostNetwork process).
    Host {
        /// Node name.
        node: String,
    },
    /// A client outside the cluster whose packets arrive at `via_node`.
    External {
        /// The node the packets arrive at.
        via_node: String,
    },
}

impl Client {
    /// A pod client.
    pub fn pod(namespace: &str, name: &str) -> Self {
        Client::Pod {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
    /// A host-network client on `node`.
    pub fn host(node: &str) -> Self {
        Client::Host { node: node.into() }
    }
    /// An external client arriving at `node`.
    pub fn external(node: &str) -> Self {
        Client::External {
            via_node: node.into(),
        }
    }
}

/// Where a simulated connection goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An address and port: a ClusterIP, an external IP, a node's InternalIP (NodePort or a
    /// hostNetwork port), or a pod IP.
    Addr(IpAddr, u16),
    /// A DNS name: `svc`, `svc.ns`, `svc.ns.svc`, `svc.ns.svc.cluster.local`.
    Dns(String, u16),
}

/// What the client sees.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// A response from this pod on this node.
    Response {
        /// Pod namespace.
        namespace: String,
        /// Pod name.
        pod: String,
        /// Node the pod runs on.
        node: String,
    },
    /// No answer within the client's timeout.
    Timeout,
    /// Connection refused (TCP RST or ICMP port unreachable).
    Refused,
}

impl Outcome {
    /// `response`, `timeout` or `refused`.
    pub fn class(&self) -> &'static str {
        match self {
            Outcome::Response { .. } => "response",
            Outcome::Timeout => "timeout",
            Outcome::Refused => "refused",
        }
    }
}

/// Why a simulated connection could not even be attempted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The client pod does not exist.
    #[error("simulated client pod {0} not found")]
    UnknownClient(String),
    /// The client pod has no node or is not running.
    #[error("simulated client pod {0} is not running")]
    ClientNotRunning(String),
    /// The node does not exist.
    #[error("simulated cluster has no node {0:?}")]
    UnknownNode(String),
    /// DNS: no such Service (NXDOMAIN).
    #[error("simulated DNS: lookup {0}: no such host")]
    NoSuchHost(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Src {
    Pod,
    Host,
    External,
}

impl Engine {
    /// Opens a simulated connection now and returns what the client sees. The rule table of
    /// the node that first processes the packet decides (the client's node; for a NodePort
    /// on another node's address, that node), choosing among endpoints uniformly with the
    /// seeded PRNG. `timeout_ms` is the client's timeout (a timeout takes that long; the
    /// engine's clock does not move).
    pub fn connect(
        &mut self,
        client: &Client,
        target: &Target,
        protocol: Protocol,
        timeout_ms: Millis,
    ) -> Result<Outcome, ConnectError> {
        let _ = timeout_ms;
        let (node, src, client_ns) = self.resolve_client(client)?;
        let (ip, port) = match target {
            Target::Addr(ip, port) => (*ip, *port),
            Target::Dns(name, port) => (self.resolve_dns(name, &client_ns)?, *port),
        };
        // A node address: NodePort (or a hostNetwork listener) on that node.
        if let Some(owner) = self.node_with_ip(&ip) {
            let src_there = if owner == node { src } else { Src::External };
            let Some(np) = self.nodes.get(&owner) else {
                return Err(ConnectError::UnknownNode(owner));
            };
            let family = locality_model::objects::IpFamily::of(&ip);
            let found = np
                .proxy
                .table()
                .entries()
                .find(|e| e.node_port == port && e.protocol == protocol && e.family == family)
                .cloned();
            if let Some(e) = found {
                let t = match src_there {
                    Src::External => e.external.clone(),
                    _ => e.external_from_node.clone(),
                };
                return Ok(self.deliver(&owner, &e, &t));
            }
            return Ok(self.host_listener(&owner, port, protocol));
        }
        let (hit, nft_known_ip) = {
            let Some(np) = self.nodes.get(&node) else {
                return Err(ConnectError::UnknownNode(node));
            };
            let table = np.proxy.table();
            let hit = if let Some(e) = table
                .entries()
                .find(|e| e.cluster_ip == Some(ip) && e.port == port && e.protocol == protocol)
            {
                Some((e.clone(), e.internal.clone()))
            } else {
                table
                    .entries()
                    .find(|e| e.external_ips.contains(&ip) && e.port == port && e.protocol == protocol)
                    .map(|e| {
                        let t = match src {
                            Src::External => e.external.clone(),
                            Src::Host if e.host_external_ip_drop => RuleTarget::Drop,
                            _ => e.external_from_node.clone(),
                        };
                        (e.clone(), t)
                    })
            };
            let nft = np.proxy.profile.mode == ProxyMode::Nftables
                && table.entries().any(|e| e.cluster_ip == Some(ip));
            (hit, nft)
        };
        if let Some((e, t)) = hit {
            return Ok(self.deliver(&node, &e, &t));
        }
        if self.lost(&node) {
            return Ok(Outcome::Timeout);
        }
        // A pod IP: straight to the pod.
        if let Some(key) = self.pod_by_ip.get(&ip).cloned() {
            return Ok(self.at_pod(&key, port, protocol));
        }
        // nftables rejects unknown ports of a known cluster IP; anything else goes nowhere.
        if nft_known_ip {
            return Ok(Outcome::Refused);
        }
        Ok(Outcome::Timeout)
    }

    fn lost(&mut self, node: &str) -> bool {
        let fraction = match self.nodes.get(node).map(|n| &n.proxy.profile.fault) {
            Some(Some(Fault::Lossy { fraction })) => *fraction,
            _ => return false,
        };
        self.rng.chance(fraction)
    }

    fn deliver(&mut self, node: &str, e: &ServicePortRules, t: &RuleTarget) -> Outcome {
        if self.lost(node) {
            return Outcome::Timeout;
        }
        match t {
            RuleTarget::Reject | RuleTarget::NoRealServers => Outcome::Refused,
            RuleTarget::Drop | RuleTarget::ReplyLost => Outcome::Timeout,
            RuleTarget::Endpoints { endpoints, .. } => {
                if endpoints.is_empty() {
                    return Outcome::Refused;
                }
                let pick = endpoints[self.rng.below(endpoints.len() as u64) as usize];
                let ep = &e.endpoints[pick];
                match self.pod_by_ip.get(&ep.ip).cloned() {
                    Some(key) => self.at_pod(&key, ep.port, e.protocol),
                    None => match ep.pod.clone() {
                        // hostNetwork endpoints share the node's address.
                        Some((ns, name)) => {
                            self.at_pod(&ObjectKey::new(Kind::Pod, ns, name), ep.port, e.protocol)
                        }
                        None => Outcome::Timeout,
                    },
                }
            }
        }
    }

    /// The pod's answer: a response when its process runs and listens on the port.
    fn at_pod(&self, key: &ObjectKey, port: u16, protocol: Protocol) -> Outcome {
        let Some((pod, _)) = self.stored_pod(key) else {
            return Outcome::Timeout;
        };
        let Some(rt) = self.pods.get(key) else {
            return Outcome::Timeout;
        };
        if !rt.running {
            return Outcome::Refused;
        }
        let listens = pod.behaviour.listens
            && pod
                .pod
                .spec
                .ports
                .iter()
                .any(|p| p.container_port == port && p.protocol == protocol);
        if !listens {
            return Outcome::Refused;
        }
        Outcome::Response {
            namespace: key.namespace.clone(),
            pod: key.name.clone(),
            node: rt.node.clone(),
        }
    }

    fn host_listener(&self, node: &str, port: u16, protocol: Protocol) -> Outcome {
        for (key, rt) in self.pods.iter().filter(|(_, rt)| rt.node == node && rt.running) {
            if let Some((p, _)) = self.stored_pod(key)
                && p.pod.spec.host_network
                && p.behaviour.listens
                && p.pod
                    .spec
                    .ports
                    .iter()
                    .any(|cp| cp.container_port == port && cp.protocol == protocol)
            {
                return Outcome::Response {
                    namespace: key.namespace.clone(),
                    pod: key.name.clone(),
                    node: rt.node.clone(),
                };
            }
        }
        Outcome::Refused
    }

    fn node_with_ip(&self, ip: &IpAddr) -> Option<String> {
        self.store
            .list(Kind::Node)
            .filter_map(|(_, s)| s.object.as_node())
            .find(|n| n.internal_ips.contains(ip))
            .map(|n| n.meta.name.clone())
    }

    fn resolve_client(&self, client: &Client) -> Result<(String, Src, String), ConnectError> {
        match client {
            Client::Host { node } => {
                self.nodes
                    .get(node)
                    .ok_or_else(|| ConnectError::UnknownNode(node.clone()))?;
                Ok((node.clone(), Src::Host, "default".into()))
            }
            Client::External { via_node } => {
                self.nodes
                    .get(via_node)
                    .ok_or_else(|| ConnectError::UnknownNode(via_node.clone()))?;
                Ok((via_node.clone(), Src::External, "default".into()))
            }
            Client::Pod { namespace, name } => {
                let key = ObjectKey::new(Kind::Pod, namespace, name);
                let id = format!("{namespace}/{name}");
                let (pod, _) = self
                    .stored_pod(&key)
                    .ok_or(ConnectError::UnknownClient(id.clone()))?;
                let running = self.pods.get(&key).is_some_and(|r| r.running);
                if !running {
                    return Err(ConnectError::ClientNotRunning(id));
                }
                let src = if pod.pod.spec.host_network {
                    Src::Host
                } else {
                    Src::Pod
                };
                Ok((pod.pod.spec.node_name.clone(), src, namespace.clone()))
            }
        }
    }

    /// Cluster DNS: a Service name to its first cluster IP (a headless Service: one of its
    /// ready endpoints' addresses).
    fn resolve_dns(&mut self, name: &str, client_ns: &str) -> Result<IpAddr, ConnectError> {
        let nx = || ConnectError::NoSuchHost(name.to_string());
        let trimmed = name.trim_end_matches('.');
        let trimmed = trimmed.strip_suffix(".cluster.local").unwrap_or(trimmed);
        let trimmed = trimmed.strip_suffix(".svc").unwrap_or(trimmed);
        let (svc, ns) = match trimmed.split_once('.') {
            Some((s, n)) if !n.contains('.') => (s, n),
            Some(_) => return Err(nx()),
            None => (trimmed, client_ns),
        };
        let key = ObjectKey::new(Kind::Service, ns, svc);
        let s = self.get(&key).and_then(|o| o.as_service()).ok_or_else(nx)?;
        if let Some(ip) = s.cluster_ips.first() {
            return Ok(*ip);
        }
        let addrs: Vec<IpAddr> = self
            .store
            .list_namespace(Kind::EndpointSlice, ns)
            .filter_map(|(_, o)| o.object.as_endpoint_slice())
            .filter(|sl| sl.service_name() == Some(svc))
            .flat_map(|sl| sl.endpoints.iter())
            .filter(|e| e.conditions.ready != Some(false))
            .filter_map(|e| e.addresses.first().copied())
            .collect();
        if addrs.is_empty() {
            return Err(nx());
        }
        Ok(addrs[self.rng.below(addrs.len() as u64) as usize])
    }

    /// A node's simulated kube-proxy rule table as text (`locality sim rules NODE`).
    pub fn rules_text(&self, node: &str) -> Result<String, ConnectError> {
        self.nodes
            .get(node)
            .map(|n| n.proxy.rules_text())
            .ok_or_else(|| ConnectError::UnknownNode(node.to_string()))
    }

    /// A node's simulated kube-proxy metrics (`127.0.0.1:10249/metrics`), Prometheus text
    /// format; `Ok(None)` when the data plane has no metrics endpoint (`other`).
    pub fn metrics_text(&self, node: &str) -> Result<Option<String>, ConnectError> {
        self.nodes
            .get(node)
            .map(|n| n.proxy.metrics_text())
            .ok_or_else(|| ConnectError::UnknownNode(node.to_string()))
    }

    /// A node's `/proxyMode` answer; `Ok(None)` for an `other` data plane.
    pub fn proxy_mode_text(&self, node: &str) -> Result<Option<String>, ConnectError> {
        self.nodes
            .get(node)
            .map(|n| n.proxy.proxy_mode_text())
            .ok_or_else(|| ConnectError::UnknownNode(node.to_string()))
    }
}
