//! Flags of `locality simulate` (docs/simulate.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use locality_sim::whatif::{Change, SERVICE_FIELDS};
use locality_sim::{Kind, ObjectKey};

use super::{ModelArgs, parse_timeout};

/// Flags of `simulate`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args(["rollout", "set", "drain", "node_down", "apply", "delete", "replace"])))]
#[command(group(clap::ArgGroup::new("pod_deletion").args(["delete", "replace"])))]
#[command(override_usage = "locality simulate [OPTIONS] CHANGE…\n\n\
    CHANGE (one or more): --rollout KIND/NS/NAME, --set NS/NAME:FIELD=VALUE, --drain NODE,\n\
    --node-down NODE, --apply FILE, --delete pod/NS/NAME, --replace FILE")]
pub struct SimulateArgs {
    /// Where the cluster state comes from (-f dumps, a live context read-only, or --sim).
    #[command(flatten)]
    pub model: ModelArgs,
    /// Roll a workload: `daemonset/NAMESPACE/NAME`, `deployment/NAMESPACE/NAME` or
    /// `statefulset/NAMESPACE/NAME` (a new template, as `kubectl rollout restart`).
    #[arg(long, value_name = "KIND/NS/NAME", value_parser = parse_rollout)]
    pub rollout: Option<ObjectKey>,
    /// The rollout's maxSurge (e.g. 0, 1, 10%), validated as the API server does (a DaemonSet
    /// takes exactly one of maxSurge and maxUnavailable non-zero) [default: the workload's].
    #[arg(long, value_name = "N|P%", requires = "rollout")]
    pub max_surge: Option<String>,
    /// The rollout's maxUnavailable [default: the workload's]. A StatefulSet takes no
    /// --max-surge, and honours maxUnavailable from Kubernetes 1.35 (MaxUnavailableStatefulSet).
    #[arg(long, value_name = "N|P%", requires = "rollout")]
    pub max_unavailable: Option<String>,
    /// Change a Service: `NS/NAME:FIELD=VALUE` with FIELD internalTrafficPolicy,
    /// externalTrafficPolicy, trafficDistribution or topology-mode (an empty VALUE removes
    /// it); repeatable. With --rollout, --drain or --node-down it is applied first; alone it is
    /// the change simulated.
    #[arg(long = "set", value_name = "NS/NAME:FIELD=VALUE", value_parser = parse_set)]
    pub set: Vec<ServiceSet>,
    /// Apply a manifest (YAML or JSON, one or many documents, read as -f reads them and
    /// defaulted as the API server would), repeatable: its objects replace (or create) those
    /// of the seeded cluster, as `kubectl apply` would; a workload whose pod template differs
    /// from the stored one is rolled. Alone (or with --set) it is the change simulated; with
    /// --rollout, --drain or --node-down it is applied (and settled for 30 s) first.
    #[arg(long = "apply", value_name = "FILE")]
    pub apply: Vec<PathBuf>,
    /// Drain a node as `kubectl drain --ignore-daemonsets --delete-emptydir-data --force`:
    /// cordon it, then evict every pod on it but DaemonSet and mirror pods, honouring
    /// PodDisruptionBudgets (a refused eviction is retried every 5 s).
    #[arg(long, value_name = "NODE")]
    pub drain: Option<String>,
    /// Take a node down: its kubelet stops reporting and its containers stop; the simulated
    /// node lifecycle controller marks it NotReady and evicts its pods after their
    /// tolerationSeconds.
    #[arg(long, value_name = "NODE")]
    pub node_down: Option<String>,
    /// Delete a pod as `kubectl delete pod`: `pod/NAMESPACE/NAME`. Graceful: SIGTERM, the pod
    /// serves its shutdown delay (preStop sleep, agnhost --delay-shutdown) within its grace
    /// period, then goes; a pod of a ReplicaSet, DaemonSet or StatefulSet is recreated by its
    /// controller, a bare pod is not.
    #[arg(long, value_name = "pod/NS/NAME", value_parser = parse_pod)]
    pub delete: Option<ObjectKey>,
    /// Replace a pod as `kubectl replace --force -f FILE`: FILE holds one Pod (the one
    /// replaced, by namespace and name); it is deleted as --delete deletes it and, once gone,
    /// created from FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "delete")]
    pub replace: Option<PathBuf>,
    /// The grace period of --delete or --replace, in seconds, as kubectl's: negative uses the
    /// pod's terminationGracePeriodSeconds (the default); 0 becomes 1 (kubectl without --force).
    #[arg(
        long,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        requires = "pod_deletion"
    )]
    pub grace_period: Option<i64>,
    /// With --delete, as `kubectl delete --force`: with --grace-period 0 (or none given) the
    /// pod is removed from the API at once, bypassing graceful deletion.
    #[arg(long, requires = "delete", conflicts_with = "replace")]
    pub force: bool,
    /// Also run these alternatives and compare them in one table: each a comma-separated list
    /// of itp=, etp=, td=, topology-mode= (applied to the Services the change touches),
    /// maxSurge=, maxUnavailable= (the rollout's), or NS/NAME:FIELD=VALUE.
    #[arg(long, value_name = "ALTERNATIVE", num_args = 1.., value_parser = parse_alternative)]
    pub compare: Vec<Alternative>,
    /// How long after a change every node's kube-proxy has programmed it (e.g. 1s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_timeout)]
    pub proxy_sync: Duration,
    /// kube-proxy's minSyncPeriod (its --iptables-min-sync-period, 1s by default there and
    /// here): it syncs at most this often, so a change arriving sooner after its last sync
    /// waits for the next one. 0s programs every change on its own, --proxy-sync after it.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_timeout)]
    pub proxy_min_sync: Duration,
    /// Image pull and container start of every new pod.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_timeout)]
    pub pull: Duration,
    /// From a container's start to its application answering the readiness probe.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_timeout)]
    pub ready_after: Duration,
    /// Virtual milliseconds between two checks of the rules.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub step_ms: u64,
    /// Give up after this many virtual seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub limit: u64,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: SimulateOutput,
    /// Also write the timeline as a self-contained SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

/// Output formats of `simulate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimulateOutput {
    /// Per alternative a timeline per Service port, the comparison, the assumptions.
    Text,
    /// The `SimulationReport` document (`kind: SimulationReport`, versioned).
    Json,
    /// Markdown for a pull request.
    Markdown,
}

/// clap's value parser of `--rollout KIND/NAMESPACE/NAME`.
pub(crate) fn parse_rollout(r: &str) -> Result<ObjectKey, String> {
    let parts: Vec<&str> = r.split('/').collect();
    let kind = match parts.first().map(|k| k.to_ascii_lowercase()).as_deref() {
        Some("daemonset" | "daemonsets" | "ds") => Kind::DaemonSet,
        Some("deployment" | "deployments" | "deploy") => Kind::Deployment,
        Some("statefulset" | "statefulsets" | "sts") => Kind::StatefulSet,
        _ => {
            return Err(
                "expected daemonset/NAMESPACE/NAME, deployment/NAMESPACE/NAME or statefulset/NAMESPACE/NAME"
                    .into(),
            );
        }
    };
    match parts[..] {
        [_, ns, name] if !ns.is_empty() && !name.is_empty() => Ok(ObjectKey::new(kind, ns, name)),
        _ => Err("expected KIND/NAMESPACE/NAME".into()),
    }
}

/// `--delete pod/NS/NAME` (also `pods/…`, `po/…`).
pub(crate) fn parse_pod(r: &str) -> Result<ObjectKey, String> {
    match r.split('/').collect::<Vec<_>>()[..] {
        [kind, ns, name]
            if matches!(kind.to_ascii_lowercase().as_str(), "pod" | "pods" | "po")
                && !ns.is_empty()
                && !name.is_empty() =>
        {
            Ok(ObjectKey::new(Kind::Pod, ns, name))
        }
        _ => Err("expected pod/NAMESPACE/NAME".into()),
    }
}

/// kubectl's `--grace-period` as a DELETE sends it (k8s.io/kubectl `pkg/cmd/delete/delete.go`
/// `DeleteOptions.Complete`): negative is not sent (the pod's own applies), 0 without
/// `--force` becomes 1, and with `--force` a negative or absent one becomes 0 (removed at
/// once).
pub fn grace_period(v: Option<i64>, force: bool) -> Option<u64> {
    match v {
        Some(0) if !force => Some(1),
        Some(n) if n >= 0 => u64::try_from(n).ok(),
        _ if force => Some(0),
        _ => None,
    }
}

/// One `--set NS/NAME:FIELD=VALUE`: a field of one Service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSet {
    /// The Service.
    pub service: ObjectKey,
    /// One of [`SERVICE_FIELDS`].
    pub field: String,
    /// The value (empty: remove the field).
    pub value: String,
}

impl ServiceSet {
    /// The what-if change it asks for.
    pub fn into_change(self) -> Change {
        Change::SetService {
            service: self.service,
            field: self.field,
            value: self.value,
        }
    }
}

/// clap's value parser of `--set`.
pub(crate) fn parse_set(s: &str) -> Result<ServiceSet, String> {
    let bad = || {
        format!(
            "expected NAMESPACE/NAME:FIELD=VALUE with FIELD one of {}",
            SERVICE_FIELDS.join(", ")
        )
    };
    let (service, assignment) = s.split_once(':').ok_or_else(bad)?;
    let (ns, name) = service.split_once('/').ok_or_else(bad)?;
    let (field, value) = assignment.split_once('=').ok_or_else(bad)?;
    let field = field.trim();
    if !SERVICE_FIELDS.contains(&field) || ns.is_empty() || name.is_empty() {
        return Err(bad());
    }
    Ok(ServiceSet {
        service: ObjectKey::new(Kind::Service, ns, name),
        field: field.to_string(),
        value: value.trim().to_string(),
    })
}

/// One `--compare` alternative: its text (the alternative's name) and its overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alternative {
    /// As given.
    pub text: String,
    /// What it changes.
    pub overrides: Vec<Override>,
}

/// One override of a `--compare` alternative.
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

/// clap's value parser of one `--compare` alternative: comma-separated `itp=`, `etp=`,
/// `td=`, `topology-mode=`, `maxSurge=`, `maxUnavailable=` or `NS/NAME:FIELD=VALUE`.
pub(crate) fn parse_alternative(alt: &str) -> Result<Alternative, String> {
    let mut overrides = Vec::new();
    for item in alt.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if item.contains(':') {
            let s = parse_set(item).map_err(|e| format!("{item:?}: {e}"))?;
            overrides.push(Override::Service {
                service: Some(s.service),
                field: s.field,
                value: s.value,
            });
            continue;
        }
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not KEY=VALUE"))?;
        let v = v.trim().to_string();
        let field = match k.trim() {
            "itp" | "internalTrafficPolicy" => "internalTrafficPolicy",
            "etp" | "externalTrafficPolicy" => "externalTrafficPolicy",
            "td" | "trafficDistribution" => "trafficDistribution",
            "topology-mode" | "topologyMode" => "topology-mode",
            "maxSurge" | "max-surge" => {
                overrides.push(Override::MaxSurge(v));
                continue;
            }
            "maxUnavailable" | "max-unavailable" => {
                overrides.push(Override::MaxUnavailable(v));
                continue;
            }
            other => {
                return Err(format!(
                    "unknown key {other:?} (itp, etp, td, topology-mode, maxSurge, maxUnavailable, or NS/NAME:FIELD=VALUE)"
                ));
            }
        };
        overrides.push(Override::Service {
            service: None,
            field: field.into(),
            value: v,
        });
    }
    Ok(Alternative {
        text: alt.to_string(),
        overrides,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_rollout_and_compare_parse_their_forms() {
        assert!(parse_set("monitoring/node-agent:internalTrafficPolicy=Cluster").is_ok());
        assert!(parse_set("monitoring/node-agent:trafficDistribution=").is_ok());
        assert!(parse_set("node-agent:internalTrafficPolicy=Cluster").is_err());
        assert!(parse_set("monitoring/node-agent:replicas=3").is_err());
        assert_eq!(
            parse_rollout("sts/store/db"),
            Ok(ObjectKey::new(Kind::StatefulSet, "store", "db"))
        );
        assert!(parse_rollout("daemonset/agent").is_err());
        assert!(parse_rollout("job/ns/x").is_err());
        let o = parse_alternative("itp=Cluster, td=PreferSameNode,maxSurge=1").unwrap();
        assert_eq!(o.overrides.len(), 3);
        assert_eq!(o.overrides[2], Override::MaxSurge("1".into()));
        assert!(parse_alternative("colour=blue").is_err());
    }

    /// `kubectl delete` (`DeleteOptions.Complete`) and `kubectl replace` (`Complete`, which
    /// turns 0 into 1 and waits for the deletion) never remove a pod at once without
    /// `--force`; `kubectl delete --force` does, with no grace period or 0.
    #[test]
    fn grace_period_follows_kubectl() {
        assert_eq!(grace_period(Some(0), false), Some(1));
        assert_eq!(grace_period(Some(30), false), Some(30));
        assert_eq!(grace_period(Some(-1), false), None);
        assert_eq!(grace_period(None, false), None);
        assert_eq!(grace_period(Some(0), true), Some(0));
        assert_eq!(grace_period(None, true), Some(0));
        assert_eq!(grace_period(Some(-1), true), Some(0));
        assert_eq!(grace_period(Some(5), true), Some(5));
    }
}
