//! `GET …/pods/NAME/log`: the log of a simulated client pod as the kubelet serves it, with
//! `PodLogOptions` decoded and validated as upstream, and `follow=true` streamed.

use super::*;

fn container_names(sim: &Sim, meta: &locality_model::objects::ObjectMeta) -> Vec<String> {
    let ctx = crate::encode::Ctx::new(&sim.engine, &sim.raw);
    ctx.raw_pod_spec(meta, &meta.namespace, 0)
        .and_then(|v| v.get("containers"))
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `GET /api/v1/namespaces/NS/pods/NAME/log`.
pub(crate) fn pods_log(shared: &Arc<Shared>, ns: &str, name: &str, q: &Query) -> Result<Response, ApiError> {
    let opts = LogOptions::parse(q, name)?;
    let mut sim = shared.lock();
    sim.catch_up();
    shared.notify(&sim);
    let key = ObjectKey::new(Kind::Pod, ns, name);
    let pod = sim.pod(ns, name)?;
    let uid = pod.pod.meta.uid.clone();
    if !sim.clients.contains_key(&uid) && pod.pod.phase == PodPhase::Running {
        // A pod made by a controller (its template declares the program): started late, now.
        let ctx = crate::encode::Ctx::new(&sim.engine, &sim.raw);
        let spec = ctx.raw_pod_spec(&pod.pod.meta, ns, 0).cloned();
        if let Some(spec) = spec {
            register(&mut sim, &key, &uid, &serde_json::json!({ "spec": spec }));
            let now = sim.engine.now();
            run_until(&mut sim, now);
        }
    }
    let names = container_names(&sim, &pod.pod.meta);
    let container = match (q.get("container").filter(|c| !c.is_empty()), names.as_slice()) {
        (Some(c), ns) if ns.is_empty() || ns.iter().any(|n| n == c) => c.to_string(),
        (Some(c), _) => {
            return Err(ApiError::bad_request(format!(
                "container {c} is not valid for pod {name}"
            )));
        }
        (None, []) => "main".to_string(),
        (None, [one]) => one.clone(),
        (None, many) => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                many.join(" ")
            )));
        }
    };
    if pod.pod.phase == PodPhase::Pending {
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: ContainerCreating"
        )));
    }
    let now = sim.engine.now();
    let mut since = opts.since_time;
    if let Some(secs) = opts.since_seconds {
        since = Some(now.saturating_sub(secs.saturating_mul(1000)));
    }
    let timestamps = q.flag("timestamps");
    let mut lines: Vec<String> = Vec::new();
    let mut sent = 0;
    if let Some(c) = sim.clients.get(&uid) {
        for (at, text) in c.log.iter().filter(|(at, _)| *at <= now) {
            sent += 1;
            if since.is_some_and(|s| *at < s) {
                continue;
            }
            push_lines(&mut lines, *at, text, timestamps);
        }
    }
    if let Some(n) = opts.tail_lines {
        let skip = lines
            .len()
            .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX));
        lines.drain(..skip);
    }
    let mut out = lines.concat().into_bytes();
    let limit = opts.limit_bytes.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    if let Some(n) = limit {
        out.truncate(n);
    }
    if !q.flag("follow") {
        return Ok(response(200, "text/plain", Bytes::from(out)));
    }
    drop(sim);
    let follow = Follow {
        key,
        uid,
        sent,
        timestamps,
        remaining: limit.map(|n| n.saturating_sub(out.len())),
    };
    Ok(follow.stream(shared.clone(), out))
}

/// `PodLogOptions` from the query, decoded and validated as upstream.
struct LogOptions {
    since_time: Option<Millis>,
    since_seconds: Option<u64>,
    tail_lines: Option<u64>,
    limit_bytes: Option<u64>,
}

impl LogOptions {
    /// Decodes the integer and time parameters (a value that does not parse: `400
    /// BadRequest`, as the query parameter codec answers) and validates them as
    /// k8s.io/kubernetes `pkg/apis/core/validation` `ValidatePodLogOptions` (`422 Invalid`,
    /// `PodLogOptions "NAME" is invalid: …`): `tailLines` at least 0, `limitBytes` and
    /// `sinceSeconds` at least 1, and not both `sinceTime` and `sinceSeconds`.
    fn parse(q: &Query, name: &str) -> Result<LogOptions, ApiError> {
        let int = |k: &str| -> Result<Option<i64>, ApiError> {
            q.get(k)
                .map(|v| {
                    v.parse::<i64>().map_err(|_| {
                        ApiError::bad_request(format!("{k}: strconv.ParseInt: parsing {v:?}: invalid syntax"))
                    })
                })
                .transpose()
        };
        let since_time = q
            .get("sinceTime")
            .map(|t| {
                parse_rfc3339(t)
                    .ok_or_else(|| ApiError::bad_request(format!("sinceTime: {t:?} is not an RFC 3339 time")))
            })
            .transpose()?;
        let (since_seconds, tail_lines, limit_bytes) =
            (int("sinceSeconds")?, int("tailLines")?, int("limitBytes")?);
        let mut errs = Vec::new();
        if let Some(n) = tail_lines.filter(|n| *n < 0) {
            errs.push(format!(
                "tailLines: Invalid value: {n}: must be greater than or equal to 0"
            ));
        }
        if let Some(n) = limit_bytes.filter(|n| *n < 1) {
            errs.push(format!("limitBytes: Invalid value: {n}: must be greater than 0"));
        }
        match (since_seconds, since_time) {
            (Some(_), Some(_)) => {
                errs.push(
                    "<nil>: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified".into(),
                );
            }
            (Some(n), None) if n < 1 => {
                errs.push(format!(
                    "sinceSeconds: Invalid value: {n}: must be greater than 0"
                ));
            }
            _ => {}
        }
        if !errs.is_empty() {
            let why = if errs.len() == 1 {
                errs.remove(0)
            } else {
                format!("[{}]", errs.join(", "))
            };
            return Err(ApiError::invalid("PodLogOptions", "", name, &why));
        }
        let unsigned = |v: Option<i64>| v.and_then(|n| u64::try_from(n).ok());
        Ok(LogOptions {
            since_time,
            since_seconds: unsigned(since_seconds),
            tail_lines: unsigned(tail_lines),
            limit_bytes: unsigned(limit_bytes),
        })
    }
}

fn push_lines(lines: &mut Vec<String>, at: Millis, text: &str, timestamps: bool) {
    for l in text.split_inclusive('\n') {
        lines.push(if timestamps {
            format!("{} {l}", rfc3339_nano(at))
        } else {
            l.to_string()
        });
    }
}

/// How often a followed log looks for new lines (wall time).
const FOLLOW_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// A `follow=true` read (k8s.io/kubernetes `pkg/kubelet/kuberuntime/logs` `ReadLogs` with
/// `Follow`): the log so far, then each line as the virtual clock reaches its write instant,
/// until the container terminates (the pod `Succeeded` or `Failed`, or gone), `limitBytes`
/// is reached, or the client disconnects.
struct Follow {
    key: ObjectKey,
    uid: String,
    /// Log entries (visible ones) already read.
    sent: usize,
    timestamps: bool,
    /// Bytes left under `limitBytes`.
    remaining: Option<usize>,
}

impl Follow {
    fn stream(mut self, shared: Arc<Shared>, first: Vec<u8>) -> Response {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
        tokio::spawn(async move {
            if !first.is_empty() && tx.send(Bytes::from(first)).await.is_err() {
                return;
            }
            loop {
                if self.remaining == Some(0) {
                    return;
                }
                let (chunk, done) = self.poll(&shared);
                if !chunk.is_empty() && tx.send(Bytes::from(chunk)).await.is_err() {
                    return;
                }
                if done {
                    return;
                }
                tokio::select! {
                    () = tokio::time::sleep(FOLLOW_POLL) => {}
                    () = tx.closed() => return,
                }
            }
        });
        crate::http::stream_response(rx, "text/plain")
    }

    /// The lines written since the last poll, and whether the container has terminated.
    fn poll(&mut self, shared: &Shared) -> (Vec<u8>, bool) {
        let sim = shared.lock();
        let now = sim.engine.now();
        let pod = sim
            .engine
            .get(&self.key)
            .and_then(Object::as_pod)
            .filter(|p| p.pod.meta.uid == self.uid);
        let terminated = pod.is_none_or(|p| matches!(p.pod.phase, PodPhase::Succeeded | PodPhase::Failed));
        let mut lines = Vec::new();
        if let Some(c) = sim.clients.get(&self.uid) {
            let visible = c.log.partition_point(|(at, _)| *at <= now);
            for (at, text) in c.log.iter().take(visible).skip(self.sent) {
                push_lines(&mut lines, *at, text, self.timestamps);
            }
            self.sent = self.sent.max(visible);
        }
        let mut out = lines.concat().into_bytes();
        if let Some(left) = &mut self.remaining {
            out.truncate(*left);
            *left -= out.len();
        }
        (out, terminated)
    }
}

type Response = http::Response<Body>;
