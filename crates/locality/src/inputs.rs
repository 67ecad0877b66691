//! Reading `-f` inputs and choosing the Kubernetes versions to model.

use std::collections::BTreeMap;
use std::path::PathBuf;

use locality_ingest::{LoadOptions, Loaded, Pods, load_paths};
use locality_model::endpointslice::mirroring::{AddressSkip, DEFAULT_MAX_ENDPOINTS_PER_SUBSET};
use locality_model::matrix::Matrix;
use locality_model::objects::ClusterState;
use locality_model::version::KubeVersion;

use crate::error::CliError;
use crate::ui::Ui;

/// Whether every input can be read twice: regular files and directories, not stdin (`-`)
/// or a FIFO or device.
pub fn rereadable(paths: &[PathBuf]) -> bool {
    paths
        .iter()
        .all(|p| p.as_os_str() != "-" && std::fs::metadata(p).is_ok_and(|m| m.is_file() || m.is_dir()))
}

/// Loads every `-f` input into one cluster state; input errors exit 2, and so does input
/// without a single object of a kind locality reads (an empty `List`, only ConfigMaps): the
/// user almost certainly pointed at the wrong file.
pub fn load_inputs(paths: &[PathBuf], max_input_size: Option<u64>, ui: &Ui) -> Result<Loaded, CliError> {
    let loaded = load_inputs_with(paths, max_input_size, Pods::Decode)?;
    warn_about(&loaded, ui);
    Ok(loaded)
}

/// As [`load_inputs`], with Pods read as `pods` says, and without the warnings
/// ([`warn_about`]).
pub fn load_inputs_with(
    paths: &[PathBuf],
    max_input_size: Option<u64>,
    pods: Pods,
) -> Result<Loaded, CliError> {
    let mut opts = LoadOptions::default().with_pods(pods);
    if let Some(max) = max_input_size {
        opts = opts.with_max_input_size(max);
    }
    let loaded = load_paths(paths, &opts).map_err(|e| CliError::input(&e))?;
    if loaded.is_empty() {
        let found = if loaded.skipped_kinds.is_empty() {
            "no objects".to_string()
        } else {
            let kinds: Vec<String> = loaded
                .skipped_kinds
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            format!("only {}", kinds.join(", "))
        };
        return Err(CliError::usage(format!(
            "{}: {found}; locality reads Nodes, Pods, Services, EndpointSlices, Endpoints, workloads and Namespaces (a `{}` dump)",
            loaded.files.join(", "),
            locality_model::objects::DUMP_COMMAND
        )));
    }
    Ok(loaded)
}

/// Loads `paths` as [`load_inputs_with`] does, and reads the objects as if `kubectl apply`
/// had stored them first (docs/semantics.md "Files are read as applied"): those naming no
/// namespace land in `namespace_flag` (`-n`), else the kubeconfig context's, else `default`.
pub fn load_as_applied(
    paths: &[PathBuf],
    max_input_size: Option<u64>,
    pods: Pods,
    namespace_flag: Option<&str>,
) -> Result<Loaded, CliError> {
    let mut loaded = load_inputs_with(paths, max_input_size, pods)?;
    let namespace = match namespace_flag {
        Some(ns) => ns.to_string(),
        None => locality_live::kubeconfig_namespace(&locality_live::LiveOptions::default())
            .ok()
            .flatten()
            .unwrap_or_else(|| "default".into()),
    };
    locality_model::admission::admit(
        &mut loaded.state,
        &locality_model::admission::AdmissionOptions { namespace },
    );
    Ok(loaded)
}

/// Warns about what a load skipped (kinds locality does not read) and its warnings.
pub fn warn_about(loaded: &Loaded, ui: &Ui) {
    if !loaded.skipped_kinds.is_empty() {
        let kinds: Vec<String> = loaded
            .skipped_kinds
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        ui.warn(&format!(
            "skipped objects of kinds locality does not read: {}",
            kinds.join(", ")
        ));
    }
    for w in &loaded.warnings {
        ui.warn(w);
    }
}

/// The versions to model.
#[derive(Debug, Clone)]
pub struct Versions {
    /// API server and controller manager.
    pub kube: KubeVersion,
    /// Default kube-proxy.
    pub kube_proxy: KubeVersion,
    /// Per-node kube-proxy versions (from each Node's kubeletVersion when not forced).
    pub per_node: BTreeMap<String, KubeVersion>,
    /// No `--kube-version`: the control plane's version is assumed.
    pub kube_assumed: bool,
    /// No `--kube-proxy-version`: kube-proxy's version is assumed (from `--kube-version`, the
    /// kubelets' versions or the newest release).
    pub kube_proxy_assumed: bool,
}

fn parse_flag(flag: &str, value: &str) -> Result<KubeVersion, CliError> {
    value
        .parse::<KubeVersion>()
        .map_err(|e| CliError::usage(format!("{flag}: {e}")))
}

/// Chooses versions (docs/design.md §2 "Versions and skew"): flags win, and `--kube-proxy-version`
/// defaults to `--kube-version`; without flags, on files, the control plane defaults to the
/// newest Node `kubeletVersion` (the control plane is never older than its kubelets) and each
/// node's kube-proxy to its own kubelet's version, with a warning; without either, the newest
/// supported release. Versions outside the supported range are clamped
/// with a warning.
pub fn resolve_versions(
    state: &ClusterState,
    kube_flag: Option<&str>,
    proxy_flag: Option<&str>,
    ui: &Ui,
) -> Result<Versions, CliError> {
    let kube_forced = kube_flag.map(|v| parse_flag("--kube-version", v)).transpose()?;
    let proxy_forced = proxy_flag
        .map(|v| parse_flag("--kube-proxy-version", v))
        .transpose()?;

    let clamp = |v: KubeVersion| v.clamp(KubeVersion::OLDEST, KubeVersion::NEWEST);
    let mut kubelets: BTreeMap<String, KubeVersion> = BTreeMap::new();
    let mut out_of_range = Vec::new();
    for node in &state.nodes {
        if let Some(v) = node.kubelet_version.as_deref().and_then(KubeVersion::parse_loose) {
            if clamp(v) != v {
                out_of_range.push(format!("{} ({})", node.meta.name, v));
            }
            kubelets.insert(node.meta.name.clone(), clamp(v));
        }
    }
    if !out_of_range.is_empty() {
        ui.warn(&format!(
            "kubeletVersion outside the modelled range {}..={} on {}; clamped; to state the versions: --kube-version (and --kube-proxy-version)",
            KubeVersion::OLDEST,
            KubeVersion::NEWEST,
            out_of_range.join(", ")
        ));
    }
    let newest_kubelet = kubelets.values().max().copied();
    let kube = match (kube_forced, newest_kubelet) {
        (Some(v), _) => v,
        (None, Some(v)) => {
            let (proxy, flags) = if proxy_forced.is_some() {
                ("", "--kube-version")
            } else {
                (
                    " and each node's kube-proxy its kubelet's version",
                    "--kube-version (and --kube-proxy-version)",
                )
            };
            // An assumption warning ends with the flag that silences it.
            ui.warn(&format!(
                "assuming the control plane runs {v} (the newest kubeletVersion of the Nodes){proxy}; to state it: {flags}"
            ));
            v
        }
        (None, None) => KubeVersion::NEWEST,
    };
    let (kube_proxy, per_node) = match (proxy_forced, kube_forced) {
        (Some(v), _) => (v, BTreeMap::new()),
        // --kube-version alone: kube-proxy runs the same version everywhere.
        (None, Some(v)) => (v, BTreeMap::new()),
        (None, None) if !kubelets.is_empty() => {
            let per_node = kubelets.into_iter().filter(|(_, v)| *v != kube).collect();
            (kube, per_node)
        }
        (None, None) => (kube, BTreeMap::new()),
    };
    Ok(Versions {
        kube,
        kube_proxy,
        per_node,
        kube_assumed: kube_forced.is_none(),
        kube_proxy_assumed: proxy_forced.is_none(),
    })
}

/// Notes (with `-v`) the events the EndpointSlice controller model would record, and what
/// the mirroring controller model did with Endpoints objects.
pub fn report_controller_events(matrix: &Matrix<'_>, ui: &Ui) {
    for (service, event) in &matrix.notes.controller_events {
        ui.note(&format!(
            "EndpointSlice controller (model) event on Service {service}: {} {}: {}",
            event.event_type.as_str(),
            event.reason,
            event.message
        ));
    }
    for (endpoints, note) in &matrix.notes.mirroring {
        if let Some(why) = note.not_mirrored {
            ui.note(&format!(
                "EndpointSlice mirroring controller (model): Endpoints {endpoints} not mirrored: {why}"
            ));
        }
        // Addresses left out, by reason: a count and the first few (there may be thousands).
        for reason in [AddressSkip::InvalidIp, AddressSkip::OverMaxPerSubset] {
            let ips: Vec<&str> = note
                .skipped
                .iter()
                .filter(|s| s.reason == reason)
                .map(|s| s.ip.as_str())
                .collect();
            if ips.is_empty() {
                continue;
            }
            let why = match reason {
                AddressSkip::InvalidIp => "not IP addresses".to_string(),
                AddressSkip::OverMaxPerSubset => {
                    format!("over the {DEFAULT_MAX_ENDPOINTS_PER_SUBSET} addresses mirrored per subset")
                }
            };
            let more = if ips.len() > 3 {
                format!(" and {} more", ips.len() - 3)
            } else {
                String::new()
            };
            ui.note(&format!(
                "EndpointSlice mirroring controller (model): Endpoints {endpoints}: {} address(es) left out, {why}: {}{more}",
                ips.len(),
                ips[..ips.len().min(3)].join(", ")
            ));
        }
        for event in &note.events {
            ui.note(&format!(
                "EndpointSlice mirroring controller (model) event on Endpoints {endpoints}: {} {}: {}",
                event.event_type.as_str(),
                event.reason,
                event.message
            ));
        }
    }
}
