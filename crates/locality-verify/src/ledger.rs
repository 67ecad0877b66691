//! The evidence directory (docs/design.md §6): versions, nodes and roles, every manifest applied,
//! the preflight, per case the expectation with the state it came from, every try and the
//! EndpointSlices at probe time; then the ledger (JSON, Markdown, JUnit), the decision and
//! `SHA256SUMS` over every file. No credential is ever written.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use http::Method;
use locality_model::objects::ClusterState;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::cluster::Cluster;
use crate::error::VerifyError;
use crate::fixture::HTTP_PORT;
use crate::options::VerifyOptions;
pub use crate::record::declared_text;
use crate::record::{CaseRecord, VerifyOutcome, describe};
use crate::roles::Roles;

/// The evidence directory being written.
pub struct Evidence {
    dir: PathBuf,
    manifests: usize,
    images: crate::fixture::Images,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> VerifyError {
    VerifyError::Evidence {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

pub(crate) fn yaml(v: &impl serde::Serialize) -> String {
    locality_report::encode::yaml_string(v).unwrap_or_else(|e| format!("# not serialisable: {e}\n"))
}

impl Evidence {
    /// Creates the directory (it must not hold a previous run's evidence).
    pub fn create(dir: &Path) -> Result<Self, VerifyError> {
        if dir.join("ledger.json").exists() {
            return Err(io_err(
                dir,
                "already holds a run's evidence; choose another --evidence",
            ));
        }
        std::fs::create_dir_all(dir.join("02-fixture")).map_err(|e| io_err(dir, e))?;
        std::fs::create_dir_all(dir.join("cases")).map_err(|e| io_err(dir, e))?;
        Ok(Evidence {
            dir: dir.to_path_buf(),
            manifests: 0,
            images: crate::fixture::Images::default(),
        })
    }

    /// The images the run's manifests use (`--image`, `--curl-image`).
    pub fn with_images(mut self, images: crate::fixture::Images) -> Self {
        self.images = images;
        self
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> Result<(), VerifyError> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        std::fs::write(&path, text).map_err(|e| io_err(&path, e))
    }

    /// `00-versions.yaml`.
    pub fn versions(
        &self,
        snap: &locality_live::LiveSnapshot,
        opts: &VerifyOptions,
        planes: &std::collections::BTreeMap<String, crate::record::NodeDataPlane>,
    ) -> Result<(), VerifyError> {
        let v = json!({
            "nodes": planes,
            "tool": format!("locality {}", env!("CARGO_PKG_VERSION")),
            "server": snap.server_git_version,
            "kubeProxyVersion": snap.kube_proxy_version.map(|v| v.to_string()),
            "dataPlane": snap.data_plane.to_string(),
            "dataPlaneSource": snap.data_plane_source,
            "knownDataPlane": {
                "detected": snap.data_plane_detection.describe(),
                "source": snap.data_plane_detection.source,
                "settings": snap.data_plane_detection.settings,
                "lookedAt": snap.data_plane_detection.looked_at,
                "divergences": locality_model::dataplane::catalogue::applicable(&snap.data_plane_detection)
                    .into_iter()
                    .map(|e| e.id)
                    .collect::<Vec<_>>(),
            },
            "proxyModeForced": opts.proxy_mode.map(|m| m.as_str()),
            "target": {
                "server": snap.target.server,
                "context": snap.target.context,
                // The server's certificate was not checked: whoever answered may not be it.
                "insecureSkipTLSVerify": snap.target.insecure_skip_tls_verify,
            },
            "simulated": opts.simulated,
        });
        self.write("00-versions.yaml", &yaml(&v))
    }

    /// `01-nodes.yaml`: nodes (name, zone, Ready, taints, the kube-proxy its pod declares
    /// when they were read for sampling), roles, exclusions, the nodes `P` probes from.
    pub fn nodes(
        &self,
        state: &ClusterState,
        roles: &Roles,
        sampled: &[String],
        proxies: &std::collections::BTreeMap<String, std::collections::BTreeSet<crate::roles::KubeProxy>>,
    ) -> Result<(), VerifyError> {
        let nodes: Vec<Value> = state
            .nodes
            .iter()
            .map(|n| {
                let mut v = json!({
                    "name": n.meta.name,
                    "zone": n.zone(),
                    "ready": n.ready,
                    "taints": n.taints.iter().map(|t| format!("{}={}:{}", t.key, t.value, t.effect)).collect::<Vec<_>>(),
                    "internalIPs": n.internal_ips.iter().map(ToString::to_string).collect::<Vec<_>>(),
                });
                if let Some(k) = proxies.get(&n.meta.name) {
                    v["kubeProxy"] = json!(k);
                }
                v
            })
            .collect();
        let roles_map: serde_json::Map<String, Value> = roles
            .nodes
            .iter()
            .map(|(r, n)| (r.as_str().to_string(), json!(n)))
            .collect();
        self.write(
            "01-nodes.yaml",
            &yaml(
                &json!({"nodes": nodes, "roles": roles_map, "excluded": roles.excluded, "sampled": sampled}),
            ),
        )
    }

    /// One manifest with the run's images ([`crate::fixture::with_images`]), recorded in
    /// `02-fixture/` and returned: the caller applies exactly what was recorded.
    pub fn manifest(&mut self, m: &Value) -> Result<Value, VerifyError> {
        let m = crate::fixture::with_images(m, &self.images);
        self.manifests += 1;
        let name = format!(
            "02-fixture/{:02}-{}-{}.yaml",
            self.manifests,
            m["kind"].as_str().unwrap_or("object").to_lowercase(),
            m["metadata"]["name"].as_str().unwrap_or("")
        );
        self.write(&name, &yaml(&m))?;
        Ok(m)
    }

    /// `03-preflight.yaml`: the `proxy` channel reaches every client.
    pub async fn preflight(
        &self,
        cluster: &Cluster,
        ns: &str,
        clients: &[(String, bool)],
    ) -> Result<(), VerifyError> {
        let mut checks = Vec::new();
        for (name, _) in clients {
            let (code, body) = cluster
                .call(
                    Method::GET,
                    &format!("/api/v1/namespaces/{ns}/pods/{name}:{HTTP_PORT}/proxy/hostname"),
                    None,
                )
                .await?;
            let answer = String::from_utf8_lossy(&body).trim().to_string();
            checks.push(json!({
                "channel": "proxy",
                "client": name,
                "ok": code == 200 && answer == *name,
                "answer": crate::quote::http(code, &answer),
            }));
        }
        self.write("03-preflight.yaml", &yaml(&json!({"checks": checks})))
    }

    /// A further file of a case's evidence (`cases/<ID>/<name>`), e.g. the metrics text `M` read.
    pub fn case_file(&self, id: &str, name: &str, text: &str) -> Result<(), VerifyError> {
        self.write(&format!("cases/{id}/{name}"), text)
    }

    /// `cases/<ID>/`: expected.json (with the state it was computed from), observed.json,
    /// endpointslices.yaml.
    pub fn case(&self, r: &CaseRecord, slices: &Value, state: &ClusterState) -> Result<(), VerifyError> {
        let services: Vec<Value> = state
            .services
            .iter()
            .map(|s| {
                json!({
                    "name": s.meta.name,
                    "clusterIPs": s.cluster_ips.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "internalTrafficPolicy": s.internal_traffic_policy.map(|p| format!("{p:?}")),
                    "trafficDistribution": s.traffic_distribution,
                })
            })
            .collect();
        let pods: Vec<Value> = state
            .pods
            .iter()
            .map(|p| json!({"name": p.meta.name, "node": p.spec.node_name, "ready": p.ready, "podIPs": p.pod_ips.iter().map(ToString::to_string).collect::<Vec<_>>()}))
            .collect();
        let expected = json!({
            "case": r.id,
            "declared": r.declared,
            "model": r.expected,
            "reason": r.reason,
            "clientNode": r.client_node,
            "state": {"services": services, "pods": pods},
        });
        let base = format!("cases/{}", r.id);
        self.write(&format!("{base}/expected.json"), &pretty(&expected))?;
        self.write(
            &format!("{base}/observed.json"),
            &pretty(&json!({"status": r.status, "why": r.why, "rounds": r.rounds, "tries": r.tries})),
        )?;
        self.write(&format!("{base}/endpointslices.yaml"), &yaml(slices))
    }
}

fn pretty(v: &Value) -> String {
    let mut s = locality_report::encode::json_pretty_string(v).unwrap_or_default();
    s.push('\n');
    s
}

/// The ledger files and the checksums.
pub struct Ledger;

impl Ledger {
    /// Writes `ledger.json`, `ledger.md`, `junit.xml`, `report.html`, `decision.json` and
    /// `SHA256SUMS` (last, over every other file).
    pub fn write(
        evidence: &mut Evidence,
        outcome: &VerifyOutcome,
        opts: &VerifyOptions,
    ) -> Result<(), VerifyError> {
        let decision_line = outcome.decision_line(opts.simulated);
        let decision = json!({
            "decision": outcome.decision,
            "line": decision_line,
            "simulated": opts.simulated,
            "rerun": outcome.rerun,
            "advice": outcome.advice,
            "owner": opts.owner,
            "runId": opts.run_id,
            "interrupted": outcome.interrupted,
            "counts": outcome.counts(),
            "partial": outcome.is_partial(),
            "casesRun": outcome.partial,
            "sampled": outcome.sampled,
            "uncovered": outcome.uncovered,
            "unprobedNodes": outcome.unprobed_nodes,
            "repairs": outcome.repairs,
            "lagging": outcome.lagging,
            "dataPlanes": outcome.planes,
        });
        let roles: serde_json::Map<String, Value> = outcome
            .roles
            .nodes
            .iter()
            .map(|(r, n)| (r.as_str().to_string(), json!(n)))
            .collect();
        let ledger = json!({
            "apiVersion": "locality/v1",
            "kind": "VerifyLedger",
            "runId": opts.run_id,
            "owner": opts.owner,
            "namespace": outcome.namespace,
            "roles": roles,
            "decision": decision,
            "cases": outcome.cases.iter().map(|c| json!({
                "id": c.id, "control": c.control, "description": c.description,
                "guarantee": c.guarantee, "docs": c.docs, "clientNode": c.client_node,
                "declared": c.declared, "expected": c.expected, "reason": c.reason,
                "status": c.status, "why": c.why, "tries": c.tries.len(),
                "nodes": c.nodes, "lagOverLimit": c.lag_over_limit,
                "evidence": format!("cases/{}/", c.id),
            })).collect::<Vec<_>>(),
        });
        evidence.write("ledger.json", &pretty(&ledger))?;
        evidence.write("decision.json", &pretty(&decision))?;
        evidence.write("ledger.md", &markdown(outcome, &decision_line, opts))?;
        evidence.write("README.md", &readme(opts))?;
        evidence.write("junit.xml", &junit(outcome, &decision_line, opts))?;
        evidence.write(
            "report.html",
            &crate::html::report(outcome, &decision_line, opts, &evidence.dir),
        )?;
        let mut files = Vec::new();
        collect(&evidence.dir, &evidence.dir, &mut files).map_err(|e| io_err(&evidence.dir, e))?;
        files.sort();
        let mut sums = String::new();
        for rel in files {
            let bytes =
                std::fs::read(evidence.dir.join(&rel)).map_err(|e| io_err(&evidence.dir.join(&rel), e))?;
            let digest = Sha256::digest(&bytes);
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            let _ = writeln!(sums, "{hex}  {rel}");
        }
        evidence.write("SHA256SUMS", &sums)
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, out)?;
        } else if path.file_name().is_some_and(|n| n != "SHA256SUMS") {
            out.push(
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
    Ok(())
}

/// `ledger.md`: every value from outside (the server's error text in the cases' `why`, node
/// and pod names, the `--owner` value) escaped for Markdown (`display::markdown`): no raw
/// HTML, control character, broken row or forged heading.
fn markdown(outcome: &VerifyOutcome, decision_line: &str, opts: &VerifyOptions) -> String {
    use locality_report::display::markdown as md;
    let mut s = String::new();
    let _ = writeln!(s, "# locality verify {}\n", md(&opts.run_id));
    let _ = writeln!(s, "**Decision: {}**\n", md(decision_line));
    let _ = writeln!(s, "{}\n", md(&outcome.counts()));
    tested(&mut s, outcome, opts);
    for a in &outcome.advice {
        let _ = writeln!(s, "- {}", md(a));
    }
    if !outcome.advice.is_empty() {
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "| Case | Description | Expected | Observed | Status | Evidence |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for c in &outcome.cases {
        let expected = c.expected.as_ref().map_or_else(|| declared_text(c), describe);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | `cases/{}/` |",
            md(&c.id),
            md(&c.description),
            md(&expected),
            md(&c.why),
            c.status.as_str(),
            c.id
        );
    }
    let _ = writeln!(
        s,
        "\nOwner: {}. Evidence checksums: `SHA256SUMS`.",
        md(&opts.owner)
    );
    s
}

/// `ledger.md`'s opening: what was tested — the target, each node's data plane as read, the
/// roles, the nodes left out and what the run was not asked to do.
fn tested(s: &mut String, outcome: &VerifyOutcome, opts: &VerifyOptions) {
    use locality_report::display::markdown as md;
    let _ = writeln!(s, "## What was tested\n");
    let target = if opts.simulated {
        "the SIMULATED cluster (a self-test of locality, not evidence about a real data plane)".to_string()
    } else {
        match &opts.live.context {
            Some(c) => format!("the cluster of kubeconfig context `{}`", md(c)),
            None => "the cluster of the current kubeconfig context".to_string(),
        }
    };
    let _ = writeln!(s, "- Target: {target}; namespace `{}`", md(&outcome.namespace));
    let _ = writeln!(
        s,
        "- Versions: `00-versions.yaml`; nodes and why any was left out: `01-nodes.yaml`"
    );
    for (node, p) in &outcome.planes {
        let plane = match (&p.known, &p.unreadable) {
            (Some(known), _) => known.clone(),
            (None, Some(why)) => format!("not read ({why})"),
            (None, None) => format!(
                "kube-proxy {} ({})",
                p.version.as_deref().unwrap_or("version unknown"),
                p.mode.as_deref().unwrap_or("mode unknown")
            ),
        };
        let _ = writeln!(s, "- Node `{}`: {}", md(node), md(&plane));
    }
    let roles: Vec<String> = outcome
        .roles
        .nodes
        .iter()
        .map(|(r, n)| format!("{} `{}`", r.as_str(), md(n)))
        .collect();
    let _ = writeln!(
        s,
        "- Roles: {}",
        if roles.is_empty() {
            "none".into()
        } else {
            roles.join(", ")
        }
    );
    for why in &outcome.roles.excluded {
        let _ = writeln!(s, "- Left out: {}", md(why));
    }
    match &outcome.partial {
        Some(only) => {
            let _ = writeln!(
                s,
                "- Not requested: every case but {} (`--only`)",
                md(&only.join(", "))
            );
        }
        None => {
            let _ = writeln!(s, "- Requested: every case of the catalogue");
        }
    }
    if !opts.external_cases {
        let _ = writeln!(s, "- Not requested: the external cases (`--external-cases`)");
    }
    s.push('\n');
}

/// `README.md` of the evidence directory: what each file holds.
fn readme(opts: &VerifyOptions) -> String {
    format!(
        "# Evidence of `locality verify` run {run}\n\n\
         {sim}\
         Start with `ledger.md` (what was tested, the decision, every case) or open `report.html`.\n\n\
         | file | what it holds |\n\
         |---|---|\n\
         | `ledger.md`, `report.html` | the run for people: the decision, the advice, every case with what was expected and what was seen |\n\
         | `ledger.json`, `decision.json` | the same for tools (`kind: VerifyLedger`); the decision alone |\n\
         | `junit.xml` | one test case per case, for CI test reports |\n\
         | `00-versions.yaml` | the API server's and each node's kube-proxy version and mode, as read |\n\
         | `01-nodes.yaml` | every node, the role it was given or why it was left out, the nodes sampled |\n\
         | `02-fixture/` | every manifest the run created, in order |\n\
         | `03-preflight.yaml` | what was checked before any case |\n\
         | `cases/ID/` | per case: the state the expectation came from (`endpointslices.yaml`), the expectation and every try |\n\
         | `lag/` | each node's kube-proxy sync state around a change (the lag measured) |\n\
         | `SHA256SUMS` | a checksum of every other file: `sha256sum -c SHA256SUMS` |\n\n\
         Owner: {owner}. No credential is written here.\n",
        run = opts.run_id,
        sim = if opts.simulated {
            "This run was against the SIMULATED cluster: a self-test of locality, not evidence about a real data plane.\n\n"
        } else {
            ""
        },
        owner = locality_report::display::markdown(&opts.owner),
    )
}

fn junit(outcome: &VerifyOutcome, decision_line: &str, opts: &VerifyOptions) -> String {
    use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("locality verify");
    let mut suite = TestSuite::new(format!("locality-verify-{}", opts.run_id));
    suite.add_property(Property::new(
        "decision",
        locality_report::display::term(decision_line).into_owned(),
    ));
    suite.add_property(Property::new(
        "partial",
        if outcome.is_partial() { "true" } else { "false" },
    ));
    suite.add_property(Property::new("simulated", opts.simulated.to_string()));
    // XML 1.0 cannot carry most controls: values from outside are escaped as on a terminal.
    let term = |t: &str| locality_report::display::term(t).into_owned();
    suite.add_property(Property::new("owner", term(&opts.owner)));
    for c in &outcome.cases {
        let status = match c.status {
            crate::judge::Status::Pass => TestCaseStatus::success(),
            crate::judge::Status::Fail => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(term(&c.why));
                s
            }
            crate::judge::Status::Incomplete => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(format!("INCOMPLETE: {}", term(&c.why)));
                s
            }
            crate::judge::Status::NotExecuted => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(term(&c.why));
                s
            }
        };
        let mut tc = TestCase::new(term(&format!("{}: {}", c.id, c.description)), status);
        tc.set_classname("locality.verify");
        suite.add_test_case(tc);
    }
    report.add_test_suite(suite);
    report.to_string().unwrap_or_default()
}
