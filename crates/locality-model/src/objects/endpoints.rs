//! EndpointSlices (what kube-proxy reads) and core/v1 Endpoints (mirrored for selector-less
//! Services).

use std::net::IpAddr;

use super::*;

/// EndpointSlice `addressType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddressType {
    /// IPv4.
    IPv4,
    /// IPv6.
    IPv6,
    /// FQDN (ignored by kube-proxy).
    Fqdn,
}

impl AddressType {
    /// Kubernetes spelling (`IPv4`, `IPv6`, `FQDN`).
    pub fn as_str(self) -> &'static str {
        match self {
            AddressType::IPv4 => "IPv4",
            AddressType::IPv6 => "IPv6",
            AddressType::Fqdn => "FQDN",
        }
    }
    /// The IP family, `None` for FQDN.
    pub fn family(self) -> Option<IpFamily> {
        match self {
            AddressType::IPv4 => Some(IpFamily::IPv4),
            AddressType::IPv6 => Some(IpFamily::IPv6),
            AddressType::Fqdn => None,
        }
    }
}

/// `endpoints[].conditions`: `None` means the field is unset (consumers give it a default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EndpointConditions {
    /// `ready` (kube-proxy: nil ⇒ true; the controller's hint logic: nil ⇒ not ready).
    pub ready: Option<bool>,
    /// `serving` (nil ⇒ true).
    pub serving: Option<bool>,
    /// `terminating` (nil ⇒ false).
    pub terminating: Option<bool>,
}

/// `endpoints[].hints`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct EndpointHints {
    /// `forZones[].name`.
    pub for_zones: Vec<String>,
    /// `forNodes[].name`.
    pub for_nodes: Vec<String>,
}

/// One `endpoints[]` entry of an EndpointSlice.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// `addresses` (kube-proxy uses only the first).
    pub addresses: Vec<IpAddr>,
    /// `conditions`.
    pub conditions: EndpointConditions,
    /// `nodeName`.
    pub node_name: Option<String>,
    /// `zone`.
    pub zone: Option<String>,
    /// `hints` (`None` when absent).
    pub hints: Option<EndpointHints>,
    /// `targetRef` as `(kind, namespace, name)`, when present.
    pub target_ref: Option<(String, String, String)>,
    /// `hostname`.
    pub hostname: Option<String>,
}

/// `ports[]` of an EndpointSlice. kube-proxy ignores entries whose name, port or protocol is unset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct EndpointPort {
    /// `name` (`None` when unset; `Some("")` for the unnamed port).
    pub name: Option<String>,
    /// `port`.
    pub port: Option<u16>,
    /// `protocol`.
    pub protocol: Option<Protocol>,
}

/// An EndpointSlice.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointSlice {
    /// Metadata (label `kubernetes.io/service-name` names the Service).
    pub meta: ObjectMeta,
    /// `addressType`.
    pub address_type: AddressType,
    /// `endpoints`.
    pub endpoints: Vec<Endpoint>,
    /// `ports`.
    pub ports: Vec<EndpointPort>,
}

impl EndpointSlice {
    /// The Service this slice belongs to (`kubernetes.io/service-name`), if labelled.
    pub fn service_name(&self) -> Option<&str> {
        self.meta.labels.get(LABEL_SERVICE_NAME).map(String::as_str)
    }
    /// True when the EndpointSlice controller manages it.
    pub fn is_controller_managed(&self) -> bool {
        self.meta
            .labels
            .get(LABEL_MANAGED_BY)
            .is_some_and(|m| m == CONTROLLER_NAME)
    }
}

/// A core/v1 Endpoints object, reduced to what the EndpointSlice mirroring controller reads
/// ([`crate::endpointslice::mirroring`]): for a selector-less Service it is the source of the
/// EndpointSlices kube-proxy reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Endpoints {
    /// Metadata: name and namespace (those of the Service), labels and annotations.
    pub meta: ObjectMeta,
    /// `subsets`.
    pub subsets: Vec<EndpointSubset>,
}

/// One `subsets[]` entry: addresses sharing a set of ports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointSubset {
    /// `addresses` (ready).
    pub addresses: Vec<EndpointAddress>,
    /// `notReadyAddresses`.
    pub not_ready_addresses: Vec<EndpointAddress>,
    /// `ports`.
    pub ports: Vec<EndpointsPort>,
}

/// One `addresses[]` / `notReadyAddresses[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointAddress {
    /// `ip` as written (may be invalid or irregular text).
    pub ip: String,
    /// `hostname` (`None` or empty: unset).
    pub hostname: Option<String>,
    /// `nodeName`.
    pub node_name: Option<String>,
    /// `targetRef` as `(kind, namespace, name)`, like [`Endpoint::target_ref`].
    pub target_ref: Option<(String, String, String)>,
    /// `targetRef.uid` (empty when unknown); only used to tell addresses apart.
    pub target_uid: String,
}

/// One `ports[]` entry of a subset.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointsPort {
    /// `name` (`""` when unnamed).
    pub name: String,
    /// `port`.
    pub port: u16,
    /// `protocol` (defaults to TCP).
    pub protocol: Protocol,
}
