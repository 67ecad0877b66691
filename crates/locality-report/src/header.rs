//! The header every report carries: what it is a report of. One builder ([`build`]) and one
//! printer per format ([`write_text`], [`markdown`], [`html`], [`sarif_properties`],
//! [`junit_properties`]; JSON and YAML documents carry the [`ReportHeader`] as their
//! `header` field).
//!
//! A header names the source (files, a kubeconfig context, or a simulated topology), the
//! versions modelled and the cluster's own when it said, the time the report was made
//! (RFC 3339, UTC; the caller's clock), the tool's version, the known data plane detected
//! (a kube-proxy replacement: name, version, the object it was seen in), and the report's
//! summary counts. When the input was the simulated cluster every printer writes
//! [`SIMULATED_BANNER`], in plain words, so that a grep for "simulated" finds it.

use std::fmt::Write as _;
use std::io::{self, Write};

use locality_model::dataplane::{Detection, Plane};
use locality_model::matrix::{DataPlane, MatrixConfig};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// The banner of every report whose input was the simulated cluster.
pub const SIMULATED_BANNER: &str = "SIMULATED cluster: this report was computed on locality's embedded simulated cluster, a self-test and teaching aid; it is not evidence about a real cluster";

/// Where the state a report describes came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportSource {
    /// `files`, `live` or `simulated` (an embedded simulated cluster built by the command;
    /// a served simulated cluster read through its API is `live` with
    /// [`ReportHeader::simulated`] set).
    pub kind: &'static str,
    /// The files read, in order (`-` for stdin).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The kubeconfig context read (live).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The simulated topology (built-in name or file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
    /// Virtual seconds the simulated cluster ran before it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtual_seconds: Option<u64>,
}

impl ReportSource {
    /// `-f` inputs.
    pub fn files(files: Vec<String>) -> Self {
        ReportSource {
            kind: "files",
            files,
            ..ReportSource::default()
        }
    }
    /// A live cluster, by kubeconfig context.
    pub fn live(context: Option<String>) -> Self {
        ReportSource {
            kind: "live",
            context,
            ..ReportSource::default()
        }
    }
    /// An embedded simulated cluster built from `topology` and run `virtual_seconds`.
    pub fn simulated(topology: &str, virtual_seconds: u64) -> Self {
        ReportSource {
            kind: "simulated",
            topology: Some(topology.to_string()),
            virtual_seconds: Some(virtual_seconds),
            ..ReportSource::default()
        }
    }

    /// The source in words: `files a.json, b.yaml`, `live context kind-kind`,
    /// `simulated topology three-zones after 60 virtual seconds`.
    pub fn text(&self) -> String {
        match self.kind {
            "files" => format!("files {}", self.files.join(", ")),
            "live" => match &self.context {
                Some(c) => format!("live cluster, kubeconfig context {c}"),
                None => "live cluster".to_string(),
            },
            _ => {
                let mut s = format!("simulated topology {}", self.topology.as_deref().unwrap_or("?"));
                if let Some(v) = self.virtual_seconds {
                    let _ = write!(s, " after {}", plural(v, "virtual second", "virtual seconds"));
                }
                s
            }
        }
    }
}

/// One summary count, named for programs (`key`) and for people (`one`/`many`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// The JSON key (`findings`, `servicePorts`).
    pub key: &'static str,
    /// The words for one (`finding`).
    pub one: &'static str,
    /// The words for any other number (`findings`).
    pub many: &'static str,
    /// The count.
    pub count: u64,
}

impl Count {
    /// A count.
    pub fn new(key: &'static str, one: &'static str, many: &'static str, count: usize) -> Self {
        Count {
            key,
            one,
            many,
            count: count as u64,
        }
    }
}

/// The summary counts, in order; serialized as an object (`{"findings": 2, …}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary(pub Vec<Count>);

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for c in &self.0 {
            map.serialize_entry(c.key, &c.count)?;
        }
        map.end()
    }
}

impl Summary {
    /// `2 findings, 1 error, 0 warnings`.
    pub fn text(&self) -> String {
        self.0
            .iter()
            .map(|c| plural(c.count, c.one, c.many))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a report is a report of (the `header` field of the JSON and YAML documents).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportHeader {
    /// Always `locality`.
    pub tool: &'static str,
    /// The version of locality that wrote the report.
    pub tool_version: String,
    /// The command (`audit`, `matrix`, `explain`, `simulate`).
    pub command: &'static str,
    /// When the report was made, RFC 3339 in UTC.
    pub generated_at: String,
    /// True when the input was a simulated cluster (embedded or served).
    pub simulated: bool,
    /// [`SIMULATED_BANNER`] when simulated (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banner: Option<&'static str>,
    /// Where the state came from.
    pub source: ReportSource,
    /// The API server / controller manager version modelled (`1.35`).
    pub kubernetes_version: String,
    /// The kube-proxy version modelled (nodes may override it).
    pub kube_proxy_version: String,
    /// The data plane modelled in words (`iptables`, `mode unknown`, `replaced by cilium`).
    pub data_plane: String,
    /// `--feature-gates` overrides modelled, as `component:Gate=value` (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<String>,
    /// The version the cluster's API server reported (`v1.35.0`), when it was read live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_version: Option<String>,
    /// The known data plane that replaces kube-proxy, when one was detected
    /// (docs/dataplanes.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_data_plane: Option<KnownDataPlane>,
    /// The report's counts.
    pub summary: Summary,
}

/// A known data plane detected in the input (`locality_model::dataplane::detect`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownDataPlane {
    /// `cilium`, `calico-ebpf`, `kube-router`, `ovn-kubernetes`.
    pub name: String,
    /// Its version (`1.18.0`), absent when nothing said it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where it was seen (`DaemonSet kube-system/cilium image quay.io/cilium/cilium:v1.18.0`).
    pub seen_in: String,
}

impl KnownDataPlane {
    /// The detection's data plane when it is a known replacement of kube-proxy (kube-proxy
    /// itself and an unknown data plane are `None`).
    pub fn from_detection(d: &Detection) -> Option<KnownDataPlane> {
        let plane = d.plane.filter(|p| *p != Plane::KubeProxy)?;
        Some(KnownDataPlane {
            name: plane.to_string(),
            version: d.version.map(|v| v.to_string()),
            seen_in: d.source.clone(),
        })
    }

    /// `cilium 1.18.0, seen in DaemonSet kube-system/cilium image …`.
    pub fn text(&self) -> String {
        let version = self.version.as_deref().unwrap_or("(version unknown)");
        format!("{} {version}, seen in {}", self.name, self.seen_in)
    }
}

/// The data plane in words: `iptables`, `mode unknown`, `replaced by cilium`.
pub fn data_plane_text(d: &DataPlane) -> String {
    match d {
        DataPlane::KubeProxy(Some(mode)) => mode.as_str().to_string(),
        DataPlane::KubeProxy(None) => "mode unknown".to_string(),
        DataPlane::Other(n) => format!("replaced by {n}"),
        DataPlane::Unknown => "data plane unknown".to_string(),
    }
}

/// Everything a header is built from, besides the counts.
#[derive(Debug, Clone)]
pub struct HeaderInput<'a> {
    /// The command.
    pub command: &'static str,
    /// The tool's version.
    pub tool_version: &'a str,
    /// When, RFC 3339 (the caller's clock, injectable for tests).
    pub generated_at: String,
    /// Where the state came from.
    pub source: ReportSource,
    /// True when the state is simulated (embedded, or a served simulated cluster).
    pub simulated: bool,
    /// The version the API server reported, when read live.
    pub cluster_version: Option<String>,
    /// Versions and data plane modelled.
    pub config: &'a MatrixConfig,
    /// The data plane detected in the input, if anything was looked at.
    pub detection: Option<&'a Detection>,
}

/// The one function that builds a report's header.
pub fn build(input: HeaderInput<'_>, summary: Summary) -> ReportHeader {
    let simulated = input.simulated || input.source.kind == "simulated";
    ReportHeader {
        banner: simulated.then_some(SIMULATED_BANNER),
        tool: "locality",
        tool_version: input.tool_version.to_string(),
        command: input.command,
        generated_at: input.generated_at,
        simulated,
        source: input.source,
        kubernetes_version: input.config.kube_version.to_string(),
        kube_proxy_version: input.config.kube_proxy_version.to_string(),
        data_plane: data_plane_text(&input.config.data_plane),
        feature_gates: input.config.feature_gates.describe(),
        cluster_version: input.cluster_version,
        known_data_plane: input.detection.and_then(KnownDataPlane::from_detection),
        summary,
    }
}

/// `1 finding`, `2 findings`, `0 findings`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Text headers are wrapped to this many columns (the audit table's width).
pub const TEXT_WIDTH: usize = 80;

/// The header's lines for text outputs (tables, summaries, explanations), without colour,
/// each at most [`TEXT_WIDTH`] columns unless one word is longer: the banner first when
/// simulated (every banner line starts with `SIMULATED`… or is its continuation).
pub fn text_lines(h: &ReportHeader) -> Vec<String> {
    let mut lines = Vec::new();
    if h.simulated {
        lines.extend(crate::audit::wrap(SIMULATED_BANNER, TEXT_WIDTH, "", "  "));
    }
    let banner = lines.len();
    lines.push(format!(
        "locality {} {} · {}",
        h.tool_version, h.command, h.generated_at
    ));
    lines.push(format!("source: {}", h.source.text()));
    lines.push(versions_text(h));
    if let Some(k) = &h.known_data_plane {
        lines.push(format!("data plane: {}", k.text()));
    }
    lines.push(format!("summary: {}", h.summary.text()));
    let mut wrapped: Vec<String> = lines.drain(..banner).collect();
    // File names, the context, the cluster's gitVersion and where a data plane was seen
    // come from outside: `wrap` escapes them (crate::display).
    for l in lines {
        wrapped.extend(crate::audit::wrap(&l, TEXT_WIDTH, "", "  "));
    }
    wrapped
}

/// How many of [`text_lines`]' first lines are the banner.
fn banner_lines(h: &ReportHeader) -> usize {
    if h.simulated {
        crate::audit::wrap(SIMULATED_BANNER, TEXT_WIDTH, "", "  ").len()
    } else {
        0
    }
}

/// `Kubernetes 1.35, kube-proxy 1.35 (iptables); the cluster reports v1.35.0`.
fn versions_text(h: &ReportHeader) -> String {
    let mut s = format!(
        "modelled: Kubernetes {}, kube-proxy {} ({})",
        h.kubernetes_version, h.kube_proxy_version, h.data_plane
    );
    if !h.feature_gates.is_empty() {
        let _ = write!(s, "; feature gates {}", h.feature_gates.join(", "));
    }
    if let Some(v) = &h.cluster_version {
        let _ = write!(s, "; the cluster reports {v}");
    }
    s
}

/// Writes the header for a terminal or a text file, then an empty line. `paint` colours the
/// banner (see `crate::style`).
pub fn write_text(h: &ReportHeader, paint: crate::style::Paint, out: &mut dyn Write) -> io::Result<()> {
    let mut out = crate::display::Terminal::new(out);
    let out = &mut out;
    let banner = banner_lines(h);
    for (i, l) in text_lines(h).iter().enumerate() {
        if i < banner {
            writeln!(out, "{}", paint.banner(l))?;
        } else {
            writeln!(out, "{}", paint.dim(l))?;
        }
    }
    writeln!(out)
}

/// The header as Markdown (a blockquote banner, then one line per field).
pub fn markdown(h: &ReportHeader, escape: impl Fn(&str) -> String) -> String {
    let mut md = String::new();
    if h.simulated {
        let _ = writeln!(md, "> **{}**\n", escape(SIMULATED_BANNER));
    }
    let _ = writeln!(
        md,
        "locality {} {} · {}  ",
        escape(&h.tool_version),
        h.command,
        escape(&h.generated_at)
    );
    let _ = writeln!(md, "source: {}  ", escape(&h.source.text()));
    let _ = writeln!(md, "{}  ", escape(&versions_text(h)));
    if let Some(k) = &h.known_data_plane {
        let _ = writeln!(md, "data plane: {}  ", escape(&k.text()));
    }
    let _ = writeln!(md, "summary: {}", escape(&h.summary.text()));
    md
}

/// CSS for [`html`] (no external resource).
pub const HTML_STYLE: &str = ".simulated-banner{background:#fff3cd;border:2px solid #b58105;color:#5c4100;font-weight:700;padding:8px 12px;border-radius:6px;margin:8px 0}\n.report-header dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}.report-header dt{color:#59636e}.report-header dd{margin:0}\n";

/// The header as an HTML `<header>` element (text escaped with `escape`).
pub fn html(h: &ReportHeader, escape: impl Fn(&str) -> String) -> String {
    let mut s = String::from("<header class=\"report-header\">\n");
    if h.simulated {
        let _ = writeln!(
            s,
            "<div class=\"simulated-banner\" role=\"alert\">{}</div>",
            escape(SIMULATED_BANNER)
        );
    }
    s.push_str("<dl>\n");
    let mut rows = vec![
        ("source", h.source.text()),
        (
            "modelled",
            versions_text(h).trim_start_matches("modelled: ").to_string(),
        ),
    ];
    if let Some(k) = &h.known_data_plane {
        rows.push(("data plane", k.text()));
    }
    rows.extend([
        ("generated", h.generated_at.clone()),
        ("tool", format!("locality {} {}", h.tool_version, h.command)),
        ("summary", h.summary.text()),
    ]);
    for (k, v) in rows {
        let _ = writeln!(s, "<dt>{k}</dt><dd>{}</dd>", escape(&v));
    }
    s.push_str("</dl>\n</header>\n");
    s
}

/// The header for SARIF `run.properties`: the whole header as `header`, plus `simulated`
/// and, when simulated, the banner as `banner`.
pub fn sarif_properties(h: &ReportHeader) -> Vec<(String, serde_json::Value)> {
    let mut v = vec![
        (
            "header".to_string(),
            serde_json::to_value(h).unwrap_or(serde_json::Value::Null),
        ),
        ("simulated".to_string(), h.simulated.into()),
    ];
    if h.simulated {
        v.push(("banner".to_string(), SIMULATED_BANNER.into()));
    }
    v
}

/// The header as JUnit `<property>` name/value pairs (`header.source`, …).
pub fn junit_properties(h: &ReportHeader) -> Vec<(String, String)> {
    let mut v = Vec::new();
    if h.simulated {
        v.push(("header.banner".to_string(), SIMULATED_BANNER.to_string()));
    }
    v.push(("header.simulated".to_string(), h.simulated.to_string()));
    v.push(("header.tool".to_string(), format!("locality {}", h.tool_version)));
    v.push(("header.command".to_string(), h.command.to_string()));
    v.push(("header.generatedAt".to_string(), h.generated_at.clone()));
    v.push(("header.source".to_string(), h.source.text()));
    v.push((
        "header.kubernetesVersion".to_string(),
        h.kubernetes_version.clone(),
    ));
    v.push((
        "header.kubeProxyVersion".to_string(),
        h.kube_proxy_version.clone(),
    ));
    v.push(("header.dataPlane".to_string(), h.data_plane.clone()));
    if !h.feature_gates.is_empty() {
        v.push(("header.featureGates".to_string(), h.feature_gates.join(",")));
    }
    if let Some(c) = &h.cluster_version {
        v.push(("header.clusterVersion".to_string(), c.clone()));
    }
    if let Some(k) = &h.known_data_plane {
        v.push(("header.knownDataPlane".to_string(), k.text()));
    }
    for c in &h.summary.0 {
        v.push((format!("header.summary.{}", c.key), c.count.to_string()));
    }
    v
}
