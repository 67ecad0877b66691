//! The streaming dispatch: documents, Lists, and objects, as `DeserializeSeed`s.
//!
//! One code path serves JSON (`serde_json`) and YAML (`serde-saphyr`). An object is read
//! key by key; once `kind` is known, `spec`/`status` (and an EndpointSlice's
//! `addressType`/`endpoints`/`ports`, an Endpoints' `subsets`) are deserialised straight into
//! the lean wire type of that kind. Keys that arrive before `kind` are buffered ([`Buffer`]): for JSON as a
//! borrowed `&RawValue` (a scan, no allocation; kubectl sorts keys, so an EndpointSlice's
//! `endpoints` precede its `kind`), for YAML as a `serde_json::Value`. Items of a `List`
//! go straight into the [`Sink`] as they are read: nothing is materialised twice.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use locality_model::objects as m;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::wire::{
    self, AddressTypeW, EndpointPortW, EndpointSubsetW, EndpointW, EndpointsSeed, MetaW, NodeSpecW,
    NodeStatusW, PodSpecW, PodStatusW, ServiceSpecW, ServiceStatusW, WorkloadSpecW,
};

/// Objects read so far.
#[derive(Default)]
pub(crate) struct Sink {
    pub state: m::ClusterState,
    pub skipped: BTreeMap<String, usize>,
    pub warnings: Vec<String>,
}

/// What is known about a failure, noted on the way out of the visitors (error path only).
#[derive(Default, Debug)]
pub(crate) struct Failure {
    /// `Kind namespace/name` of the innermost object being read.
    pub object: Option<String>,
    /// Item index in a List or top-level array.
    pub item: Option<u32>,
    /// True when the item sits in a List's `items` (false: a top-level JSON array).
    pub in_items: bool,
    /// A precise error found after the fact (buffered field, end-of-object check).
    pub inner: Option<Inner>,
}

/// An error detected outside the parser's own flow, with its own position and path.
#[derive(Debug, Clone)]
pub(crate) struct Inner {
    /// Absolute byte offset in the input, when known.
    pub offset: Option<usize>,
    /// Field path relative to the object (`spec.ports[0].port`).
    pub path: String,
    /// Message.
    pub message: String,
    /// Report at the object's start (the check ran after the whole object was read).
    pub at_start: bool,
}

/// Shared state of one input's parse.
pub(crate) struct Ctx<'b> {
    pub file: &'b str,
    /// The whole input (JSON: for offsets of buffered raw values).
    pub base: &'b [u8],
    pub yaml: bool,
    pub document: Cell<u32>,
    /// Line of the current YAML document's first content line (0 for JSON).
    pub doc_line: Cell<u32>,
    pub sink: RefCell<Sink>,
    pub failure: RefCell<Failure>,
    /// Documents that held an object, a List or an array (not null).
    pub non_null_documents: Cell<u32>,
    /// The item defaults of every top-level List's `items` read (see [`crate::split`]).
    pub lists: RefCell<Vec<ItemDefault>>,
}

/// Kind and apiVersion of a typed List's items (`PodList` → `Pod`), if any.
pub(crate) type ItemDefault = Option<(String, Option<String>)>;

impl<'b> Ctx<'b> {
    pub(crate) fn new(file: &'b str, base: &'b [u8], yaml: bool) -> Self {
        Self::with_sink(file, base, yaml, Sink::default())
    }

    pub(crate) fn with_sink(file: &'b str, base: &'b [u8], yaml: bool, sink: Sink) -> Self {
        Ctx {
            file,
            base,
            yaml,
            document: Cell::new(0),
            doc_line: Cell::new(0),
            sink: RefCell::new(sink),
            failure: RefCell::default(),
            non_null_documents: Cell::new(0),
            lists: RefCell::default(),
        }
    }

    fn set_inner(&self, inner: Inner) {
        let mut f = self.failure.borrow_mut();
        if f.inner.is_none() {
            f.inner = Some(inner);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Kinds and fields
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Node,
    Pod,
    Service,
    EndpointSlice,
    Endpoints,
    Workload(m::WorkloadKind),
    Namespace,
    PodDisruptionBudget,
    List,
    Other,
}

impl Kind {
    fn of(kind: &str) -> Kind {
        match kind {
            "Node" => Kind::Node,
            "Pod" => Kind::Pod,
            "Service" => Kind::Service,
            "EndpointSlice" => Kind::EndpointSlice,
            "Endpoints" => Kind::Endpoints,
            "DaemonSet" => Kind::Workload(m::WorkloadKind::DaemonSet),
            "Deployment" => Kind::Workload(m::WorkloadKind::Deployment),
            "ReplicaSet" => Kind::Workload(m::WorkloadKind::ReplicaSet),
            "StatefulSet" => Kind::Workload(m::WorkloadKind::StatefulSet),
            "Namespace" => Kind::Namespace,
            "PodDisruptionBudget" => Kind::PodDisruptionBudget,
            k if k.ends_with("List") => Kind::List,
            _ => Kind::Other,
        }
    }

    /// Whether a top-level field matters for this kind.
    fn reads(self, field: Field) -> bool {
        match self {
            Kind::Node | Kind::Pod | Kind::Service => matches!(field, Field::Spec | Field::Status),
            Kind::Workload(_) | Kind::PodDisruptionBudget => field == Field::Spec,
            Kind::EndpointSlice => matches!(field, Field::AddressType | Field::Endpoints | Field::Ports),
            Kind::Endpoints => field == Field::Subsets,
            Kind::Namespace | Kind::List | Kind::Other => false,
        }
    }

    /// apiVersions served for this kind; `Err` explains why another one is refused.
    fn check_api_version(self, kind: &str, api: &str) -> Result<(), String> {
        let ok: &[&str] = match self {
            Kind::Node | Kind::Pod | Kind::Service | Kind::Endpoints | Kind::Namespace => &["v1"],
            Kind::EndpointSlice => &["discovery.k8s.io/v1", "discovery.k8s.io/v1beta1"],
            Kind::Workload(_) => &["apps/v1"],
            Kind::PodDisruptionBudget => &["policy/v1"],
            Kind::List | Kind::Other => return Ok(()),
        };
        if ok.contains(&api) {
            return Ok(());
        }
        if matches!(self, Kind::Workload(_))
            && matches!(api, "apps/v1beta1" | "apps/v1beta2" | "extensions/v1beta1")
        {
            return Err(format!(
                "apiVersion {api} for {kind} is no longer served (removed in Kubernetes 1.16); \
                 convert the manifest to apps/v1"
            ));
        }
        Err(format!(
            "unsupported apiVersion {api:?} for {kind} (expected {})",
            ok.join(" or ")
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Spec,
    Status,
    AddressType,
    Endpoints,
    Ports,
    Subsets,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Spec => "spec",
            Field::Status => "status",
            Field::AddressType => "addressType",
            Field::Endpoints => "endpoints",
            Field::Ports => "ports",
            Field::Subsets => "subsets",
        }
    }
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(field_identifier, rename_all = "camelCase")]
enum ObjKey {
    ApiVersion,
    Kind,
    Metadata,
    Items,
    Spec,
    Status,
    AddressType,
    Endpoints,
    Ports,
    Subsets,
    #[serde(other)]
    Other,
}

impl ObjKey {
    /// The JSON name, for errors (`None` for keys not read).
    fn name(self) -> Option<&'static str> {
        Some(match self {
            ObjKey::ApiVersion => "apiVersion",
            ObjKey::Kind => "kind",
            ObjKey::Metadata => "metadata",
            ObjKey::Items => "items",
            ObjKey::Spec => "spec",
            ObjKey::Status => "status",
            ObjKey::AddressType => "addressType",
            ObjKey::Endpoints => "endpoints",
            ObjKey::Ports => "ports",
            ObjKey::Subsets => "subsets",
            ObjKey::Other => return None,
        })
    }
}

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
    kind: Kind,
    field: Field,
    addr: Option<AddressTypeW>,
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
struct Parts {
    node_spec: Option<wire::NodeSpecW>,
    node_status: Option<wire::NodeStatusW>,
    pod_spec: Option<wire::PodSpecW>,
    pod_status: Option<wire::PodStatusW>,
    svc_spec: Option<wire::ServiceSpecW>,
    svc_status: Option<wire::ServiceStatusW>,
    addr: Option<AddressTypeW>,
    /// True when `endpoints` were read before `addressType` was known.
    endpoints_unchecked: bool,
    endpoints: Vec<EndpointW>,
    ports: Vec<wire::M<EndpointPortW>>,
    subsets: Vec<wire::M<EndpointSubsetW>>,
    wl_spec: Option<wire::WorkloadSpecW>,
    pdb_spec: Option<wire::PdbSpecW>,
}

impl Parts {
    fn store(&mut self, v: FieldValue) {
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

// ---------------------------------------------------------------------------------------
// Buffers for fields that precede `kind`
// ---------------------------------------------------------------------------------------

/// How a field that arrives before `kind` is held until the kind is known.
pub(crate) trait Buffer<'de>: Sized {
    /// Captures the value.
    fn capture<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
    /// Decodes it once the kind is known.
    fn decode(self, seed: FieldSeed, ctx: &Ctx<'_>) -> Result<FieldValue, Inner>;
}

impl<'de> Buffer<'de> for &'de RawValue {
    fn capture<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d)
    }

    fn decode(self, seed: FieldSeed, ctx: &Ctx<'_>) -> Result<FieldValue, Inner> {
        let text: &'de str = self.get();
        let mut de = serde_json::Deserializer::from_str(text);
        let err = match seed.deserialize(&mut de) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        // Error path: find the field path and the absolute position.
        let mut track = serde_path_to_error::Track::new();
        let mut de2 = serde_json::Deserializer::from_str(text);
        let _ = seed.deserialize(serde_path_to_error::Deserializer::new(&mut de2, &mut track));
        let path = join_path(seed.field.name(), &crate::error::format_path(&track.path()));
        let base_start = ctx.base.as_ptr() as usize;
        let raw_start = text.as_ptr() as usize;
        let offset =
            (raw_start >= base_start && raw_start + text.len() <= base_start + ctx.base.len()).then(|| {
                raw_start - base_start + crate::locate::offset_of(text.as_bytes(), err.line(), err.column())
            });
        Err(Inner {
            offset,
            path,
            message: crate::error::json_message(&err),
            at_start: false,
        })
    }
}

impl<'de> Buffer<'de> for serde_json::Value {
    fn capture<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d)
    }

    fn decode(self, seed: FieldSeed, _ctx: &Ctx<'_>) -> Result<FieldValue, Inner> {
        // Rare (YAML with spec before kind): keep a copy to find the path on failure.
        let copy = self.clone();
        match DeserializeSeed::<'static>::deserialize(seed, self) {
            Ok(v) => Ok(v),
            Err(e) => {
                let mut track = serde_path_to_error::Track::new();
                let _ = DeserializeSeed::<'static>::deserialize(
                    seed,
                    serde_path_to_error::Deserializer::new(copy, &mut track),
                );
                let path = join_path(seed.field.name(), &crate::error::format_path(&track.path()));
                Err(Inner {
                    offset: None,
                    path,
                    message: crate::error::json_message(&e),
                    at_start: true,
                })
            }
        }
    }
}

fn join_path(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (_, true) => a.to_owned(),
        (true, false) => b.to_owned(),
        (false, false) if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

struct BufferSeed<B>(PhantomData<B>);

impl<'de, B: Buffer<'de>> DeserializeSeed<'de> for BufferSeed<B> {
    type Value = B;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<B, D::Error> {
        B::capture(d)
    }
}

// ---------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------

/// Reads one document (a JSON value or a YAML document): an object, a List, or an array
/// of objects.
pub(crate) struct DocSeed<'c, 'b, B> {
    ctx: &'c Ctx<'b>,
    _b: PhantomData<B>,
}

impl<'c, 'b, B> DocSeed<'c, 'b, B> {
    pub(crate) fn new(ctx: &'c Ctx<'b>) -> Self {
        DocSeed { ctx, _b: PhantomData }
    }
}

impl<'de, B: Buffer<'de>> DeserializeSeed<'de> for DocSeed<'_, '_, B> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, B: Buffer<'de>> Visitor<'de> for DocSeed<'_, '_, B> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object, a List, or an array of objects")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.ctx
            .non_null_documents
            .set(self.ctx.non_null_documents.get() + 1);
        ObjectSeed::<B> {
            ctx: self.ctx,
            item: None,
            top: true,
            default: None,
            _b: PhantomData,
        }
        .visit_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.ctx
            .non_null_documents
            .set(self.ctx.non_null_documents.get() + 1);
        let mut i: u32 = 0;
        loop {
            let seed = ObjectSeed::<B> {
                ctx: self.ctx,
                item: Some(i),
                top: false,
                default: None,
                _b: PhantomData,
            };
            match seq.next_element_seed(seed) {
                Ok(Some(())) => i = i.saturating_add(1),
                Ok(None) => return Ok(()),
                Err(e) => {
                    let mut f = self.ctx.failure.borrow_mut();
                    f.item.get_or_insert(i);
                    return Err(e);
                }
            }
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if self.ctx.yaml {
            // An explicit null YAML document (`--- ~`) holds no object; kubectl skips it too.
            Ok(())
        } else {
            Err(E::invalid_type(de::Unexpected::Unit, &self))
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }
}

/// A seed for a List's `items` (item indices from 0) that yields the number of items.
pub(crate) fn items_seed<'c, 'b, 'de, B: Buffer<'de>>(
    ctx: &'c Ctx<'b>,
    default: Option<(String, Option<String>)>,
) -> impl DeserializeSeed<'de, Value = u32> + use<'c, 'b, 'de, B> {
    ItemsSeed::<B> {
        ctx,
        default,
        _b: PhantomData,
    }
}

/// Reads a List's `items`; yields the number of items.
struct ItemsSeed<'c, 'b, B> {
    ctx: &'c Ctx<'b>,
    default: Option<(String, Option<String>)>,
    _b: PhantomData<B>,
}

impl<'de, B: Buffer<'de>> DeserializeSeed<'de> for ItemsSeed<'_, '_, B> {
    type Value = u32;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u32, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, B: Buffer<'de>> Visitor<'de> for ItemsSeed<'_, '_, B> {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of objects (`items`)")
    }

    fn visit_unit<E: de::Error>(self) -> Result<u32, E> {
        Err(E::custom(
            "`items` is null; a List needs an array of objects (write `items: []` for an empty List)",
        ))
    }

    fn visit_none<E: de::Error>(self) -> Result<u32, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u32, A::Error> {
        let mut i: u32 = 0;
        loop {
            let seed = ObjectSeed::<B> {
                ctx: self.ctx,
                item: Some(i),
                top: false,
                default: self.default.as_ref(),
                _b: PhantomData,
            };
            match seq.next_element_seed(seed) {
                Ok(Some(())) => i = i.saturating_add(1),
                Ok(None) => return Ok(i),
                Err(e) => {
                    let mut f = self.ctx.failure.borrow_mut();
                    if f.item.is_none() {
                        f.item = Some(i);
                        f.in_items = true;
                    }
                    return Err(e);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------

/// Reads one Kubernetes object (or, at the top level, a List).
struct ObjectSeed<'c, 'b, 'd, B> {
    ctx: &'c Ctx<'b>,
    item: Option<u32>,
    top: bool,
    /// Kind and apiVersion of a typed List's items (`PodList` → `Pod`), if known.
    default: Option<&'d (String, Option<String>)>,
    _b: PhantomData<B>,
}

impl<'de, B: Buffer<'de>> DeserializeSeed<'de> for ObjectSeed<'_, '_, '_, B> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

struct ObjState<'de, B> {
    api_version: Option<Cow<'de, str>>,
    kind_text: Option<Cow<'de, str>>,
    kind: Option<Kind>,
    meta: Option<MetaW>,
    items_seen: bool,
    parts: Parts,
    buffered: Vec<(Field, B)>,
}

impl<B> ObjState<'_, B> {
    fn describe(&self) -> Option<String> {
        let kind = self
            .kind_text
            .as_deref()
            .filter(|_| self.kind != Some(Kind::List));
        let name = self
            .meta
            .as_ref()
            .and_then(|m| m.name.as_deref().map(|n| (m.namespace(), n)));
        match (kind, name) {
            (Some(k), Some(("", n))) => Some(format!("{k} {n}")),
            (Some(k), Some((ns, n))) => Some(format!("{k} {ns}/{n}")),
            (Some(k), None) => Some(k.to_owned()),
            (None, Some(("", n))) => Some(format!("object {n}")),
            (None, Some((ns, n))) => Some(format!("object {ns}/{n}")),
            (None, None) => None,
        }
    }
}

impl<'de, B: Buffer<'de>> Visitor<'de> for ObjectSeed<'_, '_, '_, B> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object (a map with apiVersion, kind and metadata)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut st = ObjState::<B> {
            api_version: self.default.and_then(|d| d.1.clone()).map(Cow::Owned),
            kind_text: self.default.map(|d| Cow::Owned(d.0.clone())),
            kind: self.default.map(|d| Kind::of(&d.0)),
            meta: None,
            items_seen: false,
            parts: Parts::default(),
            buffered: Vec::new(),
        };
        let res = self.read(&mut map, &mut st).and_then(|()| self.finish(&mut st));
        if res.is_err() {
            let mut f = self.ctx.failure.borrow_mut();
            if f.object.is_none() {
                f.object = st.describe();
            }
        }
        res
    }
}

impl<'de, B: Buffer<'de>> ObjectSeed<'_, '_, '_, B> {
    fn read<A: MapAccess<'de>>(&self, map: &mut A, st: &mut ObjState<'de, B>) -> Result<(), A::Error> {
        // A field given twice is ambiguous: the API server's strict decoding rejects it
        // (`duplicate field "kind"`), and so does this reader, instead of keeping the last.
        let mut seen: u16 = 0;
        while let Some(key) = map.next_key::<ObjKey>()? {
            if let Some(name) = key.name() {
                let bit = 1u16 << (key as u16);
                if seen & bit != 0 {
                    return Err(self.fail(name, format!("duplicate field {name:?}")));
                }
                seen |= bit;
            }
            let field = match key {
                ObjKey::ApiVersion => {
                    st.api_version = Some(map.next_value::<wire::Str<'de>>()?.0);
                    continue;
                }
                ObjKey::Kind => {
                    let k = map.next_value::<wire::Str<'de>>()?.0;
                    if let Some(default) = self.default
                        && default.0 != k
                    {
                        return Err(self.fail("kind", format!("item of kind {k} in a {}List", default.0)));
                    }
                    st.kind = Some(Kind::of(&k));
                    st.kind_text = Some(k);
                    continue;
                }
                ObjKey::Metadata => {
                    if st.kind == Some(Kind::List) {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    let meta: Option<wire::M<MetaW>> = map.next_value()?;
                    let Some(wire::M(meta)) = meta else {
                        return Err(self.fail("metadata", "`metadata` is null".to_owned()));
                    };
                    if meta.name.is_none() && st.kind.is_some() {
                        // Kind known: report here, right after `metadata`.
                        st.meta = Some(meta);
                        return Err(self.fail("metadata.name", "missing field `name`".to_owned()));
                    }
                    st.meta = Some(meta);
                    continue;
                }
                ObjKey::Items => {
                    if self.top && matches!(st.kind, None | Some(Kind::List)) {
                        st.items_seen = true;
                        let default = typed_list_default(st.kind_text.as_deref(), st.api_version.as_deref());
                        self.ctx.lists.borrow_mut().push(default.clone());
                        map.next_value_seed(ItemsSeed::<B> {
                            ctx: self.ctx,
                            default,
                            _b: PhantomData,
                        })?;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                    continue;
                }
                ObjKey::Spec => Field::Spec,
                ObjKey::Status => Field::Status,
                ObjKey::AddressType => Field::AddressType,
                ObjKey::Endpoints => Field::Endpoints,
                ObjKey::Ports => Field::Ports,
                ObjKey::Subsets => Field::Subsets,
                ObjKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            match st.kind {
                None => {
                    let b = map.next_value_seed(BufferSeed::<B>(PhantomData))?;
                    st.buffered.push((field, b));
                }
                Some(kind) if kind.reads(field) => {
                    let v = map.next_value_seed(FieldSeed {
                        kind,
                        field,
                        addr: st.parts.addr,
                    })?;
                    st.parts.store(v);
                }
                Some(_) => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    /// Records a precise error (path relative to the object) and returns a serde error.
    fn fail<E: de::Error>(&self, path: &str, message: String) -> E {
        let e = E::custom(&message);
        self.ctx.set_inner(Inner {
            offset: None,
            path: path.to_owned(),
            message,
            at_start: false,
        });
        e
    }

    /// As [`Self::fail`], for checks made after the whole object was read: the error is
    /// reported at the object's start rather than after its end.
    fn fail_at_start<E: de::Error>(&self, path: &str, message: String) -> E {
        let e = E::custom(&message);
        self.ctx.set_inner(Inner {
            offset: None,
            path: path.to_owned(),
            message,
            at_start: true,
        });
        e
    }

    fn finish<E: de::Error>(&self, st: &mut ObjState<'de, B>) -> Result<(), E> {
        let (Some(kind), Some(kind_text)) = (st.kind, st.kind_text.clone()) else {
            return Err(self.fail_at_start("kind", "missing field `kind`".to_owned()));
        };
        if st.items_seen && kind != Kind::List {
            return Err(self.fail_at_start(
                "items",
                format!("`items` found in a {kind_text}; only a List may have items"),
            ));
        }
        match kind {
            Kind::List => {
                if !self.top {
                    return Err(
                        self.fail_at_start("kind", format!("a {kind_text} inside a List is not supported"))
                    );
                }
                return Ok(());
            }
            Kind::Other => {
                *self
                    .ctx
                    .sink
                    .borrow_mut()
                    .skipped
                    .entry(kind_text.into_owned())
                    .or_insert(0) += 1;
                return Ok(());
            }
            _ => {}
        }
        let Some(api) = st.api_version.as_deref() else {
            return Err(self.fail_at_start("apiVersion", "missing field `apiVersion`".to_owned()));
        };
        if let Err(msg) = kind.check_api_version(&kind_text, api) {
            return Err(self.fail_at_start("apiVersion", msg));
        }
        if st.meta.as_ref().is_none_or(|m| m.name.is_none()) {
            let path = if st.meta.is_some() {
                "metadata.name"
            } else {
                "metadata"
            };
            let msg = if st.meta.is_some() {
                "missing field `name`"
            } else {
                "missing field `metadata`"
            };
            return Err(self.fail_at_start(path, msg.to_owned()));
        }
        // Decode what arrived before `kind` (addressType first: endpoints depend on it).
        let mut buffered = std::mem::take(&mut st.buffered);
        buffered.sort_by_key(|(f, _)| *f != Field::AddressType);
        for (field, b) in buffered {
            if !kind.reads(field) {
                continue;
            }
            match b.decode(
                FieldSeed {
                    kind,
                    field,
                    addr: st.parts.addr,
                },
                self.ctx,
            ) {
                Ok(v) => st.parts.store(v),
                Err(inner) => {
                    let e = E::custom(&inner.message);
                    self.ctx.set_inner(inner);
                    return Err(e);
                }
            }
        }
        let origin = m::Origin {
            file: self.ctx.file.to_owned(),
            document: self.ctx.document.get(),
            item: self.item,
            line: if self.item.is_none() {
                self.ctx.doc_line.get()
            } else {
                0
            },
            column: if self.item.is_none() && self.ctx.doc_line.get() > 0 {
                1
            } else {
                0
            },
        };
        let Some(meta) = st.meta.take() else {
            return Err(self.fail_at_start("metadata", "missing field `metadata`".to_owned()));
        };
        let meta = meta.into_model(origin);
        let parts = std::mem::take(&mut st.parts);
        let mut sink = self.ctx.sink.borrow_mut();
        match kind {
            Kind::Node => {
                let mut warnings = Vec::new();
                let node = wire::build_node(meta, parts.node_spec, parts.node_status, &mut |w| {
                    warnings.push(w)
                });
                sink.warnings.extend(warnings);
                sink.state.nodes.push(node);
            }
            Kind::Pod => sink
                .state
                .pods
                .push(wire::build_pod(meta, parts.pod_spec, parts.pod_status)),
            Kind::Service => {
                sink.state
                    .services
                    .push(wire::build_service(meta, parts.svc_spec, parts.svc_status));
            }
            Kind::EndpointSlice => {
                let Some(addr) = parts.addr else {
                    return Err(self.fail_at_start("addressType", "missing field `addressType`".to_owned()));
                };
                let endpoints = if parts.endpoints_unchecked || addr == AddressTypeW::FQDN {
                    wire::check_endpoint_addresses(addr, parts.endpoints)
                        .map_err(|msg| self.fail_at_start("", msg))?
                } else {
                    parts
                        .endpoints
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
                    ports: parts.ports.into_iter().map(|p| p.0.into_model()).collect(),
                });
            }
            Kind::Endpoints => sink
                .state
                .endpoints
                .push(wire::build_endpoints(meta, parts.subsets)),
            Kind::Workload(wk) => sink
                .state
                .workloads
                .push(wire::build_workload(wk, meta, parts.wl_spec)),
            Kind::Namespace => sink.state.namespaces.push(m::Namespace { meta }),
            Kind::PodDisruptionBudget => sink
                .state
                .pod_disruption_budgets
                .push(wire::build_pod_disruption_budget(meta, parts.pdb_spec)),
            Kind::List | Kind::Other => {}
        }
        Ok(())
    }
}

/// `PodList` (apiVersion v1) → items default to kind `Pod`, apiVersion `v1`; a plain
/// `List` gives no default (its items name their own kind).
fn typed_list_default(kind: Option<&str>, api: Option<&str>) -> Option<(String, Option<String>)> {
    let item_kind = kind?.strip_suffix("List")?;
    if item_kind.is_empty() {
        return None;
    }
    Some((item_kind.to_owned(), api.map(str::to_owned)))
}
