//! The simulated cloud load balancer: the controller that gives Services of type LoadBalancer
//! their `status.loadBalancer.ingress`, and the load balancer that sends outside traffic for
//! those addresses to a node.
//!
//! - The controller mirrors k8s.io/cloud-provider `controllers/service/controller.go`
//!   (`syncLoadBalancerIfNeeded`): a Service that wants a load balancer (`spec.type:
//!   LoadBalancer`) and has no ingress yet gets one ingress per IP family it serves, `ipMode:
//!   VIP`, from the simulated pools `203.0.113.0/24` (TEST-NET-3, RFC 5737) and
//!   `2001:db8:203:113::/64` (the documentation prefix, RFC 3849); a Service that already has ingress (written by a test,
//!   a topology or another controller) is left alone. A Service that stops being a
//!   LoadBalancer has the addresses this controller gave it removed from its status and
//!   released. An ingress lost by a store update that leaves the status out is given back the
//!   same addresses (the simulated API server keeps the status on a `PUT` or patch, as
//!   upstream, so its clients never see that). There is no provisioning delay beyond the
//!   controllers' own.
//! - The load balancer mirrors what a cloud's network load balancer does with the node set and
//!   health checks the service controller and kube-proxy give it: it picks a node uniformly at
//!   random (seeded) among the nodes with a simulated kube-proxy, minus those labelled
//!   `node.kubernetes.io/exclude-from-external-load-balancers`; with
//!   `externalTrafficPolicy: Local` only among the nodes that pass the `healthCheckNodePort`
//!   check, i.e. whose kube-proxy has a local **ready** endpoint for the Service (upstream
//!   `pkg/proxy/healthcheck/service_health.go`, fed by the proxier's `LocalReadyEndpoints`:
//!   terminating endpoints do not count). The packet keeps the VIP as destination (`ipMode:
//!   VIP`) and traverses that node's rules for the address (`external`); an `ipMode: Proxy`
//!   load balancer forwards to the node's NodePort instead. No node passes: the connection times
//!   out. `loadBalancerSourceRanges` are not simulated.

use std::net::IpAddr;

use locality_model::objects::{IpFamily, LoadBalancerIngress, ServiceType, TrafficPolicy};

pub(crate) mod pool;

pub use self::pool::LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS;
use crate::engine::Engine;
use crate::objects::{Kind, Object, ObjectKey};

impl Engine {
    /// The simulated cloud load-balancer controller's sync of one Service (after any change).
    pub(crate) fn cloud_lb_sync(&mut self, key: &ObjectKey) {
        self.cloud_lb.unindex(key);
        let Some(mut svc) = self.store.get(key).and_then(|s| s.object.as_service()).cloned() else {
            self.cloud_lb.release(key);
            return;
        };
        let wants = svc.type_ == ServiceType::LoadBalancer;
        if wants && svc.load_balancer_ingress.is_empty() {
            let families = svc.families();
            let mut ips: Vec<IpAddr> = self
                .cloud_lb
                .assigned
                .get(key)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|ip| families.contains(&IpFamily::of(ip)))
                .collect();
            for family in families {
                if ips.iter().any(|ip| IpFamily::of(ip) == family) {
                    continue;
                }
                if let Some(ip) = self.cloud_lb.allocate(family) {
                    ips.push(ip);
                }
            }
            for ip in self.cloud_lb.release(key) {
                if ips.contains(&ip) {
                    self.cloud_lb.used.insert(ip);
                }
            }
            if ips.is_empty() {
                return; // the pool is exhausted: EXTERNAL-IP stays <pending>
            }
            for ip in &ips {
                self.cloud_lb.used.insert(*ip);
            }
            self.cloud_lb.assigned.insert(key.clone(), ips.clone());
            svc.load_balancer_ingress = ips
                .iter()
                .map(|ip| LoadBalancerIngress {
                    ip: Some(*ip),
                    hostname: None,
                    ip_mode: Some("VIP".into()),
                })
                .collect();
            let _ = self.update(Object::Service(svc.clone()), None);
        } else if !wants && self.cloud_lb.assigned.contains_key(key) {
            // The load balancer is deleted and the status cleared of what it held.
            let ips = self.cloud_lb.release(key);
            let before = svc.load_balancer_ingress.len();
            svc.load_balancer_ingress
                .retain(|i| i.ip.is_none_or(|ip| !ips.contains(&ip)));
            if svc.load_balancer_ingress.len() != before {
                let _ = self.update(Object::Service(svc.clone()), None);
            }
        }
        let indexed: Vec<IpAddr> = svc.load_balancer_ingress.iter().filter_map(|i| i.ip).collect();
        for i in &svc.load_balancer_ingress {
            if let Some(ip) = i.ip {
                let proxy = i.ip_mode.as_deref() == Some("Proxy");
                self.cloud_lb.vips.insert(ip, (key.clone(), proxy));
            }
        }
        self.cloud_lb.by_service.insert(key.clone(), indexed);
    }

    /// The Service whose `status.loadBalancer.ingress` holds `ip`, and whether that ingress is
    /// `ipMode: Proxy`.
    pub fn load_balancer_service(&self, ip: &IpAddr) -> Option<(&ObjectKey, bool)> {
        self.cloud_lb.vips.get(ip).map(|(k, proxy)| (k, *proxy))
    }

    /// The nodes the simulated cloud load balancer of `service` sends new connections to, by
    /// name: every node with a simulated kube-proxy not labelled
    /// [`LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS`]; with `externalTrafficPolicy: Local` only
    /// those whose `healthCheckNodePort` answers 200, i.e. whose kube-proxy has a local ready
    /// endpoint of the Service (upstream `service_health.go`). Empty for a Service that is not
    /// of type LoadBalancer.
    pub fn load_balancer_backends(&self, service: &ObjectKey) -> Vec<String> {
        let Some(svc) = self.store.get(service).and_then(|s| s.object.as_service()) else {
            return Vec::new();
        };
        if svc.type_ != ServiceType::LoadBalancer {
            return Vec::new();
        }
        let local = svc.external_traffic_policy == Some(TrafficPolicy::Local);
        let id = (service.namespace.to_string(), service.name.to_string());
        let mut backends: Vec<String> = self
            .nodes
            .iter()
            .filter(|(name, _)| {
                self.store
                    .get(&ObjectKey::new(Kind::Node, "", name.as_str()))
                    .and_then(|s| s.object.as_node())
                    .is_some_and(|n| {
                        !n.meta
                            .labels
                            .contains_key(LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS)
                    })
            })
            .filter(|(_, rt)| {
                !local
                    || rt.proxy.table().services.get(&id).is_some_and(|ports| {
                        ports.iter().any(|e| {
                            e.endpoints.iter().any(|ep| {
                                ep.ready && ep.node_name.as_deref() == Some(rt.proxy.identity.as_str())
                            })
                        })
                    })
            })
            .map(|(name, _)| name.to_string())
            .collect();
        // By name (the nodes are hashed, not ordered).
        backends.sort_unstable();
        backends
    }
}
