//! The `locality` command-line program (also the kubectl plugin `kubectl-locality`).
