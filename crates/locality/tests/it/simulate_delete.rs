//! `locality simulate --delete` and `--replace` through the real binary: `kubectl delete pod`
//! and `kubectl replace --force` of one pod, validated as kubectl and the API server would;
//! and `--proxy-min-sync`, which the agreement with `verify` leaves at 0.

use locality_testkit::files::TempDir;
use serde_json::Value;

use super::simulate::run;

const DUMP: &str = "examples/telemetry-incident.json";
/// An agent pod of the DaemonSet `monitoring/node-agent` (internalTrafficPolicy: Local).
const AGENT: &str = "node-agent-sz5px";

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&run(args).success().get_output().stdout).expect("JSON")
}

fn events(a: &Value) -> Vec<&str> {
    a["podEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect()
}

#[test]
fn deleting_a_daemonset_pod_drops_its_node_until_the_controller_replaces_it() {
    let pod = format!("pod/monitoring/{AGENT}");
    let doc = json(&["simulate", "-f", DUMP, "--delete", &pod, "-o", "json", "-q"]);
    let a = &doc["alternatives"][0];
    let c = &a["changes"][0];
    assert_eq!(c["type"], "delete");
    assert_eq!(c["target"], format!("Pod monitoring/{AGENT}"));
    assert!(c["gracePeriodSeconds"].is_u64(), "{c}");
    assert_eq!(a["settled"], true, "{a}");
    // The DaemonSet controller creates the node's new pod as soon as the old one is being
    // deleted (the old pod exits at once: no preStop delay).
    let mut seen = events(a);
    assert_eq!(
        (seen.first(), seen.last()),
        (Some(&"deleted"), Some(&"ready")),
        "{a}"
    );
    seen.sort();
    assert_eq!(seen, ["created", "deleted", "gone", "notReady", "ready"], "{a}");
    // Its node (and only it) has one window: the agent is the node's only local endpoint.
    let nodes: Vec<&Value> = a["servicePorts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["nodes"].as_array().unwrap())
        .collect();
    let names: std::collections::BTreeSet<&str> = nodes.iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(super::simulate::errors(&doc).is_empty());
}

#[test]
fn a_grace_period_of_zero_becomes_one_as_kubectl_sends_it() {
    let pod = format!("pod/monitoring/{AGENT}");
    let doc = json(&[
        "simulate",
        "-f",
        DUMP,
        "--delete",
        &pod,
        "--grace-period",
        "0",
        "-o",
        "json",
        "-q",
    ]);
    assert_eq!(doc["alternatives"][0]["changes"][0]["gracePeriodSeconds"], 1);
}

/// `--force`, as `kubectl delete --force`: without a grace period (or with 0) the pod is
/// removed from the API at once, no graceful deletion first; a grace period given is kept.
#[test]
fn force_removes_the_pod_at_once() {
    let pod = format!("pod/monitoring/{AGENT}");
    let base = [
        "simulate", "-f", DUMP, "--delete", &pod, "--force", "-o", "json", "-q",
    ];
    for extra in [&[][..], &["--grace-period", "0"][..]] {
        let doc = json(&[&base[..], extra].concat());
        let a = &doc["alternatives"][0];
        assert_eq!(a["changes"][0]["gracePeriodSeconds"], 0, "{extra:?}");
        let seen = events(a);
        assert_eq!(seen.first(), Some(&"gone"), "{extra:?}: {seen:?}");
        assert!(
            !seen.contains(&"deleted"),
            "{extra:?}: no graceful deletion: {seen:?}"
        );
        assert_eq!(a["settled"], true, "{a}");
    }
    let doc = json(&[&base[..], &["--grace-period", "5"][..]].concat());
    assert_eq!(doc["alternatives"][0]["changes"][0]["gracePeriodSeconds"], 5);
}

#[test]
fn delete_and_replace_are_validated() {
    let tmp = TempDir::new("simulate-delete-usage");
    let service = tmp.join("svc.yaml");
    std::fs::write(
        &service,
        "apiVersion: v1\nkind: Service\nmetadata: {name: x, namespace: monitoring}\nspec: {ports: [{port: 80}]}\n",
    )
    .unwrap();
    let other = tmp.join("other.yaml");
    std::fs::write(
        &other,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: not-there, namespace: monitoring}\nspec: {containers: [{name: c, image: i}]}\n",
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--delete", "pod/monitoring/nope"], "no pod monitoring/nope"),
        (
            vec!["--delete", "deployment/monitoring/x"],
            "expected pod/NAMESPACE/NAME",
        ),
        (
            // --grace-period needs a pod deletion: the error names what is missing.
            vec!["--rollout", "ds/monitoring/node-agent", "--grace-period", "3"],
            "<--delete <pod/NS/NAME>|--replace <FILE>>",
        ),
        (
            vec!["--replace", other.to_str().unwrap(), "--force"],
            "cannot be used with '--force'",
        ),
        (
            vec!["--rollout", "ds/monitoring/node-agent", "--force"],
            "--delete",
        ),
        (
            vec!["--replace", service.to_str().unwrap()],
            "expected exactly one Pod",
        ),
        (
            vec!["--replace", other.to_str().unwrap()],
            "no pod monitoring/not-there",
        ),
        (
            vec![
                "--delete",
                "pod/monitoring/x",
                "--replace",
                other.to_str().unwrap(),
            ],
            "cannot be used with",
        ),
    ];
    for (args, said) in cases {
        let mut all = vec!["simulate", "-f", DUMP, "-q"];
        all.extend(args.iter().copied());
        let out = run(&all).code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

/// `--proxy-min-sync`: kube-proxy syncs at most once per period, so the removal of an exited
/// agent can wait for the next allowed sync: PreferSameNode's endpointGone windows, at most one
/// sync interval by default, can then outlast it.
#[test]
fn a_minimum_sync_period_can_hold_a_change_back() {
    let longest = |min_sync: &str| {
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
            "--proxy-min-sync",
            min_sync,
            "-o",
            "json",
            "-q",
        ]);
        assert!(super::simulate::errors(&doc).is_empty());
        let s = &doc["settings"];
        assert_eq!(s["proxyMinSyncSeconds"].as_f64(), humantime(min_sync), "{s}");
        doc["alternatives"][0]["totals"]["longestWindowSeconds"]
            .as_f64()
            .unwrap()
    };
    assert!(longest("0s") <= 1.25, "one sync and a step at most");
    assert!(longest("1s") > 1.25, "held back to the next allowed sync");
}

fn humantime(s: &str) -> Option<f64> {
    s.strip_suffix('s').and_then(|n| n.parse().ok())
}
