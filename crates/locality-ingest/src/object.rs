//! The streaming dispatch: documents, Lists, and objects, as `DeserializeSeed`s.
//!
//! One code path serves JSON (`serde_json`) and YAML (`serde-saphyr`). An object is read
//! key by key; once `kind` is known, `spec`/`status` (and an EndpointSlice's
//! `addressType`/`endpoints`/`ports`, an Endpoints' `subsets`) are deserialised straight into
//! the lean wire type of that kind. Keys that arrive before `kind` are buffered ([`Buffer`]): for JSON as a
//! borrowed `&RawValue` (a scan, no allocation; kubectl sorts keys, so an EndpointSlice's
//! `endpoints` precede its `kind`), for YAML as a `serde_json::Value`. Items of a `List`
//! go straight into the [`Sink`](crate::ctx::Sink) as they are read: nothing is materialised twice.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use locality_model::objects as m;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::buffer::{Buffer, BufferSeed};
use crate::ctx::{Ctx, Inner};
use crate::fields::{FieldSeed, Parts};
use crate::kind::{Field, Kind, ObjKey};
use crate::wire::{self, MetaW};

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
    /// An unread Pod's `metadata` named it ([`wire::CountedMetaW`]).
    named: bool,
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
            named: false,
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
                ObjKey::Metadata if self.unread_pod(st.kind) => {
                    let meta: Option<wire::M<wire::CountedMetaW>> = map.next_value()?;
                    let Some(wire::M(meta)) = meta else {
                        return Err(self.fail("metadata", "`metadata` is null".to_owned()));
                    };
                    if meta.name.is_none() {
                        return Err(self.fail("metadata.name", "missing field `name`".to_owned()));
                    }
                    st.named = true;
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
                kind if self.unread_pod(kind) => {
                    map.next_value::<IgnoredAny>()?;
                }
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

    /// A Pod only counted ([`crate::Pods::Count`]): the rest of it is skipped unread.
    fn unread_pod(&self, kind: Option<Kind>) -> bool {
        self.ctx.count_pods && kind == Some(Kind::Pod)
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
        if self.unread_pod(Some(kind)) && (st.named || st.meta.as_ref().is_some_and(|m| m.name.is_some())) {
            self.ctx.sink.borrow_mut().unread_pods += 1;
            return Ok(());
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
        // The kind's own name rule (upstream `ValidateObjectMeta` with the kind's name
        // function): a file cannot give a name the API server would refuse.
        if let Some(name) = st.meta.as_ref().and_then(|m| m.name.as_deref())
            && let Err(msg) = crate::names::for_kind(kind, name)
        {
            return Err(self.fail_at_start("metadata.name", msg));
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
        parts
            .build(kind, meta, &mut sink)
            .map_err(|(path, msg)| self.fail_at_start(path, msg))
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
