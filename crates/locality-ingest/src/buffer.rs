//! Fields that arrive before `kind` are held until the kind is known: as borrowed raw
//! JSON, or (YAML) as a `serde_json::Value`.

use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer};
use serde_json::value::RawValue;

use crate::ctx::{Ctx, Inner};
use crate::fields::{FieldSeed, FieldValue};

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
                raw_start - base_start + crate::position::offset_of(text.as_bytes(), err.line(), err.column())
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

/// Captures a field that arrives before `kind`.
pub(crate) struct BufferSeed<B>(pub PhantomData<B>);

impl<'de, B: Buffer<'de>> DeserializeSeed<'de> for BufferSeed<B> {
    type Value = B;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<B, D::Error> {
        B::capture(d)
    }
}
