//! `meta.k8s.io/v1` Table answers (what `kubectl get` asks for), with the columns the real
//! API server's printers give; priority-1 columns are the ones `-o wide` adds.

use std::collections::BTreeSet;

use locality_model::objects::{LoadBalancerIngress, PodPhase, Service, ServiceType, WorkloadKind};
use locality_sim::time::Millis;
use locality_sim::{Kind, Object};
use serde_json::{Value, json};

use crate::age::age;
use crate::encode;

/// Column definitions of a kind: (name, type, priority).
fn columns(kind: Option<Kind>) -> &'static [(&'static str, &'static str, u8)] {
    match kind {
        Some(Kind::Pod) => &[
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            ("Age", "string", 0),
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ],
        Some(Kind::Node) => &[
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Roles", "string", 0),
            ("Age", "string", 0),
            ("Version", "string", 0),
            ("Internal-IP", "string", 1),
            ("External-IP", "string", 1),
            ("OS-Image", "string", 1),
            ("Kernel-Version", "string", 1),
            ("Container-Runtime", "string", 1),
        ],
        Some(Kind::Service) => &[
            ("Name", "string", 0),
            ("Type", "string", 0),
            ("Cluster-IP", "string", 0),
            ("External-IP", "string", 0),
            ("Port(s)", "string", 0),
            ("Age", "string", 0),
            ("Selector", "string", 1),
        ],
        Some(Kind::Namespace) => &[
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Age", "string", 0),
        ],
        Some(Kind::EndpointSlice) => &[
            ("Name", "string", 0),
            ("AddressType", "string", 0),
            ("Ports", "string", 0),
            ("Endpoints", "string", 0),
            ("Age", "string", 0),
        ],
        Some(Kind::Deployment) => &[
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        Some(Kind::ReplicaSet) => &[
            ("Name", "string", 0),
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        Some(Kind::DaemonSet) => &[
            ("Name", "string", 0),
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            ("Node Selector", "string", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        // pkg/printers/internalversion/printers.go `statefulSetColumnDefinitions`.
        Some(Kind::StatefulSet) => &[
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
        ],
        // The kinds stored, not simulated, and the read-only ones.
        _ => &[("Name", "string", 0), ("Age", "string", 0)],
    }
}

/// The `columnDefinitions` of a kind.
pub fn column_definitions(kind: Option<Kind>) -> Value {
    Value::Array(
        columns(kind)
            .iter()
            .map(|(name, ty, prio)| {
                let format = if *name == "Name" { "name" } else { "" };
                json!({"name": name, "type": ty, "format": format, "priority": prio,
                       "description": format!("{name} (simulated cluster)")})
            })
            .collect(),
    )
}

fn none(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

fn join_selector(m: &locality_model::objects::Labels) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn containers_images(encoded: &Value) -> (String, String) {
    let cs = encoded
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names = cs
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect::<Vec<_>>()
        .join(",");
    let images = cs
        .iter()
        .filter_map(|c| c["image"].as_str())
        .collect::<Vec<_>>()
        .join(",");
    (names, images)
}

/// `loadBalancerStatusStringer` (k8s.io/kubernetes `pkg/printers/internalversion/printers.go`)
/// for the server's printer, which is always wide (`pkg/printers/storage/storage.go`), so never
/// clipped: each ingress's IP, else its hostname, deduplicated and sorted as strings, joined
/// with commas.
pub fn load_balancer_status_string(ingress: &[LoadBalancerIngress]) -> String {
    let set: BTreeSet<String> = ingress
        .iter()
        .filter_map(|i| {
            i.ip.map(|ip| ip.to_string())
                .or_else(|| i.hostname.clone().filter(|h| !h.is_empty()))
        })
        .collect();
    set.into_iter().collect::<Vec<_>>().join(",")
}

/// The EXTERNAL-IP cell of a Service (`printers.go` `getServiceExternalIP`): ClusterIP and
/// NodePort show `spec.externalIPs` or `<none>`; LoadBalancer its ingress
/// ([`load_balancer_status_string`]) followed by `spec.externalIPs`, or `<pending>` when it has
/// neither; ExternalName its `spec.externalName` (from `encoded`).
pub fn service_external_ip(s: &Service, encoded: &Value) -> String {
    let external: Vec<String> = s.external_ips.iter().map(ToString::to_string).collect();
    match s.type_ {
        ServiceType::ClusterIP | ServiceType::NodePort => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        ServiceType::LoadBalancer => {
            let lb = load_balancer_status_string(&s.load_balancer_ingress);
            let mut all: Vec<String> = if lb.is_empty() {
                Vec::new()
            } else {
                lb.split(',').map(str::to_string).collect()
            };
            all.extend(external);
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        ServiceType::ExternalName => encoded
            .pointer("/spec/externalName")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

/// The cells of one row; `encoded` is the object's JSON (for status fields computed there).
pub fn cells(object: &Object, encoded: &Value, now: Millis) -> Value {
    let meta = object.meta();
    let age = age(meta.creation_timestamp.as_deref(), now);
    let name = meta.name.clone();
    match object {
        Object::Pod(p) => {
            let n_containers = encoded
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .map_or(1, Vec::len);
            let ready = if p.pod.ready { n_containers } else { 0 };
            let status = if meta.deletion_timestamp.is_some() {
                "Terminating"
            } else {
                match p.pod.phase {
                    PodPhase::Pending if p.pod.spec.node_name.is_empty() => "Pending",
                    PodPhase::Pending => "ContainerCreating",
                    PodPhase::Running => "Running",
                    PodPhase::Succeeded => "Completed",
                    PodPhase::Failed => "Error",
                    PodPhase::Unknown => "Unknown",
                }
            };
            let ip = p.pod.pod_ips.first().map_or("<none>".into(), ToString::to_string);
            json!([
                name,
                format!("{ready}/{n_containers}"),
                status,
                "0",
                age,
                ip,
                none(p.pod.spec.node_name.clone()),
                "<none>",
                "<none>"
            ])
        }
        Object::Node(n) => {
            let status = match n.ready {
                Some(true) => "Ready",
                Some(false) => "NotReady",
                None => "Unknown",
            };
            let status = if n.unschedulable {
                format!("{status},SchedulingDisabled")
            } else {
                status.to_string()
            };
            let roles: Vec<&str> = n
                .meta
                .labels
                .keys()
                .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
                .filter(|r| !r.is_empty())
                .collect();
            let ip = n
                .internal_ips
                .first()
                .map_or("<none>".into(), ToString::to_string);
            json!([
                name,
                status,
                none(roles.join(",")),
                age,
                n.kubelet_version.clone().unwrap_or_default(),
                ip,
                "<none>",
                "locality simulated node",
                "simulated",
                "simulated://1.0.0"
            ])
        }
        Object::Service(s) => {
            let cluster_ip = if s.headless {
                "None".to_string()
            } else {
                s.cluster_ips.first().map_or("<none>".into(), ToString::to_string)
            };
            let external = service_external_ip(s, encoded);
            let ports: Vec<String> = s
                .ports
                .iter()
                .map(|p| {
                    if p.node_port != 0 {
                        format!("{}:{}/{}", p.port, p.node_port, p.protocol.as_str())
                    } else {
                        format!("{}/{}", p.port, p.protocol.as_str())
                    }
                })
                .collect();
            let selector = s.selector.as_ref().map(join_selector).unwrap_or_default();
            json!([
                name,
                encode::service_type(s.type_),
                cluster_ip,
                external,
                none(ports.join(",")),
                age,
                none(selector)
            ])
        }
        Object::Namespace(_) => {
            let status = encoded
                .pointer("/status/phase")
                .cloned()
                .unwrap_or(json!("Active"));
            json!([name, status, age])
        }
        Object::EndpointSlice(s) => {
            let ports: Vec<String> = s
                .ports
                .iter()
                .filter_map(|p| p.port.map(|n| n.to_string()))
                .collect();
            let addrs: Vec<String> = s
                .endpoints
                .iter()
                .flat_map(|e| e.addresses.iter().map(ToString::to_string))
                .collect();
            let endpoints = if addrs.len() > 3 {
                format!("{} + {} more...", addrs[..3].join(","), addrs.len() - 3)
            } else {
                addrs.join(",")
            };
            json!([
                name,
                s.address_type.as_str(),
                none(ports.join(",")),
                none(endpoints),
                age
            ])
        }
        Object::Stored(_) => json!([name, age]),
        Object::Workload(w) => {
            let st = &encoded["status"];
            let (containers, images) = containers_images(encoded);
            let selector = none(
                std::iter::once(join_selector(&w.workload.selector.match_labels))
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            let n = |k: &str| st[k].as_u64().unwrap_or(0);
            match w.workload.kind {
                WorkloadKind::Deployment => {
                    let want = w.workload.replicas.unwrap_or(1);
                    json!([
                        name,
                        format!("{}/{want}", n("readyReplicas")),
                        n("updatedReplicas"),
                        n("availableReplicas"),
                        age,
                        containers,
                        images,
                        selector
                    ])
                }
                WorkloadKind::ReplicaSet => {
                    json!([
                        name,
                        w.workload.replicas.unwrap_or(1),
                        n("replicas"),
                        n("readyReplicas"),
                        age,
                        containers,
                        images,
                        selector
                    ])
                }
                // `printStatefulSet`: ready/desired.
                WorkloadKind::StatefulSet => {
                    let want = w.workload.replicas.unwrap_or(1);
                    json!([
                        name,
                        format!("{}/{want}", n("readyReplicas")),
                        age,
                        containers,
                        images
                    ])
                }
                WorkloadKind::DaemonSet => {
                    let node_selector = none(join_selector(&w.workload.template.node_selector));
                    json!([
                        name,
                        n("desiredNumberScheduled"),
                        n("currentNumberScheduled"),
                        n("numberReady"),
                        n("updatedNumberScheduled"),
                        n("numberAvailable"),
                        node_selector,
                        age,
                        containers,
                        images,
                        selector
                    ])
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ingress(ip: Option<&str>, hostname: Option<&str>) -> LoadBalancerIngress {
        LoadBalancerIngress {
            ip: ip.map(|s| s.parse().unwrap()),
            hostname: hostname.map(str::to_string),
            ip_mode: None,
        }
    }

    #[test]
    fn external_ip_cell_as_get_service_external_ip() {
        let mut s = Service {
            type_: ServiceType::LoadBalancer,
            ..Service::default()
        };
        let none = Value::Null;
        assert_eq!(service_external_ip(&s, &none), "<pending>");
        // IP before hostname per ingress, deduplicated and sorted as strings.
        s.load_balancer_ingress = vec![
            ingress(Some("203.0.113.9"), Some("ignored.example")),
            ingress(None, Some("lb.example")),
            ingress(Some("203.0.113.10"), None),
            ingress(Some("203.0.113.9"), None),
            ingress(None, None),
        ];
        assert_eq!(
            service_external_ip(&s, &none),
            "203.0.113.10,203.0.113.9,lb.example"
        );
        s.external_ips = vec!["192.0.2.2".parse().unwrap(), "192.0.2.1".parse().unwrap()];
        assert_eq!(
            service_external_ip(&s, &none),
            "203.0.113.10,203.0.113.9,lb.example,192.0.2.2,192.0.2.1",
            "then spec.externalIPs in their order"
        );
        s.load_balancer_ingress.clear();
        assert_eq!(service_external_ip(&s, &none), "192.0.2.2,192.0.2.1");
        for t in [ServiceType::ClusterIP, ServiceType::NodePort] {
            s.type_ = t;
            assert_eq!(service_external_ip(&s, &none), "192.0.2.2,192.0.2.1");
            s.load_balancer_ingress = vec![ingress(Some("203.0.113.1"), None)];
            assert_eq!(
                service_external_ip(&s, &none),
                "192.0.2.2,192.0.2.1",
                "no ingress shown"
            );
            let bare = Service {
                type_: t,
                ..Service::default()
            };
            assert_eq!(service_external_ip(&bare, &none), "<none>");
        }
        let ext = Service {
            type_: ServiceType::ExternalName,
            ..Service::default()
        };
        let doc = json!({"spec": {"externalName": "db.example.com"}});
        assert_eq!(service_external_ip(&ext, &doc), "db.example.com");
    }
}
