//! The changes of `simulate` from its flags: what is measured, what is applied first, and the
//! `--compare` alternatives derived from them.

use locality_sim::whatif::{Change, SERVICE_FIELDS};
use locality_sim::{Kind, ObjectKey};

use crate::cli::SimulateArgs;
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

fn rollout(r: &str, args: &SimulateArgs) -> Result<Change, CliError> {
    let parts: Vec<&str> = r.split('/').collect();
    let kind = match parts.first().map(|k| k.to_ascii_lowercase()).as_deref() {
        Some("daemonset" | "daemonsets" | "ds") => Kind::DaemonSet,
        Some("deployment" | "deployments" | "deploy") => Kind::Deployment,
        Some("statefulset" | "statefulsets" | "sts") => Kind::StatefulSet,
        _ => {
            return Err(CliError::usage(format!(
                "--rollout {r:?}: expected daemonset/NAMESPACE/NAME, deployment/NAMESPACE/NAME or statefulset/NAMESPACE/NAME"
            )));
        }
    };
    let [_, ns, name] = parts[..] else {
        return Err(CliError::usage(format!(
            "--rollout {r:?}: expected KIND/NAMESPACE/NAME"
        )));
    };
    Ok(Change::Rollout {
        workload: ObjectKey::new(kind, ns, name),
        max_surge: args.max_surge.clone(),
        max_unavailable: args.max_unavailable.clone(),
    })
}

/// `NS/NAME:FIELD=VALUE`.
pub fn set(s: &str) -> Result<Change, CliError> {
    let bad = || {
        CliError::usage(format!(
            "--set {s:?}: expected NAMESPACE/NAME:FIELD=VALUE with FIELD one of {}",
            SERVICE_FIELDS.join(", ")
        ))
    };
    let (service, assignment) = s.split_once(':').ok_or_else(bad)?;
    let (ns, name) = service.split_once('/').ok_or_else(bad)?;
    let (field, value) = assignment.split_once('=').ok_or_else(bad)?;
    let field = field.trim();
    if !SERVICE_FIELDS.contains(&field) || ns.is_empty() || name.is_empty() {
        return Err(bad());
    }
    Ok(Change::SetService {
        service: ObjectKey::new(Kind::Service, ns, name),
        field: field.to_string(),
        value: value.trim().to_string(),
    })
}

/// The scenario the flags give; `applied`: the `--apply` manifests' objects.
pub fn scenario(args: &SimulateArgs, applied: Option<Change>) -> Result<Scenario, CliError> {
    let mut events = Vec::new();
    if let Some(r) = &args.rollout {
        events.push(rollout(r, args)?);
    }
    if let Some(n) = &args.drain {
        events.push(Change::Drain { node: n.clone() });
    }
    if let Some(n) = &args.node_down {
        events.push(Change::NodeDown { node: n.clone() });
    }
    // The manifests first, then the Service fields set on top of them.
    let sets: Vec<Change> = applied
        .into_iter()
        .map(Ok)
        .chain(args.set.iter().map(|s| set(s)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(if events.is_empty() {
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

/// One `--compare` override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Override {
    /// A field of the Services in scope (or of one Service when `service` is given).
    Service {
        /// One Service, or every Service the changes touch.
        service: Option<ObjectKey>,
        /// The field.
        field: String,
        /// The value.
        value: String,
    },
    /// The rollout's `maxSurge`.
    MaxSurge(String),
    /// The rollout's `maxUnavailable`.
    MaxUnavailable(String),
}

/// Parses one `--compare` alternative.
pub fn overrides(alt: &str) -> Result<Vec<Override>, CliError> {
    let mut out = Vec::new();
    for item in alt.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if item.contains(':') {
            if let Change::SetService {
                service,
                field,
                value,
            } = set(item)?
            {
                out.push(Override::Service {
                    service: Some(service),
                    field,
                    value,
                });
            }
            continue;
        }
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| CliError::usage(format!("--compare {alt:?}: {item:?} is not KEY=VALUE")))?;
        let v = v.trim().to_string();
        let field = match k.trim() {
            "itp" | "internalTrafficPolicy" => "internalTrafficPolicy",
            "etp" | "externalTrafficPolicy" => "externalTrafficPolicy",
            "td" | "trafficDistribution" => "trafficDistribution",
            "topology-mode" | "topologyMode" => "topology-mode",
            "maxSurge" | "max-surge" => {
                out.push(Override::MaxSurge(v));
                continue;
            }
            "maxUnavailable" | "max-unavailable" => {
                out.push(Override::MaxUnavailable(v));
                continue;
            }
            other => {
                return Err(CliError::usage(format!(
                    "--compare {alt:?}: unknown key {other:?} (itp, etp, td, topology-mode, maxSurge, maxUnavailable, or NS/NAME:FIELD=VALUE)"
                )));
            }
        };
        out.push(Override::Service {
            service: None,
            field: field.into(),
            value: v,
        });
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_compare_parse_their_forms() {
        assert!(set("monitoring/node-agent:internalTrafficPolicy=Cluster").is_ok());
        assert!(set("monitoring/node-agent:trafficDistribution=").is_ok());
        assert!(set("node-agent:internalTrafficPolicy=Cluster").is_err());
        assert!(set("monitoring/node-agent:replicas=3").is_err());
        let o = overrides("itp=Cluster, td=PreferSameNode,maxSurge=1").unwrap();
        assert_eq!(o.len(), 3);
        assert_eq!(o[2], Override::MaxSurge("1".into()));
        assert!(overrides("colour=blue").is_err());
    }
}
