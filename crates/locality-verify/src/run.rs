//! One verify run: roles, fixture, expectations, probes, judgement, decision, evidence.

use std::collections::BTreeMap;

use locality_live::LiveOptions;
use locality_model::version::KubeVersion;
use serde_json::{Value, json};

use crate::cases::{CATALOGUE, Case, Client};
use crate::cluster::Cluster;
use crate::decision::decide;
use crate::each_node::each_node_case;
use crate::env::{Env, pod_restarts, settle, slices};
use crate::fixture::{self, RUN_LABEL};
use crate::judge::Status;
use crate::ledger::{Evidence, Ledger};
use crate::probing::{matrix_config, one_client_case, pod_ip_case};
use crate::record::NodeDataPlane;
use crate::restarts::judge_restarts;
use crate::roles::{Placement, kube_proxies, pick, place, sample};
use crate::setup::{create_clients, create_group, not_executable};

pub use crate::error::VerifyError;
pub use crate::options::{DEFAULT_MAX_NODES, VerifyOptions};
pub(crate) use crate::record::record;
pub use crate::record::{CUT_SHORT, CaseRecord, INTERRUPTED, VerifyOutcome, describe};
pub use crate::run_id::new_run_id;

/// The cases `opts.only` selects (all when empty), in catalogue order.
/// The controls always run: a partial run is still judged against a working environment.
/// `R` brings the cases it reruns; the external cases run only with `--external-cases`
/// (or when named in `--only`).
fn selected_cases(opts: &VerifyOptions) -> Vec<&'static Case> {
    let named = |id: &str| opts.only.iter().any(|o| o.eq_ignore_ascii_case(id));
    let repeats = named("R");
    CATALOGUE
        .iter()
        .filter(|c| {
            if c.external && !(opts.external_cases || named(c.id)) {
                return false;
            }
            c.control
                || opts.only.is_empty()
                || named(c.id)
                || (repeats && crate::cases::REPEATED.contains(&c.id))
        })
        .collect()
}

/// `--only`: the IDs the run selects, controls included (`None`: a full run).
fn partial(opts: &VerifyOptions) -> Option<Vec<String>> {
    (!opts.only.is_empty()).then(|| selected_cases(opts).iter().map(|c| c.id.to_string()).collect())
}

/// The run's namespace.
fn namespace(opts: &VerifyOptions) -> String {
    format!("locality-verify-{}", opts.run_id)
}

/// How to read the state of `namespace` (and the cluster-wide objects).
fn reading(opts: &VerifyOptions, namespace: &str) -> LiveOptions {
    let mut live = opts.live.clone();
    live.namespace = Some(namespace.to_string());
    live.all_namespaces = false;
    live
}

/// What a run knows before it creates anything.
struct Start {
    cluster: Cluster,
    first: locality_live::LiveSnapshot,
    roles: crate::roles::Roles,
    usable: usize,
    proxies: BTreeMap<String, std::collections::BTreeSet<crate::roles::KubeProxy>>,
    proxies_unread: Option<String>,
    sampled: Vec<String>,
}

/// Reads the cluster (never writes): the state, the roles, the nodes `P`, `Pt`, `Pn` probe.
async fn start(opts: &VerifyOptions) -> Result<Start, VerifyError> {
    let (client, target) = locality_live::client(&opts.live).await?;
    let cluster = Cluster::new(client, target.server.clone())
        .with_request_timeout(opts.request_timeout)
        .with_kubectl_target(opts.live.kubeconfig.as_deref(), target.context.as_deref());
    let first = locality_live::snapshot(&reading(opts, &namespace(opts)), None).await?;
    // Every wait of the run is in the cluster's time (a simulated one's runs faster).
    let cluster = cluster.with_cluster_clock(first.simulated).await;
    let roles = pick(&first.state.nodes);
    // Sampling keeps every distinct kube-proxy (owner, image, command): read them first when
    // `--max-nodes` leaves nodes out.
    let usable = crate::roles::usable_count(&first.state.nodes);
    let (proxies, proxies_unread) = if opts.max_nodes.is_some_and(|max| max < usable) {
        match crate::env::kube_proxy_pods(&cluster).await {
            Ok(pods) => (kube_proxies(&pods), None),
            Err(why) => (BTreeMap::new(), Some(why)),
        }
    } else {
        (BTreeMap::new(), None)
    };
    let sampled = sample(&first.state.nodes, &roles, opts.max_nodes, &proxies);
    Ok(Start {
        cluster,
        first,
        roles,
        usable,
        proxies,
        proxies_unread,
        sampled,
    })
}

/// `--dry-run`: reads the cluster (never writes) and returns the plan and every manifest a
/// run would create up front (`plan::dry_run`).
///
/// # Errors
/// When the cluster cannot be read.
pub async fn dry_run(opts: &VerifyOptions) -> Result<String, VerifyError> {
    let s = start(opts).await?;
    let selected = selected_cases(opts);
    Ok(crate::plan::dry_run(
        &namespace(opts),
        &opts.run_id,
        &opts.images,
        &s.roles,
        &s.sampled,
        &selected,
        s.roles.lacking().as_deref(),
    ))
}

/// Runs the playbook against the cluster `opts.live` points at.
///
/// # Errors
/// When the cluster cannot be reached or cannot host a run (fewer than two usable nodes, a
/// namespace of that name the tool did not create), or the evidence cannot be written. A
/// failed case is not an error: it is in the decision.
pub async fn verify(opts: &VerifyOptions) -> Result<VerifyOutcome, VerifyError> {
    verify_until(opts, std::future::pending()).await
}

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
    let ns = namespace(opts);
    let read = |namespace: &str| reading(opts, namespace);
    let Start {
        cluster,
        first,
        roles,
        usable,
        proxies,
        proxies_unread,
        sampled,
    } = start(opts).await?;
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
    let mut evidence = Evidence::create(&opts.evidence)?.with_images(opts.images.clone());
    evidence.versions(&first, opts, &BTreeMap::new())?;
    evidence.nodes(&first.state, &roles, &sampled, &proxies)?;
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
                let manifest = evidence.manifest(&manifest)?;
                cluster.create("/api/v1/namespaces", &manifest).await?;
            }
            let no_planes = BTreeMap::new();
            let no_readers = BTreeMap::new();
            let reading = Env {
                opts,
                cluster: &cluster,
                ns: &ns,
                roles: &roles,
                sampled: &sampled,
                planes: &no_planes,
                lag_readers: &no_readers,
            };
            planes = crate::survey::survey(&reading, &read_nodes, &mut evidence).await?;
            evidence.versions(&first, opts, &planes)?;
            let surveyed = Env {
                planes: &planes,
                ..reading
            };
            let lag_readers = crate::lag::start_readers(&surveyed, &read_nodes, &mut evidence).await?;
            let env = Env {
                lag_readers: &lag_readers,
                ..surveyed
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
    let mut findings = crate::diagnose::findings(&cases, partial(opts), kube, &planes);
    findings.sampled = (sampled.len() < usable).then_some(crate::decision::Sampled {
        probed: sampled.len(),
        usable,
        nodes: sampled.clone(),
    });
    // Nodes no case could probe: named, and the run partial.
    findings.unprobed_nodes = roles.excluded.clone();
    findings.target = opts.target_args.clone();
    let mut decided = decide(&findings);
    if let Some(why) = proxies_unread.filter(|_| sampled.len() < usable) {
        decided.advice.push(format!(
            "note: the kube-proxy pods of kube-system could not be read ({why}): the sample covers every zone, but maybe not every kube-proxy version and mode"
        ));
    }
    // A node whose kube-proxy could not be read is judged against the contract's outcomes
    // (the cluster-wide mode), its lag unmeasured: said, whatever the decision.
    for (node, plane) in &planes {
        if let Some(why) = &plane.unreadable {
            let version = match (&plane.version, &plane.version_from) {
                (Some(v), Some(from)) => format!("; its version {v} is from its pod's {from}"),
                _ => ", nor its version".into(),
            };
            decided.advice.push(format!(
                "note: {node}'s kube-proxy could not be read ({why}): its cases were judged against the contract's outcomes, not its own mode{version}, and its lag was not measured (a case expecting no answer was probed --max-proxy-lag after its change)"
            ));
        }
    }
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
        sampled: decided.sampled,
        uncovered: decided.uncovered,
        unprobed_nodes: decided.unprobed_nodes,
        repairs: findings.repairs,
        lagging: findings.lagging,
        planes,
        simulated: opts.simulated,
    };
    Ledger::write(&mut evidence, &outcome, opts)?;
    Ok(outcome)
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
    // A case the cluster's shape cannot host is NOT_EXECUTED at once, naming the role and
    // what the cluster lacks; nothing is created for it.
    let mut selected = Vec::new();
    let mut reduced: BTreeMap<&str, String> = BTreeMap::new();
    for c in selected_cases(opts) {
        match place(c, roles) {
            Placement::No(why) => {
                let mut r = record(c, None);
                r.why = why;
                on_case(&r);
                records.push(r);
            }
            Placement::Reduced(why) => {
                reduced.insert(c.id, why);
                selected.push(c);
            }
            Placement::Full => selected.push(c),
        }
    }
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
        // A reduced form (no node for N2) runs with the other backends; its record says so.
        let note_reduced = |r: &mut CaseRecord| {
            if let Some(why) = reduced.get(r.id.as_str()) {
                r.why = format!("{}; {why}", r.why);
            }
        };
        if setup.metrics || setup.rollout {
            for c in cases {
                let before = pod_restarts(cluster, ns).await?;
                let mut r = if setup.metrics {
                    crate::metrics::metrics_case(env, c, evidence).await?
                } else {
                    crate::rollout::rollout_case(env, c, evidence).await?
                };
                judge_restarts(&before, &pod_restarts(cluster, ns).await?, &mut r);
                note_reduced(&mut r);
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
        if (setup.each_node || setup.daemonset)
            && let Some(since) = crate::lag::change_time(env, group, group).await?
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
            // A node over the limit is measured once more, after a fresh change (a second
            // Service over the same backend): a passing spike is not a HOLD.
            let limit_ms = opts.max_proxy_lag.as_millis() as u64;
            let slow: Vec<String> = lags
                .iter()
                .filter(|(_, m)| m.proven_ms() > limit_ms)
                .map(|(n, _)| n.clone())
                .collect();
            if !slow.is_empty() {
                let again = format!("{group}-again");
                let mut m = fixture::service(ns, &opts.run_id, &setup);
                m["metadata"]["name"] = serde_json::json!(again);
                let m = evidence.manifest(&m)?;
                cluster
                    .create(&format!("/api/v1/namespaces/{ns}/services"), &m)
                    .await?;
                if let Some(since) = crate::lag::change_time(env, &again, group).await? {
                    let second = crate::lag::measure(
                        env,
                        &slow,
                        &format!("{group}-lag2"),
                        since,
                        opts.proxy_lag_timeout,
                        evidence,
                    )
                    .await?;
                    lags.extend(second);
                }
            }
            // A node whose sync cannot be read is probed once the bound a data plane is given
            // has passed (a rule still missing would pass for `Pn`'s drop).
            if lags
                .values()
                .any(|m| matches!(m, crate::lag::Measured::Unreadable(_)))
            {
                cluster.sleep(opts.max_proxy_lag).await;
            }
        }
        let slices_now = if setup.service {
            settle(cluster, ns, group, opts.settle).await?
        } else {
            Value::Null
        };
        let snap = locality_live::snapshot(&read(ns), None).await?;
        let config = matrix_config(&snap, opts.proxy_mode);
        for c in cases {
            let before = pod_restarts(cluster, ns).await?;
            let mut r = if !setup.service {
                pod_ip_case(env, c, &clients, &state).await?
            } else if c.declared == crate::cases::Declared::SameAsBefore {
                crate::repeat::repeat_case(env, c, &setup, read, records.as_slice(), evidence).await?
            } else if c.client == Client::EachNode {
                each_node_case(env, c, &snap.state, &config, &state, &lags).await?
            } else {
                one_client_case(env, c, roles, &snap.state, &config, evidence).await?
            };
            if let Some(note) = c.note {
                r.why = format!("{}; {note}", r.why);
            }
            if setup.terminating {
                crate::each_node::close_terminating_window(env, &setup, &state, &mut r).await?;
            }
            judge_restarts(&before, &pod_restarts(cluster, ns).await?, &mut r);
            note_reduced(&mut r);
            evidence.case(&r, &slices_now, &snap.state)?;
            on_case(&r);
            records.push(r);
        }
    }
    Ok(())
}
