//! Choosing the roles: a small exhaustive search over the usable nodes' zones for the
//! assignment under which the most cases run (controls first, then the core cases, then
//! every case, then the most in full form), by the rules of [`super::placement`]. Nodes of
//! one zone are interchangeable for placement, so the search is over zones (each node without
//! a zone label counts alone: it shares no zone), the first free node by name of a zone being
//! taken. Deterministic: among equal assignments the first in name order wins.

use std::collections::BTreeMap;

use locality_model::objects::Node;

use crate::cases::{Case, Role};
use crate::decision::CORE;

use super::placement::{Placement, place};
use super::{Roles, unusable};

/// A zone class: the nodes of one zone (by name), or one node without a zone label.
struct Class<'a> {
    zone: Option<&'a str>,
    nodes: Vec<&'a str>,
}

/// The score of an assignment: (controls, core cases, cases, full-form cases) that run.
type Score = (usize, usize, usize, usize);

fn score(cases: &[&Case], roles: &Roles) -> Score {
    let mut s = (0, 0, 0, 0);
    for c in cases {
        let p = place(c, roles);
        if !p.runs() {
            continue;
        }
        s.2 += 1;
        if c.control {
            s.0 += 1;
        }
        if CORE.contains(&c.id) {
            s.1 += 1;
        }
        if p == Placement::Full {
            s.3 += 1;
        }
    }
    s
}

/// The usable nodes, by name, and why the others were left out.
fn usable(nodes: &[Node]) -> (Vec<&Node>, Vec<String>) {
    let mut excluded = Vec::new();
    let mut usable: Vec<&Node> = Vec::new();
    for n in nodes {
        match unusable(n) {
            Some(why) => excluded.push(format!("{}: {why}", n.meta.name)),
            None => usable.push(n),
        }
    }
    usable.sort_by(|a, b| a.meta.name.cmp(&b.meta.name));
    (usable, excluded)
}

/// The cluster's shape in words: usable nodes per zone.
fn shape(classes: &[Class<'_>]) -> String {
    let total: usize = classes.iter().map(|c| c.nodes.len()).sum();
    let mut zones: Vec<String> = classes
        .iter()
        .filter_map(|c| c.zone.map(|z| format!("{z}: {}", c.nodes.join(", "))))
        .collect();
    let zoneless: Vec<&str> = classes
        .iter()
        .filter(|c| c.zone.is_none())
        .flat_map(|c| c.nodes.iter().copied())
        .collect();
    if !zoneless.is_empty() {
        zones.push(format!("no zone label: {}", zoneless.join(", ")));
    }
    format!(
        "this cluster has {total} usable node{}{}",
        if total == 1 { "" } else { "s" },
        if zones.is_empty() {
            String::new()
        } else {
            format!(" ({})", zones.join("; "))
        }
    )
}

/// Picks the roles for `cases` on `nodes` (see the module).
pub fn pick_for(nodes: &[Node], cases: &[&Case]) -> Roles {
    let (usable, excluded) = usable(nodes);
    let mut by_zone: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut classes: Vec<Class<'_>> = Vec::new();
    for n in &usable {
        match n.zone().filter(|z| !z.is_empty()) {
            Some(z) => by_zone.entry(z).or_default().push(n.meta.name.as_str()),
            None => classes.push(Class {
                zone: None,
                nodes: vec![n.meta.name.as_str()],
            }),
        }
    }
    let mut zoned: Vec<Class<'_>> = by_zone
        .into_iter()
        .map(|(z, nodes)| Class { zone: Some(z), nodes })
        .collect();
    zoned.append(&mut classes);
    let classes = zoned;
    let shape = shape(&classes);
    let zone_of: BTreeMap<&str, &str> = classes
        .iter()
        .filter_map(|c| c.zone.map(|z| (c, z)))
        .flat_map(|(c, z)| c.nodes.iter().map(move |n| (*n, z)))
        .collect();
    let build = |assigned: &[(Role, &str)]| -> Roles {
        let mut roles = Roles {
            nodes: BTreeMap::new(),
            zones: BTreeMap::new(),
            excluded: excluded.clone(),
            shape: shape.clone(),
        };
        for (r, n) in assigned {
            roles.nodes.insert(*r, n.to_string());
            if let Some(z) = zone_of.get(n) {
                roles.zones.insert(*r, z.to_string());
            }
        }
        roles
    };
    // The first node of class `k` not yet taken.
    let free = |k: usize, taken: &[(Role, &str)]| -> Option<&str> {
        classes[k]
            .nodes
            .iter()
            .copied()
            .find(|n| !taken.iter().any(|(_, t)| t == n))
    };
    let mut best: Option<(Score, Roles)> = None;
    let k = classes.len();
    for (c1, class) in classes.iter().enumerate() {
        let Some(n1) = free(c1, &[]) else { continue };
        let with_n1 = [(Role::N1, n1)];
        // N1z: none, or the next node of N1's zone.
        let n1z_options: Vec<Option<&str>> = std::iter::once(None)
            .chain(class.zone.and(free(c1, &with_n1)).map(Some))
            .collect();
        for n1z in n1z_options {
            let mut base: Vec<(Role, &str)> = with_n1.to_vec();
            if let Some(n) = n1z {
                base.push((Role::N1z, n));
            }
            for c2 in std::iter::once(None).chain((0..k).map(Some)) {
                let mut with_n2 = base.clone();
                if let Some(c2) = c2 {
                    let Some(n) = free(c2, &with_n2) else { continue };
                    with_n2.push((Role::N2, n));
                }
                for c3 in std::iter::once(None).chain((0..k).map(Some)) {
                    let mut all = with_n2.clone();
                    if let Some(c3) = c3 {
                        let Some(n) = free(c3, &all) else { continue };
                        all.push((Role::N3, n));
                    }
                    let roles = build(&all);
                    let s = score(cases, &roles);
                    if best.as_ref().is_none_or(|(b, _)| s > *b) {
                        best = Some((s, roles));
                    }
                }
            }
        }
    }
    best.map(|(_, r)| r).unwrap_or_else(|| build(&[]))
}
