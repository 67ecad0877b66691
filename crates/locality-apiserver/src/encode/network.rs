//! Services and EndpointSlices as JSON.

use super::*;

pub(super) fn policy(p: TrafficPolicy) -> &'static str {
    match p {
        TrafficPolicy::Cluster => "Cluster",
        TrafficPolicy::Local => "Local",
    }
}

/// `spec.type` spelling.
pub fn service_type(t: ServiceType) -> &'static str {
    match t {
        ServiceType::ClusterIP => "ClusterIP",
        ServiceType::NodePort => "NodePort",
        ServiceType::LoadBalancer => "LoadBalancer",
        ServiceType::ExternalName => "ExternalName",
    }
}

pub(super) fn target_port(t: &TargetPort, port: u16) -> Value {
    match t {
        TargetPort::Number(0) => json!(port),
        TargetPort::Number(n) => json!(n),
        TargetPort::Name(n) => json!(n),
    }
}

pub(super) fn ips(v: &[IpAddr]) -> Value {
    Value::Array(v.iter().map(|ip| json!(ip.to_string())).collect())
}

pub(super) fn service(s: &Service, v: &mut Value) {
    let mut spec = Map::new();
    spec.insert("type".into(), json!(service_type(s.type_)));
    if let Some(sel) = &s.selector {
        spec.insert("selector".into(), json!(sel));
    }
    let ports: Vec<Value> = s
        .ports
        .iter()
        .map(|p| {
            let mut o = json!({"protocol": p.protocol.as_str(), "port": p.port,
                               "targetPort": target_port(&p.target_port, p.port)});
            if !p.name.is_empty() {
                o["name"] = json!(p.name);
            }
            if p.node_port != 0 {
                o["nodePort"] = json!(p.node_port);
            }
            o
        })
        .collect();
    spec.insert("ports".into(), Value::Array(ports));
    if s.type_ != ServiceType::ExternalName {
        if s.headless {
            spec.insert("clusterIP".into(), json!("None"));
            spec.insert("clusterIPs".into(), json!(["None"]));
        } else if let Some(first) = s.cluster_ips.first() {
            spec.insert("clusterIP".into(), json!(first.to_string()));
            spec.insert("clusterIPs".into(), ips(&s.cluster_ips));
        }
        let fams: Vec<&str> = s.ip_families.iter().map(|f| f.as_str()).collect();
        if !fams.is_empty() {
            spec.insert("ipFamilies".into(), json!(fams));
            let policy = if fams.len() > 1 {
                "RequireDualStack"
            } else {
                "SingleStack"
            };
            spec.insert("ipFamilyPolicy".into(), json!(policy));
        }
        spec.insert("internalTrafficPolicy".into(), json!(policy(s.itp())));
        if matches!(s.type_, ServiceType::NodePort | ServiceType::LoadBalancer) {
            spec.insert("externalTrafficPolicy".into(), json!(policy(s.etp())));
        }
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    if let Some(td) = &s.traffic_distribution {
        spec.insert("trafficDistribution".into(), json!(td));
    }
    if s.publish_not_ready_addresses {
        spec.insert("publishNotReadyAddresses".into(), json!(true));
    }
    if !s.external_ips.is_empty() {
        spec.insert("externalIPs".into(), ips(&s.external_ips));
    }
    if !s.load_balancer_source_ranges.is_empty() {
        spec.insert(
            "loadBalancerSourceRanges".into(),
            json!(s.load_balancer_source_ranges),
        );
    }
    v["spec"] = Value::Object(spec);
    let ingress: Vec<Value> = s
        .load_balancer_ingress
        .iter()
        .map(|i| {
            let mut o = Map::new();
            if let Some(ip) = i.ip {
                o.insert("ip".into(), json!(ip.to_string()));
            }
            if let Some(h) = &i.hostname {
                o.insert("hostname".into(), json!(h));
            }
            if let Some(m) = &i.ip_mode {
                o.insert("ipMode".into(), json!(m));
            }
            Value::Object(o)
        })
        .collect();
    v["status"] = if ingress.is_empty() {
        json!({"loadBalancer": {}})
    } else {
        json!({"loadBalancer": {"ingress": ingress}})
    };
}

pub(super) fn endpoint(e: &Endpoint) -> Value {
    let mut o = Map::new();
    o.insert("addresses".into(), ips(&e.addresses));
    let mut c = Map::new();
    for (k, val) in [
        ("ready", e.conditions.ready),
        ("serving", e.conditions.serving),
        ("terminating", e.conditions.terminating),
    ] {
        if let Some(b) = val {
            c.insert(k.into(), json!(b));
        }
    }
    o.insert("conditions".into(), Value::Object(c));
    if let Some(h) = &e.hostname {
        o.insert("hostname".into(), json!(h));
    }
    if let Some(n) = &e.node_name {
        o.insert("nodeName".into(), json!(n));
    }
    if let Some(z) = &e.zone {
        o.insert("zone".into(), json!(z));
    }
    if let Some(h) = &e.hints {
        let mut hints = Map::new();
        if !h.for_zones.is_empty() {
            let z: Vec<Value> = h.for_zones.iter().map(|z| json!({"name": z})).collect();
            hints.insert("forZones".into(), Value::Array(z));
        }
        if !h.for_nodes.is_empty() {
            let n: Vec<Value> = h.for_nodes.iter().map(|n| json!({"name": n})).collect();
            hints.insert("forNodes".into(), Value::Array(n));
        }
        o.insert("hints".into(), Value::Object(hints));
    }
    if let Some((kind, ns, name)) = &e.target_ref {
        o.insert(
            "targetRef".into(),
            json!({"kind": kind, "namespace": ns, "name": name}),
        );
    }
    Value::Object(o)
}

pub(super) fn endpoint_slice(s: &EndpointSlice, v: &mut Value) {
    v["addressType"] = json!(s.address_type.as_str());
    v["endpoints"] = Value::Array(s.endpoints.iter().map(endpoint).collect());
    v["ports"] = Value::Array(
        s.ports
            .iter()
            .map(|p| {
                let mut o = Map::new();
                if let Some(n) = &p.name {
                    o.insert("name".into(), json!(n));
                }
                if let Some(port) = p.port {
                    o.insert("port".into(), json!(port));
                }
                if let Some(proto) = p.protocol {
                    o.insert("protocol".into(), json!(proto.as_str()));
                }
                Value::Object(o)
            })
            .collect(),
    );
}
