//! The rule table as text: `iptables-save`, `nft list table` or `ipvsadm -Ln` style.

use std::fmt::Write as _;
use std::net::IpAddr;

use locality_model::objects::IpFamily;

use super::{ChainKind, ProxyMode, RuleTable, RuleTarget, ServicePortRules, SimEndpoint, SimKubeProxy};
use crate::time::rfc3339;

impl SimKubeProxy {
    /// The rule table as text: `iptables-save` style (iptables), `nft list table` style
    /// (nftables) or `ipvsadm -Ln` style (ipvs).
    pub fn rules_text(&self) -> String {
        let mut out = String::new();
        let synced = self.last_sync.map_or_else(|| "never".to_string(), rfc3339);
        let _ = writeln!(
            out,
            "# Simulated kube-proxy ({} mode, profile {}) on node {}, rules synced {synced}",
            self.profile.mode.as_str(),
            self.profile,
            self.node
        );
        let _ = writeln!(
            out,
            "# (simulated cluster: a rendering of the simulated rule table, not real kernel state)"
        );
        match self.profile.mode {
            ProxyMode::Iptables => {
                for fam in [IpFamily::IPv4, IpFamily::IPv6] {
                    let entries: Vec<&ServicePortRules> =
                        self.table.entries().filter(|e| e.family == fam).collect();
                    if fam == IpFamily::IPv6 && entries.is_empty() {
                        continue;
                    }
                    let tool = if fam == IpFamily::IPv4 {
                        "iptables-save"
                    } else {
                        "ip6tables-save"
                    };
                    let _ = writeln!(out, "# {tool}");
                    render_iptables(&mut out, &entries);
                }
            }
            ProxyMode::Nftables => render_nftables(&mut out, &self.table),
            ProxyMode::Ipvs => render_ipvs(&mut out, &self.table),
        }
        out
    }
}

/// A kube-proxy style chain hash: 16 base32 characters of a 80-bit FNV-based digest.
fn chain_hash(parts: &[&str]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut h1: u64 = 0xcbf2_9ce4_8422_2325;
    let mut h2: u64 = 0x8422_2325_cbf2_9ce4;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0xff)) {
            h1 = (h1 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            h2 = (h2 ^ u64::from(b))
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    let mut out = String::with_capacity(16);
    for i in 0..16 {
        let v = if i < 12 {
            h1 >> (i * 5)
        } else {
            h2 >> ((i - 12) * 5)
        };
        out.push(ALPHABET[(v & 31) as usize] as char);
    }
    out
}

fn svc_chain(e: &ServicePortRules, prefix: &str) -> String {
    let fam = if e.family == IpFamily::IPv6 { "6" } else { "" };
    format!(
        "{prefix}{}",
        chain_hash(&[&e.port_name_string(), e.protocol.as_str(), fam])
    )
}

fn sep_chain(e: &ServicePortRules, ep: &SimEndpoint) -> String {
    format!(
        "KUBE-SEP-{}",
        chain_hash(&[&e.port_name_string(), e.protocol.as_str(), &ep.to_string()])
    )
}

fn host_cidr(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(_) => format!("{ip}/32"),
        IpAddr::V6(_) => format!("{ip}/128"),
    }
}

fn proto(e: &ServicePortRules) -> String {
    e.protocol.as_str().to_ascii_lowercase()
}

fn render_iptables(out: &mut String, entries: &[&ServicePortRules]) {
    // filter table
    out.push_str("*filter\n:KUBE-EXTERNAL-SERVICES - [0:0]\n:KUBE-SERVICES - [0:0]\n");
    for e in entries {
        let name = e.port_name_string();
        let p = proto(e);
        let (target, why) = match e.internal {
            RuleTarget::Reject => ("REJECT", "has no endpoints"),
            RuleTarget::Drop => ("DROP", "has no local endpoints"),
            _ => ("", ""),
        };
        if !target.is_empty()
            && let Some(ip) = e.cluster_ip
        {
            let _ = writeln!(
                out,
                "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} {why}\" -m {p} --dport {} -j {target}",
                host_cidr(&ip),
                e.port
            );
        }
        let (target, why) = match e.external {
            RuleTarget::Reject => ("REJECT", "has no endpoints"),
            RuleTarget::Drop => ("DROP", "has no local endpoints"),
            _ => ("", ""),
        };
        if !target.is_empty() {
            for ip in e.external_ips.iter().chain(&e.lb_ips) {
                let _ = writeln!(
                    out,
                    "-A KUBE-EXTERNAL-SERVICES -d {} -p {p} -m comment --comment \"{name} {why}\" -m {p} --dport {} -j {target}",
                    host_cidr(ip),
                    e.port
                );
            }
            if e.node_port != 0 {
                let _ = writeln!(
                    out,
                    "-A KUBE-EXTERNAL-SERVICES -m comment --comment \"{name} {why}\" -m addrtype --dst-type LOCAL -p {p} -m {p} --dport {} -j {target}",
                    e.node_port
                );
            }
        }
    }
    out.push_str("COMMIT\n");

    // nat table
    out.push_str("*nat\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n:KUBE-SERVICES - [0:0]\n");
    let mut chains: Vec<String> = Vec::new();
    let mut rules: Vec<String> = Vec::new();
    let mut services_rules: Vec<String> = Vec::new();
    let mut nodeport_rules: Vec<String> = Vec::new();
    for e in entries {
        let name = e.port_name_string();
        let p = proto(e);
        let svc = svc_chain(e, "KUBE-SVC-");
        let svl = svc_chain(e, "KUBE-SVL-");
        let ext = svc_chain(e, "KUBE-EXT-");
        let cluster = e.cluster.as_ref().filter(|c| !c.is_empty());
        let local = e.local.as_ref();
        if cluster.is_some() {
            chains.push(svc.clone());
        }
        if e.internal_local || e.external_local {
            chains.push(svl.clone());
        }
        if let (Some(ip), RuleTarget::Endpoints { chain, .. }) = (e.cluster_ip, &e.internal) {
            let to = if *chain == ChainKind::Local { &svl } else { &svc };
            services_rules.push(format!(
                "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} cluster IP\" -m {p} --dport {} -j {to}",
                host_cidr(&ip),
                e.port
            ));
        }
        let ext_exists =
            e.has_endpoints && (e.node_port != 0 || !e.external_ips.is_empty() || !e.lb_ips.is_empty());
        if ext_exists {
            chains.push(ext.clone());
            for ip in &e.external_ips {
                services_rules.push(format!(
                    "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} external IP\" -m {p} --dport {} -j {ext}",
                    host_cidr(ip),
                    e.port
                ));
            }
            for ip in &e.lb_ips {
                services_rules.push(format!(
                    "-A KUBE-SERVICES -d {} -p {p} -m comment --comment \"{name} loadbalancer IP\" -m {p} --dport {} -j {ext}",
                    host_cidr(ip),
                    e.port
                ));
            }
            if e.node_port != 0 {
                nodeport_rules.push(format!(
                    "-A KUBE-NODEPORTS -p {p} -m comment --comment \"{name}\" -m {p} --dport {} -j {ext}",
                    e.node_port
                ));
            }
            if e.external_local {
                rules.push(format!(
                    "-A {ext} -m comment --comment \"pod traffic for {name} external destinations\" -j {svc}"
                ));
                rules.push(format!(
                    "-A {ext} -m comment --comment \"masquerade LOCAL traffic for {name} external destinations\" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ"
                ));
                rules.push(format!(
                    "-A {ext} -m comment --comment \"route LOCAL traffic for {name} external destinations\" -m addrtype --src-type LOCAL -j {svc}"
                ));
                if local.is_some_and(|l| !l.is_empty()) {
                    rules.push(format!("-A {ext} -j {svl}"));
                }
            } else {
                rules.push(format!(
                    "-A {ext} -m comment --comment \"masquerade traffic for {name} external destinations\" -j KUBE-MARK-MASQ"
                ));
                rules.push(format!("-A {ext} -j {svc}"));
            }
        }
        let jump_list = |chain: &str, set: &[usize], rules: &mut Vec<String>| {
            let n = set.len();
            for (i, &idx) in set.iter().enumerate() {
                let ep = &e.endpoints[idx];
                let sep = sep_chain(e, ep);
                if i + 1 < n {
                    rules.push(format!(
                        "-A {chain} -m comment --comment \"{name} -> {ep}\" -m statistic --mode random --probability {:.10} -j {sep}",
                        1.0 / (n - i) as f64
                    ));
                } else {
                    rules.push(format!(
                        "-A {chain} -m comment --comment \"{name} -> {ep}\" -j {sep}"
                    ));
                }
            }
        };
        if let Some(c) = cluster {
            jump_list(&svc, c, &mut rules);
        }
        if let Some(l) = local.filter(|l| !l.is_empty()) {
            jump_list(&svl, l, &mut rules);
        }
        for idx in e.reachable() {
            let ep = &e.endpoints[idx];
            let sep = sep_chain(e, ep);
            chains.push(sep.clone());
            rules.push(format!(
                "-A {sep} -s {} -m comment --comment \"{name}\" -j KUBE-MARK-MASQ",
                host_cidr(&ep.ip)
            ));
            rules.push(format!(
                "-A {sep} -p {p} -m comment --comment \"{name}\" -m {p} -j DNAT --to-destination {ep}"
            ));
        }
    }
    chains.sort();
    chains.dedup();
    for c in &chains {
        let _ = writeln!(out, ":{c} - [0:0]");
    }
    for r in services_rules {
        let _ = writeln!(out, "{r}");
    }
    out.push_str(
        "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n",
    );
    for r in nodeport_rules.into_iter().chain(rules) {
        let _ = writeln!(out, "{r}");
    }
    out.push_str("COMMIT\n");
}

fn target_word(t: &RuleTarget) -> &'static str {
    match t {
        RuleTarget::Reject => "goto reject-chain",
        RuleTarget::Drop => "drop",
        RuleTarget::NoRealServers => "no real servers",
        RuleTarget::ReplyLost => "reply lost",
        RuleTarget::Endpoints { .. } => "",
    }
}

fn render_nftables(out: &mut String, table: &RuleTable) {
    for fam in [IpFamily::IPv4, IpFamily::IPv6] {
        let entries: Vec<&ServicePortRules> = table.entries().filter(|e| e.family == fam).collect();
        if fam == IpFamily::IPv6 && entries.is_empty() {
            continue;
        }
        let (t, addr) = if fam == IpFamily::IPv4 {
            ("ip", "ipv4_addr")
        } else {
            ("ip6", "ipv6_addr")
        };
        let _ = writeln!(out, "table {t} kube-proxy {{");
        let _ = writeln!(
            out,
            "\tmap no-endpoint-services {{\n\t\ttype {addr} . inet_proto . inet_service : verdict"
        );
        let mut elems = Vec::new();
        for e in &entries {
            let p = proto(e);
            let name = e.port_name_string();
            if let (Some(ip), w) = (e.cluster_ip, target_word(&e.internal))
                && !w.is_empty()
            {
                let why = if e.internal == RuleTarget::Drop {
                    "has no local endpoints"
                } else {
                    "has no endpoints"
                };
                elems.push(format!("{ip} . {p} . {} comment \"{name} {why}\" : {w}", e.port));
            }
            let w = target_word(&e.external);
            if !w.is_empty() {
                let why = if e.external == RuleTarget::Drop {
                    "has no local endpoints"
                } else {
                    "has no endpoints"
                };
                for ip in e.external_ips.iter().chain(&e.lb_ips) {
                    elems.push(format!("{ip} . {p} . {} comment \"{name} {why}\" : {w}", e.port));
                }
            }
        }
        let _ = writeln!(out, "\t\telements = {{ {} }}\n\t}}", elems.join(",\n\t\t\t     "));
        let mut np = Vec::new();
        for e in &entries {
            let w = target_word(&e.external);
            if e.node_port != 0 && !w.is_empty() {
                let why = if e.external == RuleTarget::Drop {
                    "has no local endpoints"
                } else {
                    "has no endpoints"
                };
                np.push(format!(
                    "{} . {} comment \"{} {why}\" : {w}",
                    proto(e),
                    e.node_port,
                    e.port_name_string()
                ));
            }
        }
        let _ = writeln!(
            out,
            "\tmap no-endpoint-nodeports {{\n\t\ttype inet_proto . inet_service : verdict\n\t\telements = {{ {} }}\n\t}}",
            np.join(",\n\t\t\t     ")
        );
        let mut sips = Vec::new();
        for e in &entries {
            if let (Some(ip), RuleTarget::Endpoints { chain, .. }) = (e.cluster_ip, &e.internal) {
                let c = if *chain == ChainKind::Local {
                    "local"
                } else {
                    "cluster"
                };
                sips.push(format!(
                    "{ip} . {} . {} : goto service-{}-{c}",
                    proto(e),
                    e.port,
                    svc_chain(e, "").to_ascii_lowercase()
                ));
            }
        }
        let _ = writeln!(
            out,
            "\tmap service-ips {{\n\t\ttype {addr} . inet_proto . inet_service : verdict\n\t\telements = {{ {} }}\n\t}}",
            sips.join(",\n\t\t\t     ")
        );
        for e in &entries {
            let h = svc_chain(e, "").to_ascii_lowercase();
            for (c, set) in [("cluster", e.cluster.as_ref()), ("local", e.local.as_ref())] {
                let Some(set) = set.filter(|s| !s.is_empty()) else {
                    continue;
                };
                let eps: Vec<String> = set
                    .iter()
                    .enumerate()
                    .map(|(i, &idx)| format!("{i} : goto endpoint-{}", e.endpoints[idx]))
                    .collect();
                let _ = writeln!(
                    out,
                    "\tchain service-{h}-{c} {{\n\t\tcomment \"{}\"\n\t\tnumgen random mod {} vmap {{ {} }}\n\t}}",
                    e.port_name_string(),
                    set.len(),
                    eps.join(", ")
                );
            }
        }
        out.push_str("}\n");
    }
}

fn render_ipvs(out: &mut String, table: &RuleTable) {
    out.push_str("IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n");
    for e in table.entries() {
        let Some(ip) = e.cluster_ip else { continue };
        let addr = match ip {
            IpAddr::V4(v) => format!("{v}:{}", e.port),
            IpAddr::V6(v) => format!("[{v}]:{}", e.port),
        };
        let _ = writeln!(
            out,
            "{:<4} {addr} rr    # {} cluster IP",
            e.protocol.as_str(),
            e.port_name_string()
        );
        if let RuleTarget::Endpoints { endpoints, .. } = &e.internal {
            for &i in endpoints.iter() {
                let _ = writeln!(
                    out,
                    "  -> {:<28} Masq    1      0          0",
                    e.endpoints[i].to_string()
                );
            }
        }
    }
}
