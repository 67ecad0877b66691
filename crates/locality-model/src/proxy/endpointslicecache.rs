//! Which EndpointSlice entries become the endpoints of a service port
//! (`pkg/proxy/endpointslicecache.go` `addEndpoints`, `endpointsMapFromEndpointInfo`), one
//! copy per address ([`super::duplicates`]).

use std::net::IpAddr;

use super::duplicates::{DuplicateEndpoint, canonical_order};
use super::endpoint::ProxyEndpoint;
use crate::objects::{Endpoint, EndpointSlice, IpFamily, Protocol, ServicePort};

/// The endpoints of one service port and family, from the Service's EndpointSlices
/// (`endpointslicecache.go` `addEndpoints` and `endpointsMapFromEndpointInfo`).
///
/// Only slices of the family's address type count; a slice port matches when its name and
/// protocol equal the service port's and its number is set; entries without an address are
/// ignored; only `addresses[0]` is used. The result is sorted by `IP:port`.
///
/// When the same `IP:port` appears in several slices, kube-proxy keeps one copy, and which
/// one depends on its version and on Go's map order (see [`super::duplicates`]): the endpoint
/// list holds one canonical copy per address, chosen without regard to input order, and
/// every address whose copies differ is listed in [`PortEndpoints::duplicates`] for the
/// per-node resolution. Hints are kept as written; whether kube-proxy reads them (by
/// version) is decided in [`super::CategorizeIndex`].
pub fn endpoints_for_port<'a>(
    slices: impl IntoIterator<Item = &'a EndpointSlice>,
    port: &ServicePort,
    family: IpFamily,
) -> PortEndpoints {
    // Every copy read, in reading order: its address, the position of its slice in `names`
    // and the entry itself; sorted by address below (a stable sort: the copies of one address
    // stay in reading order). Sorting these small records, then building each endpoint once in
    // its final place, costs less than hashing every copy into a map or sorting the endpoints.
    let mut read_all: Vec<((IpAddr, u16), usize, &Endpoint)> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for slice in slices {
        if slice.address_type.family() != Some(family) {
            continue;
        }
        let Some(number) = slice.ports.iter().find_map(|p| {
            let name_matches = p.name.as_deref() == Some(port.name.as_str());
            let proto_matches = p.protocol.unwrap_or(Protocol::TCP) == port.protocol;
            (name_matches && proto_matches)
                .then_some(p.port)
                .flatten()
                .filter(|n| *n != 0)
        }) else {
            continue;
        };
        let at = names.len();
        names.push(&slice.meta.name);
        for ep in &slice.endpoints {
            if let Some(ip) = ep.addresses.first().copied() {
                read_all.push(((ip, number), at, ep));
            }
        }
    }
    read_all.sort_by_key(|(key, _, _)| *key);
    let proxy_endpoint = |(ip, port): (IpAddr, u16), ep: &Endpoint| {
        let hints = ep.hints.as_ref();
        ProxyEndpoint {
            ip,
            port,
            node_name: ep.node_name.clone(),
            ready: ep.conditions.ready.unwrap_or(true),
            serving: ep.conditions.serving.unwrap_or(true),
            terminating: ep.conditions.terminating.unwrap_or(false),
            zone_hints: hints.map(|h| h.for_zones.clone()).unwrap_or_default(),
            node_hints: hints.map(|h| h.for_nodes.clone()).unwrap_or_default(),
            zone: ep.zone.clone(),
            target: ep.target_ref.as_ref().map(|(_, _, name)| name.clone()),
        }
    };
    let mut out = PortEndpoints::default();
    out.endpoints.reserve(read_all.len());
    let mut copies_of = read_all.into_iter().peekable();
    while let Some((key, first_at, first)) = copies_of.next() {
        // The further copies of the same address, in reading order.
        let mut more: Vec<(ProxyEndpoint, usize)> = Vec::new();
        while let Some((_, at, copy)) = copies_of.next_if(|(k, _, _)| *k == key) {
            more.push((proxy_endpoint(key, copy), at));
        }
        let first = proxy_endpoint(key, first);
        if more.is_empty() {
            out.endpoints.push(first);
            continue;
        }
        let mut read = more;
        read.push((first, first_at));
        read.sort_by(|a, b| canonical_order(&a.0, &b.0));
        // Identical copies are one copy, found in several slices.
        let mut copies: Vec<ProxyEndpoint> = Vec::new();
        let mut in_slices: Vec<Vec<String>> = Vec::new();
        for (copy, at) in read {
            if copies.last() != Some(&copy) {
                copies.push(copy);
                in_slices.push(Vec::new());
            }
            if let Some(list) = in_slices.last_mut() {
                list.push(names[at].to_string());
            }
        }
        for list in &mut in_slices {
            list.sort();
            list.dedup();
        }
        out.endpoints.push(copies[0].clone());
        if copies.len() > 1 {
            out.duplicates.push(DuplicateEndpoint {
                index: out.endpoints.len() - 1,
                copies,
                slices: in_slices,
            });
        }
    }
    out
}

/// The endpoints of one service port in one family, as [`endpoints_for_port`] reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortEndpoints {
    /// One copy per `IP:port`, sorted by address.
    pub endpoints: Vec<ProxyEndpoint>,
    /// Addresses found in several slices with copies that differ.
    pub duplicates: Vec<DuplicateEndpoint>,
}
