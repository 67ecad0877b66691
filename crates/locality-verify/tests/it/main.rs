//! The integration tests of `locality-verify`, one binary (one link) with a module per area.

mod api_faults;
mod api_retries;
mod dataplanes;
mod interrupt;
mod sampling;
mod simulated;
mod support;
