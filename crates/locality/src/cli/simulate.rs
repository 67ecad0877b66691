//! Flags of `locality simulate` (docs/simulate.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::{ModelArgs, parse_timeout};

/// Flags of `simulate`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args(["rollout", "set", "drain", "node_down", "apply"])))]
pub struct SimulateArgs {
    /// Where the cluster state comes from (-f dumps, a live context read-only, or --sim).
    #[command(flatten)]
    pub model: ModelArgs,
    /// Roll a workload: `daemonset/NAMESPACE/NAME`, `deployment/NAMESPACE/NAME` or
    /// `statefulset/NAMESPACE/NAME` (a new template, as `kubectl rollout restart`).
    #[arg(long, value_name = "KIND/NS/NAME")]
    pub rollout: Option<String>,
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
    #[arg(long = "set", value_name = "NS/NAME:FIELD=VALUE")]
    pub set: Vec<String>,
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
    /// Also run these alternatives and compare them in one table: each a comma-separated list
    /// of itp=, etp=, td=, topology-mode= (applied to the Services the change touches),
    /// maxSurge=, maxUnavailable= (the rollout's), or NS/NAME:FIELD=VALUE.
    #[arg(long, value_name = "ALTERNATIVE", num_args = 1..)]
    pub compare: Vec<String>,
    /// How long after a change every node's kube-proxy has programmed it (e.g. 1s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_timeout)]
    pub proxy_sync: Duration,
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
    /// The `SimulationReport` document (docs/simulate.md).
    Json,
    /// Markdown for a pull request.
    Markdown,
}
