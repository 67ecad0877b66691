//! Import cycles between the files of each crate: the ones that exist are exactly those
//! ARCHITECTURE.md lists under "Known import cycles" (none in most crates), so a new cycle,
//! or a known one that grows, fails here; one that is untangled fails too, until the list
//! says so.
//!
//! A file imports another when it names an item through `crate::…` or `super::…` that
//! resolves to that file (the longest module path that is a file), outside comments and
//! `#[cfg(test)]` code. A child naming its own ancestor is not counted: the parent declares
//! the child, and that is not a cycle the reader has to untangle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Every `.rs` file under `dir` with its module path (`proxy::verdict`; `""` for the root).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod") {
                parts.pop();
            }
            if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
                parts.clear();
            }
            (parts.join("::"), p)
        })
        .collect()
}

/// The code of a file without `#[cfg(test)]` parts (from the first one on) and comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths named after `prefix` (`crate::` or `super::`), groups expanded one level:
/// `crate::a::{b, c::d}` gives `a`, `a::b`, `a::c::d`.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let rest = &code[from..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let base = rest[..end].trim_end_matches(':').to_string();
        if !base.is_empty() {
            out.push(base.clone());
        }
        if rest[end..].starts_with('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in rest[end..].chars() {
                match c {
                    '{' => {
                        depth += 1;
                        if depth == 1 {
                            continue;
                        }
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        out.push(join(&base, &item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth >= 1 {
                    item.push(c);
                }
            }
            out.push(join(&base, &item));
        }
    }
    out
}

fn join(base: &str, item: &str) -> String {
    let item = item.split(" as ").next().unwrap_or("").trim();
    let item = item.split("::{").next().unwrap_or("");
    match (base.is_empty(), item.is_empty()) {
        (_, true) => base.to_string(),
        (true, false) => item.to_string(),
        (false, false) => format!("{base}::{item}"),
    }
}

/// The file modules each file imports.
fn graph(mods: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in mods {
        let text = code(&std::fs::read_to_string(path).unwrap());
        // `super` of `a::b` (a file a/b.rs or a directory a/b/mod.rs) is `a`.
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p).to_string();
        let mut named = paths_after(&text, "crate::");
        named.extend(
            paths_after(&text, "super::")
                .into_iter()
                .map(|p| join(&parent, &p)),
        );
        let targets = edges.entry(module.clone()).or_default();
        for p in named {
            let segs: Vec<&str> = p.split("::").collect();
            for k in (1..=segs.len()).rev() {
                let cand = segs[..k].join("::");
                if mods.contains_key(&cand) {
                    if cand != *module && !module.starts_with(&format!("{cand}::")) {
                        targets.insert(cand);
                    }
                    break;
                }
            }
        }
    }
    edges
}

/// The strongly connected components of more than one file (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        let edges = t.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// ARCHITECTURE.md's "Known import cycles": `- \`crates/X\`: \`a\`, \`b\`, …` per cycle.
fn documented() -> BTreeSet<(String, BTreeSet<String>)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text
        .split("## Known import cycles")
        .nth(1)
        .expect("ARCHITECTURE.md has a section \"Known import cycles\"");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|l| l.strip_prefix("- `crates/"))
        .map(|l| {
            let (krate, files) = l.split_once("`:").expect("- `crates/X`: `a`, `b`");
            let files = files
                .split(',')
                .map(|f| {
                    f.trim()
                        .trim_matches('`')
                        .trim_end_matches('.')
                        .trim_matches('`')
                        .to_string()
                })
                .collect();
            (krate.to_string(), files)
        })
        .collect()
}

#[test]
fn import_cycles_are_exactly_the_known_ones() {
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let krate = dir.file_name().unwrap().to_string_lossy().into_owned();
        for comp in cycles(&graph(&modules(&src))) {
            found.insert((krate.clone(), comp));
        }
    }
    let documented = documented();
    let new: Vec<_> = found.difference(&documented).collect();
    let gone: Vec<_> = documented.difference(&found).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "import cycles not as ARCHITECTURE.md lists them.\n  found, not listed (untangle, or list): {new:?}\n  listed, not found (update the list): {gone:?}"
    );
}

#[test]
fn the_scanner_sees_groups_super_and_ignores_comments_and_tests() {
    let text = code(
        "use crate::a::{b, c::{d, e}, f as g};\n// use crate::zz;\nfn x() { super::h::i(); }\n#[cfg(test)]\nuse crate::tests_only;\n",
    );
    let mut p = paths_after(&text, "crate::");
    p.sort();
    assert_eq!(p, ["a", "a::b", "a::c", "a::f"]);
    assert_eq!(paths_after(&text, "super::"), ["h::i"]);
    let mut edges = BTreeMap::new();
    for (a, b) in [("x", "y"), ("y", "z"), ("z", "x"), ("z", "w")] {
        edges
            .entry(a.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_string());
    }
    let c = cycles(&edges);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].iter().map(String::as_str).collect::<Vec<_>>(),
        ["x", "y", "z"]
    );
}
