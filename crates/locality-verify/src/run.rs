//! One verify run: roles, fixture, expectations, probes, judgement, decision, evidence.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use locality_live::LiveOptions;
use locality_model::matrix::{DataPlane, MatrixConfig};
use locality_model::objects::{ClusterState, IpFamily};
use locality_model::proxy::{Destination, ProxyMode, Source};
use locality_model::version::KubeVersion;
use serde_json::{Value, json};

use crate::cases::{CATALOGUE, Case, Client, Declared, Dial, Role, Setup};
use crate::cluster::Cluster;
use crate::decision::RepairKind;
use crate::decision::{Decision, decide};
use crate::diagnose::{Hypothesis, NodeDataPlane, NodeJudgement};
use crate::expect::{Expected, Query, for_route};
use crate::fixture::{self, HOST_HTTP_PORT, HTTP_PORT, RUN_LABEL, SERVICE_PORT};
use crate::judge::{Status, judge, tries_for};
use crate::ledger::{Evidence, Ledger};
use crate::probe::{Probe, Try, dial};
use crate::roles::{Roles, pick, sample};

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
    /// The rollout cases' lag band, in the cluster's clock (`--max-proxy-lag`, SPEC §5.3): a
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
}

/// The default of [`VerifyOptions::max_nodes`] (`--max-nodes`, SPEC §5.4 `P`).
pub const DEFAULT_MAX_NODES: usize = 10;

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
    /// Per client node: its status and, for a failure, the repair hypotheses checked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeJudgement>,
    /// kube-proxy on the client node was slower than `--max-proxy-lag`, twice: the case is
    /// INCOMPLETE, never FAIL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag_over_limit: Option<LagOverLimit>,
}

/// A measured kube-proxy lag over the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LagOverLimit {
    /// Measured, in ms (cluster clock).
    pub measured_ms: u64,
    /// `--max-proxy-lag`, in ms.
    pub limit_ms: u64,
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
    /// The run was interrupted (Ctrl-C): the cases it did not finish are NOT_EXECUTED
    /// (`interrupted`), the namespace was deleted all the same (unless `keep`).
    pub interrupted: bool,
    /// `--only`: the cases the run selected (the controls included); the decision is partial.
    pub partial: Option<Vec<String>>,
    /// The repairs the evidence supports (REPAIR).
    pub repairs: Vec<crate::decision::Repair>,
    /// Nodes whose kube-proxy lagged beyond the limit.
    pub lagging: Vec<crate::decision::Lag>,
    /// What each node's kube-proxy reported (mode, version).
    pub planes: BTreeMap<String, crate::diagnose::NodeDataPlane>,
    /// The target is a simulated cluster (asked for, or detected from its version).
    pub simulated: bool,
}

impl VerifyOutcome {
    /// The decision line: `PARTIAL` for an `--only` run, with the simulated-cluster caveat
    /// when it applies.
    pub fn decision_line(&self, simulated: bool) -> String {
        crate::decision::decision_line(self.decision, self.partial.as_deref(), simulated)
    }
}

pub(crate) fn pods_path(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/pods")
}

pub(crate) async fn pod_condition(
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

pub(crate) async fn wait_pods(
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

pub(crate) async fn slices(cluster: &Cluster, ns: &str, service: &str) -> Result<Value, VerifyError> {
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

pub(crate) async fn settle(
    cluster: &Cluster,
    ns: &str,
    service: &str,
    settle: Duration,
) -> Result<Value, VerifyError> {
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
/// The declared outcome as an expectation. A declared timeout (kube-proxy's DROP for a Local
/// policy without a local endpoint) is a refusal on IPVS, where the virtual server has no
/// real server and the kernel answers port unreachable (research: upstream-semantics §2.3).
fn declared_expectation_in(case: &Case, roles: &Roles, ipvs: bool) -> Expected {
    match declared_expectation(case, roles) {
        Expected::Drop if ipvs => Expected::Reject,
        e => e,
    }
}

/// The declared outcome in pods; on a cluster without `N2` (two usable nodes) the backends
/// the case would have there are left out.
fn declared_expectation(case: &Case, present: &Roles) -> Expected {
    match case.declared {
        Declared::AnsweredBy(roles) => {
            let mut pods: Vec<String> = roles
                .iter()
                .filter(|r| present.node(**r).is_some())
                .map(|r| fixture::backend_name(case.setup.group, *r, true))
                .collect();
            pods.sort();
            Expected::Deliver { pods }
        }
        Declared::Timeout => Expected::Drop,
        Declared::Refused => Expected::Reject,
        Declared::OwnNode => Expected::Unknown {
            why: "declared per client node (see the case's per-node expectations)".into(),
        },
        Declared::Rollout => Expected::Unknown {
            why: "judged per phase of the rollout (see timeline.json)".into(),
        },
        Declared::NoLocalEndpointsCounted => Expected::Unknown {
            why: "not probed: N3's kube-proxy metrics are read".into(),
        },
    }
}

/// `OwnNode` for a client on `node`: delivered by the Ready pods of the group's workload on
/// that node, as read back.
fn own_node_expectation(state: &ClusterState, ns: &str, group: &str, node: &str) -> Expected {
    let mut pods: Vec<String> = state
        .pods
        .iter()
        .filter(|p| {
            p.meta.namespace == ns
                && p.spec.node_name == node
                && p.ready
                && p.meta.deletion_timestamp.is_none()
                && p.meta.labels.get("app").map(String::as_str) == Some(group)
        })
        .map(|p| p.meta.name.clone())
        .collect();
    pods.sort();
    if pods.is_empty() {
        return Expected::Unknown {
            why: format!("no Ready pod of {group} on {node} in the state read back"),
        };
    }
    Expected::Deliver { pods }
}

pub(crate) fn matrix_config(snap: &locality_live::LiveSnapshot, mode: Option<ProxyMode>) -> MatrixConfig {
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

/// Passing rounds a positive expectation needs after its first pass (SPEC §5.3).
pub const CONFIRM_ROUNDS: usize = 2;

struct Probing<'a> {
    cluster: &'a Cluster,
    ns: &'a str,
    opts: &'a VerifyOptions,
    roles: &'a Roles,
    planes: &'a BTreeMap<String, NodeDataPlane>,
}

impl Probing<'_> {
    /// One round: `n` tries, each its own dial, sent together (the API layer bounds how many
    /// requests are in flight).
    async fn round(&self, probe: &Probe, n: usize) -> Result<Vec<Try>, VerifyError> {
        futures_util::future::join_all((0..n).map(|_| dial(self.cluster, self.ns, probe)))
            .await
            .into_iter()
            .collect()
    }

    /// Probes until the judgement is stable: positive expectations are re-probed until they
    /// pass (kube-proxy lag) and must then pass [`CONFIRM_ROUNDS`] more rounds in a row (SPEC
    /// §5.3: a data plane that spreads over the wrong endpoints passes one round of a
    /// single-responder expectation with probability 2^-6, not three in a row); a failure
    /// must reproduce once, else it is INCOMPLETE.
    async fn probe(
        &self,
        expected: &Expected,
        probe: &Probe,
    ) -> Result<(Status, String, usize, Vec<Try>), VerifyError> {
        let n = tries_for(expected);
        let mut all = Vec::new();
        let mut rounds = 0;
        let deadline = tokio::time::Instant::now() + self.opts.proxy_lag_timeout;
        let positive = matches!(expected, Expected::Deliver { .. });
        // The tries of the current run of consecutive passing rounds.
        let mut passing: Vec<Try> = Vec::new();
        let mut passes = 0;
        loop {
            let tries = self.round(probe, n).await?;
            rounds += 1;
            let (status, why) = judge(expected, &tries);
            all.extend(tries.iter().cloned());
            match status {
                Status::Pass if !positive => return Ok((status, why, rounds, all)),
                Status::Pass => {
                    passes += 1;
                    passing.extend(tries);
                    if passes > CONFIRM_ROUNDS {
                        let (_, why) = judge(expected, &passing);
                        return Ok((
                            Status::Pass,
                            format!("{why} ({passes} consecutive rounds)"),
                            rounds,
                            all,
                        ));
                    }
                }
                // A round without a wrong responder is kube-proxy's lag (nothing programmed
                // yet for the case's new Service): re-probed. An answer from a pod the case
                // does not allow is never lag (each case has its own Service): it goes to
                // the retry that confirms it.
                _ if positive
                    && !crate::judge::wrong_responder(expected, &tries)
                    && tokio::time::Instant::now() < deadline =>
                {
                    passes = 0;
                    passing.clear();
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Status::Fail => {
                    // The automatic retry.
                    tokio::time::sleep(self.opts.settle).await;
                    let again = self.round(probe, n).await?;
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

pub(crate) fn record(case: &Case, client_node: Option<&str>) -> CaseRecord {
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
        nodes: Vec::new(),
        lag_over_limit: None,
    }
}

/// The cases `opts.only` selects (all when empty), in catalogue order.
/// The controls always run: a partial run is still judged against a working environment.
fn selected_cases(opts: &VerifyOptions) -> Vec<&'static Case> {
    CATALOGUE
        .iter()
        .filter(|c| {
            c.control || opts.only.is_empty() || opts.only.iter().any(|o| o.eq_ignore_ascii_case(c.id))
        })
        .collect()
}

/// `--only`: the IDs the run selects, controls included (`None`: a full run).
fn partial(opts: &VerifyOptions) -> Option<Vec<String>> {
    (!opts.only.is_empty()).then(|| selected_cases(opts).iter().map(|c| c.id.to_string()).collect())
}

/// Why a case the API cut short is NOT_EXECUTED (followed by the error).
pub const CUT_SHORT: &str = "cut short: the run could not go on";

/// Runs the playbook against the cluster `opts.live` points at.
///
/// # Errors
/// When the cluster cannot be reached or cannot host a run (fewer than two usable nodes, a
/// namespace of that name the tool did not create), or the evidence cannot be written. A
/// failed case is not an error: it is in the decision.
pub async fn verify(opts: &VerifyOptions) -> Result<VerifyOutcome, VerifyError> {
    verify_until(opts, std::future::pending()).await
}

/// Why a case the run did not finish is NOT_EXECUTED.
pub const INTERRUPTED: &str =
    "interrupted: the run was stopped (Ctrl-C or SIGTERM) before this case finished";

/// [`verify`], stopped when `interrupt` completes (the CLI passes Ctrl-C): the case in
/// progress is abandoned, the namespace is deleted as at the normal end (unless `keep`), and
/// the evidence of what was done is written, the cases not finished being NOT_EXECUTED
/// ([`INTERRUPTED`]) and the outcome marked [`VerifyOutcome::interrupted`].
///
/// # Errors
/// As [`verify`].
pub async fn verify_until(
    opts: &VerifyOptions,
    interrupt: impl std::future::Future<Output = ()>,
) -> Result<VerifyOutcome, VerifyError> {
    verify_watching(opts, interrupt, &|_| {}).await
}

/// [`verify_until`], calling `on_case` with each case's record as soon as it is judged (the
/// CLI prints one line per case as the run goes).
///
/// # Errors
/// As [`verify`].
pub async fn verify_watching(
    opts: &VerifyOptions,
    interrupt: impl std::future::Future<Output = ()>,
    on_case: &dyn Fn(&CaseRecord),
) -> Result<VerifyOutcome, VerifyError> {
    let ns = format!("locality-verify-{}", opts.run_id);
    let (client, target) = locality_live::client(&opts.live).await?;
    let cluster = Cluster::new(client, target.server.clone())
        .with_request_timeout(opts.request_timeout)
        .with_kubectl_target(opts.live.kubeconfig.as_deref(), target.context.as_deref());
    let read = |namespace: &str| {
        let mut live = opts.live.clone();
        live.namespace = Some(namespace.to_string());
        live.all_namespaces = false;
        live
    };
    let first = locality_live::snapshot(&read(&ns), None).await?;
    // A target that is `locality sim serve` says so in its version: labelled simulated
    // everywhere, whatever kubeconfig led to it.
    let detected;
    let opts = if first.simulated && !opts.simulated {
        detected = VerifyOptions {
            simulated: true,
            ..opts.clone()
        };
        &detected
    } else {
        opts
    };
    let roles = pick(&first.state.nodes);
    let sampled = sample(&first.state.nodes, &roles, opts.max_nodes);
    let mut evidence = Evidence::create(&opts.evidence)?;
    evidence.versions(&first, opts, &BTreeMap::new())?;
    evidence.nodes(&first.state, &roles)?;
    let kube = first.server_version.map_or(KubeVersion::NEWEST, |v| {
        v.clamp(KubeVersion::OLDEST, KubeVersion::NEWEST)
    });
    let mut planes: BTreeMap<String, NodeDataPlane> = BTreeMap::new();
    let mut cases = Vec::new();
    let mut interrupted = false;
    let mut cut_short: Option<String> = None;
    let mut cleanup: Option<String> = None;
    if let Some(lacking) = roles.lacking() {
        // Too small for the contract: nothing is created, every case says why.
        for c in selected_cases(opts) {
            let mut r = record(c, None);
            r.why = lacking.clone();
            cases.push(r);
        }
    } else {
        // The namespace: refuse one the tool did not create. It is `privileged` (Pod
        // Security): every node's kube-proxy is read by hostNetwork curl pods, and the host
        // cases dial from hostNetwork clients.
        let ns_path = format!("/api/v1/namespaces/{ns}");
        let existing = cluster.get(&ns_path).await?;
        if let Some(existing) = &existing
            && existing["metadata"]["labels"][RUN_LABEL] != json!(opts.run_id)
        {
            return Err(VerifyError::Unsuitable(format!(
                "namespace {ns} exists without the label {RUN_LABEL}={}: refusing to touch it",
                opts.run_id
            )));
        }
        // The nodes read: the role nodes and the sampled ones.
        let mut read_nodes: Vec<String> = sampled.clone();
        for n in roles.nodes.values() {
            if !read_nodes.contains(n) {
                read_nodes.push(n.clone());
            }
        }
        // From the namespace's creation on, the run races `interrupt`; the records of the
        // cases finished survive it.
        let work = async {
            if existing.is_none() {
                let manifest = fixture::namespace(&ns, &opts.run_id, true);
                evidence.manifest(&manifest)?;
                cluster.create("/api/v1/namespaces", &manifest).await?;
            }
            let no_planes = BTreeMap::new();
            let reading = Env {
                opts,
                cluster: &cluster,
                ns: &ns,
                roles: &roles,
                sampled: &sampled,
                planes: &no_planes,
            };
            planes = crate::survey::survey(&reading, &read_nodes, &mut evidence).await?;
            evidence.versions(&first, opts, &planes)?;
            let env = Env {
                planes: &planes,
                ..reading
            };
            run_cases(&env, &read, &mut evidence, &mut cases, on_case).await
        };
        let result = tokio::select! {
            biased;
            () = interrupt => { interrupted = true; Ok(()) }
            r = work => r,
        };
        // The one cleanup path: the normal end, a failure and an interruption; a namespace
        // that cannot be deleted is named with the command that deletes it.
        if !opts.keep
            && let Err(why) = cluster.delete_namespace_or_explain(&ns).await
        {
            cleanup = Some(why);
        }
        match result {
            Ok(()) => {}
            // The evidence cannot be written: nothing to sign, say so.
            Err(e @ VerifyError::Evidence { .. }) => return Err(e),
            // Anything else (the API) cuts the run short: the ledger keeps what was done.
            Err(e) => cut_short = Some(format!("{CUT_SHORT}: {e}")),
        }
        let why = if interrupted {
            Some(INTERRUPTED.to_string())
        } else {
            cut_short.clone()
        };
        if let Some(why) = why {
            for c in selected_cases(opts) {
                if !cases.iter().any(|r| r.id == c.id) {
                    let mut r = record(c, None);
                    r.why = why.clone();
                    cases.push(r);
                }
            }
        }
    }
    cases.sort_by_key(|r| CATALOGUE.iter().position(|c| c.id == r.id));
    let findings = crate::diagnose::findings(&cases, partial(opts), kube, &planes);
    let mut decided = decide(&findings);
    if let Some(why) = cleanup {
        decided.advice.push(why);
    }
    let outcome = VerifyOutcome {
        decision: decided.decision,
        cases,
        advice: decided.advice,
        rerun: decided.rerun,
        evidence: opts.evidence.clone(),
        roles,
        namespace: ns,
        interrupted,
        partial: decided.partial,
        repairs: findings.repairs,
        lagging: findings.lagging,
        planes,
        simulated: opts.simulated,
    };
    Ledger::write(&mut evidence, &outcome, opts)?;
    Ok(outcome)
}

/// What every step of a run reads.
pub(crate) struct Env<'a> {
    pub(crate) opts: &'a VerifyOptions,
    pub(crate) cluster: &'a Cluster,
    pub(crate) ns: &'a str,
    pub(crate) roles: &'a Roles,
    /// The nodes `P` and `Pn` probe from.
    pub(crate) sampled: &'a [String],
    /// What each node's kube-proxy reported (mode, version).
    pub(crate) planes: &'a BTreeMap<String, NodeDataPlane>,
}

/// The clients of a run: pod clients by node, hostNetwork clients by role (or why not).
struct Clients {
    /// (role, client pod) on the pod network, created up front (`N0` probes from each).
    pods: Vec<(Role, String)>,
    /// hostNetwork client per role: its pod, or why its cases cannot run.
    hosts: BTreeMap<Role, Result<String, String>>,
}

impl Clients {
    /// The pod client on `node`, if one was created up front.
    fn on_node(&self, roles: &Roles, node: &str) -> Option<&str> {
        self.pods
            .iter()
            .find(|(r, _)| roles.node(*r) == Some(node))
            .map(|(_, c)| c.as_str())
    }
}

/// Creates the clients: pods on N1, N2, N3 (and N1z when a case dials from it), Ready or the
/// run cannot go on; hostNetwork pods on the roles host cases need, whose failure (admission,
/// a port taken on the node) only makes those cases NOT_EXECUTED.
async fn create_clients(
    env: &Env<'_>,
    selected: &[&Case],
    evidence: &mut Evidence,
) -> Result<Clients, VerifyError> {
    let Env {
        opts,
        cluster,
        ns,
        roles,
        ..
    } = *env;
    let mut pod_roles = vec![Role::N1, Role::N2, Role::N3];
    if selected.iter().any(|c| c.client == Client::Pod(Role::N1z)) {
        pod_roles.push(Role::N1z);
    }
    let mut pods = Vec::new();
    for role in pod_roles {
        if let Some(node) = roles.node(role) {
            let m = fixture::client(ns, &opts.run_id, role, node);
            evidence.manifest(&m)?;
            cluster.create(&pods_path(ns), &m).await?;
            pods.push((role, fixture::client_name(role)));
        }
    }
    let mut hosts = BTreeMap::new();
    let mut pending = Vec::new();
    for c in selected {
        let Client::Host(role) = c.client else { continue };
        let Some(node) = roles.node(role) else { continue };
        if hosts.contains_key(&role) {
            continue;
        }
        let m = fixture::host_client(ns, &opts.run_id, role, node);
        evidence.manifest(&m)?;
        let name = fixture::host_client_name(role);
        match cluster.json(http::Method::POST, &pods_path(ns), Some(&m)).await? {
            Ok(_) => {
                hosts.insert(role, Ok(name.clone()));
                pending.push((role, name));
            }
            Err(f) => {
                hosts.insert(
                    role,
                    Err(format!(
                        "the hostNetwork client {name} was not admitted: {} {}",
                        f.code, f.message
                    )),
                );
            }
        }
    }
    let names: Vec<(String, bool)> = pods.iter().map(|(_, n)| (n.clone(), true)).collect();
    if wait_pods(cluster, ns, &names, opts.pod_ready_timeout)
        .await?
        .is_none()
    {
        return Err(VerifyError::Unsuitable(format!(
            "the client pods did not become Ready within {:?}",
            opts.pod_ready_timeout
        )));
    }
    let host_names: Vec<(String, bool)> = pending.iter().map(|(_, n)| (n.clone(), true)).collect();
    if !host_names.is_empty()
        && wait_pods(cluster, ns, &host_names, opts.pod_ready_timeout)
            .await?
            .is_none()
    {
        for (role, name) in &pending {
            let (running, ready, _) = pod_condition(cluster, ns, name).await?;
            if !(running && ready) {
                hosts.insert(
                    *role,
                    Err(format!(
                        "the hostNetwork client {name} did not become Ready within {:?} (is port {HOST_HTTP_PORT} free on its node?)",
                        opts.pod_ready_timeout
                    )),
                );
            }
        }
    }
    Ok(Clients { pods, hosts })
}

/// Why `case` cannot run with these roles and clients, if it cannot.
fn not_executable(case: &Case, roles: &Roles, clients: &Clients) -> Option<String> {
    let dialled = match case.dial {
        Dial::NodePort(r) => Some(r),
        Dial::ClusterIp => None,
    };
    if let Some(missing) = case
        .client
        .role()
        .into_iter()
        .chain(dialled)
        .find(|r| roles.node(*r).is_none())
    {
        return Some(format!(
            "no node for role {} (see 01-nodes.yaml)",
            missing.as_str()
        ));
    }
    if let Client::Host(role) = case.client {
        match clients.hosts.get(&role) {
            Some(Ok(_)) => {}
            Some(Err(why)) => return Some(why.clone()),
            None => return Some(format!("no hostNetwork client on {}", role.as_str())),
        }
    }
    None
}

/// Waits until each of `nodes` runs a Ready pod of the DaemonSet `group`; node → pod.
async fn wait_daemon_pods(
    cluster: &Cluster,
    ns: &str,
    group: &str,
    nodes: &[String],
    timeout: Duration,
) -> Result<Option<BTreeMap<String, String>>, VerifyError> {
    cluster
        .wait_for(timeout, Duration::from_millis(200), || async {
            let list = cluster
                .get(&format!("{}?labelSelector=app%3D{group}", pods_path(ns)))
                .await?
                .unwrap_or(Value::Null);
            let mut by_node = BTreeMap::new();
            for p in list["items"].as_array().into_iter().flatten() {
                let ready = p["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                if p["status"]["phase"] == "Running" && ready && p["metadata"]["deletionTimestamp"].is_null()
                {
                    by_node.insert(
                        p["spec"]["nodeName"].as_str().unwrap_or_default().to_string(),
                        p["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                    );
                }
            }
            Ok(nodes.iter().all(|n| by_node.contains_key(n)).then_some(by_node))
        })
        .await
}

/// A setup group's backends and Service, Ready (and deleted again for `F`); the pod clients
/// `P` adds on sampled nodes without one. `Ok(Err(why))`: the group's cases are INCOMPLETE.
async fn create_group(
    env: &Env<'_>,
    setup: &Setup,
    clients: &Clients,
    evidence: &mut Evidence,
) -> Result<Result<GroupState, String>, VerifyError> {
    let Env {
        opts,
        cluster,
        ns,
        roles,
        sampled,
        ..
    } = *env;
    let group = setup.group;
    let mut pods = Vec::new();
    for (list, ready) in [(setup.backends, true), (setup.unready, false)] {
        for role in list.iter().filter(|r| roles.node(**r).is_some()) {
            let m = fixture::backend(
                ns,
                &opts.run_id,
                setup,
                *role,
                roles.node(*role).unwrap_or_default(),
                ready,
            );
            evidence.manifest(&m)?;
            cluster.create(&pods_path(ns), &m).await?;
            pods.push((fixture::backend_name(group, *role, ready), ready));
        }
    }
    // P, Pn: a client on every sampled node (the role clients where they exist); Pn skips the
    // nodes that carry one of its backends.
    let mut node_clients = Vec::new();
    if setup.daemonset || setup.each_node {
        if setup.daemonset {
            let m = fixture::daemonset(ns, &opts.run_id, setup);
            evidence.manifest(&m)?;
            cluster
                .create(&format!("/apis/apps/v1/namespaces/{ns}/daemonsets"), &m)
                .await?;
        }
        let backend_nodes: Vec<&str> = setup
            .backends
            .iter()
            .chain(setup.unready)
            .filter_map(|r| roles.node(*r))
            .collect();
        let mut extra = Vec::new();
        for (i, node) in sampled.iter().enumerate() {
            if setup.each_node && backend_nodes.contains(&node.as_str()) {
                continue;
            }
            let client = match clients.on_node(roles, node) {
                Some(c) => c.to_string(),
                None => {
                    let name = format!("{}-{}", setup.group, fixture::sampled_client_name(i));
                    let m = fixture::client_on(ns, &opts.run_id, &name, node);
                    evidence.manifest(&m)?;
                    cluster.create(&pods_path(ns), &m).await?;
                    extra.push((name.clone(), true));
                    name
                }
            };
            node_clients.push((node.clone(), client));
        }
        if wait_pods(cluster, ns, &extra, opts.pod_ready_timeout)
            .await?
            .is_none()
        {
            return Ok(Err(format!(
                "the clients on the sampled nodes did not become Ready within {:?}",
                opts.pod_ready_timeout
            )));
        }
        if setup.daemonset
            && wait_daemon_pods(cluster, ns, group, sampled, opts.pod_ready_timeout)
                .await?
                .is_none()
        {
            return Ok(Err(format!(
                "the DaemonSet {group} did not run a Ready pod on every sampled node ({}) within {:?}",
                sampled.join(", "),
                opts.pod_ready_timeout
            )));
        }
    }
    if setup.service {
        let m = fixture::service(ns, &opts.run_id, setup);
        evidence.manifest(&m)?;
        cluster
            .create(&format!("/api/v1/namespaces/{ns}/services"), &m)
            .await?;
    }
    let Some(ips) = wait_pods(cluster, ns, &pods, opts.pod_ready_timeout).await? else {
        return Ok(Err(format!(
            "the backends did not become Ready within {:?}",
            opts.pod_ready_timeout
        )));
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
    Ok(Ok(GroupState {
        pods,
        ips,
        node_clients,
    }))
}

/// What a setup group created.
struct GroupState {
    /// Backend pods (name, meant to be Ready).
    pods: Vec<(String, bool)>,
    /// Backend pod → IP.
    ips: BTreeMap<String, String>,
    /// `P`: (sampled node, its client pod).
    node_clients: Vec<(String, String)>,
}

async fn run_cases(
    env: &Env<'_>,
    read: &impl Fn(&str) -> LiveOptions,
    evidence: &mut Evidence,
    records: &mut Vec<CaseRecord>,
    on_case: &dyn Fn(&CaseRecord),
) -> Result<(), VerifyError> {
    let Env {
        opts,
        cluster,
        ns,
        roles,
        ..
    } = *env;
    let selected = selected_cases(opts);
    let clients = create_clients(env, &selected, evidence).await?;
    let pod_clients: Vec<(String, bool)> = clients.pods.iter().map(|(_, n)| (n.clone(), true)).collect();
    evidence.preflight(cluster, ns, &pod_clients).await?;

    let mut groups: Vec<&'static str> = Vec::new();
    for c in &selected {
        if !groups.contains(&c.setup.group) {
            groups.push(c.setup.group);
        }
    }
    for group in groups {
        let mut cases: Vec<&Case> = Vec::new();
        for c in selected.iter().copied().filter(|c| c.setup.group == group) {
            match not_executable(c, roles, &clients) {
                Some(why) => {
                    let mut r = record(c, None);
                    r.why = why;
                    on_case(&r);
                    records.push(r);
                }
                None => cases.push(c),
            }
        }
        let Some(first) = cases.first() else { continue };
        let setup = first.setup;
        // Without N2 (a two-node cluster) the backends on N2 are left out; any other missing
        // role makes the group's cases NOT_EXECUTED.
        let needed: Vec<Role> = setup
            .backends
            .iter()
            .chain(setup.unready)
            .copied()
            .filter(|r| *r != Role::N2)
            .collect();
        if let Some(missing) = needed.iter().find(|r| roles.node(**r).is_none()) {
            for c in cases {
                let mut r = record(c, None);
                r.why = format!("no node for role {} (see 01-nodes.yaml)", missing.as_str());
                on_case(&r);
                records.push(r);
            }
            continue;
        }
        if setup.metrics || setup.rollout {
            for c in cases {
                let r = if setup.metrics {
                    crate::metrics::metrics_case(env, c, evidence).await?
                } else {
                    crate::rollout::rollout_case(env, c, evidence).await?
                };
                let slices_now = slices(cluster, ns, group).await?;
                let snap = locality_live::snapshot(&read(ns), None).await?;
                evidence.case(&r, &slices_now, &snap.state)?;
                on_case(&r);
                records.push(r);
            }
            continue;
        }
        let state = match create_group(env, &setup, &clients, evidence).await? {
            Ok(s) => s,
            Err(why) => {
                for c in cases {
                    let mut r = record(c, None);
                    r.status = Status::Incomplete;
                    r.why = why.clone();
                    on_case(&r);
                    records.push(r);
                }
                continue;
            }
        };
        // Pn: every probed node's kube-proxy must have synced past the group's change, read
        // as soon as the backends are Ready (before the settle).
        let mut lags = BTreeMap::new();
        if setup.each_node
            && let Some(since) = crate::lag::change_time(env, group).await?
        {
            let nodes: Vec<String> = state.node_clients.iter().map(|(n, _)| n.clone()).collect();
            lags = crate::lag::measure(
                env,
                &nodes,
                &format!("{group}-lag"),
                since,
                opts.proxy_lag_timeout,
                evidence,
            )
            .await?;
        }
        let slices_now = if setup.service {
            settle(cluster, ns, group, opts.settle).await?
        } else {
            Value::Null
        };
        let snap = locality_live::snapshot(&read(ns), None).await?;
        let config = matrix_config(&snap, opts.proxy_mode);
        let probing = Probing {
            cluster,
            ns,
            opts,
            roles,
            planes: env.planes,
        };
        for c in cases {
            let mut r = if !setup.service {
                pod_ip_case(&probing, c, &clients, &state).await?
            } else if c.client == Client::EachNode {
                each_node_case(&probing, c, &snap.state, &config, &state, &lags).await?
            } else {
                one_client_case(&probing, c, roles, &snap.state, &config).await?
            };
            if let Some(note) = c.note {
                r.why = format!("{}; {note}", r.why);
            }
            evidence.case(&r, &slices_now, &snap.state)?;
            on_case(&r);
            records.push(r);
        }
    }
    Ok(())
}

/// `N0`: every pod client dials each backend by pod IP.
async fn pod_ip_case(
    probing: &Probing<'_>,
    c: &Case,
    clients: &Clients,
    state: &GroupState,
) -> Result<CaseRecord, VerifyError> {
    let mut r = record(c, None);
    let mut why = Vec::new();
    let mut status = Status::Pass;
    for (_, client) in &clients.pods {
        for (pod, _) in &state.pods {
            let expected = Expected::Deliver {
                pods: vec![pod.clone()],
            };
            let probe = Probe {
                client: client.clone(),
                client_port: HTTP_PORT,
                host: state.ips.get(pod).cloned().unwrap_or_default(),
                port: HTTP_PORT,
                udp: false,
            };
            let (s, w, rounds, tries) = probing.probe(&expected, &probe).await?;
            r.rounds += rounds;
            r.tries.extend(tries);
            if s != Status::Pass {
                status = status.max(s);
                why.push(format!("{client} → {pod}: {w}"));
            }
        }
    }
    r.expected = Some(declared_expectation(c, probing.roles));
    r.reason = "pod-ip".into();
    r.status = status;
    r.why = if why.is_empty() {
        format!(
            "{} clients reached {} backends by pod IP",
            clients.pods.len(),
            state.pods.len()
        )
    } else {
        why.join("; ")
    };
    Ok(r)
}

/// The model's configuration for a query handled by `node`'s kube-proxy: its own mode when it
/// reported one (`/proxyMode`).
fn node_config(base: &MatrixConfig, planes: &BTreeMap<String, NodeDataPlane>, node: &str) -> MatrixConfig {
    let mut config = base.clone();
    let mode = planes
        .get(node)
        .and_then(|p| p.mode.as_deref())
        .and_then(|m| match m {
            "iptables" => Some(ProxyMode::Iptables),
            "nftables" => Some(ProxyMode::Nftables),
            "ipvs" => Some(ProxyMode::Ipvs),
            _ => None,
        });
    if let Some(m) = mode
        && matches!(config.data_plane, DataPlane::KubeProxy(_) | DataPlane::Unknown)
    {
        config.data_plane = DataPlane::KubeProxy(Some(m));
    }
    config
}

/// A node's judgement, with the repair hypotheses checked against its tries when it failed.
fn node_judgement(
    probing: &Probing<'_>,
    snap: &ClusterState,
    config: &MatrixConfig,
    q: Query<'_>,
    status: Status,
    tries: &[Try],
) -> NodeJudgement {
    let mut hypotheses = Vec::new();
    if status == Status::Fail {
        let mut check = |kind: RepairKind, expected: Expected| {
            let consistent = judge(&expected, tries).0 == Status::Pass;
            hypotheses.push(Hypothesis {
                kind,
                expected,
                consistent,
            });
        };
        check(
            RepairKind::HostnameOverride,
            crate::expect::for_route_as_unnamed_node(snap, config.clone(), q),
        );
        if let Some(v) = probing
            .planes
            .get(q.node)
            .and_then(|p| p.version.as_deref())
            .and_then(KubeVersion::parse_loose)
        {
            check(
                RepairKind::UpgradeKubeProxy,
                crate::expect::for_route_at_version(snap, config.clone(), q, v),
            );
        }
    }
    NodeJudgement {
        node: q.node.to_string(),
        status,
        hypotheses,
        lag_over_limit: None,
    }
}

/// `P`, `Pn`: a client on each sampled node, each judged against its own node (`P`: only the
/// backend on its own node answers; `Pn`: nothing answers).
async fn each_node_case(
    probing: &Probing<'_>,
    c: &Case,
    snap: &ClusterState,
    config: &MatrixConfig,
    state: &GroupState,
    lags: &BTreeMap<String, crate::lag::Measured>,
) -> Result<CaseRecord, VerifyError> {
    use crate::lag::Measured;
    let ns = probing.ns;
    let group = c.setup.group;
    let svc_ip = cluster_ip(snap, ns, group);
    let mut r = record(c, None);
    let mut expectations = BTreeMap::new();
    let mut reasons = Vec::new();
    let mut problems = Vec::new();
    let mut measured = Vec::new();
    let mut status = Status::Pass;
    let limit_ms = probing.opts.max_proxy_lag.as_millis() as u64;
    for (node, client) in &state.node_clients {
        // kube-proxy's lag on the node: reported under the limit, never judged over it.
        match lags.get(node) {
            Some(m) if m.proven_ms() > limit_ms => {
                let ms = m.proven_ms();
                status = status.max(Status::Incomplete);
                problems.push(format!(
                    "{node}: kube-proxy had still not synced {ms} ms after the change (limit {limit_ms} ms): not judged"
                ));
                r.nodes.push(NodeJudgement {
                    node: node.clone(),
                    status: Status::Incomplete,
                    hypotheses: Vec::new(),
                    lag_over_limit: Some(LagOverLimit {
                        measured_ms: match m {
                            Measured::Synced { lag_ms, .. } => (*lag_ms).max(ms),
                            _ => ms,
                        },
                        limit_ms,
                    }),
                });
                continue;
            }
            Some(Measured::Synced { lag_ms, .. }) => measured.push(format!("{node} ≤ {lag_ms} ms")),
            Some(Measured::NotSynced { .. }) => {
                status = status.max(Status::Incomplete);
                problems.push(format!(
                    "{node}: kube-proxy had not synced past the change within {:?}: not judged",
                    probing.opts.proxy_lag_timeout
                ));
                r.nodes.push(NodeJudgement {
                    node: node.clone(),
                    status: Status::Incomplete,
                    hypotheses: Vec::new(),
                    lag_over_limit: None,
                });
                continue;
            }
            Some(Measured::Unreadable(why)) => measured.push(format!("{node} not measured ({why})")),
            None => {}
        }
        let config = node_config(config, probing.planes, node);
        let q = Query {
            namespace: ns,
            service: group,
            port: fixture::service_port_name(&c.setup),
            node,
            source: Source::Pod,
            destination: Destination::ClusterIp,
        };
        let (expected, reason) = for_route(snap, config.clone(), q);
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
        let declared = if c.setup.daemonset {
            own_node_expectation(snap, ns, group, node)
        } else {
            declared_expectation_in(c, probing.roles, config.data_plane.modes() == [ProxyMode::Ipvs])
        };
        expectations.insert(node.clone(), expected.clone());
        if expected != declared {
            status = status.max(Status::Incomplete);
            r.nodes.push(NodeJudgement {
                node: node.clone(),
                status: Status::Incomplete,
                hypotheses: Vec::new(),
                lag_over_limit: None,
            });
            problems.push(format!(
                "{node}: the model expects {} but the catalogue declares {}: the state read back is not the case's setup",
                describe(&expected),
                describe(&declared)
            ));
            continue;
        }
        let probe = Probe {
            client: client.clone(),
            client_port: HTTP_PORT,
            host: svc_ip.clone(),
            port: SERVICE_PORT,
            udp: c.setup.udp,
        };
        let (s, w, rounds, tries) = probing.probe(&expected, &probe).await?;
        r.nodes.push(node_judgement(probing, snap, &config, q, s, &tries));
        r.rounds += rounds;
        r.tries.extend(tries);
        if s != Status::Pass {
            status = status.max(s);
            problems.push(format!("{client} on {node}: {w}"));
        }
    }
    let tries_per_node = r.tries.len() / state.node_clients.len().max(1);
    r.expected = Some(Expected::PerNode { nodes: expectations });
    r.reason = reasons.join(",");
    r.status = if state.node_clients.is_empty() {
        Status::Incomplete
    } else {
        status
    };
    let lag_note = if measured.is_empty() {
        String::new()
    } else {
        format!("; kube-proxy lag after the change: {}", measured.join(", "))
    };
    r.why = if state.node_clients.is_empty() {
        "no sampled node to probe from".into()
    } else if problems.is_empty() {
        format!(
            "each of {} sampled nodes ({}) {} (~{tries_per_node} tries per node, {} in all)",
            state.node_clients.len(),
            state
                .node_clients
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if c.setup.daemonset {
                "was served only by the backend on its own node"
            } else {
                "got no answer without a local endpoint"
            },
            r.tries.len()
        )
    } else {
        problems.join("; ")
    } + &lag_note;
    Ok(r)
}

/// A case with one client (a pod or a hostNetwork pod) dialling a cluster IP or a nodePort.
async fn one_client_case(
    probing: &Probing<'_>,
    c: &Case,
    roles: &Roles,
    snap: &ClusterState,
    config: &MatrixConfig,
) -> Result<CaseRecord, VerifyError> {
    let ns = probing.ns;
    let group = c.setup.group;
    let (client, client_port, source, role) = match c.client {
        Client::Pod(role) => (fixture::client_name(role), HTTP_PORT, Source::Pod, role),
        Client::Host(role) => (
            fixture::host_client_name(role),
            HOST_HTTP_PORT,
            Source::Host,
            role,
        ),
        Client::EachNode => {
            let mut r = record(c, None);
            r.status = Status::Incomplete;
            r.why = "a client on each node is not one client".into();
            return Ok(r);
        }
    };
    let client_node = roles.node(role).unwrap_or_default().to_string();
    let mut r = record(c, Some(&client_node));
    // The node whose kube-proxy handles the connection first, and the source as it sees it.
    let (host, port, model_node, source, destination) = match c.dial {
        Dial::ClusterIp => (
            cluster_ip(snap, ns, group),
            SERVICE_PORT,
            client_node.clone(),
            source,
            Destination::ClusterIp,
        ),
        Dial::NodePort(target) => {
            let node = roles.node(target).unwrap_or_default().to_string();
            let source = if node == client_node {
                source
            } else {
                Source::External
            };
            (
                node_ip(snap, &node),
                node_port(snap, ns, group),
                node,
                source,
                Destination::NodePort,
            )
        }
    };
    let config = node_config(config, probing.planes, &model_node);
    let q = Query {
        namespace: ns,
        service: group,
        port: fixture::service_port_name(&c.setup),
        node: &model_node,
        source,
        destination,
    };
    let (expected, reason) = for_route(snap, config.clone(), q);
    r.reason = reason;
    let ipvs = config.data_plane.modes() == [ProxyMode::Ipvs];
    let declared = declared_expectation_in(c, roles, ipvs);
    if expected != declared {
        r.status = Status::Incomplete;
        r.why = format!(
            "the model expects {} but the catalogue declares {}: the state read back is not the case's setup",
            describe(&expected),
            describe(&declared)
        );
    } else if host.is_empty() || port == 0 {
        r.status = Status::Incomplete;
        r.why = format!("no address to dial for {:?} in the state read back", c.dial);
    } else {
        let probe = Probe {
            client,
            client_port,
            host,
            port,
            udp: c.setup.udp,
        };
        let (s, w, rounds, tries) = probing.probe(&expected, &probe).await?;
        r.nodes.push(node_judgement(probing, snap, &config, q, s, &tries));
        r.status = s;
        r.why = w;
        r.rounds = rounds;
        r.tries = tries;
    }
    r.expected = Some(expected);
    Ok(r)
}

/// A node's first IPv4 InternalIP, as read back.
fn node_ip(state: &ClusterState, node: &str) -> String {
    state
        .nodes
        .iter()
        .find(|n| n.meta.name == node)
        .and_then(|n| {
            n.internal_ips
                .iter()
                .find(|ip| IpFamily::of(ip) == IpFamily::IPv4)
        })
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The nodePort allocated to the Service's first port, as read back (0: none).
fn node_port(state: &ClusterState, ns: &str, name: &str) -> u16 {
    state
        .services
        .iter()
        .find(|s| s.meta.namespace == ns && s.meta.name == name)
        .and_then(|s| s.ports.first())
        .map_or(0, |p| p.node_port)
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
        Expected::PerNode { nodes } => {
            let each: Vec<String> = nodes
                .iter()
                .map(|(node, e)| format!("{node}: {}", describe(e)))
                .collect();
            format!("per client node: {}", each.join("; "))
        }
    }
}

/// A run ID: the current time in seconds, base 36, then 4 random base-36 characters (short,
/// sortable by start time, DNS-safe, distinct for runs started in the same second).
pub fn new_run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut s = Vec::new();
    let mut n = now.as_secs();
    while n > 0 {
        s.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    s.reverse();
    // RandomState is seeded randomly per process; the nanoseconds and a counter tell runs of
    // one process apart.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(now.as_nanos());
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let mut r = h.finish();
    for _ in 0..4 {
        s.push(DIGITS[(r % 36) as usize]);
        r /= 36;
    }
    String::from_utf8(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::case;

    fn roles(with_n1z: bool) -> Roles {
        let mut nodes = BTreeMap::new();
        nodes.insert(Role::N1, "node-a".to_string());
        nodes.insert(Role::N2, "node-b".to_string());
        nodes.insert(Role::N3, "node-c".to_string());
        if with_n1z {
            nodes.insert(Role::N1z, "node-d".to_string());
        }
        Roles {
            nodes,
            excluded: Vec::new(),
        }
    }

    #[test]
    fn cases_that_cannot_run_say_why() {
        let mut hosts = BTreeMap::new();
        hosts.insert(Role::N1, Ok("host-client-n1".to_string()));
        hosts.insert(
            Role::N3,
            Err(
                "the hostNetwork client host-client-n3 was not admitted: 403 violates PodSecurity"
                    .to_string(),
            ),
        );
        let clients = Clients {
            pods: vec![(Role::N1, "client-n1".into())],
            hosts,
        };
        let c = |id: &str| case(id).unwrap();
        assert_eq!(not_executable(c("Bh"), &roles(true), &clients), None);
        assert!(
            not_executable(c("Ch"), &roles(true), &clients)
                .unwrap()
                .contains("PodSecurity")
        );
        assert!(
            not_executable(c("Z1"), &roles(false), &clients)
                .unwrap()
                .contains("no node for role N1z")
        );
        assert_eq!(not_executable(c("Z2"), &roles(false), &clients), None);
        assert_eq!(not_executable(c("X1"), &roles(false), &clients), None);
        assert_eq!(clients.on_node(&roles(true), "node-a"), Some("client-n1"));
        assert_eq!(clients.on_node(&roles(true), "node-d"), None);
    }

    #[test]
    fn run_ids_are_distinct_within_one_second() {
        let ids: std::collections::BTreeSet<String> = (0..50).map(|_| new_run_id()).collect();
        assert_eq!(ids.len(), 50);
        for id in &ids {
            assert!(
                id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{id}"
            );
        }
    }

    #[test]
    fn declared_outcomes_in_pods() {
        assert_eq!(
            declared_expectation(case("X1").unwrap(), &roles(true)),
            Expected::Deliver {
                pods: vec!["x1-be-n1".into(), "x1-be-n2".into()]
            }
        );
        assert_eq!(
            declared_expectation(case("U2").unwrap(), &roles(true)),
            Expected::Drop
        );
        assert_eq!(
            declared_expectation(case("H4").unwrap(), &roles(true)),
            Expected::Deliver {
                pods: vec!["h4-be-n1".into()]
            }
        );
    }
}
