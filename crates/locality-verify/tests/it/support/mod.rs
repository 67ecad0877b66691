//! Shared by the verify test binaries: the options of a run against a simulated cluster
//! served by `locality_apiserver` (through its kubeconfig), with short test timings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use locality_live::LiveOptions;
use locality_verify::VerifyOptions;

/// Every case, a fresh run id, evidence in `evidence`, not told it is simulated (the
/// target's version says so); callers override what their test is about.
pub fn options(kubeconfig: &Path, evidence: PathBuf) -> VerifyOptions {
    VerifyOptions {
        live: LiveOptions {
            kubeconfig: Some(kubeconfig.to_path_buf()),
            ..LiveOptions::default()
        },
        only: Vec::new(),
        evidence,
        keep: false,
        run_id: locality_verify::new_run_id(),
        simulated: false,
        owner: "test".into(),
        // The CLI's values for the simulated cluster, in its clock (a run waits in the
        // cluster's time).
        pod_ready_timeout: Duration::from_secs(60),
        settle: Duration::from_secs(1),
        proxy_lag_timeout: Duration::from_secs(30),
        max_proxy_lag: Duration::from_secs(5),
        proxy_mode: None,
        max_nodes: Some(locality_verify::DEFAULT_MAX_NODES),
        request_timeout: locality_verify::cluster::DEFAULT_REQUEST_TIMEOUT,
        external_cases: false,
        images: Default::default(),
        target_args: Vec::new(),
    }
}
