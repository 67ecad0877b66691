//! The setups the case catalogue shares (each setup group is one Service and its backends),
//! the default setup every case starts from, and the documentation each case cites.

use super::{Role, Setup, TargetPort};

pub(super) const ITP_DOCS: &str =
    "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/";
pub(super) const TD_DOCS: &str =
    "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-distribution";
pub(super) const SVC_DOCS: &str = "https://kubernetes.io/docs/concepts/services-networking/service/";
pub(super) const ETP_DOCS: &str = "https://kubernetes.io/docs/tasks/access-application-cluster/create-external-load-balancer/#preserving-the-client-source-ip";
pub(super) const METRICS_DOCS: &str = "https://kubernetes.io/docs/reference/instrumentation/metrics/";

pub(super) const NONE: &[Role] = &[];
pub(super) const N1_N2: &[Role] = &[Role::N1, Role::N2];

/// The default setup of group `group`: a Cluster-policy ClusterIP Service over Ready
/// backends on N1 and N2.
pub(super) const fn setup(group: &'static str) -> Setup {
    Setup {
        group,
        service: true,
        itp_local: false,
        traffic_distribution: None,
        backends: N1_N2,
        unready: NONE,
        selects_nothing: false,
        delete_backends: false,
        udp: false,
        node_port: false,
        daemonset: false,
        metrics: false,
        rollout: false,
        readyz: false,
        each_node: false,
        terminating: false,
        target_port: TargetPort::Served,
        etp_local: false,
        port_missing_on: NONE,
        load_balancer: false,
    }
}

pub(super) const LOCAL_B: Setup = Setup {
    itp_local: true,
    ..setup("b")
};
pub(super) const PREFER_NODE: Setup = Setup {
    traffic_distribution: Some("PreferSameNode"),
    ..setup("h")
};
pub(super) const LOCAL_BH: Setup = Setup {
    itp_local: true,
    ..setup("bh")
};
pub(super) const PREFER_ZONE: Setup = Setup {
    traffic_distribution: Some("PreferSameZone"),
    ..setup("z")
};
pub(super) const LOCAL_UDP: Setup = Setup {
    itp_local: true,
    udp: true,
    ..setup("u")
};

pub(super) const EXTERNAL_LOCAL: Setup = Setup {
    node_port: true,
    etp_local: true,
    backends: &[Role::N1],
    ..setup("x2")
};

/// `Xt`: [`EXTERNAL_LOCAL`]'s Service, whose one backend (on N1) is deleted once Ready and
/// probed while it serves its shutdown delay (serving-terminating).
pub(super) const EXTERNAL_TERMINATING: Setup = Setup {
    group: "xt",
    terminating: true,
    ..EXTERNAL_LOCAL
};

/// `X4`, `X4h`: an `externalTrafficPolicy: Local` Service of type LoadBalancer, backend on N1.
pub(super) const LOAD_BALANCER_LOCAL: Setup = Setup {
    load_balancer: true,
    etp_local: true,
    backends: &[Role::N1],
    ..setup("x4")
};
