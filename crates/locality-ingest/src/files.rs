//! Files on disk: reading one into memory within the size limit, and collecting the
//! input files of a directory.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{ErrorKind, IngestError};

/// Reads the rest of a regular file of `len` bytes into memory, up to `limit`. A file
/// that shrinks while it is read (truncated by log rotation, or rewritten by a
/// `kubectl get` still running) is an error naming it, never a partial parse.
pub(crate) fn read_file(
    file: &std::fs::File,
    name: &str,
    len: u64,
    limit: u64,
) -> Result<Vec<u8>, IngestError> {
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    // A file that grows while read is still bounded.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| io_error(name, &e))?;
    check_size(name, buf.len() as u64, len, limit)?;
    Ok(buf)
}

/// `read` bytes of a regular file that had `len` when opened: over `limit`, or fewer than
/// `len` (it shrank while read), is an error.
pub(crate) fn check_size(name: &str, read: u64, len: u64, limit: u64) -> Result<(), IngestError> {
    if read > limit {
        return Err(too_large(name, limit));
    }
    if read < len {
        return Err(IngestError::file(
            ErrorKind::Io,
            name,
            format!(
                "the file shrank while it was read ({len} bytes when opened, {read} read): is something still writing it?"
            ),
        ));
    }
    Ok(())
}

pub(crate) fn io_error(name: &str, e: &std::io::Error) -> IngestError {
    IngestError::file(ErrorKind::Io, name, format!("cannot read: {e}"))
}

pub(crate) fn too_large(name: &str, limit: u64) -> IngestError {
    IngestError::file(
        ErrorKind::Limit,
        name,
        format!("larger than the input limit of {limit} bytes (--max-input-size)"),
    )
}

/// Collects input files under `dir` (sorted; symlinked directories visited once).
/// Special files (FIFOs, sockets, devices) are not read while walking: each is named in
/// `skipped` (a warning); given explicitly with `-f`, they are read as bounded streams.
pub(crate) fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
    skipped: &mut Vec<String>,
) -> Result<(), IngestError> {
    let shown = dir.display().to_string();
    let io =
        |e: std::io::Error| IngestError::file(ErrorKind::Io, &shown, format!("cannot read directory: {e}"));
    if let Ok(canon) = std::fs::canonicalize(dir)
        && !seen.insert(canon)
    {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for path in entries {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue; // dangling symlink
        };
        let named_like_input = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "json" | "yaml" | "yml"));
        if meta.is_dir() {
            walk(&path, out, seen, skipped)?;
        } else if !meta.is_file() {
            if named_like_input {
                skipped.push(format!(
                    "skipped {}: not a regular file (a FIFO, socket or device); name it with -f to read it as a stream",
                    path.display()
                ));
            }
        } else if named_like_input {
            out.push(path);
        }
    }
    Ok(())
}
