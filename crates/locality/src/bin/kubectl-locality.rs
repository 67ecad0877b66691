//! `kubectl-locality`: the kubectl plugin form of `locality` (`kubectl locality …`).
fn main() {}
