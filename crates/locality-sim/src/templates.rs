//! What every simulated workload controller shares about pod templates: the revision labels,
//! the template hash, and int-or-percent values (`maxSurge`, `maxUnavailable`, `partition`).

use locality_model::objects::Labels;

use crate::objects::SimWorkload;

/// Label the simulated Deployment controller puts on ReplicaSets and pods.
pub const LABEL_POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// Label the simulated DaemonSet controller puts on its pods.
pub const LABEL_CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";

/// `labels` with `k` set to `v`.
pub(crate) fn with(labels: &Labels, k: &str, v: &str) -> Labels {
    let mut l = labels.clone();
    l.insert(k.to_string(), v.to_string());
    l
}

/// A stable hash of a workload's pod template (labels, spec, behaviour), in the
/// `pod-template-hash` alphabet.
pub fn template_hash(w: &SimWorkload) -> String {
    // The lifecycle read back (probe, grace period, preStop) is left out: a template read
    // back with the API server's defaults (`terminationGracePeriodSeconds: 30`) is the same
    // template, and what was written is in `template_digest`. A label on the Deployment
    // must not roll it.
    let mut template = w.workload.template.clone();
    template.lifecycle = Default::default();
    let text = format!(
        "{:?}{:?}{:?}{:?}{}",
        w.workload.template_labels, template, w.pod_behaviour, w.template_annotations, w.template_digest
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..10)
        .map(|i| ALPHABET[((h >> (i * 6)) % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

/// An int-or-percent (`"1"`, `"25%"`) scaled against `total`.
pub fn scaled(value: &str, total: i64, round_up: bool) -> i64 {
    let v = value.trim();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.trim().parse().unwrap_or(0.0);
        let x = p * total as f64 / 100.0;
        (if round_up { x.ceil() } else { x.floor() }) as i64
    } else {
        v.parse().unwrap_or(0)
    }
}
