//! `--feature-gates` end to end: a default-on gate switched off changes the verdict, and
//! each refusal of the component exits 2 with the reason.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn input() -> PathBuf {
    PathBuf::from("tests/data/feature-gates.yaml")
}

fn locality() -> Command {
    let mut c = Command::cargo_bin("locality").expect("locality binary");
    c.env("SOURCE_DATE_EPOCH", "1767225600");
    c.env_remove("LOCALITY_PROFILE");
    c
}

fn matrix(extra: &[&str]) -> Value {
    let path = input();
    let mut args = vec![
        "matrix",
        "-f",
        path.to_str().unwrap(),
        "-o",
        "json",
        "--kube-version",
        "1.34",
    ];
    args.extend_from_slice(extra);
    let out = locality()
        .args(&args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("valid JSON")
}

/// The endpoints a pod on `node` reaches through the ClusterIP.
fn pod_cluster_ip_endpoints(doc: &Value, node: &str) -> Vec<String> {
    let svc = &doc["services"][0];
    let n = svc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == node)
        .expect("node");
    let r = n["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source"] == "pod" && r["destination"] == "clusterIP")
        .expect("pod -> clusterIP");
    assert_eq!(r["verdict"], "deliver");
    r["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

/// kube-proxy 1.34 reads `forNodes`: a pod on n1 reaches only n1's endpoint. With
/// `kube-proxy:PreferSameTrafficDistribution=false` it ignores node hints and uses both;
/// the report's header and `explain` name the override.
#[test]
fn a_default_on_gate_switched_off_changes_the_verdict() {
    let on = matrix(&[]);
    assert_eq!(pod_cluster_ip_endpoints(&on, "n1"), vec!["10.244.1.5:8080"]);
    assert!(on["header"].get("featureGates").is_none());

    let off = matrix(&[
        "--feature-gates",
        "kube-proxy:PreferSameTrafficDistribution=false",
    ]);
    assert_eq!(
        pod_cluster_ip_endpoints(&off, "n1"),
        vec!["10.244.1.5:8080", "10.244.2.5:8080"]
    );
    assert_eq!(
        off["header"]["featureGates"],
        serde_json::json!(["kube-proxy:PreferSameTrafficDistribution=false"])
    );

    let path = input();
    locality()
        .args([
            "explain",
            "-f",
            path.to_str().unwrap(),
            "-n",
            "shop",
            "cache",
            "--node",
            "n1",
            "--kube-version",
            "1.34",
            "--feature-gates",
            "kube-proxy:PreferSameTrafficDistribution=false",
        ])
        .assert()
        .success()
        .stdout(
            predicate::str::contains(
                "follows feature gates set by --feature-gates, not the release defaults: kube-proxy:PreferSameTrafficDistribution=false",
            )
            .and(predicate::str::contains(
                "node hints (forNodes) are ignored: PreferSameTrafficDistribution is off in this kube-proxy",
            )),
        );
}

/// A locked gate switched off, a gate the release does not have, a gate the component does
/// not read, and a malformed value: exit 2, the reason on stderr, no panic.
#[test]
fn refusals_exit_2_with_the_reason() {
    let path = input();
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "--kube-version",
                "1.35",
                "--feature-gates",
                "kube-proxy:PreferSameTrafficDistribution=false",
            ],
            "cannot set feature gate PreferSameTrafficDistribution to false, feature is locked to true since 1.35",
        ),
        (
            &[
                "--kube-version",
                "1.30",
                "--feature-gates",
                "kube-proxy:ProxyTerminatingEndpoints=false",
            ],
            "kube-proxy 1.30: unrecognized feature gate: ProxyTerminatingEndpoints (removed in 1.30",
        ),
        (
            &[
                "--kube-version",
                "1.34",
                "--feature-gates",
                "kube-apiserver:ProxyTerminatingEndpoints=false",
            ],
            "kube-apiserver does not read ProxyTerminatingEndpoints",
        ),
        (
            &[
                "--kube-version",
                "1.34",
                "--feature-gates",
                "kube-proxy:PreferSameTrafficDistribution=nope",
            ],
            "invalid value of PreferSameTrafficDistribution=nope",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec!["matrix", "-f", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        locality()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message).and(predicate::str::contains("panicked").not()));
    }
}

/// `--sim` gives the overrides to the simulated cluster when its own release (1.35) takes
/// them; when only the model's release does (`--kube-version 1.34`), the simulated cluster
/// runs the defaults, a warning says so, and the model still applies them.
#[test]
fn sim_gives_the_gates_its_release_takes_and_warns_about_the_others() {
    let gate = "kube-proxy:PreferSameTrafficDistribution=false";
    locality()
        .args(["matrix", "--sim", "-o", "summary", "--kube-version", "1.34"])
        .args(["--kube-proxy-version", "1.34", "--feature-gates", gate])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "the simulated cluster runs every gate at 1.35's default; the overrides apply to the model only",
        ));
    locality()
        .args(["matrix", "--sim", "-o", "summary", "--feature-gates", gate])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("locked to true since 1.35"));
}
