//! The routes of one categorized node: every (source, destination) in the modes evaluated,
//! the outcomes Go's map order allows for duplicated addresses, and the facts each route
//! depends on that the input does not give.

use std::net::IpAddr;

use super::{Matrix, MatrixRoute, NodeRoutes, PortEntry, assumptions};
use crate::features::ProxyFeatures;
use crate::proxy::Destination;
use crate::proxy::duplicates;
use crate::proxy::{
    CategorizeIndex, CategorizedEndpoints, Confidence, ProxyEndpoint, ProxyMode, ProxyNode, Route,
    RouteQuery, ServicePortInfo, Source, TraceStep,
};

/// What to work out of a node's routes: every (source, destination) with its trace (what
/// `matrix` and `explain` print), or one of them without the trace text (what a simulation
/// reads at every step): the same verdicts, endpoints and confidence either way, by the same
/// code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Detail {
    /// Write each route's trace.
    pub explain: bool,
    /// Only this (source, destination).
    pub only: Option<(Source, Destination)>,
}

impl Detail {
    /// Every route, explained.
    pub const FULL: Detail = Detail {
        explain: true,
        only: None,
    };
}

/// What the routes of a node depend on besides its categorized endpoints.
#[derive(Debug, Clone, Copy)]
pub(super) struct NodeFacts<'a> {
    /// kube-proxy's behaviour on the node.
    pub proxy: &'a ProxyFeatures,
    /// Its address of the port's family, which decides `loadBalancerSourceRanges` for its
    /// own traffic.
    pub ip: Option<IpAddr>,
    /// A Windows node (kube-proxy winkernel).
    pub windows: bool,
}

/// kube-proxy's verdict ([`crate::proxy::route`]), explained or not.
fn route(
    info: &ServicePortInfo,
    cat: &CategorizedEndpoints<'_>,
    total: usize,
    q: RouteQuery,
    explain: bool,
) -> Route {
    crate::proxy::verdict::route_with(info, cat, total, q, true, explain)
}

impl Matrix<'_> {
    /// The routes of one node of a port with duplicated addresses: the copies its kube-proxy
    /// keeps, and, where Go's map order decides, every possible outcome (the route keeps the
    /// canonical copy's, lists the others and drops to `inferred` when they differ).
    pub(super) fn routes_with_duplicates(
        &self,
        entry: &PortEntry<'_>,
        proxy: &ProxyFeatures,
        node: ProxyNode<'_>,
        node_ip: Option<IpAddr>,
        windows: bool,
        detail: Detail,
    ) -> NodeRoutes {
        let info = self.info_for(entry, proxy);
        // One map order decides every duplicated address at once: only the combinations some
        // order of the slices gives, the by-name order's first (duplicates::combinations).
        let combos = duplicates::combinations(&entry.duplicates, node.name, proxy);
        let with = |combo: &[usize]| {
            let mut endpoints = entry.endpoints.clone();
            for (d, &i) in entry.duplicates.iter().zip(combo) {
                endpoints[d.index] = d.copies[i].clone();
            }
            endpoints
        };
        let endpoints = with(&combos[0]);
        let evaluate = |endpoints: &[ProxyEndpoint]| {
            let idx = CategorizeIndex::new(endpoints, &info, proxy);
            let cat = idx.categorize(node).into_owned();
            let facts = NodeFacts {
                proxy,
                ip: node_ip,
                windows,
            };
            let routes = self.routes_of(entry, &info, &cat, facts, detail);
            (routes, cat)
        };
        let (mut routes, categorized) = evaluate(&endpoints);
        for d in entry.duplicates.iter().filter(|_| detail.explain) {
            let note = TraceStep::new("duplicate", duplicates::describe(d, node.name, proxy));
            for r in &mut routes {
                r.route.trace.insert(0, note.clone());
            }
        }
        // Where map order decides, every other combination some order gives.
        for combo in combos.iter().skip(1) {
            let (alt_routes, _) = evaluate(&with(combo));
            let kept: Vec<String> = entry
                .duplicates
                .iter()
                .zip(combo.iter().zip(&combos[0]))
                .filter(|(_, (i, base))| i != base)
                .map(|(d, (&i, _))| {
                    let alt = &d.copies[i];
                    format!("{alt} on {}", alt.node_name.as_deref().unwrap_or("no node"))
                })
                .collect();
            for (r, a) in routes.iter_mut().zip(alt_routes) {
                // The hint mode applied is part of the outcome too (the same endpoints can be
                // reached with or without it).
                let same = a.route.verdict == r.route.verdict
                    && a.route.reason == r.route.reason
                    && a.route.endpoints == r.route.endpoints
                    && a.route.topology == r.route.topology;
                if !same {
                    r.route.confidence = Confidence::Inferred;
                    if !detail.explain {
                        continue;
                    }
                    r.route.trace.push(TraceStep::new(
                        "possible-outcome",
                        format!(
                            "if kube-proxy keeps the copy of {}: {} ({})",
                            kept.join(" and "),
                            a.route.verdict.as_str(),
                            a.route.reason.as_str()
                        ),
                    ));
                }
            }
        }
        NodeRoutes { routes, categorized }
    }

    /// The routes of one categorized node, with the facts each depends on that the input does
    /// not give ([`Matrix::assuming`]).
    pub(super) fn routes_of(
        &self,
        entry: &PortEntry<'_>,
        info: &ServicePortInfo,
        cat: &CategorizedEndpoints<'_>,
        node: NodeFacts<'_>,
        detail: Detail,
    ) -> Vec<MatrixRoute> {
        let NodeFacts {
            proxy,
            ip: node_ip,
            windows,
        } = node;
        let modes = self.modes();
        // With an assumed mode, the modes can only disagree where a local set is in use
        // (ITP or ETP Local): only there are the other modes worth asking.
        let check_modes = self.assumed.proxy_mode && modes.len() == 1 && !windows && cat.local.is_some();
        let mut routes = Vec::with_capacity(Source::ALL.len() * entry.destinations.len());
        for source in Source::ALL {
            for &destination in &entry.destinations {
                if detail.only.is_some_and(|only| only != (source, destination)) {
                    continue;
                }
                let explain = detail.explain;
                let query = |mode| RouteQuery {
                    source,
                    destination,
                    mode,
                    node_ip,
                };
                let mut r = if windows {
                    let route = crate::proxy::winkernel::route_with(
                        info,
                        cat,
                        entry.endpoints.len(),
                        query(ProxyMode::Iptables),
                        explain,
                    );
                    MatrixRoute { route, by_mode: None }
                } else {
                    let per_mode: Vec<(ProxyMode, Route)> = modes
                        .iter()
                        .map(|&mode| {
                            (
                                mode,
                                route(info, cat, entry.endpoints.len(), query(mode), explain),
                            )
                        })
                        .collect();
                    combine(per_mode)
                };
                if check_modes {
                    let others: Vec<String> = ProxyMode::ALL
                        .into_iter()
                        .filter(|m| !modes.contains(m))
                        .filter_map(|m| {
                            let o = route(info, cat, entry.endpoints.len(), query(m), false);
                            let same = o.verdict == r.route.verdict
                                && o.endpoints == r.route.endpoints
                                && o.masquerade == r.route.masquerade;
                            (!same).then(|| {
                                format!("{}: {} ({})", m.as_str(), o.verdict.as_str(), o.reason.as_str())
                            })
                        })
                        .collect();
                    if !others.is_empty() {
                        r.route.lacking(crate::proxy::MissingFact::ProxyMode);
                    }
                    if !others.is_empty() && explain {
                        r.route.trace.push(TraceStep::new(
                            "possible-outcome",
                            format!(
                                "the proxy mode is assumed to be {}; in another mode: {}",
                                modes[0].as_str(),
                                others.join("; ")
                            ),
                        ));
                    }
                }
                let missing = assumptions::missing_facts(
                    &r.route,
                    &entry.sensitivity,
                    proxy,
                    windows,
                    info.internal_policy_local,
                    self.assumed,
                );
                for fact in missing.iter() {
                    r.route.lacking(fact);
                }
                if !explain {
                    routes.push(r);
                    continue;
                }
                if !missing.is_empty() {
                    r.route
                        .trace
                        .push(TraceStep::new("confidence", assumptions::describe(missing)));
                }
                let gates = assumptions::gates_in_play(
                    &r.route,
                    &entry.sensitivity,
                    proxy,
                    &self.control_plane,
                    entry.service.itp() == crate::objects::TrafficPolicy::Local,
                );
                if !gates.is_empty() {
                    r.route.trace.push(TraceStep::new(
                        "feature-gates",
                        assumptions::describe_gates(&gates),
                    ));
                }
                routes.push(r);
            }
        }
        routes
    }
}

/// Combines the routes of several modes: one route when they agree (keeping the lowest
/// confidence), else the first with every mode's route attached.
fn combine(mut per_mode: Vec<(ProxyMode, Route)>) -> MatrixRoute {
    if per_mode.len() == 1 {
        let (_, route) = per_mode.remove(0);
        return MatrixRoute { route, by_mode: None };
    }
    let first = &per_mode[0].1;
    let agree = per_mode.iter().all(|(_, r)| {
        r.verdict == first.verdict && r.endpoints == first.endpoints && r.masquerade == first.masquerade
    });
    if agree {
        let confidence = per_mode
            .iter()
            .map(|(_, r)| r.confidence)
            .min()
            .unwrap_or(first.confidence);
        let mut route = per_mode.swap_remove(0).1;
        route.confidence = confidence;
        MatrixRoute { route, by_mode: None }
    } else {
        let mut route = per_mode[0].1.clone();
        route.lacking(crate::proxy::MissingFact::ProxyMode);
        MatrixRoute {
            route,
            by_mode: Some(per_mode),
        }
    }
}
