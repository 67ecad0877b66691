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

use locality_model::endpointslice::mirroring::ANNOTATION_LEADER_ELECTION;
use locality_model::objects::{ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE};

mod endpoints;
mod meta;
mod node;
mod pdb;
mod pod;
mod service;
mod slice;
mod workload;

pub(crate) use endpoints::*;
pub(crate) use meta::*;
pub(crate) use node::*;
pub(crate) use pdb::*;
pub(crate) use pod::*;
pub(crate) use service::*;
pub(crate) use slice::*;
pub(crate) use workload::*;

/// The annotations ingest keeps (all others are skipped unread to save memory): the
/// `Auto` topology mode and its deprecated predecessor, which the model reads, the
/// leader-election record, which keeps an Endpoints object from being mirrored, and the
/// audit's suppressions (`locality.dev/ignore` and its reason).
pub const KEPT_ANNOTATIONS: &[&str] = &[
    ANNOTATION_TOPOLOGY_MODE,
    ANNOTATION_TOPOLOGY_AWARE_HINTS,
    ANNOTATION_LEADER_ELECTION,
    locality_model::objects::ANNOTATION_LOCALITY_IGNORE,
    locality_model::objects::ANNOTATION_LOCALITY_IGNORE_REASON,
];

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

/// A label value (`names::label_value`) that may be `null`; `null` and `""` become `None`:
/// zones (`zone`, `hints.forZones[].name`).
pub(crate) fn zone_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let z = opt_nonempty(d)?;
    if let Some(z) = &z {
        crate::names::label_value(z).map_err(de::Error::custom)?;
    }
    Ok(z)
}

/// A Node name (`names::dns1123_subdomain`, upstream `ValidateNodeName`) that may be
/// `null`; `null` and `""` become `None`: `spec.nodeName`, an endpoint's `nodeName`.
pub(crate) fn node_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let n = opt_nonempty(d)?;
    if let Some(n) = &n {
        crate::names::dns1123_subdomain(n).map_err(de::Error::custom)?;
    }
    Ok(n)
}

/// [`zone_name`] as a value type, for visitors that read fields one by one.
pub(crate) struct ZoneW(pub Option<String>);

impl<'de> Deserialize<'de> for ZoneW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        zone_name(d).map(ZoneW)
    }
}

/// [`node_name`] as a value type, for visitors that read fields one by one.
pub(crate) struct NodeNameW(pub Option<String>);

impl<'de> Deserialize<'de> for NodeNameW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        node_name(d).map(NodeNameW)
    }
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
    let labels = nullable::<D, m::Labels>(d)?;
    // `ValidateLabels` (apimachinery's metav1 validation): every value a label value; the
    // zone labels then cannot carry text a report would have to escape.
    for (key, value) in labels.iter() {
        crate::names::label_value(value)
            .map_err(|e| de::Error::custom(format_args!("label {key:?}: {e}")))?;
    }
    Ok(labels)
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

/// `status.conditions`, reduced while read to the last `Ready` condition's status:
/// `Some(true)` for `"True"`, `Some(false)` for any other status, `None` when absent
/// (`null` and a missing list alike). Each condition is checked as a [`ConditionW`];
/// nothing is kept of the others.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ReadyW(pub Option<bool>);

impl<'de> Deserialize<'de> for ReadyW {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Conditions(Option<bool>);
        impl<'de> Deserialize<'de> for Conditions {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Conditions;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a sequence")
                    }
                    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Conditions, A::Error> {
                        let mut ready = None;
                        while let Some(M(c)) = seq.next_element::<M<ConditionW<'de>>>()? {
                            if c.type_ == "Ready" {
                                ready = Some(c.status.as_deref() == Some("True"));
                            }
                        }
                        Ok(Conditions(ready))
                    }
                }
                d.deserialize_seq(V)
            }
        }
        Ok(ReadyW(Option::<Conditions>::deserialize(d)?.and_then(|c| c.0)))
    }
}
