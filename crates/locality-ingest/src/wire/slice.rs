//! EndpointSlice `endpoints` and `ports`, addresses checked against `addressType`.

#[allow(unused_imports)]
use super::*;

/// `addressType`.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[allow(clippy::upper_case_acronyms)]
pub(crate) enum AddressTypeW {
    IPv4,
    IPv6,
    FQDN,
}

impl From<AddressTypeW> for m::AddressType {
    fn from(a: AddressTypeW) -> Self {
        match a {
            AddressTypeW::IPv4 => m::AddressType::IPv4,
            AddressTypeW::IPv6 => m::AddressType::IPv6,
            AddressTypeW::FQDN => m::AddressType::Fqdn,
        }
    }
}

/// One endpoint; addresses are validated against the slice's address type when it is
/// already known (the usual order), else later by [`check_endpoint_addresses`].
#[derive(Debug)]
pub(crate) struct EndpointW {
    /// Addresses as read: parsed IPs, or the raw text for FQDN slices / unknown type.
    pub addresses: Vec<AddrW>,
    pub endpoint: m::Endpoint,
}

/// An endpoint address as read.
#[derive(Debug)]
pub(crate) enum AddrW {
    Ip(IpAddr),
    Text(String),
}

/// Reads `endpoints` (a sequence, `null` = empty), validating addresses against `addr`.
pub(crate) struct EndpointsSeed {
    pub addr: Option<AddressTypeW>,
}

impl<'de> de::DeserializeSeed<'de> for EndpointsSeed {
    type Value = Vec<EndpointW>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EndpointsSeed {
    type Value = Vec<EndpointW>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of endpoints")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(e) = seq.next_element_seed(EndpointSeed { addr: self.addr })? {
            out.push(e);
        }
        Ok(out)
    }
}

pub(super) struct EndpointSeed {
    pub(super) addr: Option<AddressTypeW>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
pub(super) enum EndpointKey {
    Addresses,
    Conditions,
    NodeName,
    Zone,
    Hints,
    TargetRef,
    Hostname,
    Topology,
    #[serde(other)]
    Other,
}

impl<'de> de::DeserializeSeed<'de> for EndpointSeed {
    type Value = EndpointW;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EndpointSeed {
    type Value = EndpointW;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an endpoint object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EndpointW, A::Error> {
        let mut addresses: Option<Vec<AddrW>> = None;
        let mut ep = m::Endpoint::default();
        let mut topology: BTreeMap<String, String> = BTreeMap::new();
        while let Some(k) = map.next_key::<EndpointKey>()? {
            match k {
                EndpointKey::Addresses => {
                    let a = map.next_value_seed(AddressesSeed { addr: self.addr })?;
                    if a.is_empty() {
                        return Err(de::Error::custom(
                            "endpoint has no addresses (at least one is required)",
                        ));
                    }
                    addresses = Some(a);
                }
                EndpointKey::Conditions => {
                    let c: Option<M<ConditionsW>> = map.next_value()?;
                    if let Some(c) = c {
                        ep.conditions = m::EndpointConditions {
                            ready: c.ready,
                            serving: c.serving,
                            terminating: c.terminating,
                        };
                    }
                }
                EndpointKey::NodeName => ep.node_name = map.next_value::<NodeNameW>()?.0,
                EndpointKey::Zone => ep.zone = map.next_value::<ZoneW>()?.0,
                EndpointKey::Hints => {
                    let h: Option<M<HintsW>> = map.next_value()?;
                    ep.hints = h.map(|M(h)| m::EndpointHints {
                        for_zones: h.for_zones.into_iter().filter_map(|z| z.0.name).collect(),
                        for_nodes: h.for_nodes.into_iter().filter_map(|z| z.0.name).collect(),
                    });
                }
                EndpointKey::TargetRef => {
                    let t: Option<M<TargetRefW>> = map.next_value()?;
                    ep.target_ref = t.map(|M(t)| (t.kind, t.namespace, t.name));
                }
                EndpointKey::Hostname => {
                    ep.hostname = map.next_value::<Option<String>>()?.filter(|s| !s.is_empty())
                }
                EndpointKey::Topology => topology = map.next_value::<Option<_>>()?.unwrap_or_default(),
                EndpointKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(addresses) = addresses else {
            return Err(de::Error::custom(
                "endpoint has no `addresses` (at least one is required)",
            ));
        };
        // discovery.k8s.io/v1beta1 carried zone and node in `topology`.
        if ep.zone.is_none() {
            ep.zone = topology.remove(m::LABEL_ZONE).filter(|z| !z.is_empty());
        }
        if ep.node_name.is_none() {
            ep.node_name = topology
                .remove("kubernetes.io/hostname")
                .filter(|z| !z.is_empty());
        }
        Ok(EndpointW {
            addresses,
            endpoint: ep,
        })
    }
}

pub(super) struct AddressesSeed {
    pub(super) addr: Option<AddressTypeW>,
}

impl<'de> de::DeserializeSeed<'de> for AddressesSeed {
    type Value = Vec<AddrW>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AddressesSeed {
    type Value = Vec<AddrW>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of addresses")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Str(s)) = seq.next_element::<Str<'de>>()? {
            out.push(classify_address(self.addr, &s).map_err(de::Error::custom)?);
        }
        Ok(out)
    }
}

pub(super) fn family_matches(fam: AddressTypeW, ip: IpAddr) -> bool {
    matches!(
        (fam, ip),
        (AddressTypeW::IPv4, IpAddr::V4(_)) | (AddressTypeW::IPv6, IpAddr::V6(_))
    )
}

/// Parses `s` as an address of family `fam` (IPv4 or IPv6).
pub(super) fn family_ip(fam: AddressTypeW, s: &str) -> Result<IpAddr, String> {
    let ip = parse_ip(s)?;
    if !family_matches(fam, ip) {
        return Err(format!(
            "address {s:?} is not an {fam:?} address (addressType {fam:?})"
        ));
    }
    Ok(ip)
}

/// Checks an endpoint address against the slice's address type (when known).
pub(crate) fn classify_address(addr: Option<AddressTypeW>, s: &str) -> Result<AddrW, String> {
    match addr {
        Some(AddressTypeW::FQDN) => Ok(AddrW::Text(s.to_owned())),
        Some(fam) => family_ip(fam, s).map(AddrW::Ip),
        None => Ok(match s.parse::<IpAddr>() {
            Ok(ip) => AddrW::Ip(ip),
            Err(_) => AddrW::Text(s.to_owned()),
        }),
    }
}

#[derive(Deserialize)]
pub(super) struct ConditionsW {
    #[serde(default)]
    pub(super) ready: Option<bool>,
    #[serde(default)]
    pub(super) serving: Option<bool>,
    #[serde(default)]
    pub(super) terminating: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct HintsW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) for_zones: Vec<M<ZoneHintW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) for_nodes: Vec<M<NodeHintW>>,
}

/// `hints.forZones[]`: its name a label value, as upstream's EndpointSlice validation
/// checks it.
#[derive(Deserialize)]
pub(super) struct ZoneHintW {
    #[serde(deserialize_with = "zone_name")]
    pub(super) name: Option<String>,
}

/// `hints.forNodes[]`: its name a Node name.
#[derive(Deserialize)]
pub(super) struct NodeHintW {
    #[serde(deserialize_with = "node_name")]
    pub(super) name: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct TargetRefW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
}

/// `ports[]` of an EndpointSlice.
#[derive(Deserialize)]
pub(crate) struct EndpointPortW {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) port: Option<Port>,
    #[serde(default)]
    pub(super) protocol: Option<ProtocolW>,
}

impl EndpointPortW {
    pub(crate) fn into_model(self) -> m::EndpointPort {
        m::EndpointPort {
            name: self.name,
            port: self.port.map(|p| p.0),
            protocol: self.protocol.map(Into::into),
        }
    }
}

/// Validates addresses that were read before `addressType` was known; returns the IPs.
pub(crate) fn check_endpoint_addresses(
    addr: AddressTypeW,
    endpoints: Vec<EndpointW>,
) -> Result<Vec<m::Endpoint>, String> {
    let mut out = Vec::with_capacity(endpoints.len());
    for (i, mut e) in endpoints.into_iter().enumerate() {
        if addr != AddressTypeW::FQDN {
            e.endpoint.addresses.reserve(e.addresses.len());
            for (j, a) in e.addresses.into_iter().enumerate() {
                let checked = match a {
                    AddrW::Ip(ip) => family_matches(addr, ip).then_some(ip).ok_or_else(|| {
                        format!(
                            "address {:?} is not an {addr:?} address (addressType {addr:?})",
                            ip.to_string()
                        )
                    }),
                    AddrW::Text(t) => family_ip(addr, &t),
                };
                e.endpoint
                    .addresses
                    .push(checked.map_err(|m| format!("endpoints[{i}].addresses[{j}]: {m}"))?);
            }
        }
        // FQDN slices: addresses are host names, which kube-proxy ignores; not kept.
        out.push(e.endpoint);
    }
    Ok(out)
}
