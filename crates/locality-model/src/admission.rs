//! What the cluster stores when a file is applied: the API server's defaulting and allocation,
//! and kubectl's namespace, for objects read from files. Pure.
//!
//! Everything downstream (the EndpointSlice controller, kube-proxy) reads objects as the API
//! server stored them, never as written. A file is therefore read as if it had been applied
//! first: [`admit`] fills in what the cluster would have, and records each field it set in
//! [`ObjectMeta::defaulted`] so that `explain` can say so. Objects read from a live cluster
//! are stored already: nothing is missing, nothing is recorded.
//!
//! Mirrored upstream:
//! - `pkg/apis/discovery/v1/defaults.go` `SetDefaults_EndpointPort`: a port's missing `name`
//!   becomes `""` and its missing `protocol` `TCP` (kube-proxy skips only ports whose name is
//!   nil, which cannot happen after the API server). Endpoint conditions are not defaulted:
//!   kube-proxy reads nil `ready`/`serving` as true itself.
//! - `pkg/apis/core/v1/defaults.go` `SetDefaults_Service`: `type: ClusterIP`, a port's
//!   `protocol: TCP` and `targetPort` = `port` (ingest applies these three while reading,
//!   since the model's types have no "unset" for them, and records them the same way),
//!   `internalTrafficPolicy: Cluster` for every type but ExternalName, `externalTrafficPolicy:
//!   Cluster` for NodePort and LoadBalancer, `allocateLoadBalancerNodePorts: true` for
//!   LoadBalancer, `sessionAffinity: None`, and for `ClientIP` without one
//!   `sessionAffinityConfig.clientIP.timeoutSeconds: 10800`.
//! - The Service registry's allocators (`pkg/registry/core/service/storage/alloc.go`): cluster
//!   IPs, `ipFamilies` (the cluster's primary family, taken as IPv4, unless the cluster IPs
//!   say otherwise) and node ports. Numbers a file does not give stay unknown: the routes they
//!   carry exist, their number is not claimed.
//! - kubectl (`kubectl apply -f`): an object without `metadata.namespace` lands in `-n`, else
//!   the kubeconfig context's namespace, else `default`.

use crate::objects::{
    ClusterState, DEFAULT_CLIENT_IP_AFFINITY_SECONDS, Defaulted, DefaultedBy, IpFamily, ObjectMeta, Protocol,
    Service, ServiceType, TrafficPolicy,
};

/// What [`admit`] needs to know that the objects do not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionOptions {
    /// The namespace of namespaced objects that name none (kubectl's `-n`, else the context's,
    /// else `default`).
    pub namespace: String,
}

impl Default for AdmissionOptions {
    fn default() -> Self {
        AdmissionOptions {
            namespace: "default".into(),
        }
    }
}

/// The value a node port allocated by the API server has when a file does not give it.
pub const ALLOCATED_UNKNOWN: &str = "allocated, number unknown";

/// Records that `field` was set to `value` by `by` (once: a field already recorded is kept).
pub fn record(meta: &mut ObjectMeta, field: impl Into<String>, value: impl Into<String>, by: DefaultedBy) {
    let field = field.into();
    if meta.defaulted.iter().any(|d| d.field == field) {
        return;
    }
    meta.defaulted.push(Defaulted {
        field,
        value: value.into(),
        by,
    });
}

/// Applies defaulting, allocation and the namespace to every object of `state`, as if each
/// had been applied to a cluster; returns how many fields were set.
pub fn admit(state: &mut ClusterState, opts: &AdmissionOptions) -> usize {
    let mut set = 0;
    let metas = state
        .pods
        .iter_mut()
        .map(|p| &mut p.meta)
        .chain(state.services.iter_mut().map(|s| &mut s.meta))
        .chain(state.endpoint_slices.iter_mut().map(|s| &mut s.meta))
        .chain(state.endpoints.iter_mut().map(|e| &mut e.meta))
        .chain(state.workloads.iter_mut().map(|w| &mut w.meta));
    for meta in metas {
        if meta.namespace.is_empty() {
            meta.namespace = opts.namespace.clone();
            record(
                meta,
                "metadata.namespace",
                opts.namespace.clone(),
                DefaultedBy::Kubectl,
            );
            set += 1;
        }
    }
    for svc in &mut state.services {
        set += admit_service(svc);
    }
    for slice in &mut state.endpoint_slices {
        for (i, port) in slice.ports.iter_mut().enumerate() {
            if port.name.is_none() {
                port.name = Some(String::new());
                record(
                    &mut slice.meta,
                    format!("ports[{i}].name"),
                    "\"\"",
                    DefaultedBy::Defaulting,
                );
                set += 1;
            }
            if port.protocol.is_none() {
                port.protocol = Some(Protocol::TCP);
                record(
                    &mut slice.meta,
                    format!("ports[{i}].protocol"),
                    "TCP",
                    DefaultedBy::Defaulting,
                );
                set += 1;
            }
        }
    }
    set
}

/// `SetDefaults_Service` and the registry's allocation for one Service.
fn admit_service(svc: &mut Service) -> usize {
    if svc.type_ == ServiceType::ExternalName {
        return 0;
    }
    let mut set = 0;
    let mut note = |meta: &mut ObjectMeta, field: &str, value: &str, by| {
        record(meta, field, value, by);
        set += 1;
    };
    if svc.internal_traffic_policy.is_none() {
        svc.internal_traffic_policy = Some(TrafficPolicy::Cluster);
        note(
            &mut svc.meta,
            "spec.internalTrafficPolicy",
            "Cluster",
            DefaultedBy::Defaulting,
        );
    }
    // NodePort and LoadBalancer; since 1.29 (upstream PR #119150) any Service with
    // externalIPs too. The effective policy is the same either way: only the record differs.
    let external = matches!(svc.type_, ServiceType::NodePort | ServiceType::LoadBalancer)
        || !svc.external_ips.is_empty();
    if external && svc.external_traffic_policy.is_none() {
        svc.external_traffic_policy = Some(TrafficPolicy::Cluster);
        note(
            &mut svc.meta,
            "spec.externalTrafficPolicy",
            "Cluster",
            DefaultedBy::Defaulting,
        );
    }
    if svc.type_ == ServiceType::LoadBalancer && svc.allocate_load_balancer_node_ports.is_none() {
        svc.allocate_load_balancer_node_ports = Some(true);
        note(
            &mut svc.meta,
            "spec.allocateLoadBalancerNodePorts",
            "true",
            DefaultedBy::Defaulting,
        );
    }
    // `SessionAffinityConfig` is dropped for `None` and filled in for `ClientIP`.
    if svc.session_affinity.is_none() {
        svc.session_affinity = Some("None".into());
        note(
            &mut svc.meta,
            "spec.sessionAffinity",
            "None",
            DefaultedBy::Defaulting,
        );
    }
    if svc.session_affinity.as_deref() == Some("ClientIP") && svc.session_affinity_timeout_seconds.is_none() {
        svc.session_affinity_timeout_seconds = Some(DEFAULT_CLIENT_IP_AFFINITY_SECONDS);
        note(
            &mut svc.meta,
            "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
            &DEFAULT_CLIENT_IP_AFFINITY_SECONDS.to_string(),
            DefaultedBy::Defaulting,
        );
    }
    if svc.ip_families.is_empty() {
        let families = svc.families();
        let text: Vec<&str> = families.iter().map(|f| f.as_str()).collect();
        note(
            &mut svc.meta,
            "spec.ipFamilies",
            &format!("[{}]", text.join(", ")),
            DefaultedBy::Allocation,
        );
        svc.ip_families = families;
    }
    if svc.cluster_ips.is_empty() && !svc.headless {
        let families: Vec<IpFamily> = svc.ip_families.clone();
        for f in families {
            note(
                &mut svc.meta,
                "spec.clusterIPs",
                &format!("one {} address, allocated, address unknown", f.as_str()),
                DefaultedBy::Allocation,
            );
        }
    }
    for i in 0..svc.ports.len() {
        if svc.ports[i].node_port == 0 && svc.has_node_port(&svc.ports[i]) {
            note(
                &mut svc.meta,
                &format!("spec.ports[{i}].nodePort"),
                ALLOCATED_UNKNOWN,
                DefaultedBy::Allocation,
            );
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{AddressType, EndpointPort, EndpointSlice, ServicePort};

    fn slice(ports: Vec<EndpointPort>) -> EndpointSlice {
        EndpointSlice {
            meta: ObjectMeta {
                name: "web-1".into(),
                ..ObjectMeta::default()
            },
            address_type: AddressType::IPv4,
            endpoints: Vec::new(),
            ports,
        }
    }

    /// `SetDefaults_EndpointPort`: name `""`, protocol TCP; the port number stays unset.
    #[test]
    fn set_defaults_endpoint_port_names_and_protocols_unset_ports() {
        let mut state = ClusterState {
            endpoint_slices: vec![slice(vec![EndpointPort {
                name: None,
                port: Some(80),
                protocol: None,
            }])],
            ..ClusterState::default()
        };
        admit(&mut state, &AdmissionOptions::default());
        let s = &state.endpoint_slices[0];
        assert_eq!(s.ports[0].name.as_deref(), Some(""));
        assert_eq!(s.ports[0].protocol, Some(Protocol::TCP));
        assert_eq!(s.meta.namespace, "default");
        let fields: Vec<&str> = s.meta.defaulted.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            ["metadata.namespace", "ports[0].name", "ports[0].protocol"]
        );
    }

    /// `SetDefaults_Service`: ITP for every proxied type, ETP for NodePort and LoadBalancer,
    /// `allocateLoadBalancerNodePorts` for LoadBalancer; node ports allocated, number unknown.
    #[test]
    fn set_defaults_service_policies_and_allocated_node_ports() {
        let port = ServicePort {
            port: 80,
            ..ServicePort::default()
        };
        let svc = |type_| Service {
            meta: ObjectMeta {
                name: "web".into(),
                namespace: "shop".into(),
                ..ObjectMeta::default()
            },
            type_,
            ports: vec![port.clone()],
            ..Service::default()
        };
        let mut state = ClusterState {
            services: vec![
                svc(ServiceType::ClusterIP),
                svc(ServiceType::NodePort),
                svc(ServiceType::LoadBalancer),
                svc(ServiceType::ExternalName),
            ],
            ..ClusterState::default()
        };
        admit(&mut state, &AdmissionOptions::default());
        let [c, n, l, e] = &state.services[..] else {
            unreachable!()
        };
        assert_eq!(c.internal_traffic_policy, Some(TrafficPolicy::Cluster));
        assert_eq!(c.external_traffic_policy, None);
        assert!(!c.defaulted_field("spec.ports[0].nodePort"));
        assert_eq!(n.external_traffic_policy, Some(TrafficPolicy::Cluster));
        assert!(n.defaulted_field("spec.ports[0].nodePort"));
        assert_eq!(l.allocate_load_balancer_node_ports, Some(true));
        assert!(l.defaulted_field("spec.ports[0].nodePort"));
        assert_eq!(e.internal_traffic_policy, None);
        assert!(e.meta.defaulted.is_empty());
        assert_eq!(c.ip_families, vec![IpFamily::IPv4]);
    }

    /// A LoadBalancer with `allocateLoadBalancerNodePorts: false` gets no node port.
    #[test]
    fn a_load_balancer_without_node_port_allocation_has_none() {
        let mut state = ClusterState {
            services: vec![Service {
                type_: ServiceType::LoadBalancer,
                ports: vec![ServicePort::default()],
                allocate_load_balancer_node_ports: Some(false),
                ..Service::default()
            }],
            ..ClusterState::default()
        };
        admit(&mut state, &AdmissionOptions::default());
        let s = &state.services[0];
        assert!(!s.has_node_port(&s.ports[0]));
        assert!(!s.defaulted_field("spec.ports[0].nodePort"));
    }

    /// `SetDefaults_Service`: `sessionAffinity` unset is `None`; `ClientIP` without
    /// `timeoutSeconds` gets `DefaultClientIPServiceAffinitySeconds` (10800); a written timeout stays.
    #[test]
    fn set_defaults_service_session_affinity_and_client_ip_timeout() {
        let svc = |affinity: Option<&str>, timeout| Service {
            session_affinity: affinity.map(Into::into),
            session_affinity_timeout_seconds: timeout,
            ports: vec![ServicePort::default()],
            ..Service::default()
        };
        let mut state = ClusterState {
            services: vec![
                svc(None, None),
                svc(Some("ClientIP"), None),
                svc(Some("ClientIP"), Some(60)),
            ],
            ..ClusterState::default()
        };
        admit(&mut state, &AdmissionOptions::default());
        let [none, sticky, short] = &state.services[..] else {
            unreachable!()
        };
        assert_eq!(none.session_affinity.as_deref(), Some("None"));
        assert!(none.defaulted_field("spec.sessionAffinity"));
        assert_eq!(none.client_ip_affinity_seconds(), None);
        assert_eq!(sticky.session_affinity_timeout_seconds, Some(10800));
        assert!(sticky.defaulted_field("spec.sessionAffinityConfig.clientIP.timeoutSeconds"));
        assert_eq!(short.client_ip_affinity_seconds(), Some(60));
        assert!(!short.defaulted_field("spec.sessionAffinityConfig.clientIP.timeoutSeconds"));
    }

    /// Admission is idempotent: a state admitted twice is the state admitted once.
    #[test]
    fn admission_is_idempotent() {
        let mut state = ClusterState {
            services: vec![Service {
                type_: ServiceType::NodePort,
                ports: vec![ServicePort::default()],
                ..Service::default()
            }],
            endpoint_slices: vec![slice(vec![EndpointPort::default()])],
            ..ClusterState::default()
        };
        assert!(admit(&mut state, &AdmissionOptions::default()) > 0);
        let once = state.clone();
        admit(&mut state, &AdmissionOptions::default());
        assert_eq!(state, once);
    }

    impl Service {
        fn defaulted_field(&self, field: &str) -> bool {
            self.meta.defaulted.iter().any(|d| d.field == field)
        }
    }
}
