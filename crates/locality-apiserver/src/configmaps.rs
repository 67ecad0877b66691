//! ConfigMaps, served **read-only**: the simulated store holds no ConfigMaps, so the server
//! answers with the fixed set it published when it started (kube-proxy's configuration, see
//! the `kube_system` module).
//!
//! Served: get, list (namespace, label selector, field selector on `metadata.name` and
//! `metadata.namespace`; the whole set in one page), watch (the matching ConfigMaps as `ADDED`
//! when no `resourceVersion` is given, then nothing until `timeoutSeconds` or the client
//! leaves: they never change) and `Table` answers for `kubectl get configmaps`. Every write
//! answers `405 MethodNotAllowed`.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Response};
use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::age::age;
use crate::http::{Body, Query, json_response, line, stream_response};
use crate::status::ApiError;
use crate::target::Target;
use crate::{Shared, select};

/// Fields a ConfigMap field selector may name.
const FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

/// Answers a request for `configmaps`.
pub(crate) fn request(
    shared: &Arc<Shared>,
    method: &Method,
    t: &Target,
    q: &Query,
    table: bool,
) -> Result<Response<Body>, ApiError> {
    if *method != Method::GET || t.sub.is_some() {
        return Err(ApiError::method_not_allowed(
            method.as_str(),
            &format!("{} (served read-only by the simulated API server)", t.r.plural),
        ));
    }
    let labels = select::parse_label_selector(q.get("labelSelector").unwrap_or_default())?;
    let fields =
        select::parse_field_selector(q.get("fieldSelector").unwrap_or_default(), FIELDS, t.r.plural)?;
    let mut sim = shared.lock();
    sim.catch_up();
    let now = sim.engine.now();
    let rv = sim.engine.store().resource_version();
    let field = |cm: &Value, f: &str| {
        let key = f.strip_prefix("metadata.").unwrap_or(f);
        cm["metadata"][key].as_str().unwrap_or_default().to_string()
    };
    let selected: Vec<Value> = sim
        .config_maps
        .iter()
        .filter(|cm| {
            t.namespace
                .as_deref()
                .is_none_or(|ns| cm["metadata"]["namespace"] == ns)
        })
        .filter(|cm| t.name.as_deref().is_none_or(|n| cm["metadata"]["name"] == n))
        .filter(|cm| select::label_matches(&labels, &crate::stored::string_map(&cm["metadata"]["labels"])))
        .filter(|cm| select::fields_match(&fields, |f| field(cm, f)))
        .cloned()
        .collect();
    drop(sim);
    if let Some(name) = &t.name {
        let cm = selected
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::not_found(t.r.plural, t.r.group, name))?;
        let v = if table {
            table_of(&[cm], now, json!({"resourceVersion": rv.to_string()}))
        } else {
            cm
        };
        return Ok(json_response(200, &v));
    }
    if q.flag("watch") && q.get("watch").is_some() {
        let from = crate::list_options::resource_version(q)?;
        let events: Vec<Value> = if from.is_some() { Vec::new() } else { selected };
        let timeout = crate::list_options::watch_timeout(q)?;
        return Ok(watch(events, table, now, timeout));
    }
    let meta = json!({"resourceVersion": rv.to_string()});
    let v = if table {
        table_of(&selected, now, meta)
    } else {
        json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": selected})
    };
    Ok(json_response(200, &v))
}

/// `Table` of ConfigMaps as `kubectl get configmaps` shows them: name, data count, age.
fn table_of(items: &[Value], now: u64, list_meta: Value) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|cm| {
            let data = cm["data"].as_object().map_or(0, serde_json::Map::len);
            json!({
                "cells": [cm["metadata"]["name"], data, age(cm["metadata"]["creationTimestamp"].as_str(), now)],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                           "metadata": cm["metadata"]},
            })
        })
        .collect();
    let column = |name: &str, ty: &str| {
        let format = if name == "Name" { "name" } else { "" };
        json!({"name": name, "type": ty, "format": format, "priority": 0,
               "description": format!("{name} (simulated cluster)")})
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": [column("Name", "string"), column("Data", "string"), column("Age", "string")],
        "rows": rows,
    })
}

/// A watch: `events` as `ADDED`, then an open stream until `timeout` or the client leaves.
fn watch(events: Vec<Value>, table: bool, now: u64, timeout: Duration) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        for cm in events {
            let object = if table {
                let rv = cm["metadata"]["resourceVersion"].clone();
                table_of(std::slice::from_ref(&cm), now, json!({"resourceVersion": rv}))
            } else {
                cm
            };
            if tx
                .send(line(&json!({"type": "ADDED", "object": object})))
                .await
                .is_err()
            {
                return;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(timeout) => {}
            () = tx.closed() => {}
        }
    });
    stream_response(rx, "application/json")
}
