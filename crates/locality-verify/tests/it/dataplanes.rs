//! `verify` on the simulated cluster with a known data plane's profile on one node
//! (docs/dataplanes.md): an affected version gets the catalogue's decision (REPAIR naming
//! the fixed version and the upstream issue, or the setting; never ACCEPT); the fixed
//! version's profile gets ACCEPT (plain kube-proxy where no fixed release is known). Each
//! pair runs concurrently, restricted (`--only`) to the cases that expose the entry, so the
//! added time stays small.

use crate::support;

use locality_apiserver::ServeOptions;
use locality_sim::{DataPlaneProfile, SimConfig, Topology};
use locality_testkit::files::TempDir;
use locality_verify::RepairKind;
use locality_verify::{Decision, Status};
use locality_verify::{VerifyOutcome, verify};

/// Runs `verify --only ONLY` with `profile` on `node` of the four-node topology.
fn run(name: &str, node: &str, profile: &str, only: &[&str]) -> VerifyOutcome {
    let dir = TempDir::new(&format!("verify-dp-{name}"));
    let topology = Topology::builtin("four-nodes").unwrap();
    let mut serve = ServeOptions::from_topology(&topology, SimConfig::default()).unwrap();
    serve
        .engine
        .set_profile(node, profile.parse::<DataPlaneProfile>().unwrap());
    serve.speed = 50.0;
    serve.kubeconfig_out = Some(dir.join("kubeconfig"));
    let running = locality_apiserver::serve(serve).unwrap();
    let opts = locality_verify::VerifyOptions {
        only: only.iter().map(|s| s.to_string()).collect(),
        ..support::options(running.kubeconfig_path(), dir.join("evidence"))
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let o = rt.block_on(verify(&opts)).expect("verify runs");
    let _ = std::fs::remove_dir_all(&dir);
    o
}

/// The affected and the fixed profile, at once.
fn pair(
    name: &str,
    node: &str,
    affected: &str,
    fixed: &str,
    only: &'static [&'static str],
) -> (VerifyOutcome, VerifyOutcome) {
    let (n1, n2) = (format!("{name}-affected"), format!("{name}-fixed"));
    let (node1, node2) = (node.to_string(), node.to_string());
    let (p1, p2) = (affected.to_string(), fixed.to_string());
    let a = std::thread::spawn(move || run(&n1, &node1, &p1, only));
    let b = std::thread::spawn(move || run(&n2, &node2, &p2, only));
    (a.join().expect("affected run"), b.join().expect("fixed run"))
}

fn explain(o: &VerifyOutcome) -> String {
    let cases: Vec<String> = o
        .cases
        .iter()
        .map(|c| format!("{} {:?} {}", c.id, c.status, c.why))
        .collect();
    format!(
        "{:?}\nadvice: {:#?}\ncases: {cases:#?}\nplanes: {:#?}",
        o.decision, o.advice, o.planes
    )
}

/// The affected run: the case failed, the decision is a REPAIR of kind `DataPlane` on
/// `node` whose action names `words`; the fixed run: ACCEPT, with the fixed data plane
/// detected on `node`.
fn assert_repair_then_accept(
    affected: &VerifyOutcome,
    fixed: &VerifyOutcome,
    node: &str,
    case: &str,
    words: &[&str],
) {
    assert_repair(affected, node, case, words);
    assert_eq!(fixed.decision, Decision::Accept, "{}", explain(fixed));
    assert!(
        fixed.planes.get(node).and_then(|p| p.known.as_deref()).is_some(),
        "the fixed data plane is detected too: {}",
        explain(fixed)
    );
}

/// The affected run: the case failed, the decision is a REPAIR of kind `DataPlane` on
/// `node` whose action names `words` (and the advice `words[0]`).
fn assert_repair(affected: &VerifyOutcome, node: &str, case: &str, words: &[&str]) {
    let c = affected.cases.iter().find(|c| c.id == case).unwrap();
    assert_eq!(c.status, Status::Fail, "{}", explain(affected));
    assert_eq!(affected.decision, Decision::Repair, "{}", explain(affected));
    let r = affected
        .repairs
        .iter()
        .find(|r| r.kind == RepairKind::DataPlane && r.node == node)
        .unwrap_or_else(|| panic!("no data-plane repair on {node}: {}", explain(affected)));
    for w in words {
        assert!(r.action.contains(w), "{w:?} not in {:?}", r.action);
    }
    assert!(
        affected.advice.iter().any(|a| a.contains(words[0])),
        "{:?}",
        affected.advice
    );
}

#[test]
fn calico_ebpf_3_26_ignoring_itp_local_is_a_repair_naming_3_27_and_the_issue() {
    let (a, f) = pair(
        "calico",
        "node-c",
        "calico-ebpf:3.26.4",
        "calico-ebpf:3.27.0",
        &["C"],
    );
    assert_eq!(
        a.planes["node-c"].known.as_deref(),
        Some("calico-ebpf 3.26.4"),
        "{}",
        explain(&a)
    );
    assert_repair_then_accept(
        &a,
        &f,
        "node-c",
        "C",
        &["3.27.0", "projectcalico/calico#8255", "calico-ebpf-itp-ignored"],
    );
}

#[test]
fn cilium_1_18_0_refusing_without_a_zone_endpoint_is_a_repair_naming_1_18_1_and_the_issue() {
    let (a, f) = pair("cilium", "node-c", "cilium:1.18.0", "cilium:1.18.1", &["Z2"]);
    assert_repair_then_accept(&a, &f, "node-c", "Z2", &["1.18.1", "cilium/cilium#41022"]);
}

#[test]
fn kube_router_2_0_ignoring_itp_local_is_a_repair_naming_2_1_and_the_issue() {
    let (a, f) = pair(
        "kube-router",
        "node-c",
        "kube-router:2.0.1",
        "kube-router:2.1.0",
        &["C"],
    );
    assert_repair_then_accept(
        &a,
        &f,
        "node-c",
        "C",
        &[
            "2.1.0",
            "cloudnativelabs/kube-router#1597",
            "kube-router-itp-unsupported",
        ],
    );
}

#[test]
fn cilium_without_service_topology_is_a_repair_naming_the_setting() {
    // Z1's client is N1z (node-d): without enable-service-topology its data plane ignores the
    // zone hints and spreads to N2's backend.
    let (a, f) = pair(
        "cilium-topology",
        "node-d",
        "cilium:1.18.1,service-topology=false",
        "cilium:1.18.1",
        &["Z1"],
    );
    assert_repair_then_accept(
        &a,
        &f,
        "node-d",
        "Z1",
        &[
            "enable-service-topology=true",
            "loadBalancer.serviceTopology=true",
            "cilium-topology-needs-service-topology",
        ],
    );
}

#[test]
fn cilium_committing_to_a_local_pod_without_the_port_is_a_repair_naming_the_fix() {
    // H5's client is N1 (node-a), whose backend lacks the port dialled. No release is known
    // to carry the fix, so plain kube-proxy is the run that must ACCEPT.
    let (a, f) = pair("cilium-ports", "node-a", "cilium:1.18.1", "kube-proxy", &["H5"]);
    assert_repair(
        &a,
        "node-a",
        "H5",
        &[
            "cilium/cilium#45215",
            "cilium/cilium#45214",
            "cilium-prefer-same-incompatible-local",
        ],
    );
    assert_eq!(f.decision, Decision::Accept, "{}", explain(&f));
}

#[test]
fn kube_router_2_0_restricting_the_cluster_ip_under_etp_local_is_a_repair_naming_2_1() {
    let (a, f) = pair(
        "kube-router-etp",
        "node-c",
        "kube-router:2.0.1",
        "kube-router:2.1.0",
        &["X3"],
    );
    assert_repair_then_accept(
        &a,
        &f,
        "node-c",
        "X3",
        &[
            "2.1.0",
            "cloudnativelabs/kube-router#818",
            "kube-router-etp-local-restricts-cluster-ip",
        ],
    );
}

#[test]
fn cilium_1_19_applying_etp_local_to_in_cluster_lb_ip_traffic_is_a_hold_naming_the_open_issue() {
    // X4's client is N3 (node-c), without a backend; it dials the load-balancer IP. The bug
    // is open: plain kube-proxy is the run that must ACCEPT.
    let (a, f) = pair("cilium-lb", "node-c", "cilium:1.19.3", "kube-proxy", &["X4"]);
    let c = a.cases.iter().find(|c| c.id == "X4").unwrap();
    assert_eq!(c.status, Status::Fail, "{}", explain(&a));
    assert_eq!(a.decision, Decision::Hold, "{}", explain(&a));
    let advice = a
        .advice
        .iter()
        .find(|l| l.contains("cilium-etp-local-in-cluster-lb-ip"))
        .unwrap_or_else(|| panic!("no advice names the entry: {}", explain(&a)));
    assert!(advice.contains("node-c"), "{advice}");
    assert!(
        advice.contains("open upstream bug cilium/cilium#45252"),
        "{advice}"
    );
    assert!(advice.contains("cluster IP"), "the mitigation: {advice}");
    assert!(a.repairs.is_empty(), "{:?}", a.repairs);
    assert_eq!(f.decision, Decision::Accept, "{}", explain(&f));
    let x4 = f.cases.iter().find(|c| c.id == "X4").unwrap();
    assert_eq!(x4.status, Status::Pass, "{}", explain(&f));
}

#[test]
fn kube_proxy_ipvs_losing_a_host_clients_lb_ip_reply_under_etp_local_is_a_hold() {
    // X4h's client is N3's (node-c) host network, without a backend on N3; it dials the
    // load-balancer IP. kubernetes#93456 is open for such clients: the iptables mode is the
    // run that must ACCEPT. A pod client (X4) is served on ipvs since kubernetes#97081.
    let (a, f) = pair(
        "ipvs-lb",
        "node-c",
        "kube-proxy:ipvs",
        "kube-proxy:iptables",
        &["X4", "X4h"],
    );
    let c = a.cases.iter().find(|c| c.id == "X4h").unwrap();
    assert_eq!(c.status, Status::Fail, "{}", explain(&a));
    assert!(c.why.contains("known divergence"), "{}", explain(&a));
    let x4 = a.cases.iter().find(|c| c.id == "X4").unwrap();
    assert_eq!(x4.status, Status::Pass, "{}", explain(&a));
    assert_eq!(a.decision, Decision::Hold, "{}", explain(&a));
    let advice = a
        .advice
        .iter()
        .find(|l| l.contains("kube-proxy-ipvs-etp-local-lb-ip"))
        .unwrap_or_else(|| panic!("no advice names the entry: {}", explain(&a)));
    assert!(advice.contains("node-c"), "{advice}");
    assert!(advice.contains("kubernetes/kubernetes#93456"), "{advice}");
    assert!(
        advice.contains("nftables or iptables mode"),
        "the mitigation: {advice}"
    );
    assert!(a.repairs.is_empty(), "{:?}", a.repairs);
    assert_eq!(f.decision, Decision::Accept, "{}", explain(&f));
    for id in ["X4", "X4h"] {
        let c = f.cases.iter().find(|c| c.id == id).unwrap();
        assert_eq!(c.status, Status::Pass, "{}", explain(&f));
    }
}

#[test]
fn kube_proxy_nftables_dropping_a_host_clients_lb_ip_connection_under_etp_local_is_expected() {
    // nftables drops X4h's connection in filter-output, before its short-circuit (the model
    // infers it from the rule layout): X4h expects that drop there, and the run ACCEPTs.
    let o = run("nft-lb", "node-c", "kube-proxy:nftables", &["X4h"]);
    let c = o.cases.iter().find(|c| c.id == "X4h").unwrap();
    assert_eq!(c.status, Status::Pass, "{}", explain(&o));
    assert_eq!(
        c.expected,
        Some(locality_verify::Expected::Drop),
        "{}",
        explain(&o)
    );
    assert_eq!(o.decision, Decision::Accept, "{}", explain(&o));
}

#[test]
fn cilium_dropping_instead_of_serving_a_terminating_local_endpoint_under_etp_local_is_a_hold() {
    // Xt dials N1's (node-a) nodePort from N2's host; N1's only endpoint is serving-terminating.
    // The bug is open: plain kube-proxy is the run that must ACCEPT.
    let (a, f) = pair("cilium-term", "node-a", "cilium:1.19.3", "kube-proxy", &["Xt"]);
    let c = a.cases.iter().find(|c| c.id == "Xt").unwrap();
    assert_eq!(c.status, Status::Fail, "{}", explain(&a));
    assert_eq!(a.decision, Decision::Hold, "{}", explain(&a));
    let advice = a
        .advice
        .iter()
        .find(|l| l.contains("cilium-socket-lb-etp-no-terminating-fallback"))
        .unwrap_or_else(|| panic!("no advice names the entry: {}", explain(&a)));
    assert!(advice.contains("node-a"), "{advice}");
    assert!(
        advice.contains("open upstream bug cilium/cilium#37613"),
        "{advice}"
    );
    assert!(advice.contains("surge"), "the mitigation: {advice}");
    assert!(a.repairs.is_empty(), "{:?}", a.repairs);
    assert_eq!(f.decision, Decision::Accept, "{}", explain(&f));
    let xt = f.cases.iter().find(|c| c.id == "Xt").unwrap();
    assert_eq!(xt.status, Status::Pass, "{}", explain(&f));
}

/// Every catalogue entry is tested above (affected vs fixed), or listed here with why not.
#[test]
fn every_catalogue_entry_is_tested_or_says_why_not() {
    const TESTED: &[&str] = &[
        "calico-ebpf-itp-ignored",
        "cilium-zone-hints-no-fallback",
        "cilium-prefer-same-incompatible-local",
        "cilium-topology-needs-service-topology",
        "cilium-etp-local-in-cluster-lb-ip",
        "cilium-socket-lb-etp-no-terminating-fallback",
        "kube-router-etp-local-restricts-cluster-ip",
        "kube-router-itp-unsupported",
        "kube-proxy-ipvs-etp-local-lb-ip",
    ];
    const NOT_YET: &[&str] = &[];
    for e in locality_model::dataplane::catalogue::CATALOGUE {
        assert!(
            TESTED.contains(&e.id) != NOT_YET.contains(&e.id),
            "{}: test it here, or say why not",
            e.id
        );
        if TESTED.contains(&e.id) {
            assert!(!e.cases.is_empty(), "{}: no case exposes it", e.id);
        }
    }
}
