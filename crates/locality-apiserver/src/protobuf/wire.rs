//! The protobuf wire format (varints, length-delimited fields) read against the [`Schema`]
//! into Kubernetes JSON (the rules are in the parent module's docs).

use serde_json::{Map, Value};

use super::schema::{Card, Field, Message, Schema, Special, Ty};

/// Deepest message nesting read (a Deployment's container probe is about 10 deep).
const MAX_DEPTH: usize = 64;

/// The envelope's `runtime.Unknown`.
#[derive(Debug, Default)]
pub(super) struct Unknown<'a> {
    pub api_version: String,
    pub kind: String,
    pub raw: &'a [u8],
    pub content_encoding: String,
}

/// A field's value on the wire.
enum Wire<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32,
}

impl Wire<'_> {
    fn name(&self) -> &'static str {
        match self {
            Wire::Varint(_) => "varint",
            Wire::Fixed64 => "fixed64",
            Wire::Bytes(_) => "length-delimited",
            Wire::Fixed32 => "fixed32",
        }
    }
}

/// A cursor over one message's bytes.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err("truncated varint".into());
            };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or("truncated message")?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The next field's number and value, `None` at the end.
    fn field(&mut self) -> Result<Option<(u32, Wire<'a>)>, String> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let tag = u32::try_from(key >> 3).map_err(|_| format!("field number {} out of range", key >> 3))?;
        if tag == 0 {
            return Err("field number 0".into());
        }
        let value = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Fixed64
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| "length out of range")?;
                Wire::Bytes(self.take(n)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed32
            }
            t => return Err(format!("field {tag}: unsupported wire type {t}")),
        };
        Ok(Some((tag, value)))
    }
}

/// The fields of `runtime.Unknown` (k8s.io/apimachinery `pkg/runtime/generated.proto`).
pub(super) fn envelope(data: &[u8]) -> Result<Unknown<'_>, String> {
    let mut u = Unknown::default();
    let mut r = Reader::new(data);
    while let Some((tag, w)) = r.field()? {
        match (tag, w) {
            (1, Wire::Bytes(type_meta)) => {
                let mut t = Reader::new(type_meta);
                while let Some((tag, w)) = t.field()? {
                    match (tag, w) {
                        (1, Wire::Bytes(b)) => u.api_version = text(b),
                        (2, Wire::Bytes(b)) => u.kind = text(b),
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(b)) => u.raw = b,
            (3, Wire::Bytes(b)) => u.content_encoding = text(b),
            // contentType: the form of `raw` ("" for protobuf, the only one upstream writes).
            (4, Wire::Bytes(_)) => {}
            (1..=4, w) => return Err(format!("runtime.Unknown field {tag}: unexpected {}", w.name())),
            _ => {}
        }
    }
    Ok(u)
}

/// Message `m` of `schema` read from `data`, as JSON.
pub(super) fn decode(schema: &Schema, m: usize, data: &[u8]) -> Result<Value, String> {
    message(schema, m, data, 0)
}

fn message(schema: &Schema, m: usize, data: &[u8], depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("messages nested deeper than {MAX_DEPTH}"));
    }
    let msg = &schema.messages[m];
    if let Some(special) = msg.special {
        return self::special(schema, msg, special, data, depth);
    }
    let mut out = Map::new();
    object(schema, msg, data, depth, &mut out)?;
    Ok(Value::Object(out))
}

/// The fields of `msg` in `data`, into `out` (an inline message's go into its outer object's).
fn object(
    schema: &Schema,
    msg: &Message,
    data: &[u8],
    depth: usize,
    out: &mut Map<String, Value>,
) -> Result<(), String> {
    let mut r = Reader::new(data);
    while let Some((tag, w)) = r.field()? {
        // Unknown fields are skipped, as upstream's generated Unmarshal skips them.
        let Some(f) = msg.field(tag) else { continue };
        let at = || format!("{}.{} (field {tag})", short(&msg.name), f.json);
        match f.card {
            Card::Opt => {
                if let Some(v) = value(schema, f, w, depth).map_err(|e| format!("{}: {e}", at()))? {
                    if v.as_str() == Some("") && matches!(f.ty, Ty::String | Ty::Bytes) {
                        continue;
                    }
                    out.insert(f.json.clone(), v);
                }
            }
            Card::Inline => {
                let (Ty::Message(inner), Wire::Bytes(b)) = (f.ty, &w) else {
                    return Err(format!("{}: expected a message, got {}", at(), w.name()));
                };
                object(schema, &schema.messages[inner], b, depth + 1, out)?;
            }
            Card::Rep => {
                let items = out
                    .entry(f.json.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                let Value::Array(items) = items else {
                    unreachable!("repeated fields are arrays")
                };
                match (f.ty, w) {
                    // Packed numbers (proto2 repeated numbers are unpacked upstream; both read).
                    (Ty::Int32 | Ty::Int64 | Ty::Bool, Wire::Bytes(b)) => {
                        let mut p = Reader::new(b);
                        while p.pos < b.len() {
                            items.push(scalar(f.ty, p.varint().map_err(|e| format!("{}: {e}", at()))?));
                        }
                    }
                    (_, w) => {
                        // An empty string in a list is kept (`args: [""]`).
                        let v = value(schema, f, w, depth).map_err(|e| format!("{}: {e}", at()))?;
                        items.push(v.unwrap_or(Value::Null));
                    }
                }
            }
            Card::Map => {
                let Wire::Bytes(entry) = w else {
                    return Err(format!("{}: expected a map entry, got {}", at(), w.name()));
                };
                let (k, v) = map_entry(schema, f, entry, depth).map_err(|e| format!("{}: {e}", at()))?;
                let map = out
                    .entry(f.json.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = map {
                    map.insert(k, v);
                }
            }
        }
    }
    Ok(())
}

/// One value of field `f` (`None`: nothing to add, for a field type the wire does not carry).
fn value(schema: &Schema, f: &Field, w: Wire<'_>, depth: usize) -> Result<Option<Value>, String> {
    Ok(Some(match (f.ty, w) {
        (Ty::Int32 | Ty::Int64 | Ty::Bool, Wire::Varint(n)) => scalar(f.ty, n),
        (Ty::String, Wire::Bytes(b)) => Value::String(text(b)),
        (Ty::Bytes, Wire::Bytes(b)) => Value::String(base64(b)),
        (Ty::Message(m), Wire::Bytes(b)) => message(schema, m, b, depth + 1)?,
        (ty, w) => return Err(format!("a {ty:?} field sent as {}", w.name())),
    }))
}

/// A number or boolean from a varint (int32 is sign-extended to 64 bits on the wire).
fn scalar(ty: Ty, n: u64) -> Value {
    match ty {
        Ty::Int32 => Value::from(n as i32),
        Ty::Bool => Value::Bool(n != 0),
        _ => Value::from(n as i64),
    }
}

/// A map entry (`key` = 1, `value` = 2); a value left out is its type's empty value.
fn map_entry(schema: &Schema, f: &Field, entry: &[u8], depth: usize) -> Result<(String, Value), String> {
    let mut key = String::new();
    let mut val = None;
    let mut r = Reader::new(entry);
    while let Some((tag, w)) = r.field()? {
        match (tag, w) {
            (1, Wire::Bytes(b)) => key = text(b),
            (2, w) => val = value(schema, f, w, depth)?,
            _ => {}
        }
    }
    let val = match (val, f.ty) {
        (Some(v), _) => v,
        (None, Ty::Message(m)) => message(schema, m, &[], depth + 1)?,
        (None, Ty::Int32 | Ty::Int64) => Value::from(0),
        (None, Ty::Bool) => Value::Bool(false),
        (None, Ty::String | Ty::Bytes) => Value::String(String::new()),
    };
    Ok((key, val))
}

/// The JSON form of a [`Special`] message (k8s.io/apimachinery `pkg/apis/meta/v1`
/// `time_proto.go`, `micro_time_proto.go`, `duration.go`; `pkg/api/resource/quantity_proto.go`;
/// `pkg/util/intstr/intstr.go`; `pkg/runtime/extension.go`; `pkg/apis/meta/v1/helper.go`).
fn special(
    schema: &Schema,
    msg: &Message,
    special: Special,
    data: &[u8],
    depth: usize,
) -> Result<Value, String> {
    let mut ints = [0i64; 4];
    let mut text_field = String::new();
    let mut bytes_field: Option<&[u8]> = None;
    let mut r = Reader::new(data);
    while let Some((tag, w)) = r.field()? {
        match (tag, w) {
            (1..=3, Wire::Varint(n)) => ints[tag as usize] = n as i64,
            (_, Wire::Bytes(b)) if special == Special::IntOrString && tag == 3 => text_field = text(b),
            (1, Wire::Bytes(b)) if special == Special::Quantity => text_field = text(b),
            (1, Wire::Bytes(b)) => bytes_field = Some(b),
            (tag, w) if msg.field(tag).is_some() => {
                return Err(format!("{}: field {tag} sent as {}", short(&msg.name), w.name()));
            }
            _ => {}
        }
    }
    Ok(match special {
        Special::Time | Special::MicroTime => {
            let (secs, nanos) = (ints[1], ints[2] as i32);
            if secs == 0 && nanos == 0 {
                Value::Null
            } else {
                Value::String(rfc3339(secs, nanos, special == Special::MicroTime))
            }
        }
        Special::Duration => Value::String(go_duration(ints[1])),
        Special::Quantity if text_field.is_empty() => Value::String("0".into()),
        Special::Quantity => Value::String(text_field),
        // type: 0 Int, 1 String.
        Special::IntOrString if ints[1] == 1 => Value::String(text_field),
        Special::IntOrString => Value::from(ints[2] as i32),
        Special::RawExtension | Special::FieldsV1 => match bytes_field {
            None | Some([]) => Value::Null,
            Some(b) => match serde_json::from_slice(b) {
                Ok(v) => v,
                Err(e) => match b.strip_prefix(super::MAGIC) {
                    // An object embedded in protobuf form.
                    Some(inner) => {
                        let u = envelope(inner)?;
                        let m = schema.kind(&u.api_version, &u.kind).ok_or_else(|| {
                            format!("embedded kind {} ({}) not decoded", u.kind, u.api_version)
                        })?;
                        let mut v = message(schema, m, u.raw, depth + 1)?;
                        if let Some(o) = v.as_object_mut() {
                            o.insert("apiVersion".into(), u.api_version.into());
                            o.insert("kind".into(), u.kind.into());
                        }
                        v
                    }
                    None => return Err(format!("{}: raw is not JSON: {e}", short(&msg.name))),
                },
            },
        },
    })
}

/// A proto string as UTF-8 (invalid bytes replaced, as Go's `encoding/json` writes them).
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `Deployment` of `k8s.io.api.apps.v1.Deployment`.
fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Standard base64 with padding (Go's `encoding/json` form of `[]byte`).
pub(super) fn base64(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// RFC 3339 in UTC of Unix `secs` (+ `nanos`): seconds (`metav1.Time`) or microseconds
/// (`metav1.MicroTime`, `2006-01-02T15:04:05.000000Z07:00`); the Unix epoch for a time
/// outside the years 0–9999.
pub(super) fn rfc3339(secs: i64, nanos: i32, micros: bool) -> String {
    let t = jiff::Timestamp::new(secs, nanos.clamp(0, 999_999_999)).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    if micros {
        t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
    } else {
        t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}

/// Go's `time.Duration.String` of `ns` nanoseconds (`1h2m3.5s`, `1.5ms`, `0s`).
pub(super) fn go_duration(ns: i64) -> String {
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let body = if u < 1_000_000_000 {
        let (unit, div) = match u {
            0 => return "0s".into(),
            1..1_000 => ("ns", 1),
            1_000..1_000_000 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        format!("{}{unit}", fraction(u / div, u % div, div))
    } else {
        let secs = u / 1_000_000_000;
        let s = format!("{}s", fraction(secs % 60, u % 1_000_000_000, 1_000_000_000));
        let (m, h) = (secs / 60 % 60, secs / 3600);
        if h > 0 {
            format!("{h}h{m}m{s}")
        } else if m > 0 {
            format!("{m}m{s}")
        } else {
            s
        }
    };
    if neg { format!("-{body}") } else { body }
}

/// `whole.frac` with the fraction's trailing zeros dropped (`frac` of `one`).
fn fraction(whole: u64, frac: u64, one: u64) -> String {
    if frac == 0 {
        return whole.to_string();
    }
    let digits = one.ilog10() as usize;
    let f = format!("{frac:0digits$}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}
