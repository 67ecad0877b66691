//! The reading verbs: get, list (selectors, `limit`/`continue`) and watch (from a
//! resourceVersion, with objects entering and leaving a selection), as JSON, protobuf or `Table` (a watch in protobuf is length-delimited `WatchEvent` frames).

use crate::status_watch::StatusWatch;
use std::sync::Arc;

use http::Response;
use hyper::body::Bytes;
use locality_sim::EventType;
use locality_sim::{Object, ObjectKey};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::encode::{self, Ctx};
use crate::filter::{LastSeen, filter};
use crate::http::{Body, Query, json_response, line, stream_response};
use crate::protobuf::Output;
use crate::status::ApiError;
use crate::target::{Include, Target, Want, key_of, store_kind};
use crate::{Shared, Sim, table};

fn list_kind(t: &Target) -> String {
    format!("{}List", t.r.kind_name)
}

/// `Table` JSON for objects (each with its resourceVersion).
fn table_of(
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

pub(crate) fn list(
    shared: &Arc<Shared>,
    t: &Target,
    q: &Query,
    want: Want,
) -> Result<Response<Body>, ApiError> {
    let f = filter(t, q)?;
    let limit = crate::list_options::limit(q)?;
    let after = match q.get("continue") {
        None | Some("") => None,
        Some(c) => Some(
            parse_continue(c)
                .ok_or_else(|| ApiError::bad_request("invalid continue token (simulated API server)"))?,
        ),
    };
    let mut sim = shared.lock();
    sim.catch_up();
    let sim = &*sim;
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
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    let v = if want.table {
        table_of(&ctx, t, &items, want, sim.engine.now(), meta)
    } else {
        let encoded: Vec<Value> = items.iter().map(|(o, rv)| encode::encode(&ctx, o, *rv)).collect();
        json!({"kind": list_kind(t), "apiVersion": t.r.api_version(), "metadata": meta, "items": encoded})
    };
    Ok(json_response(200, &v))
}

pub(crate) async fn watch(
    shared: &Arc<Shared>,
    t: &Target,
    q: &Query,
    want: Want,
) -> Result<Response<Body>, ApiError> {
    let f = filter(t, q)?;
    let from = crate::list_options::resource_version(q)?;
    let timeout = crate::list_options::watch_timeout(q)?;
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let kind = store_kind(t);
    let kind_name = t.r;
    let t = Target {
        r: t.r,
        namespace: t.namespace.clone(),
        name: None,
        sub: None,
    };
    let shared = shared.clone();
    let mut changed = shared.changed.subscribe();
    let mut expired = shared.expired.subscribe();
    let mut statuses = StatusWatch::new(kind);
    // First batch: the initial state (no resourceVersion) or the replay from `from`.
    let (first, mut cursor) = {
        let mut sim = shared.lock();
        sim.catch_up();
        // The statuses the first batch carries. A watch from an older resourceVersion has no
        // baseline: the client read the statuses then, and they may have changed since with
        // no event of the watched kind, so its first pass sends every workload it sees.
        if from.is_none_or(|rv| rv >= sim.engine.store().resource_version()) {
            statuses.changed(&sim, &f, &[]);
        } else {
            statuses.resend_unseen();
        }
        let store = sim.engine.store();
        let now_rv = store.resource_version();
        match from {
            None => {
                let objs: Vec<(Arc<Object>, u64)> = kind.map_or_else(Vec::new, |k| {
                    store
                        .list(k)
                        .filter(|(key, s)| f.matches(key, &s.object))
                        .map(|(_, s)| (s.object.clone(), s.resource_version))
                        .collect()
                });
                let lines = encode_events(
                    &sim,
                    &t,
                    want,
                    objs.iter().map(|(o, rv)| (EventType::Added, o, *rv)),
                );
                (Ok(lines), now_rv)
            }
            Some(rv) if rv < sim.expire_before => (
                Err(ApiError::gone(format!(
                    "too old resource version: {rv} ({}) (simulated watch expiry)",
                    sim.expire_before
                ))),
                rv,
            ),
            Some(rv) => match store.events_since(rv) {
                Err(e) => (
                    Err(ApiError::gone(format!("too old resource version: {rv} ({e})"))),
                    rv,
                ),
                Ok(_) => (Ok(Vec::new()), rv),
            },
        }
    };
    let _ = kind_name;
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut last = LastSeen::new();
        match first {
            Err(e) => {
                let _ = tx.send(event(want, "ERROR", e.to_status())).await;
                return;
            }
            Ok(lines) => {
                for l in lines {
                    if tx.send(l).await.is_err() {
                        return;
                    }
                }
            }
        }
        loop {
            let lines = {
                let sim = shared.lock();
                let Ok(events) = sim.engine.store().events_since(cursor) else {
                    break;
                };
                let store = sim.engine.store();
                let mut selected: Vec<(EventType, Arc<Object>, u64)> = events
                    .iter()
                    .filter(|e| Some(e.key.kind) == kind)
                    .filter_map(|e| f.convert(e, &mut last, store))
                    .collect();
                cursor = events.last().map_or(cursor, |e| e.resource_version);
                let status_only = statuses.changed(&sim, &f, &selected);
                selected.extend(status_only);
                encode_events(&sim, &t, want, selected.iter().map(|(ty, o, rv)| (*ty, o, *rv)))
            };
            for l in lines {
                if tx.send(l).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { break },
                // A forced expiry (`--expire-watches`) ends the watch; the client re-watches.
                _ = expired.changed() => break,
                () = tokio::time::sleep_until(deadline) => break,
                () = tx.closed() => break,
            }
        }
    });
    let content_type = match want.output {
        Output::Json => "application/json",
        Output::Protobuf => crate::protobuf::WATCH_MEDIA_TYPE,
    };
    Ok(stream_response(rx, content_type))
}

/// One watch event in the negotiated framing: a JSON line, or a length-delimited protobuf
/// `WatchEvent` (an object protobuf cannot carry is sent as an `ERROR` event saying so,
/// which client-go reports).
fn event(want: Want, event_type: &str, object: Value) -> Bytes {
    match want.output {
        Output::Json => line(&json!({"type": event_type, "object": object})),
        Output::Protobuf => crate::protobuf::watch_frame(event_type, &object).unwrap_or_else(|why| {
            let e = ApiError::internal(format!(
                "the simulated API server could not write a watch event in protobuf: {why}"
            ));
            crate::protobuf::watch_frame("ERROR", &e.to_status()).unwrap_or_default()
        }),
    }
}

fn encode_events<'a>(
    sim: &Sim,
    t: &Target,
    want: Want,
    events: impl Iterator<Item = (EventType, &'a Arc<Object>, u64)>,
) -> Vec<Bytes> {
    let ctx = Ctx::new(&sim.engine, &sim.raw);
    events
        .map(|(ty, o, rv)| {
            let object = if want.table {
                table_of(
                    &ctx,
                    t,
                    &[(o.clone(), rv)],
                    want,
                    sim.engine.now(),
                    json!({"resourceVersion": rv.to_string()}),
                )
            } else {
                encode::encode(&ctx, o, rv)
            };
            event(want, ty.as_str(), object)
        })
        .collect()
}
