//! `Pods::Count`: Pods are counted, not decoded, and everything else loads as with
//! `Pods::Decode`, on the sequential and the parallel path, JSON and YAML.

use std::path::PathBuf;

use locality_ingest::{LoadOptions, Loaded, Pods, load_bytes, load_paths};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn counting() -> LoadOptions {
    LoadOptions::default().with_pods(Pods::Count)
}

/// `decoded` without its Pods equals `counted`, which counted them.
fn same_but_pods(decoded: &Loaded, counted: &Loaded) {
    assert!(!decoded.state.pods.is_empty(), "the input has Pods");
    assert_eq!(counted.unread_pods, decoded.state.pods.len());
    assert!(counted.state.pods.is_empty());
    assert_eq!(decoded.unread_pods, 0);
    let s = &decoded.state;
    let c = &counted.state;
    assert_eq!(format!("{:?}", c.nodes), format!("{:?}", s.nodes));
    assert_eq!(format!("{:?}", c.services), format!("{:?}", s.services));
    assert_eq!(
        format!("{:?}", c.endpoint_slices),
        format!("{:?}", s.endpoint_slices)
    );
    assert_eq!(format!("{:?}", c.workloads), format!("{:?}", s.workloads));
    assert_eq!(counted.skipped_kinds, decoded.skipped_kinds);
}

#[test]
fn pods_are_counted_in_json_and_yaml_files() {
    for name in ["kubectl-list.json", "multi-doc.yaml", "podlist.yaml"] {
        let path = fixture(name);
        let decoded = load_paths(&[&path], &LoadOptions::default()).expect("loads");
        let counted = load_paths(&[&path], &counting()).expect("loads counting pods");
        same_but_pods(&decoded, &counted);
    }
}

#[test]
fn a_counted_pod_is_not_checked_beyond_its_syntax() {
    let bad_field = r#"{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "a"},
         "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
         "spec": {"hostNetwork": "yes", "nodeName": "n1"}}]}"#;
    assert!(
        load_bytes("bad.json", bad_field.as_bytes(), &LoadOptions::default()).is_err(),
        "decoded, the Pod's hostNetwork is refused"
    );
    let counted = load_bytes("bad.json", bad_field.as_bytes(), &counting()).expect("counted");
    assert_eq!((counted.unread_pods, counted.state.services.len()), (1, 1));
    // Syntax is still checked.
    let cut = &bad_field[..bad_field.len() - 3];
    assert!(load_bytes("cut.json", cut.as_bytes(), &counting()).is_err());
    // A Pod still needs its name.
    let nameless = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "a"}}"#;
    let e = load_bytes("nameless.json", nameless.as_bytes(), &counting()).unwrap_err();
    assert!(e.to_string().contains("metadata.name"), "{e}");
    // A file of Pods only is not empty.
    let pods_only = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}"#;
    let l = load_bytes("pod.json", pods_only.as_bytes(), &counting()).expect("counted");
    assert!(!l.is_empty());
}

/// A List large enough for the parallel reader (several MiB), counted as the sequential
/// reader counts it.
#[test]
fn the_parallel_reader_counts_pods_as_the_sequential_one() {
    let mut items = Vec::new();
    for i in 0..30_000 {
        items.push(format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p-{i}","namespace":"a","labels":{{"app":"web"}}}},"spec":{{"nodeName":"n{n}","containers":[{{"name":"c","image":"registry.example/app:1.0","ports":[{{"containerPort":8080}}]}}]}},"status":{{"phase":"Running","podIP":"10.0.{a}.{b}","conditions":[{{"type":"Ready","status":"True"}}]}}}}"#,
            n = i % 50,
            a = i / 250,
            b = i % 250
        ));
        if i % 10 == 0 {
            items.push(format!(
                r#"{{"apiVersion":"v1","kind":"Service","metadata":{{"name":"s-{i}","namespace":"a"}},"spec":{{"selector":{{"app":"web"}},"ports":[{{"port":80}}]}}}}"#
            ));
        }
    }
    let text = format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{}]}}"#,
        items.join(",")
    );
    assert!(
        text.len() > 8 << 20,
        "large enough to be split: {} bytes",
        text.len()
    );
    let dir = std::env::temp_dir().join(format!("locality-pods-counted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.json");
    std::fs::write(&path, &text).unwrap();
    let decoded = load_paths(&[&path], &LoadOptions::default()).expect("loads");
    let counted = load_paths(&[&path], &counting()).expect("loads counting pods");
    let sequential = load_bytes("big.json", text.as_bytes(), &counting()).expect("loads");
    std::fs::remove_dir_all(&dir).ok();
    same_but_pods(&decoded, &counted);
    assert_eq!(sequential.unread_pods, 30_000);
    assert_eq!(sequential.state.services.len(), counted.state.services.len());
}
