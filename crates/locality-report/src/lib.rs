//! `locality-report`: renders locality results for people and for programs.
//!
//! One module per output: [`matrix`] (the stable `RoutingMatrix` JSON/YAML documents),
//! [`table`] (a text table), [`summary`] (node counts per verdict). Renderers never compute
//! routing themselves: they format what `locality-model` returns.

pub mod audit;
pub mod explain;
pub mod matrix;
pub mod summary;
pub mod table;
