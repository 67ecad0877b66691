//! Service `spec` and `status`, with what `SetDefaults_Service` sets on read.

#[allow(unused_imports)]
use super::*;

#[derive(Deserialize, Clone, Copy)]
pub(super) enum ServiceTypeW {
    ClusterIP,
    NodePort,
    LoadBalancer,
    ExternalName,
}

#[derive(Deserialize, Clone, Copy)]
pub(super) enum PolicyW {
    Cluster,
    Local,
}

impl From<PolicyW> for m::TrafficPolicy {
    fn from(p: PolicyW) -> Self {
        match p {
            PolicyW::Cluster => m::TrafficPolicy::Cluster,
            PolicyW::Local => m::TrafficPolicy::Local,
        }
    }
}

#[derive(Deserialize, Clone, Copy)]
#[allow(clippy::upper_case_acronyms)]
pub(super) enum FamilyW {
    IPv4,
    IPv6,
}

/// `spec.clusterIP`: an IP, `"None"` (headless) or `""` (unset).
#[derive(Debug, Clone, Copy)]
pub(super) enum ClusterIpW {
    None_,
    Ip(IpAddr),
}

impl<'de> Deserialize<'de> for ClusterIpW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<ClusterIpW>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an IP address or \"None\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "" => Ok(None),
                    "None" => Ok(Some(ClusterIpW::None_)),
                    _ => parse_ip(v).map(|ip| Some(ClusterIpW::Ip(ip))).map_err(E::custom),
                }
            }
        }
        // `""` cannot be represented here; callers use `Option<OptClusterIp>`.
        d.deserialize_str(V)?
            .ok_or_else(|| de::Error::custom("empty cluster IP"))
    }
}

/// `spec.clusterIP` that may be `""` or `null`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct OptClusterIp(pub(super) Option<ClusterIpW>);

impl<'de> Deserialize<'de> for OptClusterIp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OptClusterIp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an IP address or \"None\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "" => Ok(OptClusterIp(None)),
                    "None" => Ok(OptClusterIp(Some(ClusterIpW::None_))),
                    _ => parse_ip(v)
                        .map(|ip| OptClusterIp(Some(ClusterIpW::Ip(ip))))
                        .map_err(E::custom),
                }
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(OptClusterIp(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(OptClusterIp(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Service `spec`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServiceSpecW {
    #[serde(default, rename = "type")]
    pub(super) type_: Option<ServiceTypeW>,
    #[serde(default)]
    pub(super) selector: Option<m::Labels>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) ports: Vec<M<ServicePortW>>,
    #[serde(default, rename = "clusterIP")]
    pub(super) cluster_ip: OptClusterIp,
    #[serde(default, rename = "clusterIPs", deserialize_with = "cluster_ips")]
    pub(super) cluster_ips: Vec<ClusterIpW>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) ip_families: Vec<FamilyW>,
    #[serde(default, rename = "externalIPs", deserialize_with = "nullable")]
    pub(super) external_ips: Vec<Ip>,
    #[serde(default)]
    pub(super) internal_traffic_policy: Option<PolicyW>,
    #[serde(default)]
    pub(super) external_traffic_policy: Option<PolicyW>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) traffic_distribution: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) publish_not_ready_addresses: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) load_balancer_source_ranges: Vec<String>,
    #[serde(default)]
    pub(super) allocate_load_balancer_node_ports: Option<bool>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) session_affinity: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) session_affinity_config: M<SessionAffinityConfigW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionAffinityConfigW {
    #[serde(default, rename = "clientIP", deserialize_with = "nullable")]
    pub(super) client_ip: M<ClientIpConfigW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct ClientIpConfigW {
    /// An `int32` (validated to 1..=86400 upstream); `null` is unset.
    #[serde(default)]
    pub(super) timeout_seconds: Option<Int64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ServicePortW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(default)]
    pub(super) protocol: Option<ProtocolW>,
    pub(super) port: Port,
    #[serde(default)]
    pub(super) target_port: Option<TargetPortW>,
    #[serde(default)]
    pub(super) node_port: Option<Port0>,
}

/// Service `status`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServiceStatusW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) load_balancer: M<LoadBalancerStatusW>,
}

#[derive(Deserialize, Default)]
pub(super) struct LoadBalancerStatusW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) ingress: Vec<M<IngressW>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct IngressW {
    #[serde(default)]
    pub(super) ip: Option<OptIp>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) hostname: Option<String>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) ip_mode: Option<String>,
}

pub(crate) fn build_service(
    mut meta: m::ObjectMeta,
    spec: Option<ServiceSpecW>,
    status: Option<ServiceStatusW>,
) -> m::Service {
    let spec = spec.unwrap_or_default();
    let status = status.unwrap_or_default();
    // clusterIPs wins over clusterIP (the API server keeps clusterIPs[0] == clusterIP).
    let ips: Vec<ClusterIpW> = if spec.cluster_ips.is_empty() {
        spec.cluster_ip.0.into_iter().collect()
    } else {
        spec.cluster_ips
    };
    let headless = ips.iter().any(|c| matches!(c, ClusterIpW::None_));
    let cluster_ips = ips
        .into_iter()
        .filter_map(|c| match c {
            ClusterIpW::Ip(ip) => Some(ip),
            ClusterIpW::None_ => None,
        })
        .collect();
    // `SetDefaults_Service` for what the model's types cannot leave unset (the rest is
    // `locality_model::admission`), recorded the same way.
    use locality_model::admission::record;
    use locality_model::objects::DefaultedBy::Defaulting;
    if spec.type_.is_none() {
        record(&mut meta, "spec.type", "ClusterIP", Defaulting);
    }
    for (i, M(p)) in spec.ports.iter().enumerate() {
        if p.protocol.is_none() {
            record(&mut meta, format!("spec.ports[{i}].protocol"), "TCP", Defaulting);
        }
        if p.target_port.is_none() {
            record(
                &mut meta,
                format!("spec.ports[{i}].targetPort"),
                p.port.0.to_string(),
                Defaulting,
            );
        }
    }
    let ports = spec
        .ports
        .into_iter()
        .map(|M(p)| m::ServicePort {
            name: p.name,
            protocol: protocol_or_tcp(p.protocol),
            port: p.port.0,
            target_port: p
                .target_port
                .map(|t| t.0)
                .unwrap_or(m::TargetPort::Number(p.port.0)),
            node_port: p.node_port.map(|n| n.0).unwrap_or(0),
        })
        .collect();
    m::Service {
        meta,
        type_: match spec.type_ {
            None | Some(ServiceTypeW::ClusterIP) => m::ServiceType::ClusterIP,
            Some(ServiceTypeW::NodePort) => m::ServiceType::NodePort,
            Some(ServiceTypeW::LoadBalancer) => m::ServiceType::LoadBalancer,
            Some(ServiceTypeW::ExternalName) => m::ServiceType::ExternalName,
        },
        // An empty selector is stored as nil by the API server: selector-less.
        selector: spec.selector.filter(|s| !s.is_empty()),
        ports,
        cluster_ips,
        headless,
        ip_families: spec
            .ip_families
            .into_iter()
            .map(|f| match f {
                FamilyW::IPv4 => m::IpFamily::IPv4,
                FamilyW::IPv6 => m::IpFamily::IPv6,
            })
            .collect(),
        external_ips: spec.external_ips.into_iter().map(|i| i.0).collect(),
        internal_traffic_policy: spec.internal_traffic_policy.map(Into::into),
        external_traffic_policy: spec.external_traffic_policy.map(Into::into),
        traffic_distribution: spec.traffic_distribution,
        publish_not_ready_addresses: spec.publish_not_ready_addresses,
        load_balancer_source_ranges: spec.load_balancer_source_ranges,
        allocate_load_balancer_node_ports: spec.allocate_load_balancer_node_ports,
        session_affinity: spec.session_affinity,
        // Out of the API's range (a file the API server would refuse): read as unset.
        session_affinity_timeout_seconds: spec
            .session_affinity_config
            .0
            .client_ip
            .0
            .timeout_seconds
            .and_then(|t| u32::try_from(t.0).ok()),
        load_balancer_ingress: status
            .load_balancer
            .0
            .ingress
            .into_iter()
            .map(|M(i)| m::LoadBalancerIngress {
                ip: i.ip.and_then(|o| o.0),
                hostname: i.hostname,
                ip_mode: i.ip_mode,
            })
            .collect(),
    }
}
