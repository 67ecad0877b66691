//! The changes of `simulate` from its flags: what is measured, what is applied first, and the
//! `--compare` alternatives derived from them.

use locality_sim::ObjectKey;
use locality_sim::whatif::Change;

use crate::cli::{Override, ServiceSet, SimulateArgs};
use crate::error::CliError;

/// One alternative: changes applied and settled first, then the changes measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `as given`, or the `--compare` text.
    pub name: String,
    /// Applied and settled before the measurement.
    pub prepared: Vec<Change>,
    /// Applied together at the start of the measurement.
    pub measured: Vec<Change>,
}

/// The scenario the flags give; `applied`: the `--apply` manifests' objects; `replacement`:
/// `--replace`'s file and Pod (`None` before the file is read: the flags alone are checked).
pub fn scenario(
    args: &SimulateArgs,
    applied: Option<Change>,
    replacement: Option<(String, locality_sim::Object)>,
) -> Result<Scenario, CliError> {
    let mut events = Vec::new();
    if let Some(workload) = &args.rollout {
        events.push(Change::Rollout {
            workload: workload.clone(),
            max_surge: args.max_surge.clone(),
            max_unavailable: args.max_unavailable.clone(),
        });
    }
    if let Some(n) = &args.drain {
        events.push(Change::Drain { node: n.clone() });
    }
    if let Some(n) = &args.node_down {
        events.push(Change::NodeDown { node: n.clone() });
    }
    let grace_period_seconds = crate::cli::grace_period(args.grace_period, args.force);
    if let Some(pod) = &args.delete {
        events.push(Change::DeletePod {
            pod: pod.clone(),
            grace_period_seconds,
            replacement: None,
        });
    }
    if let Some((file, pod)) = replacement {
        let key = pod
            .key()
            .ok_or_else(|| CliError::usage(format!("--replace {file}: the file holds no Pod")))?;
        events.push(Change::DeletePod {
            pod: key,
            grace_period_seconds,
            replacement: Some((file, Box::new(pod))),
        });
    }
    // The manifests first, then the Service fields set on top of them.
    let sets: Vec<Change> = applied
        .into_iter()
        .map(Ok)
        .chain(args.set.iter().cloned().map(ServiceSet::into_change).map(Ok))
        .collect::<Result<Vec<_>, CliError>>()?;
    Ok(if events.is_empty() && args.replace.is_none() {
        Scenario {
            name: "as given".into(),
            prepared: Vec::new(),
            measured: sets,
        }
    } else {
        Scenario {
            name: "as given".into(),
            prepared: sets,
            measured: events,
        }
    })
}

/// `base` with the overrides of one alternative; `scope` lists the Services the base changes
/// touch (where `itp=`… apply).
pub fn alternative(
    base: &Scenario,
    name: &str,
    overrides: &[Override],
    scope: &[ObjectKey],
) -> Result<Scenario, CliError> {
    let mut s = base.clone();
    s.name = name.to_string();
    let sets_measured = s.measured.iter().all(|c| matches!(c, Change::SetService { .. }));
    for o in overrides {
        match o {
            Override::Service {
                service,
                field,
                value,
            } => {
                let targets: Vec<ObjectKey> = match service {
                    Some(k) => vec![k.clone()],
                    None => scope.to_vec(),
                };
                for t in targets {
                    let same = |c: &Change| matches!(c, Change::SetService { service, field: f, .. } if *service == t && f == field);
                    s.prepared.retain(|c| !same(c));
                    s.measured.retain(|c| !same(c));
                    let c = Change::SetService {
                        service: t,
                        field: field.clone(),
                        value: value.clone(),
                    };
                    if sets_measured {
                        s.measured.push(c);
                    } else {
                        s.prepared.push(c);
                    }
                }
            }
            Override::MaxSurge(v) | Override::MaxUnavailable(v) => {
                let mut found = false;
                for c in &mut s.measured {
                    if let Change::Rollout {
                        max_surge,
                        max_unavailable,
                        ..
                    } = c
                    {
                        found = true;
                        if matches!(o, Override::MaxSurge(_)) {
                            *max_surge = Some(v.clone());
                        } else {
                            *max_unavailable = Some(v.clone());
                        }
                    }
                }
                if !found {
                    return Err(CliError::usage(format!(
                        "--compare {name:?}: maxSurge and maxUnavailable need --rollout"
                    )));
                }
            }
        }
    }
    Ok(s)
}
