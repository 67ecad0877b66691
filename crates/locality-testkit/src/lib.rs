//! Shared test support for the `locality` crates, used only as a dev-dependency: one copy of
//! what several crates' integration tests need.
//!
//! - [`fake_api`]: a small fake Kubernetes API server over real HTTP/1.1 on 127.0.0.1
//!   (typed Lists with pagination, bearer tokens, RBAC, injected faults), serving
//!   [`fake_api::fixture`] files;
//! - [`files`]: temporary directories and kubeconfig files;
//! - [`objects`]: builders for the model's objects;
//! - [`terminal`]: a command run with its stdout on a pseudo-terminal (what a user at a
//!   terminal sees);
//! - [`vectors`]: upstream kube-proxy's packet-flow test tables, for the model and the
//!   simulated kube-proxy alike.

pub mod fake_api;
pub mod files;
pub mod objects;
pub mod terminal;
pub mod vectors;
