//! `RoutingMatrix` (`apiVersion: locality/v1`): the stable JSON/YAML form of the matrix
//! (docs/design.md §4.1, documented field by field in `docs/matrix-json.md`).
//!
//! The document is written one service port at a time so that a 5,000-node matrix never
//! sits in memory whole.

use std::io::{self, Write};

use locality_model::explain::SessionAffinity;
use locality_model::matrix::{DataPlane, Matrix, MatrixRoute, PortEntry};
use locality_model::objects::TrafficPolicy;
use locality_model::proxy::{MissingFacts, Route};
use serde::Serialize;

/// `apiVersion` of every locality document.
pub const API_VERSION: &str = "locality/v1";

/// The header of a `RoutingMatrix` (everything but `services`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatrixHeader {
    /// Always `locality/v1`.
    pub api_version: &'static str,
    /// Always `RoutingMatrix`.
    pub kind: &'static str,
    /// API server / controller manager version used (`1.35`).
    pub kubernetes_version: String,
    /// Default kube-proxy version used (nodes may override it).
    pub kube_proxy_version: String,
    /// Data plane.
    pub data_plane: DataPlaneDoc,
    /// What the report is a report of ([`crate::header`]); absent when built without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<crate::header::ReportHeader>,
}

/// `dataPlane`.
#[derive(Debug, Serialize)]
pub struct DataPlaneDoc {
    /// `kube-proxy`, `other` or `unknown`.
    pub kind: &'static str,
    /// `iptables`, `nftables`, `ipvs`, or null when unknown.
    pub mode: Option<&'static str>,
    /// The data plane's name for `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One `services[]` entry: a service port in one IP family.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePortDoc<'a> {
    /// Namespace.
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// The port, keyed by name, protocol and number.
    pub port: PortDoc<'a>,
    /// `IPv4` or `IPv6`.
    pub ip_family: &'static str,
    /// `spec.internalTrafficPolicy` as written (null when unset).
    pub internal_traffic_policy: Option<&'static str>,
    /// `spec.externalTrafficPolicy` as written (null when unset).
    pub external_traffic_policy: Option<&'static str>,
    /// `spec.trafficDistribution` as written (null when unset).
    pub traffic_distribution: Option<&'a str>,
    /// The topology annotation value (deprecated key first), null when unset.
    pub topology_mode: Option<&'a str>,
    /// `EndpointSlices`, `derived` or `mirrored`.
    pub endpoint_source: &'static str,
    /// Nodes, sorted by name.
    pub nodes: Vec<NodeDoc<'a>>,
}

/// `port`.
#[derive(Debug, Serialize)]
pub struct PortDoc<'a> {
    /// Port name (`""` when unnamed).
    pub name: &'a str,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: &'static str,
    /// Port number.
    pub port: u16,
}

/// `nodes[]`.
#[derive(Debug, Serialize)]
pub struct NodeDoc<'a> {
    /// Node name.
    pub node: &'a str,
    /// Zone label, null when absent.
    pub zone: Option<&'a str>,
    /// Routes in source order (pod, host, external), then destination order.
    pub routes: Vec<RouteDoc>,
}

/// `routes[]`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteDoc {
    /// `pod`, `host` or `external`.
    pub source: &'static str,
    /// `clusterIP`, `nodePort`, `loadBalancer` or `externalIP`.
    pub destination: &'static str,
    /// `deliver`, `drop`, `reject`, `not-proxied`, or `mode-dependent` (see `byMode`).
    pub verdict: &'static str,
    /// Sorted `IP:port` (`[v6]:port`); empty unless `deliver`.
    pub endpoints: Vec<String>,
    /// `none`, `PreferSameZone` or `PreferSameNode`.
    pub topology: &'static str,
    /// `servingTerminating` or null.
    pub fallback: Option<&'static str>,
    /// Source address masqueraded.
    pub masquerade: bool,
    /// Reason code.
    pub reason: &'static str,
    /// `upstream-test`, `source-read` or `inferred`.
    pub confidence: &'static str,
    /// What the verdict depends on that the input does not give (`kube-proxy-version`,
    /// `kube-version`, `proxy-mode`); present only when something is missing (the confidence
    /// is then `inferred`).
    #[serde(skip_serializing_if = "MissingFacts::is_empty")]
    pub missing_facts: MissingFacts,
    /// `sessionAffinity: ClientIP` on a delivered route: each client address sticks to one of
    /// `endpoints`; present only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_affinity: Option<SessionAffinity>,
    /// The `loadBalancerSourceRanges` the verdict holds for (clients elsewhere are dropped);
    /// present only then.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub source_ranges: Vec<String>,
    /// Present only when the proxy mode is unknown and the modes disagree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_mode: Option<ByModeDoc>,
}

/// Per-mode routes when the modes disagree.
#[derive(Debug, Serialize)]
pub struct ByModeDoc {
    /// iptables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptables: Option<Box<RouteDoc>>,
    /// nftables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nftables: Option<Box<RouteDoc>>,
    /// ipvs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipvs: Option<Box<RouteDoc>>,
}

fn policy(p: Option<TrafficPolicy>) -> Option<&'static str> {
    p.map(|p| match p {
        TrafficPolicy::Cluster => "Cluster",
        TrafficPolicy::Local => "Local",
    })
}

/// The header for a matrix.
pub fn header(m: &Matrix<'_>) -> MatrixHeader {
    let (mode, name) = match &m.config.data_plane {
        DataPlane::KubeProxy(mode) => (mode.map(|m| m.as_str()), None),
        DataPlane::Other(n) => (None, Some(n.clone())),
        DataPlane::Unknown => (None, None),
    };
    MatrixHeader {
        api_version: API_VERSION,
        kind: "RoutingMatrix",
        kubernetes_version: m.config.kube_version.to_string(),
        kube_proxy_version: m.config.kube_proxy_version.to_string(),
        data_plane: DataPlaneDoc {
            kind: m.config.data_plane.kind(),
            mode,
            name,
        },
        header: None,
    }
}

/// Converts a model route.
pub fn route_doc(entry: &PortEntry<'_>, r: &Route) -> RouteDoc {
    let mut endpoints: Vec<String> = r
        .endpoints
        .iter()
        .map(|i| entry.endpoints[*i].to_string())
        .collect();
    // Endpoint lists are sorted by address already; keep that order (numeric, not textual).
    endpoints.dedup();
    RouteDoc {
        source: r.source.as_str(),
        destination: r.destination.as_str(),
        verdict: r.verdict.as_str(),
        endpoints,
        topology: r.topology.as_str(),
        fallback: r.fallback.map(|_| "servingTerminating"),
        masquerade: r.masquerade,
        reason: r.reason.as_str(),
        confidence: r.confidence.as_str(),
        missing_facts: r.missing,
        session_affinity: r.session_affinity.map(SessionAffinity::client_ip),
        source_ranges: entry.source_ranges(r.source_ranges),
        by_mode: None,
    }
}

fn matrix_route_doc(entry: &PortEntry<'_>, r: &MatrixRoute) -> RouteDoc {
    let mut doc = route_doc(entry, &r.route);
    if let Some(by_mode) = &r.by_mode {
        let mut b = ByModeDoc {
            iptables: None,
            nftables: None,
            ipvs: None,
        };
        for (mode, route) in by_mode {
            let d = Some(Box::new(route_doc(entry, route)));
            match mode {
                locality_model::proxy::ProxyMode::Iptables => b.iptables = d,
                locality_model::proxy::ProxyMode::Nftables => b.nftables = d,
                locality_model::proxy::ProxyMode::Ipvs => b.ipvs = d,
            }
        }
        doc.verdict = "mode-dependent";
        doc.endpoints.clear();
        doc.by_mode = Some(b);
    }
    doc
}

/// The document entry of one port for the given nodes (indices into `m.nodes`, or all).
pub fn port_doc<'a>(m: &'a Matrix<'a>, port: usize, nodes: Option<&[usize]>) -> ServicePortDoc<'a> {
    let entry = &m.ports[port];
    let svc = entry.service;
    let nodes = m
        .port_routes(port, nodes)
        .into_iter()
        .map(|(i, routes)| {
            let n = &m.nodes[i];
            NodeDoc {
                node: &n.node.meta.name,
                zone: (!n.zone.is_empty()).then_some(n.zone),
                routes: routes.routes.iter().map(|r| matrix_route_doc(entry, r)).collect(),
            }
        })
        .collect();
    ServicePortDoc {
        namespace: &svc.meta.namespace,
        name: &svc.meta.name,
        port: PortDoc {
            name: &entry.info.port.name,
            protocol: entry.info.port.protocol.as_str(),
            port: entry.info.port.port,
        },
        ip_family: entry.info.family.as_str(),
        internal_traffic_policy: policy(svc.internal_traffic_policy),
        external_traffic_policy: policy(svc.external_traffic_policy),
        traffic_distribution: svc.traffic_distribution.as_deref(),
        topology_mode: entry.info.hints_annotation.as_deref(),
        endpoint_source: match entry.endpoint_source {
            locality_model::matrix::EndpointSource::EndpointSlices => "EndpointSlices",
            locality_model::matrix::EndpointSource::Derived => "derived",
            locality_model::matrix::EndpointSource::Mirrored => "mirrored",
        },
        nodes,
    }
}

/// Which ports and nodes to print.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Port indices (all when `None`).
    pub ports: Option<Vec<usize>>,
    /// Node indices (all when `None`).
    pub nodes: Option<Vec<usize>>,
}

impl Selection {
    /// The selected port indices.
    pub fn port_indices(&self, m: &Matrix<'_>) -> Vec<usize> {
        self.ports.clone().unwrap_or_else(|| (0..m.ports.len()).collect())
    }
}

/// Writes the matrix as pretty JSON, one service port at a time, with `report` as its
/// `header` field.
pub fn write_json(
    m: &Matrix<'_>,
    sel: &Selection,
    report: Option<&crate::header::ReportHeader>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut head = header(m);
    head.header = report.cloned();
    let mut head_text = crate::encode::json_pretty_string(&head)?;
    // Re-open the header object to append `services`.
    head_text.truncate(head_text.trim_end().len() - 1);
    let head_text = head_text.trim_end().to_string();
    write!(out, "{head_text},\n  \"services\": [")?;
    let mut first = true;
    for port in sel.port_indices(m) {
        let doc = port_doc(m, port, sel.nodes.as_deref());
        let text = crate::encode::json_pretty_string(&doc)?;
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.write_all(b"\n")?;
            }
            write!(out, "    {line}")?;
        }
    }
    if first {
        out.write_all(b"]\n}\n")?;
    } else {
        out.write_all(b"\n  ]\n}\n")?;
    }
    Ok(())
}

/// The whole document as one value (for YAML and tests).
#[derive(Debug, Serialize)]
pub struct RoutingMatrixDoc<'a> {
    /// Header fields.
    #[serde(flatten)]
    pub header: MatrixHeader,
    /// Service ports.
    pub services: Vec<ServicePortDoc<'a>>,
}

/// Builds the whole document in memory.
pub fn document<'a>(
    m: &'a Matrix<'a>,
    sel: &Selection,
    report: Option<&crate::header::ReportHeader>,
) -> RoutingMatrixDoc<'a> {
    let mut head = header(m);
    head.header = report.cloned();
    RoutingMatrixDoc {
        header: head,
        services: sel
            .port_indices(m)
            .into_iter()
            .map(|p| port_doc(m, p, sel.nodes.as_deref()))
            .collect(),
    }
}

/// Writes the matrix as YAML.
pub fn write_yaml(
    m: &Matrix<'_>,
    sel: &Selection,
    report: Option<&crate::header::ReportHeader>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let doc = document(m, sel, report);
    let text = crate::encode::yaml_string(&doc)?;
    out.write_all(text.as_bytes())
}
