//! Lean wire types: the parts of Kubernetes objects the model reads, nothing else.
//!
//! Every struct here derives `Deserialize` with owned (or `Cow`) fields for exactly the
//! fields the model uses; serde skips all other keys with `IgnoredAny`, so bulky parts
//! of real dumps (`managedFields`, `containerStatuses`, volumes, env…) cost a scan and
//! nothing more. Values are validated *while* they are read (IP addresses, port ranges,
//! enumerations), so an error carries the exact position of the offending value.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use locality_model::objects as m;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::KEPT_ANNOTATIONS;

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

/// `null` (or absent, with `#[serde(default)]`) becomes `T::default()`.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A string that may be `null`; `null` and `""` both become `None`.
pub(crate) fn opt_nonempty<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|s| !s.is_empty()))
}

/// A string borrowed from the input when it has no escapes (JSON), else owned. Reads
/// exactly what `String` reads, with the same errors.
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Str<'de>, E> {
                match std::str::from_utf8(v) {
                    Ok(s) => Ok(Str(Cow::Owned(s.to_owned()))),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(v), &self)),
                }
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Str<'de>, E> {
                match String::from_utf8(v) {
                    Ok(s) => Ok(Str(Cow::Owned(s))),
                    Err(e) => Err(E::invalid_value(de::Unexpected::Bytes(&e.into_bytes()), &self)),
                }
            }
        }
        d.deserialize_string(V)
    }
}

/// A struct that must be written as a map: derived structs would also accept a sequence
/// (fields by position), which would silently read `[..]` as something else.
#[derive(Debug, Default, Clone)]
pub(crate) struct M<T>(pub T);

impl<T> std::ops::Deref for M<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for M<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = M<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<M<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(M)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

struct IpVisitor;

impl<'de> Visitor<'de> for IpVisitor {
    type Value = IpAddr;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an IP address string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<IpAddr, E> {
        parse_ip(v).map_err(E::custom)
    }
}

/// Parses an IP address as Kubernetes writes it (no zone, no brackets).
pub(crate) fn parse_ip(v: &str) -> Result<IpAddr, String> {
    v.parse::<IpAddr>()
        .map_err(|_| format!("invalid IP address {v:?}"))
}

/// An IP address, validated while reading.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ip(pub IpAddr);

impl<'de> Deserialize<'de> for Ip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(IpVisitor).map(Ip)
    }
}

/// A port number 1..=65535 (`min` = 0 admits 0 for `nodePort`/`hostPort`).
struct PortVisitor {
    min: u64,
}

impl<'de> Visitor<'de> for PortVisitor {
    type Value = u16;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a port number ({}-65535)", self.min)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u16, E> {
        if v < self.min || v > 65535 {
            return Err(E::custom(format_args!(
                "port number {v} out of range ({}-65535)",
                self.min
            )));
        }
        Ok(v as u16)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u16, E> {
        if v < 0 {
            return Err(E::custom(format_args!(
                "port number {v} out of range ({}-65535)",
                self.min
            )));
        }
        self.visit_u64(v as u64)
    }
}

/// A port number 1..=65535.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Port(pub u16);

impl<'de> Deserialize<'de> for Port {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PortVisitor { min: 1 }).map(Port)
    }
}

/// A port number 0..=65535 where 0 means "none" (`nodePort`, `hostPort`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Port0(pub u16);

impl<'de> Deserialize<'de> for Port0 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PortVisitor { min: 0 }).map(Port0)
    }
}

/// `TCP`, `UDP`, `SCTP`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[allow(clippy::upper_case_acronyms)]
pub(crate) enum ProtocolW {
    TCP,
    UDP,
    SCTP,
}

impl From<ProtocolW> for m::Protocol {
    fn from(p: ProtocolW) -> Self {
        match p {
            ProtocolW::TCP => m::Protocol::TCP,
            ProtocolW::UDP => m::Protocol::UDP,
            ProtocolW::SCTP => m::Protocol::SCTP,
        }
    }
}

fn protocol_or_tcp(p: Option<ProtocolW>) -> m::Protocol {
    p.map(Into::into).unwrap_or_default()
}

/// A non-negative count (`replicas`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Count(pub u32);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-negative integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                u32::try_from(v)
                    .map(Count)
                    .map_err(|_| E::custom(format_args!("{v} is too large")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                if v < 0 {
                    return Err(E::custom(format_args!("must not be negative, found {v}")));
                }
                self.visit_u64(v as u64)
            }
        }
        d.deserialize_any(V)
    }
}

/// A signed integer (`int64` fields such as `tolerationSeconds`, where negative values are
/// valid); read with `deserialize_any` so JSON and YAML refuse a string or a fraction alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Int64(pub i64);

impl<'de> Deserialize<'de> for Int64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Int64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int64, E> {
                Ok(Int64(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int64, E> {
                i64::try_from(v)
                    .map(Int64)
                    .map_err(|_| E::custom(format_args!("{v} is too large")))
            }
        }
        d.deserialize_any(V)
    }
}

/// `status.addresses`, reduced to the InternalIP addresses (validated).
fn internal_ips<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<IpAddr>, D::Error> {
    let all: Vec<M<NodeAddressW<'de>>> = nullable(d)?;
    let mut out = Vec::new();
    for (i, a) in all.iter().enumerate() {
        if a.type_ == "InternalIP" {
            out.push(
                parse_ip(&a.address).map_err(|e| de::Error::custom(format_args!("[{i}].address: {e}")))?,
            );
        }
    }
    Ok(out)
}

/// `spec.clusterIPs`: `"None"` may only stand alone.
fn cluster_ips<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ClusterIpW>, D::Error> {
    let v: Vec<ClusterIpW> = nullable(d)?;
    if v.len() > 1 && v.iter().any(|c| matches!(c, ClusterIpW::None_)) {
        return Err(de::Error::custom("\"None\" must be the only entry of clusterIPs"));
    }
    Ok(v)
}

/// Reads a scalar (integer, optionally float, or string) as its text. One visitor serves
/// [`IntOrText`] and [`QuantityText`], which differ in what they call themselves and whether
/// a float is accepted.
struct ScalarText {
    expecting: &'static str,
    floats: bool,
}

impl<'de> Visitor<'de> for ScalarText {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        if self.floats {
            Ok(v.to_string())
        } else {
            Err(E::invalid_type(de::Unexpected::Float(v), &self))
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
}

/// An int-or-string kept as text (`maxSurge: 1` → `"1"`, `"25%"` → `"25%"`).
#[derive(Debug, Clone)]
pub(crate) struct IntOrText(pub String);

impl<'de> Deserialize<'de> for IntOrText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarText {
            expecting: "an integer or a string",
            floats: false,
        })
        .map(IntOrText)
    }
}

/// `targetPort`: a number 1..=65535 or a port name (a name must not be all digits: the
/// API server rejects `"8080"` as a name, so we do not read it as the number either).
#[derive(Debug, Clone)]
pub(crate) struct TargetPortW(pub m::TargetPort);

impl<'de> Deserialize<'de> for TargetPortW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TargetPortW;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a port number or a port name")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TargetPortW, E> {
                PortVisitor { min: 1 }
                    .visit_u64(v)
                    .map(|p| TargetPortW(m::TargetPort::Number(p)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TargetPortW, E> {
                PortVisitor { min: 1 }
                    .visit_i64(v)
                    .map(|p| TargetPortW(m::TargetPort::Number(p)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TargetPortW, E> {
                if v.is_empty() {
                    return Err(E::custom("empty targetPort name"));
                }
                if v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(E::custom(format_args!(
                        "targetPort {v:?} is a string of digits: write the number without quotes"
                    )));
                }
                Ok(TargetPortW(m::TargetPort::Name(v.to_owned())))
            }
        }
        d.deserialize_any(V)
    }
}

/// A resource quantity kept as text (`"2"`, `"1500m"`, or a YAML number `2`).
#[derive(Debug, Clone)]
pub(crate) struct QuantityText(pub String);

impl<'de> Deserialize<'de> for QuantityText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarText {
            expecting: "a resource quantity",
            floats: true,
        })
        .map(QuantityText)
    }
}

/// Labels: a map of string to string (`null` → empty).
pub(crate) fn labels<'de, D: Deserializer<'de>>(d: D) -> Result<m::Labels, D::Error> {
    nullable::<D, BTreeMap<String, String>>(d)
}

/// Annotations, keeping only [`KEPT_ANNOTATIONS`]; other values are skipped unread.
pub(crate) fn kept_annotations<'de, D: Deserializer<'de>>(d: D) -> Result<m::Labels, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = m::Labels;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map of annotations")
        }
        fn visit_unit<E: de::Error>(self) -> Result<m::Labels, E> {
            Ok(m::Labels::new())
        }
        fn visit_none<E: de::Error>(self) -> Result<m::Labels, E> {
            Ok(m::Labels::new())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<m::Labels, A::Error> {
            let mut out = m::Labels::new();
            while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
                if KEPT_ANNOTATIONS.contains(&key.as_ref()) {
                    let v: String = map.next_value()?;
                    out.insert(key.into_owned(), v);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }
    d.deserialize_map(V)
}

/// `status.conditions[]`, reduced to `type` and `status`.
#[derive(Deserialize)]
pub(crate) struct ConditionW<'a> {
    #[serde(rename = "type", borrow)]
    type_: Cow<'a, str>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
}

/// `status.conditions[type=Ready].status`: `Some(true)` for `"True"`, `Some(false)` for
/// any other status, `None` when absent.
fn ready_of(conds: &[M<ConditionW<'_>>]) -> Option<bool> {
    conds
        .iter()
        .rfind(|c| c.type_ == "Ready")
        .map(|c| c.status.as_deref() == Some("True"))
}

// ---------------------------------------------------------------------------------------
// metadata
// ---------------------------------------------------------------------------------------

/// `metadata` (name is checked by the caller, which knows whether the object needs one).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MetaW {
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    uid: String,
    #[serde(default, deserialize_with = "labels")]
    labels: m::Labels,
    #[serde(default, deserialize_with = "kept_annotations")]
    annotations: m::Labels,
    #[serde(default, deserialize_with = "nullable")]
    owner_references: Vec<M<OwnerRefW>>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    creation_timestamp: Option<String>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    deletion_timestamp: Option<String>,
}

impl MetaW {
    /// Namespace (may be empty).
    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }

    pub(crate) fn into_model(self, origin: m::Origin) -> m::ObjectMeta {
        m::ObjectMeta {
            name: self.name.unwrap_or_default(),
            namespace: self.namespace,
            uid: self.uid,
            labels: self.labels,
            annotations: self.annotations,
            owner_references: self
                .owner_references
                .into_iter()
                .map(|x| x.0.into_model())
                .collect(),
            creation_timestamp: self.creation_timestamp,
            deletion_timestamp: self.deletion_timestamp,
            origin,
            defaulted: Vec::new(),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnerRefW {
    #[serde(default, deserialize_with = "nullable")]
    kind: String,
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default, deserialize_with = "nullable")]
    uid: String,
    #[serde(default, deserialize_with = "nullable")]
    controller: bool,
}

impl OwnerRefW {
    fn into_model(self) -> m::OwnerReference {
        m::OwnerReference {
            kind: self.kind,
            name: self.name,
            uid: self.uid,
            controller: self.controller,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------------------

/// Node `spec`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeSpecW {
    #[serde(default, deserialize_with = "nullable")]
    taints: Vec<M<TaintW>>,
    #[serde(default, deserialize_with = "nullable")]
    unschedulable: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaintW {
    key: String,
    #[serde(default, deserialize_with = "nullable")]
    value: String,
    #[serde(default, deserialize_with = "nullable")]
    effect: String,
}

/// Node `status`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeStatusW<'a> {
    #[serde(default, borrow, deserialize_with = "nullable")]
    conditions: Vec<M<ConditionW<'a>>>,
    #[serde(default, deserialize_with = "nullable")]
    allocatable: M<AllocatableW>,
    #[serde(default, deserialize_with = "internal_ips")]
    addresses: Vec<IpAddr>,
    #[serde(default, deserialize_with = "nullable")]
    node_info: M<NodeInfoW>,
}

#[derive(Deserialize, Default)]
struct AllocatableW {
    #[serde(default)]
    cpu: Option<QuantityText>,
}

#[derive(Deserialize)]
struct NodeAddressW<'a> {
    #[serde(rename = "type", borrow)]
    type_: Cow<'a, str>,
    #[serde(borrow)]
    address: Cow<'a, str>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct NodeInfoW {
    #[serde(default, deserialize_with = "opt_nonempty")]
    kubelet_version: Option<String>,
}

/// Builds a Node; `warn` receives non-fatal problems (an unparsable CPU quantity).
pub(crate) fn build_node(
    meta: m::ObjectMeta,
    spec: Option<NodeSpecW>,
    status: Option<NodeStatusW<'_>>,
    warn: &mut dyn FnMut(String),
) -> m::Node {
    let spec = spec.unwrap_or_default();
    let status = status.unwrap_or_default();
    let internal_ips = status.addresses;
    let allocatable_cpu_millis = match &status.allocatable.cpu {
        None => None,
        Some(q) => {
            let v = crate::quantity::cpu_millis(&q.0);
            if v.is_none() {
                warn(format!(
                    "Node {}: status.allocatable.cpu {:?} is not a valid quantity; treated as unknown",
                    meta.name, q.0
                ));
            }
            v
        }
    };
    m::Node {
        ready: ready_of(&status.conditions),
        allocatable_cpu_millis,
        taints: spec
            .taints
            .into_iter()
            .map(|M(t)| m::Taint {
                key: t.key,
                value: t.value,
                effect: t.effect,
            })
            .collect(),
        unschedulable: spec.unschedulable,
        internal_ips,
        kubelet_version: status.node_info.0.kubelet_version,
        meta,
    }
}

// ---------------------------------------------------------------------------------------
// Pod spec (also workload templates)
// ---------------------------------------------------------------------------------------

/// The scheduling-relevant part of a pod spec.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodSpecW {
    #[serde(default, deserialize_with = "nullable")]
    node_name: String,
    #[serde(default, deserialize_with = "nullable")]
    host_network: bool,
    #[serde(default, deserialize_with = "nullable")]
    hostname: String,
    #[serde(default, deserialize_with = "nullable")]
    subdomain: String,
    #[serde(default, deserialize_with = "nullable")]
    containers: Vec<M<ContainerW>>,
    #[serde(default, deserialize_with = "nullable")]
    init_containers: Vec<M<ContainerW>>,
    #[serde(default, deserialize_with = "labels")]
    node_selector: m::Labels,
    #[serde(default, deserialize_with = "nullable")]
    tolerations: Vec<M<TolerationW>>,
    #[serde(default, deserialize_with = "nullable")]
    affinity: M<AffinityW>,
    #[serde(default)]
    termination_grace_period_seconds: Option<Int64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContainerW {
    #[serde(default, deserialize_with = "nullable")]
    ports: Vec<M<ContainerPortW>>,
    #[serde(default, deserialize_with = "nullable")]
    restart_policy: String,
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default, deserialize_with = "nullable")]
    image: String,
    #[serde(default, deserialize_with = "nullable")]
    env: Vec<M<EnvW>>,
    #[serde(default, deserialize_with = "nullable")]
    command: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    args: Vec<String>,
    #[serde(default)]
    readiness_probe: Option<M<crate::lifecycle::ProbeW>>,
    #[serde(default)]
    lifecycle: Option<M<crate::lifecycle::LifecycleW>>,
}

/// `env[]`: only literal values are kept (`valueFrom` is not resolved).
#[derive(Deserialize, Default)]
struct EnvW {
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default)]
    value: Option<String>,
}

impl ContainerW {
    /// What data-plane detection reads of a workload's container.
    fn facts(&self) -> m::ContainerFacts {
        m::ContainerFacts {
            name: self.name.clone(),
            image: self.image.clone(),
            env: self
                .env
                .iter()
                .filter_map(|M(e)| e.value.clone().map(|v| (e.name.clone(), v)))
                .collect(),
            args: self.command.iter().chain(&self.args).cloned().collect(),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContainerPortW {
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    container_port: Port,
    #[serde(default)]
    protocol: Option<ProtocolW>,
    #[serde(default)]
    host_port: Option<Port0>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TolerationW {
    #[serde(default, deserialize_with = "nullable")]
    key: String,
    #[serde(default, deserialize_with = "nullable")]
    operator: String,
    #[serde(default, deserialize_with = "nullable")]
    value: String,
    #[serde(default, deserialize_with = "nullable")]
    effect: String,
    /// An `int64`, negative admitted as upstream does; `null` is unset.
    #[serde(default)]
    toleration_seconds: Option<Int64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AffinityW {
    #[serde(default, deserialize_with = "nullable")]
    node_affinity: M<NodeAffinityW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct NodeAffinityW {
    #[serde(default, deserialize_with = "nullable")]
    required_during_scheduling_ignored_during_execution: M<NodeSelectorW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct NodeSelectorW {
    #[serde(default, deserialize_with = "nullable")]
    node_selector_terms: Vec<M<NodeSelectorTermW>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeSelectorTermW {
    #[serde(default, deserialize_with = "nullable")]
    match_expressions: Vec<M<RequirementW>>,
    #[serde(default, deserialize_with = "nullable")]
    match_fields: Vec<M<RequirementW>>,
}

#[derive(Deserialize)]
struct RequirementW {
    key: String,
    operator: String,
    #[serde(default, deserialize_with = "nullable")]
    values: Vec<String>,
}

impl RequirementW {
    fn into_model(self) -> m::SelectorRequirement {
        m::SelectorRequirement {
            key: self.key,
            operator: self.operator,
            values: self.values,
        }
    }
}

impl PodSpecW {
    pub(crate) fn into_model(self) -> m::PodSpec {
        // Named targetPorts resolve against app containers, then sidecars (init containers
        // with restartPolicy Always), as upstream `podutil.FindPort` does.
        let sidecars = self
            .init_containers
            .into_iter()
            .filter(|c| c.restart_policy == "Always");
        let mut lifecycle = m::PodLifecycle {
            termination_grace_period_seconds: self.termination_grace_period_seconds.map(|v| v.0),
            ..m::PodLifecycle::default()
        };
        let mut ports = Vec::new();
        for M(c) in self.containers.into_iter().chain(sidecars) {
            if lifecycle.readiness_probe.is_none() {
                lifecycle.readiness_probe = c.readiness_probe.map(|M(p)| p.into_model());
            }
            let pre_stop = c.lifecycle.and_then(|M(l)| l.pre_stop());
            lifecycle.pre_stop = crate::lifecycle::longer(lifecycle.pre_stop.take(), pre_stop);
            ports.extend(c.ports.into_iter().map(|M(p)| m::ContainerPort {
                name: p.name,
                container_port: p.container_port.0,
                protocol: protocol_or_tcp(p.protocol),
                host_port: p.host_port.map(|h| h.0).filter(|h| *h != 0),
            }));
        }
        m::PodSpec {
            node_name: self.node_name,
            host_network: self.host_network,
            hostname: self.hostname,
            subdomain: self.subdomain,
            ports,
            node_selector: self.node_selector,
            tolerations: self
                .tolerations
                .into_iter()
                .map(|M(t)| m::Toleration {
                    key: t.key,
                    operator: t.operator,
                    value: t.value,
                    effect: t.effect,
                    toleration_seconds: t.toleration_seconds.map(|s| s.0),
                })
                .collect(),
            required_node_affinity: self
                .affinity
                .0
                .node_affinity
                .0
                .required_during_scheduling_ignored_during_execution
                .0
                .node_selector_terms
                .into_iter()
                .map(|M(t)| m::NodeSelectorTerm {
                    match_expressions: t
                        .match_expressions
                        .into_iter()
                        .map(|x| x.0.into_model())
                        .collect(),
                    match_fields: t.match_fields.into_iter().map(|x| x.0.into_model()).collect(),
                })
                .collect(),
            lifecycle,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Pod
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, Clone, Copy)]
enum PhaseW {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

/// Pod `status`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodStatusW<'a> {
    #[serde(default)]
    phase: Option<PhaseW>,
    #[serde(default, borrow, deserialize_with = "nullable")]
    conditions: Vec<M<ConditionW<'a>>>,
    #[serde(default, rename = "podIP")]
    pod_ip: Option<OptIp>,
    #[serde(default, rename = "podIPs", deserialize_with = "nullable")]
    pod_ips: Vec<M<PodIpW>>,
}

/// An IP address where `""` means absent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptIp(pub Option<IpAddr>);

impl<'de> Deserialize<'de> for OptIp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OptIp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an IP address string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OptIp, E> {
                if v.is_empty() {
                    return Ok(OptIp(None));
                }
                parse_ip(v).map(|ip| OptIp(Some(ip))).map_err(E::custom)
            }
            fn visit_unit<E: de::Error>(self) -> Result<OptIp, E> {
                Ok(OptIp(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<OptIp, E> {
                Ok(OptIp(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct PodIpW {
    ip: Ip,
}

pub(crate) fn build_pod(
    meta: m::ObjectMeta,
    spec: Option<PodSpecW>,
    status: Option<PodStatusW<'_>>,
) -> m::Pod {
    let status = status.unwrap_or_default();
    let pod_ips: Vec<IpAddr> = if status.pod_ips.is_empty() {
        status.pod_ip.and_then(|p| p.0).into_iter().collect()
    } else {
        status.pod_ips.iter().map(|p| p.ip.0).collect()
    };
    let phase = match status.phase {
        None | Some(PhaseW::Unknown) => m::PodPhase::Unknown,
        Some(PhaseW::Pending) => m::PodPhase::Pending,
        Some(PhaseW::Running) => m::PodPhase::Running,
        Some(PhaseW::Succeeded) => m::PodPhase::Succeeded,
        Some(PhaseW::Failed) => m::PodPhase::Failed,
    };
    m::Pod {
        meta,
        spec: spec.map(PodSpecW::into_model).unwrap_or_default(),
        phase,
        ready: ready_of(&status.conditions) == Some(true),
        pod_ips,
    }
}

// ---------------------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, Clone, Copy)]
enum ServiceTypeW {
    ClusterIP,
    NodePort,
    LoadBalancer,
    ExternalName,
}

#[derive(Deserialize, Clone, Copy)]
enum PolicyW {
    Cluster,
    Local,
}

impl From<PolicyW> for m::TrafficPolicy {
    fn from(p: PolicyW) -> Self {
        match p {
            PolicyW::Cluster => m::TrafficPolicy::Cluster,
            PolicyW::Local => m::TrafficPolicy::Local,
        }
    }
}

#[derive(Deserialize, Clone, Copy)]
#[allow(clippy::upper_case_acronyms)]
enum FamilyW {
    IPv4,
    IPv6,
}

/// `spec.clusterIP`: an IP, `"None"` (headless) or `""` (unset).
#[derive(Debug, Clone, Copy)]
enum ClusterIpW {
    None_,
    Ip(IpAddr),
}

impl<'de> Deserialize<'de> for ClusterIpW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<ClusterIpW>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an IP address or \"None\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "" => Ok(None),
                    "None" => Ok(Some(ClusterIpW::None_)),
                    _ => parse_ip(v).map(|ip| Some(ClusterIpW::Ip(ip))).map_err(E::custom),
                }
            }
        }
        // `""` cannot be represented here; callers use `Option<OptClusterIp>`.
        d.deserialize_str(V)?
            .ok_or_else(|| de::Error::custom("empty cluster IP"))
    }
}

/// `spec.clusterIP` that may be `""` or `null`.
#[derive(Debug, Clone, Copy, Default)]
struct OptClusterIp(Option<ClusterIpW>);

impl<'de> Deserialize<'de> for OptClusterIp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OptClusterIp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an IP address or \"None\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "" => Ok(OptClusterIp(None)),
                    "None" => Ok(OptClusterIp(Some(ClusterIpW::None_))),
                    _ => parse_ip(v)
                        .map(|ip| OptClusterIp(Some(ClusterIpW::Ip(ip))))
                        .map_err(E::custom),
                }
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(OptClusterIp(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(OptClusterIp(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Service `spec`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServiceSpecW {
    #[serde(default, rename = "type")]
    type_: Option<ServiceTypeW>,
    #[serde(default)]
    selector: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "nullable")]
    ports: Vec<M<ServicePortW>>,
    #[serde(default, rename = "clusterIP")]
    cluster_ip: OptClusterIp,
    #[serde(default, rename = "clusterIPs", deserialize_with = "cluster_ips")]
    cluster_ips: Vec<ClusterIpW>,
    #[serde(default, deserialize_with = "nullable")]
    ip_families: Vec<FamilyW>,
    #[serde(default, rename = "externalIPs", deserialize_with = "nullable")]
    external_ips: Vec<Ip>,
    #[serde(default)]
    internal_traffic_policy: Option<PolicyW>,
    #[serde(default)]
    external_traffic_policy: Option<PolicyW>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    traffic_distribution: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    publish_not_ready_addresses: bool,
    #[serde(default, deserialize_with = "nullable")]
    load_balancer_source_ranges: Vec<String>,
    #[serde(default)]
    allocate_load_balancer_node_ports: Option<bool>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    session_affinity: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    session_affinity_config: M<SessionAffinityConfigW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SessionAffinityConfigW {
    #[serde(default, rename = "clientIP", deserialize_with = "nullable")]
    client_ip: M<ClientIpConfigW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ClientIpConfigW {
    /// An `int32` (validated to 1..=86400 upstream); `null` is unset.
    #[serde(default)]
    timeout_seconds: Option<Int64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServicePortW {
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default)]
    protocol: Option<ProtocolW>,
    port: Port,
    #[serde(default)]
    target_port: Option<TargetPortW>,
    #[serde(default)]
    node_port: Option<Port0>,
}

/// Service `status`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServiceStatusW {
    #[serde(default, deserialize_with = "nullable")]
    load_balancer: M<LoadBalancerStatusW>,
}

#[derive(Deserialize, Default)]
struct LoadBalancerStatusW {
    #[serde(default, deserialize_with = "nullable")]
    ingress: Vec<M<IngressW>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IngressW {
    #[serde(default)]
    ip: Option<OptIp>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    hostname: Option<String>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    ip_mode: Option<String>,
}

pub(crate) fn build_service(
    mut meta: m::ObjectMeta,
    spec: Option<ServiceSpecW>,
    status: Option<ServiceStatusW>,
) -> m::Service {
    let spec = spec.unwrap_or_default();
    let status = status.unwrap_or_default();
    // clusterIPs wins over clusterIP (the API server keeps clusterIPs[0] == clusterIP).
    let ips: Vec<ClusterIpW> = if spec.cluster_ips.is_empty() {
        spec.cluster_ip.0.into_iter().collect()
    } else {
        spec.cluster_ips
    };
    let headless = ips.iter().any(|c| matches!(c, ClusterIpW::None_));
    let cluster_ips = ips
        .into_iter()
        .filter_map(|c| match c {
            ClusterIpW::Ip(ip) => Some(ip),
            ClusterIpW::None_ => None,
        })
        .collect();
    // `SetDefaults_Service` for what the model's types cannot leave unset (the rest is
    // `locality_model::admission`), recorded the same way.
    use locality_model::admission::record;
    use locality_model::objects::DefaultedBy::Defaulting;
    if spec.type_.is_none() {
        record(&mut meta, "spec.type", "ClusterIP", Defaulting);
    }
    for (i, M(p)) in spec.ports.iter().enumerate() {
        if p.protocol.is_none() {
            record(&mut meta, format!("spec.ports[{i}].protocol"), "TCP", Defaulting);
        }
        if p.target_port.is_none() {
            record(
                &mut meta,
                format!("spec.ports[{i}].targetPort"),
                p.port.0.to_string(),
                Defaulting,
            );
        }
    }
    let ports = spec
        .ports
        .into_iter()
        .map(|M(p)| m::ServicePort {
            name: p.name,
            protocol: protocol_or_tcp(p.protocol),
            port: p.port.0,
            target_port: p
                .target_port
                .map(|t| t.0)
                .unwrap_or(m::TargetPort::Number(p.port.0)),
            node_port: p.node_port.map(|n| n.0).unwrap_or(0),
        })
        .collect();
    m::Service {
        meta,
        type_: match spec.type_ {
            None | Some(ServiceTypeW::ClusterIP) => m::ServiceType::ClusterIP,
            Some(ServiceTypeW::NodePort) => m::ServiceType::NodePort,
            Some(ServiceTypeW::LoadBalancer) => m::ServiceType::LoadBalancer,
            Some(ServiceTypeW::ExternalName) => m::ServiceType::ExternalName,
        },
        // An empty selector is stored as nil by the API server: selector-less.
        selector: spec.selector.filter(|s| !s.is_empty()),
        ports,
        cluster_ips,
        headless,
        ip_families: spec
            .ip_families
            .into_iter()
            .map(|f| match f {
                FamilyW::IPv4 => m::IpFamily::IPv4,
                FamilyW::IPv6 => m::IpFamily::IPv6,
            })
            .collect(),
        external_ips: spec.external_ips.into_iter().map(|i| i.0).collect(),
        internal_traffic_policy: spec.internal_traffic_policy.map(Into::into),
        external_traffic_policy: spec.external_traffic_policy.map(Into::into),
        traffic_distribution: spec.traffic_distribution,
        publish_not_ready_addresses: spec.publish_not_ready_addresses,
        load_balancer_source_ranges: spec.load_balancer_source_ranges,
        allocate_load_balancer_node_ports: spec.allocate_load_balancer_node_ports,
        session_affinity: spec.session_affinity,
        // Out of the API's range (a file the API server would refuse): read as unset.
        session_affinity_timeout_seconds: spec
            .session_affinity_config
            .0
            .client_ip
            .0
            .timeout_seconds
            .and_then(|t| u32::try_from(t.0).ok()),
        load_balancer_ingress: status
            .load_balancer
            .0
            .ingress
            .into_iter()
            .map(|M(i)| m::LoadBalancerIngress {
                ip: i.ip.and_then(|o| o.0),
                hostname: i.hostname,
                ip_mode: i.ip_mode,
            })
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------
// EndpointSlice
// ---------------------------------------------------------------------------------------

/// `addressType`.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[allow(clippy::upper_case_acronyms)]
pub(crate) enum AddressTypeW {
    IPv4,
    IPv6,
    FQDN,
}

impl From<AddressTypeW> for m::AddressType {
    fn from(a: AddressTypeW) -> Self {
        match a {
            AddressTypeW::IPv4 => m::AddressType::IPv4,
            AddressTypeW::IPv6 => m::AddressType::IPv6,
            AddressTypeW::FQDN => m::AddressType::Fqdn,
        }
    }
}

/// One endpoint; addresses are validated against the slice's address type when it is
/// already known (the usual order), else later by [`check_endpoint_addresses`].
#[derive(Debug)]
pub(crate) struct EndpointW {
    /// Addresses as read: parsed IPs, or the raw text for FQDN slices / unknown type.
    pub addresses: Vec<AddrW>,
    pub endpoint: m::Endpoint,
}

/// An endpoint address as read.
#[derive(Debug)]
pub(crate) enum AddrW {
    Ip(IpAddr),
    Text(String),
}

/// Reads `endpoints` (a sequence, `null` = empty), validating addresses against `addr`.
pub(crate) struct EndpointsSeed {
    pub addr: Option<AddressTypeW>,
}

impl<'de> de::DeserializeSeed<'de> for EndpointsSeed {
    type Value = Vec<EndpointW>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EndpointsSeed {
    type Value = Vec<EndpointW>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of endpoints")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(e) = seq.next_element_seed(EndpointSeed { addr: self.addr })? {
            out.push(e);
        }
        Ok(out)
    }
}

struct EndpointSeed {
    addr: Option<AddressTypeW>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum EndpointKey {
    Addresses,
    Conditions,
    NodeName,
    Zone,
    Hints,
    TargetRef,
    Hostname,
    Topology,
    #[serde(other)]
    Other,
}

impl<'de> de::DeserializeSeed<'de> for EndpointSeed {
    type Value = EndpointW;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EndpointSeed {
    type Value = EndpointW;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an endpoint object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EndpointW, A::Error> {
        let mut addresses: Option<Vec<AddrW>> = None;
        let mut ep = m::Endpoint::default();
        let mut topology: BTreeMap<String, String> = BTreeMap::new();
        while let Some(k) = map.next_key::<EndpointKey>()? {
            match k {
                EndpointKey::Addresses => {
                    let a = map.next_value_seed(AddressesSeed { addr: self.addr })?;
                    if a.is_empty() {
                        return Err(de::Error::custom(
                            "endpoint has no addresses (at least one is required)",
                        ));
                    }
                    addresses = Some(a);
                }
                EndpointKey::Conditions => {
                    let c: Option<M<ConditionsW>> = map.next_value()?;
                    if let Some(c) = c {
                        ep.conditions = m::EndpointConditions {
                            ready: c.ready,
                            serving: c.serving,
                            terminating: c.terminating,
                        };
                    }
                }
                EndpointKey::NodeName => {
                    ep.node_name = map.next_value::<Option<String>>()?.filter(|s| !s.is_empty())
                }
                EndpointKey::Zone => ep.zone = map.next_value::<Option<String>>()?.filter(|s| !s.is_empty()),
                EndpointKey::Hints => {
                    let h: Option<M<HintsW>> = map.next_value()?;
                    ep.hints = h.map(|M(h)| m::EndpointHints {
                        for_zones: h.for_zones.into_iter().map(|z| z.0.name).collect(),
                        for_nodes: h.for_nodes.into_iter().map(|z| z.0.name).collect(),
                    });
                }
                EndpointKey::TargetRef => {
                    let t: Option<M<TargetRefW>> = map.next_value()?;
                    ep.target_ref = t.map(|M(t)| (t.kind, t.namespace, t.name));
                }
                EndpointKey::Hostname => {
                    ep.hostname = map.next_value::<Option<String>>()?.filter(|s| !s.is_empty())
                }
                EndpointKey::Topology => topology = map.next_value::<Option<_>>()?.unwrap_or_default(),
                EndpointKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(addresses) = addresses else {
            return Err(de::Error::custom(
                "endpoint has no `addresses` (at least one is required)",
            ));
        };
        // discovery.k8s.io/v1beta1 carried zone and node in `topology`.
        if ep.zone.is_none() {
            ep.zone = topology.remove(m::LABEL_ZONE).filter(|z| !z.is_empty());
        }
        if ep.node_name.is_none() {
            ep.node_name = topology
                .remove("kubernetes.io/hostname")
                .filter(|z| !z.is_empty());
        }
        Ok(EndpointW {
            addresses,
            endpoint: ep,
        })
    }
}

struct AddressesSeed {
    addr: Option<AddressTypeW>,
}

impl<'de> de::DeserializeSeed<'de> for AddressesSeed {
    type Value = Vec<AddrW>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AddressesSeed {
    type Value = Vec<AddrW>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of addresses")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Str(s)) = seq.next_element::<Str<'de>>()? {
            out.push(classify_address(self.addr, &s).map_err(de::Error::custom)?);
        }
        Ok(out)
    }
}

fn family_matches(fam: AddressTypeW, ip: IpAddr) -> bool {
    matches!(
        (fam, ip),
        (AddressTypeW::IPv4, IpAddr::V4(_)) | (AddressTypeW::IPv6, IpAddr::V6(_))
    )
}

/// Parses `s` as an address of family `fam` (IPv4 or IPv6).
fn family_ip(fam: AddressTypeW, s: &str) -> Result<IpAddr, String> {
    let ip = parse_ip(s)?;
    if !family_matches(fam, ip) {
        return Err(format!(
            "address {s:?} is not an {fam:?} address (addressType {fam:?})"
        ));
    }
    Ok(ip)
}

/// Checks an endpoint address against the slice's address type (when known).
pub(crate) fn classify_address(addr: Option<AddressTypeW>, s: &str) -> Result<AddrW, String> {
    match addr {
        Some(AddressTypeW::FQDN) => Ok(AddrW::Text(s.to_owned())),
        Some(fam) => family_ip(fam, s).map(AddrW::Ip),
        None => Ok(match s.parse::<IpAddr>() {
            Ok(ip) => AddrW::Ip(ip),
            Err(_) => AddrW::Text(s.to_owned()),
        }),
    }
}

#[derive(Deserialize)]
struct ConditionsW {
    #[serde(default)]
    ready: Option<bool>,
    #[serde(default)]
    serving: Option<bool>,
    #[serde(default)]
    terminating: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HintsW {
    #[serde(default, deserialize_with = "nullable")]
    for_zones: Vec<M<NameW>>,
    #[serde(default, deserialize_with = "nullable")]
    for_nodes: Vec<M<NameW>>,
}

#[derive(Deserialize)]
struct NameW {
    name: String,
}

#[derive(Deserialize)]
struct TargetRefW {
    #[serde(default, deserialize_with = "nullable")]
    kind: String,
    #[serde(default, deserialize_with = "nullable")]
    namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    name: String,
}

/// `ports[]` of an EndpointSlice.
#[derive(Deserialize)]
pub(crate) struct EndpointPortW {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    port: Option<Port>,
    #[serde(default)]
    protocol: Option<ProtocolW>,
}

impl EndpointPortW {
    pub(crate) fn into_model(self) -> m::EndpointPort {
        m::EndpointPort {
            name: self.name,
            port: self.port.map(|p| p.0),
            protocol: self.protocol.map(Into::into),
        }
    }
}

/// Validates addresses that were read before `addressType` was known; returns the IPs.
pub(crate) fn check_endpoint_addresses(
    addr: AddressTypeW,
    endpoints: Vec<EndpointW>,
) -> Result<Vec<m::Endpoint>, String> {
    let mut out = Vec::with_capacity(endpoints.len());
    for (i, mut e) in endpoints.into_iter().enumerate() {
        if addr != AddressTypeW::FQDN {
            e.endpoint.addresses.reserve(e.addresses.len());
            for (j, a) in e.addresses.into_iter().enumerate() {
                let checked = match a {
                    AddrW::Ip(ip) => family_matches(addr, ip).then_some(ip).ok_or_else(|| {
                        format!(
                            "address {:?} is not an {addr:?} address (addressType {addr:?})",
                            ip.to_string()
                        )
                    }),
                    AddrW::Text(t) => family_ip(addr, &t),
                };
                e.endpoint
                    .addresses
                    .push(checked.map_err(|m| format!("endpoints[{i}].addresses[{j}]: {m}"))?);
            }
        }
        // FQDN slices: addresses are host names, which kube-proxy ignores; not kept.
        out.push(e.endpoint);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Endpoints (core/v1)
// ---------------------------------------------------------------------------------------

/// One `subsets[]` entry of an Endpoints object.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointSubsetW {
    #[serde(default, deserialize_with = "nullable")]
    addresses: Vec<M<EndpointAddressW>>,
    #[serde(default, deserialize_with = "nullable")]
    not_ready_addresses: Vec<M<EndpointAddressW>>,
    #[serde(default, deserialize_with = "nullable")]
    ports: Vec<M<EndpointsPortW>>,
}

/// `addresses[]` / `notReadyAddresses[]`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EndpointAddressW {
    ip: EndpointsIp,
    #[serde(default, deserialize_with = "opt_nonempty")]
    hostname: Option<String>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    node_name: Option<String>,
    #[serde(default)]
    target_ref: Option<M<EndpointsTargetRefW>>,
}

/// `targetRef` of an Endpoints address (with `uid`, which tells addresses apart).
#[derive(Deserialize)]
struct EndpointsTargetRefW {
    #[serde(default, deserialize_with = "nullable")]
    kind: String,
    #[serde(default, deserialize_with = "nullable")]
    namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    #[serde(default, deserialize_with = "nullable")]
    uid: String,
}

/// An Endpoints address `ip`, kept as written: the API server's legacy IP validation
/// admits IPv4 octets with leading zeros (`010.0.0.1`), which the mirroring controller reads
/// sloppily (`netutils.ParseIPSloppy`, [`parse_ip_sloppy`](locality_model::endpointslice::mirroring::parse_ip_sloppy));
/// anything that is not an IP even so is refused here, where its position is known.
struct EndpointsIp(String);

impl<'de> Deserialize<'de> for EndpointsIp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Str(s) = Str::deserialize(d)?;
        if locality_model::endpointslice::mirroring::parse_ip_sloppy(&s).is_none() {
            return Err(de::Error::custom(format_args!("invalid IP address {s:?}")));
        }
        Ok(EndpointsIp(s.into_owned()))
    }
}

/// `ports[]` of a subset: `port` is required; `protocol` defaults to TCP (`SetDefaults_EndpointPort`
/// of core/v1, applied while reading as for Services).
#[derive(Deserialize)]
struct EndpointsPortW {
    #[serde(default, deserialize_with = "nullable")]
    name: String,
    port: Port,
    #[serde(default)]
    protocol: Option<ProtocolW>,
}

/// Builds an Endpoints object.
pub(crate) fn build_endpoints(meta: m::ObjectMeta, subsets: Vec<M<EndpointSubsetW>>) -> m::Endpoints {
    let address = |M(a): M<EndpointAddressW>| {
        let (target_ref, target_uid) = match a.target_ref {
            Some(M(t)) => (Some((t.kind, t.namespace, t.name)), t.uid),
            None => (None, String::new()),
        };
        m::EndpointAddress {
            ip: a.ip.0,
            hostname: a.hostname,
            node_name: a.node_name,
            target_ref,
            target_uid,
        }
    };
    m::Endpoints {
        meta,
        subsets: subsets
            .into_iter()
            .map(|M(s)| m::EndpointSubset {
                addresses: s.addresses.into_iter().map(address).collect(),
                not_ready_addresses: s.not_ready_addresses.into_iter().map(address).collect(),
                ports: s
                    .ports
                    .into_iter()
                    .map(|M(p)| m::EndpointsPort {
                        name: p.name,
                        port: p.port.0,
                        protocol: protocol_or_tcp(p.protocol),
                    })
                    .collect(),
            })
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------

/// `spec` of a DaemonSet, Deployment, ReplicaSet or StatefulSet.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkloadSpecW {
    #[serde(default)]
    replicas: Option<Count>,
    #[serde(default, deserialize_with = "nullable")]
    selector: M<LabelSelectorW>,
    #[serde(default, deserialize_with = "nullable")]
    template: M<TemplateW>,
    #[serde(default, deserialize_with = "nullable")]
    strategy: M<StrategyW>,
    #[serde(default, deserialize_with = "nullable")]
    update_strategy: M<StrategyW>,
}

/// A `metav1.LabelSelector`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LabelSelectorW {
    #[serde(default, deserialize_with = "labels")]
    match_labels: m::Labels,
    #[serde(default, deserialize_with = "nullable")]
    match_expressions: Vec<M<RequirementW>>,
}

#[derive(Deserialize, Default)]
struct TemplateW {
    #[serde(default, deserialize_with = "nullable")]
    metadata: M<TemplateMetaW>,
    #[serde(default, deserialize_with = "nullable")]
    spec: M<PodSpecW>,
}

#[derive(Deserialize, Default)]
struct TemplateMetaW {
    #[serde(default, deserialize_with = "labels")]
    labels: m::Labels,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct StrategyW {
    #[serde(default, rename = "type", deserialize_with = "opt_nonempty")]
    type_: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    rolling_update: M<RollingW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RollingW {
    #[serde(default)]
    max_surge: Option<IntOrText>,
    #[serde(default)]
    max_unavailable: Option<IntOrText>,
}

pub(crate) fn build_workload(
    kind: m::WorkloadKind,
    meta: m::ObjectMeta,
    spec: Option<WorkloadSpecW>,
) -> m::Workload {
    let spec = spec.unwrap_or_default();
    let M(selector) = spec.selector;
    let M(TemplateW {
        metadata: M(template_meta),
        spec: M(template_spec),
    }) = spec.template;
    // Deployments use `strategy`; DaemonSets and StatefulSets `updateStrategy`.
    let M(strategy) = if kind == m::WorkloadKind::Deployment {
        spec.strategy
    } else {
        spec.update_strategy
    };
    let M(rolling) = strategy.rolling_update;
    let containers = template_spec.containers.iter().map(|M(c)| c.facts()).collect();
    m::Workload {
        kind,
        meta,
        selector: m::LabelSelector {
            match_labels: selector.match_labels,
            match_expressions: selector
                .match_expressions
                .into_iter()
                .map(|x| x.0.into_model())
                .collect(),
        },
        template_labels: template_meta.labels,
        template: template_spec.into_model(),
        replicas: if kind == m::WorkloadKind::DaemonSet {
            None
        } else {
            Some(spec.replicas.map_or(1, |c| c.0))
        },
        max_surge: rolling.max_surge.map(|v| v.0),
        max_unavailable: rolling.max_unavailable.map(|v| v.0),
        update_strategy: strategy.type_,
        containers,
    }
}

// ---------------------------------------------------------------------------------------
// PodDisruptionBudgets
// ---------------------------------------------------------------------------------------

/// `spec` of a policy/v1 PodDisruptionBudget.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PdbSpecW {
    #[serde(default)]
    selector: Option<M<LabelSelectorW>>,
    #[serde(default)]
    min_available: Option<IntOrText>,
    #[serde(default)]
    max_unavailable: Option<IntOrText>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    unhealthy_pod_eviction_policy: Option<String>,
}

/// Builds a PodDisruptionBudget.
pub(crate) fn build_pod_disruption_budget(
    meta: m::ObjectMeta,
    spec: Option<PdbSpecW>,
) -> m::PodDisruptionBudget {
    let spec = spec.unwrap_or_default();
    m::PodDisruptionBudget {
        meta,
        selector: spec.selector.map(|M(s)| m::LabelSelector {
            match_labels: s.match_labels,
            match_expressions: s
                .match_expressions
                .into_iter()
                .map(|x| x.0.into_model())
                .collect(),
        }),
        min_available: spec.min_available.map(|v| v.0),
        max_unavailable: spec.max_unavailable.map(|v| v.0),
        unhealthy_pod_eviction_policy: spec.unhealthy_pod_eviction_policy,
    }
}
