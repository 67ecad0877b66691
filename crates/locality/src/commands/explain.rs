//! `locality explain`.

use std::io::Write;

use locality_audit::{AuditOptions, RuleId};
use locality_model::explain::{Explanation, explain};
use locality_model::matrix::Matrix;
use locality_model::objects::ClusterState;
use locality_model::objects::IpFamily;
use locality_model::proxy::{Destination, Reason, Source};
use locality_report::explain::{write_json, write_text};

use crate::cli::{DestArg, ExplainArgs, ExplainOutput, FamilyArg, SourceArg};
use crate::error::CliError;
use crate::inputs::report_controller_events;
use crate::progress::{PROGRESS_THRESHOLD_BYTES, Progress, input_size};
use crate::source;
use crate::suggest::did_you_mean;
use crate::ui::Ui;

/// Splits `NS/NAME` or `NAME` (with `-n`, else `default`).
fn namespaced(text: &str, namespace: Option<&str>) -> (String, String) {
    match text.split_once('/') {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => (namespace.unwrap_or("default").to_string(), text.to_string()),
    }
}

/// Runs `explain`.
pub fn run(args: &ExplainArgs, ui: &Ui, out: &mut dyn Write) -> Result<(), CliError> {
    let progress = Progress::new(input_size(&args.model.filenames) > PROGRESS_THRESHOLD_BYTES, ui);
    // Live, only the Service's namespace is listed (and the Nodes).
    let service_ns = namespaced(&args.service, args.namespace.as_deref()).0;
    let loaded = source::load(
        &args.model,
        Some(&service_ns),
        args.namespace.as_deref(),
        ui,
        &progress,
    )?;
    progress.finish();
    let state = &loaded.state;
    let matrix = Matrix::new(state, loaded.config.clone()).assuming(loaded.assumed);
    report_controller_events(&matrix, ui);

    let (ns, name) = namespaced(&args.service, args.namespace.as_deref());
    let ports: Vec<usize> = (0..matrix.ports.len())
        .filter(|&i| {
            matrix.ports[i].service.meta.namespace == ns && matrix.ports[i].service.meta.name == name
        })
        .collect();
    if ports.is_empty() {
        let known: Vec<String> = state
            .services
            .iter()
            .map(|s| format!("{}/{}", s.meta.namespace, s.meta.name))
            .collect();
        return Err(CliError::usage(format!(
            "no Service {ns}/{name} in the input{}",
            did_you_mean(&format!("{ns}/{name}"), known.iter().map(String::as_str))
        )));
    }

    // A hostNetwork client pod sends from the node itself.
    let mut host_network = false;
    let node_name = match (&args.node, &args.pod) {
        (Some(node), _) => node.clone(),
        (None, Some(pod)) => {
            let (pns, pname) = namespaced(pod, args.namespace.as_deref());
            let Some(p) = state
                .pods
                .iter()
                .find(|p| p.meta.namespace == pns && p.meta.name == pname)
            else {
                let known: Vec<String> = state
                    .pods
                    .iter()
                    .map(|p| format!("{}/{}", p.meta.namespace, p.meta.name))
                    .collect();
                return Err(CliError::usage(format!(
                    "no Pod {pns}/{pname} in the input{}",
                    did_you_mean(&format!("{pns}/{pname}"), known.iter().map(String::as_str))
                )));
            };
            if p.spec.node_name.is_empty() {
                return Err(CliError::usage(format!(
                    "Pod {pns}/{pname} is not scheduled to a node"
                )));
            }
            host_network = p.spec.host_network;
            p.spec.node_name.clone()
        }
        (None, None) => return Err(CliError::usage("give --node NAME or --pod NAME")),
    };
    let Some(node) = matrix.node_position(&node_name) else {
        return Err(CliError::usage(format!(
            "no Node {node_name:?} in the input{}",
            did_you_mean(&node_name, matrix.nodes.iter().map(|n| n.name()))
        )));
    };

    let ports: Vec<usize> = ports
        .into_iter()
        .filter(|&i| {
            let p = &matrix.ports[i].info.port;
            args.port
                .as_ref()
                .is_none_or(|want| *want == p.name || want.parse::<u16>().ok() == Some(p.port))
        })
        .collect();
    if ports.is_empty() {
        let svc = state
            .services
            .iter()
            .find(|s| s.meta.namespace == ns && s.meta.name == name);
        let names: Vec<String> = svc
            .map(|s| {
                s.ports
                    .iter()
                    .map(|p| format!("{} ({})", p.port, p.name))
                    .collect()
            })
            .unwrap_or_default();
        return Err(CliError::usage(format!(
            "Service {ns}/{name} has no port {:?}; its ports: {}",
            args.port.as_deref().unwrap_or(""),
            names.join(", ")
        )));
    }
    let family = args.family.map(|f| match f {
        FamilyArg::IPv4 => IpFamily::IPv4,
        FamilyArg::IPv6 => IpFamily::IPv6,
    });
    let source = match args.source {
        Some(SourceArg::Pod) => Source::Pod,
        Some(SourceArg::Host) => Source::Host,
        Some(SourceArg::External) => Source::External,
        None if host_network => {
            ui.note(&format!(
                "{} is a hostNetwork pod: its traffic is the node's own (--source host)",
                args.pod.as_deref().unwrap_or_default()
            ));
            Source::Host
        }
        None => Source::Pod,
    };
    let destination = match args.destination {
        DestArg::ClusterIp => Destination::ClusterIp,
        DestArg::NodePort => Destination::NodePort,
        DestArg::LoadBalancer => Destination::LoadBalancer,
        DestArg::ExternalIp => Destination::ExternalIp,
    };
    let mut explanations = Vec::new();
    for port in ports {
        let entry = &matrix.ports[port];
        if family.is_some_and(|f| f != entry.info.family) {
            continue;
        }
        match explain(&matrix, state, port, node, source, destination) {
            Some(e) => explanations.push(e),
            None => {
                return Err(CliError::usage(format!(
                    "Service {ns}/{name} has no {} destination (it has: {})",
                    destination.as_str(),
                    entry
                        .destinations
                        .iter()
                        .map(|d| d.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    if explanations.is_empty() {
        return Err(CliError::usage(format!(
            "Service {ns}/{name} has no {:?} family",
            family.map(|f| f.as_str())
        )));
    }
    with_audit_cause(state, &matrix, &mut explanations);
    let header = loaded.header("explain", locality_report::explain::counts(&explanations));
    match args.output {
        ExplainOutput::Text => write_text(&explanations, &header, ui.paint(), out)?,
        ExplainOutput::Json => write_json(&explanations, &header, out)?,
    }
    out.flush()?;
    Ok(())
}

/// "What would change it" for a node without a local endpoint: the cause `audit` finds for
/// that node ([`locality_audit::causes::on_node`]: the DaemonSet whose nodeSelector or
/// tolerations leave it out, too few replicas) in place of the generic advice, which stays
/// when the audit names no cause. The alternatives that follow it are kept.
fn with_audit_cause(state: &ClusterState, matrix: &Matrix<'_>, explanations: &mut [Explanation]) {
    let blind = |e: &Explanation| {
        matches!(
            e.reason,
            Reason::NoLocalEndpoints | Reason::IpvsNoRealServers | Reason::IpvsExternalReplyLost
        ) && !e.remedies.is_empty()
    };
    if !explanations.iter().any(blind) {
        return;
    }
    let options = AuditOptions {
        only: [RuleId::Loc001, RuleId::Loc002, RuleId::Loc003].into(),
        node_limit: usize::MAX,
        ..AuditOptions::default()
    };
    let report = locality_audit::audit(state, matrix, &options);
    for e in explanations.iter_mut().filter(|e| blind(e)) {
        let (ns, name) = e.service.split_once('/').unwrap_or(("", &e.service));
        let Some(c) = locality_audit::causes::on_node(&report, ns, name, &e.node) else {
            continue;
        };
        let others = match c.nodes.saturating_sub(1) {
            0 => " has".to_string(),
            1 => " and 1 other node have".to_string(),
            n => format!(" and {n} other nodes have"),
        };
        e.remedies[0] = format!(
            "{}{others} no local endpoint because {} ({}, as `locality audit` finds it) → {}",
            e.node,
            c.cause,
            c.rule.as_str(),
            c.fix
        );
    }
}
