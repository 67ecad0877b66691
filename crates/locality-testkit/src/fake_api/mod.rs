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

mod hostile;
mod rbac;
mod serve;

pub use hostile::Hostile;
pub use rbac::Rbac;
use serve::{Shared, serve_connection};

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::net::TcpListener;

/// Where a kind lives in the API.
#[derive(Debug, Clone, Copy)]
pub struct Resource {
    /// Kind (`Pod`).
    pub kind: &'static str,
    /// API group (`""` for core).
    pub group: &'static str,
    /// Version (`v1`).
    pub version: &'static str,
    /// Resource name in paths (`pods`).
    pub resource: &'static str,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
}

/// Every kind the server serves.
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
    Resource {
        kind: "PodDisruptionBudget",
        group: "policy",
        version: "v1",
        resource: "poddisruptionbudgets",
        namespaced: true,
    },
];

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    /// HTTP method.
    pub method: String,
    /// Path without query.
    pub path: String,
    /// Decoded query parameters.
    pub query: BTreeMap<String, String>,
    /// Status code answered.
    pub status: u16,
    /// The RBAC verb and resource when the request was refused by [`Rbac`].
    pub refused: Option<String>,
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
    /// Paths (without query) answered with a [`Hostile`] answer instead, before any check.
    pub hostile: BTreeMap<String, Hostile>,
}

/// A fake API server, configured before [`FakeApi::start`].
pub struct FakeApi {
    objects: Vec<Value>,
    /// Faults to inject.
    pub faults: Faults,
    /// The bearer token it accepts.
    pub token: String,
    /// `/version`'s `gitVersion`.
    pub git_version: String,
    /// RBAC to enforce (none: everything is allowed).
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

/// Path of a fixture file of this crate (`fixtures/`, described in its README).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// A running fake server.
pub struct Running {
    /// Its port on 127.0.0.1.
    pub port: u16,
    log: Arc<Mutex<Vec<Logged>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    /// Its base URL.
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
