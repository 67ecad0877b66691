//! What a run creates, decided before anything is created: the client pods, and per setup
//! group its backends, DaemonSet, clients on the sampled nodes and Service. Pure: the run
//! ([`crate::setup`]) creates exactly these manifests, and `--dry-run` prints them
//! ([`dry_run`]) with the plan, so what a reviewer approves is what a run applies.

use std::fmt::Write as _;

use serde_json::Value;

use crate::cases::{Case, Client, Role, Setup};
use crate::fixture;
use crate::roles::Roles;

/// One backend pod of a group: its manifest, name, and whether it is meant to be Ready.
pub(crate) struct Backend {
    pub(crate) manifest: Value,
    pub(crate) name: String,
    pub(crate) ready: bool,
}

/// The backends of `setup`'s group on the role nodes that exist (a cluster without `N2`
/// leaves its backends out), Ready ones first.
pub(crate) fn backends(ns: &str, run: &str, setup: &Setup, roles: &Roles) -> Vec<Backend> {
    let mut out = Vec::new();
    for (list, ready) in [(setup.backends, true), (setup.unready, false)] {
        for role in list {
            let Some(node) = roles.node(*role) else { continue };
            out.push(Backend {
                manifest: fixture::backend(ns, run, setup, *role, node, ready),
                name: fixture::backend_name(setup.group, *role, ready),
                ready,
            });
        }
    }
    out
}

/// The pod clients created up front: on `N1`, `N2`, `N3`, and `N1z` when a case dials from it.
pub(crate) fn pod_client_roles(selected: &[&Case]) -> Vec<Role> {
    let mut roles = vec![Role::N1, Role::N2, Role::N3];
    if selected.iter().any(|c| c.client == Client::Pod(Role::N1z)) {
        roles.push(Role::N1z);
    }
    roles
}

/// `P`, `Pt`, `Pn`: the client of each sampled node (skipping, for `Pn`, the nodes that carry
/// one of its backends): (node, client pod, its manifest when it is created for the group
/// rather than one of the `pod_clients` created up front).
pub(crate) fn sampled_clients(
    ns: &str,
    run: &str,
    setup: &Setup,
    roles: &Roles,
    sampled: &[String],
    pod_clients: &[(Role, String)],
) -> Vec<(String, String, Option<Value>)> {
    let backend_nodes: Vec<&str> = setup
        .backends
        .iter()
        .chain(setup.unready)
        .filter_map(|r| roles.node(*r))
        .collect();
    let mut out = Vec::new();
    for (i, node) in sampled.iter().enumerate() {
        if setup.each_node && backend_nodes.contains(&node.as_str()) {
            continue;
        }
        let existing = pod_clients
            .iter()
            .find(|(r, _)| roles.node(*r) == Some(node.as_str()))
            .map(|(_, c)| c.clone());
        match existing {
            Some(c) => out.push((node.clone(), c, None)),
            None => {
                let name = format!("{}-{}", setup.group, fixture::sampled_client_name(i));
                let m = fixture::client_on(ns, run, &name, node);
                out.push((node.clone(), name, Some(m)));
            }
        }
    }
    out
}

/// Every manifest a run of `selected` creates up front, in creation order: the namespace, the
/// clients, then per setup group its backends, DaemonSet, sampled clients and Service. (The
/// run also creates short-lived objects as it goes: one-shot curl pods reading kube-proxy's
/// metrics, a second Service when a lag is re-measured, the rollout cases' replacement and
/// probe-loop pods.)
pub(crate) fn manifests(
    ns: &str,
    run: &str,
    roles: &Roles,
    sampled: &[String],
    selected: &[&Case],
) -> Vec<Value> {
    let mut out = vec![fixture::namespace(ns, run, true)];
    let mut pod_clients = Vec::new();
    for role in pod_client_roles(selected) {
        if let Some(node) = roles.node(role) {
            out.push(fixture::client(ns, run, role, node));
            pod_clients.push((role, fixture::client_name(role)));
        }
    }
    let mut hosts: Vec<Role> = Vec::new();
    for c in selected {
        if let Client::Host(role) = c.client
            && !hosts.contains(&role)
            && let Some(node) = roles.node(role)
        {
            hosts.push(role);
            out.push(fixture::host_client(ns, run, role, node));
        }
    }
    let mut groups: Vec<&Setup> = Vec::new();
    for c in selected {
        if !groups.iter().any(|g| g.group == c.setup.group) {
            groups.push(&c.setup);
        }
    }
    for setup in groups {
        out.extend(backends(ns, run, setup, roles).into_iter().map(|b| b.manifest));
        if setup.daemonset {
            out.push(fixture::daemonset(ns, run, setup, sampled));
        }
        if setup.daemonset || setup.each_node {
            out.extend(
                sampled_clients(ns, run, setup, roles, sampled, &pod_clients)
                    .into_iter()
                    .filter_map(|(_, _, m)| m),
            );
        }
        if setup.service {
            out.push(fixture::service(ns, run, setup));
        }
    }
    out
}

/// `--dry-run`'s output: the plan as YAML comments (roles, sampled nodes, every case with its
/// setup, client and declared outcome), then the manifests as one YAML stream, so it can be
/// reviewed or fed to `kubectl apply --dry-run=server -f -`.
pub fn dry_run(
    ns: &str,
    run: &str,
    images: &fixture::Images,
    roles: &Roles,
    sampled: &[String],
    selected: &[&Case],
    lacking: Option<&str>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# locality verify --dry-run: nothing was created");
    let _ = writeln!(s, "# namespace: {ns} (labelled {}={run})", fixture::RUN_LABEL);
    for (role, node) in &roles.nodes {
        let _ = writeln!(s, "# role {}: {node}", role.as_str());
    }
    for why in &roles.excluded {
        let _ = writeln!(s, "# left out: {why}");
    }
    let _ = writeln!(s, "# nodes probed by P, Pt, Pn: {}", sampled.join(", "));
    if let Some(why) = lacking {
        let _ = writeln!(s, "# nothing would be created: {why}; the decision would be HOLD");
        return s;
    }
    let _ = writeln!(s, "# cases, in run order:");
    for c in selected {
        let _ = writeln!(s, "#   {:<4} [{}] {}", c.id, c.setup.group, c.description);
    }
    for m in manifests(ns, run, roles, sampled, selected) {
        s.push_str("---\n");
        s.push_str(&crate::ledger::yaml(&fixture::with_images(&m, images)));
        if !s.ends_with('\n') {
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roles::four_nodes;

    #[test]
    fn sampled_nodes_reuse_the_role_clients_and_pn_skips_its_backend_node() {
        let roles = four_nodes(true);
        let sampled: Vec<String> = ["node-a", "node-d"].map(String::from).to_vec();
        let pods = [(Role::N1, "client-n1".to_string())];
        let p = crate::cases::case("P").unwrap().setup;
        let got = sampled_clients("ns", "r", &p, &roles, &sampled, &pods);
        assert_eq!((got[0].1.as_str(), got[0].2.is_none()), ("client-n1", true));
        assert_eq!(got[1].1, "p-client-s1");
        assert_eq!(got[1].2.as_ref().unwrap()["metadata"]["name"], "p-client-s1");
        let pn = crate::cases::case("Pn").unwrap().setup;
        let got = sampled_clients("ns", "r", &pn, &roles, &sampled, &pods);
        assert_eq!(
            got.len(),
            1,
            "node-a carries Pn's backend: {:?}",
            got.iter().map(|g| &g.1).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_plan_creates_each_group_once_and_only_on_present_roles() {
        let roles = four_nodes(true);
        let sampled: Vec<String> = ["node-a", "node-b", "node-c", "node-d"]
            .map(String::from)
            .to_vec();
        let all: Vec<&Case> = crate::cases::default_run().collect();
        let ms = manifests("ns", "r", &roles, &sampled, &all);
        let names: Vec<String> = ms
            .iter()
            .map(|m| {
                format!(
                    "{}/{}",
                    m["kind"].as_str().unwrap(),
                    m["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert_eq!(names[0], "Namespace/ns");
        for want in [
            "Pod/client-n1",
            "Pod/host-client-n1",
            "Service/b",
            "Pod/b-be-n1",
            "DaemonSet/p",
            "Service/g2",
            "Service/g3",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
        }
        assert!(
            !names.iter().any(|n| n == "Service/x2"),
            "external cases only when asked"
        );
        // The Service comes after its backends, the DaemonSet before its clients.
        let at = |n: &str| names.iter().position(|x| x == n).unwrap();
        assert!(at("Pod/b-be-n1") < at("Service/b"));
        let text = dry_run("ns", "r", &Default::default(), &roles, &sampled, &all, None);
        assert!(text.starts_with("# locality verify --dry-run: nothing was created"));
        assert_eq!(text.matches("---\n").count(), names.len());
    }
}
