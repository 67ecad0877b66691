//! Part A, cases 19–26: internal and external traffic policies combined.

use super::{ITPL, Svc, ep, row};
use locality_model::proxy::ProxyEndpoint;

fn one_local_one_remote() -> Vec<ProxyEndpoint> {
    vec![
        ep("10.0.0.0:80", "RL", &[], &[]),
        ep("10.0.0.1:80", "R", &[], &[]),
    ]
}

#[test]
fn categorize_19_itp_local_etp_cluster_some_endpoints_local() {
    row(
        "iTP: Local, eTP: Cluster, some endpoints local",
        "",
        Svc {
            itp_local: true,
            etp_local: false,
            node_port: 8080,
        },
        &one_local_one_remote(),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_20_itp_cluster_etp_local_some_endpoints_local() {
    row(
        "iTP: Cluster, eTP: Local, some endpoints local",
        "",
        Svc {
            itp_local: false,
            etp_local: true,
            node_port: 8080,
        },
        &one_local_one_remote(),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_21_itp_local_etp_local_some_endpoints_local() {
    row(
        "iTP: Local, eTP: Local, some endpoints local",
        "",
        Svc {
            itp_local: true,
            etp_local: true,
            node_port: 8080,
        },
        &one_local_one_remote(),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_22_itp_local_etp_local_all_endpoints_remote() {
    row(
        "iTP: Local, eTP: Local, all endpoints remote",
        "",
        Svc {
            itp_local: true,
            etp_local: true,
            node_port: 8080,
        },
        &[ep("10.0.0.0:80", "R", &[], &[]), ep("10.0.0.1:80", "R", &[], &[])],
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&[]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_23_itp_local_etp_local_all_endpoints_remote_and_terminating() {
    row(
        "iTP: Local, eTP: Local, all endpoints remote and terminating",
        "",
        Svc {
            itp_local: true,
            etp_local: true,
            node_port: 8080,
        },
        &[
            ep("10.0.0.0:80", "ST", &[], &[]),
            ep("10.0.0.1:80", "ST", &[], &[]),
        ],
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        Some(&[]),
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        true,
    );
}

#[test]
fn categorize_24_itp_cluster_etp_local_with_terminating_endpoints() {
    row(
        "iTP: Cluster, eTP: Local, with terminating endpoints",
        "",
        Svc {
            itp_local: false,
            etp_local: true,
            node_port: 8080,
        },
        &[
            ep("10.0.0.0:80", "R", &[], &[]),
            ep("10.0.0.1:80", "L", &[], &[]),
            ep("10.0.0.2:80", "STL", &[], &[]),
            ep("10.0.0.3:80", "ST", &[], &[]),
        ],
        Some(&["10.0.0.0:80"]),
        Some(&["10.0.0.2:80"]),
        Some(&["10.0.0.0:80", "10.0.0.2:80"]),
        false,
    );
}

#[test]
fn categorize_25_external_traffic_policy_ignored_if_not_externally_accessible() {
    // Upstream sets externalPolicyLocal on the fake info but no nodePort: the service is not
    // externally accessible, so UsesLocalEndpoints() is false.
    row(
        "externalTrafficPolicy ignored if not externally accessible",
        "",
        Svc {
            itp_local: false,
            etp_local: true,
            node_port: 0,
        },
        &[
            ep("10.0.0.0:80", "R", &[], &[]),
            ep("10.0.0.1:80", "RL", &[], &[]),
        ],
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        None,
        Some(&["10.0.0.0:80", "10.0.0.1:80"]),
        false,
    );
}

#[test]
fn categorize_26_no_cluster_endpoints_for_itp_local_internal_only_service() {
    row(
        "no cluster endpoints for iTP:Local internal-only service",
        "",
        ITPL,
        &[
            ep("10.0.0.0:80", "R", &[], &[]),
            ep("10.0.0.1:80", "RL", &[], &[]),
        ],
        None,
        Some(&["10.0.0.1:80"]),
        None,
        false,
    );
}
