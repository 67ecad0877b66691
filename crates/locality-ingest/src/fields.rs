//! The top-level fields of a known kind, decoded into wire types ([`FieldSeed`]), held
//! while the object is read ([`Parts`]), and built into the model's object at its end.

use locality_model::objects as m;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer};

use crate::ctx::Sink;
use crate::kind::{Field, Kind};
use crate::wire::{
    self, AddressTypeW, EndpointPortW, EndpointSubsetW, EndpointW, EndpointsSeed, NodeSpecW, NodeStatusW,
    PodSpecW, PodStatusW, ServiceSpecW, ServiceStatusW, WorkloadSpecW,
};

/// A decoded top-level field (transient: moved once into [`Parts`]).
#[allow(clippy::large_enum_variant)]
pub(crate) enum FieldValue {
    NodeSpec(Option<wire::M<NodeSpecW>>),
    NodeStatus(Option<wire::M<NodeStatusW>>),
    PodSpec(Option<wire::M<PodSpecW>>),
    PodStatus(Option<wire::M<PodStatusW>>),
    ServiceSpec(Option<wire::M<ServiceSpecW>>),
    ServiceStatus(Option<wire::M<ServiceStatusW>>),
    AddressType(Option<AddressTypeW>),
    Endpoints(Vec<EndpointW>),
    Ports(Vec<wire::M<EndpointPortW>>),
    Subsets(Vec<wire::M<EndpointSubsetW>>),
    WorkloadSpec(Option<wire::M<WorkloadSpecW>>),
    PdbSpec(Option<wire::M<wire::PdbSpecW>>),
}

/// Decodes one top-level field of a known kind.
#[derive(Clone, Copy)]
pub(crate) struct FieldSeed {
    pub kind: Kind,
    pub field: Field,
    pub addr: Option<AddressTypeW>,
}

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = FieldValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FieldValue, D::Error> {
        Ok(match (self.kind, self.field) {
            (Kind::Node, Field::Spec) => FieldValue::NodeSpec(Deserialize::deserialize(d)?),
            (Kind::Node, _) => FieldValue::NodeStatus(Deserialize::deserialize(d)?),
            (Kind::Pod, Field::Spec) => FieldValue::PodSpec(Deserialize::deserialize(d)?),
            (Kind::Pod, _) => FieldValue::PodStatus(Deserialize::deserialize(d)?),
            (Kind::Service, Field::Spec) => FieldValue::ServiceSpec(Deserialize::deserialize(d)?),
            (Kind::Service, _) => FieldValue::ServiceStatus(Deserialize::deserialize(d)?),
            (Kind::EndpointSlice, Field::AddressType) => {
                FieldValue::AddressType(Deserialize::deserialize(d)?)
            }
            (Kind::EndpointSlice, Field::Endpoints) => {
                FieldValue::Endpoints(EndpointsSeed { addr: self.addr }.deserialize(d)?)
            }
            (Kind::EndpointSlice, _) => {
                FieldValue::Ports(wire::nullable::<D, Vec<wire::M<EndpointPortW>>>(d)?)
            }
            (Kind::Endpoints, _) => {
                FieldValue::Subsets(wire::nullable::<D, Vec<wire::M<EndpointSubsetW>>>(d)?)
            }
            (Kind::PodDisruptionBudget, _) => FieldValue::PdbSpec(Deserialize::deserialize(d)?),
            _ => FieldValue::WorkloadSpec(Deserialize::deserialize(d)?),
        })
    }
}

/// The parts of an object read so far.
#[derive(Default)]
pub(crate) struct Parts {
    node_spec: Option<wire::NodeSpecW>,
    node_status: Option<wire::NodeStatusW>,
    pod_spec: Option<wire::PodSpecW>,
    pod_status: Option<wire::PodStatusW>,
    svc_spec: Option<wire::ServiceSpecW>,
    svc_status: Option<wire::ServiceStatusW>,
    pub addr: Option<AddressTypeW>,
    /// True when `endpoints` were read before `addressType` was known.
    endpoints_unchecked: bool,
    endpoints: Vec<EndpointW>,
    ports: Vec<wire::M<EndpointPortW>>,
    subsets: Vec<wire::M<EndpointSubsetW>>,
    wl_spec: Option<wire::WorkloadSpecW>,
    pdb_spec: Option<wire::PdbSpecW>,
}

impl Parts {
    pub(crate) fn store(&mut self, v: FieldValue) {
        match v {
            FieldValue::NodeSpec(x) => self.node_spec = x.map(|m| m.0),
            FieldValue::NodeStatus(x) => self.node_status = x.map(|m| m.0),
            FieldValue::PodSpec(x) => self.pod_spec = x.map(|m| m.0),
            FieldValue::PodStatus(x) => self.pod_status = x.map(|m| m.0),
            FieldValue::ServiceSpec(x) => self.svc_spec = x.map(|m| m.0),
            FieldValue::ServiceStatus(x) => self.svc_status = x.map(|m| m.0),
            FieldValue::AddressType(x) => self.addr = x,
            FieldValue::Endpoints(x) => {
                self.endpoints_unchecked = self.addr.is_none();
                self.endpoints = x;
            }
            FieldValue::Ports(x) => self.ports = x,
            FieldValue::Subsets(x) => self.subsets = x,
            FieldValue::WorkloadSpec(x) => self.wl_spec = x.map(|m| m.0),
            FieldValue::PdbSpec(x) => self.pdb_spec = x.map(|m| m.0),
        }
    }
}

impl Parts {
    /// Builds the object of `kind` from these parts and `meta` into `sink`; `Err`: the
    /// field path and message of what is missing or invalid.
    pub(crate) fn build(
        self,
        kind: Kind,
        meta: m::ObjectMeta,
        sink: &mut Sink,
    ) -> Result<(), (&'static str, String)> {
        match kind {
            Kind::Node => {
                let mut warnings = Vec::new();
                let node =
                    wire::build_node(meta, self.node_spec, self.node_status, &mut |w| warnings.push(w));
                sink.warnings.extend(warnings);
                sink.state.nodes.push(node);
            }
            Kind::Pod => sink
                .state
                .pods
                .push(wire::build_pod(meta, self.pod_spec, self.pod_status)),
            Kind::Service => {
                sink.state
                    .services
                    .push(wire::build_service(meta, self.svc_spec, self.svc_status));
            }
            Kind::EndpointSlice => {
                let Some(addr) = self.addr else {
                    return Err(("addressType", "missing field `addressType`".to_owned()));
                };
                let endpoints = if self.endpoints_unchecked || addr == AddressTypeW::FQDN {
                    wire::check_endpoint_addresses(addr, self.endpoints).map_err(|msg| ("", msg))?
                } else {
                    self.endpoints
                        .into_iter()
                        .map(|mut e| {
                            e.endpoint.addresses = e
                                .addresses
                                .into_iter()
                                .filter_map(|a| match a {
                                    wire::AddrW::Ip(ip) => Some(ip),
                                    wire::AddrW::Text(_) => None,
                                })
                                .collect();
                            e.endpoint
                        })
                        .collect()
                };
                sink.state.endpoint_slices.push(m::EndpointSlice {
                    meta,
                    address_type: addr.into(),
                    endpoints,
                    ports: self.ports.into_iter().map(|p| p.0.into_model()).collect(),
                });
            }
            Kind::Endpoints => sink
                .state
                .endpoints
                .push(wire::build_endpoints(meta, self.subsets)),
            Kind::Workload(wk) => sink
                .state
                .workloads
                .push(wire::build_workload(wk, meta, self.wl_spec)),
            Kind::Namespace => sink.state.namespaces.push(m::Namespace { meta }),
            Kind::PodDisruptionBudget => sink
                .state
                .pod_disruption_budgets
                .push(wire::build_pod_disruption_budget(meta, self.pdb_spec)),
            Kind::List | Kind::Other => {}
        }
        Ok(())
    }
}
