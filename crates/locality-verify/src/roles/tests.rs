//! Unit tests of the node roles and sampling.
use super::*;
use locality_model::objects::{LABEL_ZONE, ObjectMeta, Taint};

fn node(name: &str, zone: &str) -> Node {
    let mut meta = ObjectMeta {
        name: name.into(),
        ..ObjectMeta::default()
    };
    meta.labels.insert(LABEL_ZONE.into(), zone.into());
    Node {
        meta,
        ready: Some(true),
        ..Node::default()
    }
}

#[test]
fn four_nodes_gets_the_documented_map() {
    let nodes = vec![
        node("node-a", "zone-a"),
        node("node-b", "zone-b"),
        node("node-c", "zone-c"),
        node("node-d", "zone-a"),
    ];
    let r = pick(&nodes);
    assert_eq!(r.node(Role::N1), Some("node-a"));
    assert_eq!(r.node(Role::N1z), Some("node-d"));
    assert_eq!(r.node(Role::N2), Some("node-b"));
    assert_eq!(r.node(Role::N3), Some("node-c"));
}

#[test]
fn the_sample_covers_every_zone_and_prefers_role_nodes() {
    let none = BTreeMap::new();
    let mut nodes = vec![
        node("node-a", "zone-a"),
        node("node-b", "zone-b"),
        node("node-c", "zone-c"),
        node("node-d", "zone-a"),
    ];
    let roles = pick(&nodes);
    assert_eq!(
        sample(&nodes, &roles, Some(10), &none),
        ["node-a", "node-b", "node-c", "node-d"]
    );
    assert_eq!(sample(&nodes, &roles, None, &none).len(), 4);
    for i in 0..20 {
        nodes.push(node(&format!("node-x{i:02}"), "zone-x"));
    }
    nodes.push(node("node-y", "zone-y"));
    let roles = pick(&nodes);
    let s = sample(&nodes, &roles, Some(6), &none);
    assert_eq!(s.len(), 6, "{s:?}");
    for n in ["node-a", "node-b", "node-c", "node-d", "node-y"] {
        assert!(s.iter().any(|x| x == n), "{n} in {s:?}");
    }
    assert!(s.iter().any(|x| x.starts_with("node-x")), "zone-x covered: {s:?}");
    // Every zone even beyond the limit.
    assert_eq!(sample(&nodes, &roles, Some(1), &none).len(), 5);
    assert_eq!(sample(&nodes, &roles, None, &none).len(), 25);
}

#[test]
fn unusable_nodes_are_left_out_with_a_reason() {
    let mut tainted = node("node-b", "zone-b");
    tainted.taints.push(Taint {
        key: "dedicated".into(),
        value: "x".into(),
        effect: "NoSchedule".into(),
    });
    let mut not_ready = node("node-c", "zone-c");
    not_ready.ready = Some(false);
    let r = pick(&[
        node("node-a", "zone-a"),
        tainted,
        not_ready,
        node("node-e", "zone-e"),
    ]);
    assert_eq!(r.node(Role::N1), Some("node-a"));
    // Two usable nodes: the second is N3, the node without a backend.
    assert_eq!(r.node(Role::N2), None);
    assert_eq!(r.node(Role::N3), Some("node-e"));
    assert_eq!(r.node(Role::N1z), None);
    assert_eq!(r.excluded.len(), 2, "{:?}", r.excluded);
    assert_eq!(r.lacking(), None);
}

#[test]
fn two_nodes_of_one_zone_are_enough_and_one_is_not() {
    let r = pick(&[node("node-a", "zone-a"), node("node-b", "zone-a")]);
    assert_eq!(r.node(Role::N1), Some("node-a"));
    assert_eq!(r.node(Role::N3), Some("node-b"));
    assert_eq!(r.lacking(), None);
    let mut tainted = node("node-b", "zone-a");
    tainted.taints.push(Taint {
        key: "node-role.kubernetes.io/control-plane".into(),
        value: String::new(),
        effect: "NoSchedule".into(),
    });
    let r = pick(&[node("node-a", "zone-a"), tainted]);
    let why = r.lacking().unwrap();
    assert!(why.contains("1 usable (node-a)"), "{why}");
    assert!(why.contains("node-b: tainted"), "{why}");
}
/// A kube-system pod on `node`: `owner` (`KIND/NAME`), `labels`, containers `(name, image,
/// command, args)`.
fn pod(
    node: &str,
    owner: &str,
    labels: &[(&str, &str)],
    containers: &[(&str, &str, &[&str], &[&str])],
) -> Value {
    let (kind, name) = owner.split_once('/').unwrap_or(("", ""));
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
        .collect();
    let containers: Vec<Value> = containers
        .iter()
        .map(|(n, image, command, args)| serde_json::json!({"name": n, "image": image, "command": command, "args": args}))
        .collect();
    let mut p = serde_json::json!({
        "metadata": {"name": format!("p-{node}"), "namespace": "kube-system", "labels": labels},
        "spec": {"nodeName": node, "containers": containers},
        "status": {"phase": "Running"},
    });
    if !kind.is_empty() {
        p["metadata"]["ownerReferences"] =
            serde_json::json!([{"kind": kind, "name": name, "controller": true}]);
    }
    p
}

const KP: &[&str] = &[
    "/usr/local/bin/kube-proxy",
    "--config=/var/lib/kube-proxy/config.conf",
];

fn kubeadm(node: &str, tag: &str) -> Value {
    let image = format!("registry.k8s.io/kube-proxy:{tag}");
    pod(
        node,
        "DaemonSet/kube-proxy",
        &[("k8s-app", "kube-proxy")],
        &[("kube-proxy", image.as_str(), KP, &[])],
    )
}

#[test]
fn kube_proxies_are_grouped_by_owner_image_and_command() {
    let mut terminating = kubeadm("node-t", "v1.35.0");
    terminating["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z".into();
    let mut elsewhere = kubeadm("node-n", "v1.35.0");
    elsewhere["metadata"]["namespace"] = "default".into();
    let mut unscheduled = kubeadm("", "v1.35.0");
    unscheduled["spec"]["nodeName"] = Value::Null;
    let pods = vec![
        kubeadm("node-a", "v1.35.0"),
        kubeadm("node-b", "v1.35.0"),
        kubeadm("node-c", "v1.33.2"),
        // Another DaemonSet (a node pool in ipvs mode), found by its container's name.
        pod(
            "node-d",
            "DaemonSet/kube-proxy-ipvs",
            &[("k8s-app", "kube-proxy-ipvs")],
            &[(
                "kube-proxy",
                "registry.k8s.io/kube-proxy:v1.35.0",
                KP,
                &["--proxy-mode=ipvs"],
            )],
        ),
        // A static pod, found by its label: the same kind on every node that has one.
        pod(
            "node-e",
            "Node/node-e",
            &[("k8s-app", "kube-proxy")],
            &[("kube-proxy", "registry.k8s.io/kube-proxy:v1.35.0", KP, &[])],
        ),
        pod(
            "node-f",
            "Node/node-f",
            &[("k8s-app", "kube-proxy")],
            &[("kube-proxy", "registry.k8s.io/kube-proxy:v1.35.0", KP, &[])],
        ),
        // A sidecar first: the kube-proxy container is the one read.
        pod(
            "node-g",
            "DaemonSet/kube-proxy-custom",
            &[],
            &[
                ("log-shipper", "fluent-bit:3", &[], &[]),
                ("kube-proxy", "mirror.example/kube-proxy:v1.35.0", KP, &[]),
            ],
        ),
        // Not kube-proxy: another DaemonSet's pod, unlabelled.
        pod(
            "node-a",
            "DaemonSet/cilium",
            &[("k8s-app", "cilium")],
            &[("cilium-agent", "cilium:1.16", &[], &[])],
        ),
        terminating,
        elsewhere,
        unscheduled,
    ];
    let k = kube_proxies(&pods);
    assert_eq!(
        k.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "node-a", "node-b", "node-c", "node-d", "node-e", "node-f", "node-g"
        ]
    );
    let one = |n: &str| {
        let set = &k[n];
        assert_eq!(set.len(), 1, "{n}: {set:?}");
        set.iter().next().unwrap().clone()
    };
    assert_eq!(one("node-a"), one("node-b"));
    assert_eq!(one("node-a").owner, "DaemonSet/kube-proxy");
    assert_eq!(one("node-c").image, "registry.k8s.io/kube-proxy:v1.33.2");
    assert_ne!(one("node-a"), one("node-c"));
    assert_eq!(one("node-d").owner, "DaemonSet/kube-proxy-ipvs");
    assert_eq!(
        one("node-d").command.last().map(String::as_str),
        Some("--proxy-mode=ipvs")
    );
    assert_eq!(one("node-e"), one("node-f"));
    assert_eq!(one("node-e").owner, "static pod");
    assert_eq!(one("node-g").image, "mirror.example/kube-proxy:v1.35.0");
    // Two pods on one node (a surge during a rollout): both.
    let k = kube_proxies(&[kubeadm("node-a", "v1.34.0"), kubeadm("node-a", "v1.35.0")]);
    assert_eq!(k["node-a"].len(), 2);
}

#[test]
fn the_sample_keeps_every_distinct_kube_proxy_even_beyond_the_limit() {
    let mut nodes = vec![
        node("node-a", "zone-a"),
        node("node-b", "zone-b"),
        node("node-c", "zone-c"),
        node("node-d", "zone-a"),
    ];
    for i in 0..20 {
        nodes.push(node(&format!("node-x{i:02}"), "zone-x"));
    }
    let mut tainted = node("node-z", "zone-x");
    tainted.taints.push(Taint {
        key: "dedicated".into(),
        value: "x".into(),
        effect: "NoSchedule".into(),
    });
    nodes.push(tainted);
    let roles = pick(&nodes);
    let uniform: BTreeMap<String, BTreeSet<KubeProxy>> = kube_proxies(
        &nodes
            .iter()
            .map(|n| kubeadm(&n.meta.name, "v1.35.0"))
            .collect::<Vec<_>>(),
    );
    // One kind of kube-proxy: zones, roles, then names, as without any.
    let zones_only = sample(&nodes, &roles, Some(5), &BTreeMap::new());
    assert_eq!(sample(&nodes, &roles, Some(5), &uniform), zones_only);
    assert_eq!(zones_only, ["node-a", "node-b", "node-c", "node-d", "node-x00"]);

    // An older kube-proxy on node-x07, ipvs from another DaemonSet on node-x11, no
    // kube-proxy pod on node-x15, an unusable node's own version: each usable kind is
    // kept, even beyond the limit.
    let mut pods: Vec<Value> = nodes
        .iter()
        .filter(|n| !["node-x07", "node-x11", "node-x15", "node-z"].contains(&n.meta.name.as_str()))
        .map(|n| kubeadm(&n.meta.name, "v1.35.0"))
        .collect();
    pods.push(kubeadm("node-x07", "v1.33.0"));
    pods.push(pod(
        "node-x11",
        "DaemonSet/kube-proxy-ipvs",
        &[("k8s-app", "kube-proxy-ipvs")],
        &[("kube-proxy", "registry.k8s.io/kube-proxy:v1.35.0", KP, &[])],
    ));
    pods.push(kubeadm("node-z", "v1.31.0"));
    let mixed = kube_proxies(&pods);
    let s = sample(&nodes, &roles, Some(5), &mixed);
    assert_eq!(
        s,
        [
            "node-a", "node-b", "node-c", "node-x00", "node-x07", "node-x11", "node-x15"
        ],
        "zones (4), then the 3 other kinds: over the limit of 5"
    );
    let s = sample(&nodes, &roles, Some(1), &mixed);
    assert_eq!(s.len(), 7, "{s:?}");
    // Room left: role nodes, then names.
    let s = sample(&nodes, &roles, Some(9), &mixed);
    assert_eq!(
        s,
        [
            "node-a", "node-b", "node-c", "node-d", "node-x00", "node-x01", "node-x07", "node-x11",
            "node-x15"
        ]
    );
    // A kind already on a zone's node costs nothing more.
    pods.retain(|p| p["spec"]["nodeName"] != "node-b");
    pods.push(kubeadm("node-b", "v1.33.0"));
    let s = sample(&nodes, &roles, Some(5), &kube_proxies(&pods));
    assert!(!s.iter().any(|n| n == "node-x07"), "{s:?}");
    assert!(s.iter().any(|n| n == "node-b"), "{s:?}");
    // Every usable node without a limit.
    assert_eq!(sample(&nodes, &roles, None, &mixed).len(), 24);
}
