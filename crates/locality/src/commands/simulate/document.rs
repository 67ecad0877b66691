//! The `SimulationReport` document from the simulation's results (the report crate formats
//! it; this builds it).

use std::collections::BTreeMap;

use locality_report::simulate::{
    Alternative, ChangeDoc, NodeDoc, Outcome, PodEventDoc, ServicePortDoc, Totals, WindowDoc, WorstNode,
    seconds, share,
};
use locality_sim::Engine;
use locality_sim::whatif::{Cause, Change, WhatIf, strategy};

/// A change as data; a rollout's `maxSurge`/`maxUnavailable` are the effective ones,
/// validated on `engine`'s workload.
pub fn change_doc(engine: &Engine, c: &Change) -> Result<ChangeDoc, String> {
    let doc = |type_, target: String| ChangeDoc {
        type_,
        target,
        max_surge: None,
        max_unavailable: None,
        field: None,
        value: None,
        grace_period_seconds: None,
        description: c.to_string(),
    };
    Ok(match c {
        Change::Rollout {
            workload,
            max_surge,
            max_unavailable,
        } => {
            let w = engine
                .get(workload)
                .and_then(locality_sim::Object::as_workload)
                .ok_or_else(|| {
                    format!(
                        "--rollout: no {} {}/{} in the input",
                        workload.kind.as_str(),
                        workload.namespace,
                        workload.name
                    )
                })?;
            if workload.kind == locality_sim::Kind::StatefulSet {
                return stateful_doc(engine, &w.workload, max_surge, max_unavailable);
            }
            let (s, u) = strategy::effective(&w.workload, max_surge.as_deref(), max_unavailable.as_deref())
                .map_err(|e| {
                format!(
                    "{} {}/{}: {e}",
                    workload.kind.as_str(),
                    workload.namespace,
                    workload.name
                )
            })?;
            let target = format!(
                "{} {}/{}",
                workload.kind.as_str(),
                workload.namespace,
                workload.name
            );
            let ports = strategy::host_ports(&w.workload);
            let blocked = if strategy::is_zero(&s) || ports.is_empty() {
                String::new()
            } else {
                format!("; hostPort {ports:?}: a surge pod cannot start next to the old one")
            };
            ChangeDoc {
                description: format!("rollout of {target} (maxSurge {s}, maxUnavailable {u}{blocked})"),
                max_surge: Some(s),
                max_unavailable: Some(u),
                ..doc("rollout", target)
            }
        }
        Change::SetService {
            service,
            field,
            value,
        } => {
            if engine.get(service).is_none() {
                return Err(format!(
                    "--set: no Service {}/{} in the input",
                    service.namespace, service.name
                ));
            }
            ChangeDoc {
                field: Some(field.clone()),
                value: Some(value.clone()),
                ..doc("set", format!("Service {}/{}", service.namespace, service.name))
            }
        }
        Change::Drain { node } => doc("drain", format!("Node {node}")),
        Change::NodeDown { node } => doc("nodeDown", format!("Node {node}")),
        Change::Apply { files, .. } => doc("apply", files.join(", ")),
        Change::DeletePod {
            pod,
            grace_period_seconds,
            replacement,
        } => {
            let flag = if replacement.is_some() {
                "--replace"
            } else {
                "--delete"
            };
            let p = locality_sim::whatif::delete::check(engine, pod, replacement.as_ref().map(|(_, o)| &**o))
                .map_err(|e| format!("{flag}: {e}"))?;
            let grace = grace_period_seconds.unwrap_or(p.behaviour.termination_grace_period_seconds);
            let description = match grace_period_seconds {
                Some(_) => c.to_string(),
                None => format!("{c}, grace period {grace} s (the pod's)"),
            };
            ChangeDoc {
                grace_period_seconds: Some(grace),
                description,
                ..doc(
                    if replacement.is_some() {
                        "replace"
                    } else {
                        "delete"
                    },
                    format!("Pod {}/{}", pod.namespace, pod.name),
                )
            }
        }
    })
}

/// A StatefulSet rollout as data: no `maxSurge` (it has none), the `maxUnavailable` the
/// controller honours (1 with the `MaxUnavailableStatefulSet` gate off), its partition.
fn stateful_doc(
    engine: &Engine,
    w: &locality_model::objects::Workload,
    max_surge: &Option<String>,
    max_unavailable: &Option<String>,
) -> Result<ChangeDoc, String> {
    let target = format!("StatefulSet {}/{}", w.meta.namespace, w.meta.name);
    let gate = engine.max_unavailable_stateful_set();
    let u = strategy::stateful_max_unavailable(w, max_surge.as_deref(), max_unavailable.as_deref(), gate)
        .map_err(|e| format!("{target}: {e}"))?;
    let how = if w.update_strategy.as_deref() == Some("OnDelete") {
        "updateStrategy OnDelete: no pod is replaced until deleted".to_string()
    } else {
        let gate_note = if gate {
            ""
        } else {
            " (the MaxUnavailableStatefulSet gate is off)"
        };
        format!(
            "maxUnavailable {}{gate_note}, partition {}, podManagementPolicy {}; no surge: each pod is deleted before its replacement is created",
            u.as_deref().unwrap_or("1"),
            w.partition.unwrap_or(0),
            w.pod_management_policy.as_str()
        )
    };
    Ok(ChangeDoc {
        type_: "rollout",
        target: target.clone(),
        max_surge: None,
        max_unavailable: Some(u.unwrap_or_else(|| "1".into())),
        field: None,
        value: None,
        grace_period_seconds: None,
        description: format!("rollout of {target} ({how})"),
    })
}

/// The time covered by `windows` (start, end in ms), overlaps counted once.
fn union_ms(mut windows: Vec<(u64, u64)>) -> u64 {
    windows.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for (start, end) in windows {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(0, |(s, e)| e - s)
}

/// One alternative's document.
pub fn alternative(name: &str, prepared: Vec<ChangeDoc>, changes: Vec<ChangeDoc>, r: &WhatIf) -> Alternative {
    let mut ports = Vec::new();
    // A node's drop windows over every port of every Service, merged: the two ports of one
    // agent are one blind node, not two.
    let mut per_node: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    // Client pods once per (Service, node), whatever the number of its ports.
    let mut affected_per: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut longest = 0u64;
    let (mut lost_w, mut left_w, mut weight) = (0.0, 0.0, 0.0);
    for p in &r.ports {
        let clients: usize = p.nodes.values().map(|n| n.clients).sum();
        weight += clients as f64;
        lost_w += p.lost_share * clients as f64;
        left_w += p.left_node_share * clients as f64;
        let mut nodes = Vec::new();
        for (name, n) in p.windowed() {
            let a = affected_per.entry((p.service.clone(), name.clone())).or_default();
            *a = (*a).max(n.clients as u64);
            per_node
                .entry(name.clone())
                .or_default()
                .extend(n.windows.iter().map(|w| (w.start_ms, w.end_ms)));
            longest = longest.max(n.windows.iter().map(|w| w.end_ms - w.start_ms).max().unwrap_or(0));
            nodes.push(NodeDoc {
                name: name.clone(),
                clients: n.clients as u64,
                blind_seconds: seconds(n.blind_ms),
                windows: n
                    .windows
                    .iter()
                    .map(|w| WindowDoc {
                        start_seconds: seconds(w.start_ms),
                        end_seconds: seconds(w.end_ms),
                        cause: match w.cause {
                            Cause::NoEndpoint => "noEndpoint",
                            Cause::EndpointGone => "endpointGone",
                        },
                    })
                    .collect(),
            });
        }
        ports.push(ServicePortDoc {
            service: p.service.clone(),
            port: p.port.clone(),
            family: p.family.clone(),
            changed: p.changed,
            blind_before: p.blind_before.clone(),
            blind_after: p.blind_after.clone(),
            blind_throughout: p.blind_throughout.clone(),
            lost_client_time_share: share(p.lost_share),
            traffic_left_node_share: share(p.left_node_share),
            nodes,
        });
    }
    let per_node: BTreeMap<String, u64> = per_node
        .into_iter()
        .map(|(n, windows)| (n, union_ms(windows)))
        .collect();
    let blind_total: u64 = per_node.values().sum();
    let affected: u64 = affected_per.values().sum();
    let worst = per_node
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(n, ms)| WorstNode {
            name: n.clone(),
            blind_seconds: seconds(*ms),
        });
    let outcome = if !per_node.is_empty() {
        Outcome::DropWindows
    } else if r.changed() {
        Outcome::ChangedWithoutDrops
    } else if ports.iter().any(|p| !p.blind_after.is_empty()) {
        Outcome::StillBlind
    } else {
        Outcome::NoChange
    };
    let ratio = |x: f64| if weight > 0.0 { share(x / weight) } else { 0.0 };
    let mut a = Alternative {
        name: name.to_string(),
        prepared,
        changes,
        outcome,
        summary: String::new(),
        settled: r.settled,
        unsettled_reasons: r.unsettled.clone(),
        duration_seconds: seconds(r.duration_ms),
        steps: r.steps as u64,
        totals: Totals {
            blind_node_seconds: seconds(blind_total),
            affected_client_pods: affected,
            nodes_with_drop_windows: per_node.len() as u64,
            longest_window_seconds: seconds(longest),
            worst_node: worst,
            lost_client_time_share: ratio(lost_w),
            traffic_left_node_share: ratio(left_w),
        },
        service_ports: ports,
        pod_events: r
            .pod_events
            .iter()
            .map(|(t, pod, e)| PodEventDoc {
                pod: pod.clone(),
                event: e.as_str(),
                at_seconds: seconds(*t),
            })
            .collect(),
    };
    a.summary = locality_report::simulate::text::outcome_text(&a);
    a
}

#[cfg(test)]
mod tests {
    use super::union_ms;

    #[test]
    fn overlapping_windows_count_once() {
        // An agent's two ports, blind together; then a later window of its own.
        assert_eq!(union_ms(vec![(0, 9_200), (0, 9_200), (20_000, 21_000)]), 10_200);
        assert_eq!(union_ms(vec![(5, 10), (0, 6), (10, 12)]), 12);
        assert_eq!(union_ms(Vec::new()), 0);
    }
}
