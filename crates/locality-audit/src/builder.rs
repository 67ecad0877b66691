//! Building a finding: [`FindingBuilder`], the nodes picked for it ([`Picked`]) and the
//! phrases and references its text is made of.

use locality_model::matrix::PortEntry;
use locality_model::objects::{EndpointSlice, Service, Workload};

use crate::finding::{Finding, NodePods, ObjectRef, PortRef, SourceLocation};
use crate::rule::Severity;

/// Nodes picked for a finding: the listed ones, the total, and their pods.
pub(crate) struct Picked {
    pub nodes: Vec<NodePods>,
    pub count: usize,
    pub pods: usize,
}

/// Builds a [`Finding`].
pub(crate) struct FindingBuilder {
    pub f: Finding,
}

impl FindingBuilder {
    pub(crate) fn port(mut self, entry: &PortEntry<'_>) -> Self {
        self.f.port = Some(port_ref(entry));
        self.f.ip_family = Some(entry.info.family);
        self
    }
    pub(crate) fn severity(mut self, s: Severity) -> Self {
        self.f.severity = s;
        self
    }
    pub(crate) fn nodes(mut self, p: Picked) -> Self {
        self.f.nodes = p.nodes;
        self.f.node_count = p.count;
        self.f.pod_count = p.pods;
        self
    }
    pub(crate) fn workloads(mut self, w: &[&Workload]) -> Self {
        self.f
            .objects
            .extend(w.iter().map(|w| object(w.kind.as_str(), &w.meta)));
        self
    }
    pub(crate) fn slices(mut self, s: &[&EndpointSlice]) -> Self {
        self.f
            .objects
            .extend(s.iter().map(|s| object("EndpointSlice", &s.meta)));
        self
    }
    pub(crate) fn message(mut self, m: impl Into<String>) -> Self {
        self.f.message = m.into();
        self
    }
    pub(crate) fn fix(mut self, m: impl Into<String>) -> Self {
        self.f.fix = m.into();
        self
    }
    /// The root cause in a few words ([`Finding::cause`]).
    pub(crate) fn cause(mut self, c: impl Into<String>) -> Self {
        self.f.cause = Some(c.into());
        self
    }
}

/// An [`ObjectRef`] for an object's metadata.
pub(crate) fn object(kind: &str, meta: &locality_model::objects::ObjectMeta) -> ObjectRef {
    ObjectRef {
        kind: kind.to_string(),
        namespace: meta.namespace.clone(),
        name: meta.name.clone(),
        origin: SourceLocation::from_origin(&meta.origin),
    }
}

/// The [`PortRef`] of a port entry.
pub(crate) fn port_ref(entry: &PortEntry<'_>) -> PortRef {
    PortRef {
        name: entry.info.port.name.clone(),
        protocol: entry.info.port.protocol,
        port: entry.info.port.port,
    }
}

/// `port NAME NUMBER/PROTOCOL (FAMILY)` for messages.
pub(crate) fn port_text(entry: &PortEntry<'_>) -> String {
    let p = &entry.info.port;
    let name = if p.name.is_empty() {
        String::new()
    } else {
        format!("{} ", p.name)
    };
    format!(
        "port {name}{}/{} ({})",
        p.port,
        p.protocol.as_str(),
        entry.info.family.as_str()
    )
}

/// `ns/name`.
pub(crate) fn svc_name(svc: &Service) -> String {
    format!("{}/{}", svc.meta.namespace, svc.meta.name)
}

/// "1 node" / "3 nodes".
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Names of the listed nodes, at most 5, with "and N more".
pub(crate) fn name_list(p: &Picked) -> String {
    let shown: Vec<&str> = p.nodes.iter().take(5).map(|n| n.node.as_str()).collect();
    let mut s = shown.join(", ");
    if p.count > shown.len() {
        s.push_str(&format!(" and {} more", p.count - shown.len()));
    }
    s
}
