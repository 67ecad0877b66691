//! Incoming objects (create, update): JSON checked against the request, parsed into the
//! model's types by `locality-ingest` (a pod's tolerations with their `tolerationSeconds`), with
//! the declared behaviour of simulated pods read from the pod spec (readiness probe, grace
//! period, agnhost's `--delay-shutdown`), and the mutating admission the API server runs before
//! validation (a pod's `DefaultTolerationSeconds`).

use locality_ingest::LoadOptions;
use locality_model::objects::{PodPhase, WorkloadKind};
use locality_sim::{Kind, Object};
use locality_sim::{PodBehaviour, ProbeHandler, ReadinessProbe, SimPod, SimWorkload};
use serde_json::Value;

use crate::resources::Resource;
use crate::status::ApiError;
use crate::stored::string_map;

/// Checks `body` against the request (kind, apiVersion, namespace), fills the namespace and a
/// `generateName` name, and returns the JSON to store.
pub fn prepare(r: &Resource, namespace: &str, body: &[u8], suffix: &str) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!("the simulated API server could not decode the body: {e}"))
    })?;
    prepare_value(r, namespace, v, suffix)
}

/// [`prepare`] for a decoded body (an update's, a patched or an applied object).
pub fn prepare_value(r: &Resource, namespace: &str, mut v: Value, suffix: &str) -> Result<Value, ApiError> {
    let Some(obj) = v.as_object_mut() else {
        return Err(ApiError::bad_request("the body is not a JSON object"));
    };
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    if kind.is_empty() || api.is_empty() {
        obj.entry("kind").or_insert_with(|| r.kind_name.into());
        obj.entry("apiVersion").or_insert_with(|| r.api_version().into());
    } else if kind != r.kind_name || api != r.api_version() {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api}) does not match the expected API version ({}) or kind {kind} is not {}",
            r.api_version(),
            r.kind_name
        )));
    }
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(meta) = meta.as_object_mut() else {
        return Err(ApiError::bad_request("metadata is not an object"));
    };
    if r.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            Some(ns) if !ns.is_empty() && ns != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {
                meta.insert("namespace".into(), namespace.into());
            }
        }
    } else {
        meta.remove("namespace");
    }
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        if let Some(prefix) = meta.get("generateName").and_then(Value::as_str) {
            let generated = format!("{prefix}{suffix}");
            meta.insert("name".into(), generated.into());
        } else {
            return Err(ApiError::invalid(
                r.kind_name,
                r.group,
                "",
                "metadata.name: Required value: name or generateName is required",
            ));
        }
    }
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(why) = invalid_name(&name) {
        return Err(ApiError::invalid(
            r.kind_name,
            r.group,
            &name,
            &format!("metadata.name: Invalid value: {name:?}: {why}"),
        ));
    }
    // Server-managed fields are the server's.
    for k in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "generation",
        "managedFields",
    ] {
        meta.remove(k);
    }
    Ok(v)
}

/// Why `name` is not a DNS-1123 subdomain, if it is not.
fn invalid_name(name: &str) -> Option<&'static str> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let ok_ends = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
    if name.len() > 253 || !ok_chars || !ok_ends {
        Some(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        )
    } else {
        None
    }
}

/// The model object of a prepared JSON object, ready for the engine.
pub fn to_object(r: &Resource, v: &Value) -> Result<Object, ApiError> {
    let name = v["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let invalid = |why: &str| ApiError::invalid(r.kind_name, r.group, &name, why);
    if r.kind == Some(Kind::Pod) {
        let containers = v["spec"]["containers"].as_array();
        if containers.is_none_or(|c| c.is_empty()) {
            return Err(invalid("spec.containers: Required value"));
        }
    }
    if let Some(kind) = r.kind.filter(|k| k.is_stored_only()) {
        return Ok(crate::stored::to_object(kind, v));
    }
    let bytes = serde_json::to_vec(v).map_err(|e| ApiError::internal(e.to_string()))?;
    let loaded = locality_ingest::load_bytes("request body", &bytes, &LoadOptions::default())
        .map_err(|e| invalid(&e.to_string()))?;
    let mut st = loaded.state;
    let obj = match r.kind {
        Some(Kind::Namespace) => st.namespaces.pop().map(Object::Namespace),
        Some(Kind::Node) => st.nodes.pop().map(|mut n| {
            if v.pointer("/status/conditions").is_none() {
                n.ready = Some(true);
            }
            Object::Node(n)
        }),
        Some(Kind::Pod) => st.pods.pop().map(|mut p| {
            p.phase = PodPhase::Pending;
            p.ready = false;
            p.pod_ips.clear();
            // Admission runs before validation (an update that leaves the defaults out keeps them).
            locality_sim::admit_default_toleration_seconds(&mut p.spec);
            Object::Pod(SimPod {
                behaviour: behaviour(&v["spec"]),
                pod: p,
                restart_count: 0,
            })
        }),
        Some(Kind::Service) => st.services.pop().map(Object::Service),
        Some(Kind::EndpointSlice) => st.endpoint_slices.pop().map(Object::EndpointSlice),
        Some(Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet | Kind::StatefulSet) => {
            st.workloads.pop().map(|mut w| {
                if w.kind != WorkloadKind::DaemonSet && w.replicas.is_none() {
                    w.replicas = Some(1);
                }
                Object::Workload(SimWorkload {
                    pod_behaviour: behaviour(&v["spec"]["template"]["spec"]),
                    workload: w,
                    template_annotations: string_map(&v["spec"]["template"]["metadata"]["annotations"]),
                    template_digest: unmodelled_digest(&v["spec"]["template"]["spec"]),
                    generation: 1,
                })
            })
        }
        Some(_) | None => None,
    };
    let mut obj = obj.ok_or_else(|| invalid("the simulated cluster could not read this object"))?;
    // The model keeps only the annotations it reads; the API keeps them all.
    let meta = obj.meta_mut();
    meta.labels = string_map(&v["metadata"]["labels"]);
    meta.annotations = string_map(&v["metadata"]["annotations"]);
    Ok(obj)
}

/// A digest of the container fields of a pod template the simulation passes through but does
/// not model (`image`, `command`, `args`, `env`, `envFrom` of containers and init containers),
/// 0 when none is set. A change in any of them gives the template a new hash.
pub fn unmodelled_digest(spec: &Value) -> u64 {
    let mut picked = Vec::new();
    for list in ["initContainers", "containers"] {
        for c in spec[list].as_array().into_iter().flatten() {
            for field in ["name", "image", "command", "args", "env", "envFrom"] {
                if !c[field].is_null() {
                    picked.push(format!("{list}.{field}={}", c[field]));
                }
            }
        }
    }
    if picked.is_empty() {
        return 0;
    }
    // FNV-1a over the fields (serde_json writes object keys sorted).
    picked
        .join("\n")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

/// A pod's declared behaviour from its spec JSON.
pub fn behaviour(spec: &Value) -> PodBehaviour {
    let mut b = PodBehaviour::default();
    if let Some(g) = spec["terminationGracePeriodSeconds"].as_u64() {
        b.termination_grace_period_seconds = g;
    }
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    let named_port = |name: &str| -> Option<u16> {
        containers.iter().find_map(|c| {
            c["ports"].as_array()?.iter().find_map(|p| {
                (p["name"].as_str() == Some(name))
                    .then(|| p["containerPort"].as_u64().and_then(|n| u16::try_from(n).ok()))
                    .flatten()
            })
        })
    };
    let port_of = |v: &Value| -> Option<u16> {
        v.as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .or_else(|| v.as_str().and_then(named_port))
    };
    for c in &containers {
        let image = c["image"].as_str().unwrap_or_default();
        let args: Vec<&str> = c["command"]
            .as_array()
            .into_iter()
            .chain(c["args"].as_array())
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if image.contains("/pause")
            || args
                .first()
                .is_some_and(|a| *a == "sleep" || a.ends_with("/sleep"))
        {
            b.listens = false;
        }
        for (i, a) in args.iter().enumerate() {
            let val = a
                .strip_prefix("--delay-shutdown=")
                .map(str::to_string)
                .or_else(|| {
                    (*a == "--delay-shutdown")
                        .then(|| args.get(i + 1).map(|s| s.to_string()))
                        .flatten()
                });
            if let Some(s) = val.and_then(|s| s.parse::<u64>().ok()) {
                b.shutdown_delay_seconds = s;
            }
        }
        let probe = &c["readinessProbe"];
        if probe.is_object() && b.readiness.is_none() {
            let handler = if let Some(p) = port_of(&probe["tcpSocket"]["port"]) {
                Some(ProbeHandler::TcpSocket { port: p })
            } else {
                port_of(&probe["httpGet"]["port"]).map(|p| ProbeHandler::HttpGet {
                    path: probe["httpGet"]["path"].as_str().unwrap_or("/").to_string(),
                    port: p,
                })
            };
            if let Some(handler) = handler {
                b.readiness = Some(ReadinessProbe {
                    handler,
                    initial_delay_seconds: probe["initialDelaySeconds"].as_u64().unwrap_or(0),
                    // 0 is unset (SetDefaults_Probe), as protobuf bodies send it.
                    period_seconds: probe["periodSeconds"].as_u64().filter(|&n| n > 0).unwrap_or(10),
                    failure_threshold: probe["failureThreshold"]
                        .as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .filter(|&n| n > 0)
                        .unwrap_or(3),
                });
            }
        }
    }
    b
}
