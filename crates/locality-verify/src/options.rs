//! How a verify run is asked to run.

use std::path::PathBuf;
use std::time::Duration;

use locality_live::LiveOptions;
use locality_model::proxy::ProxyMode;

/// How to run.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Which cluster (kubeconfig, context).
    pub live: LiveOptions,
    /// Only these case IDs (empty: all).
    pub only: Vec<String>,
    /// The evidence directory.
    pub evidence: PathBuf,
    /// Keep the namespace at the end.
    pub keep: bool,
    /// The run ID (names the namespace, labels every object).
    pub run_id: String,
    /// The target is the embedded simulated cluster (the decision says so).
    pub simulated: bool,
    /// Who is accountable for the evidence.
    pub owner: String,
    /// How long pods may take to become Ready.
    pub pod_ready_timeout: Duration,
    /// EndpointSlices must be unchanged this long before probing.
    pub settle: Duration,
    /// Positive cases are re-probed until they pass, for at most this long (kube-proxy lag).
    pub proxy_lag_timeout: Duration,
    /// The rollout cases' lag band, in the cluster's clock (`--max-proxy-lag`, docs/design.md §5.3): a
    /// try within it of a phase change may show either side; a measured lag above it makes
    /// the case INCOMPLETE, never FAIL.
    pub max_proxy_lag: Duration,
    /// kube-proxy's mode, when known (else read from the cluster as `audit` does).
    pub proxy_mode: Option<ProxyMode>,
    /// How many nodes `P` probes from (every zone is covered even beyond it); `None`: every
    /// usable node (`--all-nodes`).
    pub max_nodes: Option<usize>,
    /// One API request's limit (`--request-timeout`); retries are bounded apart.
    pub request_timeout: Duration,
    /// Also run the external-traffic cases (`X2`, `X2s`, `Xt`, `X4`: `--external-cases`).
    pub external_cases: bool,
    /// The images of the run's pods (`--image`, `--curl-image`).
    pub images: crate::fixture::Images,
    /// The command-line flags that name the run's target (`--topology FILE`, `--profile
    /// NODE=PROFILE`, `--kubeconfig FILE`, `--context NAME`), repeated in every rerun command
    /// the advice prints, so a rerun verifies the same cluster.
    pub target_args: Vec<String>,
}

/// A `--max-nodes` for tests of small simulated clusters (the default is every usable node).
pub const DEFAULT_MAX_NODES: usize = 10;
