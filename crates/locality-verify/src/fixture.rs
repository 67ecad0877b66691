//! The manifests a run applies (recorded verbatim in the evidence, `02-fixture/`): the run's
//! namespace, one netexec client pod per role node, and per setup group its Service and
//! backends, all pinned with required node affinity on `matchFields: metadata.name` (as the
//! upstream e2e framework and the DaemonSet controller do), never with `spec.nodeName`.

use serde_json::{Value, json};

use crate::cases::{Role, Setup, TargetPort};

/// The agnhost image, pinned (its `netexec` is the backend and the client).
pub const AGNHOST_IMAGE: &str = "registry.k8s.io/e2e-test-images/agnhost:2.53";
/// The images a run's pods use: the pinned defaults, or a registry's mirror of them
/// (`--image`, `--curl-image`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Images {
    /// agnhost (netexec: every backend and client).
    pub agnhost: String,
    /// curl (the one-shot kube-proxy readers and the rollout cases' probe loops).
    pub curl: String,
}

impl Default for Images {
    fn default() -> Self {
        Images {
            agnhost: AGNHOST_IMAGE.into(),
            curl: CURL_IMAGE.into(),
        }
    }
}

/// `m` with every container image of the pinned defaults replaced by `images` (a Pod's
/// containers, or a DaemonSet's pod template's).
pub fn with_images(m: &Value, images: &Images) -> Value {
    let mut m = m.clone();
    let spec = m.get_mut("spec");
    let pod_spec = match spec {
        Some(s) if s.get("template").is_some() => s.get_mut("template").and_then(|t| t.get_mut("spec")),
        s => s,
    };
    let containers = pod_spec
        .and_then(|s| s.get_mut("containers"))
        .and_then(Value::as_array_mut);
    for c in containers.into_iter().flatten() {
        let image = match c.get("image").and_then(Value::as_str) {
            Some(AGNHOST_IMAGE) => &images.agnhost,
            Some(CURL_IMAGE) => &images.curl,
            _ => continue,
        };
        c["image"] = json!(image);
    }
    m
}

/// The label every object of a run carries, valued with the run ID.
pub const RUN_LABEL: &str = "locality.dev/run";
/// The port netexec serves HTTP on, in backends and pod clients.
pub const HTTP_PORT: u16 = 8080;
/// The port a UDP case's backends serve netexec's UDP server on (`--udp-port`).
pub const UDP_PORT: u16 = 8081;
/// The port a hostNetwork client's netexec serves HTTP on: it shares the node's network
/// namespace, so it must not clash with the node's own listeners (on a real cluster the port
/// must be free on the node, else the client never becomes Ready and its cases are
/// NOT_EXECUTED).
pub const HOST_HTTP_PORT: u16 = 18080;
/// The Service port.
pub const SERVICE_PORT: u16 = 80;
/// `G2`'s numeric `targetPort`: no container of the fixture listens on it.
pub const UNLISTENED_PORT: u16 = 8090;
/// `G3`'s named `targetPort`: no container of the fixture declares a port of that name.
pub const UNDECLARED_PORT_NAME: &str = "undeclared";
/// `H5`'s dialled port: the Service port and the container port of this name, which the
/// backends of [`Setup::port_missing_on`] do not declare (the others declare it on
/// [`HTTP_PORT`], beside `http`).
pub const ALT_PORT_NAME: &str = "alt";
/// The Pod Security label a namespace gets when a hostNetwork client must run in it.
pub const POD_SECURITY_ENFORCE: &str = "pod-security.kubernetes.io/enforce";

fn labels(run: &str, extra: &[(&str, &str)]) -> Value {
    let mut m = serde_json::Map::new();
    m.insert(RUN_LABEL.into(), json!(run));
    m.insert("app.kubernetes.io/managed-by".into(), json!("locality"));
    for (k, v) in extra {
        m.insert((*k).into(), json!(v));
    }
    Value::Object(m)
}

/// The run's namespace; `privileged` (Pod Security `enforce: privileged`) only when a
/// hostNetwork client must run in it.
pub fn namespace(name: &str, run: &str, privileged: bool) -> Value {
    let extra: &[(&str, &str)] = if privileged {
        &[(POD_SECURITY_ENFORCE, "privileged")]
    } else {
        &[]
    };
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": labels(run, extra)}
    })
}

fn pinned(node: &str) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    ]}}})
}

/// How a netexec container runs.
struct Netexec {
    http_port: u16,
    udp_port: Option<u16>,
    override_hostname: bool,
    /// The port the tcpSocket readiness probe checks.
    ready_port: u16,
    host_network: bool,
    /// Also declares the HTTP port under the name [`ALT_PORT_NAME`].
    alt_port: bool,
}

/// A netexec pod spec (no placement): non-root, restricted container security context,
/// tcpSocket readiness.
fn netexec_spec(n: &Netexec) -> Value {
    let mut args = vec![
        "netexec".to_string(),
        format!("--http-port={}", n.http_port),
        format!("--udp-port={}", n.udp_port.map_or(-1, i32::from)),
    ];
    if n.override_hostname {
        args.push("--http-override=/hostname".into());
    }
    let mut ports = vec![json!({"name": "http", "containerPort": n.http_port, "protocol": "TCP"})];
    if n.alt_port {
        ports.push(json!({"name": ALT_PORT_NAME, "containerPort": n.http_port, "protocol": "TCP"}));
    }
    if let Some(udp) = n.udp_port {
        ports.push(json!({"name": "udp", "containerPort": udp, "protocol": "UDP"}));
    }
    let mut spec = json!({
        "terminationGracePeriodSeconds": 5,
        "securityContext": {"runAsNonRoot": true, "runAsUser": 65534},
        "containers": [{
            "name": "netexec",
            "image": AGNHOST_IMAGE,
            "args": args,
            "ports": ports,
            "readinessProbe": {
                "tcpSocket": {"port": n.ready_port},
                "initialDelaySeconds": 1,
                "periodSeconds": 2,
                "failureThreshold": 3
            },
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}
        }]
    });
    if n.host_network {
        spec["hostNetwork"] = json!(true);
    }
    spec
}

fn netexec_pod(ns: &str, name: &str, run: &str, node: &str, app: &str, n: &Netexec) -> Value {
    let mut spec = netexec_spec(n);
    spec["affinity"] = pinned(node);
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels(run, &[("app", app)])},
        "spec": spec
    })
}

const CLIENT: Netexec = Netexec {
    http_port: HTTP_PORT,
    udp_port: None,
    override_hostname: false,
    ready_port: HTTP_PORT,
    host_network: false,
    alt_port: false,
};

/// A client on `role`'s node: netexec, whose `/dial` the probes call through `pods/proxy`.
pub fn client(ns: &str, run: &str, role: Role, node: &str) -> Value {
    client_on(ns, run, &client_name(role), node)
}

/// A pod client named `name` on `node` (`P`'s clients on sampled nodes without a role).
pub fn client_on(ns: &str, run: &str, name: &str, node: &str) -> Value {
    netexec_pod(ns, name, run, node, "locality-client", &CLIENT)
}

/// The client pod's name on `role`.
pub fn client_name(role: Role) -> String {
    format!("client-{}", role.slug())
}

/// The name of `P`'s client on the `i`-th sampled node that has no role client.
pub fn sampled_client_name(i: usize) -> String {
    format!("client-s{i}")
}

/// A hostNetwork client on `role`'s node: netexec on [`HOST_HTTP_PORT`] in the node's network
/// namespace, so its `/dial` connects from the node itself (source `host`). Its hostname is
/// the node's name, so the responder is identified by the backend's answer alone.
pub fn host_client(ns: &str, run: &str, role: Role, node: &str) -> Value {
    netexec_pod(
        ns,
        &host_client_name(role),
        run,
        node,
        "locality-host-client",
        &Netexec {
            http_port: HOST_HTTP_PORT,
            ready_port: HOST_HTTP_PORT,
            host_network: true,
            ..CLIENT
        },
    )
}

/// The hostNetwork client pod's name on `role`.
pub fn host_client_name(role: Role) -> String {
    format!("host-client-{}", role.slug())
}

/// A backend pod's name: `<group>-be-<role>` (`-unready-` for one that never becomes Ready).
pub fn backend_name(group: &str, role: Role, ready: bool) -> String {
    format!("{group}-{}-{}", if ready { "be" } else { "unready" }, role.slug())
}

/// How a backend of `setup` on `role` (`None`: a DaemonSet's) runs.
fn backend_netexec(setup: &Setup, ready: bool, role: Option<Role>) -> Netexec {
    Netexec {
        http_port: HTTP_PORT,
        udp_port: setup.udp.then_some(UDP_PORT),
        // `X2s` asks the backend for the client address it saw (`/clientip`): its backends
        // answer every path, the others only ever their hostname.
        override_hostname: !setup.etp_local,
        ready_port: if ready { HTTP_PORT } else { 9 },
        host_network: false,
        alt_port: !setup.port_missing_on.is_empty()
            && role.is_some_and(|r| !setup.port_missing_on.contains(&r)),
    }
}

/// A backend of `setup`'s group on `node`: netexec answering only `/hostname`
/// (`--http-override`; UDP `hostname` when the setup is UDP), tcpSocket readiness on its
/// HTTP port, or on a closed port when it must never become Ready.
pub fn backend(ns: &str, run: &str, setup: &Setup, role: Role, node: &str, ready: bool) -> Value {
    let mut pod = netexec_pod(
        ns,
        &backend_name(setup.group, role, ready),
        run,
        node,
        setup.group,
        &backend_netexec(setup, ready, Some(role)),
    );
    if setup.terminating {
        shutdown_delay(&mut pod["spec"]);
    }
    pod
}

/// `Pt`, `Xt`: the pod serves [`TERMINATING_DELAY_S`] after its deletion (agnhost
/// `--delay-shutdown`), within a grace period above it.
fn shutdown_delay(spec: &mut Value) {
    spec["terminationGracePeriodSeconds"] = json!(TERMINATING_DELAY_S + 30);
    if let Some(args) = spec["containers"][0]["args"].as_array_mut() {
        args.push(json!(format!("--delay-shutdown={TERMINATING_DELAY_S}")));
    }
}

/// `Pt`'s and `Xt`'s shutdown delay (s of the cluster's clock): the window in which every endpoint is
/// serving-terminating, long enough for the lag check and a probe from every node; the tool
/// force-deletes the pods once probed.
pub const TERMINATING_DELAY_S: u64 = 3600;

/// A DaemonSet backend of `setup`'s group: the DaemonSet controller places one pod on every
/// Linux node that fits (untainted; the tool adds no toleration) among `nodes` (the nodes the
/// run probes: a node it does not probe, NotReady say, gets no pod to wait for), pinning
/// each with the same `matchFields: metadata.name` affinity the tool uses.
pub fn daemonset(ns: &str, run: &str, setup: &Setup, nodes: &[String]) -> Value {
    let mut spec = netexec_spec(&backend_netexec(setup, true, None));
    spec["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
    spec["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": nodes}]}]
    }}});
    if setup.terminating {
        shutdown_delay(&mut spec);
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": setup.group, "namespace": ns, "labels": labels(run, &[])},
        "spec": {
            "selector": {"matchLabels": {"app": setup.group}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": labels(run, &[("app", setup.group)])},
                "spec": spec
            }
        }
    })
}

/// The Service of a setup group.
pub fn service(ns: &str, run: &str, setup: &Setup) -> Value {
    let selector = if setup.selects_nothing {
        format!("{}-matches-nothing", setup.group)
    } else {
        setup.group.to_string()
    };
    let (name, protocol) = if setup.udp {
        ("udp", "UDP")
    } else {
        ("http", "TCP")
    };
    let target_port = match setup.target_port {
        TargetPort::Served => json!(name),
        TargetPort::Unlistened => json!(UNLISTENED_PORT),
        TargetPort::Undeclared => json!(UNDECLARED_PORT_NAME),
    };
    let port = json!({"name": name, "protocol": protocol, "port": SERVICE_PORT, "targetPort": target_port});
    // `H5`: the dialled port `alt` first (so it is the Service's first port), then `http`.
    let ports = if setup.port_missing_on.is_empty() {
        json!([port])
    } else {
        json!([
            {"name": ALT_PORT_NAME, "protocol": "TCP", "port": SERVICE_PORT, "targetPort": ALT_PORT_NAME},
            {"name": name, "protocol": protocol, "port": SERVICE_PORT + 1, "targetPort": target_port}
        ])
    };
    let mut spec = json!({
        "selector": {"app": selector},
        "ports": ports,
        "internalTrafficPolicy": if setup.itp_local { "Local" } else { "Cluster" }
    });
    if setup.node_port || setup.load_balancer {
        spec["type"] = json!(if setup.load_balancer {
            "LoadBalancer"
        } else {
            "NodePort"
        });
        spec["externalTrafficPolicy"] = json!(if setup.etp_local { "Local" } else { "Cluster" });
    }
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

/// The curl image of the one-shot metrics readers, pinned (its entrypoint is `curl`).
pub const CURL_IMAGE: &str = "docker.io/curlimages/curl:8.11.1";
/// kube-proxy's metrics address on its node (`--metrics-bind-address`, default
/// `127.0.0.1:10249`).
pub const KUBE_PROXY_METRICS: &str = "127.0.0.1:10249";

/// A one-shot hostNetwork curl pod on `node` reading `http://127.0.0.1:10249{path}` (kube-proxy's
/// metrics endpoint, docs/design.md §5.2): curl's output is the pod's log, read through `pods/log`; it
/// ends `Succeeded` (exit 0) or `Failed` (curl's exit code). Needs the `privileged` Pod
/// Security level (hostNetwork).
pub fn curl_pod(ns: &str, run: &str, name: &str, node: &str, path: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels(run, &[("app", "locality-metrics")])},
        "spec": {
            "hostNetwork": true,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "affinity": pinned(node),
            "securityContext": {"runAsNonRoot": true, "runAsUser": 65534},
            "containers": [{
                "name": "curl",
                "image": CURL_IMAGE,
                "args": ["-sS", "--max-time", "5", format!("http://{KUBE_PROXY_METRICS}{path}")],
                "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}
            }]
        }
    })
}

/// The name of the Service port a setup's cases dial (`udp`, `http`, or `H5`'s `alt`).
pub fn service_port_name(setup: &Setup) -> &'static str {
    if !setup.port_missing_on.is_empty() {
        ALT_PORT_NAME
    } else if setup.udp {
        "udp"
    } else {
        "http"
    }
}

/// The API path of the Pods of namespace `ns`.
pub(crate) fn pods_path(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/pods")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::case;

    fn setup_of(id: &str) -> Setup {
        case(id).unwrap().setup
    }

    #[test]
    fn udp_backends_serve_udp_and_the_service_port_is_udp() {
        let s = setup_of("U1");
        let b = backend("ns", "r", &s, Role::N1, "node-a", true);
        let args = b["spec"]["containers"][0]["args"].as_array().unwrap();
        assert!(args.contains(&json!("--udp-port=8081")), "{args:?}");
        assert_eq!(b["spec"]["containers"][0]["ports"][1]["protocol"], "UDP");
        let svc = service("ns", "r", &s);
        assert_eq!(svc["spec"]["ports"][0]["protocol"], "UDP");
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], "udp");
        let tcp = backend("ns", "r", &setup_of("B1"), Role::N1, "node-a", true);
        assert!(
            tcp["spec"]["containers"][0]["args"]
                .as_array()
                .unwrap()
                .contains(&json!("--udp-port=-1"))
        );
    }

    #[test]
    fn host_clients_use_the_node_network_on_their_own_port() {
        let c = host_client("ns", "r", Role::N3, "node-c");
        assert_eq!(c["spec"]["hostNetwork"], true);
        assert_eq!(c["metadata"]["name"], "host-client-n3");
        assert_eq!(
            c["spec"]["containers"][0]["ports"][0]["containerPort"],
            HOST_HTTP_PORT
        );
        assert_eq!(
            c["spec"]["containers"][0]["readinessProbe"]["tcpSocket"]["port"],
            HOST_HTTP_PORT
        );
        assert_eq!(
            c["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
                [0]["matchFields"][0]["values"][0],
            "node-c"
        );
        assert_eq!(
            namespace("n", "r", true)["metadata"]["labels"][POD_SECURITY_ENFORCE],
            "privileged"
        );
        assert!(namespace("n", "r", false)["metadata"]["labels"][POD_SECURITY_ENFORCE].is_null());
    }

    #[test]
    fn daemonset_and_nodeport_manifests() {
        let ds = daemonset("ns", "r", &setup_of("P"), &["node-a".to_string()]);
        assert_eq!(ds["kind"], "DaemonSet");
        // The controller pins each pod; the template names the nodes the run probes.
        assert_eq!(
            ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchFields"][0]["values"],
            json!(["node-a"])
        );
        assert_eq!(ds["spec"]["template"]["metadata"]["labels"]["app"], "p");
        let svc = service("ns", "r", &setup_of("X1"));
        assert_eq!(svc["spec"]["type"], "NodePort");
        assert_eq!(svc["spec"]["internalTrafficPolicy"], "Local");
        assert_eq!(svc["spec"]["externalTrafficPolicy"], "Cluster");
        let x2 = service("ns", "r", &setup_of("X2"));
        assert_eq!(x2["spec"]["externalTrafficPolicy"], "Local");
        assert_eq!(x2["spec"]["internalTrafficPolicy"], "Cluster");
        let x4 = service("ns", "r", &setup_of("X4"));
        assert_eq!(x4["spec"]["type"], "LoadBalancer");
        assert_eq!(x4["spec"]["externalTrafficPolicy"], "Local");
        let be = backend("ns", "r", &setup_of("X2s"), Role::N1, "node-a", true);
        let args = be["spec"]["containers"][0]["args"].as_array().unwrap();
        assert!(!args.contains(&json!("--http-override=/hostname")), "{args:?}");
    }

    #[test]
    fn mirrored_images_replace_the_pinned_ones_in_pods_and_daemonsets() {
        let images = Images {
            agnhost: "mirror.example/agnhost:2.53".into(),
            curl: "mirror.example/curl:8".into(),
        };
        let pod = with_images(&client("ns", "r", Role::N1, "node-a"), &images);
        assert_eq!(
            pod["spec"]["containers"][0]["image"],
            "mirror.example/agnhost:2.53"
        );
        let ds = with_images(
            &daemonset("ns", "r", &setup_of("P"), &["node-a".to_string()]),
            &images,
        );
        assert_eq!(
            ds["spec"]["template"]["spec"]["containers"][0]["image"],
            "mirror.example/agnhost:2.53"
        );
        let curl = with_images(&curl_pod("ns", "r", "c", "node-a", "/metrics"), &images);
        assert_eq!(curl["spec"]["containers"][0]["image"], "mirror.example/curl:8");
        let svc = service("ns", "r", &setup_of("B1"));
        assert_eq!(with_images(&svc, &images), svc, "no containers, nothing changes");
        assert_eq!(with_images(&pod, &Images::default())["spec"], pod["spec"]);
    }

    /// `H5`: two Service ports, `alt` (dialled) first; N1's backend lacks `alt`, N2's
    /// declares it on the HTTP port.
    #[test]
    fn h5_backend_on_n1_lacks_the_dialled_port() {
        let s = setup_of("H5");
        let svc = service("ns", "r", &s);
        assert_eq!(svc["spec"]["ports"][0]["name"], ALT_PORT_NAME);
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], ALT_PORT_NAME);
        assert_eq!(svc["spec"]["ports"][0]["port"], SERVICE_PORT);
        assert_eq!(svc["spec"]["ports"][1]["targetPort"], "http");
        assert_eq!(service_port_name(&s), ALT_PORT_NAME);
        let names = |role, node| -> Vec<Value> {
            let b = backend("ns", "r", &s, role, node, true);
            b["spec"]["containers"][0]["ports"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].clone())
                .collect()
        };
        assert_eq!(names(Role::N1, "node-a"), [json!("http")]);
        assert_eq!(names(Role::N2, "node-b"), [json!("http"), json!(ALT_PORT_NAME)]);
        assert_eq!(service_port_name(&setup_of("B1")), "http");
    }

    #[test]
    fn target_ports_of_the_misconfiguration_cases() {
        assert_eq!(
            service("ns", "r", &setup_of("G2"))["spec"]["ports"][0]["targetPort"],
            json!(UNLISTENED_PORT)
        );
        assert_eq!(
            service("ns", "r", &setup_of("G3"))["spec"]["ports"][0]["targetPort"],
            json!(UNDECLARED_PORT_NAME)
        );
        assert_eq!(
            service("ns", "r", &setup_of("B1"))["spec"]["ports"][0]["targetPort"],
            json!("http")
        );
    }
}
