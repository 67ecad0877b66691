//! The fault sweep: every simulated kube-proxy fault on one node, with a catalogued data
//! plane at an affected release on another node (two data planes and two faults at once),
//! the fault's node rotating over the roles. Each run is checked against the prediction of
//! the fault (below, one arm per [`Fault`]: a new fault does not compile until its prediction
//! is stated) combined with the catalogue's for the plane:
//! - a fault that breaks the contract is a HOLD whatever the other node's plane, naming the
//!   faulty node;
//! - a fault with a bounded repair is a REPAIR naming it on its node (or a HOLD when the
//!   plane's node shows an open upstream bug), and every data-plane repair applies to the
//!   plane's node;
//! - a fault within the contract leaves the plane's own prediction ([`super::planes`]);
//! - never a RERUN.

use std::collections::BTreeMap;

use super::planes::{affected, check, detection};
use super::{NODES, Sim, concurrently, summary};
use locality_model::dataplane::Plane;
use locality_model::dataplane::catalogue::{self, CATALOGUE, Resolution};
use locality_sim::{DataPlaneProfile, Fault};
use locality_verify::{Decision, RepairKind, VerifyOutcome};

/// One example of each fault (a fault with a parameter on both sides of the lag limit).
const FAULTS: [&str; 9] = [
    "ignores-local-policy",
    "ignores-local-policy:always",
    "no-terminating-fallback",
    "masquerades-external",
    "hostname-mismatch",
    "stale-rules:1",
    "stale-rules:15",
    "lossy",
    "other",
];

/// What a fault alone makes of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Predicted {
    /// Within the contract: the run is decided by the rest of the cluster.
    Conformant,
    /// A bounded repair on the node (kube-proxy's `--hostname-override`).
    Repair,
    /// A broken data plane (or one too late to judge): never accepted.
    Hold,
}

/// The prediction for `fault` under the default `--max-proxy-lag` (5 s).
fn predicted(fault: &Fault) -> Predicted {
    match fault {
        Fault::IgnoresLocalPolicy | Fault::IgnoresLocalPolicyAlways | Fault::NoTerminatingFallback => {
            Predicted::Hold
        }
        // External traffic only: outside a default run (the external cases are opt-in), and
        // seen only on a node with a local endpoint (`X2s` on N1, in `cases.rs`).
        Fault::MasqueradesExternal => Predicted::Conformant,
        // Lost connections fail the controls: no verdict on the environment.
        Fault::Lossy { .. } => Predicted::Hold,
        Fault::HostnameMismatch => Predicted::Repair,
        // The simulated kube-proxy adds its sync period to the fault's lag: 1 s stays within
        // the 5 s limit, 15 s does not.
        Fault::StaleRules { late_ms } if *late_ms <= 1_000 => Predicted::Conformant,
        Fault::StaleRules { .. } => Predicted::Hold,
        // A replacement that routes as kube-proxy does.
        Fault::Other { .. } => Predicted::Conformant,
        // The catalogue predicts a known plane: the plane sweep's business.
        Fault::Plane(_) => Predicted::Conformant,
    }
}

/// The affected profile of each catalogued replacement plane entry, once.
fn planes() -> Vec<String> {
    let mut out: Vec<String> = CATALOGUE
        .iter()
        .filter(|e| e.plane != Plane::KubeProxy)
        .filter_map(affected)
        .collect();
    out.sort();
    out.dedup();
    out
}

fn check_pair(name: &str, fault_node: &str, fault: &str, plane_node: &str, plane: &str, o: &VerifyOutcome) {
    let why = summary(name, o);
    assert_ne!(o.decision, Decision::Rerun, "a rerun cannot change this: {why}");
    let parsed: DataPlaneProfile = fault.parse().unwrap();
    let entries = catalogue::applicable(&detection(plane));
    let open = entries.iter().any(|e| e.resolution == Resolution::Open);
    for r in &o.repairs {
        match r.kind {
            RepairKind::DataPlane => assert!(
                r.node == plane_node && entries.iter().any(|e| r.action.starts_with(e.id)),
                "{name}: a repair that does not apply to {}: {}",
                r.node,
                r.action
            ),
            _ => assert_eq!(r.node, fault_node, "{name}: {:?}", r),
        }
    }
    match predicted(parsed.fault.as_ref().expect("a fault")) {
        Predicted::Conformant => check(
            name,
            &BTreeMap::from([(plane_node.to_string(), plane.to_string())]),
            o,
        ),
        Predicted::Repair => {
            assert!(
                o.repairs
                    .iter()
                    .any(|r| r.kind == RepairKind::HostnameOverride && r.node == fault_node),
                "{name}: no repair on {fault_node}: {why}"
            );
            match o.decision {
                Decision::Repair => {}
                Decision::Hold => assert!(open, "{name}: a HOLD without an open bug: {why}"),
                d => panic!("{name}: {d:?}: {why}"),
            }
        }
        Predicted::Hold => {
            assert_eq!(o.decision, Decision::Hold, "{why}");
            // The node, by its lag or by the violations its data plane showed; or a failed
            // control (no verdict on anything).
            let named = o.lagging.iter().any(|l| l.node == fault_node)
                || o.advice
                    .iter()
                    .any(|a| a.starts_with("confirmed violation") && a.contains(fault_node))
                || o.advice.iter().any(|a| a.starts_with("control "));
            assert!(named, "{name}: the HOLD does not point at {fault_node}: {why}");
        }
    }
}

#[test]
fn fault_sweep_each_fault_beside_a_catalogued_plane_is_decided_as_predicted() {
    let planes = planes();
    assert!(!planes.is_empty());
    let runs: Vec<(String, &str, &str, &str, &str)> = FAULTS
        .iter()
        .enumerate()
        .map(|(i, fault)| {
            let (fault_node, plane_node) = (NODES[i % NODES.len()], NODES[(i + 1) % NODES.len()]);
            let plane = planes[i % planes.len()].as_str();
            (
                format!("fault-{}-{fault_node}", fault.replace(':', "-")),
                fault_node,
                *fault,
                plane_node,
                plane,
            )
        })
        .collect();
    let sims = runs
        .iter()
        .map(|(name, fault_node, fault, plane_node, plane)| {
            (
                name.clone(),
                Sim {
                    profiles: vec![
                        (fault_node.to_string(), fault.to_string()),
                        (plane_node.to_string(), plane.to_string()),
                    ],
                    ..Sim::default()
                },
            )
        })
        .collect();
    for ((name, o, _), (_, fault_node, fault, plane_node, plane)) in concurrently(sims).iter().zip(&runs) {
        check_pair(name, fault_node, fault, plane_node, plane, o);
    }
}
