//! A rollout's `maxSurge` / `maxUnavailable`, validated as the API server validates them, and
//! what keeps a surge pod off its node.

use locality_model::objects::{Workload, WorkloadKind};

/// An int-or-percent as the API server reads it (k8s.io/apimachinery
/// `pkg/util/intstr/intstr.go` `GetScaledValueFromIntOrPercent`): `Some((value, percent))`.
fn parse(v: &str) -> Option<(i64, bool)> {
    let v = v.trim();
    match v.strip_suffix('%') {
        Some(p) => p.parse::<i64>().ok().map(|n| (n, true)),
        None => v.parse::<i64>().ok().map(|n| (n, false)),
    }
}

/// Validates one value (`ValidatePositiveIntOrPercent`, `IsNotMoreThan100Percent`).
fn check(field: &str, v: &str) -> Result<i64, String> {
    let (n, percent) = parse(v)
        .ok_or_else(|| format!("{field}: {v:?}: a valid value is an integer (5) or a percentage (5%)"))?;
    if n < 0 {
        return Err(format!("{field}: {v:?}: must be greater than or equal to 0"));
    }
    if percent && n > 100 {
        return Err(format!("{field}: {v:?}: must not be greater than 100%"));
    }
    Ok(n)
}

/// The effective `maxSurge` and `maxUnavailable` of `w` after the overrides, with the
/// defaults the API server sets (DaemonSet: `maxSurge 0`, `maxUnavailable 1`; Deployment:
/// `25%` both; k8s.io/kubernetes `pkg/apis/apps/v1/defaults.go`), validated as
/// `pkg/apis/apps/validation/validation.go` does: `ValidateRollingUpdateDaemonSet` (exactly
/// one of them non-zero) and `ValidateRollingUpdateDeployment` (not both zero).
///
/// # Errors
/// The message the API server would give, naming the field.
pub fn effective(
    w: &Workload,
    max_surge: Option<&str>,
    max_unavailable: Option<&str>,
) -> Result<(String, String), String> {
    let (ds, dd) = match w.kind {
        WorkloadKind::DaemonSet => ("0", "1"),
        _ => ("25%", "25%"),
    };
    let surge = max_surge
        .map(str::to_string)
        .or_else(|| w.max_surge.clone())
        .unwrap_or_else(|| ds.into());
    let unavailable = max_unavailable
        .map(str::to_string)
        .or_else(|| w.max_unavailable.clone())
        .unwrap_or_else(|| dd.into());
    let s = check("maxSurge", &surge)?;
    let u = check("maxUnavailable", &unavailable)?;
    match w.kind {
        WorkloadKind::DaemonSet if s != 0 && u != 0 => Err(format!(
            "maxSurge: {surge:?}: may not be set when maxUnavailable is non-zero ({unavailable:?}); a DaemonSet takes exactly one of them non-zero (pass --max-unavailable 0 with --max-surge)"
        )),
        _ if s == 0 && u == 0 => Err(format!(
            "maxUnavailable: {unavailable:?}: may not be 0 when maxSurge is 0"
        )),
        _ => Ok((surge, unavailable)),
    }
}

/// The `hostPort`s of a pod template: a surge pod asking for one cannot be scheduled next to
/// the old pod that holds it (the scheduler's `NodePorts` filter), so the new pod waits until
/// the old one is gone.
pub fn host_ports(w: &Workload) -> Vec<u16> {
    let mut ports: Vec<u16> = w.template.ports.iter().filter_map(|p| p.host_port).collect();
    if w.template.host_network {
        // With hostNetwork every container port is a host port.
        ports.extend(w.template.ports.iter().map(|p| p.container_port));
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// True when the int-or-percent is zero.
pub fn is_zero(v: &str) -> bool {
    parse(v).is_some_and(|(n, _)| n == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds() -> Workload {
        Workload {
            kind: WorkloadKind::DaemonSet,
            meta: Default::default(),
            selector: Default::default(),
            template_labels: Default::default(),
            template: Default::default(),
            replicas: None,
            max_surge: None,
            max_unavailable: None,
            update_strategy: None,
            containers: Vec::new(),
        }
    }

    #[test]
    fn a_daemon_set_takes_exactly_one_non_zero() {
        let w = ds();
        assert_eq!(effective(&w, None, None).unwrap(), ("0".into(), "1".into()));
        assert!(
            effective(&w, Some("1"), None)
                .unwrap_err()
                .contains("may not be set")
        );
        assert_eq!(
            effective(&w, Some("1"), Some("0")).unwrap(),
            ("1".into(), "0".into())
        );
        assert!(
            effective(&w, Some("0"), Some("0%"))
                .unwrap_err()
                .contains("may not be 0")
        );
        assert!(
            effective(&w, Some("-1"), Some("0"))
                .unwrap_err()
                .contains("greater than or equal")
        );
        assert!(
            effective(&w, Some("120%"), Some("0"))
                .unwrap_err()
                .contains("100%")
        );
        assert!(
            effective(&w, Some("x"), Some("0"))
                .unwrap_err()
                .contains("integer")
        );
    }

    #[test]
    fn a_deployment_takes_both_but_not_both_zero() {
        let mut w = ds();
        w.kind = WorkloadKind::Deployment;
        assert_eq!(effective(&w, None, None).unwrap(), ("25%".into(), "25%".into()));
        assert!(effective(&w, Some("1"), Some("1")).is_ok());
        assert!(effective(&w, Some("0"), Some("0")).is_err());
    }
}
