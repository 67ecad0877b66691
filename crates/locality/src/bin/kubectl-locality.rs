//! `kubectl-locality`: the kubectl plugin form of `locality` (`kubectl locality …`).
fn main() -> std::process::ExitCode {
    locality::main(locality::Invocation::KubectlPlugin)
}
