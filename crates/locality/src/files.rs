//! Small files the user names on the command line (`--config`, `--baseline`), read whole
//! within a size limit: a FIFO, a device or an endless stream is refused (its type is checked
//! before it is opened), never read forever.

use std::io::Read;
use std::path::Path;

/// The bytes of the regular file `path`, at most `max` of them.
///
/// # Errors
/// The message (without the path, which the caller adds): the file cannot be opened or read,
/// is not a regular file, or is larger than `max` bytes.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    // The type first: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(format!("not a regular file ({})", file_type(&meta)));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than {max} bytes"));
    }
    Ok(bytes)
}

/// What kind of file `meta` describes, in words (`a FIFO`, `a directory`).
pub fn file_type(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}
