//! The integration tests of `locality`, one binary (one link) with a module per area.

mod architecture;
mod audit;
mod audit_baseline;
mod audit_dataplane;
mod bad_input;
mod ci_docs;
mod closed_pipe;
mod dist;
mod docs;
mod feature_gates;
mod hostile;
mod live;
mod matrix;
mod module_cycles;
mod readme;
mod sim;
mod sim_load;
mod simulate;
mod simulate_agreement;
mod simulate_apply;
mod simulate_delete;
mod simulate_min_ready;
mod simulate_statefulset;
mod simulate_totals;
mod verify;
