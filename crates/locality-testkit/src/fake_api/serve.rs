//! The fake API server's HTTP/1.1 connection loop and request handling.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{FakeApi, Logged, RESOURCES, Resource};

pub(super) struct Shared {
    pub(super) api: FakeApi,
    pub(super) log: Arc<Mutex<Vec<Logged>>>,
    /// Fault keys already fired (`fail_once`, `expire_continue_once`).
    pub(super) seen: Mutex<HashSet<String>>,
}

impl Shared {
    /// True the first time `key` is seen.
    fn first(&self, key: String) -> bool {
        self.seen.lock().expect("seen").insert(key)
    }
}

pub(super) async fn serve_connection(
    stream: tokio::net::TcpStream,
    state: Arc<Shared>,
) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).await? == 0 {
            return Ok(());
        }
        let mut headers = HashMap::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await? == 0 {
                return Ok(());
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
            }
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let target = parts.next().unwrap_or_default().to_owned();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        if let Some(h) = state.api.faults.hostile.get(path) {
            state.log.lock().expect("log").push(Logged {
                method: method.clone(),
                path: path.to_owned(),
                query: BTreeMap::new(),
                status: 0,
                refused: None,
            });
            super::hostile::answer(h, query, &mut write).await?;
            continue;
        }
        let (status, body) = handle(&state, &method, &target, &headers);
        let reason = match status {
            200 => "OK",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            410 => "Gone",
            _ => "Internal Server Error",
        };
        let head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        // One write: a head and a body in two segments meet Nagle and delayed ACKs (40 ms).
        let mut response = head.into_bytes();
        response.extend_from_slice(&body);
        write.write_all(&response).await?;
        write.flush().await?;
    }
}

fn status(code: u16, reason: &str, message: &str) -> (u16, Vec<u8>) {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    (code, body.to_string().into_bytes())
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a request addresses.
struct Addressed {
    res: &'static Resource,
    namespace: Option<String>,
    name: Option<String>,
    /// The collection path (`/api/v1/namespaces/ns/pods` or `/api/v1/pods`).
    collection: String,
}

fn address(path: &str) -> Option<Addressed> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let find = |r: &str| {
        RESOURCES
            .iter()
            .find(|x| x.group == group && x.version == version && x.resource == r)
    };
    let prefix = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    match rest {
        ["namespaces", ns, r] => Some(Addressed {
            res: find(r)?,
            namespace: Some((*ns).to_owned()),
            name: None,
            collection: format!("{prefix}/namespaces/{ns}/{r}"),
        }),
        ["namespaces", ns, r, name] => Some(Addressed {
            res: find(r)?,
            namespace: Some((*ns).to_owned()),
            name: Some((*name).to_owned()),
            collection: format!("{prefix}/namespaces/{ns}/{r}"),
        }),
        [r] => Some(Addressed {
            res: find(r)?,
            namespace: None,
            name: None,
            collection: format!("{prefix}/{r}"),
        }),
        [r, name] => Some(Addressed {
            res: find(r)?,
            namespace: None,
            name: Some((*name).to_owned()),
            collection: format!("{prefix}/{r}"),
        }),
        _ => None,
    }
}

fn handle(state: &Shared, method: &str, target: &str, headers: &HashMap<String, String>) -> (u16, Vec<u8>) {
    let (path, query_text) = target.split_once('?').unwrap_or((target, ""));
    let query: BTreeMap<String, String> = query_text
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    let mut refused = None;
    let (code, body) = respond(state, method, path, &query, headers, &mut refused);
    state.log.lock().expect("log").push(Logged {
        method: method.to_owned(),
        path: path.to_owned(),
        query,
        status: code,
        refused,
    });
    (code, body)
}

fn respond(
    state: &Shared,
    method: &str,
    path: &str,
    query: &BTreeMap<String, String>,
    headers: &HashMap<String, String>,
    refused: &mut Option<String>,
) -> (u16, Vec<u8>) {
    let api = &state.api;
    let authorized = headers
        .get("authorization")
        .is_some_and(|v| v == &format!("Bearer {}", api.token));
    if !authorized {
        return status(
            401,
            "Unauthorized",
            "Unauthorized: the fake API server rejects this bearer token",
        );
    }
    if method != "GET" {
        return status(
            405,
            "MethodNotAllowed",
            &format!("the fake API server only reads ({method})"),
        );
    }
    if path == "/version" {
        // Readable by everyone (system:public-info-viewer).
        let body =
            json!({"major": "1", "minor": "35", "gitVersion": api.git_version, "platform": "linux/amd64"});
        return (200, body.to_string().into_bytes());
    }
    let Some(addr) = address(path) else {
        return status(
            404,
            "NotFound",
            &format!("the server could not find the requested resource ({path})"),
        );
    };
    let verb = if addr.name.is_some() { "get" } else { "list" };
    if query.get("watch").is_some_and(|w| w == "true" || w == "1") {
        *refused = Some(format!("watch {}", addr.res.resource));
        return status(403, "Forbidden", "watch is not allowed by this test");
    }
    if let Some(rbac) = &api.rbac
        && !rbac.allows(
            verb,
            addr.res.group,
            addr.res.resource,
            addr.namespace.as_deref(),
            addr.name.as_deref(),
        )
    {
        let what = format!(
            "{verb} {}{}{}",
            addr.res.resource,
            if addr.res.group.is_empty() {
                String::new()
            } else {
                format!(".{}", addr.res.group)
            },
            addr.name.as_ref().map(|n| format!("/{n}")).unwrap_or_default()
        );
        *refused = Some(format!(
            "{what} {}",
            addr.namespace
                .as_deref()
                .map_or("cluster-wide".to_owned(), |n| format!("in {n}"))
        ));
        let scope = addr
            .namespace
            .as_deref()
            .map_or("at the cluster scope".to_owned(), |n| {
                format!("in the namespace \"{n}\"")
            });
        return status(
            403,
            "Forbidden",
            &format!(
                "{} is forbidden: User \"{}\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
                addr.res.resource, rbac.user, addr.res.resource, addr.res.group
            ),
        );
    }
    let faults = &api.faults;
    if faults.forbid.contains(&addr.collection) || faults.forbid.contains(&format!("/{}", addr.res.resource))
    {
        return status(
            403,
            "Forbidden",
            &format!(
                "{} is forbidden: User \"test\" cannot {verb} resource \"{}\" in API group \"{}\"",
                addr.res.resource, addr.res.resource, addr.res.group
            ),
        );
    }
    if faults.fail_always.contains(path) {
        return status(
            500,
            "InternalError",
            "Internal error occurred: etcdserver: request timed out",
        );
    }
    if faults.fail_once.contains(path) && state.first(format!("fail:{path}")) {
        return status(
            500,
            "InternalError",
            "Internal error occurred: etcdserver: leader changed",
        );
    }
    let namespace_ok = |o: &Value| {
        addr.namespace
            .as_deref()
            .is_none_or(|ns| o["metadata"]["namespace"].as_str().unwrap_or_default() == ns)
    };
    let mut items: Vec<&Value> = api
        .objects
        .iter()
        .filter(|o| o["kind"] == addr.res.kind && namespace_ok(o))
        .collect();
    // Namespaces are addressed as /api/v1/namespaces/NAME (the generic [r, name] shape).
    if let Some(name) = &addr.name {
        return match items.into_iter().find(|o| o["metadata"]["name"] == name.as_str()) {
            Some(o) => (200, o.to_string().into_bytes()),
            None => status(
                404,
                "NotFound",
                &format!("{} \"{name}\" not found", addr.res.resource),
            ),
        };
    }
    items.sort_by_key(|o| {
        (
            o["metadata"]["namespace"].as_str().unwrap_or_default().to_owned(),
            o["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
        )
    });
    let offset = match query.get("continue") {
        None => 0,
        Some(token) => {
            if faults.expire_continue_always.contains(&addr.collection)
                || (faults.expire_continue_once.contains(&addr.collection)
                    && state.first(format!("expire:{}", addr.collection)))
            {
                return status(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list result. You \
                     can start a new list without the continue parameter, or use the continue token in \
                     this response to retrieve the remainder of the results.",
                );
            }
            match parse_token(token, &addr.collection) {
                Some(o) => o,
                None => {
                    return status(
                        400,
                        "BadRequest",
                        &format!("continue key is not valid: {token:?}"),
                    );
                }
            }
        }
    };
    let limit = query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|&l| l > 0)
        .unwrap_or(usize::MAX);
    let end = offset.saturating_add(limit).min(items.len());
    let page: Vec<Value> = items[offset.min(items.len())..end]
        .iter()
        .map(|o| {
            let mut o = (*o).clone();
            if let Some(m) = o.as_object_mut() {
                m.remove("kind");
                m.remove("apiVersion");
            }
            o
        })
        .collect();
    let mut metadata = json!({"resourceVersion": "424242"});
    if end < items.len() {
        metadata["continue"] = json!(make_token(end, &addr.collection));
        metadata["remainingItemCount"] = json!(items.len() - end);
    }
    let api_version = if addr.res.group.is_empty() {
        addr.res.version.to_owned()
    } else {
        format!("{}/{}", addr.res.group, addr.res.version)
    };
    // Field order as the API server writes it: kind, apiVersion, metadata, items.
    let body = format!(
        "{{\"kind\":\"{}List\",\"apiVersion\":\"{api_version}\",\"metadata\":{metadata},\"items\":{}}}",
        addr.res.kind,
        Value::Array(page)
    );
    (200, body.into_bytes())
}

/// An opaque-looking token with characters that need URL encoding.
fn make_token(offset: usize, collection: &str) -> String {
    format!("eyJ2+{offset}/{}==", collection.len())
}

fn parse_token(token: &str, collection: &str) -> Option<usize> {
    let rest = token.strip_prefix("eyJ2+")?.strip_suffix("==")?;
    let (offset, len) = rest.split_once('/')?;
    (len.parse::<usize>().ok()? == collection.len()).then_some(())?;
    offset.parse().ok()
}
