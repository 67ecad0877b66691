//! Flags of `locality verify` (docs/verify.md).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{ApiFaultArgs, ProxyModeArg};

/// Flags of `verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Run against the cluster of the current kubeconfig context instead of the simulated one.
    #[arg(long, conflicts_with_all = SIMULATED_API_FAULT_FLAGS)]
    pub live: bool,
    /// Path to the kubeconfig file (a real cluster).
    #[arg(long, value_name = "FILE", conflicts_with_all = SIMULATED_API_FAULT_FLAGS)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (a real cluster).
    #[arg(long, value_name = "NAME", conflicts_with_all = SIMULATED_API_FAULT_FLAGS)]
    pub context: Option<String>,
    /// The simulated cluster's topology (built-in name or YAML file).
    #[arg(long, value_name = "NAME|FILE", default_value = "four-nodes", conflicts_with_all = ["live", "kubeconfig", "context"])]
    pub topology: String,
    /// Data-plane profile of a simulated node (NODE=PROFILE, e.g. node-c=ignores-local-policy);
    /// repeatable.
    #[arg(long, value_name = "NODE=PROFILE", value_parser = super::sim::parse_node_profile, conflicts_with_all = ["live", "kubeconfig", "context"])]
    pub profile: Vec<super::sim::NodeProfile>,
    /// Virtual seconds per wall second of the simulated cluster.
    #[arg(long, default_value_t = 50.0, conflicts_with_all = ["live", "kubeconfig", "context"])]
    pub speed: f64,
    /// Only these cases (comma-separated IDs, e.g. B1,C).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub only: Vec<String>,
    /// Evidence directory [default: ./locality-evidence/RUN-ID].
    #[arg(long, value_name = "DIR")]
    pub evidence: Option<PathBuf>,
    /// Keep the namespace at the end (prints how to delete it).
    #[arg(long)]
    pub keep: bool,
    /// Who is accountable for the evidence [default: the kubeconfig context's user, else $USER].
    #[arg(long, value_name = "NAME")]
    pub owner: Option<String>,
    /// kube-proxy's proxy mode [default: read from the cluster].
    #[arg(long, value_enum)]
    pub proxy_mode: Option<ProxyModeArg>,
    /// P and Pn probe from at most this many nodes instead of every usable node: faster on
    /// large clusters, but the decision is then PARTIAL (a fault on a node left out would
    /// not be seen). Every zone and every distinct kube-proxy (its pod's DaemonSet, image and
    /// command in kube-system) keeps a node, even beyond N [default: every usable node].
    #[arg(long, value_name = "N")]
    pub max_nodes: Option<usize>,
    /// Rollout cases (E-a, E-b, H3): kube-proxy's allowed lag behind an EndpointSlice change,
    /// in seconds of the cluster's clock; a larger measured lag makes the case INCOMPLETE.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub max_proxy_lag: f64,
    /// Also run the external-traffic cases X2, X2s, Xt and X4: an externalTrafficPolicy: Local
    /// NodePort dialled from another node's hostNetwork client (dropped on a node without a
    /// backend; delivered locally with the client's source IP preserved on one with it, and
    /// by its terminating backend when that is the only one), and
    /// a LoadBalancer Service's IP dialled from a pod (any backend answers). They need
    /// nodePorts reachable between nodes, a hostNetwork port free on N2 and a load-balancer
    /// implementation.
    #[arg(long)]
    pub external_cases: bool,
    /// Print the plan (roles, nodes probed, cases) and every manifest a run would create, as
    /// one YAML stream, and exit: nothing is created (the cluster is only read).
    #[arg(long)]
    pub dry_run: bool,
    /// The agnhost image of every client and backend, for registries that mirror it.
    #[arg(long, value_name = "IMAGE", default_value = locality_verify::fixture::AGNHOST_IMAGE)]
    pub image: String,
    /// The curl image of the kube-proxy readers and rollout probe loops, for registries that
    /// mirror it.
    #[arg(long, value_name = "IMAGE", default_value = locality_verify::fixture::CURL_IMAGE)]
    pub curl_image: String,
    /// P and Pn probe from every usable node (the default; kept for scripts).
    #[arg(long, conflicts_with = "max_nodes")]
    pub all_nodes: bool,
    /// How long one API request may take, in seconds, before it is abandoned and retried
    /// (within the retries' own bounds).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub request_timeout: f64,
    /// Output: a table on the terminal, or the ledger as JSON.
    #[arg(short = 'o', long, value_enum, default_value = "table")]
    pub output: VerifyOutput,
    /// Fault injection of the simulated cluster's API server (not with a real cluster).
    #[command(flatten)]
    pub api_faults: ApiFaultArgs,
}

/// The ids of [`ApiFaultArgs`]' flags (a real cluster's flags conflict with them).
const SIMULATED_API_FAULT_FLAGS: [&str; 5] = [
    "api_latency",
    "api_faults",
    "api_error_code",
    "drop_rate",
    "expire_watches",
];

/// Output formats of `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerifyOutput {
    /// One line per case, then the decision.
    Table,
    /// The ledger (`ledger.json`).
    Json,
}
