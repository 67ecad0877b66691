//! docs/dataplanes.md, rendered from the catalogue (the file is generated: a test in
//! `crates/locality/tests` fails when it differs from [`render`]).

use std::fmt::Write as _;

use super::Plane;
use super::catalogue::{CATALOGUE, Resolution, url};

/// The whole document.
pub fn render() -> String {
    let mut s = String::new();
    s.push_str(
        "<!-- Generated from crates/locality-model/src/dataplane/catalogue.rs by \
         locality_model::dataplane::markdown::render; do not edit by hand. -->\n\
         # Known data-plane divergences\n\n\
         Data planes that replace kube-proxy re-implement Service routing; where they differ \
         from kube-proxy, a Service's locality guarantees differ with them. This catalogue lists \
         the known divergences, each with the versions it affects, what it does to the model's \
         verdicts, the upstream issue and fix, the repair and the `verify` cases that expose it.\n\n\
         - `locality verify` detects each node's data plane and version (recorded in \
         `00-versions.yaml`); a confirmed violation that an entry explains is **REPAIR** for a \
         fixed bug (naming the fixed version and the issue) or a configuration pitfall (naming \
         the setting), and **HOLD** for an open bug (naming the issue and the mitigation).\n\
         - `locality audit` rule `LOC021` flags the Services whose policy meets an entry of the \
         detected data plane and version.\n\
         - The simulated cluster reproduces each entry with a profile (`--profile \
         node-b=cilium:1.18.0`, `calico-ebpf:3.26`, `kube-router:2.0`), built on the simulated \
         kube-proxy so only the divergence differs.\n\n\
         Detection reads the DaemonSets `kube-proxy`, `cilium` (with ConfigMap `cilium-config`), \
         `calico-node` (eBPF from `FELIX_BPFENABLED`, the `default` FelixConfiguration or the \
         operator's Installation), `kube-router` (`--run-service-proxy`) and `ovnkube-node`; a \
         version comes from the image tag. An entry whose facts were not all confirmed upstream \
         says so.\n\n",
    );
    s.push_str(
        "| ID | data plane | affected | resolution | cases | confirmed |\n|---|---|---|---|---|---|\n",
    );
    for e in CATALOGUE {
        let _ = writeln!(
            s,
            "| [`{}`](#{}) | {} | {} | {} | {} | {} |",
            e.id,
            e.id,
            e.plane,
            e.affected_text(),
            resolution(&e.resolution),
            if e.cases.is_empty() {
                "none yet".to_string()
            } else {
                e.cases.join(", ")
            },
            if e.confirmed { "yes" } else { "partly" }
        );
    }
    for plane in Plane::ALL {
        let entries: Vec<_> = CATALOGUE.iter().filter(|e| e.plane == plane).collect();
        if entries.is_empty() {
            continue;
        }
        let _ = write!(s, "\n## {plane}\n");
        for e in entries {
            let _ = write!(s, "\n### {}\n\n", e.id);
            let _ = writeln!(s, "- **Affected**: {} {}", e.plane, e.affected_text());
            if let Some(r) = e.requires {
                let _ = writeln!(
                    s,
                    "- **Applies when**: `{}` {} `{}`",
                    r.key,
                    if r.present { "is" } else { "is not" },
                    r.value
                );
            }
            let _ = writeln!(s, "- **Divergence**: {}", e.divergence);
            let issues: Vec<String> = e.issues.iter().map(|i| format!("[{i}]({})", url(i))).collect();
            let _ = writeln!(s, "- **Upstream**: {}", issues.join(", "));
            let _ = writeln!(s, "- **Resolution**: {}", resolution(&e.resolution));
            let _ = writeln!(
                s,
                "- **verify decides**: {} — {}",
                if e.resolution == Resolution::Open {
                    "HOLD"
                } else {
                    "REPAIR"
                },
                e.advice()
            );
            let _ = writeln!(
                s,
                "- **Cases**: {}",
                if e.cases.is_empty() {
                    "none yet".to_string()
                } else {
                    e.cases
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            );
            let _ = writeln!(
                s,
                "- **Checked upstream** ({}): {}",
                if e.confirmed {
                    "confirmed"
                } else {
                    "not all confirmed"
                },
                e.checked
            );
        }
    }
    s
}

fn resolution(r: &Resolution) -> String {
    match r {
        Resolution::Fixed { version: Some(v), by } => format!("fixed in {v} ([{by}]({}))", url(by)),
        Resolution::Fixed { version: None, by } => format!("fixed by [{by}]({}), release unknown", url(by)),
        Resolution::Setting { setting, value, .. } => format!("configuration: `{setting}={value}`"),
        Resolution::Open => "open".to_string(),
    }
}
