//! Files are read as if they had been applied first: the API server's defaulting and allocation, the
//! namespace kubectl would give, kube-proxy's informer filters, version rules, mirroring, Windows nodes and
//! host-network clients.

use super::{example, find_route, locality, run_ok};
use locality_testkit::files::TempDir;
use serde_json::Value;
use std::path::PathBuf;

// ----- Files are read as applied (defaulting, allocation, namespace, informer filters) -----

fn as_applied(extra: &[&str], kubeconfig: Option<&std::path::Path>) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/as-applied.yaml");
    let mut args = vec!["matrix", "-f", path.to_str().unwrap(), "-o", "json"];
    args.extend_from_slice(extra);
    let mut cmd = locality();
    // No kubeconfig of the machine's: a named one, or one that does not exist.
    cmd.env(
        "KUBECONFIG",
        kubeconfig.map_or_else(|| PathBuf::from("/nonexistent/kubeconfig"), |p| p.to_path_buf()),
    );
    let out = cmd.args(&args).assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("valid JSON")
}

fn namespaced_route<'a>(doc: &'a Value, ns: &str, name: &str, node: &str, dest: &str) -> &'a Value {
    find_route(
        doc,
        |s| s["namespace"] == ns && s["name"] == name,
        node,
        "pod",
        dest,
    )
    .unwrap_or_else(|| panic!("route {ns}/{name} {node} pod->{dest} in {doc}"))
}

/// `SetDefaults_EndpointPort` (pkg/apis/discovery/v1/defaults.go): a slice port without name
/// or protocol is stored as `name: ""`, `protocol: TCP`, so kube-proxy matches it to the
/// Service's unnamed port instead of skipping it.
#[test]
fn set_defaults_endpoint_port_an_unnamed_slice_port_is_used() {
    let doc = as_applied(&[], None);
    let r = namespaced_route(&doc, "default", "web", "n1", "clusterIP");
    assert_eq!(r["verdict"], "deliver", "{r}");
    let r = namespaced_route(&doc, "default", "web", "n2", "clusterIP");
    assert_eq!(r["verdict"], "drop", "{r}");
}

/// The Service registry allocates a NodePort the file does not give: its routes exist.
#[test]
fn registry_allocation_a_node_port_service_without_node_port_keeps_its_routes() {
    let doc = as_applied(&[], None);
    let r = namespaced_route(&doc, "default", "web", "n2", "nodePort");
    assert_eq!(r["verdict"], "deliver", "{r}");
}

/// kubectl's namespace for objects that name none: `-n`, else the context's, else `default`.
#[test]
fn kubectl_namespace_objects_without_one_land_in_n_then_the_context_then_default() {
    let doc = as_applied(&["-n", "team-b"], None);
    assert_eq!(
        namespaced_route(&doc, "team-b", "web", "n1", "clusterIP")["verdict"],
        "deliver"
    );
    let tmp = TempDir::new("as-applied");
    let dir = tmp.path().to_path_buf();
    let kubeconfig = dir.join("config");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u, namespace: team-a}\nclusters:\n- name: k\n  cluster: {server: https://127.0.0.1:1}\nusers:\n- name: u\n  user: {}\n",
    )
    .unwrap();
    let doc = as_applied(&[], Some(&kubeconfig));
    assert_eq!(
        namespaced_route(&doc, "team-a", "web", "n1", "clusterIP")["verdict"],
        "deliver"
    );
}

/// kube-proxy's informers (cmd/kube-proxy/app/server.go) exclude Services and slices labelled
/// `service.kubernetes.io/service-proxy-name` or `service.kubernetes.io/headless`.
#[test]
fn informer_filters_service_proxy_name_and_headless_labels_hide_objects_from_kube_proxy() {
    let doc = as_applied(&[], None);
    let r = namespaced_route(&doc, "shop", "mesh", "n1", "clusterIP");
    assert_eq!(
        (&r["verdict"], &r["reason"]),
        (&"not-proxied".into(), &"service-proxy-name".into()),
        "{r}"
    );
    let r = namespaced_route(&doc, "shop", "api", "n1", "clusterIP");
    assert_eq!(
        (&r["verdict"], &r["reason"]),
        (&"reject".into(), &"no-endpoints".into()),
        "{r}"
    );
}

fn pod_cluster_ip(doc: &Value, ns: &str, name: &str, node: &str) -> (String, String) {
    let r = namespaced_route(doc, ns, name, node, "clusterIP");
    (
        r["verdict"].as_str().unwrap().to_string(),
        r["reason"].as_str().unwrap().to_string(),
    )
}

/// `endpointslicecache.go` `addEndpoints`: one IP:port in two slices. Before 1.36 a copy on
/// kube-proxy's own node wins (`!exists || isLocal`); from 1.36 (upstream PR #135593) a
/// non-terminating copy wins (`!exists || !terminating`).
#[test]
fn endpointslice_cache_duplicates_follow_the_kube_proxy_version() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/duplicates.yaml");
    let at = |v: &str| -> Value {
        let out = run_ok(&[
            "matrix",
            "-f",
            path.to_str().unwrap(),
            "--kube-version",
            v,
            "--kube-proxy-version",
            v,
            "-o",
            "json",
        ]);
        serde_json::from_str(&out).unwrap()
    };
    let old = at("1.35");
    assert_eq!(
        pod_cluster_ip(&old, "mon", "agent", "n1"),
        ("deliver".into(), "local-serving-terminating".into())
    );
    let new = at("1.36");
    assert_eq!(
        pod_cluster_ip(&new, "mon", "agent", "n1"),
        ("drop".into(), "no-local-endpoints".into())
    );
    // The node with the new pod delivers either way.
    assert_eq!(pod_cluster_ip(&new, "mon", "agent", "n2").0, "deliver");
}

/// Any order of the input objects gives byte-identical `matrix -o json`, duplicated
/// addresses included (where upstream's choice is undefined, every outcome is evaluated).
#[test]
fn matrix_json_does_not_depend_on_the_order_of_the_input() {
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/duplicates.yaml"))
            .unwrap();
    let mut docs: Vec<String> = text.split("\n---\n").map(str::to_string).collect();
    // A shipped example (pods and workloads, slices derived), to make the input larger.
    let example = std::fs::read_to_string(example("telemetry-manifests.yaml")).unwrap();
    docs.extend(example.split("\n---\n").map(str::to_string));
    let tmp = TempDir::new("order");
    let dir = tmp.path().to_path_buf();
    let mut reference: Option<Vec<u8>> = None;
    // A fixed LCG: 20 reproducible permutations (Fisher–Yates).
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..20 {
        for i in (1..docs.len()).rev() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let j = (state >> 33) as usize % (i + 1);
            docs.swap(i, j);
        }
        let file = dir.join(format!("input-{round}.yaml"));
        std::fs::write(&file, docs.join("\n---\n")).unwrap();
        let out = locality()
            .args(["matrix", "-f", file.to_str().unwrap(), "-o", "json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        // The header names the file, which differs per round: compare the rest.
        let mut doc: Value = serde_json::from_slice(&out).unwrap();
        doc.as_object_mut().unwrap().remove("header");
        let out = serde_json::to_vec_pretty(&doc).unwrap();
        match &reference {
            None => reference = Some(out),
            Some(r) => assert!(*r == out, "permutation {round} changed the output"),
        }
    }
}

// ----- Endpoints mirroring (pkg/controller/endpointslicemirroring) -----

mod endpoints_mirroring {
    use super::*;

    fn data() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/mirroring.yaml")
    }

    /// `matrix -o json -v` on tests/data/mirroring.yaml: the document and stderr.
    fn run() -> (Value, String) {
        let out = locality()
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .args(["matrix", "-f", data().to_str().unwrap(), "-o", "json", "-v"])
            .assert()
            .success()
            .get_output()
            .clone();
        let doc = serde_json::from_slice(&out.stdout).expect("valid JSON");
        (doc, String::from_utf8(out.stderr).unwrap())
    }

    fn source<'a>(doc: &'a Value, name: &str) -> &'a Value {
        let svc = doc["services"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name);
        &svc.unwrap_or_else(|| panic!("service {name} in {doc}"))["endpointSource"]
    }

    /// Pod → clusterIP of `default/name` on `node`: verdict, endpoints, reason.
    fn pod_route(doc: &Value, name: &str, node: &str) -> (String, Vec<String>, String) {
        let r = namespaced_route(doc, "default", name, node, "clusterIP");
        let endpoints = r["endpoints"].as_array().unwrap();
        (
            r["verdict"].as_str().unwrap().to_string(),
            endpoints
                .iter()
                .map(|e| e.as_str().unwrap().to_string())
                .collect(),
            r["reason"].as_str().unwrap().to_string(),
        )
    }

    /// The negative cases below mean something only if this file is mirrored at all.
    fn assert_db_is_mirrored(doc: &Value) {
        assert_eq!(source(doc, "db"), "mirrored", "{doc}");
        assert_eq!(pod_route(doc, "db", "n1").0, "deliver", "{doc}");
    }

    /// A selector-less Service with only an Endpoints object: the mirrored slices carry the
    /// ready address (ready) and the not-ready one (`ready: false`, unusable), both with
    /// their nodeName; pods reach the ready address only.
    #[test]
    fn selectorless_service_routes_to_the_ready_addresses_of_its_endpoints() {
        let (doc, _) = run();
        assert_eq!(source(&doc, "db"), "mirrored");
        for node in ["n1", "n2"] {
            assert_eq!(
                pod_route(&doc, "db", node),
                (
                    "deliver".into(),
                    vec!["192.0.2.10:5432".to_string()],
                    "cluster-ready".into()
                ),
                "{node}"
            );
        }
        let text = String::from_utf8(
            locality()
                .env("KUBECONFIG", "/nonexistent/kubeconfig")
                .args([
                    "explain",
                    "default/db",
                    "--node",
                    "n1",
                    "-f",
                    data().to_str().unwrap(),
                ])
                .assert()
                .success()
                .get_output()
                .stdout
                .clone(),
        )
        .unwrap();
        assert!(
            text.contains("EndpointSlices mirrored from the Endpoints object (selector-less Service)"),
            "{text}"
        );
        assert!(text.contains("192.0.2.10:5432 on n1 (local): ready"), "{text}");
        assert!(text.contains("192.0.2.11:5432 on n2: unusable"), "{text}");
    }

    /// `endpointslice.kubernetes.io/skip-mirror: "true"`: no slices, so no endpoints; `-v`
    /// says why.
    #[test]
    fn skip_mirror_label_leaves_the_service_without_endpoints() {
        let (doc, stderr) = run();
        assert_db_is_mirrored(&doc);
        assert_eq!(
            pod_route(&doc, "legacy", "n1"),
            ("reject".into(), vec![], "no-endpoints".into())
        );
        assert_ne!(source(&doc, "legacy"), "mirrored");
        assert!(
            stderr.contains(
                "Endpoints default/legacy not mirrored: the Endpoints is labelled endpointslice.kubernetes.io/skip-mirror=true"
            ),
            "{stderr}"
        );
    }

    /// A Service with a selector: its slices come from its pods; a stray Endpoints of the
    /// same name is not mirrored (the EndpointSlice controller owns the Service).
    #[test]
    fn stray_endpoints_of_a_service_with_a_selector_are_not_mirrored() {
        let (doc, stderr) = run();
        assert_db_is_mirrored(&doc);
        assert_eq!(source(&doc, "web"), "derived");
        for node in ["n1", "n2"] {
            assert_eq!(
                pod_route(&doc, "web", node),
                (
                    "deliver".into(),
                    vec!["10.244.2.5:8080".to_string()],
                    "cluster-ready".into()
                ),
                "{node}"
            );
        }
        assert!(
            !stderr.contains("default/web"),
            "nothing to say about it: {stderr}"
        );
    }
}

/// Windows nodes run kube-proxy winkernel (`pkg/proxy/winkernel/proxier.go`): the same
/// endpoint selection, inferred; since 1.27 (upstream PR #114407) no ClusterIP load balancer
/// without a local endpoint under internalTrafficPolicy: Local — a drop, never "not proxied".
#[test]
fn winkernel_windows_nodes_are_modelled_with_inferred_confidence() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/windows.yaml");
    let doc: Value =
        serde_json::from_str(&run_ok(&["matrix", "-f", path.to_str().unwrap(), "-o", "json"])).unwrap();
    let win = namespaced_route(&doc, "mon", "agent", "win", "clusterIP");
    assert_eq!(
        (&win["verdict"], &win["confidence"]),
        (&"deliver".into(), &"inferred".into()),
        "{win}"
    );
    let empty = namespaced_route(&doc, "mon", "agent", "win-empty", "clusterIP");
    assert_eq!(
        (&empty["verdict"], &empty["confidence"]),
        (&"drop".into(), &"inferred".into()),
        "{empty}"
    );
    let lin = namespaced_route(&doc, "mon", "agent", "lin", "clusterIP");
    assert_eq!(lin["confidence"], "upstream-test", "{lin}");
}

/// `explain --pod` of a hostNetwork pod traces node-originated traffic (ITP still applies).
#[test]
fn explain_a_host_network_pod_traces_the_nodes_own_traffic() {
    let tmp = TempDir::new("hostnet");
    let dir = tmp.path().to_path_buf();
    let file = dir.join("in.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {name: agent, namespace: mon}\nspec:\n  clusterIP: 10.96.0.40\n  internalTrafficPolicy: Local\n  ports: [{name: http, port: 80, protocol: TCP}]\n---\n\
apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: agent-1, namespace: mon, labels: {kubernetes.io/service-name: agent}}\naddressType: IPv4\nports: [{name: http, port: 8080, protocol: TCP}]\nendpoints:\n- addresses: [10.244.0.5]\n  nodeName: n1\n---\n\
apiVersion: v1\nkind: Pod\nmetadata: {name: scraper, namespace: mon}\nspec:\n  nodeName: n2\n  hostNetwork: true\n  containers: [{name: c, image: x}]\n",
    )
    .unwrap();
    let out = run_ok(&[
        "explain",
        "mon/agent",
        "--pod",
        "mon/scraper",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert!(out.contains("n2 itself (host network)"), "{out}");
    assert!(out.contains("DROP"), "{out}");
}
