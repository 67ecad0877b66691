//! From the case records to the [`Findings`] the decision reads: which failures the repair
//! catalogue explains, which cases the cluster could not host, which kube-proxy lags. Pure.
//!
//! A failure is explained by a repair only when the observation on that node matches what
//! the model predicts under the repair's hypothesis, computed when the case ran
//! ([`Hypothesis`]): for `--hostname-override`, the node's kube-proxy asked as if it knew no
//! Node by that name (nothing local, no zone); for an upgrade, the node's kube-proxy at the
//! version it reports. Every failure of the run must be explained, else it is a HOLD.

use std::collections::BTreeMap;

use locality_model::features::ProxyFeatures;
use locality_model::version::KubeVersion;

use crate::cases::Declared;
use locality_model::dataplane::catalogue::{self, Divergence, Resolution};

use crate::decision::{CORE, Findings, KnownBug, Lag, Repair, RepairKind};
use crate::judge::Status;
use crate::record::{CaseRecord, INTERRUPTED};
pub use crate::record::{NodeDataPlane, NodeJudgement};

/// The cases that use node hints (PreferSameNode).
const NODE_HINT_CASES: &[&str] = &["H1", "H4", "H3"];

/// Whether a verdict needs the case executed: a control, or a core case that probes every
/// node (without it, nodes go unprobed). Another core case the cluster's shape cannot host
/// leaves its guarantee unchecked, and the run partial.
fn mandatory(id: &str, control: bool) -> bool {
    control
        || (CORE.contains(&id)
            && crate::cases::case(id).is_some_and(|c| c.client == crate::cases::Client::EachNode))
}

/// Each node whose kube-proxy is outside upstream's version skew policy against the control
/// plane `kube`: never newer than kube-apiserver, and at most three minors older from 1.28
/// on (two before). Said, whatever the decision: upstream supports no such cluster.
pub(crate) fn skew_notes(kube: KubeVersion, planes: &BTreeMap<String, NodeDataPlane>) -> Vec<String> {
    let mut notes = Vec::new();
    for (node, plane) in planes {
        let Some(v) = plane.version.as_deref().and_then(KubeVersion::parse_loose) else {
            continue;
        };
        if v.major != kube.major {
            continue;
        }
        let allowed = if kube.at_least(1, 28) { 3 } else { 2 };
        if v.minor > kube.minor {
            notes.push(format!(
                "note: {node}'s kube-proxy {v} is newer than the control plane {kube}: outside the supported version skew (kube-proxy must not be newer than kube-apiserver); its results may not hold"
            ));
        } else if kube.minor - v.minor > allowed {
            notes.push(format!(
                "note: {node}'s kube-proxy {v} is {} minor versions older than the control plane {kube}: outside the supported version skew (at most {allowed}); upgrade it",
                kube.minor - v.minor
            ));
        }
    }
    notes
}

/// Works out the findings.
///
/// `selected`: the IDs the run selected (`--only`: partial); `kube`: the control plane's
/// version; `planes`: what each node's kube-proxy reported.
pub fn findings(
    records: &[CaseRecord],
    partial: Option<Vec<String>>,
    kube: KubeVersion,
    planes: &BTreeMap<String, NodeDataPlane>,
) -> Findings {
    let mut f = Findings {
        partial,
        ..Findings::default()
    };
    let mut failed: Vec<&CaseRecord> = Vec::new();
    let mut lagging: BTreeMap<String, Lag> = BTreeMap::new();
    for r in records {
        match r.status {
            Status::Pass => {}
            Status::NotExecuted if r.why == INTERRUPTED || r.why.starts_with(crate::record::CUT_SHORT) => {
                f.unfinished.push((r.id.clone(), r.why.clone()));
            }
            Status::NotExecuted if mandatory(&r.id, r.control) => f.gaps.push((r.id.clone(), r.why.clone())),
            Status::NotExecuted => f.uncovered.push((r.id.clone(), r.why.clone())),
            Status::Fail if r.control => f.controls_failed.push(r.id.clone()),
            Status::Fail => failed.push(r),
            Status::Incomplete => {
                // The lags over the limit: the case's own (a rollout, on its client's node)
                // and its nodes' (Pn, per node).
                let lags: Vec<(String, crate::record::LagOverLimit)> = r
                    .lag_over_limit
                    .iter()
                    .filter_map(|l| r.client_node.clone().map(|n| (n, *l)))
                    .chain(
                        r.nodes
                            .iter()
                            .filter_map(|n| n.lag_over_limit.map(|l| (n.node.clone(), l))),
                    )
                    .collect();
                // Only lag explains the INCOMPLETE when no node of the case failed to
                // conclude for another reason.
                let other = r
                    .nodes
                    .iter()
                    .any(|n| n.status == Status::Incomplete && n.lag_over_limit.is_none());
                if r.control {
                    // A control not concluded is never a verdict, whatever the reason (a
                    // lag over the limit outranks it in the table, naming the node).
                    f.controls_incomplete.push(r.id.clone());
                } else if lags.is_empty() || other {
                    f.incomplete.push(r.id.clone());
                }
                for (node, lag) in lags {
                    let l = lagging.entry(node.clone()).or_insert_with(|| Lag {
                        node: node.clone(),
                        measured_ms: 0,
                        limit_ms: lag.limit_ms,
                        cases: Vec::new(),
                    });
                    l.measured_ms = l.measured_ms.max(lag.measured_ms);
                    if !l.cases.contains(&r.id) {
                        l.cases.push(r.id.clone());
                    }
                }
            }
        }
    }
    f.lagging = lagging.into_values().collect();

    // Version gaps read from the nodes: a kube-proxy older than node hints where the control
    // plane serves PreferSameNode.
    let mut repairs: BTreeMap<(RepairKind, String), Repair> = BTreeMap::new();
    if ProxyFeatures::at(kube).node_hints {
        for (node, plane) in planes.iter().filter(|(_, p)| !p.replaces_kube_proxy) {
            let Some(v) = plane.version.as_deref().and_then(KubeVersion::parse_loose) else {
                continue;
            };
            if !ProxyFeatures::at(v).node_hints {
                repairs.insert(
                    (RepairKind::UpgradeKubeProxy, node.clone()),
                    Repair {
                        kind: RepairKind::UpgradeKubeProxy,
                        node: node.clone(),
                        action: format!(
                            "upgrade kube-proxy on {node} from {} to the control plane's version, {kube} ({})",
                            plane.version.as_deref().unwrap_or_default(),
                            if ProxyFeatures::at(v).hints_need_annotation {
                                "it reads topology hints only with the topology-mode annotation, so it serves trafficDistribution Services from every endpoint"
                            } else {
                                "it predates trafficDistribution: PreferSameNode's node hints and serves such Services by zone"
                            }
                        ),
                        evidence: vec![format!(
                            "{node}'s kube-proxy reports kubernetes_build_info git_version {}; control plane {kube}",
                            plane.version.as_deref().unwrap_or_default()
                        )],
                        cases: NODE_HINT_CASES.iter().map(|s| s.to_string()).collect(),
                    },
                );
            }
        }
    }

    f.notes = skew_notes(kube, planes);

    // Each failure: explained when one repair's hypothesis matches every failing node of it.
    for r in failed {
        let failing: Vec<&NodeJudgement> = r.nodes.iter().filter(|n| n.status == Status::Fail).collect();
        let explained_by = |kind: RepairKind| -> Option<Vec<String>> {
            if failing.is_empty() {
                return None;
            }
            failing
                .iter()
                .all(|n| n.hypotheses.iter().any(|h| h.kind == kind && h.consistent))
                .then(|| failing.iter().map(|n| n.node.clone()).collect())
        };
        let mut explained = false;
        // A catalogue entry of the node's detected data plane whose divergence, asked of the
        // model, predicts what the node's tries showed.
        let known = |node: &str| -> Option<&'static Divergence> {
            let n = failing.iter().find(|n| n.node == node)?;
            n.hypotheses
                .iter()
                .filter(|h| h.kind == RepairKind::DataPlane && h.consistent)
                .filter_map(|h| catalogue::entry(h.entry.as_deref()?))
                .find(|e| {
                    planes
                        .get(node)
                        .is_some_and(|p| p.divergences.iter().any(|d| d == e.id))
                })
        };
        if !failing.is_empty() && failing.iter().all(|n| known(&n.node).is_some()) {
            for n in &failing {
                let Some(e) = known(&n.node) else { continue };
                let plane = planes
                    .get(&n.node)
                    .and_then(|p| p.known.clone())
                    .unwrap_or_default();
                let evidence = format!(
                    "{}: {} on {} ({}), catalogue entry {}",
                    r.id,
                    short(&r.why),
                    n.node,
                    plane,
                    e.id
                );
                if e.resolution == Resolution::Open {
                    let b = f
                        .known_bugs
                        .iter_mut()
                        .find(|b| b.entry == e.id && b.node == n.node);
                    match b {
                        Some(b) => {
                            b.evidence.push(evidence);
                            b.cases.push(r.id.clone());
                        }
                        None => f.known_bugs.push(KnownBug {
                            entry: e.id.to_string(),
                            node: n.node.clone(),
                            advice: format!("{} on {} ({plane}): {}", e.id, n.node, e.advice()),
                            evidence: vec![evidence],
                            cases: vec![r.id.clone()],
                        }),
                    }
                    continue;
                }
                let rep = repairs
                    .entry((RepairKind::DataPlane, n.node.clone()))
                    .or_insert_with(|| Repair {
                        kind: RepairKind::DataPlane,
                        node: n.node.clone(),
                        action: format!("{} on {} ({plane}): {}", e.id, n.node, e.advice()),
                        evidence: Vec::new(),
                        cases: Vec::new(),
                    });
                rep.evidence.push(evidence);
                if !rep.cases.contains(&r.id) {
                    rep.cases.push(r.id.clone());
                }
            }
            continue;
        }
        for kind in [RepairKind::UpgradeKubeProxy, RepairKind::HostnameOverride] {
            let Some(nodes) = explained_by(kind) else { continue };
            for node in nodes {
                let evidence = match kind {
                    RepairKind::HostnameOverride => format!(
                        "{}: {node}'s kube-proxy acted as if no endpoint were on its node ({})",
                        r.id,
                        short(&r.why)
                    ),
                    _ => format!(
                        "{}: {node} behaved as its kube-proxy version predicts ({})",
                        r.id,
                        short(&r.why)
                    ),
                };
                let e = repairs.entry((kind, node.clone())).or_insert_with(|| Repair {
                    kind,
                    node: node.clone(),
                    action: match kind {
                        RepairKind::HostnameOverride => format!(
                            "kube-proxy on {node} does not know its node by the Node's name: set its --hostname-override (or the node name it is given) to {node}"
                        ),
                        RepairKind::UpgradeKubeProxy => format!("upgrade kube-proxy on {node} to the control plane's version, {kube}"),
                        RepairKind::FeatureGate => format!("enable the feature gate on {node}'s kube-proxy"),
                        RepairKind::DataPlane => format!("repair the data plane on {node}"),
                    },
                    evidence: Vec::new(),
                    cases: Vec::new(),
                });
                e.evidence.push(evidence);
                if !e.cases.contains(&r.id) {
                    e.cases.push(r.id.clone());
                }
            }
            explained = true;
            break;
        }
        if !explained {
            f.unexplained.push(r.id.clone());
            add_nodes(&mut f.unexplained_nodes, r);
        }
    }
    // A hostname mismatch is proven by the model's prediction or by kube-proxy's own count
    // (`M`: no local endpoint counted beside a Ready one): a repair whose only evidence is a
    // rollout (judged by its signature) explains nothing.
    let by_model = |id: &str| {
        records
            .iter()
            .find(|r| r.id == id)
            .is_some_and(|r| r.declared != Declared::Rollout)
    };
    repairs.retain(|(kind, _), r| {
        let keep = *kind != RepairKind::HostnameOverride || r.cases.iter().any(|c| by_model(c));
        if !keep {
            for c in &r.cases {
                if !f.unexplained.contains(c) {
                    f.unexplained.push(c.clone());
                }
                if let Some(rec) = records.iter().find(|x| x.id == *c) {
                    add_nodes(&mut f.unexplained_nodes, rec);
                }
            }
        }
        keep
    });
    // The catalogue entries that apply to a node's detected data plane but no failure of
    // this run showed: said, not decided on (the run probed what it probed; the catalogue's
    // version range may not know the release that fixed it).
    for (node, plane) in planes {
        for id in &plane.divergences {
            let shown = f.known_bugs.iter().any(|b| b.entry == *id && b.node == *node)
                || repairs.values().any(|r| {
                    r.kind == RepairKind::DataPlane && r.node == *node && r.action.starts_with(id.as_str())
                });
            if shown {
                continue;
            }
            let Some(e) = catalogue::entry(id) else { continue };
            f.notes.push(format!(
                "note: {node} runs {}, in the affected range of catalogue entry {id} ({}); no case of this run showed it from {node}. If it does: {}",
                plane.known.as_deref().unwrap_or("a known data plane"),
                e.divergence,
                e.advice()
            ));
        }
    }
    // A repair hypothesis must be one story: a node with both an unexplained failure and a
    // repair is still a HOLD (the unexplained list decides first).
    f.repairs = repairs.into_values().collect();
    f
}

fn short(s: &str) -> String {
    if s.chars().count() > 120 {
        s.chars().take(119).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

/// Adds the nodes whose data plane a failure showed: its failing nodes, else its client's.
fn add_nodes(nodes: &mut Vec<String>, r: &CaseRecord) {
    let failing = r
        .nodes
        .iter()
        .filter(|n| n.status == Status::Fail)
        .map(|n| &n.node);
    let mut named: Vec<&String> = failing.collect();
    if named.is_empty() {
        named.extend(r.client_node.as_ref());
    }
    for n in named {
        if !nodes.contains(n) {
            nodes.push(n.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::case;
    use crate::decision::{Decision, decide};
    use crate::expect::Expected;
    use crate::record::{Hypothesis, record};

    fn rec(id: &str, status: Status, node: &str, hyp: &[(RepairKind, bool)]) -> CaseRecord {
        let mut r = record(case(id).unwrap(), Some(node));
        r.status = status;
        r.nodes = vec![NodeJudgement {
            node: node.into(),
            status,
            lag_over_limit: None,
            hypotheses: hyp
                .iter()
                .map(|(kind, consistent)| Hypothesis {
                    kind: *kind,
                    entry: None,
                    expected: Expected::Drop,
                    consistent: *consistent,
                })
                .collect(),
        }];
        r
    }

    fn decide_on(records: &[CaseRecord], planes: &BTreeMap<String, NodeDataPlane>) -> Decision {
        decide(&findings(records, None, KubeVersion::new(1, 35), planes)).decision
    }

    #[test]
    fn failures_all_explained_by_a_hostname_mismatch_are_a_repair_naming_the_node() {
        let rs = vec![
            rec("A", Status::Pass, "node-c", &[]),
            rec(
                "B1",
                Status::Fail,
                "node-a",
                &[(RepairKind::HostnameOverride, true)],
            ),
            rec(
                "H1",
                Status::Fail,
                "node-a",
                &[(RepairKind::HostnameOverride, true)],
            ),
        ];
        let f = findings(&rs, None, KubeVersion::new(1, 35), &BTreeMap::new());
        assert_eq!(f.repairs.len(), 1);
        assert_eq!(f.repairs[0].node, "node-a");
        assert_eq!(f.repairs[0].cases, vec!["B1", "H1"]);
        assert_eq!(decide(&f).decision, Decision::Repair);
    }

    #[test]
    fn a_rollout_alone_does_not_prove_a_hostname_mismatch() {
        let rs = vec![rec(
            "H3",
            Status::Fail,
            "node-a",
            &[(RepairKind::HostnameOverride, true)],
        )];
        let f = findings(&rs, None, KubeVersion::new(1, 35), &BTreeMap::new());
        assert!(f.repairs.is_empty());
        assert_eq!(f.unexplained, vec!["H3".to_string()]);
        let rs = vec![
            rec(
                "H3",
                Status::Fail,
                "node-a",
                &[(RepairKind::HostnameOverride, true)],
            ),
            rec(
                "B1",
                Status::Fail,
                "node-a",
                &[(RepairKind::HostnameOverride, true)],
            ),
        ];
        assert_eq!(decide_on(&rs, &BTreeMap::new()), Decision::Repair);
    }

    #[test]
    fn one_unexplained_failure_is_a_hold() {
        let rs = vec![
            rec(
                "B1",
                Status::Fail,
                "node-a",
                &[(RepairKind::HostnameOverride, true)],
            ),
            rec(
                "C",
                Status::Fail,
                "node-c",
                &[(RepairKind::HostnameOverride, false)],
            ),
        ];
        assert_eq!(decide_on(&rs, &BTreeMap::new()), Decision::Hold);
        let rs = vec![rec("C", Status::Fail, "node-c", &[])];
        assert_eq!(decide_on(&rs, &BTreeMap::new()), Decision::Hold);
        // The HOLD names the node whose data plane showed it.
        let f = findings(&rs, None, KubeVersion::new(1, 35), &BTreeMap::new());
        assert_eq!(f.unexplained_nodes, ["node-c"]);
        assert!(
            decide(&f).advice[0].contains("in C (the data plane of node-c)"),
            "{:?}",
            decide(&f).advice
        );
    }

    #[test]
    fn an_old_kube_proxy_is_a_repair_even_where_no_traffic_shows_it() {
        let mut planes = BTreeMap::new();
        planes.insert(
            "node-b".to_string(),
            NodeDataPlane {
                mode: Some("iptables".into()),
                version: Some("v1.32.0".into()),
                version_from: Some("metrics".into()),
                ..NodeDataPlane::default()
            },
        );
        let rs = vec![rec("A", Status::Pass, "node-c", &[])];
        let f = findings(&rs, None, KubeVersion::new(1, 35), &planes);
        assert_eq!(f.repairs[0].kind, RepairKind::UpgradeKubeProxy);
        assert!(f.repairs[0].action.contains("node-b") && f.repairs[0].action.contains("v1.32.0"));
        assert_eq!(decide(&f).decision, Decision::Repair);
        // A 1.33 control plane does not serve PreferSameNode: nothing to upgrade for it.
        let f = findings(&rs, None, KubeVersion::new(1, 33), &planes);
        assert!(f.repairs.is_empty());
    }

    /// `r` with its node's data-plane hypothesis for `entry`.
    fn assuming(mut r: CaseRecord, entry: &str, consistent: bool) -> CaseRecord {
        r.nodes[0].hypotheses.push(Hypothesis {
            kind: RepairKind::DataPlane,
            entry: Some(entry.to_string()),
            expected: Expected::Reject,
            consistent,
        });
        r
    }

    fn on_known(entry: &str) -> BTreeMap<String, NodeDataPlane> {
        BTreeMap::from([(
            "node-c".to_string(),
            NodeDataPlane {
                known: Some("a data plane".into()),
                divergences: vec![entry.to_string()],
                ..NodeDataPlane::default()
            },
        )])
    }

    #[test]
    fn a_failure_a_fixed_catalogue_entry_of_the_node_explains_is_a_repair_naming_the_fix() {
        // Any case (not a list of them): the node's tries matched the entry's prediction.
        let rs = vec![assuming(
            rec("D2", Status::Fail, "node-c", &[]),
            "calico-ebpf-itp-ignored",
            true,
        )];
        let f = findings(
            &rs,
            None,
            KubeVersion::new(1, 35),
            &on_known("calico-ebpf-itp-ignored"),
        );
        assert!(f.unexplained.is_empty(), "{f:?}");
        assert_eq!(f.repairs[0].kind, RepairKind::DataPlane);
        assert!(
            f.repairs[0].action.contains("3.27.0")
                && f.repairs[0].action.contains("projectcalico/calico#8255")
        );
        assert_eq!(decide(&f).decision, Decision::Repair);
        // An entry that is not the node's data plane's explains nothing.
        let f = findings(
            &rs,
            None,
            KubeVersion::new(1, 35),
            &on_known("cilium-zone-hints-no-fallback"),
        );
        assert_eq!(f.unexplained, ["D2"]);
        assert_eq!(decide(&f).decision, Decision::Hold);
        // Nor does the node's entry when the tries do not match what it predicts.
        let rs = vec![assuming(
            rec("D2", Status::Fail, "node-c", &[]),
            "calico-ebpf-itp-ignored",
            false,
        )];
        let f = findings(
            &rs,
            None,
            KubeVersion::new(1, 35),
            &on_known("calico-ebpf-itp-ignored"),
        );
        assert_eq!(f.unexplained, ["D2"]);
    }

    #[test]
    fn a_configuration_pitfall_is_a_repair_naming_the_setting() {
        let rs = vec![assuming(
            rec("Z1", Status::Fail, "node-c", &[]),
            "cilium-topology-needs-service-topology",
            true,
        )];
        let f = findings(
            &rs,
            None,
            KubeVersion::new(1, 35),
            &on_known("cilium-topology-needs-service-topology"),
        );
        assert!(
            f.repairs[0].action.contains("enable-service-topology=true"),
            "{f:?}"
        );
        assert_eq!(decide(&f).decision, Decision::Repair);
    }

    #[test]
    fn a_case_probing_every_node_not_executed_is_a_gap_another_leaves_the_run_partial() {
        let mut p = rec("P", Status::NotExecuted, "node-c", &[]);
        p.why = "the DaemonSet could not be created".into();
        let mut c = rec("B1", Status::NotExecuted, "node-c", &[]);
        c.why = "no node for role N2".into();
        let mut d = rec("D1", Status::NotExecuted, "node-c", &[]);
        d.why = INTERRUPTED.into();
        let mut m = rec("M", Status::NotExecuted, "node-c", &[]);
        m.why = "no kube-proxy metrics".into();
        let f = findings(
            &[p.clone(), c.clone(), d, m.clone()],
            None,
            KubeVersion::new(1, 35),
            &BTreeMap::new(),
        );
        assert_eq!(f.gaps, [("P".to_string(), p.why.clone())]);
        assert_eq!(f.unfinished.len(), 1);
        assert_eq!(f.uncovered.len(), 2, "{f:?}");
        assert_eq!(decide(&f).decision, Decision::Hold);
        // Without P's gap: an ACCEPT that names what it did not check.
        let f = findings(&[c, m], None, KubeVersion::new(1, 35), &BTreeMap::new());
        let d = decide(&f);
        assert_eq!(d.decision, Decision::Accept);
        assert_eq!(d.uncovered, ["B1", "M"]);
        assert!(
            d.advice
                .iter()
                .any(|a| a.starts_with("not checked on this cluster: B1")),
            "{:?}",
            d.advice
        );
    }

    #[test]
    fn lag_over_the_limit_is_grouped_by_node() {
        let mut r = rec("H3", Status::Incomplete, "node-a", &[]);
        // A rollout has one client node, the case's own.
        r.nodes.clear();
        r.lag_over_limit = Some(crate::record::LagOverLimit {
            measured_ms: 40_900,
            limit_ms: 5_000,
        });
        let f = findings(&[r], None, KubeVersion::new(1, 35), &BTreeMap::new());
        assert_eq!(f.lagging[0].node, "node-a");
        assert_eq!(f.lagging[0].measured_ms, 40_900);
        assert!(f.incomplete.is_empty());
        assert_eq!(decide(&f).decision, Decision::Hold);
        // Pn: per node; a node that did not conclude for another reason keeps it INCOMPLETE.
        let mut pn = rec("Pn", Status::Incomplete, "node-b", &[]);
        pn.nodes[0].lag_over_limit = Some(crate::record::LagOverLimit {
            measured_ms: 42_000,
            limit_ms: 5_000,
        });
        let f = findings(&[pn.clone()], None, KubeVersion::new(1, 35), &BTreeMap::new());
        assert_eq!((f.lagging[0].node.as_str(), f.incomplete.len()), ("node-b", 0));
        pn.nodes.push(NodeJudgement {
            node: "node-c".into(),
            status: Status::Incomplete,
            hypotheses: Vec::new(),
            lag_over_limit: None,
        });
        let f = findings(&[pn], None, KubeVersion::new(1, 35), &BTreeMap::new());
        assert_eq!(f.incomplete, vec!["Pn".to_string()]);
    }

    #[test]
    fn a_kube_proxy_outside_the_version_skew_is_named() {
        let plane = |v: &str| NodeDataPlane {
            version: Some(v.into()),
            ..NodeDataPlane::default()
        };
        let planes: BTreeMap<String, NodeDataPlane> = [
            ("newer".to_string(), plane("v1.37.0")),
            ("old".to_string(), plane("v1.31.2")),
            ("fine".to_string(), plane("v1.32.0")),
            ("same".to_string(), plane("v1.35.1")),
        ]
        .into();
        let notes = skew_notes(KubeVersion::new(1, 35), &planes);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("newer's kube-proxy 1.37 is newer")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("old's kube-proxy 1.31 is 4 minor")),
            "{notes:?}"
        );
        // Before 1.28 the policy allowed two minors.
        let planes: BTreeMap<String, NodeDataPlane> = [("n".to_string(), plane("v1.24.0"))].into();
        assert_eq!(skew_notes(KubeVersion::new(1, 27), &planes).len(), 1);
    }
}
