//! Positions in input text: byte offset ↔ 1-based line and column, and the BOM a file may
//! start with. The leaf every reader reports positions through.

/// Byte offset of 1-based (`line`, `column`) in `text`, where the column counts bytes
/// (serde_json's convention: the column of the last byte read). Clamped to the text.
pub(crate) fn offset_of(text: &[u8], line: usize, column: usize) -> usize {
    let mut start = 0usize;
    if line > 1 {
        let mut seen = 1usize;
        for pos in memchr::memchr_iter(b'\n', text) {
            seen += 1;
            if seen == line {
                start = pos + 1;
                break;
            }
        }
    }
    (start + column.saturating_sub(1)).min(text.len())
}

/// 1-based (line, column in bytes) of byte `offset` in `text`.
pub(crate) fn line_col(text: &[u8], offset: usize) -> (u64, u64) {
    let offset = offset.min(text.len());
    let head = &text[..offset];
    let line = 1 + memchr::memchr_iter(b'\n', head).count() as u64;
    let line_start = memchr::memrchr(b'\n', head).map_or(0, |p| p + 1);
    (line, (offset - line_start + 1) as u64)
}

/// Strips a UTF-8 byte-order mark.
pub(crate) fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}
