//! Reading a node's kube-proxy on `127.0.0.1:10249` (its `/metrics`, `/proxyMode`) with
//! one-shot hostNetwork curl pods whose output comes back through `pods/log`
//! (docs/design.md §5.2): the [`Reader`] `M`, the lag gate and the survey share.

use std::time::Duration;

use serde_json::Value;

use crate::env::{Env, pods_path};
use crate::error::VerifyError;
use crate::fixture;
use crate::ledger::Evidence;

/// The metric `M` reads.
pub const NO_LOCAL_ENDPOINTS: &str = "kubeproxy_sync_proxy_rules_no_local_endpoints_total";
/// The finding when `N3` has no kube-proxy metrics endpoint (docs/design.md §5.2).
pub const NO_METRICS: &str = "no kube-proxy metrics";

/// The sum over `ip_family` of [`NO_LOCAL_ENDPOINTS`] with `traffic_policy="internal"` in a
/// Prometheus text exposition; `None` when the text holds no `kubeproxy_` metric at all (not
/// kube-proxy's metrics). A kube-proxy that has not set the series yet counts 0.
pub fn no_local_internal(text: &str) -> Option<f64> {
    if !text.lines().any(|l| l.starts_with("kubeproxy_")) {
        return None;
    }
    let mut sum = 0.0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(NO_LOCAL_ENDPOINTS) else {
            continue;
        };
        let (labels, value) = match rest.strip_prefix('{') {
            Some(r) => match r.split_once('}') {
                Some((labels, value)) => (labels, value),
                None => continue,
            },
            None if rest.starts_with(' ') => ("", rest),
            None => continue,
        };
        // Before ip_family/traffic_policy labels existed the series was unlabelled (internal
        // and external together); only the internal series counts when labelled.
        if !labels.is_empty() && !labels.contains("traffic_policy=\"internal\"") {
            continue;
        }
        if let Some(v) = value
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        {
            sum += v;
        }
    }
    Some(sum)
}

/// Reads a node's kube-proxy (`127.0.0.1:10249`) with one-shot hostNetwork curl pods: the
/// pod's log, or why there is none.
pub(crate) struct Reader<'a, 'b> {
    pub(crate) env: &'a Env<'b>,
    /// The node read.
    pub(crate) node: String,
    /// Names the curl pods (`{prefix}-{seq}`).
    pub(crate) prefix: String,
    pub(crate) seq: usize,
    /// When the last read ended, in the cluster's clock (ms), when the pod said.
    pub(crate) read_at: Option<u128>,
}

impl Reader<'_, '_> {
    /// Creates a curl pod for `path`, waits for it to end and returns its log.
    pub(crate) async fn read(
        &mut self,
        path: &str,
        evidence: &mut Evidence,
    ) -> Result<Result<String, String>, VerifyError> {
        match self.start(path, evidence).await? {
            Ok(name) => self.finish(&name, path).await,
            Err(why) => Ok(Err(why)),
        }
    }

    /// Creates the curl pod of the next read of `path`: its name, or why it was refused.
    pub(crate) async fn start(
        &mut self,
        path: &str,
        evidence: &mut Evidence,
    ) -> Result<Result<String, String>, VerifyError> {
        let Env {
            opts, cluster, ns, ..
        } = *self.env;
        self.seq += 1;
        let name = format!("{}-{}", self.prefix, self.seq);
        let m = fixture::curl_pod(ns, &opts.run_id, &name, &self.node, path);
        let m = evidence.manifest(&m)?;
        if let Err(f) = cluster.json(http::Method::POST, &pods_path(ns), Some(&m)).await? {
            return Ok(Err(format!(
                "the hostNetwork curl pod {name} was not admitted: {} {}",
                f.code, f.message
            )));
        }
        Ok(Ok(name))
    }

    /// Waits for the curl pod `name` (reading `path`) to end; its log, or why there is none.
    pub(crate) async fn finish(
        &mut self,
        name: &str,
        path: &str,
    ) -> Result<Result<String, String>, VerifyError> {
        let Env {
            opts, cluster, ns, ..
        } = *self.env;
        let pod_path = format!("{}/{name}", pods_path(ns));
        let ended = cluster
            .wait_for(opts.pod_ready_timeout, Duration::from_millis(200), || async {
                let Some(p) = cluster.get(&pod_path).await? else {
                    return Ok(None);
                };
                let phase = p["status"]["phase"].as_str().unwrap_or_default().to_string();
                Ok(matches!(phase.as_str(), "Succeeded" | "Failed").then_some(p))
            })
            .await?;
        let Some(pod) = ended else {
            let _ = cluster.delete(&pod_path).await;
            return Ok(Err(format!(
                "the curl pod {name} did not finish within {:?}",
                opts.pod_ready_timeout
            )));
        };
        let (code, body) = cluster
            .call(http::Method::GET, &format!("{pod_path}/log"), None)
            .await?;
        let log = String::from_utf8_lossy(&body).into_owned();
        let _ = cluster.delete(&pod_path).await;
        if !(200..300).contains(&code) {
            return Ok(Err(format!(
                "reading the log of {name}: {}",
                crate::quote::http(code, &log)
            )));
        }
        // When the read happened, in the cluster's clock: the curl container's end.
        self.read_at = pod["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|c| c["state"]["terminated"]["finishedAt"].as_str())
            .and_then(crate::logs::unix_ms);
        let exit = exit_code(&pod);
        if pod["status"]["phase"] == "Failed" || exit.is_some_and(|c| c != 0) {
            return Ok(Err(format!(
                "curl http://{}{path} on {} exited {}: {}",
                fixture::KUBE_PROXY_METRICS,
                self.node,
                exit.map_or_else(|| "non-zero".to_string(), |c| c.to_string()),
                log.trim()
            )));
        }
        Ok(Ok(log))
    }

    /// Reads the metric until `done(value)` or the lag timeout; every text read is kept.
    pub(crate) async fn until(
        &mut self,
        evidence: &mut Evidence,
        texts: &mut Vec<String>,
        done: impl Fn(f64) -> bool,
    ) -> Result<Result<f64, String>, VerifyError> {
        let deadline = self.env.cluster.deadline(self.env.opts.proxy_lag_timeout);
        loop {
            let text = match self.read("/metrics", evidence).await? {
                Ok(t) => t,
                Err(why) => return Ok(Err(why)),
            };
            let Some(v) = no_local_internal(&text) else {
                texts.push(text);
                return Ok(Err(format!(
                    "{NO_METRICS}: the answer holds no kubeproxy_ metric"
                )));
            };
            texts.push(text);
            if done(v) || self.env.cluster.passed(&deadline).await {
                return Ok(Ok(v));
            }
            self.env.cluster.sleep(Duration::from_millis(500)).await;
        }
    }
}

fn exit_code(pod: &Value) -> Option<i64> {
    pod["status"]["containerStatuses"]
        .as_array()?
        .iter()
        .find_map(|c| c["state"]["terminated"]["exitCode"].as_i64())
}
