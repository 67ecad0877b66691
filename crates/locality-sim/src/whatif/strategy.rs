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

/// The effective `maxUnavailable` of a StatefulSet's rollout after the overrides, as the API
/// server takes them (k8s.io/kubernetes `pkg/apis/apps/validation/validation.go`
/// `ValidateStatefulSetSpec` and `validateRollingUpdateStatefulSet`): a StatefulSet has no
/// `maxSurge` (its `rollingUpdate` has no such field: strict decoding refuses it), its
/// `maxUnavailable` is a positive integer or a percentage of at most 100% and not 0, and an
/// `OnDelete` StatefulSet takes no `rollingUpdate` at all. With the
/// `MaxUnavailableStatefulSet` feature gate off (`gate`), the API server drops
/// `maxUnavailable` (`pkg/registry/apps/statefulset/strategy.go`
/// `dropStatefulSetDisabledFields`) and the controller replaces one pod at a time: `Ok(None)`.
///
/// # Errors
/// The message the API server would give, naming the field.
pub fn stateful_max_unavailable(
    w: &Workload,
    max_surge: Option<&str>,
    max_unavailable: Option<&str>,
    gate: bool,
) -> Result<Option<String>, String> {
    if let Some(s) = max_surge {
        return Err(format!(
            "maxSurge: {s:?}: strict decoding error: unknown field \"spec.updateStrategy.rollingUpdate.maxSurge\" (a StatefulSet never surges: it deletes a pod before it creates the replacement of the same name)"
        ));
    }
    if max_unavailable.is_some() && w.update_strategy.as_deref() == Some("OnDelete") {
        return Err(
            "spec.updateStrategy.rollingUpdate: only allowed for updateStrategy 'RollingUpdate' (the StatefulSet's updateStrategy is OnDelete)".into(),
        );
    }
    if !gate {
        return Ok(None);
    }
    let unavailable = max_unavailable
        .map(str::to_string)
        .or_else(|| w.max_unavailable.clone())
        .unwrap_or_else(|| "1".into());
    if check("maxUnavailable", &unavailable)? == 0 {
        return Err(format!("maxUnavailable: {unavailable:?}: cannot be 0"));
    }
    Ok(Some(unavailable))
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
        Workload::new(WorkloadKind::DaemonSet, Default::default())
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
    fn a_stateful_set_takes_no_surge_and_a_non_zero_max_unavailable_with_the_gate() {
        let mut w = ds();
        w.kind = WorkloadKind::StatefulSet;
        assert!(
            stateful_max_unavailable(&w, Some("1"), None, true)
                .unwrap_err()
                .contains("unknown field")
        );
        assert!(stateful_max_unavailable(&w, Some("0"), None, false).is_err());
        assert_eq!(
            stateful_max_unavailable(&w, None, None, true).unwrap(),
            Some("1".into())
        );
        assert_eq!(
            stateful_max_unavailable(&w, None, Some("2"), true).unwrap(),
            Some("2".into())
        );
        assert_eq!(
            stateful_max_unavailable(&w, None, Some("2"), false).unwrap(),
            None
        );
        assert!(
            stateful_max_unavailable(&w, None, Some("0%"), true)
                .unwrap_err()
                .contains("cannot be 0")
        );
        assert!(stateful_max_unavailable(&w, None, Some("150%"), true).is_err());
        assert!(stateful_max_unavailable(&w, None, Some("-1"), true).is_err());
        w.update_strategy = Some("OnDelete".into());
        assert!(
            stateful_max_unavailable(&w, None, Some("1"), true)
                .unwrap_err()
                .contains("only allowed")
        );
        assert_eq!(
            stateful_max_unavailable(&w, None, None, true).unwrap(),
            Some("1".into())
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
