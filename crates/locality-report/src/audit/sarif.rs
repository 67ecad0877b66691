//! `audit -o sarif`: SARIF 2.1.0 (OASIS) for code-scanning tools, built with `serde-sarif`.
//!
//! - One `rule` per audit rule (`LOC001`…`LOC021`, all of them, in ID order) with its title,
//!   `helpUri` (the Kubernetes documentation page that states the guarantee) and default
//!   level.
//! - One `result` per finding: `level` from the severity (`error` → `error`, `warning` →
//!   `warning`, `info` → `note`), the message and its fix, and the Service as the location.
//!   File inputs give a physical location (`artifactLocation.uri` = the file, `region` = the
//!   object's first line and column when known, see [`Locations`]); every location also
//!   carries the logical location `namespace/Kind/name`, the only one for live inputs. The
//!   other objects involved (workloads, EndpointSlices) are `relatedLocations`.
//! - `partialFingerprints."localityFinding/v1"` identifies a finding across runs (rule,
//!   Service, port, family), so code-scanning tools can track it.

use std::collections::HashMap;
use std::io::{self, Write};

use locality_audit::{AuditReport, Finding, ObjectRef, RuleId, Severity, SourceLocation};
use serde_sarif::sarif::{
    ArtifactLocation, Location, LogicalLocation, Message, MultiformatMessageString, PhysicalLocation,
    PropertyBag, Region, ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultLevel,
    Run, Sarif, Suppression, Tool, ToolComponent,
};

use super::{nodes_text, object_text, port_family_text, service_text};

/// `$schema` of the log: the SARIF 2.1.0 JSON schema.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// At most this many related locations per result.
const RELATED_LIMIT: usize = 20;

/// Lines and columns of objects whose [`SourceLocation`] has none (JSON `List` items:
/// ingest records only their index), resolved by the caller from the input bytes
/// (`locality_ingest::locate`). Objects neither recorded nor resolved get a physical
/// location without a region (the whole file).
#[derive(Debug, Clone, Default)]
pub struct Locations {
    map: HashMap<(String, u32, Option<u32>), (u32, u32)>,
}

impl Locations {
    /// No resolved locations.
    pub fn new() -> Self {
        Self::default()
    }

    /// The distinct file locations in `report` without a line, in order of appearance: the
    /// ones worth resolving. The Service of each finding comes first, then the other
    /// objects, so a caller with a budget resolves the primary locations first.
    pub fn wanted(report: &AuditReport) -> Vec<&SourceLocation> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let primaries = report.findings.iter().filter_map(|f| {
            f.objects
                .iter()
                .find(|o| {
                    o.kind == "Service" && o.namespace == f.service.namespace && o.name == f.service.name
                })
                .and_then(|o| o.origin.as_ref())
        });
        let others = report
            .findings
            .iter()
            .flat_map(|f| f.objects.iter().filter_map(|o| o.origin.as_ref()));
        for loc in primaries.chain(others) {
            if loc.line == 0 && loc.file != "-" && seen.insert((&loc.file, loc.document, loc.item)) {
                out.push(loc);
            }
        }
        out
    }

    /// Records the 1-based `line` and `column` of the object at `loc`.
    pub fn insert(&mut self, loc: &SourceLocation, line: u32, column: u32) {
        self.map
            .insert((loc.file.clone(), loc.document, loc.item), (line, column));
    }

    /// The object's line and column: its own when recorded, else the resolved one.
    pub fn get(&self, loc: &SourceLocation) -> Option<(u32, u32)> {
        if loc.line > 0 {
            return Some((loc.line, loc.column));
        }
        self.map.get(&(loc.file.clone(), loc.document, loc.item)).copied()
    }

    /// Number of resolved locations.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing was resolved.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The tool that produced the log.
#[derive(Debug, Clone)]
pub struct ToolInfo<'a> {
    /// Tool name (`locality`).
    pub name: &'a str,
    /// Its version.
    pub version: &'a str,
    /// Where to read about it.
    pub information_uri: &'a str,
}

fn level(s: Severity) -> ResultLevel {
    match s {
        Severity::Error => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
        Severity::Info => ResultLevel::Note,
    }
}

fn level_value(s: Severity) -> serde_json::Value {
    serde_json::Value::String(
        match s {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "note",
        }
        .to_string(),
    )
}

/// The Service object of a finding (its first object by construction), or a reference built
/// from the finding when absent.
fn primary(f: &Finding) -> std::borrow::Cow<'_, ObjectRef> {
    match f.objects.first() {
        Some(o) if o.kind == "Service" => std::borrow::Cow::Borrowed(o),
        _ => f
            .objects
            .iter()
            .find(|o| o.kind == "Service" && o.namespace == f.service.namespace && o.name == f.service.name)
            .map(std::borrow::Cow::Borrowed)
            .unwrap_or_else(|| {
                std::borrow::Cow::Owned(ObjectRef {
                    kind: "Service".to_string(),
                    namespace: f.service.namespace.clone(),
                    name: f.service.name.clone(),
                    origin: None,
                })
            }),
    }
}

/// Percent-encodes a file path as a URI reference: relative paths stay relative (what
/// code-scanning tools resolve against the checkout), absolute ones become `file://` URIs.
pub fn path_uri(path: &str) -> String {
    let unified = path.replace('\\', "/");
    let mut enc = String::with_capacity(unified.len() + 8);
    for b in unified.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            enc.push(b as char);
        } else if b == b':' && enc.len() == 1 && enc.as_bytes()[0].is_ascii_alphabetic() {
            // A Windows drive letter (`C:`).
            enc.push(':');
        } else {
            enc.push_str(&format!("%{b:02X}"));
        }
    }
    if unified.starts_with('/') {
        format!("file://{enc}")
    } else if unified.as_bytes().get(1) == Some(&b':') {
        format!("file:///{enc}")
    } else {
        enc
    }
}

fn location(o: &ObjectRef, locations: &Locations, message: Option<String>, id: Option<i64>) -> Location {
    let fqn = if o.namespace.is_empty() {
        format!("{}/{}", o.kind, o.name)
    } else {
        format!("{}/{}/{}", o.namespace, o.kind, o.name)
    };
    let logical = LogicalLocation::builder()
        .name(o.name.clone())
        .fully_qualified_name(fqn)
        .kind("resource")
        .build();
    let physical = o.origin.as_ref().filter(|loc| loc.file != "-").map(|loc| {
        let artifact = ArtifactLocation::builder().uri(path_uri(&loc.file)).build();
        match locations.get(loc) {
            Some((line, column)) if line > 0 => {
                let region = if column > 0 {
                    Region::builder()
                        .start_line(i64::from(line))
                        .start_column(i64::from(column))
                        .build()
                } else {
                    Region::builder().start_line(i64::from(line)).build()
                };
                PhysicalLocation::builder()
                    .artifact_location(artifact)
                    .region(region)
                    .build()
            }
            _ => PhysicalLocation::builder().artifact_location(artifact).build(),
        }
    });
    let mut loc = Location::builder().logical_locations(vec![logical]).build();
    loc.physical_location = physical;
    loc.message = message.map(|m| Message::builder().text(m).build());
    loc.id = id;
    loc
}

fn rules() -> Vec<ReportingDescriptor> {
    RuleId::ALL
        .into_iter()
        .map(|r| {
            let help = format!("{} See {}", r.title(), r.docs_url());
            let help_md = format!(
                "{}. See [the Kubernetes documentation]({}).",
                r.title(),
                r.docs_url()
            );
            ReportingDescriptor::builder()
                .id(r.as_str())
                .name(rule_name(r))
                .short_description(MultiformatMessageString::builder().text(r.title()).build())
                .help_uri(r.docs_url())
                .help(
                    MultiformatMessageString::builder()
                        .text(help)
                        .markdown(help_md)
                        .build(),
                )
                .default_configuration(
                    ReportingConfiguration::builder()
                        .level(level_value(r.default_severity()))
                        .build(),
                )
                .properties(
                    PropertyBag::builder()
                        .tags(vec!["kubernetes".to_string(), "networking".to_string()])
                        .build(),
                )
                .build()
        })
        .collect()
}

/// A PascalCase name for a rule (SARIF `name`), from its code: stable, unlike the title.
fn rule_name(r: RuleId) -> String {
    match r {
        RuleId::Loc001 => "LocalPolicyBlindNodes",
        RuleId::Loc002 => "LocalPolicyTooFewReplicas",
        RuleId::Loc003 => "LocalDaemonSetCannotRunEverywhere",
        RuleId::Loc004 => "DaemonSetRolloutDropWindow",
        RuleId::Loc005 => "PreferCloseDeprecated",
        RuleId::Loc006 => "PreferenceIgnoredUnderLocalPolicy",
        RuleId::Loc007 => "EndpointWithoutHint",
        RuleId::Loc008 => "EndpointNodeWithoutZone",
        RuleId::Loc009 => "AutoWithoutHints",
        RuleId::Loc010 => "AnnotationOverridesTrafficDistribution",
        RuleId::Loc011 => "PreferenceConcentratesLoad",
        RuleId::Loc012 => "UnsupportedForVersion",
        RuleId::Loc013 => "NoUsableEndpoint",
        RuleId::Loc014 => "EndpointSlicesDiffer",
        RuleId::Loc015 => "ExternalLocalPolicyBlindNodes",
        RuleId::Loc016 => "OnlyTerminatingEndpoints",
        RuleId::Loc017 => "IpvsIgnoresLocalPolicy",
        RuleId::Loc018 => "PolicyOnHeadlessOrExternalName",
        RuleId::Loc019 => "PublishNotReadyWithLocalPolicy",
        RuleId::Loc020 => "EndpointsWithoutNodeName",
        RuleId::Loc021 => "KnownDataPlaneDivergence",
    }
    .to_string()
}

fn result(f: &Finding, locations: &Locations) -> SarifResult {
    let rule_index = RuleId::ALL.iter().position(|r| *r == f.rule).unwrap_or(0);
    let target = port_family_text(f);
    let sep = if f.message.ends_with(['.', '!', '?']) {
        " "
    } else {
        ". "
    };
    let text = format!("{}{sep}Fix: {}", f.message, f.fix);
    let service = primary(f);
    let related: Vec<Location> = f
        .objects
        .iter()
        .filter(|o| **o != *service)
        .take(RELATED_LIMIT)
        .enumerate()
        .map(|(i, o)| location(o, locations, Some(object_text(o)), Some(i as i64 + 1)))
        .collect();
    let fingerprint = f.fingerprint();
    let mut props = PropertyBag::builder().build();
    let extra = &mut props.additional_properties;
    extra.insert("severity".into(), f.severity.as_str().into());
    extra.insert("service".into(), service_text(f).into());
    if !target.is_empty() {
        extra.insert("port".into(), target.into());
    }
    extra.insert("nodeCount".into(), f.node_count.into());
    extra.insert("podCount".into(), f.pod_count.into());
    if f.node_count > 0 {
        extra.insert("nodes".into(), nodes_text(f, 20).into());
    }
    let mut r = SarifResult::builder()
        .rule_id(f.rule.as_str())
        .rule_index(rule_index as i64)
        .level(level(f.severity))
        .message(Message::builder().text(text).build())
        .locations(vec![location(&service, locations, None, None)])
        .partial_fingerprints(std::collections::BTreeMap::from([(
            locality_audit::baseline::FINGERPRINT_KEY.to_string(),
            fingerprint,
        )]))
        .properties(props)
        .build();
    if !related.is_empty() {
        r.related_locations = Some(related);
    }
    if let Some(s) = &f.suppression {
        let mut sup = Suppression::builder()
            .kind(match s.kind {
                locality_audit::suppress::SuppressionKind::InSource => "inSource",
                locality_audit::suppress::SuppressionKind::External => "external",
            })
            .build();
        sup.justification = Some(match &s.justification {
            Some(j) => format!("{j} ({})", s.source),
            None => s.source.clone(),
        });
        r.suppressions = Some(vec![sup]);
    }
    r
}

/// Writes the report as a SARIF 2.1.0 log (pretty-printed JSON) with one run.
pub fn write_sarif(
    report: &AuditReport,
    header: &crate::header::ReportHeader,
    locations: &Locations,
    tool: &ToolInfo<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let driver = ToolComponent::builder()
        .name(tool.name)
        .version(tool.version)
        .information_uri(tool.information_uri)
        .rules(rules())
        .build();
    let results: Vec<SarifResult> = report.findings.iter().map(|f| result(f, locations)).collect();
    let mut props = PropertyBag::builder().build();
    let extra = &mut props.additional_properties;
    extra.insert(
        "kubernetesVersion".into(),
        report.kubernetes_version.clone().into(),
    );
    extra.insert(
        "kubeProxyVersion".into(),
        report.kube_proxy_version.clone().into(),
    );
    extra.insert("dataPlane".into(), super::data_plane_text(report).into());
    extra.insert("nodeCount".into(), report.node_count.into());
    extra.insert("clientNodeCount".into(), report.client_node_count.into());
    let skipped: Vec<serde_json::Value> = report
        .skipped_rules
        .iter()
        .map(|s| serde_json::json!({ "rule": s.rule.as_str(), "reason": s.reason }))
        .collect();
    extra.insert("skippedRules".into(), skipped.into());
    extra.insert("notes".into(), report.notes.clone().into());
    for (k, v) in crate::header::sarif_properties(header) {
        extra.insert(k, v);
    }
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .column_kind(serde_json::Value::String("unicodeCodePoints".into()))
        .properties(props)
        .build();
    let log = Sarif::builder()
        .schema(SCHEMA_URI)
        .version(serde_json::Value::String("2.1.0".into()))
        .runs(vec![run])
        .build();
    crate::encode::json_pretty(&log, &mut *out)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::path_uri;

    #[test]
    fn uris_of_paths() {
        assert_eq!(
            path_uri("examples/three zones.json"),
            "examples/three%20zones.json"
        );
        assert_eq!(path_uri("/tmp/a#b.yaml"), "file:///tmp/a%23b.yaml");
        assert_eq!(path_uri("C:\\dumps\\x.json"), "file:///C:/dumps/x.json");
    }
}
