//! `parse-baseline`: the reference points of the benchmark (see `bench/README.md`).
//!
//! - `--mode ignored FILE`: `std::fs::read` then `serde_json::from_slice::<IgnoredAny>`,
//!   the cost of reading and validating the bytes and nothing else (column (b)).
//! - `--mode k8s-openapi FILE`: the same bytes into full k8s-openapi types (column (d)).
//!   Single pass: each List item is deserialised by a map visitor that reads
//!   `apiVersion` and `kind` (kubectl prints keys sorted, so they come before
//!   `metadata`, `spec` and `status`) and then deserialises `metadata`, `spec` and
//!   `status` straight into the typed fields of that kind. An item whose `kind` comes
//!   later is buffered as a `serde_json::Value` and converted (slower, still correct).
//! - `--mode k8s-openapi-raw FILE`: the obvious two-pass design, for comparison: items as
//!   borrowed `&RawValue`, a pass to read `kind`, then `serde_json::from_str` into the type.
//! - `--mode sonic-ignored FILE`: as `ignored`, with the SIMD parser `sonic-rs` (its serde
//!   deserializer: `IgnoredAny` skips each item with its validating SIMD skip).
//! - `--mode simd-json-tape FILE`: `simd-json`, which parses in place: the bytes are read,
//!   copied into the mutable buffer it needs (as a caller that keeps the input must), and
//!   parsed into its tape (full validation, no values built).
//!
//! Each mode prints counts derived from the parsed data so the work cannot be optimised away.

use std::collections::BTreeMap;
use std::fmt;
use std::process::ExitCode;
use std::time::Instant;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// One typed object.
enum Object {
    Node(Box<Node>),
    Pod(Box<Pod>),
    Service(Box<Service>),
    Namespace(Box<Namespace>),
    EndpointSlice(Box<EndpointSlice>),
    DaemonSet(Box<DaemonSet>),
    Deployment(Box<Deployment>),
    ReplicaSet(Box<ReplicaSet>),
    StatefulSet(Box<StatefulSet>),
    Other(String),
}

#[derive(Default)]
struct Tally {
    kinds: BTreeMap<String, usize>,
    containers: usize,
    endpoints: usize,
    service_ports: usize,
    node_labels: usize,
    workload_names: usize,
}

impl Tally {
    fn add(&mut self, o: &Object) {
        let kind = match o {
            Object::Node(n) => {
                self.node_labels += n.metadata.labels.as_ref().map_or(0, |l| l.len());
                "Node"
            }
            Object::Pod(p) => {
                self.containers += p.spec.as_ref().map_or(0, |s| s.containers.len());
                "Pod"
            }
            Object::Service(s) => {
                self.service_ports += s.spec.as_ref().and_then(|s| s.ports.as_ref()).map_or(0, Vec::len);
                "Service"
            }
            Object::Namespace(n) => {
                self.workload_names += n.metadata.name.as_ref().map_or(0, String::len);
                "Namespace"
            }
            Object::EndpointSlice(e) => {
                self.endpoints += e.endpoints.len();
                "EndpointSlice"
            }
            Object::DaemonSet(d) => {
                self.workload_names += d.metadata.name.as_ref().map_or(0, String::len);
                "DaemonSet"
            }
            Object::Deployment(d) => {
                self.workload_names += d.metadata.name.as_ref().map_or(0, String::len);
                "Deployment"
            }
            Object::ReplicaSet(r) => {
                self.workload_names += r.metadata.name.as_ref().map_or(0, String::len);
                "ReplicaSet"
            }
            Object::StatefulSet(s) => {
                self.workload_names += s.metadata.name.as_ref().map_or(0, String::len);
                "StatefulSet"
            }
            Object::Other(k) => k.as_str(),
        };
        *self.kinds.entry(kind.to_string()).or_default() += 1;
    }

    fn print(&self, mode: &str, bytes: usize, secs: f64) {
        let items: usize = self.kinds.values().sum();
        let kinds: Vec<String> = self.kinds.iter().map(|(k, n)| format!("{k}={n}")).collect();
        println!(
            "parse-baseline: mode={mode} bytes={bytes} items={items} {} containers={} endpoints={} \
             service_ports={} node_labels={} name_bytes={} seconds={secs:.3}",
            kinds.join(" "),
            self.containers,
            self.endpoints,
            self.service_ports,
            self.node_labels,
            self.workload_names,
        );
    }
}

/// Builds a typed object of `kind` from `metadata`, `spec` and `status` read one by one.
macro_rules! typed_visit {
    ($map:ident, $ty:ident, $first:expr) => {{
        let mut obj = $ty::default();
        let mut key: Option<String> = $first;
        loop {
            let k = match key.take() {
                Some(k) => k,
                None => match $map.next_key::<std::borrow::Cow<'de, str>>()? {
                    Some(k) => k.into_owned(),
                    None => break,
                },
            };
            match k.as_str() {
                "metadata" => obj.metadata = $map.next_value()?,
                "spec" => obj.spec = $map.next_value()?,
                "status" => obj.status = $map.next_value()?,
                _ => {
                    $map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Object::$ty(Box::new(obj))
    }};
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Object;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
        let mut kind: Option<String> = None;
        let mut first_other: Option<String> = None;
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match k.as_ref() {
                "apiVersion" => {
                    map.next_value::<IgnoredAny>()?;
                }
                "kind" => {
                    kind = Some(map.next_value::<String>()?);
                }
                _ => {
                    first_other = Some(k.into_owned());
                    break;
                }
            }
            if kind.is_some() {
                break;
            }
        }
        let Some(kind) = kind else {
            // `kind` not before the body: buffer the rest and convert.
            let mut rest = serde_json::Map::new();
            if let Some(k) = first_other {
                rest.insert(k, map.next_value()?);
            }
            while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
                rest.insert(k, v);
            }
            return from_value(serde_json::Value::Object(rest)).map_err(de::Error::custom);
        };
        Ok(match kind.as_str() {
            "Node" => typed_visit!(map, Node, first_other),
            "Pod" => typed_visit!(map, Pod, first_other),
            "Service" => typed_visit!(map, Service, first_other),
            "Namespace" => typed_visit!(map, Namespace, first_other),
            "DaemonSet" => typed_visit!(map, DaemonSet, first_other),
            "Deployment" => typed_visit!(map, Deployment, first_other),
            "ReplicaSet" => typed_visit!(map, ReplicaSet, first_other),
            "StatefulSet" => typed_visit!(map, StatefulSet, first_other),
            "EndpointSlice" => {
                // EndpointSlice has no spec/status: its fields sit at the top level.
                let mut slice = EndpointSlice::default();
                let mut key = first_other;
                loop {
                    let k = match key.take() {
                        Some(k) => k,
                        None => match map.next_key::<std::borrow::Cow<'de, str>>()? {
                            Some(k) => k.into_owned(),
                            None => break,
                        },
                    };
                    match k.as_str() {
                        "addressType" => slice.address_type = map.next_value()?,
                        "endpoints" => {
                            slice.endpoints = map.next_value::<Option<Vec<_>>>()?.unwrap_or_default()
                        }
                        "metadata" => slice.metadata = map.next_value()?,
                        "ports" => slice.ports = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Object::EndpointSlice(Box::new(slice))
            }
            _ => {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Object::Other(kind)
            }
        })
    }
}

struct ObjectSeed;

impl<'de> DeserializeSeed<'de> for ObjectSeed {
    type Value = Object;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Object, D::Error> {
        d.deserialize_map(ObjectVisitor)
    }
}

/// The List, deserialised item by item into a tally (objects are kept, as a real
/// consumer would keep them, and dropped at the end).
struct ListVisitor<'a>(&'a mut Vec<Object>);

impl<'de> Visitor<'de> for ListVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a v1 List")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if k == "items" {
                map.next_value_seed(ItemsSeed(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct ItemsSeed<'a>(&'a mut Vec<Object>);

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(o) = seq.next_element_seed(ObjectSeed)? {
            self.0.push(o);
        }
        Ok(())
    }
}

/// Counts the items of a List, skipping each with `IgnoredAny`.
struct CountVisitor;

impl<'de> Visitor<'de> for CountVisitor {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a v1 List")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if k == "items" {
                n = map.next_value::<CountItems>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(n)
    }
}

struct CountItems(usize);

impl<'de> Deserialize<'de> for CountItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CountItems;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CountItems, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(CountItems(n))
            }
        }
        d.deserialize_seq(V)
    }
}

fn from_value(v: serde_json::Value) -> Result<Object, serde_json::Error> {
    let kind = v["kind"].as_str().unwrap_or_default().to_string();
    Ok(match kind.as_str() {
        "Node" => Object::Node(Box::new(serde_json::from_value(v)?)),
        "Pod" => Object::Pod(Box::new(serde_json::from_value(v)?)),
        "Service" => Object::Service(Box::new(serde_json::from_value(v)?)),
        "Namespace" => Object::Namespace(Box::new(serde_json::from_value(v)?)),
        "EndpointSlice" => Object::EndpointSlice(Box::new(serde_json::from_value(v)?)),
        "DaemonSet" => Object::DaemonSet(Box::new(serde_json::from_value(v)?)),
        "Deployment" => Object::Deployment(Box::new(serde_json::from_value(v)?)),
        "ReplicaSet" => Object::ReplicaSet(Box::new(serde_json::from_value(v)?)),
        "StatefulSet" => Object::StatefulSet(Box::new(serde_json::from_value(v)?)),
        _ => Object::Other(kind),
    })
}

fn from_str(kind: &str, s: &str) -> Result<Object, serde_json::Error> {
    Ok(match kind {
        "Node" => Object::Node(Box::new(serde_json::from_str(s)?)),
        "Pod" => Object::Pod(Box::new(serde_json::from_str(s)?)),
        "Service" => Object::Service(Box::new(serde_json::from_str(s)?)),
        "Namespace" => Object::Namespace(Box::new(serde_json::from_str(s)?)),
        "EndpointSlice" => Object::EndpointSlice(Box::new(serde_json::from_str(s)?)),
        "DaemonSet" => Object::DaemonSet(Box::new(serde_json::from_str(s)?)),
        "Deployment" => Object::Deployment(Box::new(serde_json::from_str(s)?)),
        "ReplicaSet" => Object::ReplicaSet(Box::new(serde_json::from_str(s)?)),
        "StatefulSet" => Object::StatefulSet(Box::new(serde_json::from_str(s)?)),
        _ => Object::Other(kind.to_string()),
    })
}

#[derive(Deserialize)]
struct RawList<'a> {
    #[serde(borrow)]
    items: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct KindOnly<'a> {
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
}

const USAGE: &str =
    "usage: parse-baseline --mode ignored|sonic-ignored|simd-json-tape|k8s-openapi|k8s-openapi-raw FILE";

fn run(mode: &str, path: &str) -> Result<(), String> {
    let t0 = Instant::now();
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let mut tally = Tally::default();
    match mode {
        "ignored" => {
            // `items` counted, every item skipped with IgnoredAny: the same work as
            // `from_slice::<IgnoredAny>` over the whole document, plus a counter.
            let mut de = serde_json::Deserializer::from_slice(&bytes);
            let n = de
                .deserialize_map(CountVisitor)
                .and_then(|n| de.end().map(|()| n))
                .map_err(|e| format!("{path}: {e}"))?;
            tally.kinds.insert("any".into(), n);
        }
        "sonic-ignored" => {
            let mut de = sonic_rs::Deserializer::from_slice(&bytes);
            let n = de
                .deserialize_map(CountVisitor)
                .and_then(|n| de.end().map(|()| n))
                .map_err(|e| format!("{path}: {e}"))?;
            tally.kinds.insert("any".into(), n);
        }
        "simd-json-tape" => {
            let mut copy = bytes.clone();
            let tape = simd_json::to_tape(&mut copy).map_err(|e| format!("{path}: {e}"))?;
            tally.kinds.insert("tape-nodes".into(), tape.0.len());
        }
        "k8s-openapi" => {
            let mut objects = Vec::new();
            let mut de = serde_json::Deserializer::from_slice(&bytes);
            de.deserialize_map(ListVisitor(&mut objects))
                .and_then(|()| de.end())
                .map_err(|e| format!("{path}: {e}"))?;
            for o in &objects {
                tally.add(o);
            }
        }
        "k8s-openapi-raw" => {
            let text = std::str::from_utf8(&bytes).map_err(|e| format!("{path}: {e}"))?;
            let list: RawList<'_> = serde_json::from_str(text).map_err(|e| format!("{path}: {e}"))?;
            let mut objects = Vec::with_capacity(list.items.len());
            for raw in &list.items {
                let kind: KindOnly<'_> =
                    serde_json::from_str(raw.get()).map_err(|e| format!("{path}: {e}"))?;
                objects.push(from_str(&kind.kind, raw.get()).map_err(|e| format!("{path}: {e}"))?);
            }
            for o in &objects {
                tally.add(o);
            }
        }
        _ => return Err(format!("unknown mode {mode:?}\n{USAGE}")),
    }
    tally.print(mode, bytes.len(), t0.elapsed().as_secs_f64());
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, file) = match args.as_slice() {
        [m, mode, file] if m == "--mode" => (mode.as_str(), file.as_str()),
        [m] if m.starts_with("--mode=") => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
        [m, file] if m.starts_with("--mode=") => (&m["--mode=".len()..], file.as_str()),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(mode, file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("parse-baseline: {e}");
            ExitCode::FAILURE
        }
    }
}
