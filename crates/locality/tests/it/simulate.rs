//! `locality simulate` on a dump of the user's cluster, through the real binary: the
//! telemetry incident walk-through of the README (examples/telemetry-incident.json), and the
//! `SimulationReport` checked against its JSON Schema (docs/schemas/).

use std::collections::BTreeSet;
use std::path::PathBuf;

use assert_cmd::Command;
use locality_testkit::files::TempDir;
use serde_json::Value;

/// The repository root.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The binary run from the repository root (the README's commands run there), with a fixed
/// report date; the simulate tests' one runner.
pub(crate) fn run(args: &[&str]) -> assert_cmd::assert::Assert {
    command(args).assert()
}

/// That command, not yet run.
fn command(args: &[&str]) -> Command {
    let mut c = Command::cargo_bin("locality").expect("locality binary");
    c.env("SOURCE_DATE_EPOCH", "1767225600")
        .env_remove("LOCALITY_PROFILE")
        .current_dir(root())
        .args(args);
    c
}

/// Its standard output, the run a success.
fn locality(args: &[&str]) -> Vec<u8> {
    run(args).success().get_output().stdout.clone()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&locality(args)).expect("JSON")
}

const DUMP: &str = "examples/telemetry-incident.json";

/// The walk-through's rollout of the agent DaemonSet, as JSON.
const ROLLOUT: [&str; 8] = [
    "simulate",
    "-f",
    DUMP,
    "--rollout",
    "daemonset/monitoring/node-agent",
    "-o",
    "json",
    "-q",
];

/// The workers that run a gateway pod, read from the dump itself.
fn gateway_workers() -> BTreeSet<String> {
    let dump: Value = serde_json::from_str(&std::fs::read_to_string(root().join(DUMP)).unwrap()).unwrap();
    dump["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Pod" && o["metadata"]["namespace"] == "edge")
        .map(|o| o["spec"]["nodeName"].as_str().unwrap().to_string())
        .collect()
}

/// The nodes of a `SimulationReport` service port that have a drop window.
pub(crate) fn windowed_nodes(port: &Value) -> BTreeSet<String> {
    port["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| !n["windows"].as_array().unwrap().is_empty())
        .map(|n| n["name"].as_str().unwrap().to_string())
        .collect()
}

/// Done-when of the issue: rolling the agent (maxSurge 0 behind ITP Local) opens a drop window
/// on every worker that runs a gateway pod; with ITP Cluster and PreferSameNode no window is
/// longer than one kube-proxy sync interval.
#[test]
fn telemetry_incident_walk_through() {
    let gateways = gateway_workers();
    assert_eq!(gateways.len(), 12, "the dump's gateway pods: {gateways:?}");
    let doc = json(&ROLLOUT);
    assert_eq!(doc["apiVersion"], "locality/v1");
    assert_eq!(doc["kind"], "SimulationReport");
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true);
    assert_eq!(alt["outcome"], "dropWindows");
    assert_eq!(alt["changes"][0]["maxSurge"], "0", "the dump's strategy");
    let port = &alt["servicePorts"][0];
    assert_eq!(port["service"], "monitoring/node-agent");
    let windowed = windowed_nodes(port);
    assert!(
        gateways.is_subset(&windowed),
        "every gateway worker has a drop window: missing {:?}",
        gateways.difference(&windowed).collect::<Vec<_>>()
    );
    // The seeded pods stayed on the dump's nodes: the nodes with clients are the gateway
    // workers and CoreDNS's two (worker-01, worker-02), 14 client pods in all.
    let with_clients: BTreeSet<String> = port["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["clients"].as_u64().unwrap() > 0)
        .map(|n| n["name"].as_str().unwrap().to_string())
        .collect();
    let mut expected = gateways.clone();
    expected.extend(["worker-01".to_string(), "worker-02".to_string()]);
    assert_eq!(with_clients, expected);
    assert_eq!(alt["totals"]["affectedClientPods"], 14);
    // Each window is the agent pod being replaced: longer than a sync interval.
    let sync = doc["settings"]["proxySyncSeconds"].as_f64().unwrap();
    assert!(alt["totals"]["longestWindowSeconds"].as_f64().unwrap() > 5.0 * sync);

    let doc = json(&[
        "simulate",
        "-f",
        DUMP,
        "--rollout",
        "daemonset/monitoring/node-agent",
        "--set",
        "monitoring/node-agent:internalTrafficPolicy=Cluster",
        "--set",
        "monitoring/node-agent:trafficDistribution=PreferSameNode",
        "-o",
        "json",
        "-q",
    ]);
    let alt = &doc["alternatives"][0];
    assert_eq!(
        alt["prepared"].as_array().unwrap().len(),
        2,
        "the --set are applied first"
    );
    let step = doc["settings"]["stepSeconds"].as_f64().unwrap();
    // kube-proxy's sync interval: the longest a written change waits before the rules hold
    // it (the programming delay, and a change just after a sync waiting for the next one).
    let sync = doc["settings"]["proxySyncSeconds"].as_f64().unwrap()
        + doc["settings"]["proxyMinSyncSeconds"].as_f64().unwrap();
    for n in alt["servicePorts"][0]["nodes"].as_array().unwrap() {
        for w in n["windows"].as_array().unwrap() {
            let len = w["endSeconds"].as_f64().unwrap() - w["startSeconds"].as_f64().unwrap();
            assert!(len <= sync + step + 1e-9, "{} blind {len} s: {w}", n["name"]);
            // The only drop left: the old pod exited before kube-proxy programmed the change.
            assert_eq!(w["cause"], "endpointGone", "{w}");
        }
    }
    for (subject, value) in [("kube-proxy", "1s"), ("kube-proxy minSyncPeriod", "1s")] {
        assert!(
            doc["assumptions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["subject"] == subject && a["value"] == value),
            "the sync interval is named as an assumption: {subject}"
        );
    }
}

/// The README's walk-through block is this command's output, verbatim.
#[test]
fn readme_shows_the_walk_through_output() {
    let out = String::from_utf8(locality(&[
        "simulate",
        "-f",
        DUMP,
        "--rollout",
        "daemonset/monitoring/node-agent",
        "--compare",
        "itp=Cluster,td=PreferSameNode",
        "maxSurge=1,maxUnavailable=0",
        "--color",
        "never",
        "-q",
    ]))
    .unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let begin = "<!-- simulate-walkthrough:begin -->\n```text\n";
    let start = readme.find(begin).expect("README has the walk-through block") + begin.len();
    let len = readme[start..]
        .find("```\n<!-- simulate-walkthrough:end -->")
        .expect("block end");
    let shown = &readme[start..start + len];
    // From the notice on (the header names the tool's version).
    let from = out.find("SIMULATED what-if").unwrap();
    assert_eq!(
        shown,
        &out[from..],
        "README.md walk-through is stale; paste the output"
    );
}

// ---- JSON Schema (the subset the schema file uses) -------------------------------------

/// Keywords this checker implements; the schema must use no other (nothing silently ignored).
const KEYWORDS: [&str; 15] = [
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
];

fn keywords_used(s: &Value, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = s {
        for (k, v) in m {
            out.insert(k.clone());
            match k.as_str() {
                "properties" | "$defs" => {
                    for sub in v.as_object().unwrap().values() {
                        keywords_used(sub, out);
                    }
                }
                "items" => keywords_used(v, out),
                _ => {}
            }
        }
    }
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "integer" => v.is_u64() || v.is_i64(),
        "number" => v.is_number(),
        _ => false,
    }
}

fn validate(root: &Value, s: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local $ref");
        return validate(root, &root["$defs"][name], v, path, errors);
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_ok(t, v),
            Value::Array(ts) => ts.iter().any(|t| type_ok(t.as_str().unwrap(), v)),
            _ => false,
        };
        if !ok {
            errors.push(format!("{path}: {v} is not of type {t}"));
            return;
        }
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        errors.push(format!("{path}: {v} is not {c}"));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        errors.push(format!("{path}: {v} is not one of {e:?}"));
    }
    if let (Some(min), Some(x)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64())
        && x < min
    {
        errors.push(format!("{path}: {x} < {min}"));
    }
    if let (Some(max), Some(x)) = (s.get("maximum").and_then(Value::as_f64), v.as_f64())
        && x > max
    {
        errors.push(format!("{path}: {x} > {max}"));
    }
    if let Value::Object(m) = v {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !m.contains_key(r.as_str().unwrap()) {
                errors.push(format!("{path}: missing {r}"));
            }
        }
        for (k, x) in m {
            match props.and_then(|p| p.get(k)) {
                Some(sub) => validate(root, sub, x, &format!("{path}.{k}"), errors),
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{path}: unexpected property {k}"));
                }
                None => {}
            }
        }
    }
    if let (Value::Array(a), Some(items)) = (v, s.get("items")) {
        for (i, x) in a.iter().enumerate() {
            validate(root, items, x, &format!("{path}[{i}]"), errors);
        }
    }
}

fn schema() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schemas/simulation-report.schema.json")).unwrap(),
    )
    .unwrap()
}

/// What the JSON Schema finds wrong with `doc` (empty: valid).
pub(crate) fn errors(doc: &Value) -> Vec<String> {
    let s = schema();
    let mut e = Vec::new();
    validate(&s, &s, doc, "$", &mut e);
    e
}

#[test]
fn reports_validate_against_the_schema() {
    let mut used = BTreeSet::new();
    keywords_used(&schema(), &mut used);
    let unknown: Vec<&String> = used.iter().filter(|k| !KEYWORDS.contains(&k.as_str())).collect();
    assert!(
        unknown.is_empty(),
        "the schema uses keywords this check ignores: {unknown:?}"
    );

    // Drop windows, a comparison, Service changes alone and a node event: every shape.
    for args in [
        vec![
            "--rollout",
            "daemonset/monitoring/node-agent",
            "--compare",
            "itp=Cluster,td=PreferSameNode",
        ],
        vec![
            "--set",
            "monitoring/node-agent:trafficDistribution=PreferSameNode",
        ],
        vec!["--drain", "worker-02"],
        vec![
            "--delete",
            "pod/monitoring/node-agent-sz5px",
            "--grace-period",
            "5",
        ],
    ] {
        let mut all = vec!["simulate", "-f", DUMP, "-o", "json", "-q"];
        all.extend(args.iter().copied());
        let doc = json(&all);
        let e = errors(&doc);
        assert!(e.is_empty(), "{args:?}: {e:#?}");
    }
    // The checker is not vacuous: a snake_case key, a Rust debug string and a negative
    // share are each caught.
    let mut doc = json(&["simulate", "-f", DUMP, "--drain", "worker-02", "-o", "json", "-q"]);
    doc["alternatives"][0]["totals"]["lost_share"] = Value::from(0.1);
    doc["alternatives"][0]["changes"][0]["type"] = Value::from("Drain { node: \"worker-02\" }");
    doc["alternatives"][0]["totals"]["trafficLeftNodeShare"] = Value::from(-0.0001);
    let e = errors(&doc);
    assert_eq!(e.len(), 3, "{e:#?}");
}

/// "No change" only when nothing changes: a Service change that leaves nodes blind says so.
#[test]
fn a_change_that_leaves_nodes_blind_says_so() {
    // trafficDistribution means nothing under internalTrafficPolicy: Local: no route changes,
    // and the control-plane nodes (no agent there) stay blind.
    let doc = json(&[
        "simulate",
        "-f",
        DUMP,
        "--set",
        "monitoring/node-agent:trafficDistribution=PreferSameNode",
        "-o",
        "json",
        "-q",
    ]);
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["outcome"], "stillBlind", "{alt}");
    assert!(alt["summary"].as_str().unwrap().contains("stay blind"), "{alt}");
    let text = String::from_utf8(locality(&[
        "simulate",
        "-f",
        DUMP,
        "--set",
        "monitoring/node-agent:trafficDistribution=PreferSameNode",
        "-q",
    ]))
    .unwrap();
    assert!(!text.contains("No change"), "{text}");
    assert!(
        text.contains("3 node(s) stay blind before and after: cp-1, cp-2, cp-3"),
        "{text}"
    );
}

/// Markdown for a pull request: the notice, the comparison table, a row per windowed node.
#[test]
fn markdown_for_a_pull_request() {
    let md = String::from_utf8(locality(&[
        "simulate",
        "-f",
        DUMP,
        "--rollout",
        "ds/monitoring/node-agent",
        "--compare",
        "itp=Cluster,td=PreferSameNode",
        "-o",
        "markdown",
        "-q",
    ]))
    .unwrap();
    assert!(md.contains("> **SIMULATED what-if"), "{md}");
    assert!(
        md.contains("| as given | 219.5 | 14 | worker-02 (8.2 s) | 8.2 | 4.1% | 0.0% |"),
        "{md}"
    );
    assert!(md.contains("| itp=Cluster,td=PreferSameNode |"), "{md}");
    let rows = md.lines().filter(|l| l.starts_with("| worker-")).count();
    assert_eq!(rows, 2 * 27, "{md}");
}

/// A drain that a PodDisruptionBudget blocks for good (`minAvailable` = the Deployment's
/// replicas, one of them on the drained node) stops at the limit and says why, in JSON and in
/// text; without the budget the same drain settles.
#[test]
fn a_drain_blocked_by_a_disruption_budget_says_so_at_the_limit() {
    let tmp = TempDir::new("simulate-pdb");
    let dir = tmp.path().to_path_buf();
    let pdb = dir.join("pdb.yaml");
    std::fs::write(
        &pdb,
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: gateway, namespace: edge}\n\
         spec:\n  minAvailable: 12\n  selector:\n    matchLabels: {app.kubernetes.io/name: gateway}\n",
    )
    .unwrap();
    let pdb = pdb.to_str().unwrap();
    let args = [
        "simulate",
        "-f",
        DUMP,
        "-f",
        pdb,
        "--drain",
        "worker-01",
        "--limit",
        "60",
        "-q",
    ];
    let mut with_json = args.to_vec();
    with_json.extend(["-o", "json"]);
    let doc = json(&with_json);
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], false);
    assert_eq!(alt["durationSeconds"], 60.0);
    let why = alt["unsettledReasons"][0].as_str().unwrap();
    assert!(
        why.contains("the drain of node worker-01 did not finish"),
        "{why}"
    );
    assert!(why.contains("edge/gateway-"), "{why}");
    assert!(why.contains("needs 12 healthy pods and has 12"), "{why}");
    let text = String::from_utf8(locality(&args)).unwrap();
    assert!(text.contains("Did NOT settle"), "{text}");
    assert!(
        text.contains("Not settled: the drain of node worker-01 did not finish"),
        "{text}"
    );

    let doc = json(&[
        "simulate",
        "-f",
        DUMP,
        "--drain",
        "worker-01",
        "--limit",
        "600",
        "-q",
        "-o",
        "json",
    ]);
    let alt = &doc["alternatives"][0];
    assert_eq!(alt["settled"], true, "{:?}", alt["unsettledReasons"]);
    assert_eq!(alt["unsettledReasons"], Value::Array(Vec::new()));
}

/// `LOCALITY_PROFILE=1` times the phases of a simulation on stderr, in order (what
/// bench/sim/README.md reads to say where the time goes), and leaves the report alone.
#[test]
fn profile_names_each_phase_in_order() {
    let plain = locality(&ROLLOUT);
    let profiled = command(&ROLLOUT).env("LOCALITY_PROFILE", "1").assert().success();
    let out = profiled.get_output();
    assert_eq!(out.stdout, plain);
    let phases: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("locality-profile: phase="))
        .map(|l| {
            let (phase, seconds) = l.split_once(" seconds=").expect("a duration");
            assert!(seconds.parse::<f64>().is_ok_and(|s| s >= 0.0), "{l}");
            phase.to_string()
        })
        .collect();
    assert_eq!(phases, ["load", "seed", "warm-up", "what-if", "report"]);
}
