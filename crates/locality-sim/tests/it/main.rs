//! The integration tests of `locality-sim`, one binary (one link) with a module per area.

mod controllers;
mod crosscheck;
mod delete_options;
mod engine;
mod min_ready;
mod node_events;
mod nodes_and_lb;
mod perf;
mod scenarios;
mod statefulsets;
mod upstream_vectors;
mod whatif;
mod whatif_apply;
mod whatif_delete;
mod whatif_identity;
mod whatif_properties;
