//! `locality`: find the nodes where a Kubernetes Service is blind.
fn main() -> std::process::ExitCode {
    locality::main(locality::Invocation::Standalone)
}
