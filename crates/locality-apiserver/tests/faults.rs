//! Fault injection (`ServeOptions::faults`) over real HTTP: 5xx per verb at the configured
//! rate, 409 on create, added latency, dropped connections, and the repo's live reader
//! (`locality_live::snapshot_blocking`, kube-rs) retrying through a 5xx.

mod common;

use std::time::{Duration, Instant};

use locality_apiserver::{Faults, Running, ServeOptions, Verb};
use locality_sim::{SimConfig, Topology};

fn start_with(faults: Faults) -> Running {
    let topology = Topology::builtin("three-zones").expect("built-in topology");
    let mut opts = ServeOptions::from_topology(&topology, SimConfig::default()).expect("engine");
    locality_sim::builders::playbook_fixture(&mut opts.engine).expect("fixture");
    opts.engine.run_for(10_000);
    opts.speed = 10.0;
    opts.kubeconfig_out = Some(common::scratch().join("kubeconfig"));
    opts.faults = faults;
    locality_apiserver::serve(opts).expect("serve")
}

#[test]
fn get_errors_appear_at_the_configured_rate_and_other_verbs_are_spared() {
    let faults = Faults {
        seed: 7,
        ..Faults::default()
    }
    .with_error_rate(Verb::Get, 0.3);
    let r = start_with(faults);
    let mut failed = 0;
    for _ in 0..300 {
        let (code, v) = common::get_json(&r, "/api/v1/namespaces/default/pods/web-a");
        match code {
            200 => {}
            500 => {
                assert_eq!(v["reason"], "InternalError");
                failed += 1;
            }
            c => panic!("unexpected {c}: {v}"),
        }
    }
    assert!((60..=120).contains(&failed), "{failed} of 300 at rate 0.3");
    let counts = r.faults_injected();
    assert_eq!(counts.errors.get(&Verb::Get).copied(), Some(failed));
    for _ in 0..50 {
        assert_eq!(
            common::get_json(&r, "/api/v1/pods").0,
            200,
            "lists are not faulted"
        );
        assert_eq!(
            common::get_json(&r, "/version").0,
            200,
            "discovery is never faulted"
        );
    }
}

#[test]
fn conflict_on_create() {
    let r = start_with(Faults {
        conflict_on_create: 1.0,
        ..Faults::default()
    });
    let (code, body) = common::http(
        &r,
        "POST",
        "/api/v1/namespaces",
        "application/json",
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}"#,
    );
    assert_eq!(code, 409, "{body}");
    assert!(body.contains("\"reason\":\"Conflict\""), "{body}");
    assert_eq!(r.faults_injected().conflicts, 1);
}

#[test]
fn dropped_connections_get_no_answer() {
    let r = start_with(Faults {
        drop_rate: 1.0,
        ..Faults::default()
    });
    let (code, body) = common::http(&r, "GET", "/api/v1/pods", "application/json", "");
    assert_eq!((code, body.as_str()), (0, ""), "closed without an answer");
    assert_eq!(common::get_json(&r, "/version").0, 200);
    assert_eq!(r.faults_injected().dropped, 1);
}

#[test]
fn added_latency() {
    let r = start_with(Faults {
        latency: Duration::from_millis(300),
        ..Faults::default()
    });
    let t = Instant::now();
    assert_eq!(common::get_json(&r, "/api/v1/pods").0, 200);
    assert!(t.elapsed() >= Duration::from_millis(300));
}

#[test]
fn invalid_rates_are_refused() {
    let topology = Topology::builtin("three-zones").expect("built-in topology");
    let mut opts = ServeOptions::from_topology(&topology, SimConfig::default()).expect("engine");
    opts.faults = Faults::default().with_error_rate(Verb::List, 1.5);
    let e = locality_apiserver::serve(opts).expect_err("rate 1.5");
    assert!(
        e.to_string().contains("5xx rate for list must be within [0, 1]"),
        "{e}"
    );
}

#[test]
fn live_snapshot_retries_through_5xx() {
    let r = start_with(Faults {
        fail_first: 2,
        ..Faults::default()
    });
    let opts = locality_live::LiveOptions {
        kubeconfig: Some(r.kubeconfig_path().to_path_buf()),
        all_namespaces: true,
        ..locality_live::LiveOptions::default()
    };
    let snap = locality_live::snapshot_blocking(&opts, None).expect("snapshot despite two 500s");
    // The fixture's 5 pods and the 3 nodes' kube-proxies.
    assert_eq!(snap.state.pods.len(), 8);
    let injected: u64 = r.faults_injected().errors.values().sum();
    assert_eq!(injected, 2);
}
