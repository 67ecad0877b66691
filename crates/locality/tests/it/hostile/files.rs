//! Inputs the API server would refuse, and special files: names and zones from files are
//! checked as the API server checks them (file, line and field named); `--baseline`,
//! `--config` and `--sim=FILE` given a FIFO exit 2 naming it instead of blocking; SARIF
//! re-reads only the regular files ingest read; the tool's own YAML report of thousands of
//! findings is a valid baseline.

use std::time::Duration;

use locality_testkit::files::TempDir;

use super::{HOSTILE, assert_inert, locality};

fn mkfifo(dir: &TempDir, name: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    let ok = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo");
    p
}

#[test]
fn names_and_zones_the_api_server_would_refuse_are_input_errors() {
    let dir = TempDir::new("hostile-names");
    let cases = [
        (
            "svc.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: \"web\\e[2J\\u202e\"\n  namespace: ns\nspec:\n  ports: [{port: 80}]\n",
            "metadata.name",
        ),
        (
            "svc-upper.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: Web\n  namespace: ns\nspec:\n  ports: [{port: 80}]\n",
            "metadata.name",
        ),
        (
            "ns.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: \"ns\\nLOC001\"\nspec:\n  ports: [{port: 80}]\n",
            "metadata.namespace",
        ),
        (
            "node.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: \"node\\u200b-a\"\n",
            "metadata.name",
        ),
        (
            "zone.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  labels:\n    topology.kubernetes.io/zone: \"zone \\e]0;x\\a\"\n",
            "metadata.labels",
        ),
        (
            "slice.yaml",
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: IPv4\nendpoints:\n  - addresses: [\"10.0.0.1\"]\n    zone: \"a\\u202eb\"\nports: []\n",
            "zone",
        ),
        (
            "pod.yaml",
            "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  selector: {app: a}\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n, labels: {app: a}}\nspec:\n  nodeName: \"n\\x7f\"\n  containers: []\n",
            "spec.nodeName",
        ),
    ];
    for (file, text, field) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        for cmd in ["matrix", "audit"] {
            let out = locality().args([cmd, "-f"]).arg(&path).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{file} {cmd}: {err}");
            assert!(
                err.contains(file) && err.contains(':'),
                "{file}: names the file and line: {err}"
            );
            assert!(err.contains(field), "{file}: names {field}: {err}");
            assert_inert(file, &out);
        }
    }
    // Names a cluster stores pass.
    let ok = dir.join("ok.yaml");
    std::fs::write(&ok, "apiVersion: v1\nkind: Node\nmetadata:\n  name: ip-10-0-0-1.eu-west-1.compute.internal\n  labels: {topology.kubernetes.io/zone: eu-west-1a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns}\nspec:\n  ports: [{port: 80}]\n").unwrap();
    let out = locality().args(["matrix", "-f"]).arg(&ok).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = HOSTILE;
}

#[test]
fn special_files_named_by_flags_exit_2_without_blocking() {
    let dir = TempDir::new("hostile-fifo");
    let fifo = mkfifo(&dir, "f.fifo");
    let f = fifo.to_str().unwrap();
    let sim = format!("--sim={f}");
    for args in [
        vec!["audit", "--sim=three-zones", "--baseline", f],
        vec!["audit", "--sim=three-zones", "--config", f],
        vec!["audit", sim.as_str()],
    ] {
        let out = locality()
            .args(&args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("f.fifo") && err.contains("not a regular file"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn sarif_does_not_reopen_a_fifo_input() {
    let dir = TempDir::new("hostile-sarif-fifo");
    let fifo = mkfifo(&dir, "in.fifo");
    let text = std::fs::read(super::examples().join("three-zones.json")).unwrap();
    // One writer: ingest reads it once; a second open would wait for a writer forever.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, text))
    };
    let out = locality()
        .args(["audit", "-o", "sarif", "-f"])
        .arg(&fifo)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.code().is_some(),
        "killed: it blocked re-opening the FIFO"
    );
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).expect("SARIF");
    assert!(
        sarif["runs"][0]["results"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
}

#[test]
fn the_tools_own_yaml_report_of_6003_findings_is_a_valid_baseline() {
    // three-zones.json's Service and its EndpointSlice 3,002 times: two findings each.
    let text = std::fs::read_to_string(super::examples().join("three-zones.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let items = doc["items"].as_array_mut().unwrap();
    let svc = items.iter().position(|i| i["kind"] == "Service").unwrap();
    let slice = items.iter().position(|i| i["kind"] == "EndpointSlice").unwrap();
    let (svc, slice) = (items[svc].clone(), items[slice].clone());
    for i in 0..3_001 {
        let name = format!("svc-{i}");
        let mut s = svc.clone();
        s["metadata"]["name"] = name.clone().into();
        s["metadata"]["uid"] = format!("uid-svc-{i}").into();
        let mut e = slice.clone();
        e["metadata"]["name"] = format!("{name}-x").into();
        e["metadata"]["uid"] = format!("uid-slice-{i}").into();
        e["metadata"]["labels"]["kubernetes.io/service-name"] = name.into();
        items.push(s);
        items.push(e);
    }
    let dir = TempDir::new("hostile-baseline");
    let input = dir.join("many.json");
    std::fs::write(&input, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = locality()
        .args(["audit", "-o", "yaml", "-f"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(!out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = dir.join("report.yaml");
    std::fs::write(&report, &out.stdout).unwrap();
    let findings = String::from_utf8_lossy(&out.stdout).matches("\n- rule: ").count();
    assert!(findings >= 6_003, "{findings} findings");
    let out = locality()
        .args(["audit", "--fail-on", "info", "--baseline"])
        .arg(&report)
        .arg("-f")
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "every finding is in the baseline: {err}"
    );
}
