//! Builders shared by the `endpointslice_*` integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::IpAddr;

use locality_model::features::ControlPlaneFeatures;
use locality_model::objects::{
    AddressType, Endpoint, EndpointConditions, EndpointHints, EndpointSlice, LABEL_ZONE, Labels, Node,
    ObjectMeta, Pod, PodSpec, Service, ServicePort, TargetPort,
};
use locality_model::version::KubeVersion;

/// Parses an IP literal.
pub fn ip(s: &str) -> IpAddr {
    s.parse().expect("test IP literal")
}

/// An endpoint as upstream test tables write them.
pub fn ep(addr: &str, zone: Option<&str>, node: Option<&str>, ready: Option<bool>) -> Endpoint {
    Endpoint {
        addresses: vec![ip(addr)],
        conditions: EndpointConditions {
            ready,
            serving: None,
            terminating: None,
        },
        node_name: node.map(str::to_string),
        zone: zone.map(str::to_string),
        hints: None,
        target_ref: None,
        hostname: None,
    }
}

/// Same endpoint with zone hints.
pub fn with_zone_hints(mut e: Endpoint, zones: &[&str]) -> Endpoint {
    let h = e.hints.get_or_insert_with(EndpointHints::default);
    h.for_zones = zones.iter().map(|z| z.to_string()).collect();
    e
}

/// Same endpoint with node hints.
pub fn with_node_hints(mut e: Endpoint, nodes: &[&str]) -> Endpoint {
    let h = e.hints.get_or_insert_with(EndpointHints::default);
    h.for_nodes = nodes.iter().map(|n| n.to_string()).collect();
    e
}

/// An IPv4 slice holding `endpoints`.
pub fn slice(endpoints: Vec<Endpoint>) -> EndpointSlice {
    EndpointSlice {
        meta: ObjectMeta::default(),
        address_type: AddressType::IPv4,
        endpoints,
        ports: vec![],
    }
}

/// Zone hints of each endpoint, in order (`None` when the endpoint has no hints).
pub fn zone_hints(s: &EndpointSlice) -> Vec<Option<Vec<String>>> {
    s.endpoints
        .iter()
        .map(|e| e.hints.as_ref().map(|h| h.for_zones.clone()))
        .collect()
}

/// A node with zone label, allocatable CPU (millicores) and Ready status.
pub fn node(name: &str, zone: Option<&str>, cpu: Option<u64>, ready: Option<bool>) -> Node {
    let mut labels = Labels::new();
    if let Some(z) = zone {
        labels.insert(LABEL_ZONE.to_string(), z.to_string());
    }
    Node {
        meta: ObjectMeta {
            name: name.to_string(),
            labels,
            ..ObjectMeta::default()
        },
        ready,
        allocatable_cpu_millis: cpu,
        allocatable_pods: None,
        ..Node::default()
    }
}

/// A running pod in namespace `ns1` with one IP, on `node`, Ready as given, labelled `app=web`.
pub fn pod(name: &str, addr: &str, node: &str, ready: bool) -> Pod {
    Pod {
        meta: ObjectMeta {
            name: name.to_string(),
            namespace: "ns1".to_string(),
            labels: [("app".to_string(), "web".to_string())].into(),
            ..ObjectMeta::default()
        },
        spec: PodSpec {
            node_name: node.to_string(),
            ..PodSpec::default()
        },
        ready,
        pod_ips: vec![ip(addr)],
        ..Pod::default()
    }
}

/// A ClusterIP Service `ns1/<name>` selecting `app=web`, port 80 → 8080/TCP.
pub fn service(name: &str) -> Service {
    Service {
        meta: ObjectMeta {
            name: name.to_string(),
            namespace: "ns1".to_string(),
            ..ObjectMeta::default()
        },
        selector: Some([("app".to_string(), "web".to_string())].into()),
        ports: vec![ServicePort {
            name: "http".to_string(),
            port: 80,
            target_port: TargetPort::Number(8080),
            ..ServicePort::default()
        }],
        ..Service::default()
    }
}

/// Features of a release.
pub fn at(minor: u16) -> ControlPlaneFeatures {
    ControlPlaneFeatures::at(KubeVersion::new(1, minor))
}

/// A `BTreeMap<String, V>` from pairs.
pub fn map<V: Clone>(pairs: &[(&str, V)]) -> BTreeMap<String, V> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}
