//! Randomized differential test (issue #10): `locality matrix -o json` against an independent
//! oracle written from upstream Kubernetes source in Python (`tests/it/oracle/kube_proxy.py`).
//!
//! A seeded SplitMix64 generator writes small clusters as JSON `List`s: 2–4 nodes in 1–3
//! zones (some without a zone label), selector-less Services (ITP Local/Cluster/unset,
//! every `trafficDistribution`, ClusterIP/NodePort/headless, named and unnamed ports,
//! protocol left out, `sessionAffinity` unset/None/ClientIP with or without its timeout), and
//! EndpointSlices written by hand: conditions nil/true/false/null,
//! zone and node hints, addresses repeated across slices (duplicates), port names and
//! protocols left out or mismatched, `service.kubernetes.io/service-proxy-name` and
//! `service.kubernetes.io/headless` labels on Services and slices. Every file is run through
//! the binary and the oracle at kube-proxy 1.35 and 1.36 (the two duplicate rules and the two
//! informer label filters); each pod → ClusterIP route must agree in verdict, endpoints,
//! topology, fallback, reason and client-IP affinity timeout. Where Go's map order decides (duplicates), the oracle gives
//! every possible outcome: the tool's must be one of them, marked `inferred`; where the order
//! does not matter the tool's must be the one outcome, not marked `inferred`.
//!
//! `LOCALITY_DIFF_SEED` (first seed) and `LOCALITY_DIFF_N` (number of scenarios) explore
//! further; a failure prints the seed, the file (kept), and both answers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use locality_testkit::files::TempDir;
use serde_json::{Value, json};

const VERSIONS: [&str; 2] = ["1.35", "1.36"];
const DEFAULT_SCENARIOS: u64 = 200;
const DEFAULT_SEED: u64 = 0x10c4_11f7;

/// SplitMix64: tiny, seedable, good enough to pick shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability `pct`%.
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }
    fn subset(&mut self, xs: &[String]) -> Vec<String> {
        xs.iter().filter(|_| self.chance(50)).cloned().collect()
    }
}

const PROXY_NAME: &str = "service.kubernetes.io/service-proxy-name";
const HEADLESS: &str = "service.kubernetes.io/headless";

/// Puts `value` at `key` unless it is `None` (the field left out).
fn put(obj: &mut Value, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        obj[key] = v;
    }
}

/// Random labels: the two informer-filter labels, each now and then.
fn filter_labels(rng: &mut Rng, labels: &mut Value) {
    if rng.chance(8) {
        labels[PROXY_NAME] = json!("other-proxy");
    }
    if rng.chance(8) {
        labels[HEADLESS] = json!("");
    }
}

/// One random cluster as a JSON `List`.
fn scenario(seed: u64) -> Value {
    let mut rng = Rng(seed);
    let zones: Vec<String> = ["zone-a", "zone-b", "zone-c"][..1 + rng.below(3)]
        .iter()
        .map(|z| z.to_string())
        .collect();
    let nodes: Vec<String> = (1..=2 + rng.below(3)).map(|i| format!("n{i}")).collect();
    let mut items = Vec::new();
    for name in &nodes {
        let mut labels = json!({ "kubernetes.io/hostname": name });
        if !rng.chance(10) {
            labels["topology.kubernetes.io/zone"] = json!(rng.pick(&zones));
        }
        items.push(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": { "name": name, "labels": labels },
            "status": { "conditions": [{ "type": "Ready", "status": "True" }] }
        }));
    }
    let namespace = if rng.chance(20) { Some(json!("team")) } else { None };
    let pool: Vec<String> = (1..=5).map(|i| format!("10.244.0.{i}")).collect();
    for s in 0..1 + rng.below(3) {
        let svc_name = format!("s{s}");
        let mut labels = json!({});
        filter_labels(&mut rng, &mut labels);
        let headless = rng.chance(8);
        let mut spec = json!({});
        let cluster_ip = if headless {
            Some(json!("None"))
        } else if rng.chance(10) {
            None // allocated by the API server
        } else {
            Some(json!(format!("10.96.0.{}", 10 + s)))
        };
        put(&mut spec, "clusterIP", cluster_ip);
        let kind = if headless {
            rng.pick(&[None, Some("ClusterIP")])
        } else {
            rng.pick(&[None, None, Some("ClusterIP"), Some("NodePort")])
        };
        put(&mut spec, "type", kind.map(|k| json!(k)));
        put(
            &mut spec,
            "internalTrafficPolicy",
            rng.pick(&[None, Some(json!("Cluster")), Some(json!("Local"))]),
        );
        if kind == Some("NodePort") {
            put(
                &mut spec,
                "externalTrafficPolicy",
                rng.pick(&[None, Some(json!("Cluster")), Some(json!("Local"))]),
            );
        }
        put(
            &mut spec,
            "trafficDistribution",
            rng.pick(&[
                None,
                Some(json!("PreferClose")),
                Some(json!("PreferSameZone")),
                Some(json!("PreferSameNode")),
            ]),
        );
        // Service ports: (name, protocol, port); protocol may be left out (TCP).
        let ports: Vec<(String, &str, u16)> = if rng.chance(50) {
            vec![(String::new(), "TCP", 80)]
        } else {
            vec![("http".into(), "TCP", 80), ("dns".into(), "UDP", 53)]
        };
        let mut spec_ports = Vec::new();
        for (name, proto, port) in &ports {
            let mut p = json!({ "port": port });
            if !name.is_empty() || rng.chance(20) {
                p["name"] = json!(name);
            }
            if *proto != "TCP" || rng.chance(50) {
                p["protocol"] = json!(proto);
            }
            spec_ports.push(p);
        }
        spec["ports"] = json!(spec_ports);
        // sessionAffinity: left out, None, or ClientIP with or without its timeout.
        match rng.below(4) {
            0 => {}
            1 => spec["sessionAffinity"] = json!("None"),
            2 => spec["sessionAffinity"] = json!("ClientIP"),
            _ => {
                spec["sessionAffinity"] = json!("ClientIP");
                spec["sessionAffinityConfig"] = json!({ "clientIP": { "timeoutSeconds": 60 } });
            }
        }
        let mut meta = json!({ "name": svc_name, "labels": labels });
        put(&mut meta, "namespace", namespace.clone());
        items.push(json!({ "apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec }));

        for k in 0..rng.pick(&[0, 1, 2, 2, 3, 3]) {
            let mut labels = json!({});
            if !rng.chance(5) {
                labels["kubernetes.io/service-name"] = json!(svc_name);
            } else if rng.chance(50) {
                labels["kubernetes.io/service-name"] = json!("ghost");
            }
            filter_labels(&mut rng, &mut labels);
            let mut slice_ports = Vec::new();
            for (name, proto, _) in &ports {
                if !rng.chance(85) {
                    continue;
                }
                let mut p = json!({});
                if name.is_empty() {
                    // Left out (defaulted to ""), written as "", or an explicit null.
                    put(
                        &mut p,
                        "name",
                        rng.pick(&[None, None, Some(json!("")), Some(Value::Null)]),
                    );
                } else {
                    p["name"] = json!(if rng.chance(90) { name.as_str() } else { "other" });
                }
                let written = match *proto {
                    "TCP" => rng.pick(&[None, Some("TCP"), Some("TCP"), Some("UDP")]),
                    _ => rng.pick(&[Some("UDP"), Some("UDP"), Some("UDP"), None]),
                };
                put(&mut p, "protocol", written.map(|x| json!(x)));
                if !rng.chance(3) {
                    let target = if *proto == "UDP" {
                        5353
                    } else {
                        rng.pick(&[8080, 8080, 9090])
                    };
                    p["port"] = json!(target);
                }
                slice_ports.push(p);
            }
            let mut addrs = pool.clone();
            let mut endpoints = Vec::new();
            for _ in 0..rng.pick(&[0, 1, 2, 3, 3]) {
                let addr = addrs.remove(rng.below(addrs.len()));
                let mut ep = json!({ "addresses": [addr] });
                if rng.chance(90) {
                    let mut on = nodes.clone();
                    on.push("gone".into());
                    ep["nodeName"] = json!(rng.pick(&on));
                }
                if !rng.chance(15) {
                    let mut cond = json!({});
                    for key in ["ready", "serving", "terminating"] {
                        let v = rng.pick(&[None, Some(json!(true)), Some(json!(false)), Some(Value::Null)]);
                        put(&mut cond, key, v);
                    }
                    ep["conditions"] = cond;
                }
                if rng.chance(50) {
                    let mut hints = json!({});
                    let mut hz = zones.clone();
                    hz.push("zone-x".into());
                    let fz: Vec<Value> = rng
                        .subset(&hz)
                        .into_iter()
                        .map(|z| json!({ "name": z }))
                        .collect();
                    let fnd: Vec<Value> = rng
                        .subset(&nodes)
                        .into_iter()
                        .map(|n| json!({ "name": n }))
                        .collect();
                    if !fz.is_empty() {
                        hints["forZones"] = json!(fz);
                    }
                    if !fnd.is_empty() {
                        hints["forNodes"] = json!(fnd);
                    }
                    ep["hints"] = hints;
                }
                endpoints.push(ep);
            }
            let mut meta = json!({ "name": format!("{svc_name}-{k}"), "labels": labels });
            put(&mut meta, "namespace", namespace.clone());
            items.push(json!({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta,
                "addressType": "IPv4", "ports": slice_ports, "endpoints": endpoints
            }));
        }
    }
    json!({ "apiVersion": "v1", "kind": "List", "items": items })
}

/// The compared part of one route: verdict, sorted endpoints, topology, fallback, reason.
fn normalized(route: &Value) -> Value {
    let mut eps: Vec<String> = route["endpoints"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| e.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    eps.sort();
    // The oracle writes the affinity timeout as a number, the tool as
    // `sessionAffinity.clientIP.timeoutSeconds`; absent or null is no affinity.
    let affinity = match &route["sessionAffinity"] {
        Value::Number(n) => Value::Number(n.clone()),
        v => v["clientIP"]["timeoutSeconds"].clone(),
    };
    json!({
        "verdict": route["verdict"], "endpoints": eps, "topology": route["topology"],
        "fallback": route["fallback"], "reason": route["reason"], "sessionAffinity": affinity
    })
}

/// The tool's pod → ClusterIP routes: "NS/NAME/PORTNAME/PROTOCOL/PORT" → node → (route, confidence).
fn tool_routes(doc: &Value) -> BTreeMap<String, BTreeMap<String, (Value, String)>> {
    let mut out = BTreeMap::new();
    for s in doc["services"].as_array().expect("services") {
        let p = &s["port"];
        let key = format!(
            "{}/{}/{}/{}/{}/{}",
            s["namespace"].as_str().unwrap(),
            s["name"].as_str().unwrap(),
            p["name"].as_str().unwrap(),
            p["protocol"].as_str().unwrap(),
            p["port"],
            s["ipFamily"].as_str().unwrap()
        );
        let mut nodes = BTreeMap::new();
        for n in s["nodes"].as_array().unwrap() {
            if let Some(r) = n["routes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["source"] == "pod" && r["destination"] == "clusterIP")
            {
                let conf = r["confidence"].as_str().unwrap_or_default().to_string();
                nodes.insert(n["node"].as_str().unwrap().to_string(), (normalized(r), conf));
            }
        }
        out.insert(key, nodes);
    }
    out
}

fn run_tool(file: &Path, version: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_locality"))
        .args(["matrix", "-f"])
        .arg(file)
        .args(["-o", "json", "--proxy-mode", "iptables", "-q"])
        .args(["--kube-version", version, "--kube-proxy-version", version])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("LOCALITY_PROFILE")
        .output()
        .expect("run locality");
    assert!(
        out.status.success(),
        "locality matrix failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("matrix JSON")
}

fn run_oracle(files: &[PathBuf], version: &str) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/oracle/kube_proxy.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--kube-proxy-version", version])
        .args(files)
        .output()
        .expect("python3 is needed for the differential test");
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("oracle JSON")
}

/// Compares one file at one version; returns the number of cells compared, or a report.
fn compare(tool: &Value, oracle: &Value) -> Result<usize, String> {
    let tool = tool_routes(tool);
    let mut expected = BTreeMap::new();
    for (key, nodes) in oracle.as_object().unwrap() {
        expected.insert(format!("{key}/IPv4"), nodes);
    }
    let tool_keys: Vec<&String> = tool.keys().collect();
    let oracle_keys: Vec<&String> = expected.keys().collect();
    if tool_keys != oracle_keys {
        return Err(format!(
            "service ports differ: tool {tool_keys:?}, oracle {oracle_keys:?}"
        ));
    }
    let mut cells = 0;
    let mut problems = Vec::new();
    for (key, nodes) in &expected {
        let mine = &tool[key];
        let theirs = nodes.as_object().unwrap();
        if mine.len() != theirs.len() {
            problems.push(format!(
                "{key}: nodes differ: tool {:?}, oracle {:?}",
                mine.keys(),
                theirs.keys()
            ));
            continue;
        }
        for (node, outcomes) in theirs {
            cells += 1;
            let outcomes: Vec<Value> = outcomes.as_array().unwrap().iter().map(normalized).collect();
            let Some((route, confidence)) = mine.get(node) else {
                problems.push(format!(
                    "{key} {node}: no pod->clusterIP route in the tool's output"
                ));
                continue;
            };
            let ok = if outcomes.len() == 1 {
                *route == outcomes[0] && confidence != "inferred"
            } else {
                outcomes.contains(route) && confidence == "inferred"
            };
            if !ok {
                problems.push(format!(
                    "{key} on {node}:\n    tool   ({confidence}): {route}\n    oracle (any of): {}",
                    Value::Array(outcomes)
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(cells)
    } else {
        Err(problems.join("\n  "))
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn differential_pod_to_cluster_ip_agrees_with_the_upstream_derived_oracle() {
    let first = env_u64("LOCALITY_DIFF_SEED", DEFAULT_SEED);
    let n = env_u64("LOCALITY_DIFF_N", DEFAULT_SCENARIOS);
    let tmp = TempDir::new("differential");
    let dir = tmp.path().to_path_buf();
    let seeds: Vec<u64> = (first..first + n).collect();
    let files: Vec<PathBuf> = seeds
        .iter()
        .map(|seed| {
            let file = dir.join(format!("seed-{seed}.json"));
            let text = serde_json::to_string_pretty(&scenario(*seed)).unwrap();
            std::fs::write(&file, text).unwrap();
            file
        })
        .collect();
    let mut failures = Vec::new();
    let mut cells = 0;
    // What the oracle answered, by verdict and reason, and how many cells map order decides:
    // the generator must keep reaching every kind of answer.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for version in VERSIONS {
        let oracle = run_oracle(&files, version);
        for (seed, file) in seeds.iter().zip(&files) {
            let tool = run_tool(file, version);
            let expected = &oracle[file.to_str().unwrap()];
            for nodes in expected.as_object().unwrap().values() {
                for outcomes in nodes.as_object().unwrap().values() {
                    let outcomes = outcomes.as_array().unwrap();
                    let first = outcomes[0]["reason"].as_str().unwrap_or("?").to_string();
                    *seen.entry(first).or_default() += 1;
                    if let Some(t) = outcomes[0]["topology"].as_str().filter(|t| *t != "none") {
                        *seen.entry(t.to_string()).or_default() += 1;
                    }
                    if outcomes.len() > 1 {
                        *seen.entry("(map order decides)".into()).or_default() += 1;
                    }
                }
            }
            match compare(&tool, expected) {
                Ok(c) => cells += c,
                Err(report) => failures.push(format!(
                    "seed {seed} (LOCALITY_DIFF_SEED={seed} LOCALITY_DIFF_N=1), kube-proxy {version}, file {}:\n  {report}",
                    file.display()
                )),
            }
        }
    }
    if failures.is_empty() {
        println!(
            "differential: {n} scenarios x {} kube-proxy versions, {cells} pod->clusterIP cells, 100% agreement; {seen:?}",
            VERSIONS.len()
        );
        if n >= DEFAULT_SCENARIOS {
            for reason in [
                "cluster-ready",
                "cluster-serving-terminating",
                "local-ready",
                "local-serving-terminating",
                "no-local-endpoints",
                "no-endpoints",
                "no-usable-endpoints",
                "headless",
                "headless-label",
                "service-proxy-name",
                "(map order decides)",
                "PreferSameZone",
                "PreferSameNode",
            ] {
                assert!(
                    seen.contains_key(reason),
                    "the generator never reached {reason}: {seen:?}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        let shown: Vec<&String> = failures.iter().take(8).collect();
        panic!(
            "{} of {} (scenario, version) runs disagree with the oracle (files kept in {}):\n{}",
            failures.len(),
            seeds.len() * VERSIONS.len(),
            dir.display(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
        );
    }
}

/// The two disagreements the generator found, pinned as fixed inputs (both fixed in
/// locality-model, `proxy/duplicates.rs` `combinations` and `matrix` `routes_with_duplicates`):
/// - `corr`: two addresses duplicated across slices `x` and `y`, the ready copy of each in a
///   different slice. One map order decides both, so kube-proxy before 1.36 keeps one ready
///   endpoint, never both (the model used to report both).
/// - `hint`: one address twice on a remote node, one copy with node hints, one without: map
///   order decides whether PreferSameNode applies (same endpoints): the route is `inferred`.
#[test]
fn differential_regressions_one_map_order_and_hint_modes() {
    let ep = |ip: &str, node: &str, ready: bool, hint: Option<&str>| {
        let mut e = json!({ "addresses": [ip], "nodeName": node, "conditions": { "ready": ready } });
        if let Some(h) = hint {
            e["hints"] = json!({ "forNodes": [{ "name": h }] });
        }
        e
    };
    let slice = |name: &str, svc: &str, eps: Vec<Value>| {
        json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": { "name": name, "labels": { "kubernetes.io/service-name": svc } },
            "addressType": "IPv4", "ports": [{ "port": 8080 }], "endpoints": eps
        })
    };
    let svc = |name: &str, ip: &str| {
        json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": name },
                "spec": { "clusterIP": ip, "ports": [{ "port": 80 }] } })
    };
    let node = |name: &str| json!({ "apiVersion": "v1", "kind": "Node", "metadata": { "name": name } });
    let doc = json!({ "apiVersion": "v1", "kind": "List", "items": [
        node("a"), node("b"), node("z"),
        svc("corr", "10.96.0.10"),
        slice("x", "corr", vec![ep("10.244.0.1", "a", false, None), ep("10.244.0.2", "a", true, None)]),
        slice("y", "corr", vec![ep("10.244.0.1", "b", true, None), ep("10.244.0.2", "b", false, None)]),
        svc("hint", "10.96.0.11"),
        slice("h1", "hint", vec![ep("10.244.1.2", "gone", true, Some("z")), ep("10.244.1.3", "b", true, None)]),
        slice("h2", "hint", vec![ep("10.244.1.3", "b", true, Some("z"))]),
    ]});
    let tmp = TempDir::new("differential-pinned");
    let dir = tmp.path().to_path_buf();
    let file = dir.join("pinned.json");
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    for version in VERSIONS {
        let tool = run_tool(&file, version);
        let oracle = run_oracle(std::slice::from_ref(&file), version);
        if let Err(report) = compare(&tool, &oracle[file.to_str().unwrap()]) {
            panic!("kube-proxy {version}, file {}:\n  {report}", file.display());
        }
        if version == "1.35" {
            let routes = tool_routes(&tool);
            let (corr, conf) = &routes["default/corr//TCP/80/IPv4"]["z"];
            assert_eq!(corr["endpoints"].as_array().unwrap().len(), 1, "{corr}");
            assert_eq!(conf, "inferred");
            assert_eq!(routes["default/hint//TCP/80/IPv4"]["z"].1, "inferred");
        }
    }
}
