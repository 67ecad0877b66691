//! Builders for the model's objects: the pieces every crate's tests start from.

use locality_model::objects::{LABEL_ZONE, Labels, Node, ObjectMeta, Taint};

/// Metadata with a namespace (`""` for cluster-scoped objects) and a name.
pub fn meta(ns: &str, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: name.into(),
        namespace: ns.into(),
        ..Default::default()
    }
}

/// Labels from `(key, value)` pairs.
pub fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A Ready node (4 CPUs, InternalIP 192.168.0.1), in `zone` when given.
pub fn node(name: &str, zone: Option<&str>) -> Node {
    let mut m = meta("", name);
    if let Some(z) = zone {
        m.labels.insert(LABEL_ZONE.into(), z.into());
    }
    Node {
        meta: m,
        ready: Some(true),
        allocatable_cpu_millis: Some(4000),
        allocatable_pods: None,
        internal_ips: vec!["192.168.0.1".parse().expect("an IP")],
        ..Default::default()
    }
}

/// Nodes `node-1..=n` dealt over `zones` (no zone label when `zones` is empty).
pub fn nodes(n: usize, zones: &[&str]) -> Vec<Node> {
    (0..n)
        .map(|i| {
            node(
                &format!("node-{}", i + 1),
                (!zones.is_empty()).then(|| zones[i % zones.len()]),
            )
        })
        .collect()
}

/// A taint.
pub fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: value.into(),
        effect: effect.into(),
    }
}
