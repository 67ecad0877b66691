//! The integration tests of `locality-ingest`, one binary (one link) with a module per area.

mod bad_input;
mod good_input;
mod pods_counted;
