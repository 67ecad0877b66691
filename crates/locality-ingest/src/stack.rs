//! The parser threads' stack.

use crate::error::{ErrorKind, IngestError};

/// Stack for the parser thread. Nesting is bounded (serde_json: 128 levels; YAML:
/// [`YamlLimits::max_depth`]), but a level of recursive descent can take tens of KiB in
/// debug builds, more than a 2 MiB test or worker thread has. Reserved, not committed.
pub(crate) const PARSE_STACK: usize = 64 << 20;

/// Runs `parse` on a scoped thread with a [`PARSE_STACK`] stack.
pub(crate) fn on_big_stack<T, F>(name: &str, parse: F) -> Result<T, IngestError>
where
    T: Send,
    F: FnOnce() -> Result<T, IngestError> + Send,
{
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("locality-ingest".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, parse);
        match handle {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(IngestError::file(
                    ErrorKind::Invalid,
                    name,
                    "internal error: the parser panicked",
                ))
            }),
            Err(e) => Err(IngestError::file(
                ErrorKind::Io,
                name,
                format!("cannot start the parser thread: {e}"),
            )),
        }
    })
}
