//! The reading verbs get and list (selectors, `limit`/`continue`), as JSON, protobuf or
//! `Table`; watch is in [`crate::watch`].

use std::sync::Arc;

use http::Response;
use locality_sim::{Object, ObjectKey};
use serde_json::{Value, json};

use crate::encode::{self, Ctx};
use crate::filter::filter;
use crate::http::{Body, Query, json_response};
use crate::status::ApiError;
use crate::target::{Include, Target, Want, key_of, store_kind};
use crate::{Shared, table};

fn list_kind(t: &Target) -> String {
    format!("{}List", t.r.kind_name)
}

/// `Table` JSON for objects (each with its resourceVersion).
pub(crate) fn table_of(
    ctx: &Ctx<'_>,
    t: &Target,
    items: &[(Arc<Object>, u64)],
    want: Want,
    now: u64,
    list_meta: Value,
) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|(o, rv)| {
            let encoded = encode::encode(ctx, o, *rv);
            let mut row = json!({"cells": table::cells(o, &encoded, now)});
            match want.include {
                Include::Object => row["object"] = encoded,
                Include::Metadata => {
                    row["object"] = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                           "metadata": encoded["metadata"]});
                }
                Include::None => {}
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": table::column_definitions(t.r.kind),
        "rows": rows,
    })
}

pub(crate) fn get(
    shared: &Arc<Shared>,
    t: &Target,
    name: &str,
    want: Want,
) -> Result<Response<Body>, ApiError> {
    let sim = shared.lock();
    let not_found = || ApiError::not_found(t.r.plural, t.r.group, name);
    let kind = store_kind(t).ok_or_else(not_found)?;
    let key = key_of(t, kind, name);
    let stored = sim.engine.store().get(&key).ok_or_else(not_found)?;
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    let v = if want.table {
        let rv = stored.resource_version;
        table_of(
            &ctx,
            t,
            &[(stored.object.clone(), rv)],
            want,
            sim.engine.now(),
            json!({"resourceVersion": rv.to_string()}),
        )
    } else {
        encode::encode(&ctx, &stored.object, stored.resource_version)
    };
    Ok(json_response(200, &v))
}

/// `continue` token: the resourceVersion and the last key returned.
fn continue_token(rv: u64, key: &ObjectKey) -> String {
    let raw = format!("{}\u{0}{}", key.namespace, key.name);
    let hex: String = raw.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{rv}-{hex}")
}

fn parse_continue(token: &str) -> Option<(u64, String, String)> {
    let (rv, hex) = token.split_once('-')?;
    let rv = rv.parse().ok()?;
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    let s = String::from_utf8(bytes?).ok()?;
    let (ns, name) = s.split_once('\u{0}')?;
    Some((rv, ns.to_string(), name.to_string()))
}

/// A list answered whole, or items to write one by one (see [`crate::list_stream`]).
enum Listed {
    Whole(Response<Body>),
    ItemByItem(Value, Vec<(Arc<Object>, u64)>),
}

pub(crate) async fn list(
    shared: &Arc<Shared>,
    t: &Target,
    q: &Query,
    want: Want,
) -> Result<Response<Body>, ApiError> {
    match listed(shared, t, q, want)? {
        Listed::Whole(answer) => Ok(answer),
        Listed::ItemByItem(meta, items) => {
            let protobuf = want.output == crate::protobuf::Output::Protobuf;
            crate::list_stream::answer(shared, protobuf, &t.r.api_version(), &list_kind(t), meta, items).await
        }
    }
}

fn listed(shared: &Arc<Shared>, t: &Target, q: &Query, want: Want) -> Result<Listed, ApiError> {
    let f = filter(t, q)?;
    let limit = crate::list_options::limit(q)?;
    let after = match q.get("continue") {
        None | Some("") => None,
        Some(c) => Some(
            parse_continue(c)
                .ok_or_else(|| ApiError::bad_request("invalid continue token (simulated API server)"))?,
        ),
    };
    let mut guard = shared.lock();
    guard.catch_up();
    let sim = &*guard;
    let store = sim.engine.store();
    let rv = after.as_ref().map_or(store.resource_version(), |a| a.0);
    let mut items: Vec<(Arc<Object>, u64)> = Vec::new();
    let mut next = None;
    if let Some(kind) = store_kind(t) {
        let iter: Box<dyn Iterator<Item = (&ObjectKey, &locality_sim::Stored)>> = match &f.namespace {
            Some(ns) => Box::new(store.list_namespace(kind, ns)),
            None => Box::new(store.list(kind)),
        };
        for (k, s) in iter {
            if let Some((_, ns, name)) = &after
                && (k.namespace.as_str(), k.name.as_str()) <= (ns.as_str(), name.as_str())
            {
                continue;
            }
            if !f.matches(k, &s.object) {
                continue;
            }
            if limit > 0 && items.len() == limit {
                next = items
                    .last()
                    .and_then(|(o, _)| o.key())
                    .map(|k| continue_token(rv, &k));
                break;
            }
            items.push((s.object.clone(), s.resource_version));
        }
    }
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(n) = next {
        meta["continue"] = json!(n);
    }
    if !want.table && items.len() > crate::list_stream::STREAM_AFTER {
        return Ok(Listed::ItemByItem(meta, items));
    }
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    let v = if want.table {
        table_of(&ctx, t, &items, want, sim.engine.now(), meta)
    } else {
        let encoded: Vec<Value> = items.iter().map(|(o, rv)| encode::encode(&ctx, o, *rv)).collect();
        json!({"kind": list_kind(t), "apiVersion": t.r.api_version(), "metadata": meta, "items": encoded})
    };
    Ok(Listed::Whole(json_response(200, &v)))
}
