//! The CI material users copy (docs/ci.md, docs/real-clusters.md, the kind configurations
//! under deploy/kind and .github/workflows/verify-kind.yml) parses, and every `locality`
//! command in it uses a real subcommand and only flags that subcommand's `--help` lists.
//! The workflow cannot run here (no container runtime): this is what can be checked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every string in a YAML document.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// The fenced code blocks of a Markdown file: (language, text), shell continuations joined.
fn code_blocks(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.trim().to_string(), String::new())),
            (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
        .into_iter()
        .map(|(lang, body)| (lang, body.replace("\\\n", " ")))
        .collect()
}

/// The `locality` commands in `text`: (subcommand, flags), one per line.
fn commands(text: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            // Not a flag's value (`kubectl -n locality logs …`), not a URL.
            let is_binary = (*w == "locality" || (w.ends_with("/locality") && !w.contains("://")))
                && (i == 0 || !words[i - 1].starts_with('-'));
            let Some(sub) = words.get(i + 1).filter(|_| is_binary) else {
                continue;
            };
            if sub.starts_with('-') || sub.starts_with('$') {
                continue;
            }
            let flags = words[i + 2..]
                .iter()
                .take_while(|w| !matches!(**w, "|" | "&&" | ";" | ">" | "2>"))
                .filter(|w| w.starts_with("--"))
                .map(|w| w.split('=').next().unwrap_or(w).to_string())
                .collect();
            found.push((sub.to_string(), flags));
        }
    }
    found
}

fn help(sub: &str) -> String {
    let out = Command::cargo_bin("locality")
        .unwrap()
        .args([sub, "--help"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "locality {sub} --help failed: not a subcommand"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn check(what: &str, cmds: &[(String, Vec<String>)], checked: &mut BTreeSet<String>) {
    for (sub, flags) in cmds {
        let text = help(sub);
        for f in flags {
            assert!(
                text.contains(&format!("{f} "))
                    || text.contains(&format!("{f}\n"))
                    || text.contains(&format!("{f},")),
                "{what}: `locality {sub}` has no flag {f}"
            );
            checked.insert(format!("{sub} {f}"));
        }
    }
}

#[test]
fn the_ci_material_parses_and_uses_only_real_flags() {
    let root = repo();
    let mut checked = BTreeSet::new();

    let workflow = yaml(&root.join(".github/workflows/verify-kind.yml"));
    let modes: Vec<&str> = workflow
        .pointer("/jobs/verify/strategy/matrix/mode")
        .and_then(Value::as_array)
        .expect("jobs.verify.strategy.matrix.mode")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(modes, ["iptables", "nftables", "ipvs"]);
    for mode in &modes {
        let kind = yaml(&root.join(format!("deploy/kind/{mode}.yaml")));
        assert_eq!(kind["kind"], "Cluster");
        assert_eq!(kind["networking"]["kubeProxyMode"], *mode);
        let zones: BTreeSet<&str> = kind["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| {
                n.pointer("/labels/topology.kubernetes.io~1zone")
                    .and_then(Value::as_str)
            })
            .collect();
        assert_eq!(zones.len(), 3, "{mode}: the zone cases need three zones");
    }
    let mut texts = Vec::new();
    strings(&workflow, &mut texts);
    let cmds: Vec<_> = texts.iter().flat_map(|t| commands(t)).collect();
    assert!(
        cmds.iter().any(|(s, _)| s == "verify"),
        "the workflow runs verify"
    );
    check("verify-kind.yml", &cmds, &mut checked);

    for doc in ["docs/ci.md", "docs/real-clusters.md"] {
        let mut cmds = Vec::new();
        for (lang, body) in code_blocks(&root.join(doc)) {
            if lang == "yaml" {
                let v: Value =
                    serde_saphyr::from_str(&body).unwrap_or_else(|e| panic!("{doc}: a yaml block: {e}"));
                let mut texts = Vec::new();
                strings(&v, &mut texts);
                texts.iter().for_each(|t| cmds.extend(commands(t)));
            } else {
                cmds.extend(commands(&body));
            }
        }
        assert!(!cmds.is_empty(), "{doc}: no locality command found");
        check(doc, &cmds, &mut checked);
    }
    assert!(
        checked.contains("audit --baseline") && checked.contains("verify --evidence"),
        "{checked:?}"
    );
}

#[test]
fn the_in_cluster_job_uses_the_audit_service_account_and_real_flags() {
    let root = repo();
    let job = yaml(&root.join("deploy/audit-job.yaml"));
    let job: k8s_openapi::api::batch::v1::Job = serde_json::from_value(job).expect("a batch/v1 Job");
    let namespace = job.metadata.namespace.clone().expect("namespace");
    let pod = job.spec.expect("spec").template.spec.expect("pod spec");
    let account = pod.service_account_name.expect("serviceAccountName");
    // The ServiceAccount is the one deploy/rbac-audit.yaml creates and binds.
    let rbac = std::fs::read_to_string(root.join("deploy/rbac-audit.yaml")).unwrap();
    let docs: Vec<Value> = rbac
        .split("\n---")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str(d).expect("rbac-audit.yaml document"))
        .collect();
    assert!(
        docs.iter().any(|d| d["kind"] == "ServiceAccount"
            && d["metadata"]["name"] == account.as_str()
            && d["metadata"]["namespace"] == namespace.as_str()),
        "no ServiceAccount {namespace}/{account} in rbac-audit.yaml"
    );
    let args = pod.containers[0].args.clone().expect("args");
    let line = format!("locality {}", args.join(" "));
    let mut checked = BTreeSet::new();
    check("deploy/audit-job.yaml", &commands(&line), &mut checked);
    assert!(checked.contains("audit --fail-on"), "{checked:?}");
    let containerfile = std::fs::read_to_string(root.join("Containerfile")).unwrap();
    assert!(containerfile.contains("ENTRYPOINT [\"/usr/local/bin/locality\"]"));
}
