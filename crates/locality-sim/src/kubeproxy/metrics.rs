//! The simulated kube-proxy's metrics endpoint (`127.0.0.1:10249/metrics`, `/proxyMode`).

use std::fmt::Write as _;

use locality_model::objects::IpFamily;
use locality_model::version::KubeVersion;

use super::{Fault, SimKubeProxy};
use crate::time::{rfc3339, unix_seconds};

impl SimKubeProxy {
    /// The metrics endpoint text (`127.0.0.1:10249/metrics`), `None` for an `other` data
    /// plane (no kube-proxy metrics). Metric families in name order, as the Prometheus client
    /// writes them:
    /// - `kubeproxy_sync_proxy_rules_duration_seconds` (histogram): one observation per sync
    ///   that applied state, of the node's lag (such a sync applies the changes up to one lag
    ///   before it, as a real sync applies what was pending when it started);
    /// - `kubeproxy_sync_proxy_rules_endpoint_changes_pending`: `endpoint_changes_pending`,
    ///   the EndpointSlice changes its informer received that no sync has applied yet (see
    ///   [`crate::Engine::endpoint_changes_pending`]);
    /// - `kubeproxy_sync_proxy_rules_last_timestamp_seconds`: [`SimKubeProxy::last_sync`] as
    ///   Unix seconds (0 before the first sync);
    /// - `kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family,traffic_policy}`;
    /// - `kubernetes_build_info{build_date,compiler,git_commit,git_tree_state,git_version,
    ///   go_version,major,minor,platform} 1`, `git_version` its version with patch `.0`
    ///   (see `build_info_labels`).
    pub fn metrics_text(&self, endpoint_changes_pending: usize) -> Option<String> {
        if self.profile.replacement().is_some() {
            return None;
        }
        let mut s = String::new();
        s.push_str(
            "# HELP kubeproxy_sync_proxy_rules_duration_seconds [ALPHA] SyncProxyRules latency in seconds\n\
             # TYPE kubeproxy_sync_proxy_rules_duration_seconds histogram\n",
        );
        let (buckets, count, sum) = &self.sync_durations;
        for (b, le) in buckets.iter().zip(super::SYNC_DURATION_BUCKETS) {
            let _ = writeln!(
                s,
                "kubeproxy_sync_proxy_rules_duration_seconds_bucket{{le=\"{}\"}} {b}",
                go_float(le)
            );
        }
        let _ = writeln!(
            s,
            "kubeproxy_sync_proxy_rules_duration_seconds_bucket{{le=\"+Inf\"}} {count}\n\
             kubeproxy_sync_proxy_rules_duration_seconds_sum {}\n\
             kubeproxy_sync_proxy_rules_duration_seconds_count {count}",
            go_float(*sum as f64 / 1000.0)
        );
        s.push_str(
            "# HELP kubeproxy_sync_proxy_rules_endpoint_changes_pending [ALPHA] Pending proxy rules Endpoint changes\n\
             # TYPE kubeproxy_sync_proxy_rules_endpoint_changes_pending gauge\n",
        );
        let _ = writeln!(
            s,
            "kubeproxy_sync_proxy_rules_endpoint_changes_pending {endpoint_changes_pending}"
        );
        s.push_str(
            "# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds [ALPHA] The last time proxy rules were successfully synced\n\
             # TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge\n",
        );
        let last = self.last_sync.map_or(0.0, unix_seconds);
        let _ = writeln!(
            s,
            "kubeproxy_sync_proxy_rules_last_timestamp_seconds {}",
            go_float(last)
        );
        s.push_str(
            "# HELP kubeproxy_sync_proxy_rules_no_local_endpoints_total [ALPHA] Number of services with a Local traffic policy and no endpoints\n\
             # TYPE kubeproxy_sync_proxy_rules_no_local_endpoints_total gauge\n",
        );
        for fam in [IpFamily::IPv4, IpFamily::IPv6] {
            for (policy, map) in [
                ("external", &self.no_local_external),
                ("internal", &self.no_local_internal),
            ] {
                if let Some(v) = map.get(&fam) {
                    let _ = writeln!(
                        s,
                        "kubeproxy_sync_proxy_rules_no_local_endpoints_total{{ip_family=\"{}\",traffic_policy=\"{policy}\"}} {v}",
                        fam.as_str()
                    );
                }
            }
        }
        s.push_str(
            "# HELP kubernetes_build_info [ALPHA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.\n\
             # TYPE kubernetes_build_info gauge\n",
        );
        let labels: Vec<String> = build_info_labels(self.version())
            .iter()
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect();
        let _ = writeln!(s, "kubernetes_build_info{{{}}} 1", labels.join(","));
        Some(s)
    }

    /// The `/proxyMode` answer, `None` for an `other` data plane.
    pub fn proxy_mode_text(&self) -> Option<String> {
        match self.profile.fault {
            Some(Fault::Other { .. } | Fault::Plane(_)) => None,
            _ => Some(self.profile.mode.as_str().to_string()),
        }
    }

    /// The value of `kubeproxy_sync_proxy_rules_no_local_endpoints_total` for a policy
    /// (`internal`/`external`) and family.
    pub fn no_local_endpoints(&self, traffic_policy: &str, family: IpFamily) -> usize {
        let map = if traffic_policy == "internal" {
            &self.no_local_internal
        } else {
            &self.no_local_external
        };
        map.get(&family).copied().unwrap_or(0)
    }
}

/// The labels of a simulated kube-proxy's `kubernetes_build_info`, in name order, as
/// upstream `k8s.io/component-base/metrics/prometheus/version` sets them from
/// `version.Get()`: `git_version` `v1.MINOR.0` (the simulation knows minor releases only),
/// the Go minor release that release was built with (patch `.0`), and the simulated build's
/// fixed commit (all zeros) and date (the simulated epoch), as the simulated API server's
/// `/version` reports them.
pub fn build_info_labels(version: KubeVersion) -> [(&'static str, String); 9] {
    [
        ("build_date", rfc3339(0)),
        ("compiler", "gc".into()),
        ("git_commit", "0".repeat(40)),
        ("git_tree_state", "clean".into()),
        ("git_version", format!("v{}.{}.0", version.major, version.minor)),
        ("go_version", format!("go1.{}.0", go_minor(version))),
        ("major", version.major.to_string()),
        ("minor", version.minor.to_string()),
        ("platform", "linux/amd64".into()),
    ]
}

/// The Go minor release a Kubernetes minor release's `.0` was built with; releases newer
/// than the table take its last entry.
fn go_minor(version: KubeVersion) -> u16 {
    match version.minor {
        ..=22 => 16,
        23 => 17,
        24 => 18,
        25 | 26 => 19,
        27 | 28 => 20,
        29 => 21,
        30 | 31 => 22,
        32 => 23,
        33 | 34 => 24,
        _ => 25,
    }
}

/// Go's `strconv.FormatFloat(v, 'g', -1, 64)`, as Prometheus' text format writes values:
/// the shortest digits, in `%e` form when the exponent is below -4 or at least 6.
pub fn go_float(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{v}")
}
