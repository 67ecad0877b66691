//! JSON input: one value (an object, a `List`, or an array of objects) parsed from the
//! whole buffer with `serde_json::from_slice` semantics, in one pass.

use locality_model::objects::Origin;
use serde::de::DeserializeSeed;
use serde_json::value::RawValue;

use crate::ctx::Ctx;
use crate::error::{ErrorKind, IngestError, json_message};
use crate::object::DocSeed;

/// Reads the JSON value in `bytes` (BOM already stripped) into `ctx`.
pub(crate) fn load(ctx: &Ctx<'_>, bytes: &[u8]) -> Result<(), IngestError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let res = DocSeed::<&RawValue>::new(ctx)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    res.map_err(|e| error(ctx, bytes, &e))
}

/// Builds the error; re-parses once with path tracking to name the field (error path only).
fn error(ctx: &Ctx<'_>, bytes: &[u8], e: &serde_json::Error) -> IngestError {
    let kind = match e.classify() {
        serde_json::error::Category::Io => ErrorKind::Io,
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            if json_message(e).contains("recursion limit") {
                ErrorKind::Limit
            } else {
                ErrorKind::Syntax
            }
        }
        serde_json::error::Category::Data => ErrorKind::Invalid,
    };
    let ctx2 = Ctx::new(ctx.file, bytes, false).counting_pods(ctx.count_pods);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut track = serde_path_to_error::Track::new();
    let _ = DocSeed::<serde_json::Value>::new(&ctx2)
        .deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let path = crate::error::format_path(&track.path());
    let item = ctx.failure.borrow().item;
    let start = crate::locate::locate(
        bytes,
        &Origin {
            item,
            ..Origin::default()
        },
    )
    .map(|(l, c)| (u64::from(l), u64::from(c)));
    let pos = (e.line() as u64, e.column() as u64);
    crate::compose::compose(ctx, kind, pos, json_message(e), Some(path), None, start)
}
