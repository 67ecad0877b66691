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
    /// The Service's load-balancer ingress IP (`status.loadBalancer.ingress[0].ip`).
    LoadBalancer,
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
    /// The backends serve a long shutdown delay ([`crate::fixture::TERMINATING_DELAY_S`]);
    /// once Ready they are deleted (a DaemonSet's orphaned first), and the probes run while
    /// every endpoint is serving-terminating (`Pt`, `Xt`).
    pub terminating: bool,
    /// The Service port's `targetPort`.
    pub target_port: TargetPort,
    /// `externalTrafficPolicy: Local` (a NodePort Service), else `Cluster`.
    pub etp_local: bool,
    /// The backends on these roles lack the port the case dials. When not empty, the Service
    /// has two ports: the one dialled, `alt` ([`crate::fixture::ALT_PORT_NAME`], targeting
    /// the container port of that name, which only the other backends declare), and `http`
    /// on the next port number, which every backend serves (`H5`).
    pub port_missing_on: &'static [Role],
    /// `type: LoadBalancer` (the cluster's load-balancer implementation gives it an ingress
    /// IP), with the policy of [`Setup::etp_local`].
    pub load_balancer: bool,
}

/// A Service port's `targetPort` in a case's setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetPort {
    /// The name of the port the backends serve (`http`, `udp`).
    Served,
    /// A number no container listens on ([`crate::fixture::UNLISTENED_PORT`]): the
    /// EndpointSlice controller uses a number as is, so the endpoints exist (`G2`).
    Unlistened,
    /// A name no container declares ([`crate::fixture::UNDECLARED_PORT_NAME`]): the
    /// EndpointSlice controller finds no port for it in the pods, so no endpoint has the
    /// Service's port (`G3`).
    Undeclared,
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
    /// Delivered by kube-proxy to the backends on these roles, whose pods refuse the
    /// connection: nothing listens on the `targetPort` (`G2`, a misconfiguration of the
    /// Service, not a locality violation). The model expects the delivery; the client sees
    /// the endpoint's refusal.
    RefusedByEndpoint(&'static [Role]),
    /// Not probed on its own (`R`): the group's manifests are applied again unchanged and
    /// the cases of [`REPEATED`] rerun; their results must be the same as the first time.
    SameAsBefore,
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
    /// Runs only with `--external-cases` (external traffic: a client outside the node it
    /// dials).
    pub external: bool,
}

/// The cases `R` reruns after applying their group's manifests again.
pub const REPEATED: &[CaseId] = &["B1", "C"];

mod catalogue;
mod setups;

pub use catalogue::{CATALOGUE, PREFER_CLOSE_NOTE};

/// The cases a run without `--only` executes, in run order: the catalogue without the
/// external cases, which need `--external-cases`.
pub fn default_run() -> impl Iterator<Item = &'static Case> {
    CATALOGUE.iter().filter(|c| !c.external)
}

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
            assert_eq!(c.dial == Dial::LoadBalancer, s.load_balancer, "{}", c.id);
            if s.load_balancer {
                assert!(c.external, "{}: needs a load balancer (--external-cases)", c.id);
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
