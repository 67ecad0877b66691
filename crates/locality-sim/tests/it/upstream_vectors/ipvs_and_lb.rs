//! The documented differences of the simulated ipvs kube-proxy, and a host client to a
//! LoadBalancer VIP under `externalTrafficPolicy: Local` without a local endpoint.

use super::nftables_and_iptables::{c4_services, ns_of};
use super::{Flow, Svc, assert_no_failures, run_case};
use locality_model::objects::TrafficPolicy;
use locality_model::proxy::{Destination, Source};
use locality_sim::ProxyMode;
use locality_testkit::vectors::{READY, ep};

// ----- Derived vectors (the model's, not upstream test outputs) -----

fn derived(
    name: &'static str,
    svc: &'static str,
    source: Source,
    dest: Destination,
    output: &'static str,
) -> Flow {
    Flow {
        name,
        ns: ns_of(svc),
        svc,
        source,
        dest,
        output,
        masq: None,
    }
}

/// ipvs: the model's `ipvs_differences` vectors. Upstream has no ipvs packet-flow tracer; these
/// expectations are docs/upstream.md §2.3, read from `pkg/proxy/ipvs/proxier.go`
/// `syncEndpoint` (zero real servers ⇒ port unreachable; `onlyNodeLocal` without local
/// endpoints ⇒ cluster endpoints, the external reply lost without SNAT).
#[test]
fn ipvs_differences() {
    use Destination::{ClusterIp, NodePort};
    use Source::{External, Pod};
    let mut failures = Vec::new();
    // ITP Local, no local endpoint, not externally reachable: zero real servers → refused.
    let mut svc = Svc::cluster_ip(
        "ns1",
        "svc1",
        "172.30.1.1",
        vec![ep("10.0.1.1", "node0", READY), ep("10.0.1.2", "node1", READY)],
    );
    svc.itp = Some(TrafficPolicy::Local);
    failures.extend(run_case(
        ProxyMode::Ipvs,
        "C1 without local endpoints",
        &["node0", "node1"],
        vec![svc],
        &[derived("pod to ClusterIP", "svc1", Pod, ClusterIp, "REJECT")],
        &[],
    ));
    // C4's svc3 (ITP Local, externally reachable) without its local endpoint: IPVS programs
    // the cluster endpoints for the cluster IP; iptables/nftables drop.
    for (mode, want) in [
        (ProxyMode::Ipvs, "10.180.1.3:80"),
        (ProxyMode::Iptables, "DROP"),
        (ProxyMode::Nftables, "DROP"),
    ] {
        failures.extend(run_case(
            mode,
            "C4 without svc3's local endpoint",
            &["remote-node"],
            c4_services(Some("svc3")),
            &[derived(
                "pod to ClusterIP with iTP:Local",
                "svc3",
                Pod,
                ClusterIp,
                want,
            )],
            &[],
        ));
    }
    // ETP Local with a local endpoint: no short-circuit in IPVS, pods get the local endpoint.
    failures.extend(run_case(
        ProxyMode::Ipvs,
        "C4",
        &["remote-node"],
        c4_services(None),
        &[derived(
            "pod to NodePort with eTP:Local",
            "svc2",
            Pod,
            NodePort,
            "10.180.0.2:80",
        )],
        &[],
    ));
    // ETP Local without a local endpoint: external traffic's reply is lost (a timeout); pods
    // reach the remote endpoint.
    failures.extend(run_case(
        ProxyMode::Ipvs,
        "C4 without svc2's local endpoint",
        &["remote-node"],
        c4_services(Some("svc2")),
        &[
            derived(
                "external to NodePort with eTP:Local",
                "svc2",
                External,
                NodePort,
                "DROP",
            ),
            derived(
                "pod to NodePort with eTP:Local",
                "svc2",
                Pod,
                NodePort,
                "10.180.1.2:80",
            ),
        ],
        &[],
    ));
    assert_no_failures(ProxyMode::Ipvs, failures);
}

/// nftables vs iptables for a host client to an ETP Local LB VIP without local endpoints: the
/// model's `nftables_host_to_load_balancer_with_etp_local_and_no_local_endpoint_is_dropped`
/// (docs/upstream.md §2.2, an [INFERENCE]: upstream's tracer skips
/// `filter-output`). Both are checked on the table and by connections to the VIP.
#[test]
fn host_to_lb_with_etp_local_and_no_local_endpoint() {
    use Destination::{LoadBalancer as Lb, NodePort};
    use Source::Host;
    let mut failures = Vec::new();
    for (mode, lb) in [
        (ProxyMode::Nftables, "DROP"),
        (ProxyMode::Iptables, "10.180.1.2:80"),
        // kubernetes#93456, left open by #97081: the reply is lost.
        (ProxyMode::Ipvs, "DROP"),
    ] {
        failures.extend(run_case(
            mode,
            "C4 without svc2's local endpoint",
            &["remote-node"],
            c4_services(Some("svc2")),
            &[
                derived("node to LB with eTP:Local", "svc2", Host, Lb, lb),
                // NodePort from the host is not checked in filter-output: short-circuited.
                derived(
                    "node to NodePort with eTP:Local",
                    "svc2",
                    Host,
                    NodePort,
                    "10.180.1.2:80",
                ),
            ],
            &[],
        ));
    }
    assert_no_failures(ProxyMode::Nftables, failures);
}
