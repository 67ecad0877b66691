//! What `explain` shows of kube-proxy's rules: the DROP / REJECT rule as the proxiers write
//! it, and the endpoint sets of `CategorizeEndpoints` in words.

use super::codes::{Destination, ProxyMode};
use super::endpoint::ServicePortInfo;
use super::route::RouteQuery;
use super::topology::{CategorizedEndpoints, TopologyMode};

/// The filter rule kube-proxy writes for a DROP or REJECT, as `iptables-save` /
/// `nft list ruleset` would show it (chain and set names as in the proxiers; the
/// per-Service chain hashes are not computed).
pub(super) fn rule_text(svc: &ServicePortInfo, q: RouteQuery, target: &str, comment: &str) -> String {
    let proto = svc.port.protocol.as_str().to_lowercase();
    let service = if svc.port.name.is_empty() {
        format!("{}/{}", svc.namespace, svc.name)
    } else {
        format!("{}/{}:{}", svc.namespace, svc.name, svc.port.name)
    };
    let v6 = svc.family == crate::objects::IpFamily::IPv6;
    let address = match q.destination {
        Destination::ClusterIp => svc.cluster_ip,
        Destination::LoadBalancer => svc.load_balancer_vips.first().copied(),
        Destination::ExternalIp => svc.external_ips.first().copied(),
        Destination::NodePort => None,
    };
    let port = match q.destination {
        Destination::NodePort if svc.port.node_port == 0 => "<allocated nodePort>".to_string(),
        Destination::NodePort => svc.port.node_port.to_string(),
        _ => svc.port.port.to_string(),
    };
    match q.mode {
        ProxyMode::Iptables => {
            let chain = if q.destination == Destination::ClusterIp {
                "KUBE-SERVICES"
            } else {
                "KUBE-EXTERNAL-SERVICES"
            };
            let dst = match address {
                Some(ip) => format!("-d {ip}/{}", if v6 { 128 } else { 32 }),
                None => "-m addrtype --dst-type LOCAL".to_string(),
            };
            format!(
                "{} filter: -A {chain} -m comment --comment \"{service} {comment}\" {dst} -p {proto} -m {proto} --dport {port} -j {target}",
                if v6 { "ip6tables" } else { "iptables" }
            )
        }
        ProxyMode::Nftables => {
            let verdict = if target == "DROP" {
                "drop"
            } else {
                "goto reject-chain"
            };
            let family = if v6 { "ip6" } else { "ip" };
            match address {
                Some(ip) => format!(
                    "add element {family} kube-proxy no-endpoint-services {{ {ip} . {proto} . {port} comment \"{service}\" : {verdict} }}"
                ),
                None => format!(
                    "add element {family} kube-proxy no-endpoint-nodeports {{ {proto} . {port} comment \"{service}\" : {verdict} }}"
                ),
            }
        }
        ProxyMode::Ipvs => format!("{target} ({comment})"),
    }
}

pub(super) fn describe_sets(cat: &CategorizedEndpoints<'_>) -> String {
    let set = |s: &Option<std::borrow::Cow<'_, [usize]>>| match s {
        None => "not used".to_string(),
        Some(v) => format!("{} endpoint(s)", v.len()),
    };
    format!(
        "cluster set: {}{}{}; local set: {}{}; hasAnyEndpoints: {}",
        set(&cat.cluster),
        if cat.topology != TopologyMode::None {
            format!(" ({})", cat.topology.as_str())
        } else {
            String::new()
        },
        if cat.cluster_fallback {
            " (serving-terminating fallback)"
        } else {
            ""
        },
        set(&cat.local),
        if cat.local_fallback {
            " (serving-terminating fallback)"
        } else {
            ""
        },
        cat.has_any_endpoints
    )
}
