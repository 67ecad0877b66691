//! `locality-report`: renders locality results for people and for programs.
//!
//! Text from outside reaches a terminal only through [`display`] (escaped, shortened,
//! masked), and JSON, YAML and XML documents only through [`encode`] (escaped in their own
//! syntax). One module per output: [`matrix`] (the stable `RoutingMatrix` JSON/YAML documents),
//! [`table`] (a text table), [`summary`] (node counts per verdict), [`explain`], [`audit`].
//! Every report starts with the same [`header`] (source, versions, time, tool version,
//! counts, and a banner when the input was simulated); [`style`] colours text outputs when
//! the caller turns colour on. Renderers never compute routing themselves: they format what
//! `locality-model` returns.

pub mod audit;
pub mod display;
pub mod encode;
pub mod explain;
pub mod header;
pub mod labels;
pub mod matrix;
pub mod simulate;
pub mod style;
pub mod summary;
pub mod table;
