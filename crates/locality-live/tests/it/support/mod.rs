//! A small fake Kubernetes API server over real HTTP/1.1 on 127.0.0.1, for the live tests.
//!
//! It serves the objects of a `List` fixture the way an API server does: typed Lists
//! (`PodList`…) whose items carry no `kind`/`apiVersion`, sorted by namespace and name,
//! with `limit`/`continue` pagination and `remainingItemCount`; single objects by name;
//! `/version`; bearer-token authentication (401 with a `Status` otherwise). Faults are
//! injected per collection path: 403, a 500 that succeeds on retry, a 500 forever, a
//! `410 Gone` on the first (or every) continue token. With [`Rbac`] loaded from
//! `deploy/rbac-audit.yaml` it authorizes every request as the API server's RBAC
//! authorizer would and answers 403 to what the rules do not allow.
//!
//! The server runs on its own thread and runtime, so both async and blocking clients can
//! use it; it stops when [`Running`] is dropped.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// Where a kind lives in the API.
#[derive(Debug, Clone, Copy)]
pub struct Resource {
    pub kind: &'static str,
    pub group: &'static str,
    pub version: &'static str,
    pub resource: &'static str,
    pub namespaced: bool,
}

pub const RESOURCES: &[Resource] = &[
    Resource {
        kind: "Node",
        group: "",
        version: "v1",
        resource: "nodes",
        namespaced: false,
    },
    Resource {
        kind: "Namespace",
        group: "",
        version: "v1",
        resource: "namespaces",
        namespaced: false,
    },
    Resource {
        kind: "Pod",
        group: "",
        version: "v1",
        resource: "pods",
        namespaced: true,
    },
    Resource {
        kind: "Service",
        group: "",
        version: "v1",
        resource: "services",
        namespaced: true,
    },
    Resource {
        kind: "ConfigMap",
        group: "",
        version: "v1",
        resource: "configmaps",
        namespaced: true,
    },
    Resource {
        kind: "Secret",
        group: "",
        version: "v1",
        resource: "secrets",
        namespaced: true,
    },
    Resource {
        kind: "EndpointSlice",
        group: "discovery.k8s.io",
        version: "v1",
        resource: "endpointslices",
        namespaced: true,
    },
    Resource {
        kind: "DaemonSet",
        group: "apps",
        version: "v1",
        resource: "daemonsets",
        namespaced: true,
    },
    Resource {
        kind: "Deployment",
        group: "apps",
        version: "v1",
        resource: "deployments",
        namespaced: true,
    },
    Resource {
        kind: "ReplicaSet",
        group: "apps",
        version: "v1",
        resource: "replicasets",
        namespaced: true,
    },
    Resource {
        kind: "StatefulSet",
        group: "apps",
        version: "v1",
        resource: "statefulsets",
        namespaced: true,
    },
];

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    /// Path without query.
    pub path: String,
    /// Decoded query parameters.
    pub query: BTreeMap<String, String>,
    pub status: u16,
    /// The RBAC verb and resource when the request was refused by [`Rbac`].
    pub refused: Option<String>,
}

/// RBAC rules of one role.
#[derive(Debug, Clone, Default)]
struct Rule {
    api_groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
    resource_names: Vec<String>,
}

/// The bound roles of one subject, read from a YAML file of RBAC objects.
#[derive(Debug, Clone, Default)]
pub struct Rbac {
    /// Rules that apply in every namespace and at cluster scope (bound ClusterRoles).
    cluster: Vec<Rule>,
    /// Rules that apply in one namespace (bound Roles).
    namespaced: Vec<(String, Rule)>,
    pub user: String,
}

impl Rbac {
    /// Loads ClusterRoles/Roles bound (ClusterRoleBinding/RoleBinding) to the
    /// ServiceAccount `namespace/name` in `path`.
    pub fn load(path: &Path, sa_namespace: &str, sa_name: &str) -> Rbac {
        let text = std::fs::read_to_string(path).expect("read the RBAC file");
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("RBAC YAML");
        let is_subject = |b: &Value| {
            b["subjects"].as_array().is_some_and(|s| {
                s.iter().any(|s| {
                    s["kind"] == "ServiceAccount" && s["name"] == sa_name && s["namespace"] == sa_namespace
                })
            })
        };
        let rules_of = |kind: &str, name: &str, ns: Option<&str>| -> Vec<Rule> {
            docs.iter()
                .filter(|d| {
                    d["kind"] == kind
                        && d["metadata"]["name"] == name
                        && ns.is_none_or(|ns| d["metadata"]["namespace"] == ns)
                })
                .flat_map(|d| d["rules"].as_array().cloned().unwrap_or_default())
                .map(|r| {
                    let list = |k: &str| -> Vec<String> {
                        r[k].as_array()
                            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                            .unwrap_or_default()
                    };
                    Rule {
                        api_groups: list("apiGroups"),
                        resources: list("resources"),
                        verbs: list("verbs"),
                        resource_names: list("resourceNames"),
                    }
                })
                .collect()
        };
        let mut rbac = Rbac {
            user: format!("system:serviceaccount:{sa_namespace}:{sa_name}"),
            ..Default::default()
        };
        for b in docs.iter().filter(|d| is_subject(d)) {
            let role_kind = b["roleRef"]["kind"].as_str().unwrap_or_default();
            let role_name = b["roleRef"]["name"].as_str().unwrap_or_default();
            match b["kind"].as_str() {
                Some("ClusterRoleBinding") => rbac.cluster.extend(rules_of("ClusterRole", role_name, None)),
                Some("RoleBinding") => {
                    let ns = b["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or("default")
                        .to_owned();
                    let rules = if role_kind == "ClusterRole" {
                        rules_of("ClusterRole", role_name, None)
                    } else {
                        rules_of("Role", role_name, Some(&ns))
                    };
                    rbac.namespaced.extend(rules.into_iter().map(|r| (ns.clone(), r)));
                }
                _ => {}
            }
        }
        assert!(!rbac.cluster.is_empty(), "no ClusterRole bound to {}", rbac.user);
        rbac
    }

    fn allows(
        &self,
        verb: &str,
        group: &str,
        resource: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> bool {
        let matches = |r: &Rule| {
            let any = |v: &[String], x: &str| v.iter().any(|e| e == "*" || e == x);
            any(&r.verbs, verb)
                && any(&r.api_groups, group)
                && any(&r.resources, resource)
                && (r.resource_names.is_empty()
                    || name.is_some_and(|n| r.resource_names.iter().any(|e| e == n)))
        };
        self.cluster.iter().any(matches)
            || namespace.is_some_and(|ns| self.namespaced.iter().any(|(rns, r)| rns == ns && matches(r)))
    }
}

/// Fault and behaviour settings, shared with the running server.
#[derive(Debug, Default)]
pub struct Faults {
    /// Collection paths (`/api/v1/pods`) answered with 403 (list and get under them).
    pub forbid: HashSet<String>,
    /// Paths whose first request answers 500 (then they work).
    pub fail_once: HashSet<String>,
    /// Paths that always answer 500.
    pub fail_always: HashSet<String>,
    /// Collection paths whose first request with a continue token answers 410 Gone.
    pub expire_continue_once: HashSet<String>,
    /// Collection paths whose every request with a continue token answers 410 Gone.
    pub expire_continue_always: HashSet<String>,
}

/// A fake API server, configured before [`FakeApi::start`].
pub struct FakeApi {
    objects: Vec<Value>,
    pub faults: Faults,
    pub token: String,
    pub git_version: String,
    pub rbac: Option<Rbac>,
}

impl FakeApi {
    /// A server holding the items of a `List` file.
    pub fn from_fixture(path: &Path) -> FakeApi {
        let text = std::fs::read(path).expect("read the fixture");
        let list: Value = serde_json::from_slice(&text).expect("fixture JSON");
        let objects = list["items"].as_array().cloned().expect("a List");
        FakeApi {
            objects,
            faults: Faults::default(),
            token: "fake-token".to_owned(),
            git_version: "v1.35.0".to_owned(),
            rbac: None,
        }
    }

    /// The repository's fixture cluster.
    pub fn cluster() -> FakeApi {
        FakeApi::from_fixture(&fixture("cluster.json"))
    }

    /// The objects served.
    pub fn objects(&self) -> &[Value] {
        &self.objects
    }

    /// Replaces (or adds) the object of the same kind, namespace and name.
    pub fn put(&mut self, object: Value) {
        let key = |o: &Value| {
            (
                o["kind"].as_str().unwrap_or_default().to_owned(),
                o["metadata"]["namespace"].as_str().unwrap_or_default().to_owned(),
                o["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
            )
        };
        let k = key(&object);
        self.objects.retain(|o| key(o) != k);
        self.objects.push(object);
    }

    /// Removes the object of `kind` named `namespace/name`.
    pub fn remove(&mut self, kind: &str, namespace: &str, name: &str) {
        self.objects.retain(|o| {
            !(o["kind"] == kind
                && o["metadata"]["namespace"].as_str().unwrap_or_default() == namespace
                && o["metadata"]["name"] == name)
        });
    }

    /// A mutable reference to an object.
    pub fn object_mut(&mut self, kind: &str, namespace: &str, name: &str) -> &mut Value {
        self.objects
            .iter_mut()
            .find(|o| {
                o["kind"] == kind
                    && o["metadata"]["namespace"].as_str().unwrap_or_default() == namespace
                    && o["metadata"]["name"] == name
            })
            .expect("object in the fixture")
    }

    /// Binds 127.0.0.1 on a free port and serves until the returned handle is dropped.
    pub fn start(self) -> Running {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let port = std_listener.local_addr().expect("local addr").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(Shared {
            api: self,
            log: Arc::clone(&log),
            seen: Mutex::new(HashSet::new()),
        });
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("listener");
                let accept = async {
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        let state = Arc::clone(&state);
                        tokio::spawn(async move {
                            let _ = serve_connection(stream, state).await;
                        });
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stop_rx => {}
                }
            });
        });
        Running {
            port,
            log,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }
}

/// Path of a fixture file.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A running fake server.
pub struct Running {
    pub port: u16,
    log: Arc<Mutex<Vec<Logged>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far, in arrival order.
    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().expect("log").clone()
    }

    /// Requests to `path` (without query).
    pub fn requests_to(&self, path: &str) -> Vec<Logged> {
        self.log().into_iter().filter(|l| l.path == path).collect()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Shared {
    api: FakeApi,
    log: Arc<Mutex<Vec<Logged>>>,
    /// Fault keys already fired (`fail_once`, `expire_continue_once`).
    seen: Mutex<HashSet<String>>,
}

impl Shared {
    /// True the first time `key` is seen.
    fn first(&self, key: String) -> bool {
        self.seen.lock().expect("seen").insert(key)
    }
}

async fn serve_connection(stream: tokio::net::TcpStream, state: Arc<Shared>) -> std::io::Result<()> {
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

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("locality-live-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a kubeconfig with two contexts: `fake` (current, no namespace) and `fake-app`
/// (namespace `internal-acceptance`), both to `server` with a bearer token.
pub fn write_kubeconfig(dir: &Path, server: &str, token: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {server}\n\
         contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: tester\n\
         - name: fake-app\n  context:\n    cluster: fake\n    user: tester\n    namespace: internal-acceptance\n\
         current-context: fake\nusers:\n- name: tester\n  user:\n    token: {token}\n"
    );
    std::fs::write(&path, text).expect("write kubeconfig");
    path
}

/// Writes a credential plugin `dir/plugin` (`#!/bin/sh` + `script`) and a kubeconfig whose
/// only user runs it (`interactiveMode: Never`) against `server`; returns the kubeconfig's
/// path.
pub fn write_exec_kubeconfig(dir: &Path, server: &str, plugin: &str, script: &str) -> PathBuf {
    let plugin = dir.join(plugin);
    std::fs::write(&plugin, format!("#!/bin/sh\n{script}")).expect("write plugin");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&plugin)
        .status()
        .expect("chmod");
    let path = dir.join("exec-kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nclusters:\n- name: k\n  cluster: {{server: \"{server}\"}}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: {}\n      interactiveMode: Never\n",
            plugin.display()
        ),
    )
    .expect("write kubeconfig");
    path
}
