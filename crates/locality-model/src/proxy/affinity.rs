//! `sessionAffinity: ClientIP`: each client address sticks to one endpoint.
//!
//! kube-proxy reads `sessionAffinityConfig.clientIP.timeoutSeconds` as `StickyMaxAgeSeconds`
//! (`pkg/proxy/serviceport.go` `newBaseServiceInfo`) and, in every mode, lets the first new
//! connection of a client address pick an endpoint of the set in use (cluster or local) as
//! usual, then sends that address's new connections to the same endpoint until the timeout
//! passes without one:
//!
//! - iptables (`pkg/proxy/iptables/proxier.go` `writeServiceToEndpointRules`): the service
//!   chain first tries `-m recent --name KUBE-SEP-… --rcheck --seconds T --reap` for each
//!   endpoint, the endpoint chain records the source with `-m recent --set`;
//! - nftables (`pkg/proxy/nftables/proxier.go`): one `affinity-…` set per endpoint with
//!   `timeout Ts`, checked with `ip saddr @affinity-…` before the random `numgen` choice and
//!   refreshed with `update @affinity-… { ip saddr }`;
//! - ipvs (`pkg/proxy/ipvs/proxier.go` `syncService`): the virtual server is persistent
//!   (`FlagPersistent`, `Timeout` = T, netmask /32 or /128);
//! - winkernel: HNS session affinity, only where the Windows version supports it (otherwise
//!   kube-proxy logs "Session Affinity is not supported on this version of Windows").
//!
//! So a route over several endpoints is not a uniform spread per connection: one client
//! address reaches one endpoint, which one is not predictable. Everything behind one
//! address (the node itself and its hostNetwork pods, clients behind one NAT) shares it.

use super::codes::ProxyMode;

/// The trace line for a delivered route with client-IP affinity over `endpoints` endpoints.
pub fn describe(mode: ProxyMode, seconds: u32, endpoints: usize) -> String {
    let how = match mode {
        ProxyMode::Iptables => {
            format!("iptables `-m recent --rcheck --seconds {seconds} --reap` per endpoint")
        }
        ProxyMode::Nftables => format!("nftables affinity sets per endpoint, timeout {seconds}s"),
        ProxyMode::Ipvs => format!("an IPVS persistent virtual server, timeout {seconds}s"),
    };
    let spread = if endpoints > 1 {
        format!(
            "each client address sticks to one of the {endpoints} endpoints (which one is not predictable) until {seconds}s pass without a new connection from it; not a uniform spread"
        )
    } else {
        format!("each client address sticks to its endpoint for {seconds}s after its last new connection")
    };
    format!("sessionAffinity: ClientIP ({how}): {spread}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_mode_mechanism_and_says_not_uniform() {
        let t = describe(ProxyMode::Iptables, 10800, 3);
        assert!(
            t.contains("--seconds 10800") && t.contains("not a uniform spread"),
            "{t}"
        );
        assert!(describe(ProxyMode::Nftables, 60, 2).contains("affinity sets"));
        assert!(describe(ProxyMode::Ipvs, 60, 2).contains("persistent"));
        assert!(!describe(ProxyMode::Ipvs, 60, 1).contains("uniform"));
    }
}
