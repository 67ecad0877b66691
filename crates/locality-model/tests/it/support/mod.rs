//! Builders for model objects in tests.
#![allow(dead_code, missing_docs)]

use locality_model::objects::*;
pub use locality_testkit::objects::{meta, node};

pub fn port(name: &str, port: u16, node_port: u16) -> ServicePort {
    ServicePort {
        name: name.into(),
        protocol: Protocol::TCP,
        port,
        target_port: TargetPort::Number(port),
        node_port,
    }
}

pub fn service(ns: &str, name: &str, cluster_ip: &str, ports: Vec<ServicePort>) -> Service {
    Service {
        meta: meta(ns, name),
        type_: ServiceType::ClusterIP,
        selector: Some([("app".to_string(), name.to_string())].into_iter().collect()),
        ports,
        cluster_ips: vec![cluster_ip.parse().unwrap()],
        ..Default::default()
    }
}

/// An endpoint: conditions as (ready, serving, terminating), `None` leaves the field unset.
pub fn endpoint(ip: &str, node: &str, cond: (Option<bool>, Option<bool>, Option<bool>)) -> Endpoint {
    Endpoint {
        addresses: vec![ip.parse().unwrap()],
        conditions: EndpointConditions {
            ready: cond.0,
            serving: cond.1,
            terminating: cond.2,
        },
        node_name: Some(node.into()),
        ..Default::default()
    }
}

pub const READY: (Option<bool>, Option<bool>, Option<bool>) = (Some(true), Some(true), Some(false));
pub const UNSET: (Option<bool>, Option<bool>, Option<bool>) = (None, None, None);

pub fn rst(r: bool, s: bool, t: bool) -> (Option<bool>, Option<bool>, Option<bool>) {
    (Some(r), Some(s), Some(t))
}

pub fn slice(
    svc: &Service,
    name: &str,
    port_name: &str,
    port: u16,
    endpoints: Vec<Endpoint>,
) -> EndpointSlice {
    let mut m = meta(&svc.meta.namespace, name);
    m.labels.insert(LABEL_SERVICE_NAME.into(), svc.meta.name.clone());
    m.labels.insert(LABEL_MANAGED_BY.into(), CONTROLLER_NAME.into());
    EndpointSlice {
        meta: m,
        address_type: AddressType::IPv4,
        endpoints,
        ports: vec![EndpointPort {
            name: Some(port_name.into()),
            port: Some(port),
            protocol: Some(Protocol::TCP),
        }],
    }
}
