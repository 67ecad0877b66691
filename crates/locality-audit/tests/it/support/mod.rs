//! Builders for audit tests: small clusters in code.
#![allow(dead_code, missing_docs)]

use locality_audit::{AuditOptions, AuditReport, Finding, RuleId, audit};
use locality_model::matrix::{DataPlane, Matrix, MatrixConfig};
use locality_model::objects::*;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
pub use locality_testkit::objects::{labels, meta, node, nodes, taint};

/// A ready, running pod labelled `app=<app>` on `node` with IP `ip`.
pub fn pod(ns: &str, name: &str, app: &str, node: &str, ip: &str) -> Pod {
    let mut m = meta(ns, name);
    m.labels.insert("app".into(), app.into());
    Pod {
        meta: m,
        spec: PodSpec {
            node_name: node.into(),
            ..Default::default()
        },
        phase: PodPhase::Running,
        ready: true,
        pod_ips: vec![ip.parse().unwrap()],
    }
}

/// One client pod (`app=client`) on each of the given nodes, IPs 10.99.x.y.
pub fn clients(nodes: &[Node]) -> Vec<Pod> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            pod(
                "clients",
                &format!("client-{}", i + 1),
                "client",
                &n.meta.name,
                &format!("10.99.{}.{}", i / 250, i % 250 + 1),
            )
        })
        .collect()
}

pub fn port(name: &str, port: u16, target: u16) -> ServicePort {
    ServicePort {
        name: name.into(),
        protocol: Protocol::TCP,
        port,
        target_port: TargetPort::Number(target),
        node_port: 0,
    }
}

/// A ClusterIP Service selecting `app=<app>`, port 80 → 8080.
pub fn service(ns: &str, name: &str, app: &str) -> Service {
    Service {
        meta: meta(ns, name),
        type_: ServiceType::ClusterIP,
        selector: Some(labels(&[("app", app)])),
        ports: vec![port("http", 80, 8080)],
        cluster_ips: vec!["10.96.0.10".parse().unwrap()],
        ..Default::default()
    }
}

pub fn itp_local(mut s: Service) -> Service {
    s.internal_traffic_policy = Some(TrafficPolicy::Local);
    s
}

pub fn workload(kind: WorkloadKind, ns: &str, name: &str, app: &str, replicas: Option<u32>) -> Workload {
    Workload {
        selector: LabelSelector {
            match_labels: labels(&[("app", app)]),
            match_expressions: vec![],
        },
        template_labels: labels(&[("app", app)]),
        template: PodSpec {
            ports: vec![ContainerPort {
                name: "http".into(),
                container_port: 8080,
                protocol: Protocol::TCP,
                host_port: None,
            }],
            ..Default::default()
        },
        replicas,
        ..Workload::new(kind, meta(ns, name))
    }
}

pub fn daemonset(ns: &str, name: &str, app: &str) -> Workload {
    workload(WorkloadKind::DaemonSet, ns, name, app, None)
}

pub fn deployment(ns: &str, name: &str, app: &str, replicas: u32) -> Workload {
    workload(WorkloadKind::Deployment, ns, name, app, Some(replicas))
}

/// A backend pod `app=<app>` on each named node, IPs 10.1.x.y.
pub fn backends(ns: &str, app: &str, on: &[&str]) -> Vec<Pod> {
    on.iter()
        .enumerate()
        .map(|(i, n)| {
            pod(
                ns,
                &format!("{app}-{}", i + 1),
                app,
                n,
                &format!("10.1.{}.{}", i / 250, i % 250 + 1),
            )
        })
        .collect()
}

pub fn config(mode: ProxyMode) -> MatrixConfig {
    MatrixConfig {
        data_plane: DataPlane::KubeProxy(Some(mode)),
        ..MatrixConfig::default()
    }
}

pub fn versions(kube: (u16, u16), proxy: (u16, u16)) -> MatrixConfig {
    MatrixConfig {
        kube_version: KubeVersion::new(kube.0, kube.1),
        kube_proxy_version: KubeVersion::new(proxy.0, proxy.1),
        ..config(ProxyMode::Iptables)
    }
}

pub fn run_with(state: &ClusterState, cfg: MatrixConfig, opts: &AuditOptions) -> AuditReport {
    let m = Matrix::new(state, cfg);
    audit(state, &m, opts)
}

pub fn run(state: &ClusterState) -> AuditReport {
    run_with(state, config(ProxyMode::Iptables), &AuditOptions::default())
}

pub fn fired(r: &AuditReport, rule: RuleId) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.rule == rule).collect()
}

pub fn one(r: &AuditReport, rule: RuleId) -> &Finding {
    let f = fired(r, rule);
    assert_eq!(
        f.len(),
        1,
        "expected one {rule} finding, got {f:#?}\nall: {:#?}",
        r.findings
    );
    f[0]
}

pub fn none(r: &AuditReport, rule: RuleId) {
    let f = fired(r, rule);
    assert!(f.is_empty(), "expected no {rule} finding, got {f:#?}");
}

/// A telemetry-like cluster: `n` nodes over three zones with one client pod each, an agent
/// DaemonSet behind an ITP Local Service running on the nodes in `agent_on`.
pub fn agent_cluster(n: usize, agent_on: &[usize]) -> ClusterState {
    let ns = nodes(n, &["zone-a", "zone-b", "zone-c"]);
    let mut pods = clients(&ns);
    let names: Vec<String> = agent_on.iter().map(|i| format!("node-{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    pods.extend(backends("telemetry", "agent", &refs));
    ClusterState {
        nodes: ns,
        pods,
        services: vec![itp_local(service("telemetry", "agent", "agent"))],
        workloads: vec![daemonset("telemetry", "agent", "agent")],
        ..Default::default()
    }
}
