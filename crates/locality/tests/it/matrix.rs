//! Drives the real `locality` binary: `matrix` on the shipped examples, snapshot-tested.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// An example file, relative to the crate directory the tests (and the binary they start)
/// run in, so that the reports' `source` is the same in every clone.
fn example(name: &str) -> PathBuf {
    PathBuf::from("../../examples").join(name)
}

fn locality() -> Command {
    let mut c = Command::cargo_bin("locality").expect("locality binary");
    // Reports carry the time: fix it (crate::clock) so that snapshots do not rot.
    c.env("SOURCE_DATE_EPOCH", "1767225600");
    c.env_remove("LOCALITY_PROFILE");
    c
}

fn run_ok(args: &[&str]) -> String {
    let out = locality()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).expect("utf-8 output")
}

fn matrix_json(file: &str, extra: &[&str]) -> Value {
    let path = example(file);
    let mut args = vec!["matrix", "-f", path.to_str().unwrap(), "-o", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&run_ok(&args)).expect("valid JSON")
}

/// Finds the route of `node` for `source`→`destination` in the first service entry matching `name`.
fn route<'a>(doc: &'a Value, name: &str, family: &str, node: &str, source: &str, dest: &str) -> &'a Value {
    find_route(
        doc,
        |s| s["name"] == name && s["ipFamily"] == family,
        node,
        source,
        dest,
    )
    .unwrap_or_else(|| panic!("route {name} {family} {node} {source}->{dest}"))
}

/// The route of `node` for `source`→`destination` in the first service entry `svc` accepts.
fn find_route<'a>(
    doc: &'a Value,
    svc: impl Fn(&Value) -> bool,
    node: &str,
    source: &str,
    dest: &str,
) -> Option<&'a Value> {
    doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| svc(s))
        .and_then(|s| s["nodes"].as_array().unwrap().iter().find(|n| n["node"] == node))
        .and_then(|n| {
            n["routes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["source"] == source && r["destination"] == dest)
        })
}

#[test]
fn three_zones_summary() {
    let out = run_ok(&[
        "matrix",
        "-f",
        example("three-zones.json").to_str().unwrap(),
        "-o",
        "summary",
    ]);
    insta::assert_snapshot!("three_zones_summary", out);
}

#[test]
fn three_zones_json_follows_spec_4_1() {
    let text = run_ok(&[
        "matrix",
        "-f",
        example("three-zones.json").to_str().unwrap(),
        "-o",
        "json",
    ]);
    // The raw text pins the field order of docs/design.md §4.1, not only the values.
    insta::assert_snapshot!("three_zones_json", text);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["apiVersion"], "locality/v1");
    assert_eq!(doc["kind"], "RoutingMatrix");
    assert_eq!(doc["dataPlane"]["kind"], "kube-proxy");
    assert_eq!(doc["dataPlane"]["mode"], "iptables");
    // The playbook's cases B1, B2 and C.
    let b1 = route(&doc, "myservice", "IPv4", "node-a", "pod", "clusterIP");
    assert_eq!(b1["verdict"], "deliver");
    assert_eq!(b1["endpoints"], serde_json::json!(["10.244.1.10:8080"]));
    assert_eq!(b1["reason"], "local-ready");
    assert_eq!(b1["confidence"], "upstream-test");
    let c = route(&doc, "myservice", "IPv4", "node-c", "pod", "clusterIP");
    assert_eq!(c["verdict"], "drop");
    assert_eq!(c["endpoints"], serde_json::json!([]));
    assert_eq!(c["reason"], "no-local-endpoints");
}

#[test]
fn json_does_not_depend_on_input_order() {
    let text = std::fs::read_to_string(example("three-zones.json")).unwrap();
    let mut list: Value = serde_json::from_str(&text).unwrap();
    list["items"].as_array_mut().unwrap().reverse();
    let out = locality()
        .args(["matrix", "-f", "-", "-o", "json"])
        .write_stdin(serde_json::to_string(&list).unwrap())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut reversed: Value = serde_json::from_slice(&out).unwrap();
    let mut forward = matrix_json("three-zones.json", &[]);
    // The header names the input (stdin here, the file there); the rest is the same.
    for doc in [&mut reversed, &mut forward] {
        doc.as_object_mut().unwrap().remove("header");
    }
    assert_eq!(reversed, forward);
}

#[test]
fn yaml_output_is_the_same_document() {
    let path = example("three-zones.json");
    let yaml = run_ok(&["matrix", "-f", path.to_str().unwrap(), "-o", "yaml"]);
    // Read the YAML back through the tool's own reader would be circular; compare as values.
    let from_yaml: Value = serde_saphyr_roundtrip(&yaml);
    assert_eq!(from_yaml, matrix_json("three-zones.json", &[]));
}

fn serde_saphyr_roundtrip(yaml: &str) -> Value {
    // serde_json::Value deserialises from any self-describing format.
    serde_saphyr::from_str(yaml).expect("valid YAML")
}

#[test]
fn manifests_are_derived_dual_stack_and_prefer_same_node() {
    let path = example("telemetry-manifests.yaml");
    let text = run_ok(&["matrix", "-f", path.to_str().unwrap(), "-o", "json"]);
    insta::assert_snapshot!("telemetry_manifests_json", text);
    let doc: Value = serde_json::from_str(&text).unwrap();
    // node-3 runs no agent: blind for the ITP Local agent Service.
    let blind = route(&doc, "otel-agent", "IPv4", "node-3", "pod", "clusterIP");
    assert_eq!(blind["verdict"], "drop");
    let services = doc["services"].as_array().unwrap();
    assert!(services.iter().all(|s| s["endpointSource"] == "derived"));
    // Dual-stack: one entry per family, IPv6 endpoints bracketed.
    let v6 = route(&doc, "gateway", "IPv6", "node-1", "pod", "clusterIP");
    assert_eq!(v6["endpoints"], serde_json::json!(["[fd00:10:244:1::20]:8443"]));
    assert_eq!(v6["topology"], "PreferSameNode");
    // PreferSameNode falls back (node-2 has no gateway): both endpoints, same zone preferred
    // only when zone hints match; node-2 is in eu-west-1b with the node-3 gateway.
    let fallback = route(&doc, "gateway", "IPv4", "node-2", "pod", "clusterIP");
    assert_eq!(fallback["verdict"], "deliver");
    assert_eq!(fallback["topology"], "PreferSameZone");
    assert_eq!(fallback["endpoints"], serde_json::json!(["10.244.3.20:8443"]));
    // ETP Local NodePort from outside on node-2 (no gateway there): dropped.
    let external = route(&doc, "gateway", "IPv4", "node-2", "external", "nodePort");
    assert_eq!(external["verdict"], "drop");
}

#[test]
fn table_output() {
    let out = run_ok(&["matrix", "-f", example("three-zones.json").to_str().unwrap()]);
    insta::assert_snapshot!("three_zones_table", out);
}

#[test]
fn unknown_proxy_mode_marks_disagreeing_cells() {
    let doc = matrix_json("telemetry-manifests.yaml", &["--proxy-mode", "unknown"]);
    assert_eq!(doc["dataPlane"]["mode"], Value::Null);
    // ITP Local without a local endpoint: DROP in iptables/nftables, refused in ipvs.
    let r = route(&doc, "otel-agent", "IPv4", "node-3", "pod", "clusterIP");
    assert_eq!(r["verdict"], "mode-dependent");
    assert_eq!(r["byMode"]["iptables"]["verdict"], "drop");
    assert_eq!(r["byMode"]["ipvs"]["verdict"], "reject");
    // Where the modes agree the verdict is plain.
    let ok = route(&doc, "otel-agent", "IPv4", "node-1", "pod", "clusterIP");
    assert_eq!(ok["verdict"], "deliver");
    assert!(ok.get("byMode").is_none());
}

#[test]
fn filters_and_suggestions() {
    let path = example("three-zones.json");
    let p = path.to_str().unwrap();
    let doc: Value =
        serde_json::from_str(&run_ok(&["matrix", "-f", p, "-o", "json", "--node", "node-c"])).unwrap();
    let nodes = doc["services"][0]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0]["node"], "node-c");
    locality()
        .args(["matrix", "-f", p, "--node", "node-x"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no Node \"node-x\"")
                .and(predicate::str::contains("did you mean node-")),
        );
    locality()
        .args(["matrix", "-f", p, "--service", "internal-acceptance/myservce"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "did you mean internal-acceptance/myservice",
        ));
}

#[test]
fn bad_versions_are_usage_errors() {
    let path = example("three-zones.json");
    for v in ["1.99", "banana", "2.0", "1.21"] {
        locality()
            .args(["matrix", "-f", path.to_str().unwrap(), "--kube-version", v])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--kube-version").and(predicate::str::contains("unsupported")));
    }
}

#[test]
fn versions_default_to_kubelet_versions_with_a_warning() {
    let path = example("three-zones.json");
    let out = locality()
        .args(["matrix", "-f", path.to_str().unwrap(), "-o", "json"])
        .assert()
        .success();
    let out = out.get_output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("newest kubeletVersion"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["kubernetesVersion"], "1.35");
    // Forcing an old kube-proxy changes behaviour: before 1.22 ITP did not exist (refused).
    locality()
        .args([
            "matrix",
            "-f",
            path.to_str().unwrap(),
            "--kube-proxy-version",
            "1.21",
        ])
        .assert()
        .code(2);
}

#[test]
fn kubectl_plugin_help_says_kubectl_locality() {
    Command::cargo_bin("kubectl-locality")
        .unwrap()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage: kubectl locality"));
    locality()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage: locality"));
}

#[test]
fn skipped_kinds_are_reported_once() {
    let path = example("telemetry-manifests.yaml");
    locality()
        .args(["matrix", "-f", path.to_str().unwrap(), "-o", "summary"])
        .assert()
        .success()
        .stderr(predicate::str::contains("1 ConfigMap").count(1));
}

#[test]
fn explain_blind_node_in_words() {
    let path = example("three-zones.json");
    let out = locality()
        .args([
            "explain",
            "internal-acceptance/myservice",
            "--node",
            "node-c",
            "-f",
            path.to_str().unwrap(),
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    insta::assert_snapshot!("explain_three_zones_node_c", text);
}

#[test]
fn explain_json_by_pod_and_errors() {
    let path = example("three-zones.json");
    let p = path.to_str().unwrap();
    let out = run_ok(&[
        "explain",
        "myservice",
        "-n",
        "internal-acceptance",
        "--pod",
        "client-a",
        "-f",
        p,
        "-o",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["kind"], "Explanation");
    let e = &doc["explanations"][0];
    assert_eq!(e["node"], "node-a");
    assert_eq!(e["verdict"], "deliver");
    assert_eq!(e["deliveredTo"], serde_json::json!(["10.244.1.10:8080"]));
    assert_eq!(e["endpoints"][0]["local"], true);
    assert_eq!(e["endpoints"][0]["inLocalSet"], true);
    // Unknown names: exit 2 with suggestions.
    locality()
        .args([
            "explain",
            "internal-acceptance/myservise",
            "--node",
            "node-c",
            "-f",
            p,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "did you mean internal-acceptance/myservice",
        ));
    locality()
        .args([
            "explain",
            "internal-acceptance/myservice",
            "--node",
            "node-z",
            "-f",
            p,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean"));
    // A destination the Service does not have.
    locality()
        .args([
            "explain",
            "internal-acceptance/myservice",
            "--node",
            "node-a",
            "--dest",
            "nodePort",
            "-f",
            p,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no nodePort destination"));
    // --node or --pod is required.
    locality()
        .args(["explain", "internal-acceptance/myservice", "-f", p])
        .assert()
        .code(2);
}

#[test]
fn completions_and_man_page_are_generated() {
    let bash = run_ok(&["completions", "bash"]);
    assert!(
        bash.contains("_locality()") && bash.contains("matrix") && bash.contains("audit"),
        "{bash}"
    );
    let zsh = run_ok(&["completions", "zsh"]);
    assert!(zsh.contains("#compdef locality"), "{zsh}");
    let man = run_ok(&["man"]);
    assert!(man.contains(".TH locality 1") && man.contains("matrix"), "{man}");
    locality().args(["completions", "tcsh"]).assert().code(2);
}

// ----- Randomized differential test against an upstream-derived oracle (issue #10) -----

#[path = "oracle/differential.rs"]
mod differential;

// ----- The EXAMPLES of every command's help, run -----

mod as_applied;
#[path = "report/examples.rs"]
mod examples;

/// `matrix` decodes the Pods of a file only when a Service has no EndpointSlice in it (the
/// file is read again then); stdin is always read whole. Both give the same document, with
/// and without the Service's slices.
#[test]
fn pods_are_decoded_only_when_a_service_needs_them() {
    let text = std::fs::read_to_string(example("three-zones.json")).unwrap();
    let with_slices: Value = serde_json::from_str(&text).unwrap();
    let mut without_slices = with_slices.clone();
    without_slices["items"]
        .as_array_mut()
        .unwrap()
        .retain(|i| i["kind"] != "EndpointSlice");
    let dir = std::env::temp_dir().join(format!("locality-lazy-pods-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, list, source) in [
        ("with-slices.json", &with_slices, "EndpointSlices"),
        ("without-slices.json", &without_slices, "derived"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string(list).unwrap()).unwrap();
        let mut from_file: Value =
            serde_json::from_str(&run_ok(&["matrix", "-f", path.to_str().unwrap(), "-o", "json"])).unwrap();
        let out = locality()
            .args(["matrix", "-f", "-", "-o", "json"])
            .write_stdin(serde_json::to_string(list).unwrap())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let mut from_stdin: Value = serde_json::from_slice(&out).unwrap();
        for doc in [&mut from_file, &mut from_stdin] {
            doc.as_object_mut().unwrap().remove("header");
        }
        assert_eq!(from_file, from_stdin, "{name}");
        let svc = &from_file["services"][0];
        assert_eq!(svc["endpointSource"], source, "{name}");
        let c = route(&from_file, "myservice", "IPv4", "node-a", "pod", "clusterIP");
        assert_ne!(
            c["endpoints"],
            serde_json::json!([]),
            "{name}: the pods back the Service"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn default_output_is_the_summary_on_a_terminal_and_the_wide_table_elsewhere() {
    let path = example("three-zones.json");
    let args = ["matrix", "-f", path.to_str().unwrap()];
    // On a terminal: one line per service port, the blind node named.
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("locality"));
    cmd.args(args).env("SOURCE_DATE_EPOCH", "1767225600");
    cmd.env_remove("LOCALITY_PROFILE");
    let term = locality_testkit::terminal::run_on_terminal(cmd);
    assert!(term.status.success(), "{}", term.stderr);
    assert!(term.stdout.contains("BLIND NODES"), "{}", term.stdout);
    assert!(!term.stdout.contains("ENDPOINTS"), "{}", term.stdout);
    // A terminal gets colours (SGR sequences); the text is -o summary's.
    assert!(term.stdout.contains("\x1b[31m"), "{}", term.stdout);
    assert_eq!(
        strip_sgr(&term.stdout),
        run_ok(&[args[0], args[1], args[2], "-o", "summary"]),
        "the terminal's default is -o summary"
    );
    // In a pipe: the full table, as `-o wide` and its former name `-o table`.
    let piped = run_ok(&args);
    assert!(piped.contains("ENDPOINTS"), "{piped}");
    assert_eq!(piped, run_ok(&[args[0], args[1], args[2], "-o", "wide"]));
    assert_eq!(piped, run_ok(&[args[0], args[1], args[2], "-o", "table"]));
}

#[test]
fn wide_table_names_endpoints_by_pod_and_node_and_the_annotation_hints() {
    // prefer-close.json's catalog-cache, asking for hints by the topology-mode annotation
    // instead of trafficDistribution: its slices' hints are the same.
    let text = std::fs::read_to_string(example("prefer-close.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    for o in doc["items"].as_array_mut().unwrap() {
        if o["kind"] == "Service" && o["metadata"]["name"] == "catalog-cache" {
            o["spec"].as_object_mut().unwrap().remove("trafficDistribution");
            o["metadata"]["annotations"] = serde_json::json!({"service.kubernetes.io/topology-mode": "Auto"});
        }
    }
    let dir = locality_testkit::files::TempDir::new("matrix-auto");
    let file = dir.path().join("auto.json");
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = run_ok(&["matrix", "-f", file.to_str().unwrap(), "-o", "wide"]);
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("catalog/catalog-cache"))
        .collect();
    assert!(!rows.is_empty(), "{out}");
    assert!(
        rows.iter()
            .any(|r| r.contains("(zone hints (topology-mode Auto))")),
        "{out}"
    );
    assert!(!out.contains("PreferSameZone"), "{out}");
    // Endpoints are pod@node, never bare addresses.
    let json = run_ok(&["matrix", "-f", file.to_str().unwrap(), "-o", "json"]);
    let m: Value = serde_json::from_str(&json).unwrap();
    let addr = route(&m, "catalog-cache", "IPv4", "node-1", "pod", "clusterIP")["endpoints"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!out.contains(&addr), "{addr} printed as an address: {out}");
    assert!(rows.iter().all(|r| r.contains("@node-")), "{out}");
}

/// `text` without its SGR (colour) sequences, `ESC [ … m`.
fn strip_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let end = tail.find('m').expect("an SGR sequence ends with m");
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}
