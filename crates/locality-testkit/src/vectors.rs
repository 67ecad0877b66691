//! Upstream kube-proxy's packet-flow test tables as data, one copy for the model's tests and
//! the simulated kube-proxy's: `TestInternalTrafficPolicy` (C1),
//! `TestTerminatingEndpointsTrafficPolicyLocal` (C2) and
//! `TestTerminatingEndpointsTrafficPolicyCluster` (C3) and `TestInternalExternalMasquerade` (C4) of `pkg/proxy/nftables/proxier_test.go`
//! and `pkg/proxy/iptables/proxier_test.go`, where both modes expect the same.
//!
//! Outputs are upstream's: `"DROP"`, `"REJECT"`, or the endpoints reached, sorted and joined
//! by `", "`; the masquerade flag is `None` where upstream does not state it.

use locality_model::objects::TrafficPolicy;
use locality_model::proxy::{Destination, Source};

/// Upstream's `testNodeName`.
pub const NODE: &str = "test-node";

/// Endpoint conditions (ready, serving, terminating); `None` leaves the field unset.
pub type Cond = (Option<bool>, Option<bool>, Option<bool>);
/// Ready, serving, not terminating.
pub const READY: Cond = (Some(true), Some(true), Some(false));
/// No condition set.
pub const UNSET: Cond = (None, None, None);

/// The conditions ready `r`, serving `s`, terminating `t`.
pub fn rst(r: bool, s: bool, t: bool) -> Cond {
    (Some(r), Some(s), Some(t))
}

/// One endpoint of a vector: upstream's address, `nodeName` and conditions.
#[derive(Debug, Clone, Copy)]
pub struct Ep {
    /// Address.
    pub ip: &'static str,
    /// `nodeName`.
    pub node: &'static str,
    /// Conditions.
    pub cond: Cond,
}

/// An endpoint.
pub fn ep(ip: &'static str, node: &'static str, cond: Cond) -> Ep {
    Ep { ip, node, cond }
}

/// A flow's expected output and masquerade flag.
pub type Expect = (&'static str, Option<bool>);

/// C1: upstream's case name, the Service's `internalTrafficPolicy`, the endpoints of
/// `ns1/svc1` (clusterIP 172.30.1.1, port 80) and "pod to ClusterIP" on [`NODE`].
pub type C1Case = (&'static str, Option<TrafficPolicy>, Vec<Ep>, Expect);

/// C1, `TestInternalTrafficPolicy`. After deleting the slice every case rejects.
pub fn c1() -> Vec<C1Case> {
    let three = vec![
        ep("10.0.1.1", NODE, READY),
        ep("10.0.1.2", "node1", READY),
        ep("10.0.1.3", "node2", READY),
    ];
    vec![
        (
            "internalTrafficPolicy is cluster",
            Some(TrafficPolicy::Cluster),
            three.clone(),
            ("10.0.1.1:80, 10.0.1.2:80, 10.0.1.3:80", Some(false)),
        ),
        (
            "internalTrafficPolicy is local and there is one local endpoint",
            Some(TrafficPolicy::Local),
            three,
            ("10.0.1.1:80", Some(false)),
        ),
        (
            "internalTrafficPolicy is local and there are multiple local endpoints",
            Some(TrafficPolicy::Local),
            vec![
                ep("10.0.1.1", NODE, READY),
                ep("10.0.1.2", NODE, READY),
                ep("10.0.1.3", "node2", READY),
            ],
            ("10.0.1.1:80, 10.0.1.2:80", Some(false)),
        ),
        (
            "internalTrafficPolicy is local and there are no local endpoints",
            Some(TrafficPolicy::Local),
            vec![
                ep("10.0.1.1", "node0", READY),
                ep("10.0.1.2", "node1", READY),
                ep("10.0.1.3", "node2", READY),
            ],
            ("DROP", None),
        ),
    ]
}

/// C2/C3: upstream's case name, the endpoints of the LoadBalancer Service `ns1/svc1`
/// (clusterIP 172.30.1.1, port 80, ingress 1.2.3.4), "pod to clusterIP" and "external to
/// LB" on [`NODE`]. After deleting the slice both flows reject.
pub type LbCase = (&'static str, Vec<Ep>, Expect, Expect);

/// C2, `TestTerminatingEndpointsTrafficPolicyLocal` (`externalTrafficPolicy: Local`).
pub fn c2() -> Vec<LbCase> {
    vec![
        (
            "ready endpoints exist",
            vec![
                ep("10.0.1.1", NODE, rst(true, true, false)),
                ep("10.0.1.2", NODE, rst(true, true, false)),
                ep("10.0.1.3", NODE, rst(false, true, true)),
                ep("10.0.1.4", NODE, rst(false, false, true)),
                ep("10.0.1.5", "node-1", rst(true, true, false)),
            ],
            ("10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80", Some(false)),
            ("10.0.1.1:80, 10.0.1.2:80", Some(false)),
        ),
        (
            "only terminating endpoints exist",
            vec![
                ep("10.0.1.2", NODE, rst(false, true, true)),
                ep("10.0.1.3", NODE, rst(false, true, true)),
                ep("10.0.1.4", NODE, rst(false, false, true)),
                ep("10.0.1.5", "node-1", rst(true, true, false)),
            ],
            ("10.0.1.5:80", Some(false)),
            ("10.0.1.2:80, 10.0.1.3:80", Some(false)),
        ),
        (
            "terminating endpoints on remote node",
            vec![ep("10.0.1.5", "node-1", rst(false, true, true))],
            ("10.0.1.5:80", Some(false)),
            ("DROP", None),
        ),
        (
            "no usable endpoints on any node",
            // Upstream lists 10.0.1.5 twice (on testNodeName and node-1): one pod, two entries.
            vec![
                ep("10.0.1.5", NODE, rst(false, false, true)),
                ep("10.0.1.5", "node-1", rst(false, false, true)),
            ],
            ("REJECT", None),
            ("REJECT", None),
        ),
    ]
}

/// C3, `TestTerminatingEndpointsTrafficPolicyCluster` (`externalTrafficPolicy: Cluster`).
pub fn c3() -> Vec<LbCase> {
    vec![
        (
            "ready endpoints exist",
            vec![
                ep("10.0.1.1", NODE, rst(true, true, false)),
                ep("10.0.1.2", NODE, rst(true, true, false)),
                ep("10.0.1.3", "another-node", rst(false, true, true)),
                ep("10.0.1.4", "another-node", rst(false, false, true)),
                ep("10.0.1.5", "another-node", rst(true, true, false)),
            ],
            ("10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80", Some(false)),
            ("10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80", Some(true)),
        ),
        (
            "only terminating endpoints exist",
            vec![
                ep("10.0.1.2", NODE, rst(false, true, true)),
                ep("10.0.1.3", NODE, rst(false, true, true)),
                ep("10.0.1.4", "another-node", rst(false, false, true)),
                ep("10.0.1.5", "another-node", rst(false, true, true)),
            ],
            ("10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80", Some(false)),
            ("10.0.1.2:80, 10.0.1.3:80, 10.0.1.5:80", Some(true)),
        ),
        (
            "terminating endpoints on remote node",
            vec![ep("10.0.1.5", "node-1", rst(false, true, true))],
            ("10.0.1.5:80", Some(false)),
            ("10.0.1.5:80", Some(true)),
        ),
        (
            "no usable endpoints on any node",
            vec![
                ep("10.0.1.5", NODE, rst(false, false, true)),
                ep("10.0.1.5", "node-1", rst(false, false, true)),
            ],
            ("REJECT", None),
            ("REJECT", None),
        ),
    ]
}

/// One of C4's Services (`ns`, `name`, clusterIP, nodePort, LB ingress IP, the endpoint on
/// [`NODE`] and the one on `remote-node`, port `p80` 80/TCP), and its policies.
#[derive(Debug, Clone, Copy)]
pub struct C4Service {
    /// Namespace.
    pub ns: &'static str,
    /// Name.
    pub name: &'static str,
    /// clusterIP.
    pub cluster_ip: &'static str,
    /// nodePort of `p80`.
    pub node_port: u16,
    /// `status.loadBalancer.ingress[0].ip`.
    pub ingress: &'static str,
    /// The endpoint on [`NODE`].
    pub local_ip: &'static str,
    /// The endpoint on `remote-node`.
    pub remote_ip: &'static str,
    /// `externalTrafficPolicy: Local`.
    pub etp_local: bool,
    /// `internalTrafficPolicy: Local`.
    pub itp_local: bool,
}

/// The three LoadBalancer Services of `TestInternalExternalMasquerade` (C4): plain, ETP
/// Local, ITP Local.
pub const C4_SERVICES: [C4Service; 3] = [
    C4Service {
        ns: "ns1",
        name: "svc1",
        cluster_ip: "172.30.0.41",
        node_port: 3001,
        ingress: "1.2.3.4",
        local_ip: "10.180.0.1",
        remote_ip: "10.180.1.1",
        etp_local: false,
        itp_local: false,
    },
    C4Service {
        ns: "ns2",
        name: "svc2",
        cluster_ip: "172.30.0.42",
        node_port: 3002,
        ingress: "5.6.7.8",
        local_ip: "10.180.0.2",
        remote_ip: "10.180.1.2",
        etp_local: true,
        itp_local: false,
    },
    C4Service {
        ns: "ns3",
        name: "svc3",
        cluster_ip: "172.30.0.43",
        node_port: 3003,
        ingress: "9.10.11.12",
        local_ip: "10.180.0.3",
        remote_ip: "10.180.1.3",
        etp_local: false,
        itp_local: true,
    },
];

/// The namespace of a C4 Service.
pub fn c4_namespace(svc: &str) -> &'static str {
    C4_SERVICES.iter().find(|s| s.name == svc).map_or("", |s| s.ns)
}

/// A C4 flow: upstream's number and name, the Service, source, destination, output and
/// masquerade mark (configuration "base": masqueradeAll off, LocalTrafficDetector on).
pub type C4Flow = (
    u8,
    &'static str,
    &'static str,
    Source,
    Destination,
    &'static str,
    bool,
);

const SVC1: &str = "10.180.0.1:80, 10.180.1.1:80";
const SVC2: &str = "10.180.0.2:80, 10.180.1.2:80";
const SVC3: &str = "10.180.0.3:80, 10.180.1.3:80";

/// C4, `TestInternalExternalMasquerade`, its 27 flows.
#[rustfmt::skip]
pub const C4_FLOWS: [C4Flow; 27] = [
    (1, "pod to ClusterIP", "svc1", Source::Pod, Destination::ClusterIp, SVC1, false),
    (2, "pod to NodePort", "svc1", Source::Pod, Destination::NodePort, SVC1, true),
    (3, "pod to LB", "svc1", Source::Pod, Destination::LoadBalancer, SVC1, true),
    (4, "node to ClusterIP", "svc1", Source::Host, Destination::ClusterIp, SVC1, true),
    (5, "node to NodePort", "svc1", Source::Host, Destination::NodePort, SVC1, true),
    (6, "node to LB", "svc1", Source::Host, Destination::LoadBalancer, SVC1, true),
    (7, "external to ClusterIP", "svc1", Source::External, Destination::ClusterIp, SVC1, true),
    (8, "external to NodePort", "svc1", Source::External, Destination::NodePort, SVC1, true),
    (9, "external to LB", "svc1", Source::External, Destination::LoadBalancer, SVC1, true),
    (10, "pod to ClusterIP with eTP:Local", "svc2", Source::Pod, Destination::ClusterIp, SVC2, false),
    (11, "pod to NodePort with eTP:Local", "svc2", Source::Pod, Destination::NodePort, SVC2, false),
    (12, "pod to LB with eTP:Local", "svc2", Source::Pod, Destination::LoadBalancer, SVC2, false),
    (13, "node to ClusterIP with eTP:Local", "svc2", Source::Host, Destination::ClusterIp, SVC2, true),
    // Upstream's flow 14 dials svc1's nodePort (3001), so it checks svc1.
    (14, "node to NodePort with eTP:Local", "svc1", Source::Host, Destination::NodePort, SVC1, true),
    (15, "node to LB with eTP:Local", "svc2", Source::Host, Destination::LoadBalancer, SVC2, true),
    (16, "external to ClusterIP with eTP:Local", "svc2", Source::External, Destination::ClusterIp, SVC2, true),
    (17, "external to NodePort with eTP:Local", "svc2", Source::External, Destination::NodePort, "10.180.0.2:80", false),
    (18, "external to LB with eTP:Local", "svc2", Source::External, Destination::LoadBalancer, "10.180.0.2:80", false),
    (19, "pod to ClusterIP with iTP:Local", "svc3", Source::Pod, Destination::ClusterIp, "10.180.0.3:80", false),
    (20, "pod to NodePort with iTP:Local", "svc3", Source::Pod, Destination::NodePort, SVC3, true),
    (21, "pod to LB with iTP:Local", "svc3", Source::Pod, Destination::LoadBalancer, SVC3, true),
    (22, "node to ClusterIP with iTP:Local", "svc3", Source::Host, Destination::ClusterIp, "10.180.0.3:80", true),
    (23, "node to NodePort with iTP:Local", "svc3", Source::Host, Destination::NodePort, SVC3, true),
    (24, "node to LB with iTP:Local", "svc3", Source::Host, Destination::LoadBalancer, SVC3, true),
    (25, "external to ClusterIP with iTP:Local", "svc3", Source::External, Destination::ClusterIp, "10.180.0.3:80", true),
    (26, "external to NodePort with iTP:Local", "svc3", Source::External, Destination::NodePort, SVC3, true),
    (27, "external to LB with iTP:Local", "svc3", Source::External, Destination::LoadBalancer, SVC3, true),
];
