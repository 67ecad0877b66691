//! The simulated API's writes, as an API server would take them: create, update and delete
//! with the admission the simulation runs (cluster IPs and NodePorts allocated to Services,
//! `DefaultTolerationSeconds` for Pods, a kubelet and kube-proxy for every new Node, the
//! namespace lifecycle), then the controllers woken.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use locality_model::objects::{IpFamily, ServiceType};

use crate::engine::{Engine, SimError};
use crate::objects::{Kind, Object, ObjectKey};
use crate::store::StoreError;

impl Engine {
    /// Creates an object, with the API server's admission: Services get cluster IPs (and
    /// NodePorts) allocated, Pods their default tolerations of the not-ready and unreachable
    /// taints ([`crate::nodelifecycle::admit_default_toleration_seconds`]), Nodes get a kubelet
    /// and a kube-proxy.
    pub fn create(&mut self, mut object: Object) -> Result<u64, SimError> {
        if let Some(key) = object.key()
            && !key.kind.cluster_scoped()
        {
            let ns = ObjectKey::new(Kind::Namespace, "", key.namespace.as_str());
            if key.namespace.is_empty() {
                return Err(StoreError::Invalid(format!("{key}: a namespace is required")).into());
            }
            match self.store.get(&ns) {
                None => return Err(StoreError::NotFound(ns).into()),
                Some(s) if s.deletion.is_some() => {
                    return Err(StoreError::NamespaceTerminating(key.namespace.to_string()).into());
                }
                Some(_) => {}
            }
        }
        match &mut object {
            Object::Service(svc) => self.allocate_service(svc),
            Object::Pod(p) => crate::nodelifecycle::admit_default_toleration_seconds(&mut p.pod.spec),
            _ => {}
        }
        let node_name = object.as_node().map(|n| n.meta.name.clone());
        let rv = self.store.create(object, self.now)?;
        if let Some(name) = node_name {
            self.add_node_runtime(&name);
        }
        self.kick();
        Ok(rv)
    }

    /// Replaces an object (spec and status); `precondition` is the resourceVersion read. The
    /// admission of [`Engine::create`] runs again (Services, Pods).
    pub fn update(&mut self, mut object: Object, precondition: Option<u64>) -> Result<u64, SimError> {
        match &mut object {
            Object::Service(svc) => self.allocate_service(svc),
            Object::Pod(p) => crate::nodelifecycle::admit_default_toleration_seconds(&mut p.pod.spec),
            _ => {}
        }
        let rv = self.store.update(object, self.now, precondition)?;
        self.kick();
        Ok(rv)
    }

    /// Deletes an object: Pods gracefully (deletionTimestamp, the kubelet finishes the
    /// deletion), everything else at once, with the garbage collector removing dependents.
    /// Same as [`Engine::delete_with`] with no grace period given.
    pub fn delete(&mut self, key: &ObjectKey) -> Result<(), SimError> {
        self.delete_with(key, None)
    }

    /// Deletes an object as a DELETE request with `DeleteOptions.gracePeriodSeconds` does
    /// (k8s.io/kubernetes `pkg/registry/core/pod/strategy.go` `CheckGracefulDelete`): for a
    /// Pod, `Some(0)` removes it from the store at once (a force delete: the kubelet forgets it
    /// and frees its IPs), `Some(n)` starts a graceful deletion whose process is killed at
    /// most `n` s after SIGTERM (a later, shorter grace period shortens a pending one), `None`
    /// uses the pod's `terminationGracePeriodSeconds`. A Namespace takes everything in it
    /// along (`crate::namespaces`). Other kinds ignore the grace period.
    pub fn delete_with(
        &mut self,
        key: &ObjectKey,
        grace_period_seconds: Option<u64>,
    ) -> Result<(), SimError> {
        if key.kind == Kind::Pod && grace_period_seconds == Some(0) {
            self.store.remove(key, self.now)?;
            self.forget_pod(key);
        } else if key.kind == Kind::Namespace {
            self.delete_namespace(key)?;
        } else if key.kind == Kind::Pod {
            self.store.mark_deleting(key, self.now)?;
            if let Some(grace) = grace_period_seconds {
                self.terminate_within(key, grace);
            }
        } else {
            self.store.remove(key, self.now)?;
            if key.kind == Kind::Node {
                self.nodes.remove(key.name.as_str());
                self.idle_proxies.remove(key.name.as_str());
                // Its kubelet goes with it (a Node created again later starts Ready).
                self.lifecycle.forget_kubelet(&key.name);
            }
        }
        self.kick();
        Ok(())
    }

    /// API-server admission for Services: cluster IPs per family and NodePorts.
    fn allocate_service(&mut self, svc: &mut locality_model::objects::Service) {
        if svc.type_ == ServiceType::ExternalName || svc.headless {
            return;
        }
        if svc.ip_families.is_empty() {
            svc.ip_families = svc.families();
        }
        for fam in svc.ip_families.clone() {
            if svc.cluster_ips.iter().any(|ip| IpFamily::of(ip) == fam) {
                continue;
            }
            let n = self.next_cluster_ip;
            self.next_cluster_ip += 1;
            let ip = match fam {
                IpFamily::IPv4 => IpAddr::V4(Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 96, 0, 0)) + n)),
                IpFamily::IPv6 => IpAddr::V6(Ipv6Addr::from(
                    u128::from(Ipv6Addr::new(0xfd00, 0x10, 0x96, 0, 0, 0, 0, 0)) + u128::from(n),
                )),
            };
            svc.cluster_ips.push(ip);
        }
        if matches!(svc.type_, ServiceType::NodePort | ServiceType::LoadBalancer) {
            let taken: BTreeSet<u16> = self
                .store
                .list(Kind::Service)
                .filter_map(|(_, s)| s.object.as_service())
                .flat_map(|s| s.ports.iter().map(|p| p.node_port))
                .chain(svc.ports.iter().map(|p| p.node_port))
                .collect();
            for p in &mut svc.ports {
                if p.node_port == 0 {
                    while taken.contains(&self.next_node_port) {
                        self.next_node_port += 1;
                    }
                    p.node_port = self.next_node_port;
                    self.next_node_port += 1;
                    if self.next_node_port > 32767 {
                        self.next_node_port = 30000;
                    }
                }
            }
        }
    }
}
