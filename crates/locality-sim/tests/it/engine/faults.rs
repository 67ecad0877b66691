//! Fault profiles of the simulated kube-proxies: what each fault does to traffic, and the
//! profile syntax.

use super::{NS, fixture, from};
use locality_model::objects::IpFamily;
use locality_sim::{DataPlaneProfile, Kind, ObjectKey, Outcome};

#[test]
fn fault_ignores_local_policy_answers_where_it_must_drop() {
    let mut ok = fixture(1, &[]);
    ok.run_until(10_000);
    assert_eq!(from(&mut ok, "node-c", "myservice"), Outcome::Timeout);
    let mut bad = fixture(1, &[("node-c", "ignores-local-policy")]);
    bad.run_until(10_000);
    assert!(matches!(
        from(&mut bad, "node-c", "myservice"),
        Outcome::Response { .. }
    ));
}

#[test]
fn fault_hostname_mismatch_makes_nothing_local() {
    let mut bad = fixture(1, &[("node-a", "hostname-mismatch")]);
    bad.run_until(10_000);
    assert_eq!(from(&mut bad, "node-a", "myservice"), Outcome::Timeout);
    assert!(matches!(
        from(&mut bad, "node-b", "myservice"),
        Outcome::Response { .. }
    ));
    let p = bad.kube_proxy("node-a").unwrap();
    assert_eq!(p.zone(), "", "it cannot read its own Node's zone");
    assert_eq!(p.no_local_endpoints("internal", IpFamily::IPv4), 1);
}

#[test]
fn fault_stale_rules_programs_changes_late() {
    let mut ok = fixture(1, &[]);
    let mut bad = fixture(1, &[("node-a", "stale-rules:5")]);
    // Backends are ready by ~2.3 s; a conformant kube-proxy programs them 1 s later.
    for e in [&mut ok, &mut bad] {
        e.run_until(4_000);
    }
    assert!(matches!(
        from(&mut ok, "node-a", "myservice"),
        Outcome::Response { .. }
    ));
    assert_ne!(from(&mut bad, "node-a", "myservice").class(), "response");
    bad.run_until(9_000);
    assert!(matches!(
        from(&mut bad, "node-a", "myservice"),
        Outcome::Response { .. }
    ));
    let late = bad.kube_proxy("node-a").unwrap().lag_ms;
    assert_eq!(late, 6_000);
}

#[test]
fn fault_lossy_loses_a_fraction() {
    let mut bad = fixture(3, &[("node-a", "lossy:0.5")]);
    bad.run_until(10_000);
    let outcomes: Vec<Outcome> = (0..400).map(|_| from(&mut bad, "node-a", "myservice")).collect();
    let lost = outcomes.iter().filter(|o| **o == Outcome::Timeout).count();
    assert!((120..280).contains(&lost), "lost {lost} of 400");
    assert!(
        outcomes
            .iter()
            .all(|o| *o == Outcome::Timeout || matches!(o, Outcome::Response { .. }))
    );
}

#[test]
fn fault_other_has_no_metrics() {
    let mut e = fixture(1, &[("node-a", "other:cilium")]);
    e.run_until(10_000);
    assert_eq!(e.metrics_text("node-a").unwrap(), None);
    assert_eq!(e.proxy_mode_text("node-a").unwrap(), None);
    assert!(e.metrics_text("node-b").unwrap().is_some());
    // Routing itself is kube-proxy's contract.
    assert!(matches!(
        from(&mut e, "node-a", "myservice"),
        Outcome::Response { .. }
    ));
}

#[test]
fn profiles_parse_and_reject_nonsense() {
    for p in [
        "kube-proxy",
        "kube-proxy:ipvs",
        "nftables",
        "stale-rules",
        "stale-rules:2.5+ipvs",
        "lossy:0.1",
        "other",
    ] {
        let parsed: DataPlaneProfile = p.parse().unwrap();
        let again: DataPlaneProfile = parsed.to_string().parse().unwrap();
        assert_eq!(parsed, again, "{p}");
    }
    for p in [
        "",
        "kube-proxy:bpf",
        "lossy:2",
        "stale-rules:-1",
        "lossy:x",
        "cilium",
    ] {
        let err = p.parse::<DataPlaneProfile>().unwrap_err().to_string();
        assert!(err.contains("simulated data-plane profile"), "{err}");
    }
}

#[test]
fn refused_when_the_process_exited_but_the_endpoint_is_still_programmed() {
    let mut e = fixture(1, &[]);
    e.run_until(10_000);
    // Delete web-a (no shutdown delay): the process exits at once; node-a's kube-proxy keeps
    // the endpoint until it syncs one second later.
    e.delete(&ObjectKey::new(Kind::Pod, NS, "web-a")).unwrap();
    e.run_until(10_100);
    assert_eq!(from(&mut e, "node-a", "myservice"), Outcome::Refused);
    e.run_until(12_000);
    assert_eq!(from(&mut e, "node-a", "myservice"), Outcome::Timeout);
}
