//! `loadBalancerSourceRanges` entries as kube-proxy reads them (`pkg/proxy/serviceport.go`
//! `newBaseServiceInfo`, `MapCIDRsByIPFamily`), and the check of one source address against
//! them; [`super::firewall`] applies it to routes.

use std::net::IpAddr;

use crate::endpointslice::mirroring::parse_ip_sloppy;
use crate::objects::IpFamily;

/// One `loadBalancerSourceRanges` entry, parsed as `netutils.ParseCIDRSloppy` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceRange {
    /// The network address as written (host bits are ignored when matching).
    pub address: IpAddr,
    /// Prefix length.
    pub prefix: u8,
}

impl SourceRange {
    /// Parses `ADDRESS/PREFIX` (whitespace around it trimmed, IPv4 octets with leading zeros
    /// read as decimal); `None` for anything else, which kube-proxy drops with an error log.
    pub fn parse(text: &str) -> Option<SourceRange> {
        let (address, prefix) = text.trim().split_once('/')?;
        let address = parse_ip_sloppy(address)?;
        if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) || prefix.len() > 3 {
            return None;
        }
        let prefix: u8 = prefix.parse().ok()?;
        let max = if address.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(SourceRange { address, prefix })
    }

    /// The family of the range.
    pub fn family(&self) -> IpFamily {
        IpFamily::of(&self.address)
    }

    /// `cidr.Contains(ip)`: same family and the first `prefix` bits equal.
    pub fn contains(&self, ip: &IpAddr) -> bool {
        let (a, b, bits) = match (self.address, ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(*b)), 32),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(*b), 128),
            _ => return false,
        };
        let prefix = u32::from(self.prefix);
        if prefix == 0 {
            return true;
        }
        let shift = bits - prefix;
        (a >> shift) == (b >> shift)
    }
}

impl std::fmt::Display for SourceRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix)
    }
}

/// The ranges of one family, in written order (unparsable entries left out, as kube-proxy
/// drops them).
pub fn ranges_of_family(written: &[String], family: IpFamily) -> Vec<SourceRange> {
    written
        .iter()
        .filter_map(|r| SourceRange::parse(r))
        .filter(|r| r.family() == family)
        .collect()
}

/// What the firewall does with a connection from a source of the node being evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirewallCheck {
    /// No firewall: the VIP has no ranges of this family.
    Open,
    /// The source's address is known and inside a range: accepted.
    Accepted,
    /// The source's address is known and outside every range: dropped.
    Dropped,
    /// It depends on the client's address, which the input does not give (a pod's address,
    /// an outside client's, or a node without a known address): accepted from inside the
    /// ranges, dropped from elsewhere.
    ClientAddress,
}

/// Checks a connection to a load balancer VIP from `source_ip` (the node's own address for
/// the node itself; `None` when unknown: pods and outside clients).
pub fn check(ranges: &[SourceRange], source_ip: Option<IpAddr>) -> FirewallCheck {
    if ranges.is_empty() {
        return FirewallCheck::Open;
    }
    match source_ip {
        // Inside a range: accepted by the range itself (and, with the VIP as source, by the
        // allowFromNode rule: the same condition).
        Some(ip) if ranges.iter().any(|r| r.contains(&ip)) => FirewallCheck::Accepted,
        Some(_) => FirewallCheck::Dropped,
        None => FirewallCheck::ClientAddress,
    }
}
