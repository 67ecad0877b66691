//! Endpoints (core/v1) `subsets`.

#[allow(unused_imports)]
use super::*;

/// One `subsets[]` entry of an Endpoints object.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointSubsetW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) addresses: Vec<M<EndpointAddressW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) not_ready_addresses: Vec<M<EndpointAddressW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) ports: Vec<M<EndpointsPortW>>,
}

/// `addresses[]` / `notReadyAddresses[]`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EndpointAddressW {
    pub(super) ip: EndpointsIp,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) hostname: Option<String>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) node_name: Option<String>,
    #[serde(default)]
    pub(super) target_ref: Option<M<EndpointsTargetRefW>>,
}

/// `targetRef` of an Endpoints address (with `uid`, which tells addresses apart).
#[derive(Deserialize)]
pub(super) struct EndpointsTargetRefW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) uid: String,
}

/// An Endpoints address `ip`, kept as written: the API server's legacy IP validation
/// admits IPv4 octets with leading zeros (`010.0.0.1`), which the mirroring controller reads
/// sloppily (`netutils.ParseIPSloppy`, [`parse_ip_sloppy`](locality_model::endpointslice::mirroring::parse_ip_sloppy));
/// anything that is not an IP even so is refused here, where its position is known.
pub(super) struct EndpointsIp(pub(super) String);

impl<'de> Deserialize<'de> for EndpointsIp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Str(s) = Str::deserialize(d)?;
        if locality_model::endpointslice::mirroring::parse_ip_sloppy(&s).is_none() {
            return Err(de::Error::custom(format_args!("invalid IP address {s:?}")));
        }
        Ok(EndpointsIp(s.into_owned()))
    }
}

/// `ports[]` of a subset: `port` is required; `protocol` defaults to TCP (`SetDefaults_EndpointPort`
/// of core/v1, applied while reading as for Services).
#[derive(Deserialize)]
pub(super) struct EndpointsPortW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
    pub(super) port: Port,
    #[serde(default)]
    pub(super) protocol: Option<ProtocolW>,
}

/// Builds an Endpoints object.
pub(crate) fn build_endpoints(meta: m::ObjectMeta, subsets: Vec<M<EndpointSubsetW>>) -> m::Endpoints {
    let address = |M(a): M<EndpointAddressW>| {
        let (target_ref, target_uid) = match a.target_ref {
            Some(M(t)) => (Some((t.kind, t.namespace, t.name)), t.uid),
            None => (None, String::new()),
        };
        m::EndpointAddress {
            ip: a.ip.0,
            hostname: a.hostname,
            node_name: a.node_name,
            target_ref,
            target_uid,
        }
    };
    m::Endpoints {
        meta,
        subsets: subsets
            .into_iter()
            .map(|M(s)| m::EndpointSubset {
                addresses: s.addresses.into_iter().map(address).collect(),
                not_ready_addresses: s.not_ready_addresses.into_iter().map(address).collect(),
                ports: s
                    .ports
                    .into_iter()
                    .map(|M(p)| m::EndpointsPort {
                        name: p.name,
                        port: p.port.0,
                        protocol: protocol_or_tcp(p.protocol),
                    })
                    .collect(),
            })
            .collect(),
    }
}
