//! Command-line flags (clap derive). Parsing only: validation happens in the commands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::ui::ColorChoice;

mod sim;
mod simulate;
mod verify;
pub use sim::*;
pub use simulate::{Alternative, Override, ServiceSet, SimulateArgs, SimulateOutput, grace_period};
pub use verify::*;

/// Find the nodes where a Kubernetes Service is blind, and say why.
///
/// `locality` models exactly what kube-proxy does with a Service's traffic on every node
/// (internalTrafficPolicy, externalTrafficPolicy, trafficDistribution, topology hints,
/// EndpointSlice conditions) and reports where traffic is delivered, dropped or rejected.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Print only errors on stderr.
    #[arg(help_heading = "Global", short, long, global = true)]
    pub quiet: bool,
    /// More detail on stderr (repeat for more).
    #[arg(help_heading = "Global", short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Colour text reports: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(
        help_heading = "Global",
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: ColorChoice,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The routing verdict of every (service port, node, source, destination).
    ///
    /// Reads Kubernetes objects from files (`kubectl get -o json|yaml` dumps, manifests) and
    /// prints, per service port and IP family, what kube-proxy on each node does with
    /// traffic from a pod, from the node itself, and from outside: deliver (to which
    /// endpoints), drop (the client times out), reject (connection refused) or not proxied.
    ///
    /// Exit codes: 0 success, 1 runtime error, 2 usage or input error.
    Matrix(MatrixArgs),
    /// Why traffic to a Service is delivered, dropped or rejected on a node, step by step.
    ///
    /// Prints the endpoints and the conditions that make each usable or not, the hint
    /// decisions, the local and cluster sets, the rule kube-proxy writes, what the client
    /// sees, how sure the model is, and for drops and rejects what would change the outcome.
    ///
    /// Exit codes: 0 success, 1 runtime error, 2 usage or input error (unknown Service, node
    /// or pod: the closest names are suggested).
    Explain(ExplainArgs),
    /// Findings (rules LOC001–LOC021): blind nodes and the settings that cause them.
    ///
    /// Runs the audit rules (`locality audit rules` lists them) on the objects and prints,
    /// ranked by severity, what is
    /// wrong, on which Service, port and nodes (with their pod counts), the objects involved,
    /// a one-line fix and the Kubernetes documentation page; then, per Service port, how many
    /// nodes deliver, drop or reject. Works on manifests alone (no Nodes): rules that need
    /// cluster state are skipped with a note, and --nodes/--zones supply the cluster's shape.
    ///
    /// Exit codes: 0 success (findings do not fail the run unless --fail-on is given), 1
    /// runtime error, 2 usage or input error (unknown rule IDs are suggested), 3 a finding at
    /// or above --fail-on exists.
    #[command(args_conflicts_with_subcommands = true)]
    Audit(AuditArgs),
    /// The acceptance playbook: probe, case by case, that traffic locality holds.
    ///
    /// Creates one labelled namespace with client pods and, per case, its own Service and
    /// backends pinned to chosen nodes; asks the model what each case must observe from the
    /// state read back; probes through pods/proxy to agnhost netexec /dial; writes a complete
    /// evidence ledger; decides ACCEPT, REPAIR, RERUN or HOLD. The default target is the
    /// embedded SIMULATED cluster (four-nodes); --kubeconfig, --context or --live select a
    /// real cluster, where it creates and deletes only its own namespace.
    ///
    /// Ctrl-C or SIGTERM deletes the namespace (unless --keep) and writes the evidence of what
    /// was done.
    ///
    /// Exit codes: 0 ACCEPT, 1 runtime error, 2 usage error, 3 REPAIR, 4 RERUN, 5 HOLD,
    /// 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
    Verify(VerifyArgs),
    /// What-if on your cluster, SIMULATED: a rollout, a Service change, a pod deleted or
    /// replaced, or a node event.
    ///
    /// Seeds a simulated cluster from the state read (-f dumps, a live context read-only, or
    /// --sim): nodes, workloads with their rollout strategy, pods on their nodes with their
    /// readiness probes, grace periods and preStop delays, Services. Applies the change
    /// (--rollout KIND/NS/NAME, --set NS/NAME:FIELD=VALUE, --delete pod/NS/NAME, --replace
    /// FILE, --drain NODE, --node-down NODE) and
    /// runs it over virtual time, asking the model at every step which nodes are blind as
    /// kube-proxy has programmed them. Reports each node's drop windows, the client pods
    /// affected, the share of traffic that left its node, and every assumption made;
    /// --compare runs alternatives side by side.
    ///
    /// Exit codes: 0 success, 1 runtime error, 2 usage or input error.
    Simulate(Box<SimulateArgs>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout: `locality man > locality.1`.
    Man,
    /// Print locality's version and the Kubernetes releases its model knows (as
    /// `kubectl version --client`; also `--version`).
    Version,
    /// The embedded simulated cluster (a self-test and teaching aid, not a real cluster).
    #[command(subcommand)]
    Sim(SimCommand),
}

/// Output formats of `matrix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MatrixOutput {
    /// Per service port: how many nodes deliver, drop, reject; the blind nodes when few
    /// (the default on a terminal).
    Summary,
    /// The full table: one row per service port, node and route, endpoints as pod@node
    /// (the default when stdout is not a terminal; `table` is its former name).
    #[value(alias = "table")]
    Wide,
    /// The stable RoutingMatrix document (`kind: RoutingMatrix`, versioned).
    Json,
    /// The same document as YAML.
    Yaml,
}

impl MatrixOutput {
    /// The format `-o` chose, else the summary on a terminal and the full table elsewhere
    /// (a pipe, a file: what `grep` and scripts read).
    pub fn or_default(chosen: Option<MatrixOutput>, stdout_terminal: bool) -> MatrixOutput {
        chosen.unwrap_or(if stdout_terminal {
            MatrixOutput::Summary
        } else {
            MatrixOutput::Wide
        })
    }
}

/// `--proxy-mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProxyModeArg {
    /// kube-proxy in iptables mode.
    Iptables,
    /// kube-proxy in nftables mode.
    Nftables,
    /// kube-proxy in ipvs mode.
    Ipvs,
    /// kube-proxy in an unknown mode: cells where the modes disagree are marked.
    Unknown,
}

/// Where the objects come from and which Kubernetes is modelled (shared by commands).
///
/// With `-f`, objects are read from files; without it, from the current kubeconfig context
/// (read-only: get and list only), as kubectl would.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// Files or directories (recursive) with Kubernetes objects in JSON or YAML; `-` for stdin.
    /// Without -f (and without --sim) the live cluster of the current kubeconfig context is
    /// read.
    #[arg(help_heading = "Input", short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<PathBuf>,
    /// Read a fresh embedded simulated cluster instead (a self-test and teaching aid, not a
    /// real cluster): a built-in topology (three-zones, four-nodes, telemetry) or a topology
    /// YAML file, with the playbook fixture on topologies that describe nodes only, after
    /// --sim-at virtual seconds.
    #[arg(help_heading = "Input", 
        long,
        value_name = "TOPOLOGY",
        num_args = 0..=1,
        default_missing_value = "three-zones",
        conflicts_with = "filenames"
    )]
    pub sim: Option<String>,
    /// Virtual seconds the simulated cluster (--sim) runs before it is read.
    #[arg(
        help_heading = "Input",
        long,
        value_name = "SECONDS",
        default_value_t = 60,
        requires = "sim"
    )]
    pub sim_at: u64,
    /// Path to the kubeconfig file (live mode) [default: $KUBECONFIG, else ~/.kube/config].
    #[arg(help_heading = "Cluster", long, value_name = "FILE", conflicts_with_all = ["filenames", "sim"])]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (live mode) [default: the current context].
    #[arg(help_heading = "Cluster", long, value_name = "NAME", conflicts_with_all = ["filenames", "sim"])]
    pub context: Option<String>,
    /// List objects in all namespaces (live mode; the default unless -n is given).
    #[arg(help_heading = "Cluster", short = 'A', long, conflicts_with = "filenames")]
    pub all_namespaces: bool,
    /// How long one API request may take to answer completely, as kubectl's flag (e.g. 30s,
    /// 2m; a bare number is seconds; 0: no limit); also bounds the credential plugin
    /// (live mode) [default: 0; connections time out after 30s, a credential plugin after 60s].
    #[arg(help_heading = "Cluster", long, value_name = "DURATION", value_parser = parse_timeout, conflicts_with_all = ["filenames", "sim"])]
    pub request_timeout: Option<std::time::Duration>,
    /// How long the whole read of a live cluster may take, every request and the credential
    /// plugin included (e.g. 90s, 5m; 0: no limit) (live mode) [default: 10m].
    #[arg(help_heading = "Cluster", long, value_name = "DURATION", value_parser = parse_timeout, conflicts_with_all = ["filenames", "sim"])]
    pub live_timeout: Option<std::time::Duration>,
    /// Kubernetes version of the API server and controller manager (e.g. 1.35) [default: the
    /// server's version live; on files the newest kubeletVersion of the Nodes, else the newest
    /// supported].
    #[arg(help_heading = "Model", long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// kube-proxy version on every node [default: live, the kube-proxy DaemonSet's image tag;
    /// on files, each Node's kubeletVersion; else --kube-version].
    #[arg(help_heading = "Model", long, value_name = "VERSION")]
    pub kube_proxy_version: Option<String>,
    /// Feature-gate overrides, as a component's own --feature-gates, prefixed with the
    /// component: kube-apiserver:, kube-controller-manager: or kube-proxy: (without a prefix,
    /// every component that reads the gate); repeatable, e.g.
    /// `--feature-gates kube-proxy:PreferSameTrafficDistribution=false`. Refused like the
    /// component refuses it at its version (unknown or removed gate, locked gate set to
    /// false) [default: every gate at the release's default].
    #[arg(
        help_heading = "Model",
        long = "feature-gates",
        value_name = "[COMPONENT:]GATE=BOOL,…"
    )]
    pub feature_gates: Vec<String>,
    /// kube-proxy's proxy mode [default: live, read from the kube-proxy DaemonSet or ConfigMap;
    /// on files, iptables].
    #[arg(help_heading = "Model", long, value_enum)]
    pub proxy_mode: Option<ProxyModeArg>,
    /// Derive EndpointSlices from pods even where observed slices exist.
    #[arg(help_heading = "Model", long)]
    pub derive: bool,
    /// Accept input without a single Service: nothing to analyse is otherwise an error
    /// (exit 2), since the input was most likely not the one meant.
    #[arg(help_heading = "Input", long)]
    pub allow_empty: bool,
    /// The most bytes read from one -f input (e.g. 512MiB, 20GB) [default: 8GiB for stdin,
    /// FIFOs and devices, 32GiB for regular files].
    #[arg(help_heading = "Input", long, value_name = "SIZE", value_parser = parse_size)]
    pub max_input_size: Option<u64>,
}

/// A duration as kubectl's `--request-timeout` takes it: `30s`, `2m`, `1h30m`, a bare
/// number of seconds; `0` is no limit.
pub(crate) fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let seconds = if let Ok(n) = s.parse::<u64>() {
        n as f64
    } else {
        let d: jiff::SignedDuration = s
            .parse()
            .map_err(|e| format!("{e} (a duration such as 30s, 2m or 1h; 0 for none)"))?;
        if d.is_negative() {
            return Err("a timeout cannot be negative".into());
        }
        d.as_secs_f64()
    };
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// A size: a number of bytes, or with a unit (`512MiB`, `20GB`).
fn parse_size(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("{e} (a size such as 512MiB or 20GB)"))
}

/// Flags of `matrix`.
#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Inputs and versions.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Only this Service (NAMESPACE/NAME, or NAME with -n); repeatable.
    #[arg(help_heading = "Selection", long, value_name = "NS/NAME")]
    pub service: Vec<String>,
    /// Namespace for --service NAME, and the only namespace shown when set.
    #[arg(help_heading = "Selection", short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Only this node; repeatable.
    #[arg(help_heading = "Selection", long, value_name = "NAME")]
    pub node: Vec<String>,
    /// Output format [default: summary on a terminal, wide otherwise].
    #[arg(help_heading = "Output", short, long, value_enum)]
    pub output: Option<MatrixOutput>,
}

/// `--source` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    /// A pod on the node.
    Pod,
    /// The node itself or a hostNetwork pod.
    Host,
    /// A client outside the cluster whose packet arrives at the node.
    External,
}

/// `--dest` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DestArg {
    /// The Service's cluster IP.
    #[value(name = "clusterIP")]
    ClusterIp,
    /// The node's address at the Service's nodePort.
    #[value(name = "nodePort")]
    NodePort,
    /// A load balancer ingress IP.
    #[value(name = "loadBalancer")]
    LoadBalancer,
    /// One of the Service's externalIPs.
    #[value(name = "externalIP")]
    ExternalIp,
}

/// `--family` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FamilyArg {
    /// IPv4.
    #[value(name = "IPv4", alias = "ipv4")]
    IPv4,
    /// IPv6.
    #[value(name = "IPv6", alias = "ipv6")]
    IPv6,
}

/// Output formats of `explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainOutput {
    /// Plain words.
    Text,
    /// The same as data (`kind: Explanation`).
    Json,
}

/// Flags of `explain`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("where").required(true).args(["node", "pod"])))]
pub struct ExplainArgs {
    /// The Service: NAMESPACE/NAME, or NAME with -n (default namespace `default`).
    #[arg(value_name = "SERVICE")]
    pub service: String,
    /// Namespace of the Service (and of --pod).
    #[arg(help_heading = "Selection", short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// The node where the client is (or where external traffic arrives).
    #[arg(help_heading = "Selection", long, value_name = "NAME")]
    pub node: Option<String>,
    /// A client pod (NAME or NAMESPACE/NAME): its node is used.
    #[arg(help_heading = "Selection", long, value_name = "POD")]
    pub pod: Option<String>,
    /// Where the connection starts [default: pod; host for a hostNetwork --pod, whose
    /// traffic leaves from the node itself].
    #[arg(help_heading = "Selection", long, value_enum)]
    pub source: Option<SourceArg>,
    /// What the client connects to.
    #[arg(
        help_heading = "Selection",
        long = "dest",
        value_enum,
        default_value = "clusterIP"
    )]
    pub destination: DestArg,
    /// Only this service port (name or number) [default: every port].
    #[arg(help_heading = "Selection", long, value_name = "PORT")]
    pub port: Option<String>,
    /// Only this IP family of a dual-stack Service [default: every family].
    #[arg(help_heading = "Selection", long, value_enum)]
    pub family: Option<FamilyArg>,
    /// Inputs and versions.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Output format.
    #[arg(help_heading = "Output", short, long, value_enum, default_value = "text")]
    pub output: ExplainOutput,
}

/// Output formats of `audit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditOutput {
    /// For people: findings grouped by severity, then the per-Service summary (80 columns).
    Table,
    /// The stable AuditReport document (`kind: AuditReport`, versioned).
    Json,
    /// The same document as YAML.
    Yaml,
    /// Markdown for pull-request comments and CI job summaries.
    Markdown,
    /// SARIF 2.1.0 for code-scanning tools.
    Sarif,
    /// JUnit XML for CI test reports: a finding at or above --fail-on (any, without it) is a
    /// failure, a suppressed one is skipped.
    Junit,
    /// One self-contained HTML page with a Service × node grid (use --output-file).
    Html,
}

/// `--fail-on` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    /// Only errors fail the run.
    Error,
    /// Errors and warnings fail the run.
    Warning,
    /// Any finding fails the run.
    Info,
}

/// `audit`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// List the rules: ID, default severity, what each finds, the usual fix and the
    /// Kubernetes documentation page (as `kube-linter checks list`).
    Rules(AuditRulesArgs),
}

/// Output formats of `audit rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditRulesOutput {
    /// One block per rule.
    Text,
    /// A JSON array of `{id, severity, title, fix, docs}`.
    Json,
}

/// Flags of `audit rules`.
#[derive(Debug, Args)]
pub struct AuditRulesArgs {
    /// Output format.
    #[arg(short, long, value_enum, default_value = "text")]
    pub output: AuditRulesOutput,
}

/// Flags of `audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// `audit rules`: list the rules instead of auditing.
    #[command(subcommand)]
    pub command: Option<AuditCommand>,
    /// Inputs and versions.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Output format.
    #[arg(help_heading = "Output", short, long, value_enum, default_value = "table")]
    pub output: AuditOutput,
    /// Write the output to FILE instead of stdout.
    #[arg(help_heading = "Output", long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Exit with code 3 when a finding at or above this severity exists.
    #[arg(help_heading = "Rules", long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<SeverityArg>,
    /// Run only these rules (comma-separated or repeated, e.g. LOC001,LOC003).
    #[arg(
        help_heading = "Rules",
        long = "rule",
        value_name = "ID",
        value_delimiter = ','
    )]
    pub rules: Vec<String>,
    /// Do not run these rules (comma-separated or repeated).
    #[arg(
        help_heading = "Rules",
        long = "skip-rule",
        value_name = "ID",
        value_delimiter = ','
    )]
    pub skip_rules: Vec<String>,
    /// Only report Services of this namespace (the whole input is still read: clients in
    /// every namespace count).
    #[arg(help_heading = "Selection", short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Without Nodes in the input (manifests only): assume a cluster of N nodes [default: one
    /// per --zones entry].
    #[arg(help_heading = "Model", long, value_name = "N")]
    pub nodes: Option<usize>,
    /// Without Nodes in the input: the zones of the assumed nodes, dealt round-robin
    /// (comma-separated).
    #[arg(help_heading = "Model", long, value_name = "ZONES", value_delimiter = ',')]
    pub zones: Vec<String>,
    /// The team's configuration (rule severities, disabled rules, exemptions) [default: the
    /// nearest .locality.yaml in the working directory or a parent].
    #[arg(help_heading = "Rules", long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the effective configuration (YAML) and exit.
    #[arg(help_heading = "Output", long)]
    pub show_config: bool,
    /// Report only findings that are not in FILE, an earlier run's SARIF log or AuditReport
    /// (`-o json`/`-o yaml`): the others are counted as "in baseline", shown nowhere and never
    /// fail `--fail-on`.
    #[arg(help_heading = "Rules", help_heading = "Selection", long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}
