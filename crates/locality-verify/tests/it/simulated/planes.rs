//! The data-plane sweep: full runs with every catalogued data plane (docs/dataplanes.md) at
//! an affected and at a fixed release, generated from the catalogue itself (a new entry joins
//! without a line of test code), on the nodes of the four-node fixture, and two planes at
//! once on different nodes. Each run is checked against what the catalogue predicts:
//! - never a RERUN, never a failure left unexplained (a HOLD only for an open upstream bug
//!   the run showed);
//! - a REPAIR names only entries that apply to the node it names;
//! - an entry that applies and that no repair or known bug names is said in a note;
//! - a profile with no entry that applies is an ACCEPT.
//!
//! CI runs each profile on one node (rotating over the roles); the whole sweep, every profile
//! on every node, runs under the `verify-sweep` nextest profile.

use std::collections::BTreeMap;

use super::{NODES, Sim, concurrently, summary};
use locality_model::dataplane::catalogue::{self, CATALOGUE, Divergence, Resolution};
use locality_model::dataplane::{Detection, Plane, PlaneVersion};
use locality_sim::DataPlaneProfile;
use locality_verify::{Decision, RepairKind, VerifyOutcome};

/// The release before `v` (a patch back, else the minor before).
fn before(v: PlaneVersion) -> PlaneVersion {
    match (v.minor, v.patch) {
        (_, p) if p > 0 => PlaneVersion::new(v.major, v.minor, p - 1),
        (m, _) if m > 0 => PlaneVersion::new(v.major, m - 1, 0),
        _ => PlaneVersion::new(v.major.saturating_sub(1), 0, 0),
    }
}

/// The newest release any entry of `plane` names (an entry for every release is tried there).
fn newest(plane: Plane) -> PlaneVersion {
    CATALOGUE
        .iter()
        .filter(|e| e.plane == plane)
        .flat_map(|e| [e.affected_from, e.affected_before])
        .flatten()
        .max_by_key(|v| (v.major, v.minor, v.patch))
        .unwrap_or(PlaneVersion::new(1, 0, 0))
}

/// The profile text of `plane` at `version` with the entry's setting as `value`.
fn profile(e: &Divergence, version: PlaneVersion, setting: Option<bool>) -> Option<String> {
    if e.plane == Plane::KubeProxy {
        // kube-proxy's entries are by mode.
        let r = e.requires?;
        return (r.key == "mode" && r.present).then(|| r.value.to_string());
    }
    let mut text = format!("{}:{version}", e.plane);
    match (e.requires, setting) {
        (None, _) => {}
        (Some(r), Some(on)) if r.key == "enable-service-topology" => {
            if !on {
                text.push_str(",service-topology=false");
            }
        }
        // A setting the simulated data plane cannot carry: not swept (the parse below fails
        // the test, so it cannot go unnoticed).
        (Some(r), _) => panic!("{}: setting {} is not simulated", e.id, r.key),
    }
    Some(text)
}

/// The release and setting that meet the entry.
pub(super) fn affected(e: &Divergence) -> Option<String> {
    let v = e
        .affected_from
        .or(e.affected_before.map(before))
        .unwrap_or_else(|| newest(e.plane));
    profile(e, v, e.requires.map(|r| r.present == (r.value == "true")))
}

/// The release (or setting) the entry says fixes it, when it names one.
fn fixed(e: &Divergence) -> Option<String> {
    match e.resolution {
        Resolution::Fixed { version: Some(v), .. } => {
            profile(e, v, e.requires.map(|r| r.present == (r.value == "true")))
        }
        Resolution::Setting { .. } => {
            let v = e
                .affected_from
                .or(e.affected_before.map(before))
                .unwrap_or_else(|| newest(e.plane));
            profile(e, v, e.requires.map(|r| r.present != (r.value == "true")))
        }
        _ => None,
    }
}

/// Every profile of the sweep, once.
pub(super) fn profiles() -> Vec<String> {
    let mut out: Vec<String> = CATALOGUE
        .iter()
        .flat_map(|e| [affected(e), fixed(e)])
        .flatten()
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What detection reads of a profile's objects.
pub(super) fn detection(text: &str) -> Detection {
    let p: DataPlaneProfile = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
    match p.plane() {
        Some(plane) => plane.detection(),
        None => Detection {
            plane: Some(Plane::KubeProxy),
            // The simulated kube-proxy reports the cluster's release.
            version: PlaneVersion::parse(&locality_model::version::KubeVersion::NEWEST.to_string()),
            settings: [("mode".to_string(), p.mode.as_str().to_string())].into(),
            ..Detection::default()
        },
    }
}

/// The catalogue's prediction checked against one run (`on`: node → profile).
pub(super) fn check(name: &str, on: &BTreeMap<String, String>, o: &VerifyOutcome) {
    let why = summary(name, o);
    assert_ne!(o.decision, Decision::Rerun, "a rerun cannot change this: {why}");
    assert!(
        !o.advice.iter().any(|a| a.contains("no known bounded repair")),
        "a failure the catalogue should explain was not: {why}"
    );
    let applicable: BTreeMap<&str, Vec<&'static Divergence>> = on
        .iter()
        .map(|(node, p)| (node.as_str(), catalogue::applicable(&detection(p))))
        .collect();
    for r in &o.repairs {
        if r.kind != RepairKind::DataPlane {
            continue;
        }
        let entries = applicable.get(r.node.as_str()).cloned().unwrap_or_default();
        assert!(
            entries.iter().any(|e| r.action.starts_with(e.id)),
            "{name}: a repair of an entry that does not apply to {}: {}",
            r.node,
            r.action
        );
    }
    for (node, entries) in &applicable {
        for e in entries {
            let named = o.advice.iter().any(|a| a.contains(e.id) && a.contains(node));
            assert!(named, "{name}: {} applies to {node} and is not said: {why}", e.id);
        }
    }
    if applicable.values().all(Vec::is_empty) {
        assert_eq!(o.decision, Decision::Accept, "{why}");
    }
    if o.decision == Decision::Hold {
        assert!(
            applicable
                .values()
                .flatten()
                .any(|e| e.resolution == Resolution::Open),
            "a HOLD without an open bug that applies: {why}"
        );
    }
}

/// The runs: each profile on `nodes_for(i)` of the fixture, then two planes at once.
fn sweep(nodes_for: impl Fn(usize) -> Vec<&'static str>) {
    let profiles = profiles();
    assert!(profiles.len() >= 5, "the catalogue gives a sweep: {profiles:?}");
    let mut runs: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        for node in nodes_for(i) {
            runs.push((
                format!("plane-{}-{node}", p.replace([':', ',', '='], "-")),
                BTreeMap::from([(node.to_string(), p.clone())]),
            ));
        }
    }
    // Two known data planes at once, on two nodes: each affected profile of one plane with
    // one of another.
    let replacements: Vec<&String> = profiles
        .iter()
        .filter(|p| detection(p).plane != Some(Plane::KubeProxy))
        .collect();
    for (i, a) in replacements.iter().enumerate() {
        let Some(b) = replacements[i + 1..]
            .iter()
            .find(|b| detection(b).plane != detection(a).plane)
        else {
            continue;
        };
        let (na, nb) = (NODES[i % 4], NODES[(i + 2) % 4]);
        runs.push((
            format!("planes-{i}-two"),
            BTreeMap::from([(na.to_string(), (*a).clone()), (nb.to_string(), (*b).clone())]),
        ));
    }
    let sims: Vec<(String, Sim)> = runs
        .iter()
        .map(|(name, on)| {
            (
                name.clone(),
                Sim {
                    profiles: on.iter().map(|(n, p)| (n.clone(), p.clone())).collect(),
                    ..Sim::default()
                },
            )
        })
        .collect();
    for ((name, o, _), (_, on)) in concurrently(sims).iter().zip(&runs) {
        check(name, on, o);
    }
}

#[test]
fn plane_sweep_each_catalogued_plane_on_one_node_is_decided_as_the_catalogue_predicts() {
    sweep(|i| vec![NODES[i % NODES.len()]]);
}

#[test]
#[ignore = "the whole sweep (every profile on every node) takes minutes: nextest profile verify-sweep"]
fn plane_sweep_every_catalogued_plane_on_every_node() {
    sweep(|_| NODES.to_vec());
}

#[test]
fn the_sweep_is_generated_from_the_catalogue() {
    // Every entry gives a profile the simulation parses, and meets the entry there.
    for e in CATALOGUE {
        let p = affected(e).unwrap_or_else(|| panic!("{}: no affected profile", e.id));
        assert!(
            catalogue::applicable(&detection(&p)).iter().any(|a| a.id == e.id),
            "{}: {p} does not meet it",
            e.id
        );
        if let Some(f) = fixed(e) {
            assert!(
                !catalogue::applicable(&detection(&f)).iter().any(|a| a.id == e.id),
                "{}: {f} still meets it",
                e.id
            );
        }
    }
}
