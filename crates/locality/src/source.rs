//! Where the cluster state comes from: `-f` files, or the live cluster of the current
//! kubeconfig context (read-only), and the versions and data plane to model with it.

use locality_audit::InputKind;
use locality_live::{LiveOptions, LiveSnapshot, snapshot_blocking};
use locality_model::featuregate::FeatureGates;
use locality_model::matrix::{Assumed, DataPlane, MatrixConfig};
use locality_model::objects::ClusterState;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use locality_report::header::{ReportHeader, ReportSource, Summary};

use crate::cli::{ModelArgs, ProxyModeArg};
use crate::error::CliError;
use crate::inputs::{load_as_applied, rereadable, resolve_versions, warn_about};
use crate::progress::Progress;
use crate::ui::Ui;

/// A loaded cluster state with the configuration to model it.
pub struct Loaded {
    /// The objects.
    pub state: ClusterState,
    /// Versions and data plane.
    pub config: MatrixConfig,
    /// Files or live.
    pub kind: InputKind,
    /// The files read (file inputs only), in order.
    pub files: Vec<String>,
    /// The regular files among them and their sizes when read: the only inputs read again
    /// (SARIF's line numbers), and only while they keep that size.
    pub regular_files: std::collections::BTreeMap<String, u64>,
    /// Kinds the live cluster refused to list (they disable some conclusions).
    pub forbidden: Vec<String>,
    /// Where the state came from, as report headers name it.
    pub source: ReportSource,
    /// True when the state is simulated: `--sim`, or a live read of `locality sim serve`.
    pub simulated: bool,
    /// The version the API server reported (`v1.35.0`), live only.
    pub cluster_version: Option<String>,
    /// What was assumed rather than read (versions, proxy mode): routes that depend on it
    /// say so ([`locality_model::matrix::Assumed`]).
    pub assumed: Assumed,
    /// The known data plane detected live (with `cilium-config` and Calico's settings);
    /// `None` for files and `--sim` (the audit detects from the input's DaemonSets).
    pub detection: Option<locality_model::dataplane::Detection>,
    /// Pods of `-f` files counted but not decoded ([`PodsRead::WhenModelled`]).
    pub unread_pods: usize,
}

impl Loaded {
    /// The [`ReportHeader`] of a report on this state made by `command`, with `summary`
    /// (built by [`locality_report::header::build`], stamped by [`crate::clock`]).
    pub fn header(&self, command: &'static str, summary: Summary) -> ReportHeader {
        let detection = self.known_data_plane();
        crate::report_header(
            command,
            self.source.clone(),
            self.simulated,
            self.cluster_version.clone(),
            &self.config,
            Some(&detection),
            summary,
        )
    }

    /// The data plane detected: live, what the snapshot read (`cilium-config` and Calico's
    /// settings included); else from the input's DaemonSets, as `audit` detects it.
    pub fn known_data_plane(&self) -> locality_model::dataplane::Detection {
        self.detection.clone().unwrap_or_else(|| {
            use locality_model::dataplane::detect::{detect, facts_from_workloads};
            detect(&facts_from_workloads(&self.state.workloads))
        })
    }
}

fn forced_mode(arg: Option<ProxyModeArg>) -> Option<DataPlane> {
    arg.map(|m| match m {
        ProxyModeArg::Iptables => DataPlane::KubeProxy(Some(ProxyMode::Iptables)),
        ProxyModeArg::Nftables => DataPlane::KubeProxy(Some(ProxyMode::Nftables)),
        ProxyModeArg::Ipvs => DataPlane::KubeProxy(Some(ProxyMode::Ipvs)),
        ProxyModeArg::Unknown => DataPlane::KubeProxy(None),
    })
}

/// Loads the state the command works on. `namespace` restricts a live listing (Nodes are
/// always listed cluster-wide); `namespace_flag` is the user's `-n`, where objects from files
/// that name no namespace land (else the kubeconfig context's, else `default`, as kubectl).
pub fn load(
    args: &ModelArgs,
    namespace: Option<&str>,
    namespace_flag: Option<&str>,
    ui: &Ui,
    progress: &Progress,
) -> Result<Loaded, CliError> {
    load_reading(args, namespace, namespace_flag, ui, progress, PodsRead::Always)
}

/// When a load decodes the Pods of `-f` files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodsRead {
    /// Always (every command but `matrix`).
    Always,
    /// Only when the model reads them ([`locality_model::matrix::reads_pods`]: a Service
    /// with a selector and no EndpointSlice in the input, or `--derive`): the files are read
    /// with Pods counted, and read again when they are needed. Stdin and other streams,
    /// which cannot be read twice, and every input under `--derive` are read whole at once.
    WhenModelled,
}

/// As [`load`], with Pods of `-f` files read as `pods` says.
pub fn load_reading(
    args: &ModelArgs,
    namespace: Option<&str>,
    namespace_flag: Option<&str>,
    ui: &Ui,
    progress: &Progress,
    pods: PodsRead,
) -> Result<Loaded, CliError> {
    let loaded = load_any(args, namespace, namespace_flag, ui, progress, pods)?;
    if loaded.state.services.is_empty() {
        let from = match loaded.kind {
            InputKind::Files => loaded.files.join(", "),
            _ => match namespace {
                Some(ns) => format!("the cluster (namespace {ns})"),
                None => "the cluster".to_string(),
            },
        };
        let what = format!(
            "{from}: nothing to analyse: no Service (read: {})",
            census(&loaded.state, loaded.unread_pods)
        );
        if !args.allow_empty {
            return Err(CliError::usage(format!(
                "{what}; was this the input meant? --allow-empty accepts it"
            )));
        }
        ui.warn(&what);
    }
    Ok(loaded)
}

/// What a state holds, as `3 Nodes, 12 Pods` (kinds with none left out).
fn census(state: &locality_model::objects::ClusterState, unread_pods: usize) -> String {
    let kinds = [
        (state.nodes.len(), "Node"),
        (state.pods.len() + unread_pods, "Pod"),
        (state.services.len(), "Service"),
        (state.endpoint_slices.len(), "EndpointSlice"),
        (state.endpoints.len(), "Endpoints"),
        (state.workloads.len(), "workload"),
        (state.namespaces.len(), "Namespace"),
    ];
    let parts: Vec<String> = kinds
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| match (*n, *k) {
            (1, k) => format!("1 {k}"),
            (n, "Endpoints") => format!("{n} Endpoints"),
            (n, k) => format!("{n} {k}s"),
        })
        .collect();
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(", ")
    }
}

fn load_any(
    args: &ModelArgs,
    namespace: Option<&str>,
    namespace_flag: Option<&str>,
    ui: &Ui,
    progress: &Progress,
    pods: PodsRead,
) -> Result<Loaded, CliError> {
    // Malformed overrides are refused before any input is read.
    feature_gates(args)?;
    if let Some(topology) = &args.sim {
        return load_simulated(args, topology, ui, progress);
    }
    if !args.filenames.is_empty() {
        let read = |p: locality_ingest::Pods| {
            load_as_applied(&args.filenames, args.max_input_size, p, namespace_flag)
        };
        // `--derive` reads every Service's pods: no point counting them first.
        let lazy = pods == PodsRead::WhenModelled && !args.derive && rereadable(&args.filenames);
        let mut loaded = if lazy {
            read(locality_ingest::Pods::Count)?
        } else {
            read(locality_ingest::Pods::Decode)?
        };
        if loaded.unread_pods > 0 && locality_model::matrix::reads_pods(&loaded.state, args.derive) {
            // Released before the second read, so the two states are never held at once.
            drop(loaded);
            loaded = read(locality_ingest::Pods::Decode)?;
        }
        warn_about(&loaded, ui);
        let versions = resolve_versions(
            &loaded.state,
            args.kube_version.as_deref(),
            args.kube_proxy_version.as_deref(),
            ui,
        )?;
        let forced = forced_mode(args.proxy_mode);
        let assumed = Assumed {
            kube_proxy_version: versions.kube_proxy_assumed,
            kube_version: versions.kube_assumed,
            proxy_mode: forced.is_none(),
        };
        let data_plane = forced.unwrap_or(DataPlane::KubeProxy(Some(ProxyMode::Iptables)));
        let config = model_config(
            args,
            versions.kube,
            versions.kube_proxy,
            versions.per_node,
            data_plane,
        )?;
        return Ok(Loaded {
            state: loaded.state,
            config,
            kind: InputKind::Files,
            source: ReportSource::files(loaded.files.clone()),
            files: loaded.files,
            regular_files: loaded.regular_files,
            forbidden: Vec::new(),
            simulated: false,
            cluster_version: None,
            assumed,
            detection: None,
            unread_pods: loaded.unread_pods,
        });
    }
    let opts = LiveOptions {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        namespace: namespace.map(str::to_string),
        all_namespaces: args.all_namespaces || namespace.is_none(),
        request_timeout: args.request_timeout.filter(|t| !t.is_zero()),
        deadline: match args.live_timeout {
            None => Some(locality_live::DEFAULT_DEADLINE),
            Some(t) if t.is_zero() => None,
            Some(t) => Some(t),
        },
        ..LiveOptions::default()
    };
    let report = |kind: &str, items: usize| progress.set(format!("listing {kind}: {items} objects"));
    let snap = snapshot_blocking(&opts, Some(&report));
    progress.finish();
    let snap: LiveSnapshot = snap.map_err(CliError::from)?;
    for w in &snap.warnings {
        ui.warn(w);
    }
    let clamp = |v: KubeVersion| v.clamp(KubeVersion::OLDEST, KubeVersion::NEWEST);
    let kube_given = parse("--kube-version", &args.kube_version)?.or(snap.server_version.map(clamp));
    let kube = kube_given.unwrap_or(KubeVersion::NEWEST);
    let kube_proxy_given =
        parse("--kube-proxy-version", &args.kube_proxy_version)?.or(snap.kube_proxy_version.map(clamp));
    let kube_proxy = kube_proxy_given.unwrap_or(kube);
    // A mode read from the cluster (or forced) is known; an unknown one is evaluated in
    // every mode, so nothing is assumed about it.
    let assumed = Assumed {
        kube_proxy_version: kube_proxy_given.is_none(),
        kube_version: kube_given.is_none(),
        proxy_mode: false,
    };
    let data_plane = match forced_mode(args.proxy_mode) {
        Some(d) => d,
        None => {
            ui.note(&format!(
                "data plane {:?}: {}",
                snap.data_plane, snap.data_plane_source
            ));
            if matches!(
                snap.data_plane,
                DataPlane::KubeProxy(None) | DataPlane::Unknown | DataPlane::Other(_)
            ) {
                ui.warn(&format!(
                    "the proxy mode is not known ({}): verdicts that differ between iptables, nftables and ipvs are marked mode-dependent; to state it: --proxy-mode",
                    snap.data_plane_source
                ));
            }
            snap.data_plane.clone()
        }
    };
    let config = model_config(args, kube, kube_proxy, Default::default(), data_plane)?;
    Ok(Loaded {
        state: snap.state,
        config,
        kind: InputKind::Live,
        files: Vec::new(),
        regular_files: Default::default(),
        forbidden: snap.forbidden,
        source: ReportSource::live(snap.target.context.clone()),
        simulated: snap.simulated,
        cluster_version: snap.server_git_version.clone(),
        assumed,
        detection: Some(snap.data_plane_detection.clone()),
        unread_pods: 0,
    })
}

/// A fresh embedded simulated cluster, run for `--sim-at` virtual seconds, read as a
/// snapshot; versions and proxy mode are the simulation's own unless flags force them.
fn load_simulated(
    args: &ModelArgs,
    topology: &str,
    ui: &Ui,
    progress: &Progress,
) -> Result<Loaded, CliError> {
    progress.set(format!("running the simulated cluster {topology:?}"));
    // The simulated cluster runs its own release: gates that release refuses (the model may
    // be asked about another one with --kube-version) are the model's only.
    let sim_config = locality_sim::SimConfig {
        feature_gates: feature_gates(args)?,
        ..locality_sim::SimConfig::default()
    };
    let sim_gates = match sim_config.check_feature_gates() {
        Ok(()) => args.feature_gates.clone(),
        Err(e) => {
            ui.warn(&format!(
                "{e}: the simulated cluster runs every gate at {}'s default; the overrides apply to the model only",
                sim_config.kube_version
            ));
            Vec::new()
        }
    };
    let cluster = crate::cli::SimClusterArgs {
        topology: topology.to_string(),
        seed: 1,
        profile: Vec::new(),
        fixture: crate::cli::FixtureArg::Auto,
        feature_gates: sim_gates,
    };
    let mut engine = crate::commands::sim::build_engine(&cluster)?;
    engine.run_until(args.sim_at.saturating_mul(1000));
    progress.finish();
    let state = engine.cluster_state();
    let kube = parse("--kube-version", &args.kube_version)?.unwrap_or(engine.config().kube_version);
    let kube_proxy = parse("--kube-proxy-version", &args.kube_proxy_version)?
        .unwrap_or(engine.config().kube_proxy_version);
    let modes = crate::commands::sim::proxy_modes(&engine);
    let data_plane = forced_mode(args.proxy_mode).unwrap_or_else(|| {
        if modes.len() > 1 {
            ui.warn("the simulated nodes run different proxy modes; modelling with the first");
        }
        DataPlane::KubeProxy(Some(modes.into_iter().next().unwrap_or(ProxyMode::Iptables)))
    });
    ui.status(&format!(
        "reading the SIMULATED cluster {topology:?} after {} virtual seconds (a self-test, not a real cluster)",
        args.sim_at
    ));
    let config = model_config(args, kube, kube_proxy, Default::default(), data_plane)?;
    Ok(Loaded {
        state,
        config,
        kind: InputKind::Simulated,
        files: Vec::new(),
        regular_files: Default::default(),
        forbidden: Vec::new(),
        source: ReportSource::simulated(topology, args.sim_at),
        simulated: true,
        cluster_version: None,
        // The simulation's versions and modes are its own: nothing is assumed.
        assumed: Assumed::default(),
        detection: None,
        unread_pods: 0,
    })
}

/// The `--feature-gates` overrides (syntax, gate names and readers checked; versions later).
fn feature_gates(args: &ModelArgs) -> Result<FeatureGates, CliError> {
    FeatureGates::from_flags(&args.feature_gates).map_err(|e| CliError::usage(e.to_string()))
}

/// The model's configuration: the versions and data plane decided, `--derive`, and the
/// `--feature-gates` overrides refused as a component would refuse them at the versions
/// modelled (exit 2).
fn model_config(
    args: &ModelArgs,
    kube_version: KubeVersion,
    kube_proxy_version: KubeVersion,
    node_proxy_versions: std::collections::BTreeMap<String, KubeVersion>,
    data_plane: DataPlane,
) -> Result<MatrixConfig, CliError> {
    let config = MatrixConfig {
        kube_version,
        kube_proxy_version,
        node_proxy_versions,
        data_plane,
        derive: args.derive,
        feature_gates: feature_gates(args)?,
    };
    config
        .check_feature_gates()
        .map_err(|e| CliError::usage(e.to_string()))?;
    Ok(config)
}

/// A `--kube-version`-style flag's value, parsed.
fn parse(flag: &str, v: &Option<String>) -> Result<Option<KubeVersion>, CliError> {
    v.as_deref()
        .map(|v| {
            v.parse::<KubeVersion>()
                .map_err(|e| CliError::usage(format!("{flag}: {e}")))
        })
        .transpose()
}
