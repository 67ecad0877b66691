//! The rule catalogue (docs/design.md §7): stable IDs, titles, default severities and the Kubernetes
//! documentation page that states each guarantee.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How bad a finding is. Ordered from the most to the least severe (`Error < Warning < Info`
/// in `Ord`, so that sorting puts errors first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Traffic is lost now (timeouts or refusals on some nodes).
    Error,
    /// Traffic will be lost on a likely event (rollout, scale-down) or a setting does not do
    /// what it says.
    Warning,
    /// Worth knowing; nothing is lost.
    Info,
}

impl Severity {
    /// All severities, most severe first.
    pub const ALL: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Info];

    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// True when `self` is at least as severe as `threshold` (`--fail-on`).
    pub fn at_least(self, threshold: Severity) -> bool {
        self <= threshold
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = ParseError;

    /// Parses `error`, `warning` or `info` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" => Ok(Severity::Error),
            "warning" | "warn" => Ok(Severity::Warning),
            "info" => Ok(Severity::Info),
            _ => Err(ParseError::Severity(s.to_string())),
        }
    }
}

/// Error parsing a rule ID or a severity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not `LOC001`…`LOC020`.
    #[error("unknown audit rule {0:?}: expected LOC001 to LOC021")]
    Rule(String),
    /// Not `error`, `warning` or `info`.
    #[error("unknown severity {0:?}: expected error, warning or info")]
    Severity(String),
}

macro_rules! rules {
    ($( $id:ident = $code:literal, $sev:ident, $title:literal, $fix:literal, $url:literal; )*) => {
        /// A stable audit rule ID (docs/design.md §7). Serialized as its code (`"LOC001"`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RuleId {
            $(
                #[doc = concat!("`", $code, "`: ", $title, ".")]
                $id,
            )*
        }

        impl RuleId {
            /// Every rule, in ID order.
            pub const ALL: [RuleId; 21] = [$(RuleId::$id),*];

            /// The stable code, e.g. `LOC001`.
            pub fn as_str(self) -> &'static str {
                match self { $(RuleId::$id => $code,)* }
            }

            /// A one-line title.
            pub fn title(self) -> &'static str {
                match self { $(RuleId::$id => $title,)* }
            }

            /// The severity its findings usually have (some findings are lowered or raised,
            /// e.g. `LOC015` behind a load balancer is `info`).
            pub fn default_severity(self) -> Severity {
                match self { $(RuleId::$id => Severity::$sev,)* }
            }

            /// The usual fix, one line (a finding's own fix is worked out for its case).
            pub fn fix(self) -> &'static str {
                match self { $(RuleId::$id => $fix,)* }
            }

            /// The kubernetes.io page that states the guarantee the rule checks.
            pub fn docs_url(self) -> &'static str {
                match self { $(RuleId::$id => $url,)* }
            }
        }
    };
}

rules! {
    Loc001 = "LOC001", Error,
        "internalTrafficPolicy: Local Service with client nodes that have no local endpoint",
        "run a ready backend on every client node (a DaemonSet that tolerates and selects them), or use internalTrafficPolicy: Cluster with trafficDistribution: PreferSameNode",
        "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/";
    Loc002 = "LOC002", Warning,
        "internalTrafficPolicy: Local backed by fewer replicas than client nodes",
        "run a replica on every client node (a DaemonSet), or use internalTrafficPolicy: Cluster with trafficDistribution: PreferSameNode",
        "https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/";
    Loc003 = "LOC003", Warning,
        "DaemonSet behind an internalTrafficPolicy: Local Service cannot run on some client nodes",
        "give the DaemonSet the tolerations, nodeSelector and affinity that admit every client node, or keep the clients off the nodes it cannot run on",
        "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/#taints-and-tolerations";
    Loc004 = "LOC004", Warning,
        "DaemonSet rollout with maxSurge 0 blinds each node for the readiness gap",
        "set the DaemonSet's rollingUpdate maxSurge to 1 and maxUnavailable to 0: the new pod is Ready before the old one stops",
        "https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/";
    Loc005 = "LOC005", Info,
        "trafficDistribution: PreferClose is a deprecated alias of PreferSameZone",
        "write trafficDistribution: PreferSameZone",
        "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-distribution";
    Loc006 = "LOC006", Warning,
        "A traffic preference has no effect on ClusterIP traffic under internalTrafficPolicy: Local",
        "drop the preference, or use internalTrafficPolicy: Cluster with it to prefer local endpoints without dropping",
        "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-distribution";
    Loc007 = "LOC007", Warning,
        "A ready endpoint lacks the hint the others carry: the preference is off on every node",
        "find what wrote the endpoint without the hint (a mirrored or hand-written EndpointSlice, an old controller) and let the EndpointSlice controller write it",
        "https://kubernetes.io/docs/concepts/services-networking/topology-aware-routing/#safeguards";
    Loc008 = "LOC008", Warning,
        "Endpoints on nodes without a topology.kubernetes.io/zone label get no zone hints",
        "label every node with topology.kubernetes.io/zone (cloud providers do it; kind and bare metal need it by hand)",
        "https://kubernetes.io/docs/reference/labels-annotations-taints/#topologykubernetesiozone";
    Loc009 = "LOC009", Warning,
        "topology-mode: Auto without hints: a safeguard disabled them",
        "spread the endpoints over the zones in proportion to their CPU, or use trafficDistribution: PreferSameZone, which has no safeguards",
        "https://kubernetes.io/docs/concepts/services-networking/topology-aware-routing/#safeguards";
    Loc010 = "LOC010", Warning,
        "Both the topology-mode annotation and trafficDistribution are set: the annotation wins",
        "remove one of them: keep trafficDistribution (predictable, no safeguards) or the annotation (CPU-proportional)",
        "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-distribution";
    Loc011 = "LOC011", Warning,
        "A same-zone or same-node preference concentrates load on few endpoints",
        "spread endpoints in proportion to where the clients run (topology spread constraints), or drop the preference",
        "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-distribution";
    Loc012 = "LOC012", Warning,
        "A field or value the cluster's versions do not support or enable by default",
        "upgrade the component that lacks the field, enable its feature gate, or remove the field",
        "https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/";
    Loc013 = "LOC013", Error,
        "A Service with a selector and no usable endpoint anywhere: connections are refused",
        "fix the selector, the pods' readiness or their ports so that some endpoint is ready",
        "https://kubernetes.io/docs/concepts/services-networking/service/#services-without-selectors";
    Loc014 = "LOC014", Warning,
        "Controller-managed EndpointSlices differ from what the controller would write",
        "check the EndpointSlice controller (kube-controller-manager logs) or whether the dump mixes moments; re-list to confirm",
        "https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#management";
    Loc015 = "LOC015", Error,
        "externalTrafficPolicy: Local with client-facing nodes that drop external traffic",
        "run a ready backend on every node the load balancer sends to, let it health-check healthCheckNodePort, or use externalTrafficPolicy: Cluster",
        "https://kubernetes.io/docs/tasks/access-application-cluster/create-external-load-balancer/#preserving-the-client-source-ip";
    Loc016 = "LOC016", Warning,
        "Nodes served only by terminating endpoints: about to drop",
        "start replacement pods before the old ones terminate (maxSurge of 1 or more, a PodDisruptionBudget)",
        "https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#conditions";
    Loc017 = "LOC017", Warning,
        "IPVS does not enforce internalTrafficPolicy: Local on an externally reachable Service",
        "do not rely on node-local delivery under IPVS: use iptables or nftables mode, or expose the Service externally through another one",
        "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-ipvs";
    Loc018 = "LOC018", Warning,
        "A traffic policy on a headless or ExternalName Service has no effect",
        "remove the policy, or give the Service a cluster IP if node-local routing is needed",
        "https://kubernetes.io/docs/concepts/services-networking/service/#headless-services";
    Loc019 = "LOC019", Warning,
        "publishNotReadyAddresses with internalTrafficPolicy: Local sends local traffic to not-ready pods",
        "drop publishNotReadyAddresses (a separate headless Service for peer discovery), or make the clients tolerate a not-ready local endpoint",
        "https://kubernetes.io/docs/reference/kubernetes-api/service-resources/service-v1/#ServiceSpec";
    Loc020 = "LOC020", Error,
        "Selector-less Service whose endpoints lack nodeName under a Local policy: every node drops",
        "set nodeName on every endpoint of the hand-written EndpointSlices, or use internalTrafficPolicy: Cluster",
        "https://kubernetes.io/docs/concepts/services-networking/service/#custom-endpointslices";
    Loc021 = "LOC021", Warning,
        "The detected data plane and version have a known divergence from kube-proxy this Service's policy meets",
        "the catalogue entry's advice: upgrade the data plane to the release that fixes it, change the setting it names, or apply its mitigation",
        "https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-policies";
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RuleId {
    type Err = ParseError;

    /// Parses `LOC001` (case-insensitive, surrounding spaces ignored).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        RuleId::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| ParseError::Rule(s.to_string()))
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
