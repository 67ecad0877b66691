//! Whether a case can run on the roles a cluster gave, worked out from the case's own data
//! (its setup, client, dial and declared outcome), never from a list of case IDs: a new
//! catalogue entry is placed by the same rules. Pure.
//!
//! - Every role the case's client, dial, unready backends and declared outcome name needs a
//!   node.
//! - A backend on `N2` may be left out (the case's *reduced form*) only while the case still
//!   discriminates: some backend left would be a wrong answer, or the client has no backend
//!   on its own node (the answer then crosses nodes). A rollout needs every backend.
//! - A `trafficDistribution` case (without `internalTrafficPolicy: Local`, which outranks
//!   it) declares an outcome that depends on zones: the roles must be placed so that the
//!   preference gives exactly the declared backends. kube-proxy serves a node from the
//!   endpoints hinted for its zone when every endpoint has a zone and one is in the node's
//!   zone, else from all (`pkg/proxy/topology.go`, `CategorizeEndpoints`); a node without
//!   a zone label is in no zone.

use std::collections::BTreeSet;

use crate::cases::{Case, Declared, Dial, REPEATED, Role};

use super::Roles;

/// Where a case stands on a set of roles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// It runs as catalogued.
    Full,
    /// It runs without the backends on `N2` (the reason, for its record).
    Reduced(String),
    /// It cannot run on this cluster (why, naming the role and what it lacks).
    No(String),
}

impl Placement {
    /// Whether the case runs.
    pub fn runs(&self) -> bool {
        !matches!(self, Placement::No(_))
    }
}

/// The roles a case's outcome is declared in.
fn declared_roles(d: Declared) -> &'static [Role] {
    match d {
        Declared::AnsweredBy(r) | Declared::RefusedByEndpoint(r) => r,
        _ => &[],
    }
}

fn describe(roles: &Roles, r: Role) -> String {
    match (roles.node(r), roles.zones.get(&r)) {
        (Some(n), Some(z)) => format!("{} ({n}, zone {z})", r.as_str()),
        (Some(n), None) => format!("{} ({n}, no zone label)", r.as_str()),
        (None, _) => r.as_str().to_string(),
    }
}

/// Where `case` stands on `roles`.
pub fn place(case: &Case, roles: &Roles) -> Placement {
    if case.declared == Declared::SameAsBefore {
        // It reruns other cases: it runs when they do.
        for id in REPEATED {
            if let Some(c) = crate::cases::case(id)
                && let Placement::No(why) = place(c, roles)
            {
                return Placement::No(format!("it reruns {id}, which cannot run: {why}"));
            }
        }
        return Placement::Full;
    }
    let s = &case.setup;
    let has = |r: Role| roles.node(r).is_some();
    let dialled = match case.dial {
        Dial::NodePort(r) => Some(r),
        Dial::ClusterIp | Dial::LoadBalancer => None,
    };
    let declared = declared_roles(case.declared);
    let named = case
        .client
        .role()
        .into_iter()
        .chain(dialled)
        .chain(s.unready.iter().copied())
        .chain(s.port_missing_on.iter().copied())
        .chain(
            declared
                .iter()
                .copied()
                .filter(|r| !(*r == Role::N2 && declared.len() > 1)),
        );
    for r in named {
        if !has(r) {
            return Placement::No(format!("no node for role {} ({})", r.as_str(), lacks(roles, r)));
        }
    }
    // The backends that stay, and whether N2's were left out.
    let mut backends: Vec<Role> = s.backends.to_vec();
    let mut reduced = None;
    if backends.contains(&Role::N2) && !has(Role::N2) {
        backends.retain(|r| *r != Role::N2);
        let client_local = case.client.role().is_some_and(|c| backends.contains(&c));
        let left: BTreeSet<Role> = declared.iter().copied().filter(|r| *r != Role::N2).collect();
        let wrong_possible = backends.iter().any(|b| !left.contains(b));
        if s.rollout || backends.is_empty() || (!wrong_possible && client_local) {
            return Placement::No(format!(
                "no node for role N2 ({}): without a backend on N2 the case cannot tell a violation from its declared outcome",
                lacks(roles, Role::N2)
            ));
        }
        reduced = Some(format!(
            "reduced form: no node for role N2 ({}), so the backends are on {} only",
            lacks(roles, Role::N2),
            backends.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    for r in &backends {
        if !has(*r) {
            return Placement::No(format!("no node for role {} ({})", r.as_str(), lacks(roles, *r)));
        }
    }
    if let Some(why) = zones_misfit(case, roles, &backends) {
        return Placement::No(why);
    }
    match reduced {
        Some(why) => Placement::Reduced(why),
        None => Placement::Full,
    }
}

/// Why the roles cannot give a `trafficDistribution` case its declared backends, if not.
fn zones_misfit(case: &Case, roles: &Roles, backends: &[Role]) -> Option<String> {
    let s = &case.setup;
    let td = s.traffic_distribution?;
    let client = case.client.role()?;
    if s.itp_local || s.daemonset || s.each_node {
        return None;
    }
    let Declared::AnsweredBy(declared) = case.declared else {
        return None;
    };
    // The backends serving the dialled port.
    let serving: Vec<Role> = backends
        .iter()
        .copied()
        .filter(|r| !s.port_missing_on.contains(r))
        .collect();
    let want: BTreeSet<Role> = declared.iter().copied().filter(|r| serving.contains(r)).collect();
    let got: BTreeSet<Role> = if td == "PreferSameNode" && serving.contains(&client) {
        [client].into()
    } else {
        let zone = |r: Role| roles.zones.get(&r);
        match zone(client) {
            Some(z) if serving.iter().all(|b| zone(*b).is_some()) => {
                let same: BTreeSet<Role> = serving.iter().copied().filter(|b| zone(*b) == Some(z)).collect();
                if same.is_empty() {
                    serving.iter().copied().collect()
                } else {
                    same
                }
            }
            _ => serving.iter().copied().collect(),
        }
    };
    if got == want {
        return None;
    }
    let names = |set: &BTreeSet<Role>| set.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
    let where_ = serving
        .iter()
        .map(|r| describe(roles, *r))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "{td} from {} would be answered by {} on these roles (backends on {where_}), not by {} as declared: the cluster has no placement of the roles whose zones fit the case ({})",
        describe(roles, client),
        names(&got),
        names(&want),
        roles.shape
    ))
}

/// What the cluster lacks for `role`.
fn lacks(roles: &Roles, role: Role) -> String {
    let what = match role {
        Role::N1 | Role::N3 => "two usable nodes",
        Role::N2 => "a third usable node",
        Role::N1z => "a second usable node in N1's zone",
    };
    format!("the run needs {what}; {}", roles.shape)
}
