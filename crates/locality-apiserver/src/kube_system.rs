//! The `kube-system` objects a kubeadm cluster has and that clients read to find the data
//! plane (`locality_live`'s `dataplane` module, `verify`'s node sampling): kube-proxy's
//! DaemonSet and its ConfigMap, published by [`crate::serve`] from the engine's simulated
//! kube-proxies as they are when serving starts.
//!
//! - DaemonSet `kube-system/kube-proxy` as kubeadm writes it (`k8s-app: kube-proxy`, container
//!   `kube-proxy`, image `registry.k8s.io/kube-proxy:v<the cluster's kube-proxy version>.0`,
//!   command `/usr/local/bin/kube-proxy --config=/var/lib/kube-proxy/config.conf
//!   --hostname-override=$(NODE_NAME)`, the ConfigMap mounted at `/var/lib/kube-proxy`,
//!   hostNetwork, tolerating every taint, on `kubernetes.io/os: linux` nodes). The simulated
//!   DaemonSet controller runs one pod per node; each pod's image tag is **its node's**
//!   simulated kube-proxy version, so a node with an older kube-proxy shows the older tag, as
//!   a DaemonSet mid-upgrade does (the pods keep the template's revision hash: the simulated
//!   controller does not roll them).
//! - ConfigMap `kube-system/kube-proxy` with `config.conf`, a KubeProxyConfiguration whose
//!   `mode` is the mode most simulated kube-proxies run (ties: iptables, then nftables).
//!   ConfigMaps are served read-only (the `configmaps` module).
//! - Nodes whose simulated kube-proxy runs another mode (a `kube-proxy:ipvs` profile) get
//!   their pod from a second DaemonSet and ConfigMap for that mode, `kube-proxy-<mode>`
//!   (label `k8s-app: kube-proxy-<mode>`), placed by node affinity on those nodes and kept off
//!   them by the first one's, as a cluster with a node pool configured apart is set up.
//! - Nodes whose data plane is not kube-proxy (an `other:NAME` profile, a replacement) get no
//!   kube-proxy pod; when no node runs kube-proxy nothing is published.
//!
//! Everything published is annotated `locality.dev/simulated: "true"`. Serving starts once
//! the published pods are Running and Ready on every Ready Linux node (at most
//! [`READY_WITHIN_MS`] of virtual time): a cluster is served with its kube-proxy up.

use std::collections::{BTreeMap, BTreeSet};

use locality_model::version::KubeVersion;
use locality_sim::SimPod;
use locality_sim::time::{Millis, rfc3339};
use locality_sim::{Engine, Kind, ObjectKey, ProxyMode};
use serde_json::{Value, json};

use crate::encode::Ctx;
use crate::{Sim, decode, resources};

/// Namespace of what is published.
const NAMESPACE: &str = "kube-system";
/// Name of the DaemonSet, its ConfigMap, its pods' label `k8s-app` and its container.
const KUBE_PROXY: &str = "kube-proxy";
/// The repository of kube-proxy's image (kubeadm's default).
const IMAGE_REPOSITORY: &str = "registry.k8s.io/kube-proxy";
/// The annotation that says an object is the simulation's own.
const SIMULATED_ANNOTATION: &str = "locality.dev/simulated";
/// The key of the ConfigMap's KubeProxyConfiguration, and the file `--config` names.
const CONFIG_KEY: &str = "config.conf";
/// Where kubeadm mounts the ConfigMap.
const CONFIG_DIR: &str = "/var/lib/kube-proxy";
/// Key in a published DaemonSet's raw JSON: the image it was published with (server-private,
/// never served).
const MARKER: &str = "x-locality-sim-kube-proxy";
/// How long (virtual ms) serving waits for the published pods to be Ready.
const READY_WITHIN_MS: Millis = 10_000;

/// kube-proxy's image at `version` (`registry.k8s.io/kube-proxy:v1.35.0`; the patch is `.0`,
/// as the simulated kube-proxy's `kubernetes_build_info`).
fn image(version: KubeVersion) -> String {
    format!("{IMAGE_REPOSITORY}:v{}.{}.0", version.major, version.minor)
}

/// Where a DaemonSet may run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Placement {
    /// Every Linux node.
    All,
    /// Every Linux node but these.
    Except(Vec<String>),
    /// Only these.
    Only(Vec<String>),
}

/// One DaemonSet (and its ConfigMap) to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    /// DaemonSet, ConfigMap and `k8s-app` label.
    name: String,
    mode: ProxyMode,
    placement: Placement,
}

/// The DaemonSets the engine's simulated kube-proxies call for: one for the most common
/// mode, one per other mode, none for nodes with a replacement data plane.
fn plan(engine: &Engine) -> Vec<Plan> {
    let mut by_mode: BTreeMap<ProxyMode, Vec<String>> = BTreeMap::new();
    let mut replaced = Vec::new();
    for node in engine.node_names() {
        let Some(proxy) = engine.kube_proxy(node) else {
            continue;
        };
        if proxy.profile.replacement().is_some() {
            replaced.push(node.to_string());
        } else {
            by_mode
                .entry(proxy.profile.mode)
                .or_default()
                .push(node.to_string());
        }
    }
    if by_mode.is_empty() && !replaced.is_empty() {
        return Vec::new();
    }
    // The most common mode; ties go to the first in iptables, nftables, ipvs order.
    let main = by_mode
        .iter()
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(a.0)))
        .map_or(ProxyMode::Iptables, |(m, _)| *m);
    let mut excluded = replaced;
    let mut plans = Vec::new();
    for (mode, nodes) in by_mode.into_iter().filter(|(m, _)| *m != main) {
        excluded.extend(nodes.iter().cloned());
        plans.push(Plan {
            name: format!("{KUBE_PROXY}-{}", mode.as_str()),
            mode,
            placement: Placement::Only(nodes),
        });
    }
    excluded.sort();
    let placement = if excluded.is_empty() {
        Placement::All
    } else {
        Placement::Except(excluded)
    };
    plans.insert(
        0,
        Plan {
            name: KUBE_PROXY.to_string(),
            mode: main,
            placement,
        },
    );
    plans
}

/// The DaemonSet of `plan` as kubeadm writes kube-proxy's, at `version`.
fn daemon_set(plan: &Plan, version: KubeVersion) -> Value {
    let labels = json!({"k8s-app": plan.name});
    let simulated = json!({SIMULATED_ANNOTATION: "true"});
    let mut spec = json!({
        "containers": [{
            "name": KUBE_PROXY,
            "image": image(version),
            "imagePullPolicy": "IfNotPresent",
            "command": [
                "/usr/local/bin/kube-proxy",
                format!("--config={CONFIG_DIR}/{CONFIG_KEY}"),
                "--hostname-override=$(NODE_NAME)",
            ],
            "env": [{"name": "NODE_NAME",
                     "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
            "securityContext": {"privileged": true},
            "volumeMounts": [
                {"mountPath": CONFIG_DIR, "name": KUBE_PROXY},
                {"mountPath": "/run/xtables.lock", "name": "xtables-lock"},
                {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": true},
            ],
        }],
        "hostNetwork": true,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "priorityClassName": "system-node-critical",
        "serviceAccountName": KUBE_PROXY,
        "tolerations": [{"operator": "Exists"}],
        "volumes": [
            {"name": KUBE_PROXY, "configMap": {"name": plan.name}},
            {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
            {"name": "lib-modules", "hostPath": {"path": "/lib/modules"}},
        ],
    });
    let by_name = |operator: &str, nodes: &[String]| {
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": operator, "values": nodes}]}
        ]}}})
    };
    match &plan.placement {
        Placement::All => {}
        Placement::Except(nodes) => spec["affinity"] = by_name("NotIn", nodes),
        Placement::Only(nodes) => spec["affinity"] = by_name("In", nodes),
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": plan.name, "namespace": NAMESPACE, "labels": labels,
                     "annotations": simulated},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels, "annotations": simulated}, "spec": spec},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
        },
    })
}

/// The KubeProxyConfiguration of `plan`'s ConfigMap.
fn config_text(mode: ProxyMode) -> String {
    format!(
        "# SIMULATED: kube-proxy's configuration in a locality simulated cluster (locality sim serve).\n\
         apiVersion: kubeproxy.config.k8s.io/v1alpha1\n\
         bindAddress: 0.0.0.0\n\
         clientConnection:\n  kubeconfig: {CONFIG_DIR}/kubeconfig.conf\n\
         healthzBindAddress: 0.0.0.0:10256\n\
         kind: KubeProxyConfiguration\n\
         metricsBindAddress: 127.0.0.1:10249\n\
         mode: {}\n",
        mode.as_str()
    )
}

/// The ConfigMap of `plan` (served as it is: the simulated store holds no ConfigMaps).
fn config_map(plan: &Plan, seq: usize, rv: u64, now: Millis) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": plan.name,
            "namespace": NAMESPACE,
            "uid": format!("00000000-0000-4000-8000-c0f16a{seq:06x}"),
            "resourceVersion": rv.to_string(),
            "creationTimestamp": rfc3339(now),
            "labels": {"app": plan.name},
            "annotations": {SIMULATED_ANNOTATION: "true"},
        },
        "data": {CONFIG_KEY: config_text(plan.mode)},
    })
}

/// Publishes kube-proxy's DaemonSets and ConfigMaps and runs the engine until their pods are
/// Ready (see the module docs). Objects that cannot be created (one of that name exists) are
/// left as they are.
pub(crate) fn publish(sim: &mut Sim) {
    let plans = plan(&sim.engine);
    if plans.is_empty() {
        return;
    }
    let Some(r) = resources::find("apps", "v1", "daemonsets") else {
        return;
    };
    let version = sim.engine.config().kube_proxy_version;
    let mut published = BTreeSet::new();
    for (i, plan) in plans.iter().enumerate() {
        let key = ObjectKey::new(Kind::DaemonSet, NAMESPACE, plan.name.as_str());
        if sim.engine.get(&key).is_some() {
            continue;
        }
        let Ok(value) = decode::prepare_value(r, NAMESPACE, daemon_set(plan, version), "") else {
            continue;
        };
        let Ok(object) = decode::to_object(r, &value) else {
            continue;
        };
        if sim.engine.create(object).is_err() {
            continue;
        }
        let Some(uid) = sim.engine.store().get(&key).map(|s| s.uid.clone()) else {
            continue;
        };
        let mut raw = value;
        raw[MARKER] = json!({"image": image(version)});
        sim.raw.insert(uid, raw);
        let rv = sim.engine.store().resource_version();
        sim.config_maps
            .push(config_map(plan, i + 1, rv, sim.engine.now()));
        published.insert(plan.name.clone());
    }
    let deadline = sim.engine.now() + READY_WITHIN_MS;
    while !running(&sim.engine, &published) && sim.engine.now() < deadline {
        sim.engine.run_for(100);
    }
}

/// True when every Ready Linux node that runs kube-proxy has a Ready pod of a published
/// DaemonSet.
fn running(engine: &Engine, published: &BTreeSet<String>) -> bool {
    let mut up: BTreeSet<&str> = BTreeSet::new();
    for (_, s) in engine.store().list_namespace(Kind::Pod, NAMESPACE) {
        let Some(p) = s.object.as_pod() else { continue };
        let owned = p
            .pod
            .meta
            .owner_references
            .iter()
            .any(|o| o.controller && o.kind == "DaemonSet" && published.contains(&o.name));
        if owned && p.pod.ready {
            up.insert(p.pod.spec.node_name.as_str());
        }
    }
    engine.node_names().all(|name| {
        let node = engine
            .get(&ObjectKey::new(Kind::Node, "", name))
            .and_then(|o| o.as_node());
        let expected = node.is_some_and(|n| {
            n.ready == Some(true)
                && n.meta.labels.get("kubernetes.io/os").map(String::as_str) == Some("linux")
        }) && engine
            .kube_proxy(name)
            .is_some_and(|p| p.profile.replacement().is_none());
        !expected || up.contains(name)
    })
}

/// A published kube-proxy pod as its node runs it: the container's image tag is the node's
/// simulated kube-proxy version (unless the DaemonSet's image was changed since), and the
/// node affinity is the DaemonSet controller's (`ReplaceDaemonSetPodNodeNameNodeAffinity`:
/// the pod's own node by name). Other pods are left as they are.
pub(crate) fn node_pod(ctx: &Ctx<'_>, p: &SimPod, spec: &mut Value) {
    let meta = &p.pod.meta;
    let node = p.pod.spec.node_name.as_str();
    if meta.namespace != NAMESPACE || node.is_empty() {
        return;
    }
    let Some(owner) = meta
        .owner_references
        .iter()
        .find(|o| o.controller && o.kind == "DaemonSet")
    else {
        return;
    };
    let Some(ds) = ctx
        .engine
        .get(&ObjectKey::new(Kind::DaemonSet, NAMESPACE, owner.name.as_str()))
        .filter(|ds| ds.meta().uid == owner.uid)
    else {
        return;
    };
    let Some(published) = ctx.raw.get(&ds.meta().uid).and_then(|r| r.get(MARKER)) else {
        return;
    };
    let Some(proxy) = ctx.engine.kube_proxy(node) else {
        return;
    };
    if let Some(containers) = spec.get_mut("containers").and_then(Value::as_array_mut) {
        for c in containers.iter_mut().filter(|c| c["name"] == KUBE_PROXY) {
            if c["image"] == published["image"] {
                c["image"] = json!(image(proxy.version()));
            }
        }
    }
    if let Some(terms) = spec
        .pointer_mut(
            "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
        )
        .and_then(Value::as_array_mut)
    {
        for t in terms {
            t["matchFields"] = json!([{"key": "metadata.name", "operator": "In", "values": [node]}]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locality_sim::{DataPlaneProfile, SimConfig, Topology};

    fn engine(profiles: &[(&str, &str)]) -> Engine {
        let t = Topology::builtin("four-nodes").unwrap();
        let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
        for (n, p) in profiles {
            e.set_profile(n, p.parse::<DataPlaneProfile>().unwrap());
        }
        e
    }

    #[test]
    fn one_daemonset_for_a_uniform_cluster() {
        let p = plan(&engine(&[]));
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].name, "kube-proxy");
        assert_eq!(p[0].mode, ProxyMode::Iptables);
        assert_eq!(p[0].placement, Placement::All);
        let ds = daemon_set(&p[0], KubeVersion::new(1, 34));
        let c = &ds["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["image"], "registry.k8s.io/kube-proxy:v1.34.0");
        assert_eq!(
            c["command"],
            json!([
                "/usr/local/bin/kube-proxy",
                "--config=/var/lib/kube-proxy/config.conf",
                "--hostname-override=$(NODE_NAME)"
            ])
        );
        assert!(ds["spec"]["template"]["spec"].get("affinity").is_none());
    }

    #[test]
    fn other_modes_get_their_own_daemonset_and_replacements_none() {
        let p = plan(&engine(&[
            ("node-c", "kube-proxy:ipvs"),
            ("node-d", "other:cilium"),
        ]));
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[0].mode, ProxyMode::Iptables);
        assert_eq!(
            p[0].placement,
            Placement::Except(vec!["node-c".into(), "node-d".into()])
        );
        assert_eq!(p[1].name, "kube-proxy-ipvs");
        assert_eq!(p[1].placement, Placement::Only(vec!["node-c".into()]));
        // The most common mode is the main one; ties go to iptables.
        let p = plan(&engine(&[
            ("node-a", "kube-proxy:nftables"),
            ("node-b", "kube-proxy:nftables"),
            ("node-c", "kube-proxy:nftables"),
        ]));
        assert_eq!(
            (p[0].name.as_str(), p[0].mode),
            ("kube-proxy", ProxyMode::Nftables)
        );
        let p = plan(&engine(&[
            ("node-a", "kube-proxy:nftables"),
            ("node-b", "kube-proxy:nftables"),
        ]));
        assert_eq!(p[0].mode, ProxyMode::Iptables);
        let all: Vec<(&str, &str)> = ["node-a", "node-b", "node-c", "node-d"]
            .iter()
            .map(|n| (*n, "other:cilium"))
            .collect();
        assert!(plan(&engine(&all)).is_empty());
    }

    #[test]
    fn the_configuration_names_the_mode() {
        let text = config_text(ProxyMode::Ipvs);
        assert!(text.contains("kind: KubeProxyConfiguration\n"), "{text}");
        assert!(text.ends_with("mode: ipvs\n"), "{text}");
    }
}
