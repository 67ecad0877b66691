//! A list answer in protobuf written item by item: each item's message is encoded on its own
//! (its JSON dropped at once), and the envelope's lengths are computed from the items' sizes,
//! so the answer is never held as one JSON tree (k8s.io/apimachinery
//! `pkg/runtime/serializer/protobuf` writes a list's `raw` in one piece; the bytes are the
//! same).

use serde_json::Value;

use super::MAGIC;
use super::encode::{self, field_bytes};
use super::schema::{Card, Schema, Ty};

/// The parts of one list answer: its kind, the list message without items, and the items'
/// message.
pub(crate) struct ListEncoder {
    api_version: String,
    kind: String,
    /// The list message with its `metadata` only.
    head: Vec<u8>,
    /// The tag of `items` in the list message.
    items_tag: u32,
    /// The items' message.
    item: usize,
}

impl ListEncoder {
    /// The encoder of a `kind` list (`PodList`) whose `metadata` is `meta`; `None` for a kind
    /// the schema lacks.
    ///
    /// # Errors
    /// `meta` that does not fit `ListMeta`.
    pub(crate) fn new(api_version: &str, kind: &str, meta: &Value) -> Option<Result<Self, String>> {
        let schema = Schema::get();
        let list = schema.kind(api_version, kind)?;
        let items = schema.messages[list]
            .fields
            .iter()
            .find(|f| f.json == "items" && f.card == Card::Rep)?;
        let Ty::Message(item) = items.ty else {
            return None;
        };
        let skeleton = serde_json::json!({"apiVersion": api_version, "kind": kind, "metadata": meta});
        Some(encode::encode(schema, list, &skeleton).map(|head| ListEncoder {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            head,
            items_tag: items.tag,
            item,
        }))
    }

    /// One item as the list carries it (its field, with tag and length).
    ///
    /// # Errors
    /// A value that does not fit the item's message.
    pub(crate) fn item(&self, v: &Value) -> Result<Vec<u8>, String> {
        let body = encode::encode(Schema::get(), self.item, v)?;
        let mut out = Vec::with_capacity(body.len() + 8);
        field_bytes(&mut out, self.items_tag, &body);
        Ok(out)
    }

    /// What comes before the items: the envelope (magic, type, the `raw` field's tag and
    /// length) and the list's `metadata`, for items of `items_len` bytes in all.
    pub(crate) fn head(&self, items_len: usize) -> Vec<u8> {
        let mut type_meta = Vec::new();
        field_bytes(&mut type_meta, 1, self.api_version.as_bytes());
        field_bytes(&mut type_meta, 2, self.kind.as_bytes());
        let mut out = MAGIC.to_vec();
        field_bytes(&mut out, 1, &type_meta);
        // Field 2 (`raw`), length-delimited: its tag and length, then the list's bytes.
        let raw_len = self.head.len() + items_len;
        encode::varint(&mut out, (2 << 3) | 2);
        encode::varint(&mut out, raw_len as u64);
        out.extend_from_slice(&self.head);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_written_item_by_item_is_the_list_written_whole() {
        let meta = json!({"resourceVersion": "42", "continue": "abc"});
        let items = [
            json!({"metadata": {"name": "a", "namespace": "default"}, "spec": {"nodeName": "n1"}}),
            json!({"metadata": {"name": "b", "namespace": "default"}, "status": {"phase": "Running"}}),
        ];
        let whole = super::super::envelope(&json!({
            "apiVersion": "v1", "kind": "PodList", "metadata": meta, "items": items,
        }))
        .unwrap()
        .unwrap();
        let enc = ListEncoder::new("v1", "PodList", &meta).unwrap().unwrap();
        let parts: Vec<Vec<u8>> = items.iter().map(|i| enc.item(i).unwrap()).collect();
        let len = parts.iter().map(Vec::len).sum();
        let mut streamed = enc.head(len);
        for p in parts {
            streamed.extend_from_slice(&p);
        }
        assert_eq!(streamed, whole);
    }
}
