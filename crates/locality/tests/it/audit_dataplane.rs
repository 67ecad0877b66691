//! `audit` and the known data-plane divergences (LOC021, docs/dataplanes.md): a dump with a
//! Calico eBPF 3.26 `calico-node` DaemonSet and an internalTrafficPolicy: Local Service
//! reports projectcalico/calico#8255; the same dump on 3.27 does not.

use std::path::PathBuf;

use assert_cmd::Command;
use locality_testkit::files::TempDir;
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn audit(file: &std::path::Path) -> Value {
    let out = Command::cargo_bin("locality")
        .expect("locality binary")
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env_remove("LOCALITY_PROFILE")
        .args(["audit", "-o", "json", "--rule", "LOC021", "-f"])
        .arg(file)
        .output()
        .expect("runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn loc021(doc: &Value) -> Vec<&Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "LOC021")
        .collect()
}

#[test]
fn calico_ebpf_3_26_with_an_itp_local_service_is_reported_with_the_upstream_issue() {
    let doc = audit(&data("calico-ebpf.yaml"));
    let found = loc021(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    let f = found[0];
    assert_eq!(f["service"]["name"], "cache");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("calico-ebpf 3.26.4"), "{msg}");
    assert!(msg.contains("projectcalico/calico#8255"), "{msg}");
    assert!(
        msg.contains("https://github.com/projectcalico/calico/issues/8255"),
        "{msg}"
    );
    assert!(f["fix"].as_str().unwrap().contains("3.27.0"), "{f:#}");
    let objects: Vec<String> = f["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{}/{}/{}",
                o["kind"].as_str().unwrap(),
                o["namespace"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        objects.contains(&"DaemonSet/calico-system/calico-node".to_string()),
        "{objects:?}"
    );
}

#[test]
fn calico_ebpf_3_27_is_not_reported() {
    let text = std::fs::read_to_string(data("calico-ebpf.yaml"))
        .unwrap()
        .replace("quay.io/calico/node:v3.26.4", "quay.io/calico/node:v3.27.0");
    let tmp = TempDir::new("audit-calico");
    let dir = tmp.path().to_path_buf();
    let file = dir.join("calico-ebpf-3.27.yaml");
    std::fs::write(&file, text).unwrap();
    let doc = audit(&file);
    assert!(loc021(&doc).is_empty(), "{doc:#}");
}

/// `locality ARGS -f calico-ebpf.yaml` (3.26.4, or `version`), its stdout.
fn run_text(args: &[&str], version: &str) -> String {
    let text = std::fs::read_to_string(data("calico-ebpf.yaml"))
        .unwrap()
        .replace(
            "quay.io/calico/node:v3.26.4",
            &format!("quay.io/calico/node:{version}"),
        );
    let tmp = TempDir::new("header");
    let dir = tmp.path().to_path_buf();
    let file = dir.join("dump.yaml");
    std::fs::write(&file, text).unwrap();
    let out = Command::cargo_bin("locality")
        .expect("locality binary")
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env("NO_COLOR", "1")
        .env_remove("LOCALITY_PROFILE")
        .args(args)
        .arg("-f")
        .arg(&file)
        .output()
        .expect("runs");
    String::from_utf8(out.stdout).unwrap()
}

/// The header's `data plane:` line (the header ends at the first empty line).
fn header_plane_line(text: &str) -> Option<String> {
    text.lines()
        .take_while(|l| !l.is_empty())
        .find(|l| l.starts_with("data plane: "))
        .map(str::to_string)
}

const CALICO_SEEN: &str = "data plane: calico-ebpf 3.26.4, seen in DaemonSet calico-system/calico-node";

#[test]
fn the_audit_text_header_names_the_detected_data_plane_its_version_and_where_it_was_seen() {
    let text = run_text(&["audit", "-o", "table"], "v3.26.4");
    let line = header_plane_line(&text).unwrap_or_else(|| panic!("no data plane line:\n{text}"));
    assert!(line.starts_with(CALICO_SEEN), "{line}");
    let json: Value = serde_json::from_str(&run_text(&["audit", "-o", "json"], "v3.26.4")).unwrap();
    assert_eq!(
        json["header"]["knownDataPlane"]["name"], "calico-ebpf",
        "{:#}",
        json["header"]
    );
    assert_eq!(json["header"]["knownDataPlane"]["version"], "3.26.4");
}

#[test]
fn the_explain_header_names_the_detected_data_plane_its_version_and_where_it_was_seen() {
    let text = run_text(&["explain", "shop/cache", "--node", "node-b"], "v3.26.4");
    let line = header_plane_line(&text).unwrap_or_else(|| panic!("no data plane line:\n{text}"));
    assert!(line.starts_with(CALICO_SEEN), "{line}");
}

#[test]
fn without_a_known_data_plane_the_header_has_no_data_plane_line() {
    // Calico without its eBPF data plane leaves Services to kube-proxy.
    let plain = std::fs::read_to_string(data("calico-ebpf.yaml"))
        .unwrap()
        .replace(
            "FELIX_BPFENABLED, value: \"true\"",
            "FELIX_BPFENABLED, value: \"false\"",
        );
    let tmp = TempDir::new("header-plain");
    let dir = tmp.path().to_path_buf();
    let file = dir.join("dump.yaml");
    std::fs::write(&file, plain).unwrap();
    let out = Command::cargo_bin("locality")
        .expect("locality binary")
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env("NO_COLOR", "1")
        .args(["explain", "shop/cache", "--node", "node-b", "-f"])
        .arg(&file)
        .output()
        .expect("runs");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(header_plane_line(&text), None, "{text}");
}
