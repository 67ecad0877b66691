//! The objects a known data plane installs, published for the nodes whose simulated profile
//! is one (`cilium:1.18.0`, `calico-ebpf:3.26`, `kube-router:2.0`, `ovn-kubernetes:…`), so
//! that detection (`locality_model::dataplane::detect`, through `live` and `verify`) reads
//! them as on a real cluster. Shaped like each project's published install (see that
//! module's docs): Cilium's Helm chart (DaemonSet `cilium`, container `cilium-agent`, image
//! `quay.io/cilium/cilium:vX.Y.Z`, ConfigMap `cilium-config` with `kube-proxy-replacement`
//! and `enable-service-topology`), Calico's manifest (`calico-node`, `FELIX_BPFENABLED=true`),
//! kube-router's `kubeadm-kuberouter-all-features.yaml` (`--run-service-proxy=true`),
//! OVN-Kubernetes' `ovnkube-node`.
//!
//! One DaemonSet per data plane, in `kube-system`, placed by node affinity on the nodes with
//! that profile; its image is tagged with the version of the first of them. Everything is
//! annotated `locality.dev/simulated: "true"`.

use std::collections::BTreeMap;

use locality_model::dataplane::Plane;
use locality_sim::time::{Millis, rfc3339};
use locality_sim::{Engine, Kind, ObjectKey, PlaneProfile};
use serde_json::{Value, json};

use crate::{Sim, decode, resources};

const NAMESPACE: &str = "kube-system";
const SIMULATED_ANNOTATION: &str = "locality.dev/simulated";
/// How long (virtual ms) publishing waits for the pods to be scheduled.
const SCHEDULED_WITHIN_MS: Millis = 10_000;

/// The nodes per data plane, with the profile of the first.
fn planes(engine: &Engine) -> BTreeMap<Plane, (PlaneProfile, Vec<String>)> {
    let mut out: BTreeMap<Plane, (PlaneProfile, Vec<String>)> = BTreeMap::new();
    for node in engine.node_names() {
        let Some(p) = engine.kube_proxy(node).and_then(|k| k.profile.plane().cloned()) else {
            continue;
        };
        out.entry(p.plane)
            .or_insert_with(|| (p.clone(), Vec::new()))
            .1
            .push(node.to_string());
    }
    out
}

/// DaemonSet name, container name, image, env and args of a data plane at its version.
fn shape(p: &PlaneProfile) -> (&'static str, &'static str, String, Value, Value) {
    let v = p.version;
    match p.plane {
        Plane::Cilium => (
            "cilium",
            "cilium-agent",
            format!("quay.io/cilium/cilium:v{v}"),
            json!([{"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]),
            json!(["--config-dir=/tmp/cilium/config-map"]),
        ),
        Plane::CalicoEbpf => (
            "calico-node",
            "calico-node",
            format!("docker.io/calico/node:v{v}"),
            json!([{"name": "DATASTORE_TYPE", "value": "kubernetes"},
                   {"name": "FELIX_BPFENABLED", "value": "true"}]),
            json!([]),
        ),
        Plane::KubeRouter => (
            "kube-router",
            "kube-router",
            format!("docker.io/cloudnativelabs/kube-router:v{v}"),
            json!([]),
            json!([
                "--run-router=true",
                "--run-firewall=true",
                "--run-service-proxy=true"
            ]),
        ),
        Plane::OvnKubernetes | Plane::KubeProxy => (
            "ovnkube-node",
            "ovnkube-controller",
            format!("ghcr.io/ovn-kubernetes/ovn-kubernetes/ovn-kube-ubuntu:v{v}"),
            json!([]),
            json!([]),
        ),
    }
}

fn daemon_set(p: &PlaneProfile, nodes: &[String]) -> Value {
    let (name, container, image, env, args) = shape(p);
    let labels = json!({"k8s-app": name});
    let simulated = json!({SIMULATED_ANNOTATION: "true"});
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels, "annotations": simulated},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels, "annotations": simulated},
                "spec": {
                    "containers": [{"name": container, "image": image, "env": env, "args": args}],
                    "hostNetwork": true,
                    "tolerations": [{"operator": "Exists"}],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": nodes}]}]}}},
                },
            },
        },
    })
}

/// `cilium-config` as the Helm chart writes the keys detection reads.
fn cilium_config(p: &PlaneProfile, rv: u64, now: Millis) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cilium-config",
            "namespace": NAMESPACE,
            "uid": "00000000-0000-4000-8000-c111c0f16a01",
            "resourceVersion": rv.to_string(),
            "creationTimestamp": rfc3339(now),
            "annotations": {SIMULATED_ANNOTATION: "true"},
        },
        "data": {
            "# SIMULATED": "Cilium's configuration in a locality simulated cluster",
            "kube-proxy-replacement": "true",
            "enable-service-topology": p.service_topology.to_string(),
        },
    })
}

/// Publishes each known data plane's DaemonSet (and Cilium's ConfigMap), then runs the engine
/// until their pods are scheduled. Objects that exist already are left as they are.
pub(crate) fn publish(sim: &mut Sim) {
    let planes = planes(&sim.engine);
    if planes.is_empty() {
        return;
    }
    let Some(r) = resources::find("apps", "v1", "daemonsets") else {
        return;
    };
    for (profile, nodes) in planes.values() {
        let (name, ..) = shape(profile);
        let key = ObjectKey::new(Kind::DaemonSet, NAMESPACE, name);
        if sim.engine.get(&key).is_some() {
            continue;
        }
        let Ok(value) = decode::prepare_value(r, NAMESPACE, daemon_set(profile, nodes), "") else {
            continue;
        };
        let Ok(object) = decode::to_object(r, &value) else {
            continue;
        };
        if sim.engine.create(object).is_err() {
            continue;
        }
        if let Some(uid) = sim.engine.store().get(&key).map(|s| s.uid.clone()) {
            sim.raw.insert(uid, value);
        }
        if profile.plane == Plane::Cilium {
            let rv = sim.engine.store().resource_version();
            sim.config_maps.push(cilium_config(profile, rv, sim.engine.now()));
        }
    }
    let deadline = sim.engine.now() + SCHEDULED_WITHIN_MS;
    while !scheduled(&sim.engine, &planes) && sim.engine.now() < deadline {
        sim.engine.run_for(100);
    }
}

/// True when every node with a data-plane profile runs a pod of its DaemonSet.
fn scheduled(engine: &Engine, planes: &BTreeMap<Plane, (PlaneProfile, Vec<String>)>) -> bool {
    planes.values().all(|(profile, nodes)| {
        let (name, ..) = shape(profile);
        nodes.iter().all(|node| {
            engine
                .store()
                .list_namespace(Kind::Pod, NAMESPACE)
                .filter_map(|(_, s)| s.object.as_pod())
                .any(|p| {
                    p.pod.spec.node_name == *node
                        && p.pod
                            .meta
                            .owner_references
                            .iter()
                            .any(|o| o.kind == "DaemonSet" && o.name == name)
                })
        })
    })
}
