//! Serves the simulated `three-zones` topology with the playbook fixture until killed:
//! `cargo run -p locality-apiserver --example serve -- [SECONDS]`.

use locality_sim::{SimConfig, Topology};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let topology = Topology::builtin("three-zones")?;
    let mut opts = locality_apiserver::ServeOptions::from_topology(&topology, SimConfig::default())?;
    locality_sim::builders::playbook_fixture(&mut opts.engine)?;
    let running = locality_apiserver::serve(opts)?;
    println!("simulated API server at {}", running.url());
    println!("export KUBECONFIG={}", running.kubeconfig_path().display());
    std::thread::sleep(std::time::Duration::from_secs(seconds));
    Ok(())
}
