//! Positions: byte offset ↔ line/column, and [`locate`] for an object's [`Origin`].
//!
//! serde_json exposes no offsets inside a value, so the fast path records only the
//! document and item index of each object ([`Origin`]); [`locate`] re-scans the bytes on
//! demand (findings and duplicate errors need it, the success path never does).

use locality_model::objects::Origin;

use crate::position::{line_col, strip_bom};

/// Recomputes the 1-based (line, column) where the object of `origin` starts in `bytes`
/// (the same bytes that were loaded). `None` when it cannot be found.
///
/// JSON: a structural scan (strings and nesting only) to the `item`-th element of the
/// top-level array or of the top-level object's `items`; cost is linear in the position,
/// so call it for the few objects you report, not for all. YAML: the document is
/// re-parsed and, for List items, the item's node position is read.
pub fn locate(bytes: &[u8], origin: &Origin) -> Option<(u32, u32)> {
    let text = strip_bom(bytes);
    let first = text.iter().position(|b| !b.is_ascii_whitespace())?;
    let (line, col) = if matches!(text[first], b'{' | b'[') {
        if origin.document != 0 {
            return None;
        }
        let off = match origin.item {
            None => first,
            Some(i) => json_item_offset(text, first, i as usize)?,
        };
        line_col(text, off)
    } else {
        let s = std::str::from_utf8(text).ok()?;
        crate::yaml::locate(s, origin.document as usize, origin.item)?
    };
    Some((u32::try_from(line).ok()?, u32::try_from(col).ok()?))
}

/// Skips whitespace from `i`.
fn ws(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && matches!(t[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// Skips a string starting at the `"` at `i`; returns the index after the closing quote.
fn skip_string(t: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let k = j + memchr::memchr2(b'"', b'\\', t.get(j..)?)?;
        if t[k] == b'\\' {
            j = k + 2;
        } else {
            return Some(k + 1);
        }
    }
}

/// Skips one JSON value at `i` (no validation beyond what is needed to find its end).
fn skip_value(t: &[u8], i: usize) -> Option<usize> {
    let i = ws(t, i);
    match *t.get(i)? {
        b'"' => skip_string(t, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < t.len() {
                match t[j] {
                    b'"' => {
                        j = skip_string(t, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < t.len() && !matches!(t[j], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Offset of element `n` of the array at `i`.
fn array_element(t: &[u8], i: usize, n: usize) -> Option<usize> {
    if t.get(i) != Some(&b'[') {
        return None;
    }
    let mut j = i + 1;
    for _ in 0..n {
        j = skip_value(t, j)?;
        j = ws(t, j);
        if t.get(j) != Some(&b',') {
            return None;
        }
        j += 1;
    }
    let j = ws(t, j);
    (t.get(j) != Some(&b']')).then_some(j)
}

fn json_item_offset(t: &[u8], first: usize, n: usize) -> Option<usize> {
    if t[first] == b'[' {
        return array_element(t, first, n);
    }
    // Top-level object: find the `items` key at depth 1.
    let mut j = first + 1;
    loop {
        j = ws(t, j);
        if t.get(j) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(t, j)?;
        let key = &t[j + 1..key_end - 1];
        j = ws(t, key_end);
        if t.get(j) != Some(&b':') {
            return None;
        }
        j = ws(t, j + 1);
        if key == b"items" {
            return array_element(t, j, n);
        }
        j = ws(t, skip_value(t, j)?);
        if t.get(j) != Some(&b',') {
            return None;
        }
        j += 1;
    }
}

/// Offset of the `[` of the top-level object's `items` array, when `items` is a key of
/// the top-level object that starts within the first `limit` bytes.
pub(crate) fn top_level_items(t: &[u8], limit: usize) -> Option<usize> {
    let first = ws(t, 0);
    if t.get(first) != Some(&b'{') {
        return None;
    }
    let mut j = first + 1;
    loop {
        j = ws(t, j);
        if j > limit || t.get(j) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(t, j)?;
        let key = &t[j + 1..key_end - 1];
        j = ws(t, key_end);
        if t.get(j) != Some(&b':') {
            return None;
        }
        j = ws(t, j + 1);
        if key == b"items" {
            return (t.get(j) == Some(&b'[')).then_some(j);
        }
        j = ws(t, skip_value(t, j)?);
        if t.get(j) != Some(&b',') {
            return None;
        }
        j += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_round_trip() {
        let t = b"ab\ncde\nf";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 4), (2, 2));
        assert_eq!(crate::position::offset_of(t, 2, 2), 4);
        assert_eq!(crate::position::offset_of(t, 3, 1), 7);
    }

    #[test]
    fn json_items() {
        let t = br#"{"apiVersion":"v1","items":[ {"a":"}\"]"},
  {"b":[1,{}]}],"kind":"List"}"#;
        let o = Origin {
            item: Some(1),
            ..Origin::default()
        };
        assert_eq!(locate(t, &o), Some((2, 3)));
        let o = Origin {
            item: Some(2),
            ..Origin::default()
        };
        assert_eq!(locate(t, &o), None);
        assert_eq!(
            locate(
                b"[1, 2]",
                &Origin {
                    item: Some(1),
                    ..Origin::default()
                }
            ),
            Some((1, 5))
        );
    }
}
