//! The simulated cloud load-balancer controller's allocations: its address pools, the
//! addresses it gave each Service, and every ingress address in the store.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use locality_model::objects::IpFamily;

use crate::objects::ObjectKey;

/// The label that keeps a node out of every load balancer's node set (upstream
/// `v1.LabelNodeExcludeBalancers`).
pub const LABEL_EXCLUDE_FROM_EXTERNAL_LOAD_BALANCERS: &str =
    "node.kubernetes.io/exclude-from-external-load-balancers";

/// Host `host` (1–254) of the simulated pools of load-balancer addresses: IPv4
/// `203.0.113.0/24` (TEST-NET-3, RFC 5737), IPv6 `2001:db8:203:113::/64` (the documentation
/// prefix, RFC 3849).
fn pool_address(family: IpFamily, host: u8) -> IpAddr {
    match family {
        IpFamily::IPv4 => IpAddr::V4(Ipv4Addr::new(203, 0, 113, host)),
        IpFamily::IPv6 => IpAddr::V6(Ipv6Addr::new(
            0x2001,
            0xdb8,
            0x203,
            0x113,
            0,
            0,
            0,
            u16::from(host),
        )),
    }
}

/// The simulated cloud load-balancer controller's state.
#[derive(Debug, Clone, Default)]
pub(crate) struct CloudLoadBalancers {
    /// Addresses this controller gave each Service.
    pub(super) assigned: BTreeMap<ObjectKey, Vec<IpAddr>>,
    /// Every address in use by it.
    pub(super) used: BTreeSet<IpAddr>,
    /// Every ingress IP in the store (whoever wrote it), with its Service and `ipMode`.
    pub(super) vips: HashMap<IpAddr, (ObjectKey, bool)>,
    /// The ingress IPs indexed for each Service.
    pub(super) by_service: HashMap<ObjectKey, Vec<IpAddr>>,
}

impl CloudLoadBalancers {
    pub(super) fn allocate(&mut self, family: IpFamily) -> Option<IpAddr> {
        let ip = (1..=254u8)
            .map(|h| pool_address(family, h))
            .find(|ip| !self.used.contains(ip) && !self.vips.contains_key(ip))?;
        self.used.insert(ip);
        Some(ip)
    }

    pub(super) fn release(&mut self, key: &ObjectKey) -> Vec<IpAddr> {
        let ips = self.assigned.remove(key).unwrap_or_default();
        for ip in &ips {
            self.used.remove(ip);
        }
        ips
    }

    pub(super) fn unindex(&mut self, key: &ObjectKey) {
        for ip in self.by_service.remove(key).unwrap_or_default() {
            if self.vips.get(&ip).is_some_and(|(k, _)| k == key) {
                self.vips.remove(&ip);
            }
        }
    }
}
