//! kube-proxy metrics of the simulated cluster: build info per node, pending endpoint changes and
//! the last sync.

use super::{NS, fixture};
use locality_sim::{Engine, Kind, Object, ObjectKey, SimConfig, Topology};
use std::net::IpAddr;

/// The value of an unlabelled sample in a Prometheus text exposition.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn metrics_build_info_follows_each_nodes_kube_proxy_version() {
    let mut e = fixture(1, &[]);
    e.set_proxy_version("node-b", locality_model::version::KubeVersion::new(1, 32));
    e.run_until(10_000);
    let b = e.metrics_text("node-b").unwrap().unwrap();
    assert!(
        b.contains(
            "\nkubernetes_build_info{build_date=\"2025-01-01T00:00:00Z\",compiler=\"gc\",\
             git_commit=\"0000000000000000000000000000000000000000\",git_tree_state=\"clean\",\
             git_version=\"v1.32.0\",go_version=\"go1.23.0\",major=\"1\",minor=\"32\",\
             platform=\"linux/amd64\"} 1\n"
        ),
        "{b}"
    );
    assert!(b.contains("# TYPE kubernetes_build_info gauge\n"), "{b}");
    // The other nodes run the cluster default (1.35).
    let a = e.metrics_text("node-a").unwrap().unwrap();
    assert!(
        a.contains("git_version=\"v1.35.0\",go_version=\"go1.25.0\",major=\"1\",minor=\"35\""),
        "{a}"
    );
    assert_eq!(a.matches("kubernetes_build_info{").count(), 1, "{a}");
    // A topology's kubeProxyVersion reaches the metric too.
    let t = Topology::from_yaml(
        "nodes:\n  - name: n1\n  - name: n2\n    kubeProxyVersion: \"1.30\"\n",
        "lab.yaml",
    )
    .unwrap();
    let mut e = Engine::from_topology(&t, SimConfig::default()).unwrap();
    e.run_until(5_000);
    let n2 = e.metrics_text("n2").unwrap().unwrap();
    assert!(
        n2.contains("git_version=\"v1.30.0\",go_version=\"go1.22.0\""),
        "{n2}"
    );
    // Families come in name order, each with its HELP and TYPE, as the Prometheus client
    // writes them.
    let families: Vec<&str> = n2
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    let mut sorted = families.clone();
    sorted.sort_unstable();
    assert_eq!(families, sorted);
    assert!(families.contains(&"kubernetes_build_info"));
    let histograms: Vec<&str> = n2
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" histogram"))
        .collect();
    for l in n2.lines().filter(|l| !l.starts_with('#')) {
        let name = l.split(['{', ' ']).next().unwrap();
        // A histogram's samples are its family's name with `_bucket`, `_sum` or `_count`.
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|f| histograms.contains(f)))
            .unwrap_or(name);
        assert!(families.contains(&family), "{l} has no TYPE line");
    }
}

/// A node with `stale-rules:5` keeps programming the old endpoints for the sync delay plus 5 s
/// after an EndpointSlice change: its last-sync timestamp stays before the change and its
/// pending endpoint changes above 0 all that time, while a conformant node catches up after
/// the sync delay alone; the metrics follow what each rule table actually holds.
#[test]
fn metrics_pending_endpoint_changes_and_last_sync_follow_the_rule_table() {
    const PENDING: &str = "kubeproxy_sync_proxy_rules_endpoint_changes_pending";
    const LAST: &str = "kubeproxy_sync_proxy_rules_last_timestamp_seconds";
    let mut e = fixture(1, &[("node-a", "stale-rules:5")]);
    let unix = |t: u64| locality_sim::time::unix_seconds(t);
    let web_b_ip = |e: &Engine| {
        e.get(&ObjectKey::new(Kind::Pod, NS, "web-b"))
            .unwrap()
            .as_pod()
            .unwrap()
            .pod
            .pod_ips[0]
    };
    let programs = |e: &Engine, node: &str, ip: IpAddr| {
        e.kube_proxy(node)
            .unwrap()
            .table()
            .entries()
            .any(|r| r.endpoints.iter().any(|ep| ep.ip == ip))
    };
    // Before its first sync a kube-proxy has its initial list pending: every labelled slice.
    e.run_until(500);
    let slices = e
        .store()
        .list(Kind::EndpointSlice)
        .filter(|(_, s)| {
            s.object
                .meta()
                .labels
                .contains_key(locality_model::objects::LABEL_SERVICE_NAME)
        })
        .count();
    assert!(slices >= 3, "{slices}");
    assert_eq!(e.endpoint_changes_pending("node-b"), Some(slices));
    assert_eq!(
        sample(&e.metrics_text("node-b").unwrap().unwrap(), LAST),
        Some(0.0)
    );

    e.run_until(30_000);
    let ip = web_b_ip(&e);
    for node in ["node-a", "node-b"] {
        assert_eq!(e.endpoint_changes_pending(node), Some(0), "{node}");
        assert!(programs(&e, node, ip), "{node}");
    }
    let synced_a = e.kube_proxy("node-a").unwrap().last_sync().unwrap();
    let synced_b = e.kube_proxy("node-b").unwrap().last_sync().unwrap();

    // web-b force-deleted: the simulated EndpointSlice controller removes its endpoint.
    let rv = e.store().resource_version();
    e.delete_with(&ObjectKey::new(Kind::Pod, NS, "web-b"), Some(0))
        .unwrap();
    e.run_until(30_500);
    let changes: Vec<u64> = e
        .events_since(rv)
        .unwrap()
        .iter()
        .filter(|ev| ev.key.kind == Kind::EndpointSlice)
        .map(|ev| ev.time)
        .collect();
    assert!(!changes.is_empty());
    let changed = *changes.last().unwrap();
    assert!(changed < 30_500);
    let delay = e.config().proxy_sync_delay_ms;
    assert_eq!(delay, 1_000);

    // Within the sync delay: both have the change pending and still program web-b.
    for (node, synced) in [("node-a", synced_a), ("node-b", synced_b)] {
        let m = e.metrics_text(node).unwrap().unwrap();
        assert_eq!(sample(&m, PENDING), Some(changes.len() as f64), "{node}: {m}");
        assert_eq!(sample(&m, LAST), Some(unix(synced)), "{node}: {m}");
        assert!(programs(&e, node, ip), "{node}");
    }

    // After the sync delay: the conformant node applied it, the stale one has not.
    e.run_until(changed + delay + 2_000);
    let b = e.metrics_text("node-b").unwrap().unwrap();
    assert_eq!(sample(&b, PENDING), Some(0.0), "{b}");
    assert_eq!(sample(&b, LAST), Some(unix(changed + delay)), "{b}");
    assert!(!programs(&e, "node-b", ip));
    let a = e.metrics_text("node-a").unwrap().unwrap();
    assert_eq!(sample(&a, PENDING), Some(changes.len() as f64), "{a}");
    assert_eq!(sample(&a, LAST), Some(unix(synced_a)), "{a}");
    assert!(sample(&a, LAST).unwrap() < unix(changed));
    assert!(programs(&e, "node-a", ip), "the stale node still programs web-b");

    // Once the sync delay plus the 5 s lag have passed, the stale node applies it too.
    e.run_until(changed + delay + 5_000 - 1);
    assert!(programs(&e, "node-a", ip));
    assert!(e.endpoint_changes_pending("node-a").unwrap() > 0);
    let before = e.metrics_text("node-a").unwrap().unwrap();
    e.run_until(changed + delay + 5_000);
    let a = e.metrics_text("node-a").unwrap().unwrap();
    assert_eq!(sample(&a, PENDING), Some(0.0), "{a}");
    assert_eq!(sample(&a, LAST), Some(unix(changed + delay + 5_000)), "{a}");
    assert!(!programs(&e, "node-a", ip));
    // The sync that applied it observed its lag, 6 s: it began (end minus duration) at the
    // change, which is how verify's lag readers tell it from a sync that began before.
    const SUM: &str = "kubeproxy_sync_proxy_rules_duration_seconds_sum";
    const COUNT: &str = "kubeproxy_sync_proxy_rules_duration_seconds_count";
    let d = |m: &str, name: &str| sample(&a, name).unwrap() - sample(m, name).unwrap();
    assert_eq!(d(&before, COUNT), 1.0, "{a}");
    assert!((d(&before, SUM) - 6.0).abs() < 1e-9, "{a}");
    let began = sample(&a, LAST).unwrap() - d(&before, SUM);
    assert!((began - unix(changed)).abs() < 1e-6, "{a}");
    assert!(
        a.contains("kubeproxy_sync_proxy_rules_duration_seconds_bucket{le=\"8.192\"} ")
            && a.contains("# TYPE kubeproxy_sync_proxy_rules_duration_seconds histogram"),
        "{a}"
    );
}

/// A Node update that changes nothing a kube-proxy programs (a label other than the zone) is
/// not a sync: the last-sync timestamp stays that of the last sync that applied state.
#[test]
fn metrics_last_sync_ignores_events_that_change_no_rules() {
    let mut e = fixture(1, &[]);
    e.run_until(20_000);
    let before = e.kube_proxy("node-c").unwrap().last_sync().unwrap();
    let key = ObjectKey::new(Kind::Node, "", "node-c");
    let mut node = e.get(&key).unwrap().as_node().unwrap().clone();
    node.meta.labels.insert("example.com/team".into(), "blue".into());
    e.update(Object::Node(node.clone()), None).unwrap();
    e.run_until(30_000);
    let p = e.kube_proxy("node-c").unwrap();
    assert_eq!(p.last_sync(), Some(before));
    assert_eq!(e.endpoint_changes_pending("node-c"), Some(0));
    // A zone change is applied state: every Service is reprogrammed.
    node.meta
        .labels
        .insert(locality_model::objects::LABEL_ZONE.into(), "zone-x".into());
    e.update(Object::Node(node), None).unwrap();
    e.run_until(40_000);
    let p = e.kube_proxy("node-c").unwrap();
    assert_eq!(p.zone(), "zone-x");
    assert!(p.last_sync().unwrap() > before);
}
