//! Flags of `locality sim` (the simulated cluster: `sim rules`, `sim serve`) and the API faults
//! its server can inject (docs/sim-serve.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

/// `locality sim` subcommands.
#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Serve a simulated cluster over the Kubernetes API on 127.0.0.1, for kubectl and kube-rs.
    ///
    /// Writes a kubeconfig (context `locality-sim`) once listening, prints its path, and runs
    /// until Ctrl-C. Virtual time runs `--speed` times faster than the wall clock. Everything
    /// it serves is simulated: it is a self-test of locality, not evidence about a real data
    /// plane.
    Serve(SimServeArgs),
    /// Print a node's simulated kube-proxy rule table, `iptables-save` style.
    ///
    /// Runs the simulated cluster (virtual time, deterministic for a seed) until its
    /// controllers and kube-proxies have settled, then prints the rules the simulated
    /// kube-proxy of NODE programmed. The simulated kube-proxy is an implementation separate
    /// from the model's, so its rules are a cross-check, not a copy.
    Rules(SimRulesArgs),
}

/// What simulated cluster to build (shared by `sim` commands).
#[derive(Debug, Args)]
pub struct SimClusterArgs {
    /// Built-in topology (three-zones, four-nodes, telemetry) or a topology YAML file.
    #[arg(long, value_name = "NAME|FILE", default_value = "three-zones")]
    pub topology: String,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Data-plane profile of a node (NODE=PROFILE, e.g. node-c=kube-proxy:nftables,
    /// node-a=ignores-local-policy); repeatable.
    #[arg(long, value_name = "NODE=PROFILE", value_parser = parse_node_profile)]
    pub profile: Vec<NodeProfile>,
    /// Feature-gate overrides of the simulated components, as for `matrix`
    /// (`[COMPONENT:]GATE=BOOL,…`, repeatable): the simulated EndpointSlice controller honours
    /// kube-controller-manager's, every simulated kube-proxy kube-proxy's; the simulated API
    /// server keeps every field whatever its gates. Refused as the component's release would
    /// refuse them.
    #[arg(long = "feature-gates", value_name = "[COMPONENT:]GATE=BOOL,…")]
    pub feature_gates: Vec<String>,
    /// Workloads to create: `playbook` (the acceptance playbook's ITP Local Service with
    /// backends on node-a and node-b and a client on every node), `none`, or `auto`
    /// (`playbook` on topologies that describe nodes only).
    #[arg(long, value_enum, default_value = "auto")]
    pub fixture: FixtureArg,
}

/// Flags of `sim rules`.
#[derive(Debug, Args)]
pub struct SimRulesArgs {
    /// The node.
    #[arg(value_name = "NODE")]
    pub node: String,
    /// The simulated cluster.
    #[command(flatten)]
    pub cluster: SimClusterArgs,
    /// Virtual seconds to run before printing.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30,
        conflicts_with = "kubeconfig"
    )]
    pub at: u64,
    /// Read the rules of the cluster `locality sim serve` is serving (the kubeconfig it wrote)
    /// instead of building a fresh simulated cluster.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["topology", "seed", "profile", "fixture"])]
    pub kubeconfig: Option<PathBuf>,
}

/// Flags of `sim serve`.
#[derive(Debug, Args)]
pub struct SimServeArgs {
    /// The simulated cluster.
    #[command(flatten)]
    pub cluster: SimClusterArgs,
    /// Virtual seconds per wall-clock second.
    #[arg(long, default_value_t = 10.0)]
    pub speed: f64,
    /// Port on 127.0.0.1 (0: a free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Where to write the kubeconfig [default: a file in the temporary directory].
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// The simulated store's quota, in objects: creates past it are refused as etcd refuses
    /// writes past --quota-backend-bytes (500 "etcdserver: mvcc: database space exceeded");
    /// deletes still go through.
    #[arg(long, value_name = "N", default_value_t = locality_apiserver::MAX_OBJECTS,
          value_parser = clap::value_parser!(usize))]
    pub max_objects: usize,
    /// Fault injection of the simulated API server.
    #[command(flatten)]
    pub api_faults: ApiFaultArgs,
}

/// Fault injection of the simulated API server (`sim serve`, and `verify`'s simulated
/// target): added latency, 5xx answers and 409s on create per verb, dropped connections.
/// Faults are drawn per request from a generator seeded with the simulation's seed.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Simulated API server faults")]
pub struct ApiFaultArgs {
    /// Wall-clock delay the simulated API server adds before every answer (discovery and
    /// /version included), e.g. 200ms, 1.5s, 2m.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub api_latency: Option<Duration>,
    /// Fraction of resource requests per verb answered with a 5xx (--api-error-code) instead,
    /// e.g. get=0.1,create=0.05; verbs: get, list, watch, create, update, patch, delete, proxy
    /// (pods/proxy). `conflict=FRACTION` answers that fraction of creates 409 Conflict.
    /// Comma-separated or repeated; a later value for the same key wins. Discovery, OpenAPI
    /// and /version are never failed.
    #[arg(
        long,
        value_name = "VERB=FRACTION[,...]",
        value_delimiter = ',',
        value_parser = parse_api_fault
    )]
    pub api_faults: Vec<ApiFault>,
    /// The 5xx code --api-faults answers (503 ServiceUnavailable, 504 Timeout, other 5xx
    /// InternalError) [default: 500].
    #[arg(long, value_name = "CODE", value_parser = clap::value_parser!(u16).range(500..=599))]
    pub api_error_code: Option<u16>,
    /// Fraction of resource requests whose connection the simulated API server closes
    /// without answering.
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub drop_rate: Option<f64>,
    /// Every DURATION, an etcd compaction: open watches end and a watch from an older
    /// resourceVersion gets 410 Gone, so clients must re-list (e.g. 30s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub expire_watches: Option<Duration>,
}

impl ApiFaultArgs {
    /// The simulated API server's [`Faults`](locality_apiserver::Faults), drawn with `seed`.
    pub fn faults(&self, seed: u64) -> locality_apiserver::Faults {
        let mut faults = locality_apiserver::Faults {
            seed,
            error_code: self.api_error_code.unwrap_or(0),
            latency: self.api_latency.unwrap_or_default(),
            drop_rate: self.drop_rate.unwrap_or(0.0),
            expire_watches: self.expire_watches,
            ..locality_apiserver::Faults::default()
        };
        for f in &self.api_faults {
            match *f {
                ApiFault::Error(verb, rate) => {
                    faults.error_rate.insert(verb, rate);
                }
                ApiFault::ConflictOnCreate(rate) => faults.conflict_on_create = rate,
            }
        }
        faults
    }

    /// Whether any fault flag was given.
    pub fn any(&self) -> bool {
        self.api_latency.is_some()
            || !self.api_faults.is_empty()
            || self.api_error_code.is_some()
            || self.drop_rate.is_some()
            || self.expire_watches.is_some()
    }
}

/// One `--api-faults` entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ApiFault {
    /// `VERB=FRACTION`: that fraction of the verb's requests answered with a 5xx.
    Error(locality_apiserver::Verb, f64),
    /// `conflict=FRACTION`: that fraction of creates answered 409 Conflict.
    ConflictOnCreate(f64),
}

const FAULT_VERBS: [locality_apiserver::Verb; 8] = {
    use locality_apiserver::Verb;
    [
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Create,
        Verb::Update,
        Verb::Patch,
        Verb::Delete,
        Verb::Proxy,
    ]
};

/// `VERB=FRACTION` or `conflict=FRACTION` (`--api-faults`).
fn parse_api_fault(s: &str) -> Result<ApiFault, String> {
    let names = || {
        FAULT_VERBS
            .iter()
            .map(|v| v.as_str())
            .chain(["conflict"])
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some((key, value)) = s.split_once('=') else {
        return Err(format!("expected VERB=FRACTION (VERB one of {})", names()));
    };
    let rate = parse_fraction(value.trim())?;
    let key = key.trim().to_ascii_lowercase();
    if key == "conflict" {
        return Ok(ApiFault::ConflictOnCreate(rate));
    }
    FAULT_VERBS
        .iter()
        .find(|v| v.as_str() == key)
        .map(|v| ApiFault::Error(*v, rate))
        .ok_or_else(|| format!("unknown verb {key:?}: expected one of {}", names()))
}

/// A fraction in `[0, 1]` (`--drop-rate`, `--api-faults`).
fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("expected a fraction between 0 and 1, not {s:?}")),
    }
}

/// A duration with a unit: `250ms`, `1s`, `1.5s`, `2m`, `1h` (`--api-latency`).
fn parse_duration(s: &str) -> Result<Duration, String> {
    let err = || format!("expected a duration with a unit (ms, s, m, h), e.g. 200ms or 1s, not {s:?}");
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(err)?;
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().map_err(|_| err())?;
    let scale = match unit.trim() {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    Duration::try_from_secs_f64(n * scale).map_err(|_| err())
}

/// `--fixture` values of `sim` commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FixtureArg {
    /// The playbook fixture on topologies without workloads.
    Auto,
    /// Always the playbook fixture.
    Playbook,
    /// Only what the topology declares.
    None,
}

/// One `--profile NODE=PROFILE`: a simulated node and the data-plane profile its simulated
/// kube-proxy runs. Whether the node exists is checked once the cluster is built.
#[derive(Debug, Clone)]
pub struct NodeProfile {
    /// The node's name.
    pub node: String,
    /// Its data-plane profile.
    pub profile: locality_sim::DataPlaneProfile,
}

/// clap's value parser of `--profile`.
pub(crate) fn parse_node_profile(s: &str) -> Result<NodeProfile, String> {
    let (node, profile) = s
        .split_once('=')
        .filter(|(node, _)| !node.is_empty())
        .ok_or_else(|| "expected NODE=PROFILE (e.g. node-c=kube-proxy:nftables)".to_string())?;
    Ok(NodeProfile {
        node: node.to_string(),
        profile: profile.parse().map_err(|e| format!("{e}"))?,
    })
}
