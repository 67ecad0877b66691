//! The integration tests of `locality-live`, one binary (one link) with a module per area.

mod live;
mod real_cluster;
