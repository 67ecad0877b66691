//! One verify run: roles, fixture, expectations, probes, judgement, decision, evidence.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use locality_live::LiveOptions;
use locality_model::matrix::{DataPlane, MatrixConfig};
use locality_model::objects::ClusterState;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use serde_json::{Value, json};

use crate::cases::{CATALOGUE, Case, Declared, Role};
use crate::cluster::Cluster;
use crate::decision::{CaseResult, Decision, decide};
use crate::expect::{Expected, for_cluster_ip};
use crate::fixture::{self, HTTP_PORT, RUN_LABEL, SERVICE_PORT};
use crate::judge::{Status, judge, tries_for};
use crate::ledger::{Evidence, Ledger};
use crate::probe::{Try, dial};
use crate::roles::{Roles, pick};

/// Why a run could not be carried out (as opposed to a decision).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The cluster could not be read.
    #[error(transparent)]
    Live(#[from] locality_live::LiveError),
    /// An API call failed.
    #[error("{what}: {message}")]
    Api {
        /// The call.
        what: String,
        /// The server's answer or the transport error.
        message: String,
    },
    /// The cluster cannot host a run.
    #[error("{0}")]
    Unsuitable(String),
    /// The evidence could not be written.
    #[error("writing evidence {path}: {message}")]
    Evidence {
        /// The file.
        path: String,
        /// The error.
        message: String,
    },
}

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
    /// kube-proxy's mode, when known (else read from the cluster as `audit` does).
    pub proxy_mode: Option<ProxyMode>,
}

/// One case's record in the ledger.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRecord {
    /// ID.
    pub id: String,
    /// A control.
    pub control: bool,
    /// Description.
    pub description: String,
    /// The guarantee checked.
    pub guarantee: String,
    /// Its documentation.
    pub docs: String,
    /// The client's node (`N0`: every client).
    pub client_node: Option<String>,
    /// The catalogue's declared outcome.
    pub declared: Declared,
    /// The model's expectation from the state read back.
    pub expected: Option<Expected>,
    /// The model's reason code.
    pub reason: String,
    /// Status.
    pub status: Status,
    /// Why (the judgement, or why not executed).
    pub why: String,
    /// Rounds of tries (more than one when re-probed).
    pub rounds: usize,
    /// Every try.
    pub tries: Vec<Try>,
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct VerifyOutcome {
    /// The decision.
    pub decision: Decision,
    /// Per case.
    pub cases: Vec<CaseRecord>,
    /// Advice printed with the decision.
    pub advice: Vec<String>,
    /// Cases to rerun.
    pub rerun: Vec<String>,
    /// Where the evidence is.
    pub evidence: PathBuf,
    /// The roles chosen.
    pub roles: Roles,
    /// The namespace used (kept with `keep`).
    pub namespace: String,
}

impl VerifyOutcome {
    /// The decision line, with the simulated-cluster caveat when it applies.
    pub fn decision_line(&self, simulated: bool) -> String {
        if simulated {
            format!(
                "{} (simulated cluster: a self-test of locality, not evidence about any real data plane)",
                self.decision.as_str()
            )
        } else {
            self.decision.as_str().to_string()
        }
    }
}

fn pods_path(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/pods")
}

async fn pod_condition(
    cluster: &Cluster,
    ns: &str,
    name: &str,
) -> Result<(bool, bool, Option<String>), VerifyError> {
    let Some(p) = cluster.get(&format!("{}/{name}", pods_path(ns))).await? else {
        return Ok((false, false, None));
    };
    let running = p["status"]["phase"] == "Running";
    let ready = p["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    Ok((running, ready, p["status"]["podIP"].as_str().map(str::to_string)))
}

async fn wait_pods(
    cluster: &Cluster,
    ns: &str,
    names: &[(String, bool)],
    timeout: Duration,
) -> Result<Option<BTreeMap<String, String>>, VerifyError> {
    cluster
        .wait_for(timeout, Duration::from_millis(200), || async {
            let mut ips = BTreeMap::new();
            for (name, want_ready) in names {
                let (running, ready, ip) = pod_condition(cluster, ns, name).await?;
                if !running || (*want_ready && !ready) {
                    return Ok(None);
                }
                ips.insert(name.clone(), ip.unwrap_or_default());
            }
            Ok(Some(ips))
        })
        .await
}

async fn slices(cluster: &Cluster, ns: &str, service: &str) -> Result<Value, VerifyError> {
    Ok(cluster
        .get(&format!(
            "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D{service}"
        ))
        .await?
        .unwrap_or(Value::Null))
}

/// (name, resourceVersion) of each slice: unchanged means settled.
fn slice_versions(list: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                s["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

async fn settle(cluster: &Cluster, ns: &str, service: &str, settle: Duration) -> Result<Value, VerifyError> {
    let mut last = slice_versions(&slices(cluster, ns, service).await?);
    for _ in 0..30 {
        tokio::time::sleep(settle).await;
        let list = slices(cluster, ns, service).await?;
        let now = slice_versions(&list);
        if now == last {
            return Ok(list);
        }
        last = now;
    }
    slices(cluster, ns, service).await
}

/// The declared outcome in pods, for comparing with the model's.
fn declared_expectation(case: &Case) -> Expected {
    match case.declared {
        Declared::AnsweredBy(roles) => {
            let mut pods: Vec<String> = roles
                .iter()
                .map(|r| fixture::backend_name(case.setup.group, *r, true))
                .collect();
            pods.sort();
            Expected::Deliver { pods }
        }
        Declared::Timeout => Expected::Drop,
        Declared::Refused => Expected::Reject,
    }
}

fn matrix_config(snap: &locality_live::LiveSnapshot, mode: Option<ProxyMode>) -> MatrixConfig {
    let kube = snap.server_version.map_or(KubeVersion::NEWEST, |v| {
        v.clamp(KubeVersion::OLDEST, KubeVersion::NEWEST)
    });
    let data_plane = match mode {
        Some(m) => DataPlane::KubeProxy(Some(m)),
        None => snap.data_plane.clone(),
    };
    MatrixConfig {
        kube_version: kube,
        kube_proxy_version: snap.kube_proxy_version.unwrap_or(kube),
        node_proxy_versions: Default::default(),
        data_plane,
        derive: false,
    }
}

struct Probing<'a> {
    cluster: &'a Cluster,
    ns: &'a str,
    opts: &'a VerifyOptions,
}

impl Probing<'_> {
    async fn round(&self, client: &str, host: &str, port: u16, n: usize) -> Result<Vec<Try>, VerifyError> {
        let mut tries = Vec::with_capacity(n);
        for _ in 0..n {
            tries.push(dial(self.cluster, self.ns, client, host, port).await?);
        }
        Ok(tries)
    }

    /// Probes until the judgement is stable: positive expectations are re-probed until they
    /// pass (kube-proxy lag); a failure must reproduce once, else it is INCOMPLETE.
    async fn probe(
        &self,
        expected: &Expected,
        client: &str,
        host: &str,
        port: u16,
    ) -> Result<(Status, String, usize, Vec<Try>), VerifyError> {
        let n = tries_for(expected);
        let mut all = Vec::new();
        let mut rounds = 0;
        let deadline = tokio::time::Instant::now() + self.opts.proxy_lag_timeout;
        loop {
            let tries = self.round(client, host, port, n).await?;
            rounds += 1;
            let (status, why) = judge(expected, &tries);
            all.extend(tries);
            let positive = matches!(expected, Expected::Deliver { .. });
            match status {
                Status::Pass => return Ok((status, why, rounds, all)),
                _ if positive && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Status::Fail => {
                    // The automatic retry.
                    tokio::time::sleep(self.opts.settle).await;
                    let again = self.round(client, host, port, n).await?;
                    rounds += 1;
                    let (s2, why2) = judge(expected, &again);
                    all.extend(again);
                    return Ok(match s2 {
                        Status::Fail => (Status::Fail, format!("{why}; reproduced: {why2}"), rounds, all),
                        _ => (
                            Status::Incomplete,
                            format!("a violation that did not reproduce: {why}; retry: {why2}"),
                            rounds,
                            all,
                        ),
                    });
                }
                _ => return Ok((status, why, rounds, all)),
            }
        }
    }
}

fn record(case: &Case, client_node: Option<&str>) -> CaseRecord {
    CaseRecord {
        id: case.id.to_string(),
        control: case.control,
        description: case.description.to_string(),
        guarantee: case.guarantee.to_string(),
        docs: case.docs.to_string(),
        client_node: client_node.map(str::to_string),
        declared: case.declared,
        expected: None,
        reason: String::new(),
        status: Status::NotExecuted,
        why: String::new(),
        rounds: 0,
        tries: Vec::new(),
    }
}

/// Runs the playbook against the cluster `opts.live` points at.
///
/// # Errors
/// When the cluster cannot be reached or cannot host a run (fewer than two usable nodes, a
/// namespace of that name the tool did not create), or the evidence cannot be written. A
/// failed case is not an error: it is in the decision.
pub async fn verify(opts: &VerifyOptions) -> Result<VerifyOutcome, VerifyError> {
    let ns = format!("locality-verify-{}", opts.run_id);
    let (client, target) = locality_live::client(&opts.live).await?;
    let cluster = Cluster::new(client, target.server.clone());
    let read = |namespace: &str| {
        let mut live = opts.live.clone();
        live.namespace = Some(namespace.to_string());
        live.all_namespaces = false;
        live
    };
    let first = locality_live::snapshot(&read(&ns), None).await?;
    let roles = pick(&first.state.nodes);
    if roles.node(Role::N1).is_none() || roles.node(Role::N2).is_none() {
        return Err(VerifyError::Unsuitable(format!(
            "a run needs two Ready, untainted Linux nodes; usable: {} (left out: {})",
            roles.nodes.len(),
            roles.excluded.join("; ")
        )));
    }
    let mut evidence = Evidence::create(&opts.evidence)?;
    evidence.versions(&first, opts)?;
    evidence.nodes(&first.state, &roles)?;

    // The namespace: refuse one the tool did not create.
    let ns_path = format!("/api/v1/namespaces/{ns}");
    if let Some(existing) = cluster.get(&ns_path).await? {
        if existing["metadata"]["labels"][RUN_LABEL] != json!(opts.run_id) {
            return Err(VerifyError::Unsuitable(format!(
                "namespace {ns} exists without the label {RUN_LABEL}={}: refusing to touch it",
                opts.run_id
            )));
        }
    } else {
        let manifest = fixture::namespace(&ns, &opts.run_id);
        evidence.manifest(&manifest)?;
        cluster.create("/api/v1/namespaces", &manifest).await?;
    }
    let result = run_cases(opts, &cluster, &ns, &roles, &read, &mut evidence).await;
    if !opts.keep {
        let _ = cluster.delete(&ns_path).await;
    }
    let cases = result?;
    let results: Vec<CaseResult<'_>> = cases
        .iter()
        .map(|c| CaseResult {
            id: &c.id,
            control: c.control,
            status: c.status,
            hostname_mismatch: hostname_mismatch_suspected(c),
        })
        .collect();
    let (decision, rerun, advice) = decide(&results);
    let outcome = VerifyOutcome {
        decision,
        cases,
        advice,
        rerun,
        evidence: opts.evidence.clone(),
        roles,
        namespace: ns,
    };
    Ledger::write(&mut evidence, &outcome, opts)?;
    Ok(outcome)
}

async fn run_cases(
    opts: &VerifyOptions,
    cluster: &Cluster,
    ns: &str,
    roles: &Roles,
    read: &impl Fn(&str) -> LiveOptions,
    evidence: &mut Evidence,
) -> Result<Vec<CaseRecord>, VerifyError> {
    let selected: Vec<&Case> = CATALOGUE
        .iter()
        .filter(|c| opts.only.is_empty() || opts.only.iter().any(|o| o.eq_ignore_ascii_case(c.id)))
        .collect();
    // Clients on the role nodes.
    let mut clients = Vec::new();
    for role in [Role::N1, Role::N2, Role::N3] {
        if let Some(node) = roles.node(role) {
            let m = fixture::client(ns, &opts.run_id, role, node);
            evidence.manifest(&m)?;
            cluster.create(&pods_path(ns), &m).await?;
            clients.push((fixture::client_name(role), true));
        }
    }
    if wait_pods(cluster, ns, &clients, opts.pod_ready_timeout)
        .await?
        .is_none()
    {
        return Err(VerifyError::Unsuitable(format!(
            "the client pods did not become Ready within {:?}",
            opts.pod_ready_timeout
        )));
    }
    evidence.preflight(cluster, ns, &clients).await?;

    let mut records = Vec::new();
    let mut groups: Vec<&'static str> = Vec::new();
    for c in &selected {
        if !groups.contains(&c.setup.group) {
            groups.push(c.setup.group);
        }
    }
    for group in groups {
        let cases: Vec<&Case> = selected
            .iter()
            .copied()
            .filter(|c| c.setup.group == group)
            .collect();
        let setup = cases[0].setup;
        let needed: Vec<Role> = setup
            .backends
            .iter()
            .chain(setup.unready)
            .copied()
            .chain(cases.iter().map(|c| c.client))
            .collect();
        if let Some(missing) = needed.iter().find(|r| roles.node(**r).is_none()) {
            for c in cases {
                let mut r = record(c, None);
                r.why = format!("no node for role {} (see 01-nodes.yaml)", missing.as_str());
                records.push(r);
            }
            continue;
        }
        // Backends and the Service.
        let mut pods = Vec::new();
        for (list, ready) in [(setup.backends, true), (setup.unready, false)] {
            for role in list {
                let m = fixture::backend(
                    ns,
                    &opts.run_id,
                    group,
                    *role,
                    roles.node(*role).unwrap_or_default(),
                    ready,
                );
                evidence.manifest(&m)?;
                cluster.create(&pods_path(ns), &m).await?;
                pods.push((fixture::backend_name(group, *role, ready), ready));
            }
        }
        if setup.service {
            let m = fixture::service(ns, &opts.run_id, &setup);
            evidence.manifest(&m)?;
            cluster
                .create(&format!("/api/v1/namespaces/{ns}/services"), &m)
                .await?;
        }
        let Some(ips) = wait_pods(cluster, ns, &pods, opts.pod_ready_timeout).await? else {
            for c in cases {
                let mut r = record(c, None);
                r.status = Status::Incomplete;
                r.why = format!(
                    "the backends did not become Ready within {:?}",
                    opts.pod_ready_timeout
                );
                records.push(r);
            }
            continue;
        };
        if setup.delete_backends {
            for (name, _) in &pods {
                cluster.delete(&format!("{}/{name}", pods_path(ns))).await?;
            }
            let gone = cluster
                .wait_for(opts.pod_ready_timeout, Duration::from_millis(200), || async {
                    for (name, _) in &pods {
                        if cluster.get(&format!("{}/{name}", pods_path(ns))).await?.is_some() {
                            return Ok(None);
                        }
                    }
                    Ok(Some(()))
                })
                .await?;
            if gone.is_none() {
                return Err(VerifyError::Unsuitable("deleted backends did not go away".into()));
            }
        }
        let slices_now = if setup.service {
            settle(cluster, ns, group, opts.settle).await?
        } else {
            Value::Null
        };
        let snap = locality_live::snapshot(&read(ns), None).await?;
        let config = matrix_config(&snap, opts.proxy_mode);
        let probing = Probing { cluster, ns, opts };
        for c in cases {
            let node = roles.node(c.client).unwrap_or_default().to_string();
            let mut r = record(c, Some(&node));
            if !setup.service {
                // N0: every client dials each backend by pod IP.
                let mut why = Vec::new();
                let mut status = Status::Pass;
                for (client, _) in &clients {
                    for (pod, _) in &pods {
                        let expected = Expected::Deliver {
                            pods: vec![pod.clone()],
                        };
                        let ip = ips.get(pod).cloned().unwrap_or_default();
                        let (s, w, rounds, tries) = probing.probe(&expected, client, &ip, HTTP_PORT).await?;
                        r.rounds += rounds;
                        r.tries.extend(tries);
                        if s != Status::Pass {
                            status = status.max(s);
                            why.push(format!("{client} → {pod}: {w}"));
                        }
                    }
                }
                r.client_node = None;
                r.expected = Some(declared_expectation(c));
                r.reason = "pod-ip".into();
                r.status = status;
                r.why = if why.is_empty() {
                    format!(
                        "{} clients reached {} backends by pod IP",
                        clients.len(),
                        pods.len()
                    )
                } else {
                    why.join("; ")
                };
            } else {
                let (expected, reason) = for_cluster_ip(&snap.state, config.clone(), ns, group, &node);
                r.reason = reason;
                let declared = declared_expectation(c);
                let svc_ip = cluster_ip(&snap.state, ns, group);
                if expected != declared {
                    r.status = Status::Incomplete;
                    r.why = format!(
                        "the model expects {} but the catalogue declares {}: the state read back is not the case's setup",
                        describe(&expected),
                        describe(&declared)
                    );
                } else {
                    let client = fixture::client_name(c.client);
                    let (s, w, rounds, tries) =
                        probing.probe(&expected, &client, &svc_ip, SERVICE_PORT).await?;
                    r.status = s;
                    r.why = w;
                    r.rounds = rounds;
                    r.tries = tries;
                }
                r.expected = Some(expected);
            }
            evidence.case(&r, &slices_now, &snap.state)?;
            records.push(r);
        }
    }
    Ok(records)
}

/// A failed case that expected delivery by its own node's endpoints only (a local Ready
/// endpoint exists) yet saw every try time out: the signature of a kube-proxy that does not
/// know its node by the Node's name (`--hostname-override`), so nothing is local to it.
fn hostname_mismatch_suspected(c: &CaseRecord) -> bool {
    let local_only = match (&c.expected, c.declared) {
        (Some(Expected::Deliver { pods }), Declared::AnsweredBy(roles)) => {
            !pods.is_empty() && roles.len() == 1 && c.client_node.is_some() && !c.control
        }
        _ => false,
    };
    local_only
        && c.status == Status::Fail
        && !c.tries.is_empty()
        && c.tries.iter().all(|t| t.seen == crate::probe::Seen::Timeout)
}

fn cluster_ip(state: &ClusterState, ns: &str, name: &str) -> String {
    state
        .services
        .iter()
        .find(|s| s.meta.namespace == ns && s.meta.name == name)
        .and_then(|s| s.cluster_ips.first())
        .map(|ip| ip.to_string())
        .unwrap_or_default()
}

/// A short description of an expectation.
pub fn describe(e: &Expected) -> String {
    match e {
        Expected::Deliver { pods } => format!("delivered by {}", pods.join(", ")),
        Expected::Drop => "dropped (timeout)".into(),
        Expected::Reject => "rejected (refused)".into(),
        Expected::Unknown { why } => format!("unknown ({why})"),
    }
}

/// A run ID: the current time in seconds, base 36 (short, sortable, DNS-safe).
pub fn new_run_id() -> String {
    let mut n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut s = Vec::new();
    while n > 0 {
        s.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}
