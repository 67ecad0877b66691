//! `locality`: find the nodes where a Kubernetes Service is blind.
fn main() {}
