//! The parallel reader against the sequential parse: same objects, same errors.

use super::*;
use crate::{LoadOptions, Loaded, load_bytes};

fn pod(i: usize) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": format!("p{i}"), "namespace": "ns", "labels": {"app": "a"},
                     "annotations": {"x": "]}{,\n\"", "topology.kubernetes.io/mode": "Auto"}},
        "spec": {"nodeName": "n1", "containers": [
            {"name": "c", "ports": [{"containerPort": 80, "name": "http"}]},
            {"name": "d", "ports": []}]},
        "status": {"phase": "Running", "podIPs": [{"ip": format!("10.0.0.{}", i % 250 + 1)}],
                   "conditions": [{"type": "Ready", "status": "True"}]}
    })
}

fn slice(i: usize) -> serde_json::Value {
    serde_json::json!({
        "addressType": "IPv4",
        "apiVersion": "discovery.k8s.io/v1",
        "endpoints": [{"addresses": [format!("10.1.0.{}", i % 250 + 1)], "nodeName": "n1",
                       "conditions": {"ready": true}}],
        "kind": "EndpointSlice",
        "metadata": {"name": format!("s{i}"), "namespace": "ns"},
        "ports": [{"port": 80, "protocol": "TCP"}]
    })
}

fn list(n: usize) -> String {
    let mut items = Vec::new();
    for i in 0..n {
        items.push(match i % 4 {
            0 => slice(i),
            1 => serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": format!("c{i}")}, "data": {"k": "v"}}),
            _ => pod(i),
        });
    }
    let v = serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List",
                               "metadata": {"resourceVersion": ""}});
    serde_json::to_string_pretty(&v).unwrap()
}

/// The `,` of every item boundary (the pattern `plan` looks for).
fn boundaries(text: &str) -> Vec<usize> {
    let pat = "\n    },\n    {";
    text.match_indices(pat).map(|(i, _)| i + 6).collect()
}

/// The parallel reader alone, with `block`-byte blocks; `None`: declined.
fn stream(text: &str, block: usize) -> Option<Sink> {
    let cfg = Config {
        block,
        threads: 2,
        count_pods: false,
    };
    match parse_stream("list.json", &mut text.as_bytes(), cfg).unwrap() {
        Streamed::Parsed(sink, n) => {
            assert_eq!(n, text.len() as u64);
            Some(*sink)
        }
        Streamed::Declined => None,
    }
}

/// What the loader makes of `text` with `block`-byte blocks: the parallel reader, and
/// the sequential parse when it declines.
fn split_load(text: &str, block: usize) -> Result<Loaded, crate::IngestError> {
    let sink = match stream(text, block) {
        Some(sink) => sink,
        None => return load_bytes("list.json", text.as_bytes(), &LoadOptions::default()),
    };
    // Duplicates are found after the merge, as the loader does (a mutation may make two
    // names equal).
    crate::dedup::Dedup::default().check(&sink.state, "list.json", Some(text.as_bytes()))?;
    Ok(Loaded {
        state: sink.state,
        skipped_kinds: sink.skipped,
        unread_pods: sink.unread_pods,
        warnings: sink.warnings,
        ..Loaded::default()
    })
}

/// Parses `text` cut at `cuts` (offsets of `,`) as the reader would: chunk by chunk,
/// each `[[` + items + `]]`; `None` when any chunk fails the proof.
fn chunks_at(text: &str, cuts: &[usize]) -> Option<Vec<(Sink, u32)>> {
    let t = text.as_bytes();
    let open = crate::locate::top_level_items(t, MAX_FRAME).unwrap();
    let close = t.iter().rposition(|&b| b == b']').unwrap();
    let mut edges = vec![open];
    edges.extend_from_slice(cuts);
    edges.push(close);
    edges
        .windows(2)
        .map(|w| {
            let mut buf = b"[[".to_vec();
            buf.extend_from_slice(&t[w[0] + 1..w[1]]);
            buf.extend_from_slice(b"]]");
            parse_chunk("list.json", &buf, &buf, None, false)
        })
        .collect()
}

fn same(a: &Loaded, b: &Loaded) {
    assert_eq!(a.state, b.state);
    assert_eq!(a.skipped_kinds, b.skipped_kinds);
    assert_eq!(a.warnings, b.warnings);
}

#[test]
fn every_boundary_gives_the_sequential_state() {
    let text = list(9);
    let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
    let cuts = boundaries(&text);
    assert_eq!(cuts.len(), 8);
    // Every block size: the chunks end at every boundary in turn.
    let mut chunks_seen = std::collections::BTreeSet::new();
    for block in 1..text.len() + 2 {
        let sink = stream(&text, block).unwrap_or_else(|| panic!("block {block} declined"));
        assert_eq!(sink.state, seq.state, "block {block}");
        chunks_seen.insert(cuts.iter().filter(|&&c| c >= block).count());
    }
    assert!(chunks_seen.len() >= 8, "{chunks_seen:?}");
    // One item per chunk: item positions are shifted back to the whole List's.
    let sink = stream(&text, 1).unwrap();
    assert_eq!(sink.state.pods[3].meta.origin.item, Some(7));
    same(&split_load(&text, 1).unwrap(), &seq);
    for &c in &cuts {
        assert!(chunks_at(&text, &[c]).is_some(), "cut at {c}");
    }
}

#[test]
fn a_cut_inside_an_item_is_rejected() {
    let text = list(4);
    let t = text.as_bytes();
    let open = crate::locate::top_level_items(t, MAX_FRAME).unwrap();
    let close = text.rfind(']').unwrap();
    // Every `,` followed by a newline and two blanks that is not an item boundary
    // (inside nested arrays and objects) fails the proof.
    let good = boundaries(&text);
    let mut tried = 0;
    for (c, _) in text.match_indices(",\n  ") {
        if good.contains(&c) || c < open || c > close {
            continue;
        }
        tried += 1;
        assert!(chunks_at(&text, &[c]).is_none(), "cut at {c}");
    }
    assert!(tried > 10, "{tried}");
}

#[test]
fn a_nested_array_at_item_indentation_is_rejected() {
    // A nested array whose elements sit at the items' indentation: the textual
    // pattern matches, the parse proves it is not a boundary.
    let text = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    {\"apiVersion\": \"v1\", \"kind\": \"Pod\",\
                \"metadata\": {\"name\": \"a\", \"namespace\": \"d\"}, \"spec\": {\"containers\": [{\"name\": \"x\"\n    },\n    \
                {\"name\": \"y\"}]}},\n    {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}\n    },\n    \
                {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"m\"}}\n  ],\n  \"kind\": \"List\"\n}\n";
    let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
    let cands: Vec<usize> = text
        .match_indices("\n    },\n    {")
        .map(|(i, _)| i + 6)
        .collect();
    assert_eq!(cands.len(), 2);
    assert!(chunks_at(text, &[cands[0]]).is_none());
    assert!(chunks_at(text, &[cands[1]]).is_some());
    // A block that ends before the nested candidate cuts there: declined, and the
    // loader falls back to the sequential parse.
    assert!(stream(text, 1).is_none());
    same(&split_load(text, 1).unwrap(), &seq);
    // A block past it cuts at the real boundary only.
    let sink = stream(text, cands[0] + 1).expect("the real boundary is proven");
    assert_eq!(sink.state, seq.state);
}

/// An invalid IP and a syntax error in the first item address before `mid`, and again
/// after it: errors in either half of a split.
fn corrupt_each_half(text: &str, mid: usize) -> Vec<String> {
    let bad_ips: Vec<usize> = text.match_indices("\"10.0.0.").map(|(i, _)| i + 1).collect();
    let first = *bad_ips.iter().find(|&&i| i < mid).unwrap();
    let second = *bad_ips.iter().find(|&&i| i > mid).unwrap();
    let mut cases = Vec::new();
    for at in [first, second] {
        let mut t = text.to_owned();
        t.replace_range(at..at + 3, "999");
        cases.push(t);
        let mut t = text.to_owned();
        t.replace_range(at - 1..at, "{");
        cases.push(t);
    }
    cases
}

/// Every bad input of `cases` is declined by the parallel reader at block sizes 1, `mid`
/// and half its length, and the loader then gives exactly the sequential error.
fn same_errors(cases: &[String], mid: usize) {
    for (k, t) in cases.iter().enumerate() {
        let seq = load_bytes("list.json", t.as_bytes(), &LoadOptions::default())
            .expect_err(&format!("case {k} is bad"));
        for block in [1, mid, t.len() / 2] {
            assert!(stream(t, block).is_none(), "case {k}, block {block}: declined");
            let par = split_load(t, block).expect_err("bad in parallel too");
            assert_eq!(par.to_string(), seq.to_string(), "case {k}");
            assert_eq!((par.line(), par.column()), (seq.line(), seq.column()));
        }
    }
}

#[test]
fn errors_in_either_half_are_the_sequential_errors() {
    let text = list(8);
    let cuts = boundaries(&text);
    let mid = cuts[3];
    let mut cases = corrupt_each_half(&text, mid);
    // Bad tail, bad header, truncated, trailing garbage, a trailing comma.
    cases.push(text.replace("\"kind\": \"List\"", "\"kind\": 7"));
    cases.push(text.replacen(
        "\"apiVersion\": \"v1\",\n  \"items\"",
        "\"items\": 3, \"items\"",
        1,
    ));
    cases.push(text[..text.len() - 3].to_owned());
    cases.push(format!("{text} x"));
    let last = text.rfind("\n  ]").unwrap();
    cases.push(format!("{},{}", &text[..last], &text[last..]));
    same_errors(&cases, mid);
}

/// A compact List (as `kubectl get --raw` prints it) and the `,` of every item
/// boundary. Pods carry `ownerReferences`, nested `},{"apiVersion":` candidates; the
/// second owner of some has `kind` right after `apiVersion` like an item.
fn compact_list(n: usize, owner_like_item: bool) -> (String, Vec<usize>) {
    let mut text = String::from("{\"apiVersion\":\"v1\",\"items\":[");
    let mut cuts = Vec::new();
    for i in 0..n {
        if i > 0 {
            cuts.push(text.len());
            text.push(',');
        }
        let mut item = match i % 3 {
            2 => serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": format!("c{i}")}, "data": {"k": "},{\"apiVersion\":"}}),
            _ => pod(i),
        };
        if i % 3 != 2 {
            let second = if owner_like_item {
                serde_json::json!({"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u2"})
            } else {
                serde_json::json!({"apiVersion": "v1", "controller": false, "kind": "Node", "name": "n",
                                   "uid": "u2"})
            };
            item["metadata"]["ownerReferences"] = serde_json::json!([
                {"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                 "kind": "ReplicaSet", "name": "rs", "uid": "u1"},
                second
            ]);
        }
        text.push_str(&serde_json::to_string(&item).unwrap());
    }
    text.push_str("],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}");
    (text, cuts)
}

#[test]
fn compact_every_boundary_gives_the_sequential_state() {
    let (text, cuts) = compact_list(9, false);
    let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
    assert_eq!(seq.state.pods.len(), 6);
    assert_eq!(cuts.len(), 8);
    for &c in &cuts {
        assert!(chunks_at(&text, &[c]).is_some(), "cut at {c}");
    }
    for block in 1..text.len() + 2 {
        let sink = stream(&text, block).unwrap_or_else(|| panic!("block {block} declined"));
        assert_eq!(sink.state, seq.state, "block {block}");
    }
    let sink = stream(&text, 1).unwrap();
    assert_eq!(sink.state.pods[3].meta.origin.item, Some(4));
    let finder = memchr::memmem::Finder::new(b"},{\"apiVersion\":");
    let mut found = Vec::new();
    while let Some(c) = next_cut(
        text.as_bytes(),
        &finder,
        found.last().map_or(0, |c| c + 1),
        text.len(),
    ) {
        found.push(c);
    }
    // ConfigMaps (`data` sorts before `kind`) are no candidates either: fewer cuts.
    let before_pods: Vec<usize> = (0..cuts.len())
        .filter(|j| (j + 1) % 3 != 2)
        .map(|j| cuts[j])
        .collect();
    assert_eq!(
        found, before_pods,
        "ownerReferences and strings are no candidates"
    );
}

#[test]
fn compact_nested_candidates_are_rejected() {
    let (text, good) = compact_list(6, true);
    let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
    let nested: Vec<usize> = text
        .match_indices("},{\"apiVersion\":")
        .map(|(i, _)| i + 1)
        .filter(|c| !good.contains(c))
        .collect();
    assert_eq!(nested.len(), 4);
    for &c in &nested {
        assert!(chunks_at(&text, &[c]).is_none(), "cut at {c}");
    }
    // An owner that looks like an item passes the cheap filter: the parse rejects it
    // and the whole attempt falls back.
    assert!(stream(&text, 1).is_none());
    same(&split_load(&text, 1).unwrap(), &seq);
    // Any other `,` inside the items fails the proof too.
    let open = text.find('[').unwrap();
    let mut tried = 0;
    for (c, _) in text.match_indices(',') {
        if good.contains(&c) || c < open || c > text.rfind(']').unwrap() {
            continue;
        }
        tried += 1;
        assert!(chunks_at(&text, &[c]).is_none(), "cut at {c}");
    }
    assert!(tried > 50, "{tried}");
}

#[test]
fn compact_errors_in_either_half_are_the_sequential_errors() {
    let (text, cuts) = compact_list(8, false);
    let mid = cuts[3];
    let mut cases = corrupt_each_half(&text, mid);
    cases.push(text.replace("\"kind\":\"List\"", "\"kind\":7"));
    cases.push(text.replacen("{\"apiVersion\":\"v1\",\"items\"", "{\"items\":3,\"items\"", 1));
    cases.push(text[..text.len() - 3].to_owned());
    cases.push(format!("{text} x"));
    let last = text.rfind(']').unwrap();
    cases.push(format!("{},{}", &text[..last], &text[last..]));
    same_errors(&cases, mid);
}

#[test]
fn file_in_parallel() {
    let text = list(14_000);
    assert!(text.len() >= MIN_SPLIT_BYTES, "{}", text.len());
    let dir = std::env::temp_dir().join(format!("locality-split-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.json");
    std::fs::write(&path, &text).unwrap();
    let seq = load_bytes("big.json", text.as_bytes(), &LoadOptions::default()).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let cfg = Config {
        block: 1 << 20,
        threads: 2,
        count_pods: false,
    };
    let Streamed::Parsed(sink, n) = parse_stream("big.json", &mut &file, cfg).unwrap() else {
        panic!("declined");
    };
    assert_eq!(n, text.len() as u64);
    assert_eq!(sink.state, seq.state);
    let par = crate::load_paths(&[&path], &LoadOptions::default()).unwrap();
    let shown = path.display().to_string();
    let seq_named = load_bytes(&shown, text.as_bytes(), &LoadOptions::default()).unwrap();
    assert!(
        par.state == seq_named.state,
        "the loader reads the file as the sequential parse"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_duplicate_in_a_streamed_file_is_placed_as_in_memory() {
    // The streamed file is not held: the duplicate's places come from reading it again.
    let text = list(14_000).replace("\"name\": \"p13998\"", "\"name\": \"p2\"");
    let dir = std::env::temp_dir().join(format!("locality-split-dup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.json");
    std::fs::write(&path, &text).unwrap();
    let shown = path.display().to_string();
    let streamed = crate::load_paths(&[&path], &LoadOptions::default()).unwrap_err();
    let held = load_bytes(&shown, text.as_bytes(), &LoadOptions::default()).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(streamed.kind(), crate::ErrorKind::Duplicate);
    assert!(streamed.line() > 1, "{streamed}");
    assert_eq!(streamed.to_string(), held.to_string());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 1024, ..Default::default() })]

    /// Byte-level fuzzing of the parallel reader against the sequential parse: a List
    /// (pretty or compact) with a few bytes changed, cut at every block size tried, gives
    /// the same objects or the same error.
    #[test]
    fn mutated_lists_read_in_parallel_as_sequentially(
        compact in proptest::prelude::any::<bool>(),
        edits in proptest::collection::vec(
            (proptest::prelude::any::<usize>(), proptest::sample::select(b"{}[],:\"\n \\x0".to_vec())),
            0..4,
        ),
        block in 1usize..400,
    ) {
        let mut text = if compact { compact_list(6, false).0 } else { list(6) }.into_bytes();
        for (at, b) in edits {
            let at = at % text.len();
            text[at] = b;
        }
        let Ok(text) = String::from_utf8(text) else { return Ok(()) };
        let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default());
        let par = split_load(&text, block);
        match (seq, par) {
            (Ok(a), Ok(b)) => same(&a, &b),
            (Err(a), Err(b)) => proptest::prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => proptest::prop_assert!(false, "sequential {:?}, parallel {:?}", a.map(|_| ()), b.map(|_| ())),
        }
    }
}

/// A sink of `n` pods named `{tag}{i}`, at items `0..n`, as a chunk's parse gives it.
fn chunk_sink(tag: &str, n: u32) -> Sink {
    let mut sink = Sink::default();
    for i in 0..n {
        let mut pod = locality_model::objects::Pod::default();
        pod.meta.name = format!("{tag}{i}");
        pod.meta.origin.item = Some(i);
        sink.state.pods.push(pod);
    }
    sink
}

#[test]
fn merger_appends_chunks_in_order_whatever_order_they_finish_in() {
    let mut m = Merger::default();
    assert!(m.add(2, chunk_sink("c", 1), 1));
    assert!(m.add(1, chunk_sink("b", 3), 3));
    // Nothing is appended before chunk 0 is in.
    assert!(m.out.state.pods.is_empty());
    assert!(m.add(0, chunk_sink("a", 2), 2));
    let merged = m.finish(3).expect("all chunks in");
    let got: Vec<(String, Option<u32>)> = merged
        .state
        .pods
        .iter()
        .map(|p| (p.meta.name.clone(), p.meta.origin.item))
        .collect();
    let want: Vec<(String, Option<u32>)> = [("a0", 0), ("a1", 1), ("b0", 2), ("b1", 3), ("b2", 4), ("c0", 5)]
        .iter()
        .map(|(n, i)| (n.to_string(), Some(*i)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn merger_without_every_chunk_declines() {
    let mut m = Merger::default();
    assert!(m.add(0, chunk_sink("a", 1), 1));
    assert!(m.add(2, chunk_sink("c", 1), 1));
    assert!(m.finish(3).is_none());
    let mut m = Merger::default();
    assert!(m.add(0, chunk_sink("a", 1), 1));
    assert!(m.finish(2).is_none());
}

/// Every kind survives the parallel reader's merge, PodDisruptionBudgets included (they were
/// once dropped there), with its item index shifted like the others.
#[test]
fn a_pod_disruption_budget_survives_the_parallel_merge() {
    let mut v: serde_json::Value = serde_json::from_str(&list(40)).unwrap();
    v["items"].as_array_mut().unwrap().push(serde_json::json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}
    }));
    let text = serde_json::to_string_pretty(&v).unwrap();
    let sink = stream(&text, 512).expect("read in parallel");
    let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
    assert_eq!(sink.state.pod_disruption_budgets.len(), 1);
    assert_eq!(
        sink.state.pod_disruption_budgets[0].meta.origin,
        seq.state.pod_disruption_budgets[0].meta.origin
    );
}
