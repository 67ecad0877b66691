//! The repository explains itself: every doc section a comment or doc cites
//! (`docs/design.md §5.4`) exists, every relative link in a Markdown file resolves, and
//! nothing cites material outside the repository (the markers of docs/design.md §9.1).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The repository's text files: sources, docs, manifests and CI material (not build output).
fn text_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !matches!(name.as_str(), "target" | ".git" | "node_modules" | "dist") {
                    walk(&p, out);
                }
            } else if [".rs", ".md", ".toml", ".yaml", ".yml", ".py", ".sh", ".json"]
                .iter()
                .any(|x| name.ends_with(x))
                || name == "run"
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out.sort();
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// `(doc, section)` for every `docs/NAME.md §N.M` in `text`.
fn citations(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("docs/") {
        rest = &rest[i + 5..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        let after = &rest[name.len()..];
        let Some(after) = after.strip_prefix(".md §") else {
            continue;
        };
        let section: String = after
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let section = section.trim_end_matches('.').to_string();
        if !section.is_empty() {
            out.push((format!("docs/{name}.md"), section));
        }
    }
    out
}

/// Whether `doc` has section `§N.M`: a heading `## §N.M …` or a bold marker (`**§N.M**`,
/// `**§N.M title**`).
fn has_section(doc: &str, section: &str) -> bool {
    doc.lines().any(|l| {
        let l = l.trim_start();
        let heading = l.starts_with('#')
            && l.trim_start_matches('#')
                .trim_start()
                .strip_prefix('§')
                .is_some_and(|s| {
                    s.strip_prefix(section)
                        .is_some_and(|r| r.is_empty() || r.starts_with(' '))
                });
        heading || l.contains(&format!("**§{section}**")) || l.contains(&format!("**§{section} "))
    })
}

#[test]
fn every_cited_doc_section_exists() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for f in text_files() {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (doc, section) in citations(&text) {
            seen += 1;
            match std::fs::read_to_string(root().join(&doc)) {
                Ok(d) if has_section(&d, &section) => {}
                Ok(_) => missing.push(format!("{}: {doc} §{section}: no such section", rel(&f))),
                Err(_) => missing.push(format!("{}: {doc}: no such file", rel(&f))),
            }
        }
    }
    assert!(seen > 20, "the citations were not found ({seen})");
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The relative targets of the Markdown links `[text](target)` in `text`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !target.contains("://")
            && !target.starts_with('#')
            && !target.starts_with("mailto:")
            && !target.contains(' ')
            && !target.is_empty()
        {
            out.push(target.split('#').next().unwrap_or_default().to_string());
        }
    }
    out
}

#[test]
fn every_relative_markdown_link_resolves() {
    let mut broken = Vec::new();
    let mut seen = 0;
    for f in text_files()
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(&f).unwrap();
        for target in links(&text) {
            seen += 1;
            let dir = f.parent().unwrap();
            if !dir.join(&target).exists() {
                broken.push(format!("{}: ({target})", rel(&f)));
            }
        }
    }
    assert!(seen > 10, "the links were not found ({seen})");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The markers of material outside the repository, as docs/design.md §9.1 lists them
/// (backwards): `(whole word, marker)`; and the lines of that list.
fn outside_markers() -> (Vec<(bool, String)>, Vec<String>) {
    let doc = std::fs::read_to_string(root().join("docs/design.md")).unwrap();
    let section = &doc[doc.find("**§9.1").expect("docs/design.md §9.1")..];
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap_or_default();
    let mut markers = Vec::new();
    for line in block.lines() {
        if let Some(w) = line.strip_prefix("word: ") {
            markers.push((true, w.trim().chars().rev().collect()));
        } else if let Some(t) = line.strip_prefix("text: ") {
            markers.push((false, t.trim().chars().rev().collect()));
        }
    }
    (markers, block.lines().map(str::to_string).collect())
}

#[test]
fn nothing_cites_material_outside_the_repository() {
    let (markers, listed) = outside_markers();
    assert!(markers.len() >= 2, "docs/design.md §9.1 lists no markers");
    let design = root().join("docs/design.md");
    let mut found = Vec::new();
    for f in text_files() {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if f == design && listed.iter().any(|l| l == line) {
                continue;
            }
            let hit = markers.iter().any(|(word, m)| {
                if *word {
                    line.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == m)
                } else {
                    line.contains(m.as_str())
                }
            });
            if hit {
                found.push(format!("{}:{}: {}", rel(&f), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_checks_find_what_they_look_for() {
    assert_eq!(
        citations("see docs/design.md §5.4. and docs/upstream.md §2"),
        vec![
            ("docs/design.md".to_string(), "5.4".to_string()),
            ("docs/upstream.md".to_string(), "2".to_string())
        ]
    );
    let doc = "## §5 The contract\n- **§5.4** the cases\n- **§5.5 status**: …\n";
    assert!(has_section(doc, "5"));
    assert!(has_section(doc, "5.4"));
    assert!(has_section(doc, "5.5"));
    assert!(!has_section(doc, "5.6"));
    assert!(!has_section(doc, "4"));
    assert_eq!(
        links("[a](verify.md#cases) [b](https://x) [c](#top) [d](../README.md)"),
        vec!["verify.md".to_string(), "../README.md".to_string()]
    );
}
