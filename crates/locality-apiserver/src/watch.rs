//! Watch: from a resourceVersion or the current state, with objects entering and leaving a
//! selection and workload status changes, as JSON lines or length-delimited protobuf
//! `WatchEvent` frames, through a queue bounded in bytes ([`crate::watch_queue`]): a watcher
//! that does not take its events is closed with its connection, and the client re-watches.

use std::sync::Arc;
use std::time::Duration;

use http::Response;
use hyper::body::Bytes;
use locality_sim::{EventType, Object};
use serde_json::{Value, json};

use crate::connections::Conn;
use crate::encode::{self, Ctx};
use crate::event_cache::EventKey;
use crate::filter::{LastSeen, filter};
use crate::http::{Body, Query, line, streamed};
use crate::protobuf::Output;
use crate::read::table_of;
use crate::status::ApiError;
use crate::status_watch::StatusWatch;
use crate::target::{Target, Want, store_kind};
use crate::watch_queue::{self, Stopped, WATCH_QUEUE_BYTES, WATCH_STALL_TIMEOUT};
use crate::{Shared, Sim};

/// Objects of the initial state encoded per turn of the simulation's lock.
const INITIAL_BATCH: usize = 256;

/// What a watch sends first.
enum First {
    /// The current state, as `ADDED` events (a watch without a resourceVersion).
    State(Vec<(Arc<Object>, u64)>),
    /// Nothing: the events after the resourceVersion follow.
    Nothing,
    /// An `ERROR` event (the resourceVersion is too old), then the end.
    Error(ApiError),
}

/// Serves a watch of `t`; `conn` is the connection it answers on (closed when the watcher is
/// too slow).
pub(crate) async fn watch(
    shared: &Arc<Shared>,
    t: &Target,
    q: &Query,
    want: Want,
    conn: Option<Arc<Conn>>,
) -> Result<Response<Body>, ApiError> {
    let f = filter(t, q)?;
    let from = crate::list_options::resource_version(q)?;
    let timeout = crate::list_options::watch_timeout(q)?;
    let (tx, rx) = watch_queue::channel(WATCH_QUEUE_BYTES, WATCH_STALL_TIMEOUT);
    let kind = store_kind(t);
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
                (First::State(objs), now_rv)
            }
            Some(rv) if rv < sim.expire_before => (
                First::Error(ApiError::gone(format!(
                    "too old resource version: {rv} ({}) (simulated watch expiry)",
                    sim.expire_before
                ))),
                rv,
            ),
            Some(rv) => match store.events_since(rv) {
                Err(e) => (
                    First::Error(ApiError::gone(format!("too old resource version: {rv} ({e})"))),
                    rv,
                ),
                Ok(_) => (First::Nothing, rv),
            },
        }
    };
    tokio::spawn(async move {
        // Bounded (`MAX_WATCH_TIMEOUT`): the deadline cannot overflow; saturate anyway.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(timeout)
            .unwrap_or(now + Duration::from_secs(3600));
        let sent = async {
            match first {
                First::Error(e) => {
                    tx.send(event(want, "ERROR", e.to_status())).await?;
                    return Ok(());
                }
                First::Nothing => {}
                First::State(objs) => {
                    for batch in objs.chunks(INITIAL_BATCH) {
                        let lines = encode_events(
                            &mut shared.lock(),
                            &t,
                            want,
                            batch.iter().map(|(o, rv)| (EventType::Added, o, *rv)),
                        );
                        for l in lines {
                            tx.send(l).await?;
                        }
                    }
                }
            }
            let mut last = LastSeen::new();
            loop {
                let lines = {
                    let mut sim = shared.lock();
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
                    encode_events(
                        &mut sim,
                        &t,
                        want,
                        selected.iter().map(|(ty, o, rv)| (*ty, o, *rv)),
                    )
                };
                for l in lines {
                    tx.send(l).await?;
                }
                tokio::select! {
                    r = changed.changed() => if r.is_err() { break },
                    // A forced expiry (`--expire-watches`) ends the watch; the client re-watches.
                    _ = expired.changed() => break,
                    () = tokio::time::sleep_until(deadline) => break,
                    () = tx.closed() => break,
                }
            }
            Ok::<(), Stopped>(())
        };
        let outcome = tokio::select! {
            outcome = sent => outcome,
            () = tokio::time::sleep_until(deadline) => Ok(()),
        };
        // A watcher that cannot keep up: its connection closes (with what hyper still holds
        // for it), as the real watch cache closes an unresponsive watcher.
        if outcome == Err(Stopped::TooSlow)
            && let Some(conn) = conn
        {
            conn.close();
        }
    });
    let content_type = match want.output {
        Output::Json => "application/json",
        Output::Protobuf => crate::protobuf::WATCH_MEDIA_TYPE,
    };
    Ok(streamed(Body::Queued(rx), content_type))
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
    sim: &mut Sim,
    t: &Target,
    want: Want,
    events: impl Iterator<Item = (EventType, &'a Arc<Object>, u64)>,
) -> Vec<Bytes> {
    let at = (sim.engine.store().resource_version(), sim.engine.now());
    let Sim {
        engine,
        raw,
        watch_events,
        ..
    } = sim;
    let ctx = Ctx::new(engine, raw);
    let now = engine.now();
    let one = |ty: EventType, o: &Arc<Object>, rv: u64| {
        let object = if want.table {
            table_of(
                &ctx,
                t,
                &[(o.clone(), rv)],
                want,
                now,
                json!({"resourceVersion": rv.to_string()}),
            )
        } else {
            encode::encode(&ctx, o, rv)
        };
        event(want, ty.as_str(), object)
    };
    events
        .map(|(ty, o, rv)| match o.key() {
            // A `Table` row depends on what the client asked (columns, included object).
            Some(key) if !want.table => {
                let k = EventKey {
                    key,
                    resource_version: rv,
                    event_type: ty,
                    output: want.output,
                };
                watch_events.get_or_encode(at, k, || one(ty, o, rv))
            }
            _ => one(ty, o, rv),
        })
        .collect()
}
