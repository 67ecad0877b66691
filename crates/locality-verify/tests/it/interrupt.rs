//! An interrupted run (`verify_until`, what Ctrl-C does in the CLI) against the simulated API
//! server: the namespace is deleted, the evidence of the cases finished is written and the
//! rest are NOT_EXECUTED (interrupted); the run cannot be accepted.

use crate::support;

use std::io::{Read, Write};
use std::time::Duration;

use locality_apiserver::ServeOptions;
use locality_sim::{SimConfig, Topology};
use locality_testkit::files::TempDir;
use locality_verify::{Decision, Status};
use locality_verify::{INTERRUPTED, VerifyOptions, verify_until};

/// `GET path` on the simulated API server (plain HTTP on loopback, no credentials):
/// (status code, body).
fn get(url: &str, path: &str) -> (u16, String) {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    (code, body)
}

#[test]
fn an_interrupted_run_cleans_up_and_writes_what_it_did() {
    let dir = TempDir::new("verify-test-interrupt");
    let topology = Topology::builtin("four-nodes").unwrap();
    let mut serve = ServeOptions::from_topology(&topology, SimConfig::default()).unwrap();
    serve.speed = 50.0;
    serve.kubeconfig_out = Some(dir.join("kubeconfig"));
    let running = locality_apiserver::serve(serve).unwrap();
    let evidence = dir.join("evidence");
    let opts = VerifyOptions {
        run_id: "int1".into(),
        simulated: true,
        ..support::options(running.kubeconfig_path(), evidence.clone())
    };
    // Interrupt once the first case's evidence is written (the namespace exists by then).
    let cases_dir = evidence.join("cases");
    let url = running.url().to_string();
    let ns_path = "/api/v1/namespaces/locality-verify-int1";
    let interrupt = async {
        loop {
            let done = std::fs::read_dir(&cases_dir).map_or(0, Iterator::count);
            if done > 0 {
                assert_eq!(
                    get(&url, ns_path).0,
                    200,
                    "the namespace exists while the run goes on"
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let o = rt
        .block_on(verify_until(&opts, interrupt))
        .expect("an interrupted run still ends with an outcome");
    assert!(o.interrupted);
    let missed: Vec<&str> = o
        .cases
        .iter()
        .filter(|c| c.status == Status::NotExecuted && c.why == INTERRUPTED)
        .map(|c| c.id.as_str())
        .collect();
    assert!(!missed.is_empty(), "{:?}", o.cases);
    let finished: Vec<&str> = o
        .cases
        .iter()
        .filter(|c| c.why != INTERRUPTED)
        .map(|c| c.id.as_str())
        .collect();
    assert!(
        !finished.is_empty(),
        "the first case finished before the interrupt"
    );
    assert_eq!(
        o.cases.len(),
        locality_verify::cases::default_run().count(),
        "every case is in the ledger (the external ones only run when asked)"
    );
    assert_ne!(o.decision, Decision::Accept, "an interrupted run is not accepted");
    assert!(missed.iter().all(|id| o.rerun.iter().any(|r| r == id)) || o.decision != Decision::Rerun);
    assert!(
        o.advice.iter().any(|a| a.contains("interrupted")),
        "{:?}",
        o.advice
    );

    // The namespace is gone (or going), as at a normal end.
    let (code, body) = get(&url, ns_path);
    assert!(
        code == 404 || body.contains("deletionTimestamp"),
        "namespace left behind: {code} {body}"
    );

    // The partial evidence: ledger, decision, report, checksums.
    let ledger: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(evidence.join("ledger.json")).unwrap()).unwrap();
    assert_eq!(ledger["decision"]["interrupted"], true);
    let statuses: Vec<&str> = ledger["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"NOT_EXECUTED"), "{statuses:?}");
    for c in o.cases.iter().filter(|c| !c.tries.is_empty()) {
        assert!(
            evidence.join(format!("cases/{}/observed.json", c.id)).is_file(),
            "{}",
            c.id
        );
    }
    let sums = std::fs::read_to_string(evidence.join("SHA256SUMS")).unwrap();
    assert!(sums.lines().any(|l| l.ends_with("  report.html")), "{sums}");
    let _ = std::fs::remove_dir_all(&dir);
}
