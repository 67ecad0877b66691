//! `locality verify`: the acceptance playbook against the simulated cluster (default) or a
//! real one.

use std::io::Write;
use std::time::Duration;

use locality_live::LiveOptions;
use locality_model::proxy::ProxyMode;
use locality_verify::{CaseRecord, VerifyOptions, new_run_id, verify_watching};

use crate::cli::{FixtureArg, ProxyModeArg, SimClusterArgs, VerifyArgs, VerifyOutput};
use crate::error::{CliError, EXIT_INTERRUPTED, EXIT_TERMINATED};
use crate::ui::Ui;

/// The signal that stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM (`kill`, a CI job cancelled, a pod evicted).
    Terminate,
}

/// `--request-timeout`, as a duration (> 0).
fn request_timeout(args: &VerifyArgs) -> Result<Duration, CliError> {
    Duration::try_from_secs_f64(args.request_timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            CliError::usage(format!(
                "--request-timeout {}: expected a number of seconds > 0",
                args.request_timeout
            ))
        })
}

/// Runs `verify`; returns the decision's exit code, or [`EXIT_INTERRUPTED`] after Ctrl-C and
/// [`EXIT_TERMINATED`] after SIGTERM (either way the namespace deleted unless `--keep`, the
/// evidence of what was done written).
pub fn run(args: &VerifyArgs, ui: &Ui, out: &mut dyn Write) -> Result<u8, CliError> {
    let simulated = !(args.live || args.kubeconfig.is_some() || args.context.is_some());
    let request_timeout: Duration = request_timeout(args)?;
    let run_id = new_run_id();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::runtime(e.to_string()))?;
    // Ctrl-C and SIGTERM are listened for from here on (the first poll of `ctrl_c` installs
    // its handler, the yield lets the spawned listener run once; `signal` installs SIGTERM's
    // at once): the run races them.
    let ctrl_c = rt.spawn(tokio::signal::ctrl_c());
    #[cfg(unix)]
    let mut sigterm = {
        let _entered = rt.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
    };
    rt.block_on(tokio::task::yield_now());
    let stopped_by = std::cell::Cell::new(None::<Stop>);
    let interrupt = async {
        let ctrl_c = async {
            match ctrl_c.await {
                Ok(Ok(())) => Stop::Interrupt,
                // No handler could be installed: the run is not interruptible this way.
                _ => std::future::pending().await,
            }
        };
        #[cfg(unix)]
        let terminate = async {
            if let Some(s) = sigterm.as_mut()
                && s.recv().await.is_some()
            {
                return Stop::Terminate;
            }
            // No handler could be installed: the run is not terminable this way.
            std::future::pending().await
        };
        #[cfg(not(unix))]
        let terminate = std::future::pending::<Stop>();
        let stop = tokio::select! {
            s = ctrl_c => s,
            s = terminate => s,
        };
        stopped_by.set(Some(stop));
    };
    // The simulated cluster runs behind its API server for the whole run.
    let (_server, live, sim_mode) = if simulated {
        if !(args.speed.is_finite() && args.speed > 0.0) {
            return Err(CliError::usage(format!(
                "--speed {}: expected a number > 0",
                args.speed
            )));
        }
        let cluster = SimClusterArgs {
            topology: args.topology.clone(),
            seed: 1,
            profile: args.profile.clone(),
            fixture: FixtureArg::None,
            feature_gates: Vec::new(),
        };
        let engine = crate::commands::sim::build_engine(&cluster)?;
        // The simulation knows its data plane: one proxy mode on every node, or none.
        let modes = crate::commands::sim::proxy_modes(&engine);
        let sim_mode = (modes.len() == 1).then(|| modes.into_iter().next()).flatten();
        let opts = locality_apiserver::ServeOptions {
            speed: args.speed,
            // The server's own temporary kubeconfig, removed when it stops.
            faults: args.api_faults.faults(cluster.seed),
            ..locality_apiserver::ServeOptions::new(engine)
        };
        let running = locality_apiserver::serve(opts).map_err(|e| CliError::runtime(e.to_string()))?;
        ui.status(&format!(
            "verifying the SIMULATED cluster ({} topology, {}× real time) at {}: a self-test of locality, not evidence about a real data plane",
            args.topology,
            args.speed,
            running.url()
        ));
        if args.api_faults.any() {
            ui.status(&format!(
                "the simulated API server injects faults: {}",
                crate::commands::sim::describe_faults(&args.api_faults)
            ));
        }
        let live = LiveOptions {
            kubeconfig: Some(running.kubeconfig_path().to_path_buf()),
            ..LiveOptions::default()
        };
        (Some(running), live, sim_mode)
    } else {
        if !args.profile.is_empty() {
            return Err(CliError::usage("--profile applies to the simulated cluster only"));
        }
        let live = LiveOptions {
            kubeconfig: args.kubeconfig.clone(),
            context: args.context.clone(),
            ..LiveOptions::default()
        };
        (None, live, None)
    };
    for id in &args.only {
        if locality_verify::cases::case(id.to_uppercase().as_str()).is_none() {
            let ids: Vec<&str> = locality_verify::CATALOGUE.iter().map(|c| c.id).collect();
            return Err(CliError::usage(format!(
                "--only {id}: no such case (cases: {})",
                ids.join(", ")
            )));
        }
    }
    let evidence = args
        .evidence
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("locality-evidence").join(&run_id));
    let owner = args
        .owner
        .clone()
        .or_else(|| locality_live::kubeconfig_user(&live).ok().flatten())
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".into());
    let opts = VerifyOptions {
        live,
        only: args.only.iter().map(|s| s.to_uppercase()).collect(),
        evidence,
        keep: args.keep,
        run_id,
        simulated,
        owner,
        pod_ready_timeout: Duration::from_secs(if simulated { 60 } else { 300 }),
        settle: Duration::from_secs(if simulated { 1 } else { 2 }),
        proxy_lag_timeout: Duration::from_secs(30),
        max_proxy_lag: Duration::try_from_secs_f64(args.max_proxy_lag).unwrap_or(Duration::from_secs(5)),
        proxy_mode: args
            .proxy_mode
            .and_then(|m| match m {
                ProxyModeArg::Iptables => Some(ProxyMode::Iptables),
                ProxyModeArg::Nftables => Some(ProxyMode::Nftables),
                ProxyModeArg::Ipvs => Some(ProxyMode::Ipvs),
                ProxyModeArg::Unknown => None,
            })
            .or(sim_mode),
        max_nodes: args.max_nodes,
        request_timeout,
        external_cases: args.external_cases,
        target_args: target_args(args, simulated),
        images: locality_verify::fixture::Images {
            agnhost: args.image.clone(),
            curl: args.curl_image.clone(),
        },
    };
    if args.dry_run {
        let plan = rt
            .block_on(locality_verify::dry_run(&opts))
            .map_err(|e| CliError::runtime(format!("verify --dry-run: {e}")))?;
        crate::error::unless_reader_gone(
            out.write_all(plan.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| CliError::writing("the plan", &e)),
        )?;
        return Ok(0);
    }
    if !simulated && let Ok(Some(server)) = locality_live::kubeconfig_insecure_skip_tls_verify(&opts.live) {
        // Recorded in the evidence too (00-versions.yaml, target.insecureSkipTLSVerify).
        ui.warn(&locality_live::insecure_warning(&server));
    }
    ui.note(&format!(
        "run {}: namespace locality-verify-{}, owner {}, evidence {}",
        opts.run_id,
        opts.run_id,
        opts.owner,
        opts.evidence.display()
    ));
    let outcome = rt.block_on(verify_watching(&opts, interrupt, &|r| case_line(ui, r)));
    // Never wait for an abandoned credential plugin (see locality_live::CREDENTIAL_TIMEOUT).
    rt.shutdown_background();
    let outcome =
        outcome.map_err(|e| CliError::new(crate::error::verify_error_exit(&e), format!("verify: {e}")))?;
    let stop = stopped_by.get().unwrap_or(Stop::Interrupt);
    if outcome.interrupted {
        ui.status(&format!(
            "{}: {}; partial evidence in {}",
            match stop {
                Stop::Interrupt => "interrupted",
                Stop::Terminate => "terminated (SIGTERM)",
            },
            if args.keep {
                format!("namespace kept (kubectl delete namespace {})", outcome.namespace)
            } else {
                format!("namespace {} deleted", outcome.namespace)
            },
            outcome.evidence.display()
        ));
    }
    let written = (|| -> Result<(), CliError> {
        match args.output {
            VerifyOutput::Json => {
                let text = std::fs::read_to_string(opts.evidence.join("ledger.json"))
                    .map_err(|e| CliError::runtime(e.to_string()))?;
                write!(out, "{text}")?;
            }
            VerifyOutput::Table => {
                let rows: Vec<(String, &str, String, &str)> = outcome
                    .cases
                    .iter()
                    .map(|c| {
                        // The model's expectation, else the declared one; long ones shortened
                        // (the ledger keeps them whole).
                        use locality_verify::cases::Declared;
                        let declared_only =
                            matches!(c.declared, Declared::Rollout | Declared::NoLocalEndpointsCounted);
                        let mut expected = c
                            .expected
                            .as_ref()
                            .filter(|_| !declared_only)
                            .map(locality_verify::describe)
                            .filter(|e| !e.starts_with("unknown"))
                            .unwrap_or_else(|| locality_verify::declared_text(c));
                        if expected.chars().count() > 48 {
                            expected = expected.chars().take(47).collect::<String>() + "…";
                        }
                        (c.id.clone(), c.status.as_str(), expected, c.why.as_str())
                    })
                    .collect();
                let w = rows.iter().map(|r| r.2.chars().count()).max().unwrap_or(0).max(8);
                writeln!(
                    out,
                    "{:<4}  {:<12}  {:<w$}  OBSERVED",
                    "CASE", "STATUS", "EXPECTED"
                )?;
                // Every case was just streamed to the same screen: the table repeats only
                // what did not pass (the ledger, `-o json` and a redirected stdout keep all).
                let streamed = {
                    use std::io::IsTerminal;
                    !ui.quiet && std::io::stderr().is_terminal() && std::io::stdout().is_terminal()
                };
                let passed = rows.iter().filter(|r| r.1 == "PASS").count();
                for (id, status, expected, why) in rows {
                    if streamed && status == "PASS" {
                        continue;
                    }
                    // What the run observed may quote the server: escaped (display path).
                    let why = locality_report::display::term(why);
                    writeln!(out, "{id:<4}  {status:<12}  {expected:<w$}  {why}")?;
                }
                if streamed && passed > 0 {
                    writeln!(out, "(the {passed} PASS cases are above)")?;
                }
                writeln!(out)?;
                writeln!(out, "{}", outcome.counts())?;
                writeln!(out, "{}", outcome.decision_line(outcome.simulated))?;
                for a in &outcome.advice {
                    writeln!(out, "  {a}")?;
                }
                writeln!(out, "Evidence: {}", outcome.evidence.display())?;
                if args.keep {
                    writeln!(
                        out,
                        "Namespace kept: kubectl delete namespace {}",
                        outcome.namespace
                    )?;
                }
            }
        }
        out.flush()?;
        Ok(())
    })();
    // A reader gone (`| head`) ends the table, not the run: the decision below stands.
    crate::error::unless_reader_gone(written)?;
    if outcome.interrupted {
        return Ok(match stop {
            Stop::Interrupt => EXIT_INTERRUPTED,
            Stop::Terminate => EXIT_TERMINATED,
        });
    }
    Ok(crate::error::decision_exit(outcome.decision).code())
}

/// One line per case on stderr as the run goes, unless `--quiet` (a CI log sees the run
/// advance too; the table on stdout comes at the end either way).
fn case_line(ui: &Ui, r: &CaseRecord) {
    if ui.quiet {
        return;
    }
    let mut why: String = r.why.chars().take(100).collect();
    if r.why.chars().count() > 100 {
        why.push('…');
    }
    eprintln!(
        "  {:<4} {:<12} {}",
        r.id,
        r.status.as_str(),
        locality_report::display::term(&why)
    );
}

/// The flags naming the run's target, for the rerun commands the advice prints: the simulated
/// cluster's topology and profiles, or the kubeconfig and context of a real one.
fn target_args(args: &VerifyArgs, simulated: bool) -> Vec<String> {
    let mut out = Vec::new();
    if simulated {
        if args.topology != "four-nodes" {
            out.extend(["--topology".to_string(), args.topology.clone()]);
        }
        for p in &args.profile {
            out.extend(["--profile".to_string(), format!("{}={}", p.node, p.profile)]);
        }
    } else {
        if args.live {
            out.push("--live".to_string());
        }
        if let Some(k) = &args.kubeconfig {
            out.extend(["--kubeconfig".to_string(), k.display().to_string()]);
        }
        if let Some(c) = &args.context {
            out.extend(["--context".to_string(), c.clone()]);
        }
    }
    out
}
