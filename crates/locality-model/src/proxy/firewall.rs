//! `loadBalancerSourceRanges`: kube-proxy's firewall in front of a load balancer VIP.
//!
//! kube-proxy reads the ranges of the port's IP family, trimmed of whitespace
//! (`pkg/proxy/serviceport.go` `newBaseServiceInfo`, `MapCIDRsByIPFamily`), and, when a VIP
//! has any, sends connections to it through a firewall first:
//!
//! - iptables (`pkg/proxy/iptables/proxier.go` `syncProxyRules`): the `KUBE-FW-…` chain jumps
//!   to the external chain for each `-s RANGE`, and for `-s VIP` when the node's own IP
//!   (`proxier.nodeIP`) lies inside a range ("allowFromNode": a VIP bound locally loops back
//!   with the VIP as source); anything else is not DNATed and hits the `KUBE-PROXY-FIREWALL`
//!   DROP in the filter table (hooked in INPUT, OUTPUT and FORWARD, so pods and the node
//!   itself are filtered as much as outside clients).
//! - nftables (`pkg/proxy/nftables/proxier.go`): the `firewall-check` chain (prerouting and
//!   output, priority dstnat-10, before any DNAT) maps the VIP to a per-service chain whose
//!   rule is `ip saddr != { RANGES[, VIP] } drop`.
//! - ipvs (`pkg/proxy/ipvs/proxier.go`): the `KUBE-LOAD-BALANCER-FW` set sends the VIP to
//!   `KUBE-FIREWALL`, which returns for sources in `KUBE-LOAD-BALANCER-SOURCE-CIDR` (and the
//!   VIP in `KUBE-LOAD-BALANCER-SOURCE-IP` under the same node-IP condition) and marks the
//!   rest for DROP.
//!
//! The rule has had this shape in every release the model supports. It applies only to VIP
//! ingresses (`ipMode: Proxy` and hostname-only ingresses are not programmed as VIPs and go
//! through the NodePort), never to NodePorts, cluster IPs or external IPs. A client outside
//! every range times out (DROP), whatever the endpoints.

use super::codes::{ProxyMode, Reason, Source, VerdictKind};
use super::confidence::Confidence;
use super::endpoint::ServicePortInfo;
use super::route::{Route, RouteQuery, TraceStep};
pub use super::source_ranges::{FirewallCheck, SourceRange, check, ranges_of_family};
use super::topology::TopologyMode;

/// `loadBalancerSourceRanges` in front of a VIP: the node's own traffic is decided by its
/// address; a pod's or an outside client's address is not in the input, so their verdict is
/// marked as holding only inside the ranges.
pub(super) fn apply(svc: &ServicePortInfo, q: RouteQuery, r: &mut Route) {
    let ranges = &svc.load_balancer_source_ranges;
    let source_ip = match q.source {
        Source::Host => q.node_ip,
        Source::Pod | Source::External => None,
    };
    let listed: Vec<String> = ranges.iter().map(ToString::to_string).collect();
    let chain = match q.mode {
        ProxyMode::Iptables => "KUBE-FW-… chain, else KUBE-PROXY-FIREWALL DROP",
        ProxyMode::Nftables => "firewall-check: ip saddr != { ranges } drop",
        ProxyMode::Ipvs => "KUBE-FIREWALL: KUBE-LOAD-BALANCER-SOURCE-CIDR, else KUBE-MARK-DROP",
    };
    match check(ranges, source_ip) {
        FirewallCheck::Open => {}
        FirewallCheck::Accepted => r.trace.insert(
            0,
            TraceStep::new(
                "source-ranges",
                format!(
                    "loadBalancerSourceRanges [{}]: the node's address {} is inside, accepted ({chain})",
                    listed.join(", "),
                    source_ip.map(|i| i.to_string()).unwrap_or_default()
                ),
            ),
        ),
        FirewallCheck::Dropped => {
            let detail = format!(
                "loadBalancerSourceRanges [{}]: the node's address {} is outside every range, so kube-proxy's firewall drops the connection before any DNAT ({chain})",
                listed.join(", "),
                source_ip.map(|i| i.to_string()).unwrap_or_default()
            );
            // The firewall acts before any DNAT: the endpoints never matter.
            r.trace.retain(|t| t.step == "categorize");
            r.trace.push(TraceStep::new("source-ranges", detail));
            r.verdict = VerdictKind::Drop;
            r.endpoints.clear();
            r.topology = TopologyMode::None;
            r.fallback = None;
            r.masquerade = false;
            r.reason = Reason::LoadBalancerSourceRanges;
            r.confidence = r.confidence.min(Confidence::SourceRead);
        }
        FirewallCheck::ClientAddress => {
            if r.verdict == VerdictKind::Drop {
                return;
            }
            let who = match q.source {
                Source::Pod => "a pod's address (not masqueraded before the firewall)",
                _ => "the client's address",
            };
            r.source_ranges = true;
            r.trace.push(TraceStep::new(
                "source-ranges",
                format!(
                    "loadBalancerSourceRanges [{}]: this holds only when {who} is inside a range; from anywhere else kube-proxy's firewall drops the connection, a timeout ({chain})",
                    listed.join(", ")
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::IpFamily;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_as_parse_cidr_sloppy_and_matches_prefixes() {
        let r = SourceRange::parse(" 203.0.113.0/24 ").unwrap();
        assert!(r.contains(&ip("203.0.113.9")));
        assert!(!r.contains(&ip("203.0.114.9")));
        assert!(!r.contains(&ip("::1")));
        let sloppy = SourceRange::parse("010.000.0.0/8").unwrap();
        assert!(sloppy.contains(&ip("10.1.2.3")));
        assert!(
            SourceRange::parse("0.0.0.0/0")
                .unwrap()
                .contains(&ip("198.51.100.1"))
        );
        let v6 = SourceRange::parse("fd00::/64").unwrap();
        assert!(v6.contains(&ip("fd00::5")) && !v6.contains(&ip("fd01::5")));
        for bad in [
            "10.0.0.0",
            "10.0.0.0/33",
            "10.0.0.0/",
            "x/8",
            "10.0.0.0/+8",
            "::/129",
        ] {
            assert_eq!(SourceRange::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ranges_are_filtered_by_family() {
        let written = vec![
            "203.0.113.0/24".to_string(),
            "fd00::/64".to_string(),
            "junk".to_string(),
        ];
        assert_eq!(ranges_of_family(&written, IpFamily::IPv4).len(), 1);
        assert_eq!(
            ranges_of_family(&written, IpFamily::IPv6)[0].to_string(),
            "fd00::/64"
        );
    }

    #[test]
    fn the_node_ip_decides_for_the_node_and_the_client_for_everyone_else() {
        let ranges = ranges_of_family(&["10.0.0.0/8".to_string()], IpFamily::IPv4);
        assert_eq!(check(&[], Some(ip("192.0.2.1"))), FirewallCheck::Open);
        assert_eq!(check(&ranges, Some(ip("10.1.1.1"))), FirewallCheck::Accepted);
        assert_eq!(check(&ranges, Some(ip("192.0.2.1"))), FirewallCheck::Dropped);
        assert_eq!(check(&ranges, None), FirewallCheck::ClientAddress);
    }
}
