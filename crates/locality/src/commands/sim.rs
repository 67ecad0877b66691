//! `locality sim`: the embedded simulated cluster.

use std::io::Write;

use locality_apiserver::ServeOptions;
use locality_sim::{Engine, SimConfig, Topology, builders};

use crate::cli::{FixtureArg, SimClusterArgs, SimRulesArgs, SimServeArgs};
use crate::error::CliError;
use crate::suggest::did_you_mean;
use crate::ui::Ui;

/// The largest topology file read (`--sim=FILE`, `sim serve --topology FILE`).
const TOPOLOGY_MAX_BYTES: u64 = 16 << 20;

/// Loads a built-in topology by name, or a topology YAML file (a regular file: a FIFO is
/// refused, not waited on).
fn topology(name: &str) -> Result<Topology, CliError> {
    if let Ok(t) = Topology::builtin(name) {
        return Ok(t);
    }
    let path = std::path::Path::new(name);
    if !path.exists() {
        return Err(CliError::usage(format!(
            "no built-in simulated topology {name:?} and no such file{}",
            did_you_mean(name, locality_sim::BUILTIN_TOPOLOGIES.into_iter())
        )));
    }
    let bytes = crate::files::read_regular(path, TOPOLOGY_MAX_BYTES)
        .map_err(|e| CliError::usage(format!("{name}: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| CliError::usage(format!("{name}: not UTF-8 text")))?;
    Topology::from_yaml(&text, name).map_err(|e| CliError::usage(e.to_string()))
}

/// Builds the simulated cluster the flags describe: topology, profiles, fixture.
pub(crate) fn build_engine(args: &SimClusterArgs) -> Result<Engine, CliError> {
    let topology = topology(&args.topology)?;
    let config = SimConfig {
        seed: args.seed,
        feature_gates: locality_model::featuregate::FeatureGates::from_flags(&args.feature_gates)
            .map_err(|e| CliError::usage(e.to_string()))?,
        ..SimConfig::default()
    };
    config
        .check_feature_gates()
        .map_err(|e| CliError::usage(e.to_string()))?;
    let mut engine = Engine::from_topology(&topology, config).map_err(|e| CliError::usage(e.to_string()))?;
    let nodes: Vec<String> = engine.node_names().map(str::to_string).collect();
    for p in &args.profile {
        check_node(&nodes, &p.node)?;
        engine.set_profile(&p.node, p.profile.clone());
    }
    let with_fixture = match args.fixture {
        FixtureArg::Playbook => true,
        FixtureArg::None => false,
        FixtureArg::Auto => !topology
            .objects
            .iter()
            .any(|o| matches!(o, locality_sim::Object::Service(_))),
    };
    if with_fixture {
        builders::playbook_fixture(&mut engine)
            .map_err(|e| CliError::usage(format!("--fixture playbook: {e}")))?;
    }
    Ok(engine)
}

/// The proxy modes the simulated kube-proxies run, in the model's terms (one when every node
/// runs the same mode).
pub(crate) fn proxy_modes(engine: &Engine) -> std::collections::BTreeSet<locality_model::proxy::ProxyMode> {
    use locality_model::proxy::ProxyMode;
    engine
        .node_names()
        .filter_map(|n| engine.kube_proxy(n))
        .map(|p| match p.profile.mode {
            locality_sim::ProxyMode::Iptables => ProxyMode::Iptables,
            locality_sim::ProxyMode::Nftables => ProxyMode::Nftables,
            locality_sim::ProxyMode::Ipvs => ProxyMode::Ipvs,
        })
        .collect()
}

fn check_node(nodes: &[String], node: &str) -> Result<(), CliError> {
    if nodes.iter().any(|n| n == node) {
        Ok(())
    } else {
        Err(CliError::usage(format!(
            "the simulated cluster has no node {node:?}{}",
            did_you_mean(node, nodes.iter().map(String::as_str))
        )))
    }
}

/// Runs `sim rules NODE`.
pub fn rules(args: &SimRulesArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if let Some(kubeconfig) = &args.kubeconfig {
        return served_rules(kubeconfig, &args.node, out);
    }
    let mut engine = build_engine(&args.cluster)?;
    let nodes: Vec<String> = engine.node_names().map(str::to_string).collect();
    check_node(&nodes, &args.node)?;
    engine.run_until(args.at.saturating_mul(1000));
    let text = engine
        .rules_text(&args.node)
        .map_err(|e| CliError::runtime(e.to_string()))?;
    writeln!(
        out,
        "# SIMULATED cluster (locality, topology {}, seed {}, t={}s virtual): kube-proxy rules of node {}",
        args.cluster.topology, args.cluster.seed, args.at, args.node
    )?;
    write!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// `sim rules NODE --kubeconfig FILE`: the rules of the cluster a `sim serve` is serving, read
/// from its `/simulated/nodes/NODE/kube-proxy-rules` (a server that is not `sim serve` has no
/// such path: its 404 says so).
fn served_rules(kubeconfig: &std::path::Path, node: &str, out: &mut dyn Write) -> Result<(), CliError> {
    let opts = locality_live::LiveOptions {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        request_timeout: Some(std::time::Duration::from_secs(30)),
        ..locality_live::LiveOptions::default()
    };
    let path = format!("/simulated/nodes/{node}/kube-proxy-rules");
    let text = locality_live::get_blocking(&opts, &path).map_err(|e| match e {
        locality_live::LiveError::Api { code: 404, .. } => CliError::runtime(format!(
            "{}: no node {node:?} in the served simulated cluster, or the server is not `locality sim serve` ({e})",
            kubeconfig.display()
        )),
        e => CliError::runtime(e.to_string()),
    })?;
    writeln!(
        out,
        "# SIMULATED cluster (locality sim serve, kubeconfig {}): kube-proxy rules of node {node}",
        kubeconfig.display()
    )?;
    out.write_all(&text)?;
    out.flush()?;
    Ok(())
}

/// Runs `sim serve` until the process is interrupted.
pub fn serve(args: &SimServeArgs, ui: &Ui, out: &mut dyn Write) -> Result<(), CliError> {
    if !(args.speed.is_finite() && args.speed >= 0.0) {
        return Err(CliError::usage(format!(
            "--speed {}: expected a number ≥ 0",
            args.speed
        )));
    }
    let engine = build_engine(&args.cluster)?;
    let opts = ServeOptions {
        speed: args.speed,
        port: args.port,
        kubeconfig_out: args.kubeconfig_out.clone(),
        faults: args.api_faults.faults(args.cluster.seed),
        limits: locality_apiserver::Limits {
            max_objects: args.max_objects,
            ..locality_apiserver::Limits::default()
        },
        ..ServeOptions::new(engine)
    };
    // Caught before the kubeconfig's path is printed: whoever reads it may stop us at once.
    let stop = StopSignals::install()?;
    let running = locality_apiserver::serve(opts).map_err(|e| CliError::runtime(e.to_string()))?;
    let kubeconfig = running.kubeconfig_path().display().to_string();
    writeln!(out, "{kubeconfig}")?;
    out.flush()?;
    if !ui.quiet {
        eprintln!(
            "SIMULATED cluster ({} topology, seed {}, {}× real time) serving the Kubernetes API at {}\n\
             kubeconfig (context {}): {kubeconfig}\n  export KUBECONFIG={kubeconfig}\n\
             Ctrl-C stops it.",
            args.cluster.topology,
            args.cluster.seed,
            args.speed,
            running.url(),
            locality_apiserver::CONTEXT_NAME
        );
        if args.api_faults.any() {
            eprintln!("injecting faults: {}", describe_faults(&args.api_faults));
        }
    }
    stop.wait()?;
    // Stops serving and removes the temporary kubeconfig (a `--kubeconfig-out` file stays).
    running.shutdown();
    Ok(())
}

/// Ctrl-C (SIGINT) and SIGTERM, caught from the moment this exists, so `sim serve` stops
/// cleanly: a server that is simply killed leaves its temporary kubeconfig behind.
struct StopSignals {
    rt: tokio::runtime::Runtime,
    #[cfg(unix)]
    signals: [tokio::signal::unix::Signal; 2],
}

impl StopSignals {
    fn install() -> Result<StopSignals, CliError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        #[cfg(unix)]
        let signals = {
            use tokio::signal::unix::{SignalKind, signal};
            let _in_runtime = rt.enter();
            [signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?]
        };
        Ok(StopSignals {
            rt,
            #[cfg(unix)]
            signals,
        })
    }

    /// Blocks until one of the signals arrives.
    fn wait(self) -> Result<(), CliError> {
        #[cfg(unix)]
        {
            let [mut interrupt, mut terminate] = self.signals;
            self.rt.block_on(async {
                tokio::select! {
                    _ = interrupt.recv() => {},
                    _ = terminate.recv() => {},
                }
            });
            Ok(())
        }
        #[cfg(not(unix))]
        {
            self.rt.block_on(tokio::signal::ctrl_c())?;
            Ok(())
        }
    }
}

/// The fault flags in effect, for the start-up message.
pub(crate) fn describe_faults(args: &crate::cli::ApiFaultArgs) -> String {
    let f = args.faults(0);
    let mut parts = Vec::new();
    if !f.latency.is_zero() {
        parts.push(format!("latency {:?}", f.latency));
    }
    for (verb, rate) in &f.error_rate {
        parts.push(format!(
            "{} {rate} → {}",
            verb.as_str(),
            args.api_error_code.unwrap_or(500)
        ));
    }
    if f.conflict_on_create > 0.0 {
        parts.push(format!("create {} → 409", f.conflict_on_create));
    }
    if f.drop_rate > 0.0 {
        parts.push(format!("drop {}", f.drop_rate));
    }
    if let Some(every) = f.expire_watches {
        parts.push(format!("watches expire every {every:?}"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}
