//! Small constructors for simulated objects (topologies, tests, what-if scenarios).

use std::net::IpAddr;

use locality_model::objects::{
    ContainerPort, LABEL_CONTROL_PLANE, LABEL_OS, LABEL_ZONE, LabelSelector, Labels, Namespace, Node,
    NodeSelectorTerm, ObjectMeta, Pod, PodPhase, PodSpec, Protocol, SelectorRequirement, Service,
    ServicePort, ServiceType, Taint, TargetPort, TrafficPolicy, Workload, WorkloadKind,
};

use crate::objects::{Object, PodBehaviour, ProbeHandler, ReadinessProbe, SimPod, SimWorkload};

/// Labels from pairs.
pub fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A Ready Linux node in `zone` with `cpu_millis` allocatable and one InternalIP.
pub fn node(name: &str, zone: Option<&str>, cpu_millis: u64, internal_ip: IpAddr) -> Node {
    let mut l = labels(&[(LABEL_OS, "linux"), ("kubernetes.io/hostname", name)]);
    if let Some(z) = zone {
        l.insert(LABEL_ZONE.into(), z.into());
    }
    Node {
        meta: ObjectMeta {
            name: name.into(),
            labels: l,
            ..ObjectMeta::default()
        },
        ready: Some(true),
        allocatable_cpu_millis: Some(cpu_millis),
        allocatable_pods: None,
        taints: Vec::new(),
        unschedulable: false,
        internal_ips: vec![internal_ip],
        kubelet_version: Some("v1.35.0".into()),
    }
}

/// Marks a node as control plane (role label and `NoSchedule` taint).
pub fn control_plane(mut n: Node) -> Node {
    n.meta.labels.insert(LABEL_CONTROL_PLANE.into(), String::new());
    n.taints.push(Taint {
        key: LABEL_CONTROL_PLANE.into(),
        value: String::new(),
        effect: "NoSchedule".into(),
    });
    n
}

/// A namespace object.
pub fn namespace(name: &str) -> Object {
    Object::Namespace(Namespace {
        meta: ObjectMeta {
            name: name.into(),
            ..ObjectMeta::default()
        },
    })
}

/// A TCP container port.
pub fn container_port(name: &str, port: u16) -> ContainerPort {
    ContainerPort {
        name: name.into(),
        container_port: port,
        protocol: Protocol::TCP,
        host_port: None,
    }
}

/// Required node affinity on `matchFields: metadata.name In [node]` (how `verify` pins pods).
pub fn pin_to_node(spec: &mut PodSpec, node: &str) {
    spec.required_node_affinity = vec![NodeSelectorTerm {
        match_expressions: Vec::new(),
        match_fields: vec![SelectorRequirement {
            key: "metadata.name".into(),
            operator: "In".into(),
            values: vec![node.into()],
        }],
    }];
}

/// agnhost `netexec` behaviour: listens, tcpSocket readiness on `port`.
pub fn netexec_behaviour(port: u16) -> PodBehaviour {
    PodBehaviour {
        readiness: Some(ReadinessProbe {
            handler: ProbeHandler::TcpSocket { port },
            initial_delay_seconds: 1,
            period_seconds: 1,
            failure_threshold: 1,
        }),
        ..PodBehaviour::default()
    }
}

/// A pod (unscheduled unless pinned) with labels, ports and behaviour.
pub fn pod(
    ns: &str,
    name: &str,
    pod_labels: Labels,
    ports: Vec<ContainerPort>,
    pinned_node: Option<&str>,
    behaviour: PodBehaviour,
) -> Object {
    let mut spec = PodSpec {
        ports,
        ..PodSpec::default()
    };
    if let Some(n) = pinned_node {
        pin_to_node(&mut spec, n);
    }
    Object::Pod(SimPod {
        pod: Pod {
            meta: ObjectMeta {
                name: name.into(),
                namespace: ns.into(),
                labels: pod_labels,
                ..ObjectMeta::default()
            },
            spec,
            phase: PodPhase::Pending,
            ready: false,
            pod_ips: Vec::new(),
        },
        behaviour,
        restart_count: 0,
    })
}

/// A client pod (agnhost `pause`-like: listens on nothing) pinned to `node`.
pub fn client_pod(ns: &str, name: &str, node: &str) -> Object {
    pod(
        ns,
        name,
        labels(&[("app", "client")]),
        Vec::new(),
        Some(node),
        PodBehaviour {
            listens: false,
            ..PodBehaviour::default()
        },
    )
}

/// A ClusterIP Service with one TCP port (`port` → `target`) selecting `selector`.
pub fn service(ns: &str, name: &str, selector: Labels, port: u16, target: TargetPort) -> Service {
    Service {
        meta: ObjectMeta {
            name: name.into(),
            namespace: ns.into(),
            ..ObjectMeta::default()
        },
        type_: ServiceType::ClusterIP,
        selector: Some(selector),
        ports: vec![ServicePort {
            name: "http".into(),
            protocol: Protocol::TCP,
            port,
            target_port: target,
            node_port: 0,
        }],
        ..Service::default()
    }
}

/// Sets `internalTrafficPolicy: Local`.
pub fn itp_local(mut s: Service) -> Service {
    s.internal_traffic_policy = Some(TrafficPolicy::Local);
    s
}

/// A workload (Deployment with `replicas`, or DaemonSet when `replicas` is `None`).
pub fn workload(
    kind: WorkloadKind,
    ns: &str,
    name: &str,
    pod_labels: Labels,
    template: PodSpec,
    replicas: Option<u32>,
    behaviour: PodBehaviour,
) -> Object {
    Object::Workload(SimWorkload {
        workload: Workload {
            selector: LabelSelector {
                match_labels: pod_labels.clone(),
                match_expressions: Vec::new(),
            },
            template_labels: pod_labels,
            template,
            replicas,
            update_strategy: Some("RollingUpdate".into()),
            ..Workload::new(
                kind,
                ObjectMeta {
                    name: name.into(),
                    namespace: ns.into(),
                    ..ObjectMeta::default()
                },
            )
        },
        pod_behaviour: behaviour,
        template_annotations: Labels::new(),
        template_digest: 0,
        generation: 1,
    })
}

/// The acceptance playbook's fixture (docs/design.md §5.4 `B1`/`B2`/`C`) on a topology with node-a,
/// node-b and node-c: netexec backends `web-a` on node-a and `web-b` on node-b behind the
/// `internalTrafficPolicy: Local` Service `default/myservice` (port 80 → named port `http`,
/// 8080), and a client pod on every node. Used by `locality sim rules` on topologies that
/// describe nodes only.
pub fn playbook_fixture(engine: &mut crate::Engine) -> Result<(), crate::SimError> {
    const NS: &str = "default";
    for (name, node) in [("web-a", "node-a"), ("web-b", "node-b")] {
        engine.create(pod(
            NS,
            name,
            labels(&[("app", "web")]),
            vec![container_port("http", 8080)],
            Some(node),
            netexec_behaviour(8080),
        ))?;
    }
    let nodes: Vec<String> = engine.node_names().map(str::to_string).collect();
    for node in nodes {
        engine.create(client_pod(NS, &format!("client-{node}"), &node))?;
    }
    let svc = itp_local(service(
        NS,
        "myservice",
        labels(&[("app", "web")]),
        80,
        TargetPort::Name("http".into()),
    ));
    engine.create(Object::Service(svc))?;
    Ok(())
}

/// A telemetry agent: the DaemonSet `NS/agent` (port `otlp-grpc` 4317, tcpSocket readiness,
/// RollingUpdate `maxSurge: 0` and the given `maxUnavailable`) and the
/// `internalTrafficPolicy: Local` Service `NS/agent` in front of it. Used by the `telemetry`
/// topology and the simulated-cluster benchmarks.
pub fn telemetry_agent(ns: &str, max_unavailable: &str) -> (Object, Service) {
    let agent_labels = labels(&[("app", "agent")]);
    let behaviour = PodBehaviour {
        readiness: Some(ReadinessProbe {
            handler: ProbeHandler::TcpSocket { port: 4317 },
            initial_delay_seconds: 2,
            period_seconds: 5,
            failure_threshold: 3,
        }),
        shutdown_delay_seconds: 0,
        ..PodBehaviour::default()
    };
    let spec = PodSpec {
        ports: vec![container_port("otlp-grpc", 4317)],
        ..PodSpec::default()
    };
    let mut agent = workload(
        WorkloadKind::DaemonSet,
        ns,
        "agent",
        agent_labels.clone(),
        spec,
        None,
        behaviour,
    );
    if let Object::Workload(w) = &mut agent {
        w.workload.max_surge = Some("0".into());
        w.workload.max_unavailable = Some(max_unavailable.into());
    }
    let mut svc = Service {
        ports: vec![ServicePort {
            name: "otlp-grpc".into(),
            protocol: Protocol::TCP,
            port: 4317,
            target_port: TargetPort::Name("otlp-grpc".into()),
            node_port: 0,
        }],
        ..service(ns, "agent", agent_labels, 4317, TargetPort::Number(4317))
    };
    svc.internal_traffic_policy = Some(TrafficPolicy::Local);
    (agent, svc)
}
