//! The manifests a run applies (recorded verbatim in the evidence, `02-fixture/`): the run's
//! namespace, one netexec client pod per role node, and per setup group its Service and
//! backends, all pinned with required node affinity on `matchFields: metadata.name` (as the
//! upstream e2e framework and the DaemonSet controller do), never with `spec.nodeName`.

use serde_json::{Value, json};

use crate::cases::{Role, Setup};

/// The agnhost image, pinned (its `netexec` is the backend and the client).
pub const AGNHOST_IMAGE: &str = "registry.k8s.io/e2e-test-images/agnhost:2.53";
/// The label every object of a run carries, valued with the run ID.
pub const RUN_LABEL: &str = "locality.dev/run";
/// The port netexec serves HTTP on, in backends and clients.
pub const HTTP_PORT: u16 = 8080;
/// The Service port.
pub const SERVICE_PORT: u16 = 80;

fn labels(run: &str, extra: &[(&str, &str)]) -> Value {
    let mut m = serde_json::Map::new();
    m.insert(RUN_LABEL.into(), json!(run));
    m.insert("app.kubernetes.io/managed-by".into(), json!("locality"));
    for (k, v) in extra {
        m.insert((*k).into(), json!(v));
    }
    Value::Object(m)
}

/// The run's namespace.
pub fn namespace(name: &str, run: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": labels(run, &[])}
    })
}

fn pinned(node: &str) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    ]}}})
}

fn netexec_pod(
    ns: &str,
    name: &str,
    run: &str,
    node: &str,
    app: &str,
    args: Vec<String>,
    ready_port: u16,
) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels(run, &[("app", app)])},
        "spec": {
            "affinity": pinned(node),
            "terminationGracePeriodSeconds": 5,
            "securityContext": {"runAsNonRoot": true, "runAsUser": 65534},
            "containers": [{
                "name": "netexec",
                "image": AGNHOST_IMAGE,
                "args": args,
                "ports": [{"name": "http", "containerPort": HTTP_PORT, "protocol": "TCP"}],
                "readinessProbe": {
                    "tcpSocket": {"port": ready_port},
                    "initialDelaySeconds": 1,
                    "periodSeconds": 2,
                    "failureThreshold": 3
                },
                "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}
            }]
        }
    })
}

/// A client on `role`'s node: netexec, whose `/dial` the probes call through `pods/proxy`.
pub fn client(ns: &str, run: &str, role: Role, node: &str) -> Value {
    netexec_pod(
        ns,
        &client_name(role),
        run,
        node,
        "locality-client",
        vec![
            "netexec".into(),
            format!("--http-port={HTTP_PORT}"),
            "--udp-port=-1".into(),
        ],
        HTTP_PORT,
    )
}

/// The client pod's name on `role`.
pub fn client_name(role: Role) -> String {
    format!("client-{}", role.slug())
}

/// A backend pod's name: `<group>-be-<role>` (`-unready-` for one that never becomes Ready).
pub fn backend_name(group: &str, role: Role, ready: bool) -> String {
    format!("{group}-{}-{}", if ready { "be" } else { "unready" }, role.slug())
}

/// A backend of `group` on `node`: netexec answering only `/hostname` (`--http-override`),
/// tcpSocket readiness on its port, or on a closed port when it must never become Ready.
pub fn backend(ns: &str, run: &str, group: &str, role: Role, node: &str, ready: bool) -> Value {
    netexec_pod(
        ns,
        &backend_name(group, role, ready),
        run,
        node,
        group,
        vec![
            "netexec".into(),
            format!("--http-port={HTTP_PORT}"),
            "--udp-port=-1".into(),
            "--http-override=/hostname".into(),
        ],
        if ready { HTTP_PORT } else { 9 },
    )
}

/// The Service of a setup group.
pub fn service(ns: &str, run: &str, setup: &Setup) -> Value {
    let selector = if setup.selects_nothing {
        format!("{}-matches-nothing", setup.group)
    } else {
        setup.group.to_string()
    };
    let mut spec = json!({
        "selector": {"app": selector},
        "ports": [{"name": "http", "protocol": "TCP", "port": SERVICE_PORT, "targetPort": "http"}],
        "internalTrafficPolicy": if setup.itp_local { "Local" } else { "Cluster" }
    });
    if let Some(td) = setup.traffic_distribution {
        spec["trafficDistribution"] = json!(td);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": setup.group, "namespace": ns, "labels": labels(run, &[])},
        "spec": spec
    })
}
