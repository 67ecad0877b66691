//! Byte-level fuzzing of the readers, driven by proptest: every input file of the test
//! corpus (`tests/fixtures`: a kubectl List, multi-document YAML, a typed List) and the
//! catalogue's bad inputs, mutated at random (bytes flipped, ranges cut or repeated,
//! structural bytes and YAML anchors inserted), must load or fail with one clear error
//! naming the file: never a panic, never a multi-line message. Bounded: a fixed number of
//! cases per run (`PROPTEST_CASES` overrides it); failures found are kept by proptest in
//! `mutations.proptest-regressions` and replayed first on every run.

use locality_ingest::{LoadOptions, load_bytes};
use proptest::prelude::*;

/// The seeds: the fixtures, and bad inputs of the catalogue's families.
fn corpus() -> Vec<(&'static str, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out: Vec<(&'static str, Vec<u8>)> = vec![
        ("list.json", std::fs::read(dir.join("kubectl-list.json")).unwrap()),
        ("multi.yaml", std::fs::read(dir.join("multi-doc.yaml")).unwrap()),
        ("podlist.yaml", std::fs::read(dir.join("podlist.yaml")).unwrap()),
        (
            "nodes.json",
            std::fs::read(dir.join("tree/a-nodes.json")).unwrap(),
        ),
    ];
    out.push((
        "anchors.yaml",
        b"a: &a [x, x, x]\nb: &b [*a, *a, *a]\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n, labels: &l {app: a}}\nspec: {nodeName: n1}\n"
            .to_vec(),
    ));
    out.push((
        "slice.yaml",
        b"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: IPv4\nendpoints:\n  - addresses: [\"10.0.0.9\"]\n    conditions: {ready: true}\n    nodeName: n1\nports: [{port: 80, protocol: TCP}]\n"
            .to_vec(),
    ));
    out
}

/// One edit of an input.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Cut(usize, usize),
    Repeat(usize, usize, usize),
    Insert(usize, &'static [u8]),
}

const INSERTS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"\n",
    b"\n---\n",
    b" &x ",
    b" *x",
    b"!!binary ",
    b"\0",
    b"\xff",
    b"\\u0000",
    b"1e999",
    b"-",
    b"<<: *x\n",
    b"\t",
    b"\xef\xbb\xbf",
    b"'",
    b"#",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Mutation::Cut(at, n)),
        (any::<usize>(), 1usize..64, 1usize..8).prop_map(|(at, n, k)| Mutation::Repeat(at, n, k)),
        (any::<usize>(), proptest::sample::select(INSERTS)).prop_map(|(at, s)| Mutation::Insert(at, s)),
    ]
}

fn apply(mut bytes: Vec<u8>, m: &Mutation) -> Vec<u8> {
    if bytes.is_empty() {
        return bytes;
    }
    let len = bytes.len();
    match *m {
        Mutation::Flip(at, b) => bytes[at % len] = b,
        Mutation::Cut(at, n) => {
            let at = at % len;
            bytes.drain(at..(at + n).min(len));
        }
        Mutation::Repeat(at, n, k) => {
            let at = at % len;
            let piece = bytes[at..(at + n).min(len)].to_vec();
            for _ in 0..k {
                bytes.splice(at..at, piece.iter().copied());
            }
        }
        Mutation::Insert(at, s) => {
            bytes.splice(at % (len + 1)..at % (len + 1), s.iter().copied());
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn mutated_inputs_load_or_fail_with_one_clear_error(
        seed in 0usize..6,
        edits in proptest::collection::vec(mutation(), 1..6),
    ) {
        let corpus = corpus();
        let (name, bytes) = &corpus[seed % corpus.len()];
        let input = edits.iter().fold(bytes.clone(), apply);
        let result = std::panic::catch_unwind(|| load_bytes(name, &input, &LoadOptions::default()));
        let Ok(result) = result else {
            return Err(TestCaseError::fail(format!("panicked on {:?}", String::from_utf8_lossy(&input))));
        };
        if let Err(e) = result {
            let shown = e.to_string();
            prop_assert!(shown.starts_with(*name), "{}", shown);
            prop_assert!(!shown.contains('\n'), "one line: {}", shown);
            // The parser thread's panic guard turns a panic into this message: a bug.
            prop_assert!(!shown.contains("panicked"), "{}", shown);
        }
    }
}
