//! The case catalogue (SPEC §5.4): stable IDs, what each checks, its setup and its declared
//! expected outcome. The expected outcome is also computed by the model from the state read
//! back at probe time; the two must agree (a disagreement is itself reported).

/// A case's stable ID (`B1`, `C`, …).
pub type CaseId = &'static str;

/// A node role (SPEC §5.1): `N1`, `N2` carry backends, `N3` none, `N1z` shares `N1`'s zone.
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
    /// Where the client runs (`N0` probes from every client).
    pub client: Role,
    /// The declared outcome.
    pub declared: Declared,
}

const ITP_DOCS: &str = "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/";
const TD_DOCS: &str = "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-distribution";
const SVC_DOCS: &str = "https://kubernetes.io/docs/concepts/services-networking/service/";

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
        client: Role::N3,
        declared: Declared::AnsweredBy(N1_N2),
    },
    Case {
        id: "A",
        control: true,
        description: "internalTrafficPolicy: Cluster, backends on N1 and N2; client on N3",
        guarantee: "a Cluster-policy Service is delivered by any ready backend, from any node",
        docs: SVC_DOCS,
        setup: setup("a"),
        client: Role::N3,
        declared: Declared::AnsweredBy(N1_N2),
    },
    Case {
        id: "B1",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; client on N1",
        guarantee: "with internalTrafficPolicy: Local, traffic from a pod only goes to endpoints on its own node",
        docs: ITP_DOCS,
        setup: LOCAL_B,
        client: Role::N1,
        declared: Declared::AnsweredBy(&[Role::N1]),
    },
    Case {
        id: "B2",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; client on N2",
        guarantee: "with internalTrafficPolicy: Local, traffic from a pod only goes to endpoints on its own node",
        docs: ITP_DOCS,
        setup: LOCAL_B,
        client: Role::N2,
        declared: Declared::AnsweredBy(&[Role::N2]),
    },
    Case {
        id: "C",
        control: false,
        description: "internalTrafficPolicy: Local, backends on N1 and N2; client on N3 (no local backend)",
        guarantee: "with internalTrafficPolicy: Local and no ready endpoint on the client's node, kube-proxy drops the traffic: any answer is a violation",
        docs: ITP_DOCS,
        setup: LOCAL_B,
        client: Role::N3,
        declared: Declared::Timeout,
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
        client: Role::N3,
        declared: Declared::AnsweredBy(&[Role::N3]),
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
        client: Role::N3,
        declared: Declared::Timeout,
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
        client: Role::N1,
        declared: Declared::Refused,
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
        client: Role::N1,
        declared: Declared::Refused,
    },
    Case {
        id: "H1",
        control: false,
        description: "trafficDistribution: PreferSameNode, backends on N1 and N2; client on N1",
        guarantee: "PreferSameNode sends traffic to the endpoint on the client's node when there is one",
        docs: TD_DOCS,
        setup: PREFER_NODE,
        client: Role::N1,
        declared: Declared::AnsweredBy(&[Role::N1]),
    },
    Case {
        id: "H2",
        control: false,
        description: "trafficDistribution: PreferSameNode, backends on N1 and N2; client on N3 (no local backend)",
        guarantee: "PreferSameNode is a preference: without a local endpoint traffic falls back to the others instead of dropping",
        docs: TD_DOCS,
        setup: PREFER_NODE,
        client: Role::N3,
        declared: Declared::AnsweredBy(N1_N2),
    },
];

/// The case with this ID.
pub fn case(id: &str) -> Option<&'static Case> {
    CATALOGUE.iter().find(|c| c.id == id)
}
