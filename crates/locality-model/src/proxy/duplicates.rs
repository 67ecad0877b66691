//! One endpoint address in several EndpointSlices of a Service: which copy kube-proxy keeps.
//!
//! `pkg/proxy/endpointslicecache.go` `addEndpoints` walks a Service's slices in Go map order
//! (random, never sorted) and keys endpoints by `IP:port` per service port. When a key is met
//! again it overwrites the kept copy only under a condition that changed across releases:
//! - before 1.36: `!exists || isLocal` — a copy on kube-proxy's own node wins; among several
//!   local copies the last one met, among remote copies the first one met;
//! - from 1.36 (upstream PR #135593, "Handle the case of a pod IP being reused while the old
//!   Pod still exists"): `!exists || !terminating` — the last non-terminating copy met wins;
//!   when every copy is terminating, the first one met.
//!
//! "Met first" or "met last" depends on map order, which upstream leaves undefined. The model
//! therefore answers with the copies kube-proxy *may* keep ([`candidates`]): one when the rule
//! decides, several when map order does; callers evaluate each and report every possible
//! outcome.

use std::cmp::Ordering;

use super::endpoint::ProxyEndpoint;
use crate::version::ProxyFeatures;

/// The differing copies of one `IP:port` of a service port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateEndpoint {
    /// Its index in the port's endpoint list (which holds `copies[0]`).
    pub index: usize,
    /// Every distinct copy, in [`canonical_order`] (at least two).
    pub copies: Vec<ProxyEndpoint>,
}

/// A total order of copies that does not depend on input order: non-terminating first, then
/// ready, serving, node, zone, hints, pod. The first copy is the endpoint list's canonical one.
pub fn canonical_order(a: &ProxyEndpoint, b: &ProxyEndpoint) -> Ordering {
    let key = |e: &ProxyEndpoint| {
        (
            e.terminating,
            !e.ready,
            !e.serving,
            e.node_name.clone(),
            e.zone.clone(),
            e.zone_hints.clone(),
            e.node_hints.clone(),
            e.target.clone(),
        )
    };
    key(a).cmp(&key(b))
}

/// The copies kube-proxy on `node` (its node name), at `features`' version, may keep: one
/// when its rule decides, several when Go's map order does.
pub fn candidates<'a>(
    dup: &'a DuplicateEndpoint,
    node: &str,
    features: &ProxyFeatures,
) -> Vec<&'a ProxyEndpoint> {
    let preferred: Vec<&ProxyEndpoint> = if features.duplicates_non_terminating_win {
        dup.copies.iter().filter(|c| !c.terminating).collect()
    } else {
        dup.copies.iter().filter(|c| c.is_local(node)).collect()
    };
    if preferred.is_empty() {
        dup.copies.iter().collect()
    } else {
        preferred
    }
}

/// Which copy kube-proxy keeps for one duplicated address, in words, for a trace.
pub fn describe(dup: &DuplicateEndpoint, node: &str, features: &ProxyFeatures) -> String {
    let c = candidates(dup, node, features);
    let addr = &dup.copies[0];
    let rule = if features.duplicates_non_terminating_win {
        "kube-proxy 1.36+ keeps a non-terminating copy"
    } else {
        "kube-proxy before 1.36 keeps a copy on its own node"
    };
    if c.len() == 1 {
        let on = c[0].node_name.as_deref().unwrap_or("no node");
        format!(
            "{addr} is in {} slices with different fields; {rule}: the copy on {on}",
            dup.copies.len()
        )
    } else {
        format!(
            "{addr} is in {} slices with different fields; {rule}, and {} copies qualify: which one depends on Go's map order (undefined upstream), every possible outcome is evaluated",
            dup.copies.len(),
            c.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::KubeVersion;

    fn copy(node: &str, terminating: bool) -> ProxyEndpoint {
        ProxyEndpoint {
            ip: "10.0.0.1".parse().unwrap(),
            port: 80,
            node_name: Some(node.into()),
            ready: !terminating,
            serving: true,
            terminating,
            zone_hints: vec![],
            node_hints: vec![],
            zone: None,
            target: None,
        }
    }

    fn dup(copies: Vec<ProxyEndpoint>) -> DuplicateEndpoint {
        let mut copies = copies;
        copies.sort_by(canonical_order);
        DuplicateEndpoint { index: 0, copies }
    }

    /// Before PR #135593 (`!exists || isLocal`): a local copy wins, even a terminating one.
    #[test]
    fn before_1_36_a_local_copy_wins() {
        let d = dup(vec![copy("a", false), copy("b", true)]);
        let f = ProxyFeatures::at(KubeVersion::new(1, 35));
        let c = candidates(&d, "b", &f);
        assert_eq!(c.len(), 1);
        assert!(c[0].terminating && c[0].is_local("b"));
        // No local copy: the first met, undefined.
        assert_eq!(candidates(&d, "z", &f).len(), 2);
    }

    /// From PR #135593 (`!exists || !terminating`): a non-terminating copy wins anywhere.
    #[test]
    fn from_1_36_a_non_terminating_copy_wins() {
        let d = dup(vec![copy("a", false), copy("b", true)]);
        let f = ProxyFeatures::at(KubeVersion::new(1, 36));
        for node in ["a", "b", "z"] {
            let c = candidates(&d, node, &f);
            assert_eq!(c.len(), 1, "{node}");
            assert!(!c[0].terminating);
        }
        // Two non-terminating copies: the last met, undefined.
        let d = dup(vec![copy("a", false), copy("b", false)]);
        assert_eq!(candidates(&d, "a", &f).len(), 2);
    }

    /// The canonical copy does not depend on the order the copies were read in.
    #[test]
    fn the_canonical_copy_ignores_input_order() {
        let a = dup(vec![copy("a", true), copy("b", false), copy("c", false)]);
        let b = dup(vec![copy("c", false), copy("a", true), copy("b", false)]);
        assert_eq!(a, b);
        assert!(!a.copies[0].terminating);
    }
}
