//! The bad-input catalogue at the binary edge: every command that reads objects (`matrix`,
//! `audit`, `explain`) exits 2 with one clear message naming the file and line:column, and
//! never panics. The full catalogue (52 cases) is in `crates/locality-ingest/tests/bad_input.rs`;
//! these are representative cases of each family, driven through the real binary.

use assert_cmd::Command;
use predicates::prelude::*;

struct Case {
    name: &'static str,
    file: &'static str,
    content: &'static [u8],
    /// Text the message must contain besides the file name.
    expect: &'static str,
}

const CASES: &[Case] = &[
    Case { name: "truncated JSON", file: "t.json", content: b"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [", expect: "t.json:1:" },
    Case { name: "YAML syntax error", file: "s.yaml", content: b"apiVersion: v1\nkind: Pod\nmetadata: {name: a\n", expect: "s.yaml:" },
    Case {
        name: "missing metadata.name",
        file: "m.json",
        content: b"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\"}}]}",
        expect: "metadata.name",
    },
    Case {
        name: "wrong field type",
        file: "w.yaml",
        content: b"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  ports: \"80\"\n",
        expect: "spec.ports",
    },
    Case {
        name: "invalid endpoint IP",
        file: "e.yaml",
        content: b"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: e, namespace: n}\naddressType: IPv4\nendpoints:\n  - addresses: [\"10.0.0.999\"]\nports: []\n",
        expect: "e.yaml:",
    },
    Case { name: "binary garbage", file: "g.json", content: b"\x00\x01\x02\xff\xfe garbage", expect: "g.json" },
    Case { name: "empty file", file: "empty.yaml", content: b"", expect: "empty.yaml" },
    Case {
        name: "selector not a map",
        file: "sel.yaml",
        content: b"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: n}\nspec:\n  selector: [app]\n  ports: [{port: 80}]\n",
        expect: "spec.selector",
    },
];

fn commands(path: &str) -> Vec<Vec<String>> {
    let p = path.to_string();
    vec![
        vec!["matrix".into(), "-f".into(), p.clone()],
        vec!["audit".into(), "-f".into(), p.clone()],
        vec![
            "explain".into(),
            "n/s".into(),
            "--node".into(),
            "x".into(),
            "-f".into(),
            p,
        ],
    ]
}

#[test]
fn every_command_rejects_bad_input_with_a_located_message() {
    let dir = std::env::temp_dir().join(format!("locality-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for case in CASES {
        let path = dir.join(case.file);
        std::fs::write(&path, case.content).unwrap();
        for args in commands(path.to_str().unwrap()) {
            let out = Command::cargo_bin("locality")
                .unwrap()
                .args(&args)
                .assert()
                .code(2);
            let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
            assert!(
                stderr.contains(case.file),
                "{}: {:?}: {stderr}",
                case.name,
                args[0]
            );
            assert!(
                stderr.contains(case.expect),
                "{}: {:?}: {stderr}",
                case.name,
                args[0]
            );
            assert!(!stderr.contains("panicked"), "{}: {stderr}", case.name);
            assert_eq!(
                stderr.lines().filter(|l| l.starts_with("error")).count(),
                1,
                "{}: one error: {stderr}",
                case.name
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn empty_stdin_is_an_input_error() {
    Command::cargo_bin("locality")
        .unwrap()
        .args(["matrix", "-f", "-"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-"));
}
