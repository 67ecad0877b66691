//! Big list answers written item by item: in JSON streamed to the client in chunks of
//! [`BATCH`] items, each encoded under the simulation's lock and written at once (the list is
//! never one JSON tree, and other requests are served between chunks); in protobuf encoded
//! item by item into the envelope ([`crate::protobuf::ListEncoder`]), whose length must be
//! known before its first byte. The peak is then the answer's bytes (JSON: a few chunks of
//! it), not several copies of it. Upstream streams list answers likewise
//! (k8s.io/apimachinery `pkg/runtime/serializer/json` `StreamingCollectionsEncoding`, 1.33).

use std::sync::Arc;

use http::Response;
use hyper::body::Bytes;
use locality_sim::Object;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::Shared;
use crate::encode::{self, Ctx};
use crate::http::{Body, stream_response};
use crate::protobuf::{ListEncoder, MEDIA_TYPE};
use crate::status::ApiError;

/// Lists with more items than this are written item by item (smaller ones whole, with a
/// `Content-Length`).
pub(crate) const STREAM_AFTER: usize = 500;

/// Items encoded per turn of the simulation's lock; the task yields after each batch, so the
/// server's one thread also accepts connections and serves other requests while a big list
/// is written (tokio polls for I/O only between tasks' turns).
const BATCH: usize = 64;

/// JSON chunks written ahead of what the client has read.
const QUEUED_CHUNKS: usize = 4;

/// A list of `kind` (`PodList`) in `api_version` with `meta`, its `items` (object and
/// resourceVersion) encoded as the client asked.
///
/// # Errors
/// In protobuf, an item or `meta` protobuf cannot carry: `500`, as a whole answer's.
pub(crate) async fn answer(
    shared: &Arc<Shared>,
    protobuf: bool,
    api_version: &str,
    kind: &str,
    meta: Value,
    items: Vec<(Arc<Object>, u64)>,
) -> Result<Response<Body>, ApiError> {
    if protobuf {
        return protobuf_answer(shared, api_version, kind, &meta, &items).await;
    }
    let (tx, rx) = mpsc::channel::<Bytes>(QUEUED_CHUNKS);
    let head = format!(
        "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{},\"items\":[",
        Value::from(kind),
        Value::from(api_version),
        meta
    );
    let shared = shared.clone();
    tokio::spawn(async move {
        if tx.send(Bytes::from(head)).await.is_err() {
            return;
        }
        for (n, batch) in items.chunks(BATCH).enumerate() {
            let chunk = {
                let sim = shared.lock();
                let ctx = Ctx::new(&sim.engine, &sim.raw);
                let mut out = Vec::new();
                for (i, (o, rv)) in batch.iter().enumerate() {
                    if n > 0 || i > 0 {
                        out.push(b',');
                    }
                    // Writing a `Value` to a `Vec` cannot fail.
                    let _ = serde_json::to_writer(&mut out, &encode::encode(&ctx, o, *rv));
                }
                out
            };
            if tx.send(Bytes::from(chunk)).await.is_err() {
                return;
            }
            tokio::task::yield_now().await;
        }
        let _ = tx.send(Bytes::from_static(b"]}")).await;
    });
    Ok(stream_response(rx, "application/json"))
}

/// The protobuf answer, encoded before its first byte is sent (the envelope starts with the
/// length), a batch per turn of the lock, yielding between batches.
async fn protobuf_answer(
    shared: &Arc<Shared>,
    api_version: &str,
    kind: &str,
    meta: &Value,
    items: &[(Arc<Object>, u64)],
) -> Result<Response<Body>, ApiError> {
    let failed = |why: String| {
        ApiError::internal(format!(
            "the simulated API server could not write its answer in protobuf: {why}"
        ))
    };
    let enc = ListEncoder::new(api_version, kind, meta)
        .ok_or_else(|| failed(format!("no protobuf message for {kind}")))?
        .map_err(failed)?;
    let mut chunks = Vec::with_capacity(items.len().div_ceil(BATCH) + 1);
    let mut len = 0;
    for batch in items.chunks(BATCH) {
        let out = {
            let sim = shared.lock();
            let ctx = Ctx::new(&sim.engine, &sim.raw);
            let mut out = Vec::new();
            for (o, rv) in batch {
                out.extend_from_slice(&enc.item(&encode::encode(&ctx, o, *rv)).map_err(failed)?);
            }
            out
        };
        len += out.len();
        chunks.push(Bytes::from(out));
        tokio::task::yield_now().await;
    }
    let (tx, rx) = mpsc::channel::<Bytes>(chunks.len() + 1);
    for chunk in std::iter::once(Bytes::from(enc.head(len))).chain(chunks) {
        // The channel holds every chunk: sending cannot fail while `rx` lives.
        let _ = tx.try_send(chunk);
    }
    Ok(stream_response(rx, MEDIA_TYPE))
}
