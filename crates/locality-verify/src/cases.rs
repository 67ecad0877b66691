//! The case catalogue (docs/design.md §5.4): stable IDs, what each checks, its setup and its declared
//! expected outcome. The expected outcome is also computed by the model from the state read
//! back at probe time; the two must agree (a disagreement is itself reported).

/// A case's stable ID (`B1`, `C`, …).
pub type CaseId = &'static str;

/// A node role (docs/design.md §5.1): `N1`, `N2` carry backends, `N3` none, `N1z` shares `N1`'s zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Role {
    /// Carries a backend.
    N1,
    /// Carries a backend.
    N2,
    /// Carries no backend.
    N3,
    /// Another node in `N1`'s zone.
    N1z,
}

impl Role {
    /// The role's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::N1 => "N1",
            Role::N2 => "N2",
            Role::N3 => "N3",
            Role::N1z => "N1z",
        }
    }
    /// Lower-case, for object names.
    pub fn slug(self) -> &'static str {
        match self {
            Role::N1 => "n1",
            Role::N2 => "n2",
            Role::N3 => "n3",
            Role::N1z => "n1z",
        }
    }
}

/// Who dials (docs/design.md §5.1: clients are netexec pods; a hostNetwork one is the node itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Client {
    /// A netexec pod on the pod network of the role's node (source `pod`).
    Pod(Role),
    /// A hostNetwork netexec pod on the role's node (source `host`: node-originated traffic).
    Host(Role),
    /// A netexec pod on each sampled node (`--max-nodes`, every zone and every kube-proxy
    /// covered) — without a backend of the case unless the backend is a DaemonSet — each
    /// judged against its own node (`P`, `Pn`).
    EachNode,
}

impl Client {
    /// The role whose node the client runs on (`None` for [`Client::EachNode`]).
    pub fn role(self) -> Option<Role> {
        match self {
            Client::Pod(r) | Client::Host(r) => Some(r),
            Client::EachNode => None,
        }
    }
}

/// What the client dials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Dial {
    /// The Service's cluster IP.
    ClusterIp,
    /// This role's node's InternalIP at the Service's nodePort.
    NodePort(Role),
}

/// What a case's setup creates (each setup group has its own Service and backends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// Setup group: cases with the same group share one Service and its backends.
    pub group: &'static str,
    /// A Service is created (`false`: backends only, probed by pod IP).
    pub service: bool,
    /// `internalTrafficPolicy: Local`.
    pub itp_local: bool,
    /// `trafficDistribution`.
    pub traffic_distribution: Option<&'static str>,
    /// Nodes with a Ready backend.
    pub backends: &'static [Role],
    /// Nodes with a backend that never becomes Ready.
    pub unready: &'static [Role],
    /// The Service selects nothing.
    pub selects_nothing: bool,
    /// The backends are deleted once Ready (the selector matches no pod left).
    pub delete_backends: bool,
    /// The Service port is UDP (netexec's `--udp-port`), else TCP (HTTP).
    pub udp: bool,
    /// `type: NodePort` (a nodePort allocated by the API server), else ClusterIP.
    pub node_port: bool,
    /// The backends are a DaemonSet (pods placed by the DaemonSet controller itself on every
    /// Linux node that fits) instead of pods pinned to `backends`.
    pub daemonset: bool,
    /// Not probed: `N3`'s kube-proxy metrics are read (one-shot hostNetwork curl pods through
    /// `pods/log`) before the Service exists, once it exists without a backend on `N3`, and
    /// once a Ready backend was added on `N3` (`M`).
    pub metrics: bool,
    /// N1's backend is replaced (deleted, then a new one created once it is gone) while a
    /// probe-loop client on N1 tries continuously (`E-a`, `E-b`, `H3`).
    pub rollout: bool,
    /// The backends' readiness is httpGet `/readyz` (netexec fails it from SIGTERM on), else
    /// tcpSocket.
    pub readyz: bool,
    /// A client on each sampled node without a backend of the group ([`Client::EachNode`]
    /// without a DaemonSet).
    pub each_node: bool,
    /// The DaemonSet's pods serve a long shutdown delay ([`crate::fixture::TERMINATING_DELAY_S`]);
    /// once Ready they are orphaned and deleted, and the probes run while every endpoint is
    /// serving-terminating (`Pt`).
    pub terminating: bool,
}

/// The outcome a case declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Declared {
    /// Every try answered, by the backends on these roles only (all of them answering when
    /// there are several).
    AnsweredBy(&'static [Role]),
    /// No answer: the client times out (kube-proxy's DROP).
    Timeout,
    /// Refused (kube-proxy's REJECT).
    Refused,
    /// Every try answered, always by the backend on the client's own node ([`Client::EachNode`]
    /// with a DaemonSet backend).
    OwnNode,
    /// Not probed (`M`): `N3`'s kube-proxy counts the Service in
    /// `kubeproxy_sync_proxy_rules_no_local_endpoints_total` (`traffic_policy="internal"`,
    /// summed over `ip_family`: +1 per service port and family on iptables/nftables, +1 per
    /// Service and family on ipvs) while `N3` has no endpoint, and no more once it has one.
    NoLocalEndpointsCounted,
    /// Not one outcome (`E-a`, `E-b`, `H3`): each try of the rollout is judged against the
    /// phase of N1's endpoints it falls in (never a remote answer under ITP Local; no drop
    /// window under PreferSameNode).
    Rollout,
}

/// One case.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// Stable ID.
    pub id: CaseId,
    /// A control: when it fails, the environment cannot support a verdict (HOLD).
    pub control: bool,
    /// What is set up and probed.
    pub description: &'static str,
    /// The documented guarantee it checks, in the tool's words.
    pub guarantee: &'static str,
    /// The Kubernetes documentation of that guarantee.
    pub docs: &'static str,
    /// The setup.
    pub setup: Setup,
    /// Who dials (`N0` probes from every client).
    pub client: Client,
    /// What it dials.
    pub dial: Dial,
    /// The declared outcome.
    pub declared: Declared,
    /// A note added to the case's `why` (e.g. a deprecation).
    pub note: Option<&'static str>,
}

const ITP_DOCS: &str = "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/";
const TD_DOCS: &str = "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-distribution";
const SVC_DOCS: &str = "https://kubernetes.io/docs/concepts/services-networking/service/";
const METRICS_DOCS: &str = "https://kubernetes.io/docs/reference/instrumentation/metrics/";

const NONE: &[Role] = &[];
const N1_N2: &[Role] = &[Role::N1, Role::N2];

const fn setup(group: &'static str) -> Setup {
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
    }
}

const LOCAL_B: Setup = Setup {
    itp_local: true,
    ..setup("b")
};
const PREFER_NODE: Setup = Setup {
    traffic_distribution: Some("PreferSameNode"),
    ..setup("h")
};
const LOCAL_BH: Setup = Setup {
    itp_local: true,
    ..setup("bh")
};
const PREFER_ZONE: Setup = Setup {
    traffic_distribution: Some("PreferSameZone"),
    ..setup("z")
};
const LOCAL_UDP: Setup = Setup {
    itp_local: true,
    udp: true,
    ..setup("u")
};

/// `Z3`'s note: PreferClose is the deprecated original name of PreferSameZone.
pub const PREFER_CLOSE_NOTE: &str = "note: trafficDistribution PreferClose is deprecated (Kubernetes 1.34, KEP-3015): it is the original name of PreferSameZone, which behaves the same; use PreferSameZone";

/// The cases this version runs, in run order.
pub const CATALOGUE: &[Case] = &[
    Case {
        id: "N0",
        control: true,
        description: "backends on N1 and N2, no Service; every client dials each backend's pod IP",
        guarantee: "the pod network works: every client reaches every backend by pod IP",
        docs: "https://kubernetes.io/docs/concepts/services-networking/#the-kubernetes-network-model",
        setup: Setup {
            service: false,
            ..setup("n0")
        },
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(N1_N2),
        note: None,
    },
    Case {
        id: "A",
        control: true,
        description: "internalTrafficPolicy: Cluster, backends on N1 and N2; client on N3",
        guarantee: "a Cluster-policy Service is delivered by any ready backend, from any node",
        docs: SVC_DOCS,
        setup: setup("a"),
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(N1_N2),
        note: None,
    },
    Case {
        id: "P",
        control: false,
        description: "internalTrafficPolicy: Local, a DaemonSet backend on every node; a client on each sampled node",
        guarantee: "with internalTrafficPolicy: Local and a backend on every node, every client is served by the backend on its own node, and only by it",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            backends: NONE,
            daemonset: true,
            ..setup("p")
        },
        client: Client::EachNode,
        dial: Dial::ClusterIp,
        declared: Declared::OwnNode,
        note: None,
    },
    Case {
        id: "B1",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; client on N1",
        guarantee: "with internalTrafficPolicy: Local, traffic from a pod only goes to endpoints on its own node",
        docs: ITP_DOCS,
        setup: LOCAL_B,
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N1]),
        note: None,
    },
    Case {
        id: "B2",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; client on N2",
        guarantee: "with internalTrafficPolicy: Local, traffic from a pod only goes to endpoints on its own node",
        docs: ITP_DOCS,
        setup: LOCAL_B,
        client: Client::Pod(Role::N2),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N2]),
        note: None,
    },
    Case {
        id: "C",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; client on N3 (no local backend)",
        guarantee: "with internalTrafficPolicy: Local and no ready endpoint on the client's node, kube-proxy drops the traffic: any answer is a violation",
        docs: ITP_DOCS,
        setup: LOCAL_B,
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::Timeout,
        note: None,
    },
    Case {
        id: "Pn",
        control: false,
        description: "internalTrafficPolicy: Local, one backend on N1; a client on each other sampled node (no local backend)",
        guarantee: "with internalTrafficPolicy: Local and no ready endpoint on the client's node, kube-proxy drops the traffic on every node: any answer is a violation. A node that ignores the policy answers every try (one remote backend), so one try per node catches it",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            backends: &[Role::N1],
            each_node: true,
            ..setup("pn")
        },
        client: Client::EachNode,
        dial: Dial::ClusterIp,
        declared: Declared::Timeout,
        note: None,
    },
    Case {
        id: "Pt",
        control: false,
        description: "internalTrafficPolicy: Local, a DaemonSet backend on every node, every pod deleted but still serving its shutdown delay; a client on each sampled node",
        guarantee: "with internalTrafficPolicy: Local and only serving-terminating endpoints on the client's node, kube-proxy falls back to them (KEP-1669, GA in 1.28): every client is served by the terminating backend on its own node, and only by it. A node without the fallback drops every try",
        docs: "https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#terminating",
        setup: Setup {
            itp_local: true,
            backends: NONE,
            daemonset: true,
            terminating: true,
            ..setup("pt")
        },
        client: Client::EachNode,
        dial: Dial::ClusterIp,
        declared: Declared::OwnNode,
        note: None,
    },
    Case {
        id: "C1",
        control: false,
        description: "internalTrafficPolicy: Local, one backend on N3; client on N1 (no local backend)",
        guarantee: "with internalTrafficPolicy: Local and no ready endpoint on the client's node, kube-proxy drops the traffic: N1 too is checked without a local endpoint",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            backends: &[Role::N3],
            ..setup("c1")
        },
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::Timeout,
        note: None,
    },
    Case {
        id: "Bh",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; hostNetwork client on N1",
        guarantee: "internalTrafficPolicy: Local applies to ClusterIP traffic from the node itself (hostNetwork) as from pods: only the node's own endpoints answer",
        docs: ITP_DOCS,
        setup: LOCAL_BH,
        client: Client::Host(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N1]),
        note: None,
    },
    Case {
        id: "Ch",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; hostNetwork client on N3 (no local backend)",
        guarantee: "internalTrafficPolicy: Local applies to ClusterIP traffic from the node itself (hostNetwork): without a local endpoint it is dropped, any answer is a violation",
        docs: ITP_DOCS,
        setup: LOCAL_BH,
        client: Client::Host(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::Timeout,
        note: None,
    },
    Case {
        id: "D1",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1, N2 and a ready one on N3; client on N3",
        guarantee: "a ready endpoint on the client's node is used, and only it",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            backends: &[Role::N1, Role::N2, Role::N3],
            ..setup("d1")
        },
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N3]),
        note: None,
    },
    Case {
        id: "D2",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2, one on N3 that is not Ready; client on N3",
        guarantee: "an endpoint that is not ready is not used: the traffic is dropped as if it were absent",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            unready: &[Role::N3],
            ..setup("d2")
        },
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::Timeout,
        note: None,
    },
    Case {
        id: "M",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2, then a Ready one on N3; N3's kube-proxy metrics (127.0.0.1:10249/metrics) read by one-shot hostNetwork curl pods before the Service, with it, and after N3's backend",
        guarantee: "kube-proxy drops Local-policy traffic deliberately and says so: a node without a local endpoint counts the Service in kubeproxy_sync_proxy_rules_no_local_endpoints_total, and stops once it has a ready one",
        docs: METRICS_DOCS,
        setup: Setup {
            itp_local: true,
            metrics: true,
            ..setup("m")
        },
        client: Client::Host(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::NoLocalEndpointsCounted,
        note: None,
    },
    Case {
        id: "E-a",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; N1's backend (agnhost --delay-shutdown, grace period above it, tcpSocket readiness) is replaced while a probe-loop client on N1 tries continuously",
        guarantee: "with internalTrafficPolicy: Local a rollout never sends traffic to another node: the terminating local endpoint serves while it is serving, then traffic is dropped until the new pod is Ready",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            rollout: true,
            ..setup("ea")
        },
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::Rollout,
        note: None,
    },
    Case {
        id: "E-b",
        control: false,
        description: "as E-a with readiness httpGet /readyz (netexec fails it from SIGTERM on)",
        guarantee: "with internalTrafficPolicy: Local a rollout never sends traffic to another node: once the old endpoint stops serving, traffic is dropped until the new pod is Ready",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            rollout: true,
            readyz: true,
            ..setup("eb")
        },
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::Rollout,
        note: None,
    },
    Case {
        id: "H3",
        control: false,
        description: "trafficDistribution: PreferSameNode, backends on N1 and N2; N1's backend is replaced as in E-a while a probe-loop client on N1 tries continuously",
        guarantee: "PreferSameNode has no drop window in a rollout: while N1 has no ready endpoint the others answer, and N1's new backend again once Ready",
        docs: TD_DOCS,
        setup: Setup {
            traffic_distribution: Some("PreferSameNode"),
            rollout: true,
            ..setup("h3")
        },
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::Rollout,
        note: None,
    },
    Case {
        id: "F",
        control: false,
        description: "the selector matched pods that were all deleted; client on N1",
        guarantee: "a Service without endpoints rejects connections (refused), it does not hang",
        docs: SVC_DOCS,
        setup: Setup {
            backends: &[Role::N1],
            delete_backends: true,
            ..setup("f")
        },
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::Refused,
        note: None,
    },
    Case {
        id: "G1",
        control: false,
        description: "the selector matches nothing; client on N1",
        guarantee: "a Service whose selector matches no pod rejects connections",
        docs: SVC_DOCS,
        setup: Setup {
            backends: NONE,
            selects_nothing: true,
            ..setup("g1")
        },
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::Refused,
        note: None,
    },
    Case {
        id: "H1",
        control: false,
        description: "trafficDistribution: PreferSameNode, backends on N1 and N2; client on N1",
        guarantee: "PreferSameNode sends traffic to the endpoint on the client's node when there is one",
        docs: TD_DOCS,
        setup: PREFER_NODE,
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N1]),
        note: None,
    },
    Case {
        id: "H2",
        control: false,
        description: "trafficDistribution: PreferSameNode, backends on N1 and N2; client on N3 (no local backend)",
        guarantee: "PreferSameNode is a preference: without a local endpoint traffic falls back to the others instead of dropping",
        docs: TD_DOCS,
        setup: PREFER_NODE,
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(N1_N2),
        note: None,
    },
    Case {
        id: "H4",
        control: false,
        description: "trafficDistribution: PreferSameNode, backends on N1 and on N1z (same zone); client on N1",
        guarantee: "PreferSameNode prefers the client's own node, not merely its zone: the same-zone peer does not answer while a local endpoint is ready",
        docs: TD_DOCS,
        setup: Setup {
            traffic_distribution: Some("PreferSameNode"),
            backends: &[Role::N1, Role::N1z],
            ..setup("h4")
        },
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N1]),
        note: None,
    },
    Case {
        id: "Z1",
        control: false,
        description: "trafficDistribution: PreferSameZone, backends on N1 and N2 (two zones); client on N1z (N1's zone, no local backend)",
        guarantee: "PreferSameZone keeps traffic in the client's zone when that zone has a ready endpoint",
        docs: TD_DOCS,
        setup: PREFER_ZONE,
        client: Client::Pod(Role::N1z),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N1]),
        note: None,
    },
    Case {
        id: "Z2",
        control: false,
        description: "trafficDistribution: PreferSameZone, backends on N1 and N2 (two zones); client on N3 (a zone without backends)",
        guarantee: "PreferSameZone is a preference: a client in a zone without endpoints is served by the endpoints of every zone",
        docs: TD_DOCS,
        setup: PREFER_ZONE,
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(N1_N2),
        note: None,
    },
    Case {
        id: "Z3",
        control: false,
        description: "trafficDistribution: PreferClose, backends on N1 and N2 (two zones); client on N1z (N1's zone, no local backend)",
        guarantee: "PreferClose (the deprecated name of PreferSameZone) keeps traffic in the client's zone when that zone has a ready endpoint",
        docs: TD_DOCS,
        setup: Setup {
            traffic_distribution: Some("PreferClose"),
            ..setup("z3")
        },
        client: Client::Pod(Role::N1z),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N1]),
        note: Some(PREFER_CLOSE_NOTE),
    },
    Case {
        id: "L1",
        control: false,
        description: "internalTrafficPolicy: Local with trafficDistribution: PreferSameZone, backends on N1 and N2; client on N3",
        guarantee: "internalTrafficPolicy: Local wins over a traffic-distribution preference: without a local endpoint the traffic is dropped, as in C",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            traffic_distribution: Some("PreferSameZone"),
            ..setup("l1")
        },
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::Timeout,
        note: None,
    },
    Case {
        id: "U1",
        control: false,
        description: "internalTrafficPolicy: Local UDP Service, backends on N1 and N2; client on N1",
        guarantee: "internalTrafficPolicy: Local governs UDP as TCP: only the node's own endpoint answers",
        docs: ITP_DOCS,
        setup: LOCAL_UDP,
        client: Client::Pod(Role::N1),
        dial: Dial::ClusterIp,
        declared: Declared::AnsweredBy(&[Role::N1]),
        note: None,
    },
    Case {
        id: "U2",
        control: false,
        description: "internalTrafficPolicy: Local UDP Service, backends on N1 and N2; client on N3 (no local backend)",
        guarantee: "internalTrafficPolicy: Local governs UDP as TCP: without a local endpoint datagrams are dropped (the client's read times out)",
        docs: ITP_DOCS,
        setup: LOCAL_UDP,
        client: Client::Pod(Role::N3),
        dial: Dial::ClusterIp,
        declared: Declared::Timeout,
        note: None,
    },
    Case {
        id: "X1",
        control: false,
        description: "internalTrafficPolicy: Local Service of type NodePort, backends on N1 and N2; a pod on N3 dials N3's InternalIP at the nodePort",
        guarantee: "internalTrafficPolicy does not govern NodePort traffic: with externalTrafficPolicy: Cluster any ready endpoint answers, even from a node without one",
        docs: ITP_DOCS,
        setup: Setup {
            itp_local: true,
            node_port: true,
            ..setup("x1")
        },
        client: Client::Pod(Role::N3),
        dial: Dial::NodePort(Role::N3),
        declared: Declared::AnsweredBy(N1_N2),
        note: None,
    },
];

/// The case with this ID (ASCII case-insensitive: `bh`, `BH` and `Bh` name the same case).
pub fn case(id: &str) -> Option<&'static Case> {
    CATALOGUE.iter().find(|c| c.id.eq_ignore_ascii_case(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_even_ignoring_case() {
        for (i, a) in CATALOGUE.iter().enumerate() {
            for b in &CATALOGUE[i + 1..] {
                assert!(!a.id.eq_ignore_ascii_case(b.id), "{} / {}", a.id, b.id);
            }
        }
        assert_eq!(case("bh").map(|c| c.id), Some("Bh"));
        assert_eq!(case("CH").map(|c| c.id), Some("Ch"));
    }

    #[test]
    fn a_setup_group_is_one_setup() {
        for a in CATALOGUE {
            for b in CATALOGUE.iter().filter(|b| b.setup.group == a.setup.group) {
                assert_eq!(a.setup, b.setup, "{} / {}", a.id, b.id);
            }
        }
    }

    #[test]
    fn declared_outcomes_fit_their_setup() {
        for c in CATALOGUE {
            let s = &c.setup;
            assert_eq!(
                s.daemonset || s.each_node,
                c.client == Client::EachNode,
                "{}",
                c.id
            );
            assert!(!(s.daemonset && s.each_node), "{}", c.id);
            assert_eq!(c.declared == Declared::OwnNode, s.daemonset, "{}", c.id);
            if s.each_node {
                assert_eq!(c.declared, Declared::Timeout, "{}", c.id);
            }
            if let Declared::AnsweredBy(roles) = c.declared {
                assert!(!roles.is_empty(), "{}", c.id);
                for r in roles {
                    assert!(s.backends.contains(r), "{}: {} has no backend", c.id, r.as_str());
                }
            }
            if let Dial::NodePort(_) = c.dial {
                assert!(s.node_port, "{}", c.id);
            }
            assert_eq!(
                c.declared == Declared::NoLocalEndpointsCounted,
                s.metrics,
                "{}",
                c.id
            );
            if s.daemonset {
                assert!(s.backends.is_empty() && s.unready.is_empty(), "{}", c.id);
            }
        }
    }
}
