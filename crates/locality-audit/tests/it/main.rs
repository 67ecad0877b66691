//! The integration tests of `locality-audit`, one binary (one link) with a module per area.

mod report;
mod rules_dataplane;
mod rules_local;
mod rules_topology;
mod support;
