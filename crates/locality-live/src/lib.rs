//! Reads a live Kubernetes cluster, read-only, into the locality model's [`ClusterState`].
//!
//! [`snapshot`] (or [`snapshot_blocking`] from synchronous code) resolves the kubeconfig as
//! kubectl does ([`LiveOptions`]), lists every kind the model reads with `limit`/`continue`
//! pagination, and detects the API server's version, kube-proxy's version and the data
//! plane (docs/design.md §2 "Versions and skew", "Data planes").
//!
//! # How it reads
//!
//! Requests are raw `GET`s through a kube-rs [`Client`](kube::Client) (kubeconfig auth,
//! exec plugins, TLS with rustls): `/version`, then `/api/v1/nodes`, `namespaces`,
//! `services`, `/apis/discovery.k8s.io/v1/endpointslices`, `/api/v1/pods` and
//! `/apis/apps/v1/{daemonsets,deployments,replicasets,statefulsets}`, cluster-wide with
//! `-A` or in one namespace with `-n` (Nodes always cluster-wide). Each page's bytes go to
//! [`locality_ingest::load_bytes`], the same lean parser as for files, named
//! `<server><path> (page N)` in errors; a page parses while the next one downloads. The
//! data plane comes from `kube-system`: the `kube-proxy` DaemonSet (image tag, args) and
//! its ConfigMap, or a Cilium kube-proxy replacement. Only `get` and `list` are used;
//! `deploy/rbac-audit.yaml` in the repository grants exactly these.
//!
//! Objects read live have an empty [`Origin`](locality_model::objects::Origin) (no file):
//! reports locate them as `namespace/kind/name`.
//!
//! # Failures
//!
//! - A `403 Forbidden` (or `404`) on one kind is not fatal: the kind is named in
//!   [`LiveSnapshot::forbidden`] and a warning says which conclusions it disables.
//! - `429` and `5xx` are retried three times (100, 200, 400 ms, or the server's
//!   `Retry-After` up to 10 s); a continue token that expired (`410 Gone`) restarts that
//!   kind's list once.
//! - Everything else is a [`LiveError`] carrying the server's message (masked, shortened,
//!   escaped: `locality_report::display::server_text`): no kubeconfig, unknown context,
//!   connection refused, TLS, `401 Unauthorized`, a 5xx after retries.
//! - Bounds (docs/untrusted-input.md): an answer over 64 MiB, a continue token handed back
//!   twice, a whole read past [`LiveOptions::deadline`], a credential plugin that floods
//!   its output or does not exit (it is killed) are errors.
//!
//! ```no_run
//! let opts = locality_live::LiveOptions { all_namespaces: true, ..Default::default() };
//! let snap = locality_live::snapshot_blocking(&opts, None)?;
//! for w in &snap.warnings {
//!     eprintln!("warning: {w}");
//! }
//! println!("{} nodes, data plane {}", snap.state.nodes.len(), snap.data_plane_source);
//! # Ok::<(), locality_live::LiveError>(())
//! ```

use std::path::PathBuf;

use locality_ingest::LoadOptions;
use locality_model::matrix::DataPlane;
use locality_model::objects::ClusterState;
use locality_model::version::KubeVersion;

mod config;
mod dataplane;
mod error;
mod exec;
mod fetch;
mod kinds;
mod oneshot;

pub use error::LiveError;
pub use kinds::{KINDS, KindSpec};

use fetch::{Api, Failure};
use oneshot::{one_shot_client, within_deadline};

/// Default page size (`limit`), as kubectl's `--chunk-size`.
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// Which cluster and namespaces to read; the CLI's `--kubeconfig`, `--context`, `-n`,
/// `-A` and a page size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveOptions {
    /// `--kubeconfig PATH`; else `KUBECONFIG` (a path list, missing files ignored, first
    /// file wins per key), else `~/.kube/config`, else the pod's ServiceAccount.
    pub kubeconfig: Option<PathBuf>,
    /// `--context NAME`; else the kubeconfig's `current-context`.
    pub context: Option<String>,
    /// `-n NS`; else the context's namespace, else `default`. Ignored with `all_namespaces`.
    pub namespace: Option<String>,
    /// `-A`: every namespace.
    pub all_namespaces: bool,
    /// Objects per page (`limit`); 0 lists each kind in one response.
    pub page_size: u32,
    /// `--request-timeout`: how long one request may take to answer completely, as
    /// kubectl's flag; `None` (kubectl's `0`): no limit per request. A limit also bounds
    /// the credential plugin (below [`CREDENTIAL_TIMEOUT`]).
    pub request_timeout: Option<std::time::Duration>,
    /// `--live-timeout`: how long a whole one-shot read ([`snapshot`], [`get_blocking`])
    /// may take, every request and the credential plugin included; `None`: no limit.
    /// [`DEFAULT_DEADLINE`] by default, so that a server answering one byte a second or a
    /// list that never ends cannot hold a command forever.
    pub deadline: Option<std::time::Duration>,
}

/// How long a one-shot read may take by default ([`LiveOptions::deadline`]).
pub const DEFAULT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            kubeconfig: None,
            context: None,
            namespace: None,
            all_namespaces: false,
            page_size: DEFAULT_PAGE_SIZE,
            request_timeout: None,
            deadline: Some(DEFAULT_DEADLINE),
        }
    }
}

/// The cluster actually read, after resolution (for messages and reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The kubeconfig file(s) used (`:`-separated when `KUBECONFIG` lists several), or
    /// `in-cluster`.
    pub kubeconfig: String,
    /// The context used (`None` in-cluster).
    pub context: Option<String>,
    /// The API server URL.
    pub server: String,
    /// The namespace read, `None` for all namespaces (`-A`).
    pub namespace: Option<String>,
    /// The cluster's `insecure-skip-tls-verify` is set: the server's certificate is not
    /// checked (a warning says so).
    pub insecure_skip_tls_verify: bool,
}

/// A read-only snapshot of a live cluster.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LiveSnapshot {
    /// The objects read (origins empty: live objects have no file).
    pub state: ClusterState,
    /// The API server's minor version from `/version` (`gitVersion`), if readable.
    pub server_version: Option<KubeVersion>,
    /// The API server's `gitVersion` as given (`v1.35.2-eks-…`), if readable.
    pub server_git_version: Option<String>,
    /// The API server is locality's **simulated** one (`locality sim serve`, `verify`'s
    /// default target): its `gitVersion` carries the build metadata `+locality-simulated`
    /// ([`is_simulated_version`]). False when `/version` was unreadable.
    pub simulated: bool,
    /// kube-proxy's version from the `kube-system/kube-proxy` DaemonSet's image tag, if
    /// readable (never `Node.status.nodeInfo.kubeProxyVersion`, empty since 1.33). The CLI
    /// defaults it to the server's version when `None`.
    pub kube_proxy_version: Option<KubeVersion>,
    /// The data plane and proxy mode found (`KubeProxy(None)` when kube-proxy runs but its
    /// mode is unknown). A `--proxy-mode` flag overrides it.
    pub data_plane: DataPlane,
    /// How the data plane was found, e.g. `DaemonSet kube-system/kube-proxy --proxy-mode:
    /// mode ipvs` or `ConfigMap kube-system/kube-proxy config.conf: mode "" (the default
    /// of kube-proxy 1.35: iptables)`.
    pub data_plane_source: String,
    /// The known data plane that implements Services and its version
    /// (`locality_model::dataplane::detect` over the DaemonSets listed, `cilium-config` and
    /// Calico's `default` FelixConfiguration), with what was looked at.
    pub data_plane_detection: locality_model::dataplane::Detection,
    /// Everything the user should know: forbidden kinds and what they disable, a restarted
    /// list, an unknown proxy mode and why, parser warnings. One line each.
    pub warnings: Vec<String>,
    /// Kinds (`Pod`, `EndpointSlice`…) whose list was refused with 403 Forbidden.
    pub forbidden: Vec<String>,
    /// The cluster read.
    pub target: Target,
    /// Pages fetched over all kinds.
    pub pages: usize,
    /// Bytes of object lists read.
    pub bytes_read: u64,
}

/// The semver build metadata by which locality's simulated API server marks its `/version`
/// `gitVersion` (`v1.35.0+locality-simulated`).
pub const SIMULATED_BUILD_METADATA: &str = "locality-simulated";

/// Whether a `/version` `gitVersion` is that of locality's **simulated** API server: a
/// semver version whose build metadata (after `+`, dot-separated identifiers) includes
/// `locality-simulated`, e.g. `v1.35.0+locality-simulated`. Real releases
/// (`v1.35.2`, `v1.30.1-eks-abc`, `v1.29.3+k3s1`) are not.
pub fn is_simulated_version(git_version: &str) -> bool {
    git_version
        .trim()
        .split_once('+')
        .is_some_and(|(_, build)| build.split('.').any(|id| id == SIMULATED_BUILD_METADATA))
}

/// Progress reports: the kind being listed (`Pod`) and how many of it were read so far,
/// after each page. Called on the caller's task, between requests.
pub type Progress<'a> = &'a (dyn Fn(&str, usize) + Sync);

/// A kube-rs client for the cluster `opts` points at (kubeconfig resolved as kubectl does),
/// and the cluster it resolved to. For callers that write (`verify`); `snapshot` reads.
///
/// # Errors
/// [`LiveError::Kubeconfig`] when no usable kubeconfig or context is found.
pub async fn client(opts: &LiveOptions) -> Result<(kube::Client, Target), LiveError> {
    let resolved = config::resolve(opts).await?;
    let target = resolved.target;
    let credential_timeout = opts
        .request_timeout
        .map_or(CREDENTIAL_TIMEOUT, |t| t.min(CREDENTIAL_TIMEOUT));
    // kube-rs runs a credential plugin (here, and again whenever its credential expires, as
    // a long verify run needs) without a bound on its output or its run, and reports a
    // failure as a dump of all it printed: run it once first within `exec`'s bounds, so that
    // a plugin that fails, floods or hangs is reported as for one-shot reads.
    if let Some(exec) = resolved.config.auth_info.exec.clone() {
        use secrecy::ExposeSecret as _;
        let auth = &resolved.config.auth_info;
        let known: Vec<String> = auth
            .token
            .iter()
            .chain(auth.password.iter())
            .map(|s| s.expose_secret().to_owned())
            .collect();
        let run = tokio::task::spawn_blocking(move || {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            exec::run(&exec, credential_timeout, &known).map(|_| ())
        });
        run.await
            .map_err(|e| format!("the credential plugin could not be run: {e}"))
            .and_then(|r| r)
            .map_err(|message| LiveError::Kubeconfig {
                source_name: target.kubeconfig.clone(),
                message,
            })?;
    }
    let client = build_client(resolved.config, credential_timeout)
        .await
        .map_err(|message| LiveError::Kubeconfig {
            source_name: target.kubeconfig.clone(),
            message,
        })?;
    Ok((client, target))
}

/// How long building a client may take (at most; a shorter `--request-timeout` wins): it
/// runs the context's credential plugin (`exec`) once, which kube-rs does synchronously
/// and without a limit.
pub const CREDENTIAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Builds the client off the async thread, within `timeout`: a credential plugin that never
/// exits is an error, not a hang. The plugin process is left to the OS when the CLI exits.
async fn build_client(config: kube::Config, timeout: std::time::Duration) -> Result<kube::Client, String> {
    // Named by its command (a path or a program name), never by its arguments or output.
    let plugin = config
        .auth_info
        .exec
        .as_ref()
        .and_then(|e| e.command.clone())
        .map_or_else(String::new, |c| format!(" {c:?}"));
    let build = tokio::task::spawn_blocking(move || kube::Client::try_from(config));
    match tokio::time::timeout(timeout, build).await {
        Err(_) => Err(format!(
            "the credential plugin{plugin} (users[].user.exec) did not answer within {:?}",
            timeout
        )),
        Ok(Err(join)) => Err(format!("building the client failed: {join}")),
        Ok(Ok(built)) => built.map_err(|e| error::chain(&e)),
    }
}

/// The user name (`contexts[].context.user`) of the kubeconfig context `opts` resolves to,
/// as kubectl would resolve it (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`; `--context`,
/// else `current-context`): who a run's evidence is attributed to by default. `None`
/// in-cluster (no kubeconfig) or when the context names no user.
///
/// Only the name is taken: no credential is read (no exec plugin or auth provider runs, no
/// token or certificate file is opened) and nothing is written.
///
/// # Errors
/// As [`client`]: [`LiveError::NoKubeconfig`] or [`LiveError::Kubeconfig`] when no usable
/// kubeconfig or context is found.
pub fn kubeconfig_user(opts: &LiveOptions) -> Result<Option<String>, LiveError> {
    config::context_user(opts)
}

/// When `err` or one of its sources is kube-rs's failing credential plugin (reported with a
/// dump of all it printed), the failure as locality reports it: the plugin's command, exit
/// status and stderr shortened, escaped and masked. `None` for any other error.
pub fn credential_plugin_failure(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    error::plugin_failure(err)
}

/// The warning a read of a cluster whose kubeconfig sets `insecure-skip-tls-verify` gives
/// (`server`: its URL as shown).
pub fn insecure_warning(server: &str) -> String {
    format!(
        "insecure-skip-tls-verify is set for {server}: the API server's certificate is not checked, so \
         anyone between here and it can answer in its name"
    )
}

/// The server of the kubeconfig context `opts` resolves to when its cluster has
/// `insecure-skip-tls-verify: true` (`None` otherwise and in-cluster). Reads no credential,
/// as [`kubeconfig_user`].
///
/// # Errors
/// As [`kubeconfig_user`].
pub fn kubeconfig_insecure_skip_tls_verify(opts: &LiveOptions) -> Result<Option<String>, LiveError> {
    config::context_insecure(opts)
}

/// The namespace (`contexts[].context.namespace`) of the kubeconfig context `opts` resolves
/// to, as kubectl resolves it: where `kubectl apply -f` puts objects that name none. `None`
/// in-cluster or when the context names none. Reads no credential, as [`kubeconfig_user`].
///
/// # Errors
/// As [`kubeconfig_user`].
pub fn kubeconfig_namespace(opts: &LiveOptions) -> Result<Option<String>, LiveError> {
    config::context_namespace(opts)
}

/// Takes a read-only snapshot of the cluster `opts` points at.
///
/// `progress`, when given, is told after each page which kind is being listed and how many
/// of its objects were read so far (for a progress bar; write it to stderr).
///
/// # Errors
/// See [`LiveError`]; forbidden kinds are warnings, not errors.
pub async fn snapshot(opts: &LiveOptions, progress: Option<Progress<'_>>) -> Result<LiveSnapshot, LiveError> {
    within_deadline(opts, snapshot_now(opts, progress)).await
}

async fn snapshot_now(opts: &LiveOptions, progress: Option<Progress<'_>>) -> Result<LiveSnapshot, LiveError> {
    let (client, target, secrets) = one_shot_client(opts).await?;
    let api = Api::new(opts, client, &target, secrets);
    let mut warnings = Vec::new();
    if target.insecure_skip_tls_verify {
        warnings.push(insecure_warning(&target.server));
    }

    // /version first: it is readable by everyone (system:public-info-viewer), so it tells
    // an unreachable server or bad credentials before anything else.
    let (server_version, server_git_version) = match api.get("/version").await? {
        Ok(body) => {
            #[derive(serde::Deserialize)]
            struct Info {
                #[serde(default, rename = "gitVersion")]
                git_version: String,
            }
            match serde_json::from_slice::<Info>(&body) {
                Ok(info) => {
                    let v = KubeVersion::parse_loose(&info.git_version);
                    if v.is_none() {
                        warnings.push(format!(
                            "/version: cannot read the version in gitVersion \"{}\"",
                            api.quote(&info.git_version)
                        ));
                    }
                    // A real gitVersion is short; a server's own text is kept bounded in
                    // the report (escaped where it is shown).
                    let shown = locality_report::display::shorten(&info.git_version, 120).into_owned();
                    (v, Some(shown))
                }
                Err(e) => {
                    warnings.push(format!("/version: unreadable response: {e}"));
                    (None, None)
                }
            }
        }
        Err(f) => {
            warnings.push(format!(
                "cannot read the API server's version (/version: {} {}: {}); pass --kube-version",
                f.code, f.reason, f.message
            ));
            (None, None)
        }
    };

    let mut state = ClusterState::default();
    let mut forbidden = Vec::new();
    let mut pages = 0usize;
    let mut bytes_read = 0u64;
    let ns = target.namespace.as_deref();
    let scope = match ns {
        Some(ns) => format!("in namespace {ns}"),
        None => "in all namespaces".to_owned(),
    };
    for spec in KINDS {
        let report = |n: usize| {
            if let Some(p) = progress {
                p(spec.kind, n);
            }
        };
        let outcome = match (spec.kind, ns) {
            ("Namespace", Some(name)) => get_one(&api, &format!("/api/v1/namespaces/{name}")).await?,
            _ => {
                let mut notes = Vec::new();
                let r = api
                    .list(&spec.path(ns), opts.page_size, &report, &mut notes)
                    .await?;
                warnings.extend(notes);
                r
            }
        };
        match outcome {
            Ok(listed) => {
                pages += listed.pages;
                bytes_read += listed.bytes;
                warnings.extend(listed.warnings);
                state.append(listed.state);
            }
            Err(f) if f.code == 403 => {
                let where_ = if spec.namespaced {
                    scope.as_str()
                } else {
                    "(cluster-wide)"
                };
                warnings.push(format!(
                    "forbidden: cannot list {} ({}) {where_}: {}; without them: {}",
                    plural(spec.kind),
                    spec.qualified(),
                    f.message,
                    spec.without
                ));
                forbidden.push(spec.kind.to_owned());
            }
            Err(f) if f.code == 404 && spec.kind == "Namespace" => {
                warnings.push(format!(
                    "namespace {:?} not found: {}",
                    ns.unwrap_or_default(),
                    f.message
                ));
            }
            Err(f) if f.code == 404 => {
                warnings.push(format!(
                    "the API server does not serve {} ({}): {}; without them: {}",
                    spec.qualified(),
                    f.url,
                    f.message,
                    spec.without
                ));
            }
            Err(f) => return Err(f.fatal()),
        }
    }

    let mut detected = dataplane::detect(&api, &state.pods, server_version).await?;
    warnings.extend(detected.notes);
    let mut detection = dataplane::known(&api, &state.workloads).await?;
    // kube-proxy's mode, as read above (its flags, else its ConfigMap): the catalogue has
    // entries for one mode (ipvs).
    if detection.plane == Some(locality_model::dataplane::Plane::KubeProxy)
        && let DataPlane::KubeProxy(Some(mode)) = &detected.data_plane
    {
        detection.settings.insert("mode".into(), mode.as_str().into());
    }
    if let Some(plane) = detection
        .plane
        .filter(|p| *p != locality_model::dataplane::Plane::KubeProxy)
        && matches!(detected.data_plane, DataPlane::Unknown)
    {
        detected.data_plane = DataPlane::Other(plane.to_string());
        detected.source = detection.source.clone();
    }
    Ok(LiveSnapshot {
        state,
        server_version,
        simulated: server_git_version.as_deref().is_some_and(is_simulated_version),
        server_git_version,
        kube_proxy_version: detected.kube_proxy_version,
        data_plane: detected.data_plane,
        data_plane_source: detected.source,
        data_plane_detection: detection,
        warnings,
        forbidden,
        target,
        pages,
        bytes_read,
    })
}

/// [`snapshot`] for synchronous callers: runs it on a current-thread tokio runtime.
///
/// # Errors
/// As [`snapshot`], plus [`LiveError::Runtime`] when the runtime cannot start.
pub fn snapshot_blocking(
    opts: &LiveOptions,
    progress: Option<Progress<'_>>,
) -> Result<LiveSnapshot, LiveError> {
    block_on(snapshot(opts, progress))
}

/// Runs `work` on a current-thread runtime of its own.
fn block_on<T>(work: impl std::future::Future<Output = Result<T, LiveError>>) -> Result<T, LiveError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LiveError::Runtime(e.to_string()))?;
    let result = runtime.block_on(work);
    // A credential plugin abandoned by `build_client` may still hold a blocking thread:
    // never wait for it.
    runtime.shutdown_background();
    result
}

/// One GET of `path` (a non-resource path such as the simulated API server's
/// `/simulated/…` documents) on the cluster `opts` points at, retried as every read is: the
/// answer's bytes. For synchronous callers (a current-thread runtime).
///
/// # Errors
/// As [`client`]; [`LiveError::Api`] for a non-success answer (naming the server's
/// reason and message); [`LiveError::Runtime`].
pub fn get_blocking(opts: &LiveOptions, path: &str) -> Result<Vec<u8>, LiveError> {
    block_on(async {
        within_deadline(opts, async {
            let (client, target, secrets) = one_shot_client(opts).await?;
            let api = Api::new(opts, client, &target, secrets);
            api.get(path).await?.map_err(Failure::fatal)
        })
        .await
    })
}

/// One object by name (the namespace of `-n`), as a one-page [`fetch::Listed`].
async fn get_one(api: &Api, path: &str) -> Result<Result<fetch::Listed, Failure>, LiveError> {
    let body = match api.get(path).await? {
        Ok(body) => body,
        Err(f) => return Ok(Err(f)),
    };
    let name = format!("{}{path}", api.server);
    let loaded = locality_ingest::load_bytes(&name, &body, &LoadOptions::default())?;
    let mut state = loaded.state;
    fetch::clear_origins(&mut state);
    Ok(Ok(fetch::Listed {
        state,
        warnings: loaded.warnings,
        pages: 1,
        bytes: body.len() as u64,
    }))
}

/// `Pods`, `EndpointSlices`…
fn plural(kind: &str) -> String {
    format!("{kind}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_versions_are_told_by_their_build_metadata() {
        for v in [
            "v1.35.0+locality-simulated",
            "v1.27.0+locality-simulated",
            " v1.35.0+build.7.locality-simulated ",
            "1.35.0+locality-simulated",
        ] {
            assert!(is_simulated_version(v), "{v}");
        }
        for v in [
            "v1.35.0",
            "v1.30.1-eks-abc1234",
            "v1.29.3+k3s1",
            "v1.35.0-locality-simulated",
            "v1.35.0+locality-simulated-not",
            "v1.35.0+xlocality-simulated",
            "",
        ] {
            assert!(!is_simulated_version(v), "{v}");
        }
        // The version before the marker reads as any release's.
        assert_eq!(
            KubeVersion::parse_loose("v1.35.0+locality-simulated"),
            Some(KubeVersion::new(1, 35))
        );
    }
}

#[cfg(test)]
mod credential_tests {
    use super::*;

    /// A credential plugin that never exits ends in an error naming it, in bounded time (the
    /// runtime is shut down without waiting for the abandoned plugin, as `snapshot_blocking`
    /// does).
    #[test]
    fn a_credential_plugin_that_never_answers_is_an_error() {
        let dir = locality_testkit::files::TempDir::new("hang");
        let plugin = dir.join("hang.sh");
        std::fs::write(&plugin, "#!/bin/sh\nexec sleep 30\n").unwrap();
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&plugin)
            .status()
            .unwrap();
        let yaml = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nclusters:\n- name: k\n  cluster: {{server: \"https://127.0.0.1:1\"}}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: {}\n      interactiveMode: Never\n",
            plugin.display()
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let started = std::time::Instant::now();
        let err = runtime.block_on(async {
            let kubeconfig = kube::config::Kubeconfig::from_yaml(&yaml).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .unwrap();
            build_client(config, std::time::Duration::from_secs(1))
                .await
                .err()
                .expect("an error")
        });
        runtime.shutdown_background();
        assert!(err.contains("credential plugin"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
}
