//! The crate dependency directions written in ARCHITECTURE.md are the ones Cargo.toml
//! declares: every `locality-*` dependency of a crate is in its "depends on" column, and
//! every crate named there is a dependency.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The `locality-*` crates under `[dependencies]` of a Cargo.toml.
fn declared(manifest: &str) -> BTreeSet<String> {
    let mut in_deps = false;
    let mut out = BTreeSet::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if in_deps
            && let Some(name) = line.split(['=', ' ', '.']).next()
            && let Some(short) = name.strip_prefix("locality-")
        {
            out.insert(short.to_string());
        }
    }
    out
}

/// `(crate directory, the locality crates its "depends on" cell names)` per table row.
fn documented(architecture: &str) -> Vec<(String, BTreeSet<String>)> {
    let known = [
        "model",
        "ingest",
        "audit",
        "live",
        "sim",
        "apiserver",
        "verify",
        "report",
    ];
    architecture
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let dir = cells.get(1)?.strip_prefix("`crates/")?.strip_suffix('`')?;
            let deps = cells.get(cells.len().checked_sub(2)?)?;
            let named: BTreeSet<String> = if deps.starts_with("all of the above") {
                known.iter().map(|s| s.to_string()).collect()
            } else {
                deps.split([',', ' ', '(', ')'])
                    .filter(|w| known.contains(w))
                    .map(str::to_string)
                    .collect()
            };
            Some((dir.to_string(), named))
        })
        .collect()
}

#[test]
fn crate_dependencies_are_the_documented_ones() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let rows = documented(&arch);
    assert!(rows.len() >= 10, "the crate table was not found: {rows:?}");
    let mut wrong = Vec::new();
    for (dir, named) in &rows {
        let manifest = std::fs::read_to_string(root().join("crates").join(dir).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("crates/{dir}/Cargo.toml: {e}"));
        let have = declared(&manifest);
        if &have != named {
            wrong.push(format!(
                "crates/{dir}: Cargo.toml {have:?}, ARCHITECTURE.md {named:?}"
            ));
        }
    }
    let crates: BTreeSet<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let rows_dirs: BTreeSet<String> = rows.iter().map(|(d, _)| d.clone()).collect();
    assert_eq!(crates, rows_dirs, "every crate has a row in ARCHITECTURE.md");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_parsers_read_what_they_should() {
    let m = "[package]\nname = \"x\"\n[dependencies]\nlocality-model.workspace = true\nlocality-sim = { path = \"s\" }\nserde = \"1\"\n[dev-dependencies]\nlocality-testkit.workspace = true\n";
    assert_eq!(declared(m), ["model", "sim"].map(String::from).into());
    let a =
        "| `crates/locality-sim` | The engine | model, audit (its `clients`) |\n| `bench` | x | serde |\n";
    assert_eq!(
        documented(a),
        vec![(
            "locality-sim".to_string(),
            ["model", "audit"].map(String::from).into()
        )]
    );
}
