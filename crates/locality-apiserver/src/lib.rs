//! `locality-apiserver`: the **simulated** cluster ([`locality_sim::Engine`]) served over the
//! Kubernetes REST API on loopback, in scaled real time (`locality sim serve`).
//!
//! [`serve`] binds `127.0.0.1`, starts a thread that runs the HTTP server and a driver that
//! advances the engine's virtual clock by `speed` × wall time, and writes a kubeconfig whose
//! context is `locality-sim` once the socket is listening. Requests apply to the engine at the
//! current virtual time. On a machine too loaded to simulate at `speed`, the clock slips
//! rather than building a backlog: the engine never falls more than [`MAX_BACKLOG_MS`] of
//! virtual time behind it, so every request is answered after at most that much simulation
//! (the cluster then runs slower than `speed`, consistently: every time it shows is the
//! engine's).
//!
//! Served: discovery, OpenAPI v3 (enough for kubectl's default validation), get, list (label
//! and field selectors, `limit`/`continue`), watch (resourceVersion, `410 Gone` as an `ERROR`
//! event; with a label or field selector an object that stops matching through an update is
//! sent as `DELETED` with its last matching state and one that starts matching as `ADDED`, as
//! the real watch cache does), create, update, delete and patch with `dryRun=All`, `Table`
//! answers for `kubectl get` (`-o wide` shows node and IP) and `metav1.Status` errors, for
//! Namespaces, Nodes, Pods, Services, EndpointSlices, Deployments, ReplicaSets, DaemonSets and
//! StatefulSets (ConfigMaps: read-only, kube-proxy's), and, stored but
//! not simulated (see the `stored` module), ServiceAccounts, Jobs, Roles, RoleBindings,
//! ClusterRoles and ClusterRoleBindings: no Job controller runs a Job and no authorizer reads
//! the RBAC objects. Everything it answers says it is simulated.
//!
//! Like a kubeadm cluster, it has kube-proxy in `kube-system` (see the `kube_system` module):
//! a `kube-proxy` DaemonSet with one Running pod per node, whose image tag is that node's
//! simulated kube-proxy version, and its ConfigMap with the mode, published when serving
//! starts (the engine runs until those pods are Ready, then the clock starts).
//!
//! Writes (see the `write` module docs): patches — JSON patch (RFC 6902), JSON merge patch,
//! strategic merge patch (merge keys and directives: see the `patch` module docs) and
//! server-side apply (`kubectl apply --server-side`, simplified field ownership) — apply to
//! the object as served and go through the same decoding as create and update, so every field
//! the simulation carries can change (a Service's `internalTrafficPolicy` and
//! `trafficDistribution`, a Deployment's template, which rolls out); immutable fields (a
//! pod's spec but images, added tolerations and `tolerationSeconds`, a Service's cluster IP, a
//! workload's selector) answer `422 Invalid` (see the `validate` module); the status sent with
//! an update is ignored (the stored one is kept, as upstream's `PrepareForUpdate`), and pods get
//! the `DefaultTolerationSeconds` admission on create and update. Dry runs run against a copy of
//! the engine and change nothing. `DeleteOptions`: `gracePeriodSeconds` for pods (0: removed
//! at once, as `kubectl delete --grace-period=0 --force`), `preconditions`, and
//! `propagationPolicy` (`Orphan` keeps the dependents; `Foreground` keeps a workload, marked
//! deleting, until its dependents are gone).
//!
//! Limits as a real API server's (see the `limits` module): 3 MiB bodies (413), a 32 s
//! header-read timeout, a 60 s timeout for requests that are not long-running (504), JSON
//! patches of at most 10,000 operations and 3 MiB of copies, objects of at most 1.5 MiB.
//! Under load (docs/sim-serve.md): at most 4096 connections (the one idle longest makes room;
//! see the `connections` module), an accept back-off as Go's, a queue of 32 KiB per watch (a
//! watcher that leaves it full for 1 s is closed; `watch_queue`), each watch event encoded
//! once for all watchers (`event_cache`), lists of more than 500 items written item by item
//! (`list_stream`), list options checked as upstream (`list_options`: `400` for what does not
//! parse, `504` `ResourceVersionTooLarge` for a `resourceVersion` the store does not reach
//! within 3 s).
//!
//! Request bodies are JSON, YAML or, for create, update and delete, Kubernetes protobuf
//! (`application/vnd.kubernetes.protobuf`, which kubectl 1.32+ sends from its typed commands;
//! see the `protobuf` module docs); answers are JSON.
//!
//! `pods/proxy` reaches simulated agnhost `netexec` pods (see the `proxy` module docs:
//! `/hostname`, `/healthz`, `/readyz`, `/clientip`, `/echo`, `/dial` with the real image's
//! quirks); `pods/log` serves the logs of simulated one-shot `curl` pods (kube-proxy's
//! `127.0.0.1:10249/proxyMode` and `/metrics` from hostNetwork pods) and probe-loop client pods
//! (`LOCALITY_PROBE_*` environment variables; see the `logs` module docs for the loop, the line
//! formats and the parameters honoured; `follow=true` streams new lines as the virtual clock
//! produces them until the container ends), and [`ServeOptions::faults`] injects 5xx answers, 409s, latency and dropped
//! connections for tests.

mod age;
mod apply;
mod configmaps;
mod connections;
mod data_planes;
mod decode;
mod delete;
mod discovery;
mod encode;
mod event_cache;
mod faults;
mod filter;
mod http;
mod kube_system;
mod limits;
mod list_options;
mod list_stream;
mod logs;
mod patch;
mod protobuf;
mod proxy;
mod read;
mod request_log;
mod resources;
mod router;
mod select;
mod server;
mod status;
mod status_watch;
mod stored;
mod subresources;
mod table;
mod target;
mod validate;
mod watch;
mod watch_queue;
mod write;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use locality_sim::time::Millis;
use locality_sim::{Engine, SimConfig, SimError, Topology};
use serde_json::Value;

pub use discovery::{SIMULATED_BUILD_METADATA, simulated_git_version};
pub use faults::{FaultCounts, Faults, Verb};
pub use limits::{
    HEADER_READ_TIMEOUT, JSON_PATCH_MAX_COPY_BYTES, Limits, MAX_DIAL_TRIES, MAX_JSON_PATCH_OPERATIONS,
    MAX_OBJECT_BYTES, MAX_OBJECTS, MAX_PROBE_TRIES_PER_SECOND, MAX_REQUEST_BODY_BYTES, MIN_PROBE_INTERVAL_MS,
    REQUEST_TIMEOUT,
};
pub use request_log::{MAX_REQUEST_LOG, MAX_REQUEST_LOG_BYTES};

/// The context (and cluster and user) name in the written kubeconfig.
pub const CONTEXT_NAME: &str = "locality-sim";

/// The `Server` header of every answer.
pub const SERVER_HEADER: &str = "locality-sim (simulated Kubernetes API server)";

/// How to serve a simulated cluster.
#[derive(Debug)]
pub struct ServeOptions {
    /// The simulated cluster (topology, seed, profiles already applied).
    pub engine: Engine,
    /// Virtual seconds per wall second (default 10); 0 freezes the clock (see
    /// [`Running::advance`]).
    pub speed: f64,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Where to write the kubeconfig; `None`: `$TMPDIR/locality-sim-<port>.kubeconfig`, which
    /// the server removes when it stops (a path given here belongs to the caller and stays).
    pub kubeconfig_out: Option<PathBuf>,
    /// Fault injection for tests (default: none); see [`Faults`].
    pub faults: Faults,
    /// The header-read and request timeouts (default: the real API server's); see [`Limits`].
    pub limits: Limits,
    /// Keep a record of the requests served, for [`Running::requests`] (default: off; tests
    /// that check what a client asked turn it on).
    pub record_requests: bool,
}

impl ServeOptions {
    /// Serves `engine` at speed 10 on a free port.
    pub fn new(engine: Engine) -> Self {
        ServeOptions {
            engine,
            speed: 10.0,
            port: 0,
            kubeconfig_out: None,
            faults: Faults::default(),
            limits: Limits::default(),
            record_requests: false,
        }
    }

    /// Serves a fresh engine built from `topology`.
    ///
    /// # Errors
    /// When the topology cannot be built.
    pub fn from_topology(topology: &Topology, config: SimConfig) -> Result<Self, SimError> {
        Ok(ServeOptions::new(Engine::from_topology(topology, config)?))
    }
}

/// Why the simulated API server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The port could not be bound.
    #[error("simulated API server: cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The kubeconfig could not be written.
    #[error("simulated API server: cannot write the kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The async runtime or server thread could not start.
    #[error("simulated API server: cannot start: {0}")]
    Runtime(std::io::Error),
    /// A bad option.
    #[error("simulated API server: {0}")]
    Options(String),
}

/// The virtual clock: `base` virtual ms at wall instant `start`, advancing `speed`× wall time.
#[derive(Debug)]
pub(crate) struct Clock {
    start: Instant,
    base: f64,
    speed: f64,
}

impl Clock {
    pub(crate) fn now(&self) -> Millis {
        let wall = self.start.elapsed().as_secs_f64() * 1000.0;
        (self.base + wall * self.speed).max(0.0) as Millis
    }

    /// `GET /simulated/clock`'s answer: the virtual time as unix ms and the speed.
    pub(crate) fn describe(&self) -> serde_json::Value {
        let unix_ms = locality_sim::time::EPOCH_UNIX_SECONDS as f64 * 1000.0 + self.now() as f64;
        serde_json::json!({
            "kind": "SimulatedClock",
            "simulated": true,
            "unixMs": unix_ms,
            "speed": self.speed,
        })
    }

    /// Moves the clock back by `ms` of virtual time that will never be simulated.
    fn slip(&mut self, ms: Millis) {
        self.base -= ms as f64;
    }
}

/// How far (virtual ms) the engine may fall behind its clock before the clock slips: at the
/// default speed 10 half a second of wall time, at speed 50 a tenth.
pub const MAX_BACKLOG_MS: Millis = 5_000;

/// Where one catch-up runs the engine to, and how much the clock slips first: the clock's
/// time, unless the engine is more than [`MAX_BACKLOG_MS`] behind it.
fn catch_up_target(clock_now: Millis, engine_now: Millis) -> (Millis, Millis) {
    let behind = clock_now.saturating_sub(engine_now);
    if behind > MAX_BACKLOG_MS {
        (engine_now + MAX_BACKLOG_MS, behind - MAX_BACKLOG_MS)
    } else {
        (clock_now, 0)
    }
}

/// The engine and the server's own state, behind one lock.
pub(crate) struct Sim {
    pub(crate) engine: Engine,
    /// The JSON objects were created with, by uid (images, commands, probes).
    pub(crate) raw: HashMap<String, Value>,
    pub(crate) clock: Clock,
    /// Watches from a resourceVersion below this get 410 Gone (forced expiry).
    pub(crate) expire_before: u64,
    pub(crate) name_seq: u64,
    /// Ephemeral source ports handed out (netexec `/clientip`, UDP error strings).
    pub(crate) ephemeral: u32,
    /// Simulated curl and probe-loop pods, by pod uid (see the `logs` module).
    pub(crate) clients: HashMap<String, logs::ClientRun>,
    /// The ConfigMaps served (read-only, published at start: see the `kube_system` module).
    pub(crate) config_maps: Vec<Value>,
    /// Watch events encoded once for every watcher (see the `event_cache` module).
    pub(crate) watch_events: event_cache::EventCache,
}

impl Sim {
    /// Pod `ns/name` as the engine has it now, or the API's 404.
    pub(crate) fn pod(&self, ns: &str, name: &str) -> Result<locality_sim::SimPod, crate::status::ApiError> {
        self.engine
            .get(&locality_sim::ObjectKey::new(locality_sim::Kind::Pod, ns, name))
            .and_then(locality_sim::Object::as_pod)
            .cloned()
            .ok_or_else(|| crate::status::ApiError::not_found("pods", "", name))
    }

    /// Runs the engine up to the current virtual time, the clock slipping first when the
    /// engine is more than [`MAX_BACKLOG_MS`] behind it.
    pub(crate) fn catch_up(&mut self) {
        let (t, slip) = catch_up_target(self.clock.now(), self.engine.now());
        self.clock.slip(slip);
        logs::run_until(self, t);
    }
}

/// State shared by the server's tasks.
pub(crate) struct Shared {
    sim: Mutex<Sim>,
    /// The store's latest resourceVersion, for watches to wake on.
    pub(crate) changed: tokio::sync::watch::Sender<u64>,
    /// Bumped on each forced expiry: open watches end.
    pub(crate) expired: tokio::sync::watch::Sender<u64>,
    pub(crate) addr: SocketAddr,
    pub(crate) injector: faults::Injector,
    /// The timeouts served with.
    pub(crate) limits: Limits,
    /// What [`Running::requests`] returns, when [`ServeOptions::record_requests`] asked.
    pub(crate) requests: request_log::RequestLog,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Sim> {
        self.sim.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A forced expiry ([`Running::expire_watches`]).
    pub(crate) fn expire_watches(&self) {
        let mut sim = self.lock();
        sim.expire_before = sim.engine.store().resource_version();
        drop(sim);
        self.expired.send_modify(|n| *n += 1);
    }

    /// Tells watches the store may have changed.
    pub(crate) fn notify(&self, sim: &Sim) {
        let rv = sim.engine.store().resource_version();
        self.changed.send_if_modified(|cur| {
            let changed = *cur != rv;
            *cur = rv;
            changed
        });
    }
}

/// A running simulated API server; stops on [`Running::shutdown`] or drop.
pub struct Running {
    url: String,
    kubeconfig: PathBuf,
    /// The kubeconfig is the default temporary one, removed on stop.
    owns_kubeconfig: bool,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("url", &self.url)
            .field("kubeconfig", &self.kubeconfig)
            .finish()
    }
}

impl Running {
    /// Every request served so far, in order, when [`ServeOptions::record_requests`] asked
    /// for it (else none): its method and its path with the query (for tests that check what
    /// a client asked, e.g. against RBAC rules). The first [`MAX_REQUEST_LOG`] requests, and
    /// at most [`MAX_REQUEST_LOG_BYTES`] of them.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.shared.requests.snapshot()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.shared.addr.port()
    }

    /// The kubeconfig written (context `locality-sim`).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// Current virtual time (ms).
    pub fn virtual_now(&self) -> Millis {
        self.shared.lock().clock.now()
    }

    /// Runs `f` on the engine, caught up to the current virtual time (watches are told of
    /// any change `f` makes).
    pub fn with_engine<R>(&self, f: impl FnOnce(&mut Engine) -> R) -> R {
        let mut sim = self.shared.lock();
        sim.catch_up();
        let r = f(&mut sim.engine);
        self.shared.notify(&sim);
        r
    }

    /// Jumps the virtual clock forward by `ms` and runs the engine up to it (all of it: an
    /// asked-for jump never slips).
    pub fn advance(&self, ms: Millis) {
        let mut sim = self.shared.lock();
        sim.clock.base += ms as f64;
        let t = sim.clock.now();
        logs::run_until(&mut sim, t);
        self.shared.notify(&sim);
    }

    /// Fault injection: watches from a resourceVersion below `rv` get `410 Gone`, as after a
    /// compaction.
    pub fn expire_watches_before(&self, rv: u64) {
        self.shared.lock().expire_before = rv;
    }

    /// Fault injection: an etcd compaction now: open watches end, and a watch from a
    /// resourceVersion older than the store's current one gets `410 Gone`.
    pub fn expire_watches(&self) {
        self.shared.expire_watches();
    }

    /// How many faults were injected so far (see [`ServeOptions::faults`]).
    pub fn faults_injected(&self) -> FaultCounts {
        self.shared.injector.counts()
    }

    /// Stops the server and waits for its thread.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if self.owns_kubeconfig {
            self.owns_kubeconfig = false;
            let _ = std::fs::remove_file(&self.kubeconfig);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// Starts serving `opts.engine` on 127.0.0.1; returns once it listens and the kubeconfig is
/// written.
///
/// # Errors
/// See [`ServeError`].
pub fn serve(opts: ServeOptions) -> Result<Running, ServeError> {
    if !(opts.speed.is_finite() && opts.speed >= 0.0) {
        return Err(ServeError::Options(format!(
            "speed must be a finite number >= 0, not {}",
            opts.speed
        )));
    }
    opts.faults.validate().map_err(ServeError::Options)?;
    opts.limits.validate().map_err(ServeError::Options)?;
    let bind_addr = SocketAddr::from(([127, 0, 0, 1], opts.port));
    let listener = connections::listen(bind_addr).map_err(|source| ServeError::Bind {
        addr: bind_addr.to_string(),
        source,
    })?;
    let addr = listener.local_addr().map_err(ServeError::Runtime)?;
    let url = format!("http://{addr}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let owns_kubeconfig = opts.kubeconfig_out.is_none();
    let kubeconfig = opts
        .kubeconfig_out
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("locality-sim-{}.kubeconfig", addr.port())));
    let mut engine = opts.engine;
    engine.set_object_quota(Some(opts.limits.max_objects));
    let mut sim = Sim {
        engine,
        raw: HashMap::new(),
        clock: Clock {
            start: Instant::now(),
            base: 0.0,
            speed: opts.speed,
        },
        expire_before: 0,
        name_seq: 0,
        ephemeral: 0,
        clients: HashMap::new(),
        config_maps: Vec::new(),
        watch_events: event_cache::EventCache::default(),
    };
    // kube-proxy in kube-system, as on a kubeadm cluster, up before the clock starts.
    kube_system::publish(&mut sim);
    data_planes::publish(&mut sim);
    sim.clock.base = sim.engine.now() as f64;
    sim.clock.start = Instant::now();
    let rv = sim.engine.store().resource_version();
    let shared = Arc::new(Shared {
        sim: Mutex::new(sim),
        changed: tokio::sync::watch::channel(rv).0,
        expired: tokio::sync::watch::channel(0).0,
        addr,
        requests: request_log::RequestLog::new(opts.record_requests),
        injector: faults::Injector::new(opts.faults),
        limits: opts.limits,
    });
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let task_shared = shared.clone();
    let thread = std::thread::Builder::new()
        .name("locality-sim-apiserver".into())
        .spawn(move || runtime.block_on(server::run(listener, task_shared, stopped)))
        .map_err(ServeError::Runtime)?;
    let mut running = Running {
        url: url.clone(),
        kubeconfig: kubeconfig.clone(),
        // Nothing written yet: a failed write removes nothing.
        owns_kubeconfig: false,
        shared,
        stop: Some(stop),
        thread: Some(thread),
    };
    // The socket listens since bind(); write the kubeconfig now.
    if let Err(source) = write_kubeconfig(&kubeconfig, &url) {
        running.stop_now();
        return Err(ServeError::Kubeconfig {
            path: kubeconfig,
            source,
        });
    }
    running.owns_kubeconfig = owns_kubeconfig;
    Ok(running)
}

/// The kubeconfig text for `url` (cluster, user and context `locality-sim`).
pub fn kubeconfig_text(url: &str) -> String {
    format!(
        "# A SIMULATED cluster served by `locality sim serve` (not a real Kubernetes cluster).\n\
apiVersion: v1\n\
kind: Config\n\
clusters:\n\
- name: {CONTEXT_NAME}\n  cluster:\n    server: {url}\n\
users:\n\
- name: {CONTEXT_NAME}\n  user: {{}}\n\
contexts:\n\
- name: {CONTEXT_NAME}\n  context:\n    cluster: {CONTEXT_NAME}\n    user: {CONTEXT_NAME}\n    namespace: default\n\
current-context: {CONTEXT_NAME}\n\
preferences: {{}}\n"
    )
}

fn write_kubeconfig(path: &Path, url: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp-locality-sim");
    std::fs::write(&tmp, kubeconfig_text(url))?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn a_backlog_over_the_limit_slips_the_clock() {
        // Within the limit: all of it is simulated.
        assert_eq!(catch_up_target(10_000, 6_000), (10_000, 0));
        assert_eq!(catch_up_target(10_000, 10_000), (10_000, 0));
        // Over it: the engine runs MAX_BACKLOG_MS, the rest is never simulated.
        assert_eq!(
            catch_up_target(700_000, 6_000),
            (6_000 + MAX_BACKLOG_MS, 700_000 - 6_000 - MAX_BACKLOG_MS)
        );
        let mut clock = Clock {
            start: Instant::now(),
            base: 700_000.0,
            speed: 0.0,
        };
        let (t, slip) = catch_up_target(clock.now(), 6_000);
        clock.slip(slip);
        assert_eq!(clock.now(), t);
    }
}
