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
//!
//! One map order decides every duplicated address of a port at once, so the copies kept for
//! different addresses are not independent: [`combinations`] walks the slices involved in
//! every order and yields only the combinations some order produces, the one of the slices
//! walked by name first (found by the randomized differential test, issue #10: choosing each
//! address's canonical copy on its own could report an outcome no map order gives).

use std::cmp::Ordering;

use super::endpoint::ProxyEndpoint;
use crate::features::ProxyFeatures;

/// The differing copies of one `IP:port` of a service port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateEndpoint {
    /// Its index in the port's endpoint list (which holds `copies[0]`).
    pub index: usize,
    /// Every distinct copy, in [`canonical_order`] (at least two).
    pub copies: Vec<ProxyEndpoint>,
    /// For each copy, the names of the slices holding it (sorted).
    pub slices: Vec<Vec<String>>,
}

/// The most slices [`combinations`] walks in every order (6! = 720 orders); past it, each
/// address's copies are varied one at a time around the by-name order's combination.
pub const MAX_ORDERED_SLICES: usize = 6;

/// Which copy of `dup` kube-proxy keeps when it walks the slices in `order`
/// (`endpointslicecache.go` `addEndpoints`: a copy met later overwrites the kept one only when
/// `isLocal`, before 1.36, or `!terminating`, from 1.36). An index into `dup.copies`.
fn kept_in_order(dup: &DuplicateEndpoint, order: &[&str], node: &str, features: &ProxyFeatures) -> usize {
    let mut kept: Option<usize> = None;
    for slice in order {
        for (i, copy) in dup.copies.iter().enumerate() {
            if !dup.slices[i].iter().any(|s| s == slice) {
                continue;
            }
            let overwrite = if features.duplicates_non_terminating_win {
                !copy.terminating
            } else {
                copy.is_local(node)
            };
            if kept.is_none() || overwrite {
                kept = Some(i);
            }
        }
    }
    kept.unwrap_or(0)
}

/// The combinations of copies (one index into `copies` per entry of `dups`) kube-proxy on
/// `node` may keep, distinct, the first being the one of the slices walked in name order.
pub fn combinations(dups: &[DuplicateEndpoint], node: &str, features: &ProxyFeatures) -> Vec<Vec<usize>> {
    let mut slices: Vec<&str> = dups
        .iter()
        .flat_map(|d| d.slices.iter().flatten().map(String::as_str))
        .collect();
    slices.sort_unstable();
    slices.dedup();
    let of_order = |order: &[&str]| -> Vec<usize> {
        dups.iter()
            .map(|d| kept_in_order(d, order, node, features))
            .collect()
    };
    let mut out = vec![of_order(&slices)];
    if slices.len() <= MAX_ORDERED_SLICES {
        let mut order = slices.clone();
        permute(&mut order, 0, &mut |o| {
            let c = of_order(o);
            if !out.contains(&c) {
                out.push(c);
            }
        });
    } else {
        // Too many orders: each address's possible copies, one at a time.
        let base = out[0].clone();
        for (k, d) in dups.iter().enumerate() {
            for alt in candidates(d, node, features) {
                let i = d.copies.iter().position(|c| c == alt).unwrap_or(0);
                let mut c = base.clone();
                c[k] = i;
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// Calls `f` with every permutation of `items[k..]` (recursive swaps).
fn permute<'a>(items: &mut Vec<&'a str>, k: usize, f: &mut impl FnMut(&[&'a str])) {
    if k + 1 >= items.len() {
        f(items);
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permute(items, k + 1, f);
        items.swap(k, i);
    }
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
        let slices = (0..copies.len()).map(|i| vec![format!("s{i}")]).collect();
        DuplicateEndpoint {
            index: 0,
            copies,
            slices,
        }
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

    /// Two addresses duplicated across the same slices: one map order decides both, so the
    /// combinations are only those some order of the slices gives (issue #10). Before 1.36 on
    /// a node with no copy, the first slice met wins for both addresses: (a, a) or (b, b),
    /// never (a, b).
    #[test]
    fn one_map_order_decides_every_duplicated_address() {
        let mk = |ip: &str, node: &str, ready: bool, slice: &str| {
            let mut c = copy(node, false);
            c.ip = ip.parse().unwrap();
            c.ready = ready;
            (c, slice.to_string())
        };
        let dup_of = |pairs: Vec<(ProxyEndpoint, String)>| {
            let mut pairs = pairs;
            pairs.sort_by(|a, b| canonical_order(&a.0, &b.0));
            DuplicateEndpoint {
                index: 0,
                copies: pairs.iter().map(|p| p.0.clone()).collect(),
                slices: pairs.iter().map(|p| vec![p.1.clone()]).collect(),
            }
        };
        // Address 1: ready in slice y, not ready in x. Address 2: ready in x, not ready in y.
        let d1 = dup_of(vec![
            mk("10.0.0.1", "a", true, "y"),
            mk("10.0.0.1", "b", false, "x"),
        ]);
        let d2 = dup_of(vec![
            mk("10.0.0.2", "a", true, "x"),
            mk("10.0.0.2", "b", false, "y"),
        ]);
        let f = ProxyFeatures::at(KubeVersion::new(1, 35));
        let combos = combinations(&[d1.clone(), d2.clone()], "z", &f);
        let ready: Vec<(bool, bool)> = combos
            .iter()
            .map(|c| (d1.copies[c[0]].ready, d2.copies[c[1]].ready))
            .collect();
        // Walking x first keeps x's copies (1 not ready, 2 ready); y first the others.
        assert_eq!(ready, vec![(false, true), (true, false)]);
        // Each copy on its own would allow (true, true): no order gives both ready copies.
        assert!(!ready.contains(&(true, true)));
    }
}
