//! Kubernetes JSON written as protobuf through the [`Schema`]: the inverse of [`super::wire`]
//! (the rules are in the parent module's docs), for answers a client asked in protobuf.
//!
//! Fields are written in tag order and map entries by key, as upstream's generated `Marshal`
//! writes them (`k8s.io/api/<group>/<version>/generated.pb.go`); a field absent from the JSON
//! is not written (upstream writes the zero of every non-pointer field; its `Unmarshal` reads
//! both alike). JSON keys the schema does not have are left out, as they would be by the Go
//! struct.

use base64::Engine as _;
use serde_json::Value;

use super::schema::{Card, Field, Schema, Special, Ty};

/// Deepest nesting written (as [`super::wire`] reads).
const MAX_DEPTH: usize = 64;

pub(super) fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A length-delimited field (wire type 2).
pub(super) fn field_bytes(out: &mut Vec<u8>, tag: u32, b: &[u8]) {
    varint(out, (u64::from(tag) << 3) | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A varint field (wire type 0); negative numbers sign-extended to 64 bits, as proto2 `int32`
/// and `int64` are.
pub(super) fn field_varint(out: &mut Vec<u8>, tag: u32, n: i64) {
    varint(out, u64::from(tag) << 3);
    varint(out, n as u64);
}

/// Message `m` of `schema` written from the JSON `v`.
///
/// # Errors
/// A value whose JSON type is not the field's (`spec.replicas: "3"`), naming the field.
pub(super) fn encode(schema: &Schema, m: usize, v: &Value) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    message(schema, m, v, 0, &mut out)?;
    Ok(out)
}

fn message(schema: &Schema, m: usize, v: &Value, depth: usize, out: &mut Vec<u8>) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("objects nested deeper than {MAX_DEPTH}"));
    }
    let msg = &schema.messages[m];
    let name = msg.name.rsplit('.').next().unwrap_or(&msg.name);
    if let Some(s) = msg.special {
        return special(s, v, out).map_err(|e| format!("{name}: {e}"));
    }
    let Value::Object(obj) = v else {
        return Err(format!("{name}: expected an object, got {v}"));
    };
    for f in &msg.fields {
        let at = |e: String| format!("{name}.{}: {e}", f.json);
        if f.card == Card::Inline {
            let Ty::Message(inner) = f.ty else {
                return Err(at("an inline field is a message".into()));
            };
            let mut b = Vec::new();
            message(schema, inner, v, depth + 1, &mut b)?;
            field_bytes(out, f.tag, &b);
            continue;
        }
        let Some(fv) = obj.get(&f.json).filter(|fv| !fv.is_null()) else {
            continue;
        };
        match f.card {
            Card::Opt => value(schema, f, fv, f.tag, depth, out)?,
            Card::Rep => {
                let Value::Array(items) = fv else {
                    return Err(at(format!("expected an array, got {fv}")));
                };
                for item in items.iter().filter(|i| !i.is_null()) {
                    value(schema, f, item, f.tag, depth, out)?;
                }
            }
            Card::Map => {
                let Value::Object(map) = fv else {
                    return Err(at(format!("expected an object, got {fv}")));
                };
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for k in keys {
                    let mut entry = Vec::new();
                    field_bytes(&mut entry, 1, k.as_bytes());
                    value(schema, f, &map[k], 2, depth, &mut entry)?;
                    field_bytes(out, f.tag, &entry);
                }
            }
            Card::Inline => unreachable!("handled above"),
        }
    }
    Ok(())
}

/// One value of field `f`, written as field `tag`.
fn value(
    schema: &Schema,
    f: &Field,
    v: &Value,
    tag: u32,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let wrong = || format!("{}: a {:?} field cannot hold {v}", f.json, f.ty);
    match f.ty {
        Ty::String => field_bytes(out, tag, v.as_str().ok_or_else(wrong)?.as_bytes()),
        Ty::Bytes => {
            let b = base64::engine::general_purpose::STANDARD
                .decode(v.as_str().ok_or_else(wrong)?)
                .map_err(|e| format!("{}: not base64: {e}", f.json))?;
            field_bytes(out, tag, &b);
        }
        Ty::Int32 | Ty::Int64 => field_varint(out, tag, v.as_i64().ok_or_else(wrong)?),
        Ty::Bool => field_varint(out, tag, i64::from(v.as_bool().ok_or_else(wrong)?)),
        Ty::Message(m) => {
            let mut b = Vec::new();
            message(schema, m, v, depth + 1, &mut b)?;
            field_bytes(out, tag, &b);
        }
    }
    Ok(())
}

/// The protobuf form of a [`Special`] message's JSON (the inverse of `wire::special`).
fn special(s: Special, v: &Value, out: &mut Vec<u8>) -> Result<(), String> {
    match (s, v) {
        (Special::Time | Special::MicroTime, Value::String(t)) => {
            let ts: jiff::Timestamp = t.parse().map_err(|e| format!("time {t:?}: {e}"))?;
            field_varint(out, 1, ts.as_second());
            field_varint(out, 2, i64::from(ts.subsec_nanosecond()));
        }
        (Special::Duration, Value::String(d)) => field_varint(out, 1, go_duration_ns(d)?),
        (Special::Quantity, Value::String(q)) => field_bytes(out, 1, q.as_bytes()),
        (Special::Quantity, Value::Number(n)) => field_bytes(out, 1, n.to_string().as_bytes()),
        // type: 0 Int, 1 String.
        (Special::IntOrString, Value::Number(n)) => {
            field_varint(out, 1, 0);
            field_varint(
                out,
                2,
                n.as_i64().ok_or_else(|| format!("{n} is not an integer"))?,
            );
        }
        (Special::IntOrString, Value::String(t)) => {
            field_varint(out, 1, 1);
            field_bytes(out, 3, t.as_bytes());
        }
        (Special::RawExtension | Special::FieldsV1, v) => {
            let raw = serde_json::to_vec(v).map_err(|e| e.to_string())?;
            field_bytes(out, 1, &raw);
        }
        (s, v) => return Err(format!("a {s:?} cannot be {v}")),
    }
    Ok(())
}

/// Nanoseconds of a Go `time.Duration` string (`1h2m3.5s`, `250ms`, `-1.5µs`, `0s`), as
/// Go's `time.ParseDuration` reads it.
pub(super) fn go_duration_ns(d: &str) -> Result<i64, String> {
    let bad = || format!("duration {d:?}: expected a Go duration such as 1m30s");
    let (neg, mut rest) = match d.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, d.strip_prefix('+').unwrap_or(d)),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let n: f64 = rest[..num_end].parse().map_err(|_| bad())?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(bad()),
        };
        total += n * unit;
        rest = &rest[unit_end..];
    }
    let ns = total.round() as i64;
    Ok(if neg { -ns } else { ns })
}
