//! The API server's text as a run keeps it (issue #40): shortened once, where it is read, to
//! `locality_report::display::server_text`'s 300 characters with a "… (N bytes)" marker,
//! masked and escaped, so that every case, try and format that carries it carries those few
//! hundred bytes whatever the server sent, and no control, bidi or zero-width character of
//! it reaches a file or the terminal raw.

/// A server's (or a transport's) text, ready to keep and quote.
pub(crate) fn server(text: &str) -> String {
    locality_report::display::server_text(text, &[])
}

/// `HTTP CODE: TEXT`, the text as [`server`] keeps it.
pub(crate) fn http(code: u16, text: &str) -> String {
    format!("HTTP {code}: {}", server(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_hostile_body_is_kept_short_and_inert() {
        let body = format!("<h1>\u{1b}]0;x\u{7}\n# forged{}", "y".repeat(1_400_000));
        let kept = http(500, &body);
        assert!(kept.len() < 400, "{}", kept.len());
        assert!(
            kept.starts_with("HTTP 500: <h1>\\x1b]0;x\\x07\\n# forged"),
            "{kept}"
        );
        assert!(kept.ends_with("(1400019 bytes)"), "{kept}");
    }
}
