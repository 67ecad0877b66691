//! Which data plane implements Services, from the objects that install it. Pure: callers
//! hand in what they read (a live cluster's `kube-system`/`calico-system` objects, or a
//! dump's DaemonSets).
//!
//! What each project's published install looks like (the tests build objects of these
//! shapes):
//! - kube-proxy: kubeadm's DaemonSet `kube-system/kube-proxy`, container `kube-proxy`, image
//!   `registry.k8s.io/kube-proxy:vX.Y.Z`.
//! - Cilium (Helm chart `install/kubernetes/cilium`, templates `cilium-agent/daemonset.yaml`
//!   and `cilium-configmap.yaml`): DaemonSet `cilium`, container `cilium-agent`, image
//!   `quay.io/cilium/cilium:vX.Y.Z@sha256:…`; ConfigMap `cilium-config` with
//!   `kube-proxy-replacement` (`"true"`; `strict` before 1.14) and, when
//!   `loadBalancer.serviceTopology=true`, `enable-service-topology: "true"`.
//! - Calico: the manifest install's DaemonSet `kube-system/calico-node`, or the Tigera
//!   operator's `calico-system/calico-node`, container `calico-node`, image
//!   `…/calico/node:vX.Y.Z`. The eBPF data plane is on when the container has
//!   `FELIX_BPFENABLED=true` (the operator sets it for `linuxDataplane: BPF`, tigera/operator
//!   `pkg/render/node.go`), the `default` FelixConfiguration has `bpfEnabled: true`, or the
//!   operator's `Installation` has `spec.calicoNetwork.linuxDataplane: BPF`.
//! - kube-router (`daemonset/kubeadm-kuberouter-all-features.yaml`): DaemonSet
//!   `kube-system/kube-router`, container `kube-router`, image
//!   `docker.io/cloudnativelabs/kube-router[:vX.Y.Z]`, args `--run-service-proxy=true` (the
//!   service proxy is what replaces kube-proxy; without it kube-proxy still serves).
//! - OVN-Kubernetes (`dist/templates/ovnkube-node.yaml.j2`, Helm chart `helm/ovn-kubernetes`):
//!   DaemonSet `ovn-kubernetes/ovnkube-node`, images
//!   `ghcr.io/ovn-kubernetes/ovn-kubernetes/ovn-kube-ubuntu:<tag>` (rarely a version).

use std::collections::BTreeMap;

use super::{Detection, Plane, PlaneVersion};
pub use crate::objects::ContainerFacts;

/// The parts of a DaemonSet detection reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DaemonSetFacts {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Its template's containers.
    pub containers: Vec<ContainerFacts>,
}

/// Everything detection reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// DaemonSets in the system namespaces (`kube-system`, `calico-system`,
    /// `ovn-kubernetes`; others are ignored by name, not by namespace).
    pub daemonsets: Vec<DaemonSetFacts>,
    /// `data` of ConfigMap `cilium-config`, when read.
    pub cilium_config: Option<BTreeMap<String, String>>,
    /// `spec.bpfEnabled` of the `default` FelixConfiguration, when read.
    pub felix_bpf_enabled: Option<bool>,
    /// `spec.calicoNetwork.linuxDataplane` of the operator's `default` Installation, when read.
    pub installation_dataplane: Option<String>,
    /// What the reader looked at and could not read, or found absent (carried into
    /// [`Detection::looked_at`]).
    pub looked_at: Vec<String>,
}

/// The facts a set of ingested workloads gives: their DaemonSets (a dump has no
/// ConfigMaps or Calico resources, so those stay unread and are said to be).
pub fn facts_from_workloads(workloads: &[crate::objects::Workload]) -> Facts {
    Facts {
        daemonsets: workloads
            .iter()
            .filter(|w| w.kind == crate::objects::WorkloadKind::DaemonSet)
            .map(|w| DaemonSetFacts {
                namespace: w.meta.namespace.clone(),
                name: w.meta.name.clone(),
                containers: w.containers.clone(),
            })
            .collect(),
        ..Facts::default()
    }
}

/// The DaemonSet named `name`, preferring `kube-system` then `calico-system`.
fn daemonset<'a>(facts: &'a Facts, name: &str) -> Option<&'a DaemonSetFacts> {
    let mut found: Vec<&DaemonSetFacts> = facts.daemonsets.iter().filter(|d| d.name == name).collect();
    found.sort_by_key(|d| match d.namespace.as_str() {
        "kube-system" => 0,
        "calico-system" => 1,
        _ => 2,
    });
    found.first().copied()
}

fn container<'a>(ds: &'a DaemonSetFacts, name: &str) -> Option<&'a ContainerFacts> {
    ds.containers
        .iter()
        .find(|c| c.name == name)
        .or_else(|| ds.containers.first())
}

fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "true" | "strict" | "1" | "yes"
    )
}

/// The data plane that implements Services. A replacement wins over kube-proxy only when it
/// does replace it (Cilium with `kube-proxy-replacement`, or without a kube-proxy DaemonSet;
/// Calico with eBPF on; kube-router with its service proxy on; OVN-Kubernetes always);
/// otherwise kube-proxy, else unknown with what was looked at.
pub fn detect(facts: &Facts) -> Detection {
    let mut looked_at = facts.looked_at.clone();
    let kube_proxy = daemonset(facts, "kube-proxy");
    let found = |plane: Plane, ds: &DaemonSetFacts, c: &ContainerFacts, settings, looked_at| Detection {
        plane: Some(plane),
        version: PlaneVersion::from_image(&c.image),
        settings,
        source: format!("DaemonSet {}/{} image {}", ds.namespace, ds.name, c.image),
        looked_at,
    };

    // OVN-Kubernetes: always its own Service implementation.
    if let Some(ds) = daemonset(facts, "ovnkube-node") {
        let c = ds
            .containers
            .iter()
            .find(|c| c.name == "ovnkube-controller" || c.name == "ovnkube-node")
            .or_else(|| ds.containers.first());
        if let Some(c) = c {
            looked_at.push(format!("DaemonSet {}/{}: found", ds.namespace, ds.name));
            return found(Plane::OvnKubernetes, ds, c, BTreeMap::new(), looked_at);
        }
    } else {
        looked_at.push("DaemonSet ovnkube-node: absent".into());
    }

    // Cilium.
    if let Some(ds) = daemonset(facts, "cilium") {
        let c = container(ds, "cilium-agent");
        let mut settings = BTreeMap::new();
        let kpr = facts.cilium_config.as_ref().map(|cm| {
            for key in ["kube-proxy-replacement", "enable-service-topology"] {
                if let Some(v) = cm.get(key) {
                    settings.insert(key.to_string(), v.trim().to_string());
                }
            }
            cm.get("kube-proxy-replacement").is_some_and(|v| truthy(v))
        });
        if facts.cilium_config.is_none() {
            looked_at.push("ConfigMap cilium-config: not read".into());
        }
        let replaces = kpr.unwrap_or(kube_proxy.is_none());
        if let (Some(c), true) = (c, replaces) {
            looked_at.push(format!("DaemonSet {}/{}: found", ds.namespace, ds.name));
            return found(Plane::Cilium, ds, c, settings, looked_at);
        }
        looked_at.push(format!(
            "DaemonSet {}/{}: found, without kube-proxy replacement (kube-proxy serves Services)",
            ds.namespace, ds.name
        ));
    } else {
        looked_at.push("DaemonSet cilium: absent".into());
    }

    // Calico eBPF.
    if let Some(ds) = daemonset(facts, "calico-node") {
        let c = container(ds, "calico-node");
        let env = c.and_then(|c| c.env("FELIX_BPFENABLED")).map(truthy);
        let installation = facts
            .installation_dataplane
            .as_deref()
            .map(|d| d.eq_ignore_ascii_case("BPF"));
        let (bpf, why) = match (env, facts.felix_bpf_enabled, installation) {
            (Some(v), _, _) => (v, "env FELIX_BPFENABLED"),
            (None, Some(v), _) => (v, "FelixConfiguration default spec.bpfEnabled"),
            (None, None, Some(v)) => (v, "Installation default spec.calicoNetwork.linuxDataplane"),
            (None, None, None) => (
                false,
                "no FELIX_BPFENABLED, FelixConfiguration or Installation read",
            ),
        };
        if let (Some(c), true) = (c, bpf) {
            looked_at.push(format!(
                "DaemonSet {}/{}: found, eBPF on ({why})",
                ds.namespace, ds.name
            ));
            let mut settings = BTreeMap::new();
            settings.insert("bpfEnabled".to_string(), "true".to_string());
            return found(Plane::CalicoEbpf, ds, c, settings, looked_at);
        }
        looked_at.push(format!(
            "DaemonSet {}/{}: found, eBPF off or not known ({why})",
            ds.namespace, ds.name
        ));
    } else {
        looked_at.push("DaemonSet calico-node: absent".into());
    }

    // kube-router with its service proxy.
    if let Some(ds) = daemonset(facts, "kube-router") {
        let c = container(ds, "kube-router");
        let proxy = c
            .and_then(|c| c.flag("run-service-proxy"))
            .is_some_and(|v| truthy(&v));
        if let (Some(c), true) = (c, proxy) {
            looked_at.push(format!(
                "DaemonSet {}/{}: found, --run-service-proxy",
                ds.namespace, ds.name
            ));
            return found(Plane::KubeRouter, ds, c, BTreeMap::new(), looked_at);
        }
        looked_at.push(format!(
            "DaemonSet {}/{}: found, without --run-service-proxy",
            ds.namespace, ds.name
        ));
    } else {
        looked_at.push("DaemonSet kube-router: absent".into());
    }

    if let Some(ds) = kube_proxy {
        if let Some(c) = container(ds, "kube-proxy") {
            looked_at.push(format!("DaemonSet {}/{}: found", ds.namespace, ds.name));
            // The mode when its flags name it (a live reader adds the ConfigMap's).
            let settings = c
                .flag("proxy-mode")
                .map(|m| ("mode".to_string(), m))
                .into_iter()
                .collect();
            return found(Plane::KubeProxy, ds, c, settings, looked_at);
        }
    } else {
        looked_at.push("DaemonSet kube-proxy: absent".into());
    }
    Detection {
        plane: None,
        version: None,
        settings: BTreeMap::new(),
        source: "no known data plane's DaemonSet found".into(),
        looked_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(ns: &str, name: &str, c: ContainerFacts) -> DaemonSetFacts {
        DaemonSetFacts {
            namespace: ns.into(),
            name: name.into(),
            containers: vec![c],
        }
    }
    fn c(name: &str, image: &str, env: &[(&str, &str)], args: &[&str]) -> ContainerFacts {
        ContainerFacts {
            name: name.into(),
            image: image.into(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }
    fn kube_proxy() -> DaemonSetFacts {
        ds(
            "kube-system",
            "kube-proxy",
            c(
                "kube-proxy",
                "registry.k8s.io/kube-proxy:v1.35.0",
                &[],
                &[
                    "/usr/local/bin/kube-proxy",
                    "--config=/var/lib/kube-proxy/config.conf",
                ],
            ),
        )
    }

    /// Cilium as its Helm chart installs it (`cilium-agent/daemonset.yaml`: container
    /// `cilium-agent`, image with tag and digest; `cilium-configmap.yaml`).
    #[test]
    fn cilium_with_kube_proxy_replacement() {
        let facts = Facts {
            daemonsets: vec![ds(
                "kube-system",
                "cilium",
                c(
                    "cilium-agent",
                    "quay.io/cilium/cilium:v1.18.0@sha256:0b3f1e6e1f4c",
                    &[("K8S_NODE_NAME", "")],
                    &["cilium-agent", "--config-dir=/tmp/cilium/config-map"],
                ),
            )],
            cilium_config: Some(BTreeMap::from([
                ("kube-proxy-replacement".into(), "true".into()),
                ("enable-service-topology".into(), "true".into()),
            ])),
            ..Facts::default()
        };
        let d = detect(&facts);
        assert_eq!(d.plane, Some(Plane::Cilium));
        assert_eq!(d.version, Some(PlaneVersion::new(1, 18, 0)));
        assert_eq!(
            d.settings.get("enable-service-topology").map(String::as_str),
            Some("true")
        );
        assert_eq!(d.describe(), "cilium 1.18.0");
    }

    #[test]
    fn cilium_beside_kube_proxy_without_replacement_is_kube_proxy() {
        let mut facts = Facts {
            daemonsets: vec![
                kube_proxy(),
                ds(
                    "kube-system",
                    "cilium",
                    c("cilium-agent", "quay.io/cilium/cilium:v1.17.2", &[], &[]),
                ),
            ],
            cilium_config: Some(BTreeMap::from([(
                "kube-proxy-replacement".into(),
                "false".into(),
            )])),
            ..Facts::default()
        };
        assert_eq!(detect(&facts).plane, Some(Plane::KubeProxy));
        // Without the ConfigMap, no kube-proxy DaemonSet means Cilium replaces it.
        facts.daemonsets.remove(0);
        facts.cilium_config = None;
        assert_eq!(detect(&facts).plane, Some(Plane::Cilium));
    }

    /// Calico installed by the Tigera operator with `linuxDataplane: BPF`
    /// (tigera/operator `pkg/render/node.go` sets `FELIX_BPFENABLED=true` on `calico-node`).
    #[test]
    fn calico_ebpf_from_the_operator_and_from_the_manifest() {
        let operator = Facts {
            daemonsets: vec![ds(
                "calico-system",
                "calico-node",
                c(
                    "calico-node",
                    "quay.io/calico/node:v3.26.4",
                    &[("DATASTORE_TYPE", "kubernetes"), ("FELIX_BPFENABLED", "true")],
                    &[],
                ),
            )],
            ..Facts::default()
        };
        let d = detect(&operator);
        assert_eq!(d.plane, Some(Plane::CalicoEbpf));
        assert_eq!(d.version, Some(PlaneVersion::new(3, 26, 4)));
        // The manifest install (`calico.yaml`) with eBPF turned on in the FelixConfiguration.
        let manifest = Facts {
            daemonsets: vec![
                kube_proxy(),
                ds(
                    "kube-system",
                    "calico-node",
                    c(
                        "calico-node",
                        "docker.io/calico/node:v3.27.0",
                        &[("CALICO_NETWORKING_BACKEND", "bird")],
                        &[],
                    ),
                ),
            ],
            felix_bpf_enabled: Some(true),
            ..Facts::default()
        };
        assert_eq!(detect(&manifest).plane, Some(Plane::CalicoEbpf));
        // iptables Calico: kube-proxy serves.
        let iptables = Facts {
            felix_bpf_enabled: None,
            ..manifest
        };
        let d = detect(&iptables);
        assert_eq!(d.plane, Some(Plane::KubeProxy));
        assert!(
            d.looked_at.iter().any(|l| l.contains("eBPF off or not known")),
            "{d:?}"
        );
    }

    /// kube-router's `daemonset/kubeadm-kuberouter-all-features.yaml`.
    #[test]
    fn kube_router_with_its_service_proxy() {
        let facts = Facts {
            daemonsets: vec![ds(
                "kube-system",
                "kube-router",
                c(
                    "kube-router",
                    "docker.io/cloudnativelabs/kube-router:v2.0.1",
                    &[],
                    &[
                        "--run-router=true",
                        "--run-firewall=true",
                        "--run-service-proxy=true",
                        "--bgp-graceful-restart=true",
                    ],
                ),
            )],
            ..Facts::default()
        };
        let d = detect(&facts);
        assert_eq!(d.plane, Some(Plane::KubeRouter));
        assert_eq!(d.version, Some(PlaneVersion::new(2, 0, 1)));
        let untagged = Facts {
            daemonsets: vec![ds(
                "kube-system",
                "kube-router",
                c(
                    "kube-router",
                    "docker.io/cloudnativelabs/kube-router",
                    &[],
                    &["--run-service-proxy=true"],
                ),
            )],
            ..Facts::default()
        };
        assert_eq!(detect(&untagged).describe(), "kube-router (version unknown)");
    }

    /// OVN-Kubernetes' `ovnkube-node` DaemonSet (`dist/templates/ovnkube-node.yaml.j2`).
    #[test]
    fn ovn_kubernetes() {
        let facts = Facts {
            daemonsets: vec![DaemonSetFacts {
                namespace: "ovn-kubernetes".into(),
                name: "ovnkube-node".into(),
                containers: vec![
                    c(
                        "ovn-controller",
                        "ghcr.io/ovn-kubernetes/ovn-kubernetes/ovn-kube-ubuntu:master",
                        &[],
                        &[],
                    ),
                    c(
                        "ovnkube-controller",
                        "ghcr.io/ovn-kubernetes/ovn-kubernetes/ovn-kube-ubuntu:master",
                        &[],
                        &[],
                    ),
                ],
            }],
            ..Facts::default()
        };
        assert_eq!(detect(&facts).describe(), "ovn-kubernetes (version unknown)");
    }

    #[test]
    fn nothing_known_says_what_was_looked_at() {
        let d = detect(&Facts::default());
        assert_eq!(d.plane, None);
        assert!(
            d.looked_at.iter().any(|l| l == "DaemonSet kube-proxy: absent"),
            "{d:?}"
        );
        assert_eq!(
            detect(&Facts {
                daemonsets: vec![kube_proxy()],
                ..Facts::default()
            })
            .describe(),
            "kube-proxy 1.35.0"
        );
    }
}
