//! Simulated traffic: a connection resolved at one virtual instant by traversing the rule
//! table of the node that first processes it.

use std::net::IpAddr;

use locality_model::dataplane::catalogue::Effect;
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
    /// A client outside the cluster. With `via_node`, its packets arrive at that node (as if a
    /// router or load balancer had chosen it). Without, they can reach node addresses
    /// (NodePorts, host ports) directly and load-balancer ingress IPs through the simulated
    /// cloud load balancer, which picks the node (`cloudlb`); nothing else in the
    /// cluster is reachable from outside.
    External {
        /// The node the packets arrive at; `None`: wherever the network sends them.
        via_node: Option<String>,
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
            via_node: Some(node.into()),
        }
    }
    /// An external client whose packets the network routes: to a node for a node address, to
    /// the simulated cloud load balancer for a load-balancer ingress IP.
    pub fn external_via_load_balancer() -> Self {
        Client::External { via_node: None }
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
        /// The source address the pod saw when the data plane rewrote it (masquerade to the
        /// receiving node's address); `None`: the client's own address.
        masqueraded_to: Option<IpAddr>,
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
    /// The client pod is bound to a node that was deleted: no kube-proxy, no network.
    #[error(
        "simulated client pod {pod} is bound to node {node:?}, which was deleted (the simulated \
         node has no kube-proxy and no network)"
    )]
    ClientNodeDeleted {
        /// The pod, `namespace/name`.
        pod: String,
        /// Its node.
        node: String,
    },
    /// The node does not exist.
    #[error("simulated cluster has no node {0:?}")]
    UnknownNode(String),
    /// DNS: no such Service (NXDOMAIN).
    #[error("simulated DNS: lookup {0}: no such host")]
    NoSuchHost(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
        if let Client::External { via_node: None } = client {
            let (ip, port) = match target {
                Target::Addr(ip, port) => (*ip, *port),
                // Cluster DNS does not answer outside the cluster.
                Target::Dns(name, _) => return Err(ConnectError::NoSuchHost(name.clone())),
            };
            if let Some(owner) = self.node_with_ip(&ip) {
                return self.at_node_address(&owner, &ip, port, protocol, Src::External);
            }
            if self.load_balancer_service(&ip).is_some() {
                return Ok(self.through_load_balancer(&ip, port, protocol));
            }
            return Ok(Outcome::Timeout);
        }
        let (node, src, client_ns) = self.resolve_client(client)?;
        let (ip, port) = match target {
            Target::Addr(ip, port) => (*ip, *port),
            Target::Dns(name, port) => (self.resolve_dns(name, &client_ns)?, *port),
        };
        // A node address: NodePort (or a hostNetwork listener) on that node.
        if let Some(owner) = self.node_with_ip(&ip) {
            let src_there = if owner == node { src } else { Src::External };
            return self.at_node_address(&owner, &ip, port, protocol, src_there);
        }
        let (hit, nft_known_ip) = {
            let Some(np) = self.nodes.get(node.as_str()) else {
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
                    .find(|e| {
                        (e.external_ips.contains(&ip) || e.lb_ips.contains(&ip))
                            && e.port == port
                            && e.protocol == protocol
                    })
                    .map(|e| {
                        // A simulated data plane with the catalogue's
                        // `EtpLocalAppliedToInClusterLbIp` divergence (Cilium 1.19,
                        // cilium/cilium#45252) treats in-cluster traffic to the load-balancer
                        // IP of an externalTrafficPolicy: Local Service as external: no
                        // short-circuit to the cluster endpoints.
                        let lb_as_external = e.external_local
                            && e.lb_ips.contains(&ip)
                            && np.proxy.profile.diverges(Effect::EtpLocalAppliedToInClusterLbIp);
                        let t = match (src, &e.host_external_ip) {
                            (Src::External, _) => e.external.clone(),
                            _ if lb_as_external => e.external.clone(),
                            (Src::Host, Some(host)) => host.clone(),
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
            return Ok(self.deliver(&node, &e, &t, src));
        }
        // A load-balancer ingress IP this node has no rule for (`ipMode: Proxy`, or not
        // programmed yet): the packets leave for the cloud load balancer, which picks a node.
        if self.load_balancer_service(&ip).is_some() {
            return Ok(self.through_load_balancer(&ip, port, protocol));
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

    /// A connection to `ip:port` of node `owner`: its NodePort rule (`external` from outside
    /// the node, else the short-circuit), or a hostNetwork listener.
    fn at_node_address(
        &mut self,
        owner: &str,
        ip: &IpAddr,
        port: u16,
        protocol: Protocol,
        src: Src,
    ) -> Result<Outcome, ConnectError> {
        let Some(np) = self.nodes.get(owner) else {
            return Err(ConnectError::UnknownNode(owner.to_string()));
        };
        let family = locality_model::objects::IpFamily::of(ip);
        let found = np
            .proxy
            .table()
            .entries()
            .find(|e| e.node_port == port && e.protocol == protocol && e.family == family)
            .cloned();
        if let Some(e) = found {
            let t = match src {
                Src::External => e.external.clone(),
                _ => e.external_from_node.clone(),
            };
            return Ok(self.deliver(owner, &e, &t, src));
        }
        Ok(self.host_listener(owner, port, protocol))
    }

    /// A new connection to a load-balancer ingress IP through the simulated cloud load
    /// balancer ([`crate::cloudlb`]): a node picked uniformly (seeded) among the Service's
    /// backends, then that node's rule for the VIP from outside (`external`), or its NodePort
    /// for an `ipMode: Proxy` load balancer. No listener for the port, no healthy node, or a
    /// node without the rule yet: timeout.
    fn through_load_balancer(&mut self, ip: &IpAddr, port: u16, protocol: Protocol) -> Outcome {
        let Some((key, proxy_mode)) = self.load_balancer_service(ip).map(|(k, p)| (k.clone(), p)) else {
            return Outcome::Timeout;
        };
        let Some(node_port) = self
            .get(&key)
            .and_then(|o| o.as_service())
            .and_then(|s| s.ports.iter().find(|p| p.port == port && p.protocol == protocol))
            .map(|p| p.node_port)
        else {
            return Outcome::Timeout;
        };
        let backends = self.load_balancer_backends(&key);
        if backends.is_empty() {
            return Outcome::Timeout;
        }
        let node = backends[self.rng.below(backends.len() as u64) as usize].clone();
        if proxy_mode {
            let Some(node_ip) = self
                .get(&ObjectKey::new(Kind::Node, "", node.as_str()))
                .and_then(|o| o.as_node())
                .and_then(|n| {
                    let family = locality_model::objects::IpFamily::of(ip);
                    n.internal_ips
                        .iter()
                        .find(|a| locality_model::objects::IpFamily::of(a) == family)
                        .copied()
                })
            else {
                return Outcome::Timeout;
            };
            return self
                .at_node_address(&node, &node_ip, node_port, protocol, Src::External)
                .unwrap_or(Outcome::Timeout);
        }
        let rule = self.nodes.get(node.as_str()).and_then(|n| {
            n.proxy
                .table()
                .entries()
                .find(|e| e.lb_ips.contains(ip) && e.port == port && e.protocol == protocol)
                .cloned()
        });
        match rule {
            Some(e) => {
                let t = e.external.clone();
                self.deliver(&node, &e, &t, Src::External)
            }
            None => Outcome::Timeout,
        }
    }

    fn lost(&mut self, node: &str) -> bool {
        let fraction = match self.nodes.get(node).map(|n| &n.proxy.profile.fault) {
            Some(Some(Fault::Lossy { fraction })) => *fraction,
            _ => return false,
        };
        self.rng.chance(fraction)
    }

    /// A connection `node`'s rules for `e` send to `t`. External traffic is masqueraded to
    /// the node's address unless `t` is the Local chain (`externalTrafficPolicy: Local`
    /// preserves the client's address; upstream `pkg/proxy/iptables/proxier.go`: the
    /// `KUBE-EXT-*` chain marks external traffic for masquerade only when the policy is
    /// Cluster), or always with the [`Fault::MasqueradesExternal`] profile.
    fn deliver(&mut self, node: &str, e: &ServicePortRules, t: &RuleTarget, src: Src) -> Outcome {
        let outcome = self.deliver_to(node, e, t);
        let masquerades = src == Src::External
            && match t {
                RuleTarget::Endpoints { chain, .. } => {
                    *chain != crate::kubeproxy::ChainKind::Local
                        || matches!(
                            self.nodes.get(node).map(|n| &n.proxy.profile.fault),
                            Some(Some(Fault::MasqueradesExternal))
                        )
                }
                _ => false,
            };
        match outcome {
            Outcome::Response {
                namespace,
                pod,
                node: pod_node,
                masqueraded_to: None,
            } if masquerades => Outcome::Response {
                namespace,
                pod,
                node: pod_node,
                masqueraded_to: self.node_address(node, e.family),
            },
            o => o,
        }
    }

    /// `node`'s first InternalIP of `family`.
    fn node_address(&self, node: &str, family: locality_model::objects::IpFamily) -> Option<IpAddr> {
        self.get(&ObjectKey::new(Kind::Node, "", node))
            .and_then(|o| o.as_node())
            .and_then(|n| {
                n.internal_ips
                    .iter()
                    .find(|a| locality_model::objects::IpFamily::of(a) == family)
                    .copied()
            })
    }

    fn deliver_to(&mut self, node: &str, e: &ServicePortRules, t: &RuleTarget) -> Outcome {
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
        if !self.nodes.contains_key(rt.node.as_str()) {
            return Outcome::Timeout; // its node was deleted: nothing answers there
        }
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
            namespace: key.namespace.to_string(),
            pod: key.name.to_string(),
            node: rt.node.clone(),
            masqueraded_to: None,
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
                    namespace: key.namespace.to_string(),
                    pod: key.name.to_string(),
                    node: rt.node.clone(),
                    masqueraded_to: None,
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
                    .get(node.as_str())
                    .ok_or_else(|| ConnectError::UnknownNode(node.clone()))?;
                Ok((node.clone(), Src::Host, "default".into()))
            }
            Client::External { via_node } => {
                let via_node = via_node.clone().unwrap_or_default();
                self.nodes
                    .get(via_node.as_str())
                    .ok_or_else(|| ConnectError::UnknownNode(via_node.clone()))?;
                Ok((via_node, Src::External, "default".into()))
            }
            Client::Pod { namespace, name } => {
                let key = ObjectKey::new(Kind::Pod, namespace, name);
                let id = format!("{namespace}/{name}");
                let (pod, _) = self
                    .stored_pod(&key)
                    .ok_or(ConnectError::UnknownClient(id.clone()))?;
                let node = &pod.pod.spec.node_name;
                if !node.is_empty() && !self.nodes.contains_key(node.as_str()) {
                    return Err(ConnectError::ClientNodeDeleted {
                        pod: id,
                        node: node.clone(),
                    });
                }
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
            .map(|n| {
                let pending = self.endpoint_changes_pending(node).unwrap_or(0);
                n.proxy.metrics_text(pending)
            })
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
