//! Upstream kube-proxy's packet-flow test tables as data, one copy for the model's tests and
//! the simulated kube-proxy's: `TestInternalTrafficPolicy` (C1),
//! `TestTerminatingEndpointsTrafficPolicyLocal` (C2) and
//! `TestTerminatingEndpointsTrafficPolicyCluster` (C3) of `pkg/proxy/nftables/proxier_test.go`
//! and `pkg/proxy/iptables/proxier_test.go`, where both modes expect the same.
//!
//! Outputs are upstream's: `"DROP"`, `"REJECT"`, or the endpoints reached, sorted and joined
//! by `", "`; the masquerade flag is `None` where upstream does not state it.

use locality_model::objects::TrafficPolicy;

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
