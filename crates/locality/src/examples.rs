//! The EXAMPLES section of every command's `--help` (clap `after_help`), and the top-level
//! help's exit-code table ([`crate::error::EXIT_CODES`]).
//!
//! Examples are data, so a test runs every one of them that needs no real cluster (from
//! the repository root, against `examples/` and the embedded simulated cluster) and checks
//! the exit code written here; the others are parsed only.

/// One example line of a command's help.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The subcommand path whose help shows it (`audit`, `sim rules`).
    pub command: &'static str,
    /// The command line, as typed (no shell syntax: no pipes, quotes or redirections).
    pub line: &'static str,
    /// What it does.
    pub what: &'static str,
    /// The exit code it ends with.
    pub exit: u8,
    /// False when it needs a real cluster or runs until interrupted: tests parse it only.
    pub runs_here: bool,
}

const fn ex(command: &'static str, line: &'static str, what: &'static str) -> Example {
    Example {
        command,
        line,
        what,
        exit: 0,
        runs_here: true,
    }
}

const fn needs_cluster(command: &'static str, line: &'static str, what: &'static str) -> Example {
    Example {
        command,
        line,
        what,
        exit: 0,
        runs_here: false,
    }
}

/// Every example, grouped by command.
pub const EXAMPLES: &[Example] = &[
    ex(
        "matrix",
        "locality matrix -f examples/three-zones.json -o summary",
        "nodes per verdict and the blind nodes of every service port",
    ),
    ex(
        "matrix",
        "locality matrix -f examples/three-zones.json --service internal-acceptance/myservice",
        "every route of one Service, as a table",
    ),
    ex(
        "matrix",
        "locality matrix -f examples/three-zones.json -o json --node node-c",
        "the stable RoutingMatrix document for one node",
    ),
    needs_cluster(
        "matrix",
        "locality matrix --context kind-kind -o summary",
        "the cluster of a kubeconfig context, read-only",
    ),
    ex(
        "explain",
        "locality explain internal-acceptance/myservice --node node-c -f examples/three-zones.json",
        "why node-c drops, step by step",
    ),
    ex(
        "explain",
        "locality explain myservice --node node-c --sim -o json",
        "the same on the simulated cluster, as data",
    ),
    ex(
        "audit",
        "locality audit -f examples/telemetry-30-nodes.json",
        "findings by severity, then nodes per verdict",
    ),
    ex(
        "audit",
        "locality audit -f examples/telemetry-30-nodes.json -o markdown",
        "for a pull-request comment or a CI job summary",
    ),
    Example {
        command: "audit",
        line: "locality audit -f examples/telemetry-30-nodes.json --fail-on warning -o sarif",
        what: "SARIF for code scanning; exit 3 when a warning or error is found",
        exit: 3,
        runs_here: true,
    },
    ex(
        "audit",
        "locality audit --sim=telemetry --rule LOC001,LOC004",
        "two rules on the simulated 30-node cluster",
    ),
    needs_cluster(
        "audit",
        "locality audit -A --context prod -o html --output-file audit.html",
        "a live cluster as one self-contained HTML page",
    ),
    ex(
        "audit rules",
        "locality audit rules",
        "every rule: ID, severity, what it finds, the usual fix, the documentation page",
    ),
    ex(
        "audit rules",
        "locality audit rules -o json",
        "the same list as a JSON array",
    ),
    Example {
        command: "verify",
        line: "locality verify --only B1,C",
        what: "two cases of the playbook on the simulated cluster: ACCEPT",
        exit: 0,
        runs_here: true,
    },
    Example {
        command: "verify",
        line: "locality verify --only C --profile node-c=ignores-local-policy",
        what: "a data plane that ignores the Local policy is caught: HOLD, exit 5",
        exit: 5,
        runs_here: true,
    },
    needs_cluster(
        "verify",
        "locality verify --context kind-kind --owner alice",
        "a real cluster (creates and deletes only its own namespace)",
    ),
    ex(
        "simulate",
        "locality simulate -f examples/telemetry-incident.json --rollout ds/monitoring/node-agent",
        "each node's drop windows while the agent DaemonSet rolls out (maxSurge 0)",
    ),
    ex(
        "simulate",
        "locality simulate --sim=telemetry --rollout ds/telemetry/agent --compare maxUnavailable=3",
        "the rollout as given and with maxUnavailable 3, in one table",
    ),
    ex(
        "simulate",
        "locality simulate --sim --set default/myservice:internalTrafficPolicy=Cluster -o json",
        "what changing the policy does, as data",
    ),
    needs_cluster(
        "sim serve",
        "locality sim serve --kubeconfig-out /tmp/sim.kubeconfig",
        "serve the simulated cluster to kubectl until Ctrl-C",
    ),
    ex(
        "sim rules",
        "locality sim rules node-c",
        "the simulated kube-proxy's rules on node-c (a DROP rule)",
    ),
    ex("completions", "locality completions bash", "bash completions"),
    ex("man", "locality man", "the man page (roff)"),
    ex(
        "version",
        "locality version",
        "the version and the Kubernetes releases modelled",
    ),
];

/// The EXAMPLES section of `command`'s help, empty when it has none.
pub fn section(command: &str) -> String {
    let mut s = String::new();
    for e in EXAMPLES.iter().filter(|e| e.command == command) {
        if s.is_empty() {
            s.push_str("Examples:\n");
        }
        s.push_str(&format!("  # {}\n  {}\n", e.what, e.line));
    }
    s
}

/// The command line of `locality`: the derived flags with every subcommand's EXAMPLES
/// section and the exit-code table added to the help.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = crate::cli::Cli::command().after_help(crate::error::exit_codes_help());
    let names: Vec<String> = cmd.get_subcommands().map(|c| c.get_name().to_string()).collect();
    for name in names {
        let text = section(&name);
        cmd = cmd.mut_subcommand(&name, |mut sub| {
            if !text.is_empty() {
                sub = sub.after_help(text.clone());
            }
            let inner: Vec<String> = sub.get_subcommands().map(|c| c.get_name().to_string()).collect();
            for n in inner {
                let text = section(&format!("{name} {n}"));
                if !text.is_empty() {
                    sub = sub.mut_subcommand(&n, |c| c.after_help(text));
                }
            }
            sub
        });
    }
    cmd
}
